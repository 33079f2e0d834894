"""The issue's goals, each read from per-seed values with a 95% interval over seeds: "met" only
when the interval says so (a difference's interval above 0, a ratio's at or below its bound).

"Reviewer-minutes to reach X": X is the reference method's final reward-model accuracy; the
method's minutes are read at the first reward-model checkpoint (the start, then after every
batch of reviews: bench/loop_value/checkpoints.py) whose accuracy is at least X, over the
minutes the reference spent in all; a method that never gets there is infinite, and then the
goal is not met. A seed where the reference's reviews left its reward model no better than the
starting one has nothing to reach: it is listed as vacuous and left out of the interval.
Ratios are given under both cost models (bench/loop_value/costs.py) and a ratio goal is met
only under both.

The issue's budget is the adaptive one (`budget_adaptive`: shares learned round by round); the
fixed-share `budget` is measured against the same references as a baseline and reported only,
beside what learning the shares changed against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bench.loop_value.costs import MODELS
from bench.loop_value.intervals import interval
from bench.loop_value.report import Goal

BASELINE, RANDOM, LOOP, COMPARE = "no_loop", "random", "threshold", "compare"
FIXED, ADAPTIVE = "budget", "budget_adaptive"
WALL_GOAL_MIN = 45.0


@dataclass(frozen=True)
class Point:
    reviews: int
    minutes: dict[str, float]
    accuracy: float


def series(seed: Any, method: str) -> list[Point]:
    """A method's reward-model accuracy against the reviews spent, from the start on."""
    points = [Point(0, {m.name: 0.0 for m in MODELS}, seed.start_accuracy)]
    for row in sorted((r for r in seed.rows if r.method == method), key=lambda r: r.round):
        points += [Point(c.reviews_total, c.minutes, c.rm_accuracy) for c in row.checkpoints]
    return points


def _last(seed: Any, method: str) -> Any:
    return max((r for r in seed.rows if r.method == method), key=lambda r: r.round)


def reach_ratio(seed: Any, method: str, reference: str, cost: str) -> float | None:
    """`method`'s minutes to reach `reference`'s final accuracy over `reference`'s minutes in
    all; None when vacuous, inf when never reached."""
    end = _last(seed, reference)
    target, spent = end.rm_accuracy, end.minutes_total.get(cost, 0.0)
    if not math.isfinite(target) or seed.start_accuracy >= target:
        return None
    for point in series(seed, method):
        if math.isfinite(point.accuracy) and point.accuracy >= target:
            return point.minutes[cost] / spent if spent else math.inf
    return math.inf


def _ratio_goal(seeds: Sequence[Any], method: str, reference: str, what: str) -> Goal:
    parts, met = [], True
    for cost in MODELS:
        values = {s.seed: reach_ratio(s, method, reference, cost.name) for s in seeds}
        counted = [v for v in values.values() if v is not None]
        spread = interval(counted)
        per_seed = ", ".join(
            f"{seed}: {'vacuous' if v is None else 'never' if math.isinf(v) else f'{v:.2f}x'}"
            for seed, v in values.items()
        )
        parts.append(f"{cost.name}: {spread.text(2, 'x')}; per seed {per_seed}")
        met = met and bool(counted) and spread.below(0.5)
    minutes = {
        m: interval([_last(s, m).minutes_total.get(MODELS[0].name, math.nan) for s in seeds])
        for m in (method, reference)
    }
    spent = "; ".join(f"{m} spent {minutes[m].text(0, ' min')}" for m in (method, reference))
    return Goal(what, "<= 0.5x", f"{' | '.join(parts)} ({spent}, {MODELS[0].name})", met)


def _difference_goal(seeds: Sequence[Any], method: str, other: str, field: str, what: str) -> Goal:
    pairs = [(getattr(_last(s, method), field), getattr(_last(s, other), field)) for s in seeds]
    spread = interval([a - b for a, b in pairs])
    per_seed = ", ".join(
        f"{s.seed}: {a:.3f} vs {b:.3f}" for s, (a, b) in zip(seeds, pairs, strict=True)
    )
    means = f"{interval([a for a, _ in pairs]).text()} vs {interval([b for _, b in pairs]).text()}"
    return Goal(
        what, "higher (interval of the difference above 0)",
        f"difference {spread.text()}; {means}; per seed {per_seed}", spread.above(0.0),
    )  # fmt: skip


def _budget_goals(seeds: Sequence[Any], have: set[str]) -> list[Goal]:
    """The adaptive budget's goals, then the fixed-share budget's figures as a report."""
    found: list[Goal] = []
    reach = "reviewer-minutes to reach threshold's final RM accuracy"
    for method, name in ((ADAPTIVE, "budget (adaptive)"), (FIXED, "budget (fixed shares)")):
        goals = []
        if {method, LOOP} <= have:
            goals.append(_ratio_goal(seeds, method, LOOP, f"{name} vs threshold: {reach}"))
        if {method, RANDOM} <= have:
            goals.append(_difference_goal(seeds, method, RANDOM, "rm_accuracy",
                                          f"{name} vs random: final RM accuracy"))  # fmt: skip
        # The fixed shares are the baseline the adaptive ones are read against: no verdict.
        found += goals if method == ADAPTIVE else [replace(goal, met=None) for goal in goals]
    if {ADAPTIVE, FIXED} <= have:
        what = "budget (adaptive) vs budget (fixed shares): final RM accuracy"
        found.append(replace(_difference_goal(seeds, ADAPTIVE, FIXED, "rm_accuracy", what),
                             met=None))  # fmt: skip
    return found


def issue_goals(
    seeds: Sequence[Any],
    methods: Sequence[str],
    rounds: int,
    compare_selection: str,
    elapsed_s: float,
    cpu_s: float,
    suite_tasks: int,
) -> list[Goal]:
    found: list[Goal] = []
    have = set(methods)
    if {LOOP, BASELINE} <= have:
        found.append(_difference_goal(seeds, LOOP, BASELINE, "rm_accuracy",
                                      "threshold loop vs no loop: final RM accuracy"))  # fmt: skip
        found.append(_difference_goal(
            seeds, LOOP, BASELINE, "oracle_score",
            f"threshold loop vs no loop: the policy's oracle score after {rounds} rounds",
        ))  # fmt: skip
    found += _budget_goals(seeds, have)
    if {COMPARE, compare_selection} <= have:
        found.append(_ratio_goal(
            seeds, COMPARE, compare_selection,
            f"compare vs single mode, same selection ({compare_selection}): reviewer-minutes to "
            f"reach single's final RM accuracy",
        ))  # fmt: skip
    # One thread's time is the process's CPU time; on a shared machine the wall clock also
    # counts the time other jobs held the core, so both are given and CPU time decides.
    estimate = cpu_s * suite_tasks / 60
    found.append(Goal(
        f"full bench wall time, all {suite_tasks} tasks, {len(seeds)} seeds, one CPU thread",
        f"<= {WALL_GOAL_MIN:.0f} min",
        f"this task {cpu_s / 60:.1f} min of CPU ({elapsed_s / 60:.1f} min wall, "
        f"{cpu_s / max(1, len(seeds)):.0f} s of CPU a seed); all tasks at this rate "
        f"~{estimate:.0f} min",
        estimate <= WALL_GOAL_MIN,
    ))  # fmt: skip
    return found
