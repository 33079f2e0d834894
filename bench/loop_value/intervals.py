"""A mean over seeds with its 95% t-interval: what the goals table reads "met" from.

Seeds are the bench's independent repetitions (each its own training, sampling and reviews),
so the interval is Student's t over the per-seed values; a paired goal (method A vs method B)
takes the interval of the per-seed differences, which removes what a seed does to both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% quantiles of Student's t by degrees of freedom (no scipy in the environment).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def t975(df: int) -> float:
    return _T975[df - 1] if df <= len(_T975) else 1.96


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int

    def above(self, bound: float) -> bool:
        return self.n >= 2 and self.low > bound

    def below(self, bound: float) -> bool:
        return self.n >= 2 and self.high <= bound

    def text(self, digits: int = 3, unit: str = "") -> str:
        if not math.isfinite(self.mean):
            return "-"
        if self.n < 2 or not math.isfinite(self.low):
            return f"{self.mean:.{digits}f}{unit} (n={self.n}, no interval)"
        return (
            f"{self.mean:.{digits}f}{unit} [{self.low:.{digits}f}, {self.high:.{digits}f}] "
            f"(n={self.n})"
        )


def interval(values: Sequence[float]) -> Interval:
    """Mean and 95% t-interval; an infinite value makes the mean and bounds infinite (a seed
    that never got there), a NaN is left out."""
    finite = [v for v in values if not math.isnan(v)]
    n = len(finite)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    if any(math.isinf(v) for v in finite):
        return Interval(math.inf, math.inf, math.inf, n)
    mean = sum(finite) / n
    if n < 2:
        return Interval(mean, math.nan, math.nan, n)
    sd = math.sqrt(sum((v - mean) ** 2 for v in finite) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)
