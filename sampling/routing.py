"""The routing core: one batch of scored samples, from whichever trainer made them, to records on
the producer. Our own `low_reward_sampler` hook, the TRL/verl/OpenRLHF adapters and `lowtide
ingest` all call the `Router`; nothing downstream knows which trainer made a record.

Every batch offered is also handed to the reward-hacking watch (`sampling.selection.hacking`),
which reads it on a thread of its own: its suspects are logged once each, its `hacking/*`
figures join the router's metrics, and the budget policy's audit share reviews their carriers.

The router's selector decides (`Decision`s: plain data, which samples and why); the router
delivers them to its producer. On the caller's thread (a trainer's) only selection runs (the
policy, caps, subsample and dedup, or the budget policy's pooling); building and validating the
records is the producer thread's work (`sampling.transport.record_builder`), and so is redaction
and every network call. `lowtide ingest` asks for the decisions (`decide`) and builds the records
itself, so that it can write them down before the producer sees them.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from rl.visible_text import visible_line
from sampling.batch import BatchInfo, PlainSample
from sampling.config import QueueConfig, SamplingConfig
from sampling.records import MAX_ABOUT_CHARS, MAX_TEXT_CHARS, ScoredSample
from sampling.selection.budget import Flag
from sampling.selection.budget_selector import BudgetSelector
from sampling.selection.comparisons import compared
from sampling.selection.decision import (
    Decision,
    Metrics,
    Offered,
    RecentIds,
    RouteCounts,
    Selector,
)
from sampling.selection.hacking import HackingWatch, Suspect, WatchReport
from sampling.selection.hacking.carriers import carriers
from sampling.selection.hacking.pacing import paced
from sampling.selection.hacking.table import Rows, shown_suspect, suspects_table
from sampling.selection.policies import Selected
from sampling.selection.step_selector import StepSelector, TokenBucket
from sampling.transport.producer import Producer
from sampling.transport.record_builder import PendingRecord, RecordBuilder

__all__ = ["BatchInfo", "PlainSample", "RouteCounts", "Router", "TokenBucket"]

log = logging.getLogger("sampling.routing")
DEDUP_MEMORY = 1_000_000  # sample ids remembered for dedup (oldest forgotten first)
CLOSE_DEADLINE_S = 10.0


class Router:
    def __init__(
        self,
        config: SamplingConfig,
        producer: Any,  # anything with submit(records), close(deadline_s), and `stats` (or None)
        *,
        seed: int = 0,
        max_text_chars: int = MAX_TEXT_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.producer = producer
        self.records = RecordBuilder(config.redact, max_text_chars)
        self.seen = RecentIds(DEDUP_MEMORY)
        self.compare_alone = 0  # selected samples with nothing of their group to compare with
        # The latest suspects table (`hacking/suspects`), built on the watch's thread.
        self.suspects_table: Rows | None = None
        self.watch = (
            HackingWatch(config.watch, on_suspect=self._announce, on_report=self._tabulate)
            if config.watch.enabled
            else None
        )
        self.selector: Selector
        if config.policy == "budget":
            # The budget policy selects on a thread of its own, over recent steps' candidates.
            self.selector = BudgetSelector(
                config,
                self.deliver,
                self.seen,
                seed=seed,
                clock=clock,
                flags_for=self.suspect_flags if self.watch is not None else None,
            )
        else:
            self.selector = StepSelector(config, self.seen, seed=seed, clock=clock)

    @classmethod
    def from_config(
        cls,
        sampling: SamplingConfig,
        queue: QueueConfig,
        *,
        seed: int = 0,
        max_text_chars: int = MAX_TEXT_CHARS,
    ) -> Router:
        """A router with its own background producer (and spool) on the `queue` section."""
        return cls(sampling, Producer(queue), seed=seed, max_text_chars=max_text_chars)

    @property
    def budget(self) -> BudgetSelector | None:
        return self.selector if isinstance(self.selector, BudgetSelector) else None

    @property
    def bucket(self) -> TokenBucket | None:
        """The per-minute cap (not with the budget policy, which has its own allowance)."""
        return self.selector.bucket if isinstance(self.selector, StepSelector) else None

    def route(self, samples: Sequence[ScoredSample], info: BatchInfo) -> RouteCounts:
        """Select from the batch and hand the picks to the producer."""
        offered = self.decide(samples, info)
        self.deliver(offered.decisions)
        return offered.counts

    def decide(self, samples: Sequence[ScoredSample], info: BatchInfo) -> Offered:
        """Select only: the decisions are the caller's to deliver (or to build with
        `self.records.build` and keep). The watch sees the whole batch."""
        offered = self.selector.offer(samples, info)
        if self.config.compare_size and offered.decisions:
            offered = self._as_comparisons(offered, samples)
        if self.watch is not None:
            self.watch.observe(samples, info)
        return offered

    def _as_comparisons(self, offered: Offered, samples: Sequence[ScoredSample]) -> Offered:
        """Each selected sample as a comparison task with others of its prompt group (the
        budget selector groups its own picks)."""
        by_group: dict[int, list[ScoredSample]] = {}
        for sample in samples:
            by_group.setdefault(sample.group_id, []).append(sample)
        size = self.config.compare_size or 0
        grouping = compared(offered.decisions, lambda d: by_group[d.sample.group_id], size)
        self.compare_alone += grouping.alone
        counts = offered.counts
        sent = len(grouping.decisions)
        return Offered(replace(counts, submitted=sent), grouping.decisions)

    def suspect_flags(self, responses: Sequence[str], prompts: Sequence[str]) -> list[Flag]:
        """The watch's current suspects and which of `responses` (answering `prompts`) carry
        each (the budget selector's thread calls this)."""
        if self.watch is None:
            return []
        with paced():  # thousands of texts read: the trainer's thread must not wait on it
            found = carriers(self.watch.suspects(), responses, self.watch.config, prompts)
        return [Flag(self._view(item.suspect).describe(), item.positions) for item in found]

    def _view(self, suspect: Suspect) -> Suspect:
        """The suspect as a reviewer may read it (redacted as records are)."""
        return shown_suspect(suspect, self._redact)

    @property
    def _redact(self) -> Callable[[Sequence[str]], list[str]] | None:
        return self.records.shown if self.records.redactor is not None else None

    def route_chosen(
        self,
        samples: Sequence[ScoredSample],
        info: BatchInfo,
        *,
        reason: str,
        about: str | None = None,
    ) -> RouteCounts:
        """Route samples someone already chose (a search's matches), as `selected_by.policy`
        and `.reason` = `reason`, with `about` (the query) shown to the reviewer. No policy,
        caps or budget apply: the caller chose them; dedup and redaction do."""
        values = {i: float(s.reward) for i, s in enumerate(samples) if math.isfinite(s.reward)}
        if about and len(about) > MAX_ABOUT_CHARS:
            about = about[: MAX_ABOUT_CHARS - 1] + "…"
        why = Selected(
            policy=reason,
            indices=list(range(len(samples))),
            parameter={},
            values=values,
            reasons=dict.fromkeys(range(len(samples)), reason),
            about=dict.fromkeys(range(len(samples)), about) if about else {},
        )
        decisions, deduped = [], 0
        for i, sample in enumerate(samples):
            decision = Decision(sample, info, why, i)
            if self.config.dedup and not self.seen.add(decision.sample_id):
                deduped += 1
                continue
            decisions.append(decision)
        self.deliver(decisions)
        return RouteCounts(len(samples), 0, deduped, len(decisions))

    def deliver(self, decisions: list[Decision]) -> None:
        """Hand decisions to the producer; their records are built on its thread."""
        if decisions:
            self.producer.submit([PendingRecord(d, self.records) for d in decisions])

    def metrics(self, counts: RouteCounts) -> Metrics:
        """`sampling/*` and `queue/*` metrics after a route call: name -> (value, how ranks
        combine it). Queue figures are what the producer thread last saw (no Redis call here)."""
        found: Metrics = {
            "sampling/selected": (counts.selected, "sum"),
            "sampling/capped": (counts.capped, "sum"),
            "sampling/deduped": (counts.deduped, "sum"),
        }
        if self.config.compare_size:
            found["sampling/compare_alone"] = (self.compare_alone, "sum")
        found |= self.selector.metrics(counts)
        stats = getattr(self.producer, "stats", None)
        if stats is not None:
            found |= {
                "sampling/enqueued": (stats.enqueued, "sum"),
                "sampling/spooled": (stats.spooled, "sum"),
                "sampling/replayed": (stats.replayed, "sum"),
                "sampling/dropped": (stats.dropped, "sum"),
                "queue/depth": (stats.queue_depth, "max"),
                "queue/enqueue_latency_ms": (stats.enqueue_latency_ms, "max"),
            }
        if self.watch is not None:
            found |= self.watch.metrics()
        return found | self.records.metrics()

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Hand what is waiting to Redis (or the spool) within the deadline; the budget policy
        first spends a round's budget (on its own thread, which close waits for), with the
        watch's last analysis in hand."""
        self.stop_watching(deadline_s)
        self.selector.close(deadline_s)
        self.producer.close(deadline_s=deadline_s)

    def stop_watching(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """End the reward-hacking watch's thread and nothing else: for an owner that stops on an
        error and must leave its producer as it is (close() ends both)."""
        if self.watch is not None:
            self.watch.close(deadline_s)

    # ---- the watch's thread ------------------------------------------------------------------

    def _announce(self, suspect: Suspect) -> None:
        """The console line, once per suspect: `reward rises with "i agree": +1.8 within
        groups, in 62% of responses, up from 3%`, redacted as records are."""
        try:
            line = self._view(suspect).describe()
        except Exception as error:  # fail closed: the feature is text from the responses
            line = f"a new suspect, not shown (redaction failed: {type(error).__name__})"
        log.warning("reward-hacking watch: %s", visible_line(line))  # words of the responses

    def _tabulate(self, report: WatchReport) -> None:
        try:
            self.suspects_table = suspects_table(report, self._redact)
        except Exception as error:
            self.suspects_table = None
            log.error("the suspects table was not made: redaction failed (%s)",
                      type(error).__name__)  # fmt: skip
