"""The `random` share: uniformly drawn candidates, what keeps a measured accuracy unbiased."""

from __future__ import annotations

import random

from sampling.selection.shares.base import Pool, Take
from sampling.selection.shares.registry import register_share


@register_share("random", fraction=lambda config: config.random_share, builtin_place=0)
def pick_at_random(pool: Pool, count: int) -> list[Take]:
    """Groups of uniformly drawn candidates (a group of 10 is 10 times as likely as one of 1)."""
    order = [index for index in pool.finite if index in pool.group_of]  # not the covered ones
    random.Random(f"lowtide-budget:{pool.seed}").shuffle(order)
    chosen: list[int] = []
    for index in order:
        if len(chosen) == count:
            break
        number = pool.group_of[index]
        if number not in chosen and number not in pool.taken:
            chosen.append(number)
    return [Take(number, "random") for number in chosen]
