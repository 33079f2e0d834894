"""Which of a round's candidates reach the reviewer, under the same budget for every method.
Each method is the real selection code: `sampling.selection.policies.threshold` (capped to the
budget by a uniform subsample, as the router caps a step), `sampling.selection.budget.choose`
(`budget`: fixed shares, with the reward-hacking watch's suspects, as the router runs it by
default; `budget_no_watch`: without; `budget_adaptive`: with the watch, its shares learned
round by round from the reviews so far: bench/loop_value/adapting.py), or uniform random.
`compare` reviews groups, not samples: the groups of the picks of one of the single methods
(the bench's `--compare-selection`), so that it and that method differ in the review mode
only."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from bench.loop_value.training import Rollout
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, Flag, choose
from sampling.selection.policies import threshold

SINGLE = ("no_loop", "random", "threshold", "budget", "budget_no_watch", "budget_adaptive")
COMPARE = "compare"  # comparison review of the groups a single method's selection picks
METHODS = (*SINGLE, COMPARE)
WATCHED = ("budget", "budget_adaptive")  # the selections that read the watch's suspects
# The budget policies: from round 2 their reward model also scores with the starting one, whose
# disagreement the uncertain share reads (what `lowtide loop` does: --rm-disagreement).
BUDGETED = ("budget", "budget_no_watch", "budget_adaptive")
ADAPTIVE = ("budget_adaptive",)  # the selections whose shares learn from the reviews so far

# Each pick (an index into the candidates) and why: the budget's reason, or the method's name.
Select = Callable[
    [Sequence[Rollout], int, float, int, Sequence[Flag], BudgetConfig | None], dict[int, str]
]


def picked(
    method: str,
    candidates: Sequence[Rollout],
    budget: int,
    bar: float,
    seed: int,
    flags: Sequence[Flag] = (),
    config: BudgetConfig | None = None,
) -> dict[int, str]:
    """Indices into `candidates` a reviewer sees (at most `budget`), each with why it was
    picked, by a single method's selection. `config`: a budget method's shares (None: the
    configured defaults, which is also where an adaptive budget starts)."""
    return _METHODS[method](candidates, budget, bar, seed, flags, config)


def _none(candidates, budget: int, bar: float, seed: int, flags, config) -> dict[int, str]:
    return {}


def _random(candidates, budget: int, bar: float, seed: int, flags, config) -> dict[int, str]:
    count = min(budget, len(candidates))
    return dict.fromkeys(random.Random(seed).sample(range(len(candidates)), count), "random")


def _threshold(candidates, budget: int, bar: float, seed: int, flags, config) -> dict[int, str]:
    below = threshold([c.reward for c in candidates], bar).indices
    if len(below) > budget:
        below = random.Random(seed).sample(below, budget)
    return dict.fromkeys(below, "threshold")


def _budget(candidates, budget: int, bar: float, seed: int, flags, config) -> dict[int, str]:
    pool = [
        Candidate(c.prompt, c.response, c.reward, dict(c.reward_details), c.group_id, c.step, i)
        for i, c in enumerate(candidates)
    ]
    picks = choose(pool, budget, config or BudgetConfig(), seed, flags=flags)
    return {pick.index: pick.reason for pick in picks}


_METHODS: dict[str, Select] = {
    "no_loop": _none,
    "random": _random,
    "threshold": _threshold,
    "budget": _budget,
    "budget_no_watch": _budget,  # given no flags
    "budget_adaptive": _budget,  # given the round's learned shares
}
