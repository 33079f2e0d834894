"""The `group_relative` policy: worse than the other responses to the same prompt."""

from __future__ import annotations

from collections.abc import Sequence

from rl.numbers import finite_items
from sampling.selection.policies.registry import PolicySettings, register_policy
from sampling.selection.policies.selected import Selected, require_k, selected
from sampling.selection.policies.values import mean_and_std


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
    require_k(k)
    if len(group_ids) != len(values):
        raise ValueError(f"{len(values)} values but {len(group_ids)} group ids")
    members: dict[int, list[tuple[int, float]]] = {}
    for index, value in finite_items(values):
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
    return selected("group_relative", picks, {"k": float(k)}, detail)


def _strictly_lowest(group: list[tuple[int, float]]) -> list[tuple[int, float]]:
    lowest = min(value for _, value in group)
    at_lowest = [(index, value) for index, value in group if value == lowest]
    return at_lowest if len(at_lowest) == 1 else []


@register_policy("group_relative")
def _configured(
    config: PolicySettings, values: Sequence[float], group_ids: Sequence[int]
) -> Selected:
    return group_relative(values, group_ids, config.group_k)
