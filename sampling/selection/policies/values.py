"""What policies judge and compute: each sample's value, and a batch's or group's statistics.
NaN and infinite values never enter a statistic: a broken reward is a bug, not a low reward."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rl.samples import ScoredSample

# 0.07 * 100 is 7.000000000000001 in floats; its bottom count must be 7, not 8.
_COUNT_DIGITS = 9


def component_values(samples: Sequence[ScoredSample], component: str | None) -> list[float]:
    """The value each sample is judged on: its reward, or one reward component (NaN if missing,
    so the sample is never selected on a component it does not have)."""
    if component is None:
        return [float(sample.reward) for sample in samples]
    return [float(sample.reward_details.get(component, math.nan)) for sample in samples]


def bottom_count(q: float, n: int) -> int:
    """How many of `n` values form the bottom share `q`: ceil(q * n), at least 1 when q > 0."""
    if q <= 0 or n == 0:
        return 0
    return max(1, math.ceil(round(q * n, _COUNT_DIGITS)))


def mean_and_std(numbers: Sequence[float]) -> tuple[float, float] | None:
    """Mean and population std, or None when there is no spread (fewer than two values, or all
    equal). Equality is checked exactly: float noise in a std (1e-17 for three 0.1s) would
    otherwise put members of an all-equal group "below the mean"."""
    if len(numbers) < 2 or min(numbers) == max(numbers):
        return None
    # Scaled to [-1, 1] first (by a power of two: exact), as squares of rewards near 1e200
    # overflow and near 1e-200 underflow.
    exponent = math.frexp(max(abs(number) for number in numbers))[1]
    scaled = [math.ldexp(number, -exponent) for number in numbers]
    mean = math.fsum(scaled) / len(scaled)
    variance = math.fsum((number - mean) ** 2 for number in scaled) / len(scaled)
    std = math.ldexp(math.sqrt(variance), exponent)
    return (math.ldexp(mean, exponent), std) if std > 0 else None  # subnormal spread: 0
