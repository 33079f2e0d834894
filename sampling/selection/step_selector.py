"""The per-step policies' place in routing (threshold, quantile, group_relative, zscore): each
batch is selected on its own, then capped (per step, per minute), subsampled and deduped, all on
the caller's thread and cheap: no hashing beyond the picks' ids, no record building, no I/O."""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Sequence

from rl.rate_limit import TokenBucket
from sampling.batch import BatchInfo
from sampling.config import SamplingConfig
from sampling.records import ScoredSample
from sampling.selection.decision import Decision, Metrics, Offered, RecentIds, RouteCounts
from sampling.selection.policies import component_values, policy_for


class StepSelector:
    def __init__(
        self,
        config: SamplingConfig,
        seen: RecentIds,
        *,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.seen = seen  # shared with the router: a sample it routed by hand is not picked again
        self.seed = seed
        # Resolved now: a policy named by a dotted path that leads nowhere fails at start.
        self.policy = policy_for(config.policy)
        # At most max_per_minute records a minute; bursts up to one minute's.
        self.bucket = TokenBucket(config.max_per_minute, period_s=60, clock=clock)

    def offer(self, samples: Sequence[ScoredSample], info: BatchInfo) -> Offered:
        config = self.config
        values = component_values(samples, config.component)
        chosen = self.policy(config, values, [sample.group_id for sample in samples])
        # Lowest first, so that caps keep the worst samples.
        indices = sorted(chosen.indices, key=lambda i: (values[i], i))
        selected = len(indices)
        if config.compare_size:  # a group is one task: the caps count groups, not samples
            indices = _lowest_of_each_group(indices, samples)
        uncapped = len(indices)
        indices = indices[: config.max_per_step]
        capped = uncapped - len(indices)
        indices = self._subsample(indices, info)  # not a cap: a chosen share
        granted = self.bucket.take(len(indices))
        capped += len(indices) - granted
        decisions, deduped = [], 0
        for i in indices[:granted]:
            decision = Decision(samples[i], info, chosen, i, config.component)
            if config.dedup and not self.seen.add(decision.sample_id):
                deduped += 1
                continue
            decisions.append(decision)
        return Offered(RouteCounts(selected, capped, deduped, len(decisions)), decisions)

    def metrics(self, counts: RouteCounts) -> Metrics:
        return {}

    def close(self, deadline_s: float) -> None:
        pass

    def _subsample(self, indices: list[int], info: BatchInfo) -> list[int]:
        fraction = self.config.sample_fraction
        if fraction >= 1 or not indices:
            return indices
        keep = max(1, round(fraction * len(indices)))
        seed = hashlib.sha256(f"{self.seed}:{info.run_id}:{info.step}:{info.rank}".encode())
        chosen = set(random.Random(seed.digest()).sample(indices, keep))
        return [i for i in indices if i in chosen]  # seeded: the same step keeps the same ones


def _lowest_of_each_group(indices: Sequence[int], samples: Sequence[ScoredSample]) -> list[int]:
    """The first (lowest) of each prompt group's picks: in comparison review the others would be
    shown in its task anyway (sampling/selection/comparisons.py), so they are not picks of
    their own to be counted against a cap."""
    groups: set[int] = set()
    kept = []
    for i in indices:
        if samples[i].group_id not in groups:
            groups.add(samples[i].group_id)
            kept.append(i)
    return kept
