"""What a selection policy returns, and the checks every policy makes of its parameters."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sampling.records import Selection


@dataclass(frozen=True)
class Selected:
    """What a policy picked. `parameter` is batch-wide (threshold, quantile and cutoff, k, batch
    mean/std); `detail` holds an index's own statistics (its group's mean and bar, its z-score)."""

    policy: str
    indices: list[int]  # ascending
    parameter: dict[str, float]
    values: dict[int, float]  # index -> the value that triggered its selection
    detail: dict[int, dict[str, float]] = field(default_factory=dict)
    reasons: dict[int, str] = field(default_factory=dict)  # budget policy: why each was picked
    group_sizes: dict[int, int] = field(default_factory=dict)  # near-duplicates it stands for
    about: dict[int, str] = field(default_factory=dict)  # what a reason is about (a query)

    def parameter_for(self, index: int) -> dict[str, float]:
        return {**self.parameter, **self.detail.get(index, {})}

    def selection_for(self, index: int, component: str | None = None) -> Selection:
        """The record's `selected_by` for one selected index."""
        return Selection(
            policy=self.policy,
            parameter=self.parameter_for(index),
            value=self.values.get(index),  # None: a non-finite value (only chosen by hand)
            component=component,
            reason=self.reasons.get(index),
            group_size=self.group_sizes.get(index, 1),
            about=self.about.get(index),
        )


def selected(
    policy: str,
    picks: list[tuple[int, float]],
    parameter: dict[str, float],
    detail: dict[int, dict[str, float]] | None = None,
) -> Selected:
    """A `Selected` of (index, value) picks in any order: indices come out ascending."""
    ordered = sorted(picks)
    return Selected(
        policy=policy,
        indices=[index for index, _ in ordered],
        parameter=parameter,
        values=dict(ordered),
        detail=detail or {},
    )


def require_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")


def require_k(k: float) -> None:
    if not (math.isfinite(k) and k >= 0):
        raise ValueError(f"k must be a finite number >= 0, got {k}")
