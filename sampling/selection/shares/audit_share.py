"""The `audit` share: first one carrier of each of the reward-hacking watch's suspects, then the
high-reward groups that look like failures reviewers already named (a reward model's failure
probe, `<model_component>/failure`, where it has one: what the reward model pays for although
people called its like failures), then the highest rewards (where reward hacking hides), spread
over prompts and what paid."""

from __future__ import annotations

import statistics

from rl.rewards.model_spec import FAILURE
from sampling.selection.shares.base import Pool, Take, spread
from sampling.selection.shares.model_extra_shares import group_values
from sampling.selection.shares.registry import register_share

LIKELY = 0.5  # the probe's probability at which a group looks more like a failure than not


@register_share(
    "audit",
    fraction=lambda config: config.audit_share,
    count_reason="audit_high_reward",
    builtin_place=1,
)
def pick_suspects_then_highest(pool: Pool, count: int) -> list[Take]:
    takes: list[Take] = []
    taken = set(pool.taken)
    for flag in pool.flags:
        if len(takes) >= count:
            break
        carrying = {pool.group_of[i] for i in flag.carriers if i in pool.group_of} - taken
        if carrying:  # the highest-reward carrier: what the reward model pays most for
            best = max(carrying, key=lambda n: (pool.groups[n].reward, -n))
            takes.append(Take(best, "suspect", flag.about))
            taken.add(best)
    open_groups = [number for number in range(len(pool.groups)) if number not in taken]
    for number in _paid_failures(pool, open_groups, count - len(takes)):
        takes.append(Take(number, "failure"))
        taken.add(number)
    open_groups = [number for number in open_groups if number not in taken]
    highest = spread(pool.groups, open_groups, count - len(takes), lambda g: -g.reward, "high_mode")
    return takes + [Take(number, "audit_high_reward") for number in highest]


def _paid_failures(pool: Pool, open_groups: list[int], count: int) -> list[int]:
    """Up to `count` groups rewarded at or above the median that the failure probe calls likely
    failures, the likeliest first (none without a probe)."""
    if count <= 0 or not open_groups:
        return []
    value = group_values(pool, FAILURE, open_groups)
    if not value:
        return []
    median = statistics.median(pool.groups[n].reward for n in range(len(pool.groups)))
    paid = [
        n
        for n in open_groups
        if pool.groups[n].reward >= median
        and value.get(pool.groups[n].representative, 0.0) >= LIKELY
    ]
    return spread(pool.groups, paid, count, lambda g: -value[g.representative], "high_mode")
