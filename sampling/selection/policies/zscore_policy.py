"""The `zscore` policy: far below the batch's mean, in standard deviations."""

from __future__ import annotations

from collections.abc import Sequence

from rl.numbers import finite_items
from sampling.selection.policies.registry import PolicySettings, register_policy
from sampling.selection.policies.selected import Selected, require_k, selected
from sampling.selection.policies.values import mean_and_std


def zscore(values: Sequence[float], k: float) -> Selected:
    """Values whose batch z-score (value - mean) / std is below -k. No spread selects nothing."""
    require_k(k)
    finite = finite_items(values)
    stats = mean_and_std([value for _, value in finite])
    if stats is None:
        return selected("zscore", [], {"k": float(k)})
    mean, std = stats
    scores = {index: (value - mean) / std for index, value in finite}
    picks = [(index, value) for index, value in finite if scores[index] < -k]
    detail = {index: {"zscore": scores[index]} for index, _ in picks}
    return selected("zscore", picks, {"k": float(k), "mean": mean, "std": std}, detail)


@register_policy("zscore")
def _configured(config: PolicySettings, values: Sequence[float], _: Sequence[int]) -> Selected:
    return zscore(values, config.group_k)
