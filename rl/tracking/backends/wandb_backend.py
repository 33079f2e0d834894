"""Weights & Biases: online with an API key, offline by itself without one, never a login prompt.

Mode: `WANDB_MODE` when set; else online with a key (`logger.wandb_api_key` or `WANDB_API_KEY`);
else offline, said once with the `wandb sync` command that uploads the run later. There is no
automatic fallback from online to offline in wandb 0.31: a key with no reachable server fails
`init` (after wandb's own timeout) and the router reports it.

Files go under `<save_dir>/wandb`. wandb stages a copy of every logged table under
`$WANDB_DATA_DIR/artifacts/staging` and never removes it (an offline `wandb sync` reads it from
there later), so that directory is pointed into `<save_dir>/wandb/data`. wandb reads the variable
from `os.environ` each time it stages and has no setting for it: the variable is set only around
the `log` of a table, under a lock, and restored after, so several runs in one process keep their
own directories and nothing is left changed. A `WANDB_DATA_DIR` set by the user is left alone.
The `wandb-core` helper is shared by every run in the process and keeps its small debug log in
wandb's cache dir (`~/.cache/wandb/logs`); offline runs put nothing in the artifact cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shlex
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rl.config import LoggerConfig
from rl.numbers import finite_floats
from rl.tracking.backends.base import RunInfo, Table

if TYPE_CHECKING:
    from wandb.sdk.wandb_run import Run

log = logging.getLogger("rl.tracking")

STEP_METRIC = "trainer/step"
DATA_DIR_VAR = "WANDB_DATA_DIR"
MAX_RUN_ID_LENGTH = 64
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_ENV_LOCK = threading.Lock()  # os.environ is process-wide: one scoped change at a time
_MODE_ALIASES = {"dryrun": "offline", "run": "online"}  # wandb's older names


def resolve_mode(config: LoggerConfig, environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(wandb mode, API key or None): `WANDB_MODE` if set, else online only with a key."""
    key = config.wandb_api_key.get_secret_value() if config.wandb_api_key else None
    key = key or environ.get("WANDB_API_KEY") or None
    mode = environ.get("WANDB_MODE", "").strip().lower()
    if mode:
        return _MODE_ALIASES.get(mode, mode), key
    return ("online" if key else "offline"), key


def wandb_run_id(run_id: str) -> str:
    """The run id in characters wandb accepts; a short hash keeps changed ids distinct."""
    safe = _UNSAFE_ID_CHARS.sub("-", run_id).strip("-.") or "run"
    if safe == run_id and len(safe) <= MAX_RUN_ID_LENGTH:
        return safe
    digest = hashlib.sha1(run_id.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]
    return f"{safe[: MAX_RUN_ID_LENGTH - 9]}-{digest}"


@contextmanager
def _scoped_env(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the duration of a block, then restore what was there."""
    if not values:
        yield
        return
    with _ENV_LOCK:
        saved = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        try:
            yield
        finally:
            for name, old in saved.items():
                if old is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = old


class WandbBackend:
    name = "wandb"
    # Online it uploads; offline its files exist to be uploaded later with `wandb sync`.
    remote = True

    def __init__(self, info: RunInfo, config: LoggerConfig) -> None:
        import wandb

        self._wandb = wandb
        # `export WANDB_MODE=` means unset to a user, but wandb rejects the empty value.
        for name in [n for n, v in os.environ.items() if n.startswith("WANDB_") and not v]:
            del os.environ[name]
        mode, key = resolve_mode(config, os.environ)
        save_dir = Path(info.save_dir).resolve()
        wandb_dir = save_dir / "wandb"  # wandb adds the "wandb" part to `dir` itself
        # Staging copies of tables land here unless the user chose a data dir.
        self._staging_env = (
            {} if DATA_DIR_VAR in os.environ else {DATA_DIR_VAR: str(wandb_dir / "data")}
        )
        # wandb looks for git from `dir` (and creates it even when disabled): a missing one warns.
        save_dir.mkdir(parents=True, exist_ok=True)
        online = mode in ("online", "shared")
        if online and not key and not wandb.login(prompt=False, verify=False):
            # Without this check wandb would prompt for a key on a terminal and wait forever.
            raise RuntimeError(
                "WANDB_MODE=online but no wandb credentials: set WANDB_API_KEY "
                "(or run `wandb login`), or unset WANDB_MODE to log offline"
            )
        settings = wandb.Settings(
            api_key=key if online else None,  # explicit: used, not saved to ~/.netrc
            silent=True,  # no banner, no sync hints on stdout: this module says what matters
            console="off",  # leave the trainer's stdout/stderr alone (no capture thread)
            x_disable_stats=True,  # no system-metrics helper process
            reinit="create_new",  # several runs in one process, none touching `wandb.run`
        )
        self._run: Run | None = wandb.init(
            project=config.project,
            group=config.group,
            name=info.run_name,
            id=wandb_run_id(info.run_id),
            config=dict(info.config),
            dir=str(save_dir),
            mode=mode,  # type: ignore[arg-type]  (validated by wandb)
            resume="allow",
            settings=settings,
        )
        self._run.define_metric(STEP_METRIC)
        self._run.define_metric("*", step_metric=STEP_METRIC)
        self.offline_dir: Path | None = (
            Path(self._run.settings.sync_dir) if mode == "offline" else None
        )
        if config.log_rollout or config.metrics.histograms != []:
            self._import_media_modules()
        if self.offline_dir is not None:
            self._say_offline(chosen="WANDB_MODE" in os.environ)

    def _import_media_modules(self) -> None:
        """What wandb imports the first time it logs anything but a number, imported now, at
        the start of the run: its serializer asks every histogram and table whether it is a
        pandas DataFrame, which imports pandas (and pyarrow) when it is installed (with TRL's
        `datasets`, it is). Left to the first histogram, that is ~0.5 s of CPU and ~34k new
        objects on the tracking thread, holding the GIL in the middle of a training step, and a
        full garbage collection of the whole heap soon after (0.3 s here)."""
        try:
            self._wandb.util.is_pandas_data_frame(None)
        except Exception:  # a warm-up: a wandb without this function logs all the same
            log.debug("wandb: could not import its media modules ahead", exc_info=True)

    def _say_offline(self, *, chosen: bool) -> None:
        """Once per run: where the run is and the command that uploads it."""
        reason = "WANDB_MODE=offline" if chosen else "no API key (WANDB_API_KEY)"
        log.log(
            logging.INFO if chosen else logging.WARNING,
            "wandb: %s, logging offline to %s; upload later with: wandb sync %s",
            reason, self.offline_dir, shlex.quote(str(self.offline_dir)),
        )  # fmt: skip

    def _log(self, step: int, data: dict[str, Any]) -> None:
        if self._run is None:
            raise RuntimeError("wandb backend is closed")
        self._run.log({STEP_METRIC: step, **data})

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        self._log(step, dict(values))

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        histograms = {}
        for name, raw in values.items():
            finite = finite_floats(raw)
            if finite:  # NaN/inf make wandb.Histogram fail; an empty one says nothing
                histograms[name] = self._wandb.Histogram(finite)
        if histograms:
            self._log(step, histograms)

    def log_table(self, step: int, table: Table) -> None:
        data = [list(row) for row in table.rows]
        wandb_table = self._wandb.Table(columns=list(table.columns), data=data)
        with _scoped_env(self._staging_env):  # the staging copy is made inside log()
            self._log(step, {table.name: wandb_table})

    def close(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.finish()


def make_wandb_backend(info: RunInfo, config: LoggerConfig) -> WandbBackend:
    return WandbBackend(info, config)
