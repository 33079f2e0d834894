"""The `threshold` policy: every finite value below a bar."""

from __future__ import annotations

from collections.abc import Sequence

from rl.numbers import finite_items
from sampling.selection.policies.registry import PolicySettings, register_policy
from sampling.selection.policies.selected import Selected, require_finite, selected


def threshold(values: Sequence[float], threshold: float) -> Selected:
    """Every finite value below `threshold`."""
    require_finite("threshold", threshold)
    picks = [(index, value) for index, value in finite_items(values) if value < threshold]
    return selected("threshold", picks, {"threshold": float(threshold)})


@register_policy("threshold")
def _configured(config: PolicySettings, values: Sequence[float], _: Sequence[int]) -> Selected:
    return threshold(values, config.threshold)
