"""Which of a round's candidates reach the reviewer, under the same budget for every method.
Each method is the real selection code: `sampling.selection.policies.threshold` (capped to the
budget by a uniform subsample, as the router caps a step), `sampling.selection.budget.choose`
(`budget`: with the reward-hacking watch's suspects, as the router runs it by default;
`budget_no_watch`: without), or uniform random. `compare` reviews groups, not samples: the groups
of the picks of one of the single methods (the bench's `--compare-selection`), so that it and
that method differ in the review mode only."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from bench.loop_value.training import Rollout
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, Flag, choose
from sampling.selection.policies import threshold

SINGLE = ("no_loop", "random", "threshold", "budget", "budget_no_watch")
COMPARE = "compare"  # comparison review of the groups a single method's selection picks
METHODS = (*SINGLE, COMPARE)
WATCHED = ("budget",)  # the selections that read the watch's suspects

Select = Callable[[Sequence[Rollout], int, float, int, Sequence[Flag]], list[int]]


def select(
    method: str,
    candidates: Sequence[Rollout],
    budget: int,
    bar: float,
    seed: int,
    flags: Sequence[Flag] = (),
) -> list[int]:
    """Indices into `candidates` a reviewer sees (at most `budget`), by a single method's
    selection."""
    return _METHODS[method](candidates, budget, bar, seed, flags)


def _none(candidates, budget: int, bar: float, seed: int, flags) -> list[int]:
    return []


def _random(candidates, budget: int, bar: float, seed: int, flags) -> list[int]:
    count = min(budget, len(candidates))
    return sorted(random.Random(seed).sample(range(len(candidates)), count))


def _threshold(candidates, budget: int, bar: float, seed: int, flags) -> list[int]:
    below = threshold([c.reward for c in candidates], bar).indices
    if len(below) <= budget:
        return below
    return sorted(random.Random(seed).sample(below, budget))


def _budget(candidates, budget: int, bar: float, seed: int, flags) -> list[int]:
    pool = [
        Candidate(c.prompt, c.response, c.reward, dict(c.reward_details), c.group_id, c.step, i)
        for i, c in enumerate(candidates)
    ]
    picks = choose(pool, budget, BudgetConfig(), seed, flags=flags)
    return sorted(pick.index for pick in picks)


_METHODS: dict[str, Select] = {
    "no_loop": _none,
    "random": _random,
    "threshold": _threshold,
    "budget": _budget,
    "budget_no_watch": _budget,  # given no flags
}
