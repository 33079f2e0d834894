"""Selection policies: which samples of a batch go to human review. Pure functions of the values.

Each policy takes the batch's values (the reward, or one reward component: `component_values`)
and returns a `Selected`. NaN and infinite values are never selected and never enter a statistic
(mean, std, quantile): a broken reward is a bug to count, not a low reward to review.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sampling.config import SamplingConfig
from sampling.records import ScoredSample, Selection

# 0.07 * 100 is 7.000000000000001 in floats; its bottom count must be 7, not 8.
_COUNT_DIGITS = 9


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


def threshold(values: Sequence[float], threshold: float) -> Selected:
    """Every finite value below `threshold`."""
    _require_finite("threshold", threshold)
    picks = [(index, value) for index, value in _finite_items(values) if value < threshold]
    return _selected("threshold", picks, {"threshold": float(threshold)})


def quantile(values: Sequence[float], q: float) -> Selected:
    """The bottom share `q` of the batch's finite values: the ceil(q * n) lowest, at least one
    when q > 0, ties broken by index (stable). The cutoff is the q-quantile by the inverted-CDF
    definition (numpy's "inverted_cdf"): the highest value picked, a value of the batch, so
    "value <= cutoff" holds for every pick; ties at the cutoff beyond the count are left out,
    so a batch of equal values gives exactly ceil(q * n), not all of them."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantile must be between 0 and 1, got {q}")
    finite = _finite_items(values)
    count = bottom_count(q, len(finite))
    if count == 0:
        return _selected("quantile", [], {"quantile": float(q)})
    lowest = sorted(finite, key=lambda item: (item[1], item[0]))[:count]
    return _selected("quantile", lowest, {"quantile": float(q), "cutoff": lowest[-1][1]})


def bottom_count(q: float, n: int) -> int:
    """How many of `n` values form the bottom share `q`: ceil(q * n), at least 1 when q > 0."""
    if q <= 0 or n == 0:
        return 0
    return max(1, math.ceil(round(q * n, _COUNT_DIGITS)))


def group_relative(
    values: Sequence[float],
    group_ids: Sequence[int],
    k: float,
    *,
    lowest_if_none: bool = False,
) -> Selected:
    """Within each group (the samples of one prompt), values below group mean - k * group std
    (population std over the group's finite values). A group with no spread (fewer than two
    finite values, or all equal) selects nothing: there is no "worse than its siblings" there.

    With `lowest_if_none`, a group with spread where nobody is below the bar (large k) gives its
    strictly lowest member instead (detail `lowest_in_group` = 1); a tie for lowest gives none.
    """
    _require_k(k)
    if len(group_ids) != len(values):
        raise ValueError(f"{len(values)} values but {len(group_ids)} group ids")
    members: dict[int, list[tuple[int, float]]] = {}
    for index, value in _finite_items(values):
        members.setdefault(group_ids[index], []).append((index, value))
    picks: list[tuple[int, float]] = []
    detail: dict[int, dict[str, float]] = {}
    for group in members.values():
        stats = mean_and_std([value for _, value in group])
        if stats is None:
            continue
        mean, std = stats
        bar = mean - k * std
        group_detail = {"group_mean": mean, "group_std": std, "group_bar": bar}
        below = [(index, value) for index, value in group if value < bar]
        if not below and lowest_if_none:
            below = _strictly_lowest(group)
            group_detail["lowest_in_group"] = 1.0
        picks += below
        detail.update({index: dict(group_detail) for index, _ in below})
    return _selected("group_relative", picks, {"k": float(k)}, detail)


def zscore(values: Sequence[float], k: float) -> Selected:
    """Values whose batch z-score (value - mean) / std is below -k. No spread selects nothing."""
    _require_k(k)
    finite = _finite_items(values)
    stats = mean_and_std([value for _, value in finite])
    if stats is None:
        return _selected("zscore", [], {"k": float(k)})
    mean, std = stats
    scores = {index: (value - mean) / std for index, value in finite}
    picks = [(index, value) for index, value in finite if scores[index] < -k]
    detail = {index: {"zscore": scores[index]} for index, _ in picks}
    return _selected("zscore", picks, {"k": float(k), "mean": mean, "std": std}, detail)


def select(config: SamplingConfig, values: Sequence[float], group_ids: Sequence[int]) -> Selected:
    """The configured policy on one batch: threshold uses `threshold`, quantile `quantile`,
    group_relative and zscore `group_k`."""
    return _POLICIES[config.policy](config, values, group_ids)


_POLICIES: dict[str, Callable[[SamplingConfig, Sequence[float], Sequence[int]], Selected]] = {
    "threshold": lambda config, values, _: threshold(values, config.threshold),
    "quantile": lambda config, values, _: quantile(values, config.quantile),
    "group_relative": lambda config, values, groups: group_relative(values, groups, config.group_k),
    "zscore": lambda config, values, _: zscore(values, config.group_k),
}


def component_values(samples: Sequence[ScoredSample], component: str | None) -> list[float]:
    """The value each sample is judged on: its reward, or one reward component (NaN if missing,
    so the sample is never selected on a component it does not have)."""
    if component is None:
        return [float(sample.reward) for sample in samples]
    return [float(sample.reward_details.get(component, math.nan)) for sample in samples]


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


def _finite_items(values: Sequence[float]) -> list[tuple[int, float]]:
    return [(index, float(value)) for index, value in enumerate(values) if math.isfinite(value)]


def _strictly_lowest(group: list[tuple[int, float]]) -> list[tuple[int, float]]:
    lowest = min(value for _, value in group)
    at_lowest = [(index, value) for index, value in group if value == lowest]
    return at_lowest if len(at_lowest) == 1 else []


def _selected(
    policy: str,
    picks: list[tuple[int, float]],
    parameter: dict[str, float],
    detail: dict[int, dict[str, float]] | None = None,
) -> Selected:
    ordered = sorted(picks)
    return Selected(
        policy=policy,
        indices=[index for index, _ in ordered],
        parameter=parameter,
        values=dict(ordered),
        detail=detail or {},
    )


def _require_finite(name: str, value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")


def _require_k(k: float) -> None:
    if not (math.isfinite(k) and k >= 0):
        raise ValueError(f"k must be a finite number >= 0, got {k}")
