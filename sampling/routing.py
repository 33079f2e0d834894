"""The routing core: one batch of scored samples, from whichever trainer made them, to records on
the producer. Our own `low_reward_sampler` hook, the TRL/verl/OpenRLHF adapters and `lowtide
ingest` all call a `Router`; nothing downstream knows which trainer made a record.

A router selects and delivers. Its selector decides (`Decision`s: plain data, which samples and
why); the router hands them to its producer. What else a run does with a batch hangs off the
router as observers (`RouteObserver`), registered by whoever composes it
(`sampling.wiring.build_router`: the reward-hacking watch and its suspects table, comparison
tasks). On the caller's thread (a trainer's) only selection runs (the policy, caps, subsample
and dedup, or the budget policy's pooling) and the observers' cheap hand-overs; building and
validating the records is the producer thread's work (`sampling.transport.record_builder`), and
so is redaction and every network call. `lowtide ingest` asks for the decisions (`decide`) and
builds the records itself, so that it can write them down before the producer sees them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sampling.batch import BatchInfo, PlainSample
from sampling.config import SamplingConfig
from sampling.records import MAX_ABOUT_CHARS, MAX_TEXT_CHARS, ScoredSample
from sampling.selection.decision import (
    Decision,
    Deliver,
    Metrics,
    Offered,
    RecentIds,
    RouteCounts,
    RouteObserver,
    Selector,
)
from sampling.selection.policies import Selected
from sampling.transport.record_builder import PendingRecord, RecordBuilder

__all__ = ["BatchInfo", "PlainSample", "RouteCounts", "RouteObserver", "Router"]

DEDUP_MEMORY = 1_000_000  # sample ids remembered for dedup (oldest forgotten first)
CLOSE_DEADLINE_S = 10.0

# Builds the router's selector from what it needs of the router: where picks are delivered (the
# budget selector delivers from its own thread) and the dedup memory.
SelectorFactory = Callable[[Deliver, RecentIds], Selector]
ObserverT = TypeVar("ObserverT")


class Router:
    def __init__(
        self,
        config: SamplingConfig,
        producer: Any,  # anything with submit(records), close(deadline_s), and `stats` (or None)
        selector: SelectorFactory,
        *,
        records: RecordBuilder | None = None,
        max_text_chars: int = MAX_TEXT_CHARS,
    ) -> None:
        self.config = config
        self.producer = producer
        self.records = records or RecordBuilder(config.redact, max_text_chars)
        self.seen = RecentIds(DEDUP_MEMORY)
        self.observers: list[RouteObserver] = []
        self.selector = selector(self.deliver, self.seen)

    def observe_with(self, observer: RouteObserver) -> None:
        """Register an observer: it sees every batch offered from now on, in registration
        order, and closes with the router."""
        self.observers.append(observer)

    def observer(self, kind: type[ObserverT]) -> ObserverT | None:
        """The registered observer of that type, if any."""
        return next((o for o in self.observers if isinstance(o, kind)), None)

    def route(self, samples: Sequence[ScoredSample], info: BatchInfo) -> RouteCounts:
        """Select from the batch and hand the picks to the producer."""
        offered = self.decide(samples, info)
        self.deliver(offered.decisions)
        return offered.counts

    def decide(self, samples: Sequence[ScoredSample], info: BatchInfo) -> Offered:
        """Select only: the decisions are the caller's to deliver (or to build with
        `self.records.build` and keep). Every observer sees the whole batch."""
        offered = self.selector.offer(samples, info)
        for observer in self.observers:
            offered = observer.on_selected(offered, samples)
        for observer in self.observers:
            observer.on_batch(samples, info)
        return offered

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
        caps, budget or observer apply: the caller chose them; dedup and redaction do."""
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
        """`sampling/*` and `queue/*` metrics after a route call, and the observers' own: name
        -> (value, how ranks combine it). Queue figures are what the producer thread last saw
        (no Redis call here)."""
        found: Metrics = {
            "sampling/selected": (counts.selected, "sum"),
            "sampling/capped": (counts.capped, "sum"),
            "sampling/deduped": (counts.deduped, "sum"),
        }
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
        for observer in self.observers:
            found |= observer.metrics()
        return found | self.records.metrics()

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Hand what is waiting to Redis (or the spool) within the deadline. The observers close
        first (the watch's last analysis is in hand when the budget policy then spends a round's
        budget, on its own thread, which close waits for)."""
        self.close_observers(deadline_s)
        self.selector.close(deadline_s)
        self.producer.close(deadline_s=deadline_s)

    def close_observers(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Close the observers and nothing else: for an owner that stops on an error and must
        leave its producer as it is (close() ends all)."""
        for observer in self.observers:
            observer.close(deadline_s)
