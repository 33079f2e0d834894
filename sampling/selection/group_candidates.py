"""The budget policy over prompt groups, for comparison tasks: one candidate per group.

A comparison shows a group's responses side by side, so the budget spends one review per group
and scores a group by its members:
- `reward`: the members' mean (the low-reward share goes to groups the reward model pays
  least, the audit share to those it pays most);
- uncertainty (the `uncertainty_key` detail, which the uncertainty share ranks by): how unsure
  the reward model is of the group's order. With the score of the model it was retrained from
  known (`<model_component>/previous`), the share of member pairs the two order differently
  (what reviews changed its mind about); else, with the reward model's spread known, the share of
  member pairs whose rewards lie closer than their spreads together; without it, how far the
  reward model's order within the group is from the rule components' order (the share of pairs
  the two order differently); each plus the group's reward spread (std) as a small tie-break,
  since a group whose rewards are all alike teaches little either way;
- suspects: a group carries a suspect when one of its responses does (the candidate's text is
  its responses, one per line, which is what the watch's carriers read).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean, pstdev

from rl.numbers import finite_or_none
from sampling.config import BudgetConfig
from sampling.records import ScoredSample
from sampling.selection.budget import (
    Candidate,
    is_component,
    is_rule,
    previous_key,
)

SPREAD_TIE_BREAK = 0.01  # reward spread's weight beside the order's uncertainty


@dataclass(frozen=True)
class GroupCandidate:
    candidate: Candidate
    members: tuple[int, ...]  # indices of the group's samples in the caller's list


def group_candidates(
    samples: Sequence[ScoredSample],
    keys: Sequence[object],
    settings: BudgetConfig,
    positions: Sequence[int] | None = None,
) -> list[GroupCandidate]:
    """One candidate per group of `samples` (`keys[i]`: sample i's group, e.g. its run, step,
    rank and group id) with at least two finite rewards."""
    groups: dict[object, list[int]] = {}
    for index, (sample, key) in enumerate(zip(samples, keys, strict=True)):
        if math.isfinite(sample.reward):
            groups.setdefault(key, []).append(index)
    found = []
    for members in groups.values():
        if len(members) < 2:
            continue
        group = [samples[i] for i in members]
        first = group[0]
        details = _mean_details(group, settings)
        details[settings.uncertainty_key] = order_uncertainty(group, settings)
        found.append(
            GroupCandidate(
                Candidate(
                    prompt=first.prompt,
                    response="\n".join(sample.response for sample in group),
                    reward=fmean(float(sample.reward) for sample in group),
                    reward_details=details,
                    group_id=first.group_id,
                    position=positions[members[0]] if positions is not None else members[0],
                ),
                tuple(members),
            )
        )
    return found


def order_uncertainty(group: Sequence[ScoredSample], settings: BudgetConfig) -> float:
    """How unsure the reward model is of the group's order (module docstring), in [0, 1.01]."""
    pairs = list(combinations(range(len(group)), 2))
    spreads = [finite_or_none(s.reward_details.get(settings.uncertainty_key)) for s in group]
    now = [finite_or_none(s.reward_details.get(settings.model_component)) for s in group]
    before = [finite_or_none(s.reward_details.get(previous_key(settings))) for s in group]
    if None not in before:
        unsure = sum(_ordered_apart(now, before, a, b) for a, b in pairs)
    elif None not in spreads:
        unsure = sum(
            abs(group[a].reward - group[b].reward) < (spreads[a] or 0) + (spreads[b] or 0)
            for a, b in pairs
        )
    else:
        rules = [_rules_mean(sample, settings) for sample in group]
        unsure = sum(_ordered_apart(now, rules, a, b) for a, b in pairs)
    rewards = [float(sample.reward) for sample in group]
    return unsure / len(pairs) + SPREAD_TIE_BREAK * min(1.0, pstdev(rewards))


def _ordered_apart(
    one: Sequence[float | None], other: Sequence[float | None], a: int, b: int
) -> bool:
    """The two scores order members a and b differently (not where either lacks a score)."""
    one_a, one_b, other_a, other_b = one[a], one[b], other[a], other[b]
    if one_a is None or one_b is None or other_a is None or other_b is None:
        return False
    return (one_a - one_b) * (other_a - other_b) < 0


def _rules_mean(sample: ScoredSample, settings: BudgetConfig) -> float | None:
    values = [
        value
        for name, raw in sample.reward_details.items()
        if is_rule(name, settings) and (value := finite_or_none(raw)) is not None
    ]
    return fmean(values) if values else None


def _mean_details(group: Sequence[ScoredSample], settings: BudgetConfig) -> dict[str, float]:
    """Each top-level component's mean over the members (what the spread of picks reads)."""
    names = {n for sample in group for n in sample.reward_details if is_component(n, settings)}
    means = {}
    for name in sorted(names):
        values = [v for s in group if (v := finite_or_none(s.reward_details.get(name))) is not None]
        if values:
            means[name] = fmean(values)
    return means


def anchor_of(members: Sequence[ScoredSample], reason: str) -> int:
    """Which member a group pick is about: the highest reward for an audit or suspect pick
    (what the reward model paid for), the lowest otherwise."""
    rewards = [float(sample.reward) for sample in members]
    if reason in ("audit_high_reward", "suspect"):
        return max(range(len(members)), key=lambda i: (rewards[i], -i))
    return min(range(len(members)), key=lambda i: (rewards[i], i))
