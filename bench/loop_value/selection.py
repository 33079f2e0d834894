"""Which of a round's candidates reach the reviewer, under the same budget for every method.
Each method is the real selection code: `sampling.selection.policies.threshold` (capped to the
budget by a uniform subsample, as the router caps a step), `sampling.selection.budget.choose`, or
uniform random."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from bench.loop_value.training import Rollout
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, choose
from sampling.selection.policies import threshold

METHODS = ("no_loop", "random", "threshold", "budget")

Select = Callable[[Sequence[Rollout], int, float, int], list[int]]


def select(method: str, candidates: Sequence[Rollout], budget: int, bar: float, seed: int):
    """Indices into `candidates` a reviewer sees (at most `budget`)."""
    return _METHODS[method](candidates, budget, bar, seed)


def _none(candidates: Sequence[Rollout], budget: int, bar: float, seed: int) -> list[int]:
    return []


def _random(candidates: Sequence[Rollout], budget: int, bar: float, seed: int) -> list[int]:
    count = min(budget, len(candidates))
    return sorted(random.Random(seed).sample(range(len(candidates)), count))


def _threshold(candidates: Sequence[Rollout], budget: int, bar: float, seed: int) -> list[int]:
    below = threshold([c.reward for c in candidates], bar).indices
    if len(below) <= budget:
        return below
    return sorted(random.Random(seed).sample(below, budget))


def _budget(candidates: Sequence[Rollout], budget: int, bar: float, seed: int) -> list[int]:
    pool = [
        Candidate(c.prompt, c.response, c.reward, dict(c.reward_details), c.group_id, c.step, i)
        for i, c in enumerate(candidates)
    ]
    return sorted(pick.index for pick in choose(pool, budget, BudgetConfig(), seed))


_METHODS: dict[str, Select] = {
    "no_loop": _none,
    "random": _random,
    "threshold": _threshold,
    "budget": _budget,
}
