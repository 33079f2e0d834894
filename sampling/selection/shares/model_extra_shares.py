"""The `failure` and `novel` shares: the groups a reward model's extras rank highest.

`failure` takes the groups that most resemble a failure reviewers already named (the extra
`<model_component>/failure` of a reward model with a failure probe, rl.rewards.failure_probe),
high reward or low: what the reward model pays for while people called it a failure is what
its score alone never sends to review. `novel` takes the groups farthest, in the reward model's
feature space, from every text it was trained on (`<model_component>/novelty`,
rl.rewards.novelty): where no review has looked yet. Both are shares of your own, not built-in:
`sampling.budget.shares: {failure: 0.1, novel: 0.1}`. A group's value is its members' mean (as
its uncertainty is); picks are spread over prompts and failure modes as the others' are. A
round in which no candidate carries the key finds nothing, and the share's reviews go to the
lowest rewards.
"""

from __future__ import annotations

import math

from rl.numbers import finite_or_none
from rl.rewards.model_spec import FAILURE, NOVELTY
from sampling.selection.shares.base import Pool, Take, spread
from sampling.selection.shares.registry import register_share


def group_values(pool: Pool, extra: str, numbers: list[int]) -> dict[int, float]:
    """Each of the groups `numbers` whose members carry `<model_component>/<extra>`: their
    mean, by the group's representative."""
    key = f"{pool.config.model_component}/{extra}"
    value: dict[int, float] = {}
    for number in numbers:
        group = pool.groups[number]
        details = (pool.candidates[i].reward_details.get(key) for i in group.members)
        known = [found for found in map(finite_or_none, details) if found is not None]
        if known:
            value[group.representative] = math.fsum(known) / len(known)
    return value


def highest_extra(pool: Pool, count: int, extra: str, reason: str) -> list[Take]:
    """`count` open groups with the highest `<model_component>/<extra>`, spread; the groups
    none of whose members carry it are never picked."""
    value = group_values(pool, extra, pool.open_groups())
    carrying = [n for n in pool.open_groups() if pool.groups[n].representative in value]
    chosen = spread(pool.groups, carrying, count, lambda g: -value[g.representative])
    return [Take(number, reason) for number in chosen]


@register_share("failure")
def pick_likely_failures(pool: Pool, count: int) -> list[Take]:
    return highest_extra(pool, count, FAILURE, "failure")


@register_share("novel")
def pick_novel(pool: Pool, count: int) -> list[Take]:
    return highest_extra(pool, count, NOVELTY, "novel")
