"""What a selector decides, as plain data: which samples go to review and why.

Both kinds of selector (`StepSelector`: a policy over each step's batch; `BudgetSelector`: a
review budget spent over recent steps) make `Decision`s; the router's owner delivers them, and
the record is built from a decision on the producer's thread, where redaction runs
(`sampling.transport.record_builder`). What else sees a routed batch is a `RouteObserver`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rl.samples import make_sample_id
from sampling.batch import BatchInfo
from sampling.records import ScoredSample, Selection
from sampling.selection.policies import Selected


@dataclass(frozen=True)
class Decision:
    """One sample picked for review: the sample, its batch, and why (what the policy picked,
    with this sample's place in it). The record's `selected_by` is made from `why` only when the
    record is built, off the trainer's thread (a validated model per pick costs microseconds)."""

    sample: ScoredSample
    info: BatchInfo
    why: Selected
    index: int  # the sample's index in `why`
    component: str | None = None  # the reward component selected on; None: the total
    # A comparison task: the samples of `sample`'s prompt group it shows, in label order (A
    # first; `sample` is one of them). Empty: a single review of `sample`.
    compared: tuple[ScoredSample, ...] = ()

    @property
    def sample_id(self) -> str:
        """The task's key: the sample's id, or for a comparison the id of the responses it
        shows (the same group shown again is the same task)."""
        if self.compared:
            return comparison_id([sample_id_of(s, self.info) for s in self.compared])
        return sample_id_of(self.sample, self.info)

    @property
    def selection(self) -> Selection:
        return self.why.selection_for(self.index, self.component)


@dataclass(frozen=True)
class RouteCounts:
    """What one `route` call did: selected by the policy, then cut by the caps (per step, per
    minute), then dropped as already seen; `submitted` went to the producer. The budget policy
    ignores the caps and selects on its own thread: its `selected`/`submitted` are the picks made
    since the previous call."""

    selected: int
    capped: int
    deduped: int
    submitted: int
    pooled: int = 0  # budget policy: candidates pooled for its selector


@dataclass(frozen=True)
class Offered:
    """A selector's answer to one batch: its counts, and the decisions to deliver now (the
    budget selector delivers later, from its own thread, so it returns none here)."""

    counts: RouteCounts
    decisions: list[Decision] = field(default_factory=list)


Deliver = Callable[[list[Decision]], None]
Metrics = dict[str, tuple[float, str]]  # name -> (value, how ranks combine it: sum, max)


class Selector(Protocol):
    def offer(self, samples: Sequence[ScoredSample], info: BatchInfo) -> Offered: ...
    def metrics(self, counts: RouteCounts) -> Metrics: ...
    def close(self, deadline_s: float) -> None: ...


class RouteObserver(Protocol):
    """What hangs off a router beside selection (the reward-hacking watch, comparison tasks):
    it sees each batch offered and what was selected from it, adds its metrics, and closes with
    the router. `on_batch` and `on_selected` run on the caller's (a trainer's) thread: they hand
    work over and return. Subclass it for the defaults (each does nothing)."""

    def on_batch(self, samples: Sequence[ScoredSample], info: BatchInfo) -> None:
        """The whole batch the router was offered."""

    def on_selected(self, offered: Offered, samples: Sequence[ScoredSample]) -> Offered:
        """What the selector picked from `samples`; the answer is what is delivered (a
        comparison observer groups the picks)."""
        return offered

    def metrics(self) -> Metrics:
        return {}

    def close(self, deadline_s: float) -> None:
        """Finish within the deadline."""


def comparison_id(member_ids: Sequence[str]) -> str:
    """The id of a comparison task: a hash of the sample ids it shows, whatever their order
    (letters, digits and `-`, as a sample id)."""
    text = "\x00".join(sorted(member_ids))
    return f"c-{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def sample_id_of(sample: ScoredSample, info: BatchInfo) -> str:
    return make_sample_id(
        info.run_id, info.step, info.rank, sample.index, sample.prompt, sample.response
    )


class RecentIds:
    """Sample ids seen lately, for dedup: the oldest are forgotten past `limit`. Thread-safe:
    the budget selector's thread and the caller's both add to the router's."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, sample_id: object) -> bool:
        return sample_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, sample_id: str) -> bool:
        """Remember the id; False when it was already known."""
        with self._lock:
            if sample_id in self._ids:
                return False
            self._ids[sample_id] = None
            if len(self._ids) > self.limit:
                self._ids.popitem(last=False)
            return True
