"""Within-group lift: in one prompt's group, mean(reward | carries the feature) minus
mean(reward | does not), for every feature some but not all of its responses carry; summed over
groups per feature, so that a feature's lift is the mean over its informative groups with a
standard error over groups. Comparing inside a group holds the prompt fixed: a feature of easy
prompts does not look paid."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass


class LiftStats:
    """Per-group lifts of one feature, accumulated: count, sum, sum of squares."""

    __slots__ = ("carriers", "id", "last_serial", "n", "sum", "sum_sq")

    def __init__(self, feature_id: int) -> None:
        self.id = feature_id  # never reused: kept samples name their features by it
        self.n = 0
        self.sum = 0.0
        self.sum_sq = 0.0
        self.carriers = 0  # responses that carried it, over the run (pruning keeps the common)
        self.last_serial = 0  # the step chunk it was last seen in

    def add(self, lift: float) -> None:
        self.n += 1
        self.sum += lift
        self.sum_sq += lift * lift

    @property
    def mean(self) -> float:
        return self.sum / self.n if self.n else 0.0

    def t(self) -> float:
        """Mean over its standard error (inf when every group gave the same positive lift)."""
        if self.n < 2:
            return 0.0
        mean = self.mean
        variance = max(0.0, (self.sum_sq - self.n * mean * mean) / (self.n - 1))
        if variance <= 1e-18 * max(1.0, mean * mean):
            return math.copysign(math.inf, mean) if mean else 0.0
        return mean / math.sqrt(variance / self.n)


def group_lifts(
    rewards: Sequence[float], keys: Sequence[Collection[str]]
) -> Iterator[tuple[str, float]]:
    """(feature, lift) for each feature informative in this group: carried by some of its
    responses and not by others."""
    size = len(rewards)
    if size < 2:
        return
    total = math.fsum(rewards)
    count: dict[str, int] = dict.fromkeys(keys[0], 1)  # two plain dicts: the hot loop
    summed: dict[str, float] = dict.fromkeys(keys[0], rewards[0])
    for reward, present in zip(rewards[1:], keys[1:], strict=True):
        for key in present:
            if key in count:
                count[key] += 1
                summed[key] += reward
            else:
                count[key] = 1
                summed[key] = reward
    for key, n in count.items():
        if n < size:
            with_sum = summed[key]
            yield key, with_sum / n - (total - with_sum) / (size - n)


@dataclass
class Spread:
    """The reward's spread within groups (pooled): the unit a lift's effect size is read in."""

    sum_sq: float = 0.0
    dof: int = 0

    def add(self, rewards: Iterable[float]) -> None:
        values = list(rewards)
        if len(values) < 2:
            return
        mean = math.fsum(values) / len(values)
        self.sum_sq += math.fsum((value - mean) ** 2 for value in values)
        self.dof += len(values) - 1

    @property
    def sd(self) -> float:
        return math.sqrt(self.sum_sq / self.dof) if self.dof else 0.0


def component_lift(
    groups: Iterable[Sequence[tuple[bool, float]]],
) -> float | None:
    """Mean within-group lift of one reward component over groups given as (carries it, value)
    pairs (non-finite values already left out); None when no group is informative."""
    lifts = []
    for members in groups:
        with_values = [value for carries, value in members if carries]
        without = [value for carries, value in members if not carries]
        if with_values and without:
            lifts.append(sum(with_values) / len(with_values) - sum(without) / len(without))
    return sum(lifts) / len(lifts) if lifts else None
