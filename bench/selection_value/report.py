"""The pool bench's goals table: each goal with its value, its 95% interval (bootstrapped over
seeds and held-out prompts), the interval's half-width, the per-seed values and whether it is
met. "Met" only when the interval says so."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from bench.loop_value.task import TaskConfig
from bench.selection_value.pool import Pool
from bench.selection_value.run import Track
from bench.selection_value.selections import COMPARE_PREFIX
from bench.selection_value.stats import (
    Curves,
    Estimate,
    below_anywhere,
    bootstrap,
    curves,
    final_difference,
    minutes_to_reach,
    replicates,
)

RANDOM, THRESHOLD = "random", "threshold"
HALF = 0.5  # "at most half the reviewer-minutes"
HACK_RATIO = 5.0  # "at least 5x threshold's"
CPU_GOAL_S = 15 * 60  # a task, 20 seeds, one thread


def report(
    tracks: Mapping[int, Mapping[str, Track]],
    names: Sequence[str],
    pool: Pool,
    task: TaskConfig,
    cost_models: Sequence[str],
    count: int,
    cpu_s: float,
    checked: str | None,
) -> tuple[str, dict]:
    budget = task.pool.review_minutes
    totals = np.bincount(pool.evaluation.prompt_of.numpy(), minlength=len(pool.evaluation.prompts))
    rows: list[tuple[str, str, str]] = []
    numbers: dict[str, dict] = {}

    def add(what: str, estimate: Estimate | str, verdict: str, key: str | None = None) -> None:
        shown = estimate if isinstance(estimate, str) else (
            f"{estimate.text()}, half-width {estimate.half_width:.3f}")  # fmt: skip
        rows.append((what, shown, verdict))
        if key and not isinstance(estimate, str):
            numbers[key] = {"value": estimate.value, "low": estimate.low, "high": estimate.high,
                            "per_seed": estimate.per_seed}  # fmt: skip

    by_model: dict[str, tuple[Curves, np.ndarray]] = {}
    for model in cost_models:
        data = curves(tracks, names, totals, _spent_most(tracks, model, budget), model)
        by_model[model] = (data, replicates(data, count))
    data, drawn = by_model[cost_models[0]]
    singles = [n for n in names if n != RANDOM]  # comparison review against random too
    if RANDOM in names:
        final = data.accuracy()[:, -1]
        add("random: final RM accuracy (report)", bootstrap(data, lambda a: float(
            a[data.index(RANDOM), -1]), drawn), "-", "random/final")  # fmt: skip
        for name in singles:
            for model in cost_models:
                curve, draws = by_model[model]
                spent = _spent(tracks, RANDOM, model)
                ratio = bootstrap(curve, minutes_to_reach(curve, name, RANDOM, spent),
                                  draws)  # fmt: skip
                met = "met" if ratio.high <= HALF else "not met"
                add(f"{name}: minutes to reach random's final accuracy, {model} (<= {HALF}x)",
                    ratio, met, f"{name}/reach_random/{model}")  # fmt: skip
            difference = bootstrap(data, final_difference(data, name, RANDOM), drawn)
            below = below_anywhere(data, name, RANDOM, drawn)
            add(f"{name} - random: final RM accuracy ({final[data.index(name)]:.3f} vs "
                f"{final[data.index(RANDOM)]:.3f})", difference,
                "above" if difference.low > 0 else "no difference shown" if difference.high >= 0
                else "below", f"{name}/minus_random")  # fmt: skip
            add(f"{name} vs random at every point of the curve (never below by more than the "
                f"interval)", f"shown below by at most {below:.3f}",
                "met" if below == 0 else "not met")  # fmt: skip
    for name in names:
        if name.startswith(COMPARE_PREFIX):
            single = name.removeprefix(COMPARE_PREFIX)
            if single in names:
                spent = _spent(tracks, single, cost_models[0])
                ratio = bootstrap(data, minutes_to_reach(data, name, single, spent), drawn)
                add(f"{name} vs {single}: minutes to reach {single}'s final accuracy "
                    f"(<= {HALF}x)", ratio, "met" if ratio.high <= HALF else "not met",
                    f"{name}/reach_single")  # fmt: skip
    rows += _hacking(tracks, names, numbers)
    rows += _detector(tracks, names)
    seeds = len(tracks)
    per_task = cpu_s * 20 / seeds if seeds else math.nan
    verdict = "met" if per_task <= CPU_GOAL_S else "not met"
    what = f"bench CPU time per task, scaled to 20 seeds ({seeds} run, one thread)"
    rows.append((what, f"{per_task / 60:.1f} min", verdict))
    if checked:
        rows.append(("ordering of the selections, head refits vs rm train", checked, "-"))
    return _table(rows, data, names), numbers


def _spent(tracks: Mapping[int, Mapping[str, Track]], name: str, model: str) -> float:
    """What `name` spent by a cost model, the mean over seeds: what "minutes to reach its final
    accuracy" is a share of (the budget for the default model, less where a selection stops
    short; by another model each selection's minutes differ)."""
    return float(np.mean([by[name].points[-1].minutes[model] for by in tracks.values()]))


def _spent_most(tracks: Mapping[int, Mapping[str, Track]], model: str, budget: float) -> float:
    """The grid's end for a cost model: the budget for the default one; the most any selection
    spent by another (whose minutes differ per selection)."""
    spent = [t.points[-1].minutes[model] for by in tracks.values() for t in by.values()]
    first = next(iter(next(iter(tracks.values())).values())).points[0].minutes
    return budget if model == next(iter(first)) else max(spent, default=budget)


def _hacking(tracks, names, numbers) -> list[tuple[str, str, str]]:
    """The starting RM's top-decile failures a reviewer read, per 100 reviewer-minutes."""
    rate = {
        name: [100 * by[name].hacks_shown / max(by[name].points[-1].minutes[_first(by)], 1e-9)
               for by in tracks.values()]
        for name in names
    }  # fmt: skip
    rows = []
    for name in names:
        mean = float(np.mean(rate[name]))
        line = f"{mean:.2f} per 100 min (seeds: {', '.join(f'{v:.1f}' for v in rate[name])})"
        verdict = "-"
        if THRESHOLD in names and name not in (THRESHOLD, RANDOM):
            over_threshold = mean / max(1.0, float(np.mean(rate[THRESHOLD])))
            over_random = (
                mean / max(1.0, float(np.mean(rate[RANDOM]))) if RANDOM in names else math.nan
            )
            line += f"; {over_threshold:.1f}x threshold's, {over_random:.1f}x random's"
            met = over_threshold >= HACK_RATIO and (
                RANDOM not in names or mean > np.mean(rate[RANDOM])
            )
            verdict = "met" if met else "not met"
            numbers[f"{name}/hacks_vs_threshold"] = {"value": over_threshold}
        rows.append((f"{name}: starting RM's top-scored failures reaching a reviewer "
                     f"(>= {HACK_RATIO:g}x threshold, above random)", line, verdict))  # fmt: skip
    return rows


def _detector(tracks, names) -> list[tuple[str, str, str]]:
    rows = []
    for name in names:
        found = [row for by in tracks.values() for row in by[name].detector]
        if not found:
            continue
        probe, suspects, offered = (np.nanmean([row[k] for row in found]) for k in range(3))
        rows.append((f"{name}: failure share of the learned detector's top picks, round 2 on "
                     f"(report)", f"{probe:.3f}, vs the watch's suspects' carriers "
                     f"{suspects:.3f} and the offer (random) {offered:.3f}", "-"))  # fmt: skip
    return rows


def _first(by: Mapping[str, Track]) -> str:
    return next(iter(next(iter(by.values())).points[0].minutes))


def _table(rows: list[tuple[str, str, str]], data: Curves, names: Sequence[str]) -> str:
    accuracy = data.accuracy()
    marks = [0, len(data.grid) // 4, len(data.grid) // 2, 3 * len(data.grid) // 4, -1]
    header = " | ".join(f"{data.grid[m]:.0f} min" for m in marks)
    lines = [f"\nMean RM accuracy on the evaluation pairs by reviewer-minutes (default cost "
             f"model), {len(data.seeds)} seeds:\n", f"| selection | {header} |",
             "|---|" + "---|" * len(marks)]  # fmt: skip
    for m, name in enumerate(names):
        lines.append(f"| {name} | " + " | ".join(f"{accuracy[m, k]:.3f}" for k in marks) + " |")
    lines += [
        "\nGoals (95% intervals bootstrapped over seeds and held-out prompts; per-seed values "
        "in brackets after):\n",
        "| what | value | goal |",
        "|---|---|---|",
    ]
    lines += [f"| {what} | {value} | {verdict} |" for what, value, verdict in rows]
    return "\n".join(lines)
