"""The reward-hacking watch as a router's observer: every batch a router is offered reaches the
watch; each new suspect is one console line, the latest analysis a suspects table
(`hacking/suspects`), its figures `hacking/*` metrics, and the budget policy's audit share asks
it which candidates carry a suspect (`flags`). Every text shown passes through the run's
redaction, as records do."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from rl.visible_text import visible_line
from sampling.selection.budget import Flag
from sampling.selection.decision import Metrics, RouteObserver
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.process import WatchProcess
from sampling.selection.hacking.suspects import Suspect, WatchReport
from sampling.selection.hacking.table import Redact, Rows, shown_suspect, suspects_table
from sampling.selection.hacking.watch import HackingWatch

log = logging.getLogger("sampling.selection.hacking")


# What runs the watch: `WatchProcess` (a helper process) or `HackingWatch` (a thread here).
Runner = Callable[..., Any]
_fallback_said: list[str] = []


class WatchObserver(RouteObserver):
    def __init__(
        self, config: WatchConfig, redact: Redact | None, runner: Runner = WatchProcess
    ) -> None:
        """`redact`: the run's redaction of shown texts (None: shown as they are). A process
        that cannot start (a daemonic owner may have no children; the unit tests start none)
        leaves the watch on a thread of this process, said once."""
        self.redact = redact
        # The latest suspects table, built on the thread that receives the watch's analyses.
        self.suspects_table: Rows | None = None
        callbacks = {"on_suspect": self.announce, "on_report": self.tabulate}
        try:
            self.watch = runner(config, **callbacks)
        except Exception as error:
            if runner is HackingWatch:
                raise
            if not _fallback_said:
                _fallback_said.append(f"{type(error).__name__}: {error}")
                log.warning("hacking watch: its helper process did not start (%s); it reads on "
                            "a thread of this process instead", _fallback_said[0])  # fmt: skip
            self.watch = HackingWatch(config, **callbacks)

    def on_batch(self, samples: Sequence[Any], info: Any) -> None:
        self.watch.observe(samples, info)

    def metrics(self) -> Metrics:
        return self.watch.metrics()

    def close(self, deadline_s: float) -> None:
        self.watch.close(deadline_s)

    def flags(self, responses: Sequence[str], prompts: Sequence[str]) -> list[Flag]:
        """The watch's current suspects and which of `responses` (answering `prompts`) carry
        each (the budget selector's thread asks)."""
        found = self.watch.carriers(responses, prompts)
        return [Flag(self.shown(item.suspect).describe(), item.positions) for item in found]

    def shown(self, suspect: Suspect) -> Suspect:
        """The suspect as a reviewer may read it (redacted as records are)."""
        return shown_suspect(suspect, self.redact)

    def announce(self, suspect: Suspect) -> None:
        """The console line, once per suspect: `reward rises with "i agree": +1.8 within
        groups, in 62% of responses, up from 3%`, redacted as records are."""
        try:
            line = self.shown(suspect).describe()
        except Exception as error:  # fail closed: the feature is text from the responses
            line = f"a new suspect, not shown (redaction failed: {type(error).__name__})"
        log.warning("reward-hacking watch: %s", visible_line(line))  # words of the responses

    def tabulate(self, report: WatchReport) -> None:
        try:
            self.suspects_table = suspects_table(report, self.redact)
        except Exception as error:
            self.suspects_table = None
            log.error("the suspects table was not made: redaction failed (%s)",
                      type(error).__name__)  # fmt: skip
