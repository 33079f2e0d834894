"""A run's `sampling` settings made into a working router: the selector its policy names, and
the observers it asks for, registered on the router (the reward-hacking watch with its suspects
table, whose suspects the budget policy's audit share reviews first; comparison tasks). Every
owner of a router builds it here: our trainer's sampler hook, the other trainers' adapters,
`lowtide ingest`, a search routed to review."""

from __future__ import annotations

import time
from collections.abc import Callable

from sampling.config import QueueConfig, SamplingConfig
from sampling.records import MAX_TEXT_CHARS
from sampling.routing import Router
from sampling.selection.budget_selector import BudgetSelector
from sampling.selection.comparisons import Comparisons
from sampling.selection.decision import Deliver, RecentIds, Selector
from sampling.selection.hacking.observer import WatchObserver
from sampling.selection.step_selector import StepSelector
from sampling.transport.producer import Producer
from sampling.transport.record_builder import RecordBuilder


def build_router(
    config: SamplingConfig,
    producer: object,  # anything with submit(records), close(deadline_s), and `stats` (or None)
    *,
    seed: int = 0,
    max_text_chars: int = MAX_TEXT_CHARS,
    clock: Callable[[], float] = time.monotonic,
) -> Router:
    """The router `config` describes, delivering to `producer`, its observers registered."""
    records = RecordBuilder(config.redact, max_text_chars)
    watch = (
        WatchObserver(config.watch, records.shown if records.redactor is not None else None)
        if config.watch.enabled
        else None
    )

    def selector(deliver: Deliver, seen: RecentIds) -> Selector:
        if config.policy == "budget":
            # The budget policy selects on a thread of its own, over recent steps' candidates.
            flags_for = watch.flags if watch is not None else None
            return BudgetSelector(
                config, deliver, seen, seed=seed, clock=clock, flags_for=flags_for
            )
        return StepSelector(config, seen, seed=seed, clock=clock)

    try:
        router = Router(config, producer, selector, records=records)
    except BaseException:
        if watch is not None:  # its thread (or process) is already running
            watch.close(0.0)
        raise
    if config.compare_size:
        router.observe_with(Comparisons(config.compare_size))
    if watch is not None:
        router.observe_with(watch)
    return router


def router_for_queue(
    sampling: SamplingConfig,
    queue: QueueConfig,
    *,
    seed: int = 0,
    max_text_chars: int = MAX_TEXT_CHARS,
) -> Router:
    """A router with its own background producer (and spool) on the `queue` section."""
    return build_router(sampling, Producer(queue), seed=seed, max_text_chars=max_text_chars)
