"""`HackingWatch`: the reward-hacking watch, and `analyze_rows` for a finished run.

Beside a trainer the watch runs in a helper process of its own (`process.WatchProcess`), which
runs a `HackingWatch` without a thread. In the process that observes (tests, tools that train
nothing, a process that may start no child) it reads on a background worker
(`rl.background.Worker`): `observe` only queues the batch, bounded in samples, and no text is
read on the caller's thread. The worker's thread reads each sample's features once (see
`engine`), and analyses every `analyze_every_steps` new steps (see `analysis`); the latest
report is a plain frozen object that `suspects()`, `report()` and `metrics()` read without
waiting. The last step seen stays buffered until a later one arrives (a step may come in
several batches); `analyze_now()` and `close()` take it as well.

A slow or failing watch never blocks or stops the trainer: a full buffer drops the batch (and
counts it), an error in the thread is logged once and counted.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from threading import Thread
from typing import Any, Protocol

from rl.background import Triggers, Worker
from rl.samples import ScoredSample, ScoredText, make_sample_id
from sampling.selection.hacking.analysis import analyze
from sampling.selection.hacking.carriers import Carried, carriers
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.engine import Scored, WatchEngine
from sampling.selection.hacking.suspects import Suspect, WatchReport

log = logging.getLogger("sampling.selection.hacking")
CLOSE_DEADLINE_S = 10.0
THREAD_NAME = "lowtide-hacking-watch"
READ_AT_ONCE = 1024  # batches the thread takes in one go: nearly always all that wait
HAND_OVER_S = 60.0  # the longest analyze_now waits for the thread to take what is queued

Batch = tuple[tuple[ScoredSample, ...], int, str, int]  # samples, step, run id, rank


class Row(ScoredText, Protocol):
    """A dump row (`sampling.sources.ingest.rows.DumpRow`): not a routed `ScoredSample`, as it
    has a step and no group (the analysis groups rows by step and prompt)."""

    @property
    def step(self) -> int: ...


class Announcer:
    """What a watch does with its analyses wherever they run (a thread here, or a helper process,
    `process.WatchProcess`): keeps the latest report, read without waiting, and tells
    `on_suspect` of each new suspect once and `on_report` of every report."""

    def __init__(
        self,
        config: WatchConfig | None,
        on_suspect: Callable[[Suspect], None] | None,
        on_report: Callable[[WatchReport], None] | None,
    ) -> None:
        self.config = config or WatchConfig()
        self.on_suspect = on_suspect
        self.on_report = on_report
        self._report = WatchReport()
        self._announced: set[str] = set()  # features whose suspect was announced

    def suspects(self) -> tuple[Suspect, ...]:
        """The growing suspects of the latest analysis, strongest first."""
        return self._report.suspects

    def report(self) -> WatchReport:
        """The latest analysis (empty before the first)."""
        return self._report

    def _publish(self, report: WatchReport) -> None:
        """Keep `report` as the latest; `on_suspect` once for each suspect whose feature was
        not announced yet, then `on_report`. A failing callback is logged, never raised (the
        watch goes on)."""
        self._report = report
        for suspect in report.suspects:
            key = suspect.feature.key
            if key in self._announced:
                continue
            self._announced.add(key)
            if self.on_suspect is not None:
                try:
                    self.on_suspect(suspect)
                except Exception:
                    log.exception("hacking watch: on_suspect failed")
        if self.on_report is not None:
            try:
                self.on_report(report)
            except Exception:
                log.exception("hacking watch: on_report failed")


class HackingWatch(Announcer):
    def __init__(
        self,
        config: WatchConfig | None = None,
        *,
        on_suspect: Callable[[Suspect], None] | None = None,
        on_report: Callable[[WatchReport], None] | None = None,
        start: bool = True,
    ) -> None:
        """`on_suspect` is called on the watch's thread once for each feature that becomes a
        suspect (the console line: `suspect.describe()`), `on_report` after every analysis
        (a suspects table built off the trainer's thread). `start=False`: no thread; analysis
        runs only in `analyze_now()` (tests, offline)."""
        super().__init__(config, on_suspect, on_report)
        self._engine = WatchEngine(self.config)
        # Written by the observing thread only.
        self._offered = 0
        self._dropped = 0
        # Written by the watch's thread (or analyze_now's caller) only, under _lock.
        self._taken = 0
        self._errors = 0
        self._analyses = 0
        self._analysis_ms = 0.0
        self._chunks_analysed = 0
        # Batches to read: appended by observe (no thread) or by the worker's thread.
        self._pending: deque[Batch] = deque()
        self._lock = threading.Lock()  # the engine's: the thread and analyze_now
        self._closing = False
        self._abandoned = False  # close() gave up waiting: the thread stops at its next batch
        self._worker: Worker[Batch] | None = None
        if start and self.config.enabled:
            # A batch holds a sample at least (empty ones are not queued): never more batches
            # wait than samples may.
            self._worker = Worker(
                THREAD_NAME,
                self._read,
                Triggers(size=READ_AT_ONCE, age_s=0.0),
                capacity=self.config.max_pending_samples,
                final=self._read_the_last_step,
                log=log,
            )

    @property
    def _thread(self) -> Thread | None:
        """The thread that reads (None: no thread; `work` or `analyze_now` reads)."""
        return None if self._worker is None else self._worker.thread

    # ---- on the trainer's thread: cheap -------------------------------------------------------

    def observe(self, samples: Sequence[ScoredSample], info: Any) -> None:
        """Hand a routed batch to the watch. `info` is the router's BatchInfo (step, run_id,
        rank). Appends to a buffer; never reads the texts, never waits."""
        count = len(samples)
        if not count or not self.config.enabled or self._closing:
            return
        if self._offered - self._taken + count > self.config.max_pending_samples:
            self._leave_out(count)
            return
        batch = (tuple(samples), info.step, info.run_id, info.rank)
        self._offered += count
        if self._worker is None:
            self._pending.append(batch)
        elif self._worker.put_many((batch,)):
            self._offered -= count
            self._leave_out(count)

    def carriers(self, responses: Sequence[str], prompts: Sequence[str]) -> list[Carried]:
        """Which of `responses` (answering `prompts`) carry each current suspect's feature,
        read on the caller's thread."""
        return carriers(self._report.suspects, responses, self.config, prompts)

    def metrics(self) -> dict[str, tuple[float, str]]:
        """`hacking/*` metrics: name -> (value, how ranks combine it), as Router.metrics."""
        report = self._report
        found: dict[str, tuple[float, str]] = {
            "hacking/suspects": (len(report.suspects), "max"),
            "hacking/lift_only": (len(report.lift_only), "max"),
            "hacking/features_tracked": (report.features_tracked, "max"),
            "hacking/features_tested": (report.features_tested, "max"),
            "hacking/samples": (report.samples, "sum"),
            "hacking/pending": (max(0, self._offered - self._taken), "max"),
            "hacking/dropped": (self._dropped, "sum"),
            "hacking/errors": (self._errors, "sum"),
            "hacking/analysis_ms": (self._analysis_ms, "max"),
        }
        if report.suspects:
            top = report.suspects[0]
            found["hacking/top_lift"] = (top.lift, "max")
            found["hacking/top_effect"] = (top.effect, "max")
            found["hacking/top_prevalence"] = (top.prevalence_now or 0.0, "max")
        return found

    # ---- anywhere: waits for the work --------------------------------------------------------

    def analyze_now(self) -> WatchReport:
        """Take everything observed (the last step too), analyse, and return the report. Runs
        on the caller's thread: not for the trainer's hot path."""
        if self._worker is not None:
            self._worker.flush(HAND_OVER_S)  # what is queued, onto the buffer the engine reads
        with self._lock:
            self._drain(final=True)
            return self._analyze()

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> WatchReport:
        """Stop observing, analyse what was observed (within the deadline), stop the thread.
        Past the deadline the report so far is returned, and the thread leaves what it has not
        read yet and ends after the batch or analysis it is in."""
        self._closing = True
        if self._worker is not None:
            if not self._worker.close(deadline_s).finished:
                self._abandoned = True
                log.warning("hacking watch: its last analysis did not end within %.1fs", deadline_s)
            return self._report
        return self.analyze_now() if self.config.enabled else self._report

    # ---- the watch's thread ------------------------------------------------------------------

    def _read(self, batches: list[Batch]) -> None:
        self._pending.extend(batches)
        self.work()

    def _read_the_last_step(self) -> None:
        """At close, after the last batches: the last step too, and the last analysis."""
        self.work(closing=True)

    def _leave_out(self, count: int) -> None:
        if not self._dropped:  # said once: the metric counts the rest
            log.warning(
                "hacking watch: its thread is %d samples behind; batches are left out "
                "until it catches up (hacking/dropped counts them; "
                "sampling.watch.max_pending_samples holds more)",
                self._offered - self._taken,
            )
        self._dropped += count

    def work(self, closing: bool = False) -> None:
        """Read what was observed and analyse when `analyze_every_steps` new steps are in (or
        `closing`: the last step too). The watch's thread calls it; so does the loop of a
        watch's helper process (`sampling.selection.hacking.process`), which has no thread."""
        try:
            with self._lock:
                self._drain(final=closing)
                if self._abandoned:  # close() stopped waiting: no analysis nobody reads
                    return
                new = self._engine.chunks - self._chunks_analysed
                if closing or new >= self.config.analyze_every_steps:
                    self._analyze()
        except Exception:  # a bug here must not stop training: say it once, count it
            self._errors += 1
            if self._errors == 1:
                log.exception("hacking watch: analysis failed (later failures are counted)")

    def _drain(self, final: bool) -> None:
        engine = self._engine
        while self._pending and not self._abandoned:
            samples, step, run_id, rank = self._pending.popleft()
            self._taken += len(samples)  # first: a batch that fails is not pending forever
            for sample in samples:
                engine.add(
                    Scored(
                        step,
                        sample.prompt,
                        sample.response,
                        sample.reward,
                        sample.reward_details,
                        make_sample_id(
                            run_id, step, rank, sample.index, sample.prompt, sample.response
                        ),
                    )
                )
        if final and not self._abandoned:
            engine.flush()

    def _analyze(self) -> WatchReport:
        started = time.perf_counter()
        report = analyze(self._engine)
        self._analysis_ms = 1000 * (time.perf_counter() - started)
        self._analyses += 1
        self._chunks_analysed = self._engine.chunks
        self._publish(report)
        return report


def analyze_rows(
    rows: Iterable[Row], config: WatchConfig | None = None, *, run_id: str = ""
) -> WatchReport:
    """The same analysis over a finished run's rows, in step order (a change of step closes
    the step; the group is the step and the prompt text). Sample ids are those `lowtide ingest`
    gives: run id, step, rank 0, the row's index."""
    engine = WatchEngine(config)
    for row in rows:
        sample_id = make_sample_id(run_id, row.step, 0, row.index, row.prompt, row.response)
        engine.add(
            Scored(row.step, row.prompt, row.response, row.reward, row.reward_details, sample_id)
        )
    engine.flush()
    return analyze(engine)
