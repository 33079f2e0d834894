"""The `audit` share: first one carrier of each of the reward-hacking watch's suspects, then the
highest rewards (where reward hacking hides), spread over prompts and what paid."""

from __future__ import annotations

from sampling.selection.shares.base import Pool, Take, spread
from sampling.selection.shares.registry import register_share


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
    highest = spread(pool.groups, open_groups, count - len(takes), lambda g: -g.reward, "high_mode")
    return takes + [Take(number, "audit_high_reward") for number in highest]
