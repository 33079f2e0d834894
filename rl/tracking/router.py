"""The router: decides per kind (scalars, histograms, tables) and per stage what goes out when,
and hands it to the backends on a background worker (`rl.background`), so the trainer never
waits on a backend.

On the trainer thread: interval checks, whitelists, building plain payloads (~tens of µs).
On the worker thread: every backend call, and with `logger.redact` the rollout table itself
(redaction costs far more than the trainer thread should pay). A table that cannot be redacted
is not written. A full queue drops the item and counts it
(`logging/dropped`); a failing backend is reported once and disabled; the others go on.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from rl.background import Triggers, Worker
from rl.config import LoggerConfig, Stage
from rl.plugins import PluginPathError, resolve_path, table_redactor
from rl.samples import Sample, make_sample_id
from rl.tracking.backends.base import (
    ROLLOUT_COLUMNS,
    ROLLOUT_TABLE,
    Backend,
    RunInfo,
    Table,
    backend_factory,
    is_remote,
)
from rl.tracking.text import safe_text

log = logging.getLogger("rl.tracking")
DISTRIBUTION_SUFFIX = "/distribution"
TOKEN_DISTRIBUTION = "reward/token_distribution"  # every response token's reward, all samples
DEFAULT_HISTOGRAMS = ("reward/distribution", TOKEN_DISTRIBUTION)


class TrackingError(ValueError):
    """A logging backend could not start; the message names it and says why."""


# One row's texts (prompt, response) -> the same with placeholders for what was redacted.
TextRedactor = Callable[[Sequence[str]], Sequence[str]]


def gets_redacted_tables(config: LoggerConfig, backend: Backend) -> bool:
    """Every backend with `logger.redact.enabled`; else those that send text elsewhere, unless
    `logger.redact.remote: false`."""
    return config.redact.enabled or (config.redact.remote and is_remote(backend))


def redactor_from_config(
    config: LoggerConfig, info: RunInfo, backends: Sequence[Backend] = ()
) -> TextRedactor | None:
    """`logger.redact`: its factory (a dotted path) called with the run config, or None when
    no table needs it (`enabled` off, and none of `backends` gets redacted tables)."""
    if not (config.redact.enabled or any(gets_redacted_tables(config, b) for b in backends)):
        return None
    try:
        factory = resolve_path(table_redactor(config.redact.redactor))
        return factory(info.config)
    except (PluginPathError, ValueError) as exc:
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise TrackingError(f"logger.redact.redactor: {first_line}") from None


@dataclass(frozen=True)
class _Item:
    kind: str  # "scalars" | "histograms" | "table"
    step: int
    payload: Any
    audience: str = "all"  # "all" | "redacted" | "verbatim": which backends get a table


class Tracker:
    """What the trainer calls: `on_stage` after each stage, `close` at the end (rank 0 only)."""

    def __init__(
        self,
        config: LoggerConfig,
        info: RunInfo,
        backends: Sequence[Backend],
        *,
        queue_size: int = 1024,
        redact: TextRedactor | None = None,
    ) -> None:
        self.config = config
        self.info = info
        self.backends = list(backends)
        self.redact = redact
        # Who gets a redacted table (gets_redacted_tables); the others get the text as it is,
        # and so does everyone when the caller gave no redactor.
        self._redacted_for = {
            backend.name
            for backend in self.backends
            if redact is not None and gets_redacted_tables(config, backend)
        }
        self.unredacted_tables = 0  # tables not written because redaction failed
        self._reported_drop = 0
        self._last_step = 0
        self._sent_this_step: dict[int, set[str]] = {}
        self._failed: set[str] = set()
        # One item at a time: what close() leaves behind is exactly what was not delivered.
        self._worker: Worker[_Item] = Worker(
            "lowtide-tracking", self._drain, Triggers(size=1),
            capacity=queue_size, final=self._report_final_drop, log=log,
        )  # fmt: skip

    @property
    def dropped(self) -> int:
        """Writes the full queue turned away (reported as `logging/dropped`)."""
        return self._worker.stats.dropped

    @classmethod
    def from_config(cls, config: LoggerConfig, info: RunInfo) -> Tracker:
        """The configured backends plus the local files, which are always on."""
        info.run_dir.mkdir(parents=True, exist_ok=True)
        names = list(dict.fromkeys(["jsonl", *config.name]))
        backends: list[Backend] = []
        for name in names:
            factory = backend_factory(name)
            try:
                backends.append(factory(info, config))
            except Exception as exc:  # wandb/tensorboard raise their own kinds: one message
                for backend in backends:
                    backend.close()
                first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                raise TrackingError(
                    f"logger.name: the {name} backend could not start: "
                    f"{type(exc).__name__}: {first_line}"
                ) from exc
        try:  # a mistake here stops the run at start
            redact = redactor_from_config(config, info, backends)
        except TrackingError:
            for backend in backends:
                backend.close()
            raise
        return cls(config, info, backends, redact=redact)

    # ---- decisions (trainer thread) -----------------------------------------------------------

    def wants_samples(self, step: int) -> bool:
        return self._histograms_due(step) or self._table_due(step)

    def wants_tokens(self, step: int) -> bool:
        """Whether this step's samples should carry their per-token values (Sample.tokens)."""
        return self._table_due(step) or (
            self._histograms_due(step) and TOKEN_DISTRIBUTION in self._histogram_names()
        )

    def on_stage(
        self, stage: Stage, step: int, metrics: Mapping[str, float], samples: Sequence[Sample]
    ) -> None:
        self._last_step = step
        scalars = self._scalars_for(stage, step, metrics)
        if scalars and not self._send("scalars", step, scalars) and "logging/dropped" in scalars:
            self._reported_drop = -1  # that report was dropped too: report again next time
        if stage == "step_end":
            if self._histograms_due(step) and samples:
                histograms = self._histograms(samples)
                if histograms:
                    self._send("histograms", step, histograms)
            if self._table_due(step) and samples:
                frozen = tuple(samples)
                if len(self._redacted_for) < len(self.backends):
                    self._send("table", step, self._rollout_table(step, frozen, None), "verbatim")
                if self._redacted_for:
                    # Redacted, the table is built on the worker thread (samples are frozen).
                    table = partial(self._rollout_table, step, frozen, self.redact)
                    self._send("table", step, table, "redacted")
            self._sent_this_step.pop(step, None)

    def on_tables(
        self,
        step: int,
        tables: Mapping[str, tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]],
    ) -> None:
        """Hooks' own tables (`TrainerControl.report_table`), at the table interval; the
        backends that get redacted rollout tables get these redacted too (on the worker)."""
        if not self._table_due(step):
            return
        for name, (columns, rows) in tables.items():
            table = Table(name, columns, rows)
            if len(self._redacted_for) < len(self.backends):
                self._send("table", step, table, "verbatim")
            if self._redacted_for:
                self._send("table", step, partial(self._redacted_table, table), "redacted")

    def _redacted_table(self, table: Table) -> Table:
        """Every text cell through the logger's redactor."""
        assert self.redact is not None
        cells = [cell for row in table.rows for cell in row if isinstance(cell, str)]
        shown = iter(self.redact(cells) if cells else [])
        rows = tuple(
            tuple(next(shown) if isinstance(cell, str) else cell for cell in row)
            for row in table.rows
        )
        return Table(table.name, table.columns, rows)

    def _scalars_for(
        self, stage: Stage, step: int, metrics: Mapping[str, float]
    ) -> dict[str, float]:
        if step % self.config.log_interval.scalars:
            return {}
        sent = self._sent_this_step.setdefault(step, set())
        conditional = [entry for entry in self.config.conditional_logging if entry.stage == stage]
        if conditional:
            wanted = {
                name
                for entry in conditional
                for name in metrics
                if any(_matches(name, pattern) for pattern in entry.metrics)
            }
        elif stage == "step_end":
            wanted = set(metrics)
            whitelist = self.config.metrics.scalars
            if whitelist is not None:
                wanted = {n for n in wanted if any(_matches(n, p) for p in whitelist)}
        else:
            return {}
        wanted -= sent  # each metric once per step, at the first stage that sends it
        sent |= wanted
        values = {name: float(metrics[name]) for name in sorted(wanted)}
        if stage == "step_end" and self.dropped != self._reported_drop:
            values["logging/dropped"] = float(self.dropped)
            self._reported_drop = self.dropped
        return values

    def _histograms_due(self, step: int) -> bool:
        return step % self.config.log_interval.histograms == 0

    def _table_due(self, step: int) -> bool:
        return self.config.log_rollout and step % self.config.log_interval.tables == 0

    def _histogram_names(self) -> Sequence[str]:
        wanted = self.config.metrics.histograms
        return wanted if wanted is not None else DEFAULT_HISTOGRAMS

    def _histograms(self, samples: Sequence[Sample]) -> dict[str, list[float]]:
        out = {}
        for name in self._histogram_names():
            values = _distribution(name, samples)
            if values:
                out[name] = values
        return out

    def _rollout_table(
        self, step: int, samples: Sequence[Sample], redact: TextRedactor | None
    ) -> Table:
        components = sorted({key for sample in samples for key in sample.reward_details})
        limit, encode = self.config.rollout_max_length, self.config.encode_response
        columns = (*ROLLOUT_COLUMNS, *(f"reward/{c}" for c in components), "response_length",
                   "truncated", "text_cut")  # fmt: skip
        rows, tokens = [], []
        for sample in samples:
            shown_prompt, shown_response = sample.prompt, sample.response
            if redact is not None:
                shown_prompt, shown_response = redact([sample.prompt, sample.response])
            prompt = safe_text(shown_prompt, limit, encode=encode)
            response = safe_text(shown_response, limit, encode=encode)
            # A redacted response's token texts and ids would give the value back: not kept.
            tokens.append(sample.tokens if shown_response == sample.response else None)
            # The tracker runs on rank 0: these are rank 0's samples, with the ids the sampler
            # gives them, so a table row and a routed record can be matched.
            sample_id = make_sample_id(
                self.info.run_id, step, 0, sample.index, sample.prompt, sample.response
            )
            details = {k: float(v) for k, v in sample.reward_details.items()}
            rows.append(
                (
                    step,
                    sample_id,
                    prompt.text,
                    response.text,
                    float(sample.reward),
                    json.dumps(details, sort_keys=True),
                    *(float(sample.reward_details.get(c, math.nan)) for c in components),
                    sample.response_length,
                    sample.truncated,
                    prompt.cut or response.cut,
                )
            )
        return Table(ROLLOUT_TABLE, columns, tuple(rows), tuple(tokens) if any(tokens) else ())

    def _send(self, kind: str, step: int, payload: Any, audience: str = "all") -> bool:
        # Turned away when full: counted, and reported as logging/dropped with the next scalars.
        return self._worker.put(_Item(kind, step, payload, audience))

    # ---- delivery (worker thread) ------------------------------------------------------------

    def _drain(self, items: list[_Item]) -> None:
        for queued in items:
            item = self._built(queued) if callable(queued.payload) else queued
            if item is None:
                continue
            for backend in self.backends:
                if item.audience == "all" or (
                    (backend.name in self._redacted_for) == (item.audience == "redacted")
                ):
                    self._deliver(backend, item)

    def _report_final_drop(self) -> None:
        """At close, after everything queued: the final count, if the last one was not sent."""
        if self.dropped != self._reported_drop:
            final = {"logging/dropped": float(self.dropped)}
            self._drain([_Item("scalars", self._last_step, final)])

    def _built(self, item: _Item) -> _Item | None:
        """A table built here (redacted); if redaction fails, none is written (fail closed)."""
        try:
            return _Item(item.kind, item.step, item.payload(), item.audience)
        except Exception as exc:  # its message may quote the text: the type only
            self.unredacted_tables += 1
            log.error(
                "the rollout table of step %d was not written to %s: redaction failed (%s)",
                item.step, ", ".join(sorted(self._redacted_for)), type(exc).__name__,
            )  # fmt: skip
            return None

    def _deliver(self, backend: Backend, item: _Item) -> None:
        if backend.name in self._failed:
            return
        try:
            if item.kind == "scalars":
                backend.log_scalars(item.step, item.payload)
            elif item.kind == "histograms":
                backend.log_histograms(item.step, item.payload)
            else:
                backend.log_table(item.step, item.payload)
        except Exception as exc:  # a backend's failure must not reach the trainer or the others
            self._failed.add(backend.name)
            log.error(
                "logging backend %s failed and is disabled for this run: %s: %s",
                backend.name, type(exc).__name__, exc,
            )  # fmt: skip

    def close(self, deadline_s: float = 30.0) -> None:
        """Flush what is pending within the deadline, then close every backend."""
        closed = self._worker.close(deadline_s)
        if not closed.finished:
            log.error(
                "logging did not finish within %.0f s; %d writes were not delivered",
                deadline_s, len(closed.left),
            )  # fmt: skip
            return
        for backend in self.backends:
            try:
                backend.close()
            except Exception as exc:
                log.error("closing logging backend %s failed: %s", backend.name, exc)


def _matches(name: str, pattern: str) -> bool:
    """`reward/mean` matches itself; `response_length` matches `response_length/mean` too."""
    return name == pattern or name.startswith(pattern.rstrip("/") + "/")


def _distribution(name: str, samples: Sequence[Sample]) -> list[float]:
    """`reward/distribution`, `advantage/distribution`, `response_length/distribution`,
    `reward/<component>/distribution`: finite values of the step's samples;
    `reward/token_distribution`: of their response tokens (the samples' `tokens`)."""
    if name == TOKEN_DISTRIBUTION:
        values = [v for s in samples if s.tokens is not None for v in s.tokens.rewards]
        return [float(v) for v in values if math.isfinite(v)]
    if not name.endswith(DISTRIBUTION_SUFFIX):
        return []
    base = name.removesuffix(DISTRIBUTION_SUFFIX)
    if base == "reward":
        values = [s.reward for s in samples]
    elif base == "advantage":
        values = [s.advantage for s in samples]
    elif base == "response_length":
        values = [float(s.response_length) for s in samples]
    elif base.startswith("reward/"):
        values = [s.reward_details.get(base.removeprefix("reward/"), math.nan) for s in samples]
    else:
        return []
    return [float(v) for v in values if math.isfinite(v)]
