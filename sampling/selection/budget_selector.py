"""The `budget` policy's place in routing: a bounded pool of candidates and a background worker
(`rl.background`) that spends the review budget on them.

On the caller's thread (a trainer's) `add` only appends the batch to the pool. The selector's own
thread runs `sampling.selection.budget.choose` over the pooled candidates of recent steps and
delivers the picks as `Decision`s (the router hands them to its producer):

- `per: round`: the whole budget is spent once, when the router closes (the end of a training
  run, or of one round of `lowtide loop`), on the best candidates of the round.
- `per: hour`: every `select_every_s` it spends what its token bucket (`rl.rate_limit`)
  grants: reviews accrue evenly, and never more than `reviews` fall in any trailing hour. Picked
  samples and their near-duplicates leave the pool, and later copies of a picked response are
  not picked again; the others stay until newer steps push them out.
- With the reward-hacking watch on, `flags_for` names which candidates carry its suspects: the
  audit share reviews one carrier of each first (`reason: suspect`). A failing watch costs
  only that: the audit share goes to the highest rewards.
- A selection that raises is counted and logged. Per hour the next tick tries again; a round's
  one selection falls back to the lowest rewards (`reason: fallback`) rather than spend nothing.

The budget is for all processes of a run together: each spends its part, `reviews` split
evenly over `review_budget.processes` (by default the launcher's WORLD_SIZE, as torchrun,
accelerate and deepspeed set it), the remainder going to the lowest ranks. A process whose rank
is not one of 0..processes-1 (a process id, say) takes an even part without the remainder, so the
parts never add up to more than the budget.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from rl.background import Triggers, Worker
from rl.rate_limit import TokenBucket
from sampling.batch import BatchInfo
from sampling.config import SamplingConfig
from sampling.once import first_time
from sampling.records import ScoredSample
from sampling.selection.budget import Candidate, Flag, Pick, choose, lowest_reward_picks
from sampling.selection.comparisons import compared
from sampling.selection.decision import (
    Decision,
    Deliver,
    Metrics,
    Offered,
    RecentIds,
    RouteCounts,
    sample_id_of,
)
from sampling.selection.group_candidates import anchor_of, group_candidates
from sampling.selection.policies import Selected
from sampling.selection.shares import shares_for

log = logging.getLogger("sampling.selection.budget")
HOUR_S = 3600.0
SELECT_DEADLINE_S = 120.0  # how long close() waits for a round's selection, beyond its deadline
REVIEWED_MEMORY = 500  # responses already picked, whose later copies are not picked again


def launcher_world_size() -> int:
    """WORLD_SIZE as torchrun, accelerate and deepspeed set it for every rank; 1 without it."""
    value = os.environ.get("WORLD_SIZE", "")
    return int(value) if value.isdigit() and int(value) > 0 else 1


def budget_part(reviews: int, processes: int, rank: int) -> int:
    """This rank's part of a budget shared by `processes` ranks: the parts of ranks
    0..processes-1 add up to `reviews`; any other rank gets the even part alone."""
    part, remainder = divmod(reviews, processes)
    return part + (1 if 0 <= rank < remainder else 0)


def hourly_allowance(per_hour: int, clock: Callable[[], float] = time.monotonic) -> TokenBucket:
    """Reviews accrue at `per_hour` an hour from the start (none at first), and the reviews
    spent in any trailing hour never exceed `per_hour`."""
    return TokenBucket(per_hour, period_s=HOUR_S, start_full=False, window_s=HOUR_S, clock=clock)


@dataclass
class BudgetStats:
    pooled: int = 0  # candidates added to the pool
    pushed_out: int = 0  # candidates that left the full pool unpicked
    spent: int = 0  # reviews asked for: records handed to the producer
    folded: int = 0  # near-duplicates covered by a picked representative (not counted in spent)
    selections: int = 0  # times the selector ran
    failures: int = 0  # selections that raised (their candidates stay pooled)
    by_reason: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Pooled:
    sample: ScoredSample
    info: BatchInfo
    serial: int


@dataclass(frozen=True)
class _PooledBatch:
    """One `add` call's samples in the pool, with their serials. The pool keeps a batch as one
    object: an entry per sample, made on the caller's thread, gave its garbage collector 256
    young objects a call that all survive into the older generations, and its collections ran
    on the caller's thread (the spikes of route()'s p99); entries are made on the selector's."""

    samples: tuple[ScoredSample, ...]
    info: BatchInfo
    serials: Sequence[int]  # a range while the batch is whole

    def entries(self) -> Iterator[_Pooled]:
        for sample, serial in zip(self.samples, self.serials, strict=True):
            yield _Pooled(sample, self.info, serial)

    def without(self, serials: Collection[int]) -> _PooledBatch | None:
        """This batch less `serials` (None when nothing is left)."""
        kept = [(s, n) for s, n in zip(self.samples, self.serials, strict=True) if n not in serials]
        if len(kept) == len(self.samples):
            return self
        if not kept:
            return None
        return _PooledBatch(tuple(s for s, _ in kept), self.info, tuple(n for _, n in kept))


class BudgetSelector:
    def __init__(
        self,
        config: SamplingConfig,
        deliver: Deliver,
        seen: RecentIds,  # the router's: picked (and routed) sample ids, none picked twice
        *,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
        flags_for: Callable[[Sequence[str], Sequence[str]], Sequence[Flag]] | None = None,
    ) -> None:
        """`flags_for(responses, prompts)`: the watch's suspects and which of the responses
        carry them (called on the selector's thread)."""
        if config.review_budget is None:
            raise ValueError("the budget policy needs sampling.review_budget")
        self.config = config
        self.budget = config.review_budget
        self.settings = config.budget
        shares_for(self.settings)  # a share named by a dotted path that leads nowhere: at start
        self.deliver = deliver
        self.seen = seen
        self.seed = seed
        self.flags_for = flags_for
        self.stats = BudgetStats()
        self.processes = self.budget.processes or launcher_world_size()
        # Alone, the whole budget; shared, this rank's part, known from the first batch's rank.
        self.reviews: int | None = self.budget.reviews if self.processes == 1 else None
        self.hourly = (
            hourly_allowance(self.reviews or 0, clock) if self.budget.per == "hour" else None
        )
        self._pool: deque[_PooledBatch] = deque()
        self._pooled = 0  # samples in the pool
        self._serial = 0
        self._reviewed: deque[str] = deque(maxlen=REVIEWED_MEMORY)
        self._lock = threading.Lock()  # the pool's: add() on the caller's thread, reads here
        self._reported = 0  # picks already counted in a RouteCounts
        # Per hour a selection every select_every_s; per round one, when the router closes.
        every = self.settings.select_every_s if self.hourly is not None else None
        self._worker: Worker[None] = Worker(
            "lowtide-budget", self._tick, Triggers(idle_s=every), final=self._last_tick, log=log
        )

    @property
    def left(self) -> int:
        """Reviews the round may still spend (per hour: what the last hour leaves)."""
        reviews = self.reviews or 0
        if self.hourly is not None:
            return max(0, reviews - len(self.hourly.taken_at))
        return max(0, reviews - self.stats.spent)

    # ---- caller thread -----------------------------------------------------------------------

    def offer(self, samples: Sequence[ScoredSample], info: BatchInfo) -> Offered:
        """Pool the batch: the selector thread picks. The counts' `selected`/`submitted` are
        the picks made since the previous call."""
        pooled = self.add(samples, info)
        spent = self.stats.spent
        new, self._reported = spent - self._reported, spent
        return Offered(RouteCounts(new, 0, 0, new, pooled=pooled))

    def metrics(self, counts: RouteCounts) -> Metrics:
        stats = self.stats
        return {
            "sampling/pooled": (counts.pooled, "sum"),
            "sampling/budget_spent": (stats.spent, "sum"),
            "sampling/budget_left": (self.left, "sum"),
            "sampling/near_duplicates_folded": (stats.folded, "sum"),
            "sampling/budget_failures": (stats.failures, "sum"),
        }

    def add(self, samples: Sequence[ScoredSample], info: BatchInfo) -> int:
        """Pool a batch; returns at once (no selection, hashing or I/O here)."""
        with self._lock:
            if self.reviews is None and samples:
                self._take_part(info.rank)
            if samples:
                serials = range(self._serial, self._serial + len(samples))
                self._pool.append(_PooledBatch(tuple(samples), info, serials))
                self._serial += len(samples)
                self._pooled += len(samples)
            overflow = self._pooled - self.settings.pool_max
            self._drop_oldest(overflow)
            self.stats.pooled += len(samples)
            self.stats.pushed_out += max(0, overflow)
        return len(samples)

    def _take_part(self, rank: int) -> None:
        self.reviews = budget_part(self.budget.reviews, self.processes, rank)
        if self.hourly is not None:
            # One assignment: the selector thread reads the rate, this thread never updates
            # the allowance's tokens (which accrue from the selector's start, capped at an hour).
            self.hourly.rate = self.reviews
        log.info(
            "review budget: rank %d spends %d of %d reviews per %s (%d processes share it)",
            rank, self.reviews, self.budget.reviews, self.budget.per, self.processes,
        )  # fmt: skip

    def tick_now(self, timeout: float = 30.0) -> None:
        """Run one selection on the selector thread now and wait for it (per hour: spends what
        the allowance grants at this moment; per round: nothing until close)."""
        self._worker.flush(timeout)

    def close(self, deadline_s: float) -> None:
        """Per round: spend the budget on what was pooled, on the selector thread."""
        waited = deadline_s + SELECT_DEADLINE_S
        if not self._worker.close(waited).finished:
            # The producer closes next and spools what is submitted after; the thread is a
            # daemon, so picks it has not made when the process exits are gone.
            log.error(
                "budget selection did not finish within %.0f s; picks it makes while this "
                "process lives go to the spool (`lowtide queue replay`, or the next run, sends "
                "them)",
                waited,
            )

    # ---- selector thread ---------------------------------------------------------------------

    def _tick(self, _: list[None]) -> None:
        """Per hour: spend what the allowance grants now (per round: nothing before close)."""
        if self.hourly is not None:
            self._spend_safely(self.hourly.available)

    def _last_tick(self) -> None:
        """At close: per hour, what the allowance grants; per round, the whole budget."""
        self._spend_safely(self.hourly.available if self.hourly is not None else lambda: self.left)

    def _spend_safely(self, count: Callable[[], int]) -> None:
        try:
            self._spend(count())
        except Exception as exc:  # a bad sample must not end selection for the whole run
            self._count_failure(exc)

    def _count_failure(self, exc: Exception) -> None:
        message = f"budget selection failed: {type(exc).__name__}: {exc}"
        self.stats.failures += 1
        # Each distinct failure logged once, and only the first few: in `per: hour` a message
        # that quotes a changing value would otherwise grow the list every tick.
        if first_time(self.stats.errors, message):
            log.error(message, exc_info=exc)

    def _flags(self, candidates: list[Candidate]) -> Sequence[Flag]:
        if self.flags_for is None:
            return ()
        try:
            return self.flags_for(
                [candidate.response for candidate in candidates],
                [candidate.prompt for candidate in candidates],
            )
        except Exception as exc:  # the watch is a hint: without it the audit share goes high
            message = f"budget selection: the watch's suspects left out: {type(exc).__name__}"
            if first_time(self.stats.errors, message):
                log.error(message, exc_info=exc)
            return ()

    def _choose(self, candidates: list[Candidate], count: int) -> list[Pick]:
        try:
            return choose(
                candidates,
                count,
                self.settings,
                seed=self.seed + self.stats.selections,
                reviewed=list(self._reviewed),
                flags=self._flags(candidates),
            )
        except Exception as exc:
            if self.hourly is not None:
                raise  # the next tick tries again, with the pool as it was
            # A round has one selection: spent plainly, the budget still reaches reviewers.
            self._count_failure(exc)
            return lowest_reward_picks(candidates, count)

    def _spend(self, count: int) -> None:
        if count <= 0:
            return
        with self._lock:
            batches = list(self._pool)
        pooled = [entry for batch in batches for entry in batch.entries()]
        entries, ids = self._eligible(pooled)
        if not entries:
            return
        units = self._units(entries)
        candidates = [candidate for candidate, _ in units]
        picks = self._choose(candidates, count)
        self.stats.selections += 1
        if not picks:
            return
        selected = self._selected(picks, candidates)
        decisions = [
            self._decision(entries, units[pick.index][1], pick, selected) for pick in picks
        ]
        size = self.config.compare_size
        if size:
            by_unit = {
                pick.index: [entries[e].sample for e in units[pick.index][1]] for pick in picks
            }
            decisions = compared(decisions, lambda d: by_unit[d.index], size).decisions
        covered_units = {unit for pick in picks for unit in pick.members}
        for pick in picks:
            self._reviewed.append(candidates[pick.index].response)
        for unit in covered_units:
            for entry in units[unit][1]:
                self.seen.add(ids[entry])
        covered = {entries[entry].serial for unit in covered_units for entry in units[unit][1]}
        if self.hourly is not None:
            self.hourly.spend(len(decisions))
        self.stats.spent += len(decisions)
        self.stats.folded += sum(pick.group_size - 1 for pick in picks)
        self.stats.by_reason.update(pick.reason for pick in picks)
        self.deliver(decisions)
        with self._lock:
            kept = (batch.without(covered) for batch in self._pool)
            self._pool = deque(batch for batch in kept if batch is not None)
            self._pooled = sum(len(batch.samples) for batch in self._pool)

    def _drop_oldest(self, count: int) -> None:
        """Push the `count` oldest samples out of the full pool (under the lock)."""
        while count > 0 and self._pool:
            oldest = self._pool[0]
            if len(oldest.samples) <= count:
                self._pool.popleft()
                dropped = len(oldest.samples)
            else:
                self._pool[0] = _PooledBatch(oldest.samples[count:], oldest.info,
                                             oldest.serials[count:])  # fmt: skip
                dropped = count
            self._pooled -= dropped
            count -= dropped

    def _units(self, entries: list[_Pooled]) -> list[tuple[Candidate, tuple[int, ...]]]:
        """What the budget is spent on, each with its pooled entries: a sample, or with
        comparison tasks a prompt group (sampling.selection.group_candidates)."""
        if self.config.compare_size:
            keys = [(e.info.run_id, e.info.step, e.info.rank, e.sample.group_id) for e in entries]
            samples = [entry.sample for entry in entries]
            serials = [entry.serial for entry in entries]
            found = group_candidates(samples, keys, self.settings, serials)
            return [(group.candidate, group.members) for group in found]
        return [
            (
                Candidate(
                    prompt=entry.sample.prompt,
                    response=entry.sample.response,
                    reward=float(entry.sample.reward),
                    reward_details=entry.sample.reward_details,
                    group_id=entry.sample.group_id,
                    step=entry.info.step,
                    position=entry.serial,
                ),
                (index,),
            )
            for index, entry in enumerate(entries)
        ]

    def _decision(
        self, entries: list[_Pooled], members: tuple[int, ...], pick: Pick, selected: Selected
    ) -> Decision:
        """The decision of one pick: its sample, or the group member the pick is about."""
        chosen = entries[members[anchor_of([entries[m].sample for m in members], pick.reason)]]
        return Decision(chosen.sample, chosen.info, selected, pick.index, self.config.component)

    def _eligible(self, pooled: list[_Pooled]) -> tuple[list[_Pooled], list[str]]:
        """The pooled samples of the last `window_steps` steps, each sample id once, none that
        was picked (or covered by a pick) before."""
        window = self.settings.window_steps
        if window is not None and pooled:
            newest = max(entry.info.step for entry in pooled)
            pooled = [entry for entry in pooled if entry.info.step > newest - window]
        entries, ids, seen = [], [], set()
        for entry in pooled:
            sample_id = sample_id_of(entry.sample, entry.info)
            if sample_id in seen or (self.config.dedup and sample_id in self.seen):
                continue
            seen.add(sample_id)
            entries.append(entry)
            ids.append(sample_id)
        return entries, ids

    def _selected(self, picks: list[Pick], candidates: list[Candidate]) -> Selected:
        """The picks as one `Selected`, so that records are built as for every other policy."""
        detail: dict[int, dict[str, float]] = {}
        for pick in picks:
            detail[pick.index] = {"group_reward": pick.reward}
            if pick.uncertainty is not None:
                detail[pick.index]["uncertainty"] = pick.uncertainty
        return Selected(
            policy="budget",
            indices=sorted(pick.index for pick in picks),
            parameter={"budget": float(self.reviews or 0)},
            values={pick.index: candidates[pick.index].reward for pick in picks},
            detail=detail,
            reasons={pick.index: pick.reason for pick in picks},
            about={pick.index: pick.about for pick in picks if pick.about},
            group_sizes={pick.index: pick.group_size for pick in picks},
        )
