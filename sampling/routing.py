"""The routing core: one batch of scored samples, from whichever trainer made them, to records on
the producer. Our own `low_reward_sampler` hook, the TRL/verl/OpenRLHF adapters and `lowtide
ingest` all call `Router.route`; nothing downstream knows which trainer made a record.

On the caller's thread (a trainer's) `route` only selects, caps, subsamples, dedups and appends
to the producer's memory: building and validating the records is the producer thread's work, and
so is redaction (`sampling.redact`) and every network call. A record is redacted before it is
built, so that nothing downstream (Redis, the spool, Label Studio, a validation message) ever
holds the text as it was; a redactor that fails drops the record rather than send it unredacted.
"""

from __future__ import annotations

import hashlib
import math
import random
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

from rl.samples import make_sample_id
from sampling.config import QueueConfig, SamplingConfig
from sampling.records import MAX_TEXT_CHARS, RecordError, RolloutRecord, ScoredSample
from sampling.redaction import RedactionError, Redactor
from sampling.selection.budget_selector import BudgetSelector
from sampling.selection.policies import Selected, component_values, select
from sampling.transport.producer import Producer

DEDUP_MEMORY = 1_000_000  # sample ids remembered for dedup (oldest forgotten first)
CLOSE_DEADLINE_S = 10.0


@dataclass(frozen=True)
class PlainSample:
    """One scored sample as any trainer knows it: what an adapter builds (our trainer's
    `rl.samples.Sample` has the same fields and is routed as it is)."""

    prompt: str
    response: str
    reward: float  # the total the trainer optimises; NaN/inf are never selected
    reward_details: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    group_id: int = 0  # samples of one prompt share it
    index: int = 0  # position in the step's batch on this rank: part of the sample id
    advantage: float = math.nan
    truncated: bool = False


@dataclass(frozen=True)
class BatchInfo:
    """Where a batch comes from: the part of each record that is the same for the whole batch."""

    run_id: str
    step: int
    rank: int = 0  # the process's rank: ids of different ranks never collide
    model_name: str = "unknown"
    checkpoint_step: int | None = None
    generation: Mapping[str, float | int | str | bool] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # Reward component -> its weight in the total, when the trainer says (shown to reviewers).
    reward_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class RouteCounts:
    """What one `route` call did: selected by the policy, then cut by the caps (per step, per
    minute), then dropped as already seen; `submitted` went to the producer. The budget policy
    ignores the caps and selects on its own thread: see `Router._pool_for_budget`."""

    selected: int
    capped: int
    deduped: int
    submitted: int
    pooled: int = 0  # budget policy: candidates pooled for its selector


class TokenBucket:
    """At most `per_minute` records a minute, refilled continuously; bursts up to one minute's."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.tokens = float(per_minute)
        self.clock = clock
        self.updated = clock()

    def take(self, wanted: int) -> int:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.capacity / 60)
        self.updated = now
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted


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
        self.seed = seed
        self.max_text_chars = max_text_chars
        self.bucket = TokenBucket(config.max_per_minute, clock)
        self._seen: OrderedDict[str, None] = OrderedDict()
        # Built here, so that a redactor path that does not resolve stops the run at its start.
        self.redactor = Redactor.from_config(config.redact) if config.redact.enabled else None
        self._redacted: Counter[str] = Counter()  # kind -> values replaced (producer thread)
        self._redaction_failed = 0
        self._redaction_lock = threading.Lock()
        # The budget policy selects on a thread of its own, over the candidates of recent steps.
        self.budget = (
            BudgetSelector(config, producer, self._record_json, seed=seed, clock=clock)
            if config.policy == "budget"
            else None
        )
        self._budget_reported = 0

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

    def route(self, samples: Sequence[ScoredSample], info: BatchInfo) -> RouteCounts:
        if self.budget is not None:
            return self._pool_for_budget(self.budget, samples, info)
        config = self.config
        values = component_values(samples, config.component)
        chosen = select(config, values, [sample.group_id for sample in samples])
        # Lowest first, so that caps keep the worst samples.
        indices = sorted(chosen.indices, key=lambda i: (values[i], i))
        selected = len(indices)
        indices = indices[: config.max_per_step]
        capped = selected - len(indices)
        indices = self._subsample(indices, info)  # not a cap: a chosen share
        granted = self.bucket.take(len(indices))
        capped += len(indices) - granted
        indices = indices[:granted]

        builders, deduped = [], 0
        for i in indices:
            sample = samples[i]
            sample_id = make_sample_id(
                info.run_id, info.step, info.rank, sample.index, sample.prompt, sample.response
            )
            if config.dedup and self._already_seen(sample_id):
                deduped += 1
                continue
            # Validating and serialising the record is the producer thread's work.
            builders.append(partial(self._record_json, sample, info, chosen, i))
        if builders:
            self.producer.submit(builders)
        return RouteCounts(selected, capped, deduped, len(builders))

    def metrics(self, counts: RouteCounts) -> dict[str, tuple[float, str]]:
        """`sampling/*` and `queue/*` metrics after a route call: name -> (value, how ranks
        combine it). Queue figures are what the producer thread last saw (no Redis call here)."""
        found: dict[str, tuple[float, str]] = {
            "sampling/selected": (counts.selected, "sum"),
            "sampling/capped": (counts.capped, "sum"),
            "sampling/deduped": (counts.deduped, "sum"),
        }
        if self.budget is not None:
            budget = self.budget.stats
            found |= {
                "sampling/pooled": (counts.pooled, "sum"),
                "sampling/budget_spent": (budget.spent, "sum"),
                "sampling/budget_left": (self.budget.left, "sum"),
                "sampling/near_duplicates_folded": (budget.folded, "sum"),
                "sampling/budget_failures": (budget.failures, "sum"),
            }
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
        if self.redactor is not None:
            with self._redaction_lock:
                redacted, failed = dict(self._redacted), self._redaction_failed
            found["sampling/redaction_failed"] = (failed, "sum")
            found |= {f"sampling/redacted/{kind}": (n, "sum") for kind, n in redacted.items()}
        return found

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Hand what is waiting to Redis (or the spool) within the deadline; the budget policy
        first spends a round's budget (on its own thread, which close waits for)."""
        if self.budget is not None:
            self.budget.close(deadline_s)
        self.producer.close(deadline_s=deadline_s)

    def _pool_for_budget(
        self, budget: BudgetSelector, samples: Sequence[ScoredSample], info: BatchInfo
    ) -> RouteCounts:
        """Only pools the batch: the selector thread picks. `selected`/`submitted` are the picks
        made since the previous call."""
        pooled = budget.add(samples, info)
        spent = budget.stats.spent
        new, self._budget_reported = spent - self._budget_reported, spent
        return RouteCounts(new, 0, 0, new, pooled=pooled)

    def _subsample(self, indices: list[int], info: BatchInfo) -> list[int]:
        fraction = self.config.sample_fraction
        if fraction >= 1 or not indices:
            return indices
        keep = max(1, round(fraction * len(indices)))
        seed = hashlib.sha256(f"{self.seed}:{info.run_id}:{info.step}:{info.rank}".encode())
        chosen = set(random.Random(seed.digest()).sample(indices, keep))
        return [i for i in indices if i in chosen]  # seeded: the same step keeps the same ones

    def _record_json(
        self, sample: ScoredSample, info: BatchInfo, chosen: Selected, index: int
    ) -> dict[str, Any]:
        selection = chosen.selection_for(index, self.config.component)  # its own statistics
        shown, redactions, shown_cut = self._redacted_texts(sample)
        record = RolloutRecord.from_sample(
            sample,
            run_id=info.run_id,
            step=info.step,
            rank=info.rank,
            model_name_or_path=info.model_name,
            checkpoint_step=info.checkpoint_step,
            generation=dict(info.generation),
            selection=selection,
            max_text_chars=self.max_text_chars,
            shown=shown,
            shown_cut=shown_cut,
            redactions=redactions,
            reward_weights=info.reward_weights,
        )
        return record.model_dump(mode="json")

    def _redacted_texts(
        self, sample: ScoredSample
    ) -> tuple[tuple[str, str] | None, dict[str, int] | None, tuple[bool, bool]]:
        """The prompt and response with placeholders, the counts by kind, and whether each was
        redacted from a prefix only. A redactor that fails raises RecordError naming it, never
        the text: the record is dropped, not sent."""
        if self.redactor is None:
            return None, None, (False, False)
        # A text far past the cap is redacted only as far as it can be shown (and a margin).
        limit = 4 * self.max_text_chars
        prefix_only = (len(sample.prompt) > limit, len(sample.response) > limit)
        try:
            redaction = self.redactor.redact([sample.prompt[:limit], sample.response[:limit]])
        except Exception as error:  # fail closed: any failure keeps the record in
            with self._redaction_lock:
                self._redaction_failed += 1
            message = (
                str(error)
                if isinstance(error, RedactionError)
                else f"redaction failed: {type(error).__name__}"  # its message may quote text
            )
            raise RecordError(f"not redacted ({message}): the record was dropped") from None
        if redaction.counts:
            with self._redaction_lock:
                self._redacted.update(redaction.counts)
        prompt, response = redaction.texts
        return (prompt, response), redaction.counts, prefix_only

    def _already_seen(self, sample_id: str) -> bool:
        if sample_id in self._seen:
            return True
        self._seen[sample_id] = None
        if len(self._seen) > DEDUP_MEMORY:
            self._seen.popitem(last=False)
        return False
