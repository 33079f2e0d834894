"""The few statistics the watch needs, in the standard library: Student's t tail, the
Benjamini-Hochberg step-up rule, and a two-proportion z."""

from __future__ import annotations

import math
from collections.abc import Sequence


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    tail = 0.5 * _beta_inc(df / 2, 0.5, df / (df + t * t))
    return tail if t > 0 else 1 - tail


def benjamini_hochberg(p_values: Sequence[float], tested: int, rate: float) -> int:
    """How many of the (ascending) p-values pass the step-up rule at false discovery `rate` when
    `tested` hypotheses were tested in all (the others, not listed, have larger p-values)."""
    passed = 0
    for rank, p in enumerate(p_values, 1):
        if p <= rate * rank / max(tested, 1):
            passed = rank
    return passed


def proportion_z(hits_then: int, n_then: int, hits_now: int, n_now: int) -> float:
    """z of the rise from hits_then/n_then to hits_now/n_now (pooled two-proportion test)."""
    if n_then == 0 or n_now == 0:
        return 0.0
    pooled = (hits_then + hits_now) / (n_then + n_now)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n_then + 1 / n_now))
    rise = hits_now / n_now - hits_then / n_then
    if spread == 0:
        return 0.0 if rise == 0 else math.copysign(math.inf, rise)
    return rise / spread


def _beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b), by its continued fraction (Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1 - math.exp(log_front) * _fraction(b, a, 1 - x) / b
    return math.exp(log_front) * _fraction(a, b, x) / a


def _fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    value = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            value *= c * d
        if abs(c * d - 1) < 1e-12:
            break
    return value
