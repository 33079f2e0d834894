"""The `budget` selection policy: given a number of reviews, which candidates deserve them.

`choose` is a pure function of the candidates, the budget, the config and a seed:

1. Candidates with a non-finite reward are dropped (a broken reward is a bug, not a review).
2. Near-duplicate responses are folded into groups (`sampling.selection.near_duplicates`); a
   group is reviewed once, through its representative, and its size goes on the record.
3. The budget is shared: `random_share` uniformly at random (a random candidate, so groups count
   by their size: what keeps a measured accuracy unbiased), `audit_share` first to the
   reward-hacking watch's suspects (one group carrying each, the highest reward first), then to
   the highest rewards (where reward hacking hides), `uncertainty_share` of the groups the
   reward model is least certain about, and the rest to the lowest rewards. A share that finds
   no candidates (no uncertainty known) goes to the lowest rewards.
4. Within a share, picks are spread: the next pick is the best-ranked group whose prompt and
   failure mode (its worst reward component) have been picked least so far, so one failure on
   one prompt never takes the whole share.

Uncertainty, first found of:
- where the reward model disagrees with the one it was retrained from (`<model_component>/previous`
  in reward_details: `lowtide loop` scores with the loop's first reward model too, from round 2):
  |percentile(model) - percentile(previous)|. What reviews changed its mind about is what the
  next reviews should check: a failure it stopped paying for, or a new favourite;
- the reward model's spread (`uncertainty_key`, e.g. the std of several cheap heads);
- the disagreement by rank between the reward model component and the mean of the rule
  components: |percentile(model) - percentile(rules)|.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rl.numbers import average_ranks, finite_or_none
from rl.rewards.model_spec import PREVIOUS
from sampling.config import BudgetConfig
from sampling.selection.near_duplicates import group_near_duplicates
from sampling.selection.shares import (
    LOW_REWARD,
    Candidate,
    Flag,
    Group,
    Pool,
    Take,
    shares_for,
    spread,
)

# "fallback": a round's selection failed and its budget went to the lowest rewards instead.
Reason = Literal["random", "suspect", "audit_high_reward", "uncertain", "low_reward", "fallback"]


@dataclass(frozen=True)
class Pick:
    """A picked candidate (`index` into the candidates given to `choose`) and why."""

    index: int
    reason: str  # a Reason, or what a share of your own says
    members: tuple[int, ...]  # its near-duplicate group, itself first (indices into candidates)
    reward: float  # the group's mean reward
    uncertainty: float | None  # the group's, where known
    about: str | None = None  # a suspect pick: the suspect, as the reviewer reads it

    @property
    def group_size(self) -> int:
        return len(self.members)


def share_counts(budget: int, config: BudgetConfig) -> dict[str, int]:
    """How many of `budget` reviews each share gets, by the reason it is reported under: each
    share rounded half up, the rest to the lowest rewards (never below 0: the later shares give
    way first: yours, then uncertainty, then audit)."""
    shares = shares_for(config)
    counts = {s.count_reason: _round_half_up(s.fraction(config) * budget) for s in shares}
    for share in reversed(shares):
        over = sum(counts.values()) - budget
        if over > 0:
            counts[share.count_reason] -= min(over, counts[share.count_reason])
    counts[LOW_REWARD] = budget - sum(counts.values())
    return counts


def lowest_reward_picks(candidates: Sequence[Candidate], budget: int) -> list[Pick]:
    """What a round spends when `choose` fails: the lowest finite rewards, each on its own (no
    grouping or shares), so that reviewers still get the round's worst samples."""
    finite = [i for i, candidate in enumerate(candidates) if math.isfinite(candidate.reward)]
    lowest = sorted(finite, key=lambda i: (candidates[i].reward, i))[: max(0, budget)]
    return [Pick(i, "fallback", (i,), candidates[i].reward, None) for i in lowest]


def choose(
    candidates: Sequence[Candidate],
    budget: int,
    config: BudgetConfig,
    seed: int = 0,
    *,
    reviewed: Sequence[str] = (),
    flags: Sequence[Flag] = (),
) -> list[Pick]:
    """At most `budget` picks, one per near-duplicate group, in the order they were picked
    (random, suspect, audit, uncertain, low reward). The same input and seed give the same
    picks. `reviewed`: responses already sent to review; their near-duplicates are not picked
    again. `flags`: the watch's suspects; the audit share reviews one carrier of each first."""
    if budget <= 0:
        return []
    finite = [i for i, candidate in enumerate(candidates) if math.isfinite(candidate.reward)]
    groups = _groups(candidates, finite, config, reviewed)
    counts = share_counts(budget, config)
    group_of = {member: number for number, g in enumerate(groups) for member in g.members}
    pool = Pool(candidates, groups, group_of, finite, flags, config, seed)
    picks: list[Pick] = []

    def take(takes: Sequence[Take], count: int) -> None:
        for taken in takes:
            if count <= 0:
                break
            if not 0 <= taken.group < len(groups) or taken.group in pool.taken:
                continue  # a share of your own that picked a group twice or none
            pool.taken.add(taken.group)
            group = groups[taken.group]
            picks.append(
                Pick(
                    group.representative,
                    taken.reason,
                    group.members,
                    group.reward,
                    group.uncertainty,
                    taken.about,
                )
            )
            count -= 1

    for share in shares_for(config):
        count = counts[share.count_reason]
        if count > 0:
            take(share.pick(pool, count), count)
    left = budget - len(picks)  # every share that found too few candidates ends up here
    lowest = spread(groups, pool.open_groups(), left, lambda g: g.reward)
    take([Take(number, LOW_REWARD) for number in lowest], left)
    return picks


def _groups(
    candidates: Sequence[Candidate],
    finite: list[int],
    config: BudgetConfig,
    reviewed: Sequence[str],
) -> list[Group]:
    uncertainty = _uncertainties(candidates, finite, config)
    percentiles = _component_percentiles(candidates, finite, config)
    found = group_near_duplicates(
        [*reviewed, *(candidates[i].response for i in finite)], config.near_duplicate_threshold
    )
    groups = []
    for positions in found:
        if positions[0] < len(reviewed):
            continue  # a copy of something already on its way to review: covered
        members = tuple(finite[position - len(reviewed)] for position in positions)
        known = [uncertainty[i] for i in members if uncertainty.get(i) is not None]
        first = members[0]
        ranks = percentiles.get(first, {})
        groups.append(
            Group(
                representative=first,
                members=members,
                reward=math.fsum(candidates[i].reward for i in members) / len(members),
                uncertainty=math.fsum(known) / len(known) if known else None,  # type: ignore[arg-type]
                prompt=candidates[first].prompt,
                low_mode=min(ranks, key=lambda name: (ranks[name], name), default=""),
                high_mode=max(ranks, key=lambda name: (ranks[name], name), default=""),
            )
        )
    return groups


def _uncertainties(
    candidates: Sequence[Candidate], finite: list[int], config: BudgetConfig
) -> dict[int, float | None]:
    model = _detail(candidates, finite, config.model_component)
    previous = _detail(candidates, finite, previous_key(config))
    if any(value is not None for value in previous.values()):
        return _rank_distance(model, previous, finite)
    spread = _detail(candidates, finite, config.uncertainty_key)
    if any(value is not None for value in spread.values()):
        return spread
    # No spread anywhere: how far the reward model's rank is from the rules' rank.
    rules: dict[int, float | None] = {}
    for i in finite:
        values = [
            value
            for name, value in candidates[i].reward_details.items()
            if is_rule(name, config) and finite_or_none(value) is not None
        ]
        rules[i] = math.fsum(values) / len(values) if values else None
    return _rank_distance(model, rules, finite)


def _detail(
    candidates: Sequence[Candidate], finite: list[int], key: str
) -> dict[int, float | None]:
    """Each candidate's finite `key` in reward_details (None where it has none)."""
    return {i: finite_or_none(candidates[i].reward_details.get(key)) for i in finite}


def _rank_distance(
    one: Mapping[int, float | None], other: Mapping[int, float | None], finite: list[int]
) -> dict[int, float | None]:
    """|percentile(one) - percentile(other)| over the candidates that have both (None else)."""
    both = [i for i in finite if one[i] is not None and other[i] is not None]
    one_rank = _percentiles({i: one[i] for i in both})  # type: ignore[misc]
    other_rank = _percentiles({i: other[i] for i in both})  # type: ignore[misc]
    return {i: abs(one_rank[i] - other_rank[i]) if i in one_rank else None for i in finite}


def _component_percentiles(
    candidates: Sequence[Candidate], finite: list[int], config: BudgetConfig
) -> dict[int, dict[str, float]]:
    """Each candidate's percentile (0 worst, 1 best) on each top-level reward component."""
    names = sorted(
        {
            name
            for i in finite
            for name in candidates[i].reward_details
            if is_component(name, config)
        }
    )
    found: dict[int, dict[str, float]] = {i: {} for i in finite}
    for name in names:
        known = {i: v for i, v in _detail(candidates, finite, name).items() if v is not None}
        for i, percentile in _percentiles(known).items():
            found[i][name] = percentile
    return found


def _percentiles(values: Mapping[int, float]) -> dict[int, float]:
    """Rank / (n - 1), ties sharing their mean rank; a lone value is 0.5."""
    if len(values) == 1:
        return dict.fromkeys(values, 0.5)
    keys = list(values)
    ranks = average_ranks([values[i] for i in keys])
    return {i: rank / (len(keys) - 1) for i, rank in zip(keys, ranks, strict=True)}


def previous_key(config: BudgetConfig) -> str:
    """The reward_details key of the score by the model the reward model was retrained from."""
    return f"{config.model_component}/{PREVIOUS}"


def is_component(name: str, config: BudgetConfig) -> bool:
    # "name/key" entries are a component's extras (the spread among them), not components.
    return "/" not in name and name != config.uncertainty_key


def is_rule(name: str, config: BudgetConfig) -> bool:
    return is_component(name, config) and name != config.model_component


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5 + 1e-9)  # 0.1 * 25 = 2.5000000000000004 or 2.4999...: 3
