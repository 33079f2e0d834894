"""Finite numbers: the one place that says what counts as a usable number.

NaN and infinity arrive from broken reward functions, and JSON has neither; integers too large
for a float arrive from files. Every layer asks the same questions of such values, so they are
answered here once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def finite_or_none(value: object) -> float | None:
    """`value` as a float when it is a finite real number (an int, a float, a numpy scalar);
    None for anything else: None, a bool, a text (even "1.5"), NaN, an infinity, or an integer
    too large for a float."""
    if isinstance(value, bool | str | bytes) or not hasattr(value, "__float__"):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def finite_floats(values: Iterable[float]) -> list[float]:
    """The finite values, as floats, in their order."""
    return [float(value) for value in values if math.isfinite(value)]


def finite_items(values: Sequence[float]) -> list[tuple[int, float]]:
    """(index, value) of each finite value, in order: a selection keeps the positions."""
    return [(index, float(value)) for index, value in enumerate(values) if math.isfinite(value)]


def none_if_not_finite(value: T) -> T | None:
    """None for a NaN or infinite float (JSON has neither), any other value as it is."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def average_ranks(values: Sequence[float]) -> list[float]:
    """Each value's 0-based rank in ascending order, ties sharing the mean of their ranks
    (what rank correlations and percentiles need)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for index in order[start : end + 1]:
            ranks[index] = (start + end) / 2
        start = end + 1
    return ranks
