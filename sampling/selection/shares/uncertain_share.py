"""The `uncertain` share: the groups the reward model is least certain about (how uncertainty is
read: `sampling.selection.budget`)."""

from __future__ import annotations

from sampling.selection.shares.base import Pool, Take, spread
from sampling.selection.shares.registry import register_share


@register_share("uncertain", fraction=lambda config: config.uncertainty_share, builtin_place=2)
def pick_most_uncertain(pool: Pool, count: int) -> list[Take]:
    known = [n for n in pool.open_groups() if (pool.groups[n].uncertainty or 0) > 0]
    chosen = spread(pool.groups, known, count, lambda g: -(g.uncertainty or 0.0))
    return [Take(number, "uncertain") for number in chosen]
