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

import heapq
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from rl.rewards.model_spec import PREVIOUS
from sampling.config import BudgetConfig
from sampling.selection.near_duplicates import group_near_duplicates

# "fallback": a round's selection failed and its budget went to the lowest rewards instead.
Reason = Literal["random", "suspect", "audit_high_reward", "uncertain", "low_reward", "fallback"]


@dataclass(frozen=True)
class Candidate:
    """One scored sample that may be picked. `position` is the caller's own handle (an index in
    its pool, say); `choose` ignores it and refers to candidates by their index in its input."""

    prompt: str
    response: str
    reward: float
    reward_details: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    group_id: int = 0
    step: int = 0
    position: int = 0


@dataclass(frozen=True)
class Pick:
    """A picked candidate (`index` into the candidates given to `choose`) and why."""

    index: int
    reason: Reason
    members: tuple[int, ...]  # its near-duplicate group, itself first (indices into candidates)
    reward: float  # the group's mean reward
    uncertainty: float | None  # the group's, where known
    about: str | None = None  # a suspect pick: the suspect, as the reviewer reads it

    @property
    def group_size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class Flag:
    """A suspect feature (`about`: how a reviewer reads it) and the candidates carrying it
    (indices into the candidates given to `choose`), strongest suspect first."""

    about: str
    carriers: frozenset[int]


@dataclass(frozen=True)
class _Group:
    representative: int
    members: tuple[int, ...]
    reward: float
    uncertainty: float | None
    prompt: str
    low_mode: str  # the component it is worst at: its failure mode
    high_mode: str  # the component it is best at: what a high reward came from


def share_counts(budget: int, config: BudgetConfig) -> dict[Reason, int]:
    """How many of `budget` reviews each reason gets: each share rounded half up, the rest to
    the lowest rewards (never below 0: uncertainty gives way first, then audit)."""
    counts: dict[Reason, int] = {
        "random": _round_half_up(config.random_share * budget),
        "audit_high_reward": _round_half_up(config.audit_share * budget),
        "uncertain": _round_half_up(config.uncertainty_share * budget),
    }
    for reason in ("uncertain", "audit_high_reward", "random"):
        over = sum(counts.values()) - budget
        if over > 0:
            counts[reason] -= min(over, counts[reason])
    counts["low_reward"] = budget - sum(counts.values())
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
    taken: set[int] = set()  # group numbers
    picks: list[Pick] = []

    def take(group_numbers: list[int], reason: Reason, about: str | None = None) -> None:
        for number in group_numbers:
            taken.add(number)
            group = groups[number]
            picks.append(
                Pick(
                    group.representative,
                    reason,
                    group.members,
                    group.reward,
                    group.uncertainty,
                    about,
                )
            )

    group_of = {member: number for number, g in enumerate(groups) for member in g.members}
    take(_random_groups(finite, group_of, counts["random"], seed), "random")
    audit = counts["audit_high_reward"]
    for flag in flags:
        if audit <= 0:
            break
        carrying = {group_of[i] for i in flag.carriers if i in group_of} - taken
        if carrying:  # the highest-reward carrier: what the reward model pays most for
            take([max(carrying, key=lambda n: (groups[n].reward, -n))], "suspect", flag.about)
            audit -= 1
    open_groups = [number for number in range(len(groups)) if number not in taken]
    take(_spread(groups, open_groups, audit, lambda g: -g.reward, "high_mode"), "audit_high_reward")
    uncertain = [
        n for n in range(len(groups)) if n not in taken and (groups[n].uncertainty or 0) > 0
    ]
    take(
        _spread(groups, uncertain, counts["uncertain"], lambda g: -(g.uncertainty or 0.0)),
        "uncertain",
    )
    left = budget - len(picks)  # every share that found too few candidates ends up here
    open_groups = [number for number in range(len(groups)) if number not in taken]
    take(_spread(groups, open_groups, left, lambda g: g.reward), "low_reward")
    return picks


def _groups(
    candidates: Sequence[Candidate],
    finite: list[int],
    config: BudgetConfig,
    reviewed: Sequence[str],
) -> list[_Group]:
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
            _Group(
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


def _random_groups(finite: list[int], group_of: dict[int, int], count: int, seed: int) -> list[int]:
    """Groups of uniformly drawn candidates (a group of 10 is 10 times as likely as one of 1)."""
    order = [index for index in finite if index in group_of]  # not the covered ones
    random.Random(f"lowtide-budget:{seed}").shuffle(order)
    chosen: list[int] = []
    for index in order:
        if len(chosen) == count:
            break
        if group_of[index] not in chosen:
            chosen.append(group_of[index])
    return chosen


def _spread(
    groups: list[_Group],
    open_groups: list[int],
    count: int,
    rank: Callable[[_Group], float],
    mode: Literal["low_mode", "high_mode"] = "low_mode",
) -> list[int]:
    """`count` groups, best `rank` first, each time among those whose prompt and failure mode
    have been picked least (a lazy heap: a group's times-picked only ever grow)."""
    prompt_uses: Counter[str] = Counter()
    mode_uses: Counter[str] = Counter()

    def used(number: int) -> int:
        group = groups[number]
        return prompt_uses[group.prompt] + mode_uses[getattr(group, mode)]

    heap = [(0, rank(groups[n]), n) for n in open_groups]
    heapq.heapify(heap)
    chosen: list[int] = []
    while heap and len(chosen) < count:
        uses, value, number = heapq.heappop(heap)
        now = used(number)
        if now > uses:
            heapq.heappush(heap, (now, value, number))
            continue
        chosen.append(number)
        prompt_uses[groups[number].prompt] += 1
        mode_uses[getattr(groups[number], mode)] += 1
    return chosen


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
            if is_rule(name, config) and finite_value(value) is not None
        ]
        rules[i] = math.fsum(values) / len(values) if values else None
    return _rank_distance(model, rules, finite)


def _detail(
    candidates: Sequence[Candidate], finite: list[int], key: str
) -> dict[int, float | None]:
    """Each candidate's finite `key` in reward_details (None where it has none)."""
    return {i: finite_value(candidates[i].reward_details.get(key)) for i in finite}


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
    ordered = sorted(values, key=lambda i: values[i])
    if len(ordered) == 1:
        return {ordered[0]: 0.5}
    found: dict[int, float] = {}
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and values[ordered[end + 1]] == values[ordered[start]]:
            end += 1
        for i in ordered[start : end + 1]:
            found[i] = (start + end) / 2 / (len(ordered) - 1)
        start = end + 1
    return found


def previous_key(config: BudgetConfig) -> str:
    """The reward_details key of the score by the model the reward model was retrained from."""
    return f"{config.model_component}/{PREVIOUS}"


def is_component(name: str, config: BudgetConfig) -> bool:
    # "name/key" entries are a component's extras (the spread among them), not components.
    return "/" not in name and name != config.uncertainty_key


def is_rule(name: str, config: BudgetConfig) -> bool:
    return is_component(name, config) and name != config.model_component


def finite_value(value: float | None) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5 + 1e-9)  # 0.1 * 25 = 2.5000000000000004 or 2.4999...: 3
