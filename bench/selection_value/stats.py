"""Curves of accuracy against reviewer-minutes, and their intervals, bootstrapped over seeds and
over held-out prompts together.

A selection's seed is a step curve: after each batch, the minutes spent so far and, per held-out
prompt, how many of its evaluation pairs the reward model orders as the oracle does. Curves are
read on a grid of minutes (a point holds until the next batch). A replicate of the bootstrap
draws seeds with replacement and reweighs the prompts by a draw with replacement; a statistic is
computed on the mean curve of the replicate, and its 95% interval is the 2.5th to 97.5th
percentile over replicates. The point value is the statistic on the data as measured.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bench.selection_value.run import Track

GRID_POINTS = 61


@dataclass(frozen=True)
class Curves:
    names: list[str]
    seeds: list[int]
    grid: np.ndarray  # (G,) minutes
    correct: np.ndarray  # (S, M, G, P)
    totals: np.ndarray  # (P,) evaluation pairs per prompt

    def accuracy(self, seeds: np.ndarray | None = None, weights: np.ndarray | None = None):
        """(M, G): the mean over `seeds` (indices; all) of each curve, prompts weighted."""
        weights = np.ones(len(self.totals)) if weights is None else weights
        correct = self.correct if seeds is None else self.correct[seeds]
        return (correct @ weights / (self.totals @ weights)).mean(axis=0)

    def index(self, name: str) -> int:
        return self.names.index(name)


def curves(
    tracks: Mapping[int, Mapping[str, Track]],
    names: Sequence[str],
    totals: Sequence[float],
    budget: float,
    cost_model: str,
) -> Curves:
    seeds = sorted(tracks)
    grid = np.linspace(0.0, budget, GRID_POINTS)
    correct = np.zeros((len(seeds), len(names), len(grid), len(totals)))
    for s, seed in enumerate(seeds):
        for m, name in enumerate(names):
            points = tracks[seed][name].points
            spent = np.array([point.minutes[cost_model] for point in points])
            # The last point at or before each grid minute (points are in spending order).
            at = np.searchsorted(spent, grid, side="right") - 1
            values = np.array([point.correct for point in points])
            correct[s, m] = values[np.clip(at, 0, None)]
    return Curves(list(names), seeds, grid, correct, np.asarray(totals, dtype=float))


def reach(accuracy: np.ndarray, grid: np.ndarray, target: float, budget: float) -> float:
    """The first minutes at which a curve is at `target` or above, over `budget`; inf: never."""
    above = np.nonzero(accuracy >= target - 1e-12)[0]
    return float(grid[above[0]] / budget) if len(above) else math.inf


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    per_seed: list[float]

    @property
    def half_width(self) -> float:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return math.inf
        return (self.high - self.low) / 2

    def text(self, digits: int = 3, unit: str = "") -> str:
        def number(value: float) -> str:
            return "never" if math.isinf(value) else f"{value:.{digits}f}{unit}"

        seeds = ", ".join(number(v) for v in self.per_seed)
        return f"{number(self.value)} [{number(self.low)}, {number(self.high)}] ({seeds})"


Statistic = Callable[[np.ndarray], float]  # (M, G) mean accuracy curves -> a number


def replicates(data: Curves, count: int = 2000, seed: int = 0) -> np.ndarray:
    """(B, M, G): the mean curves of `count` bootstrap replicates (seeds and prompts drawn with
    replacement; a draw of prompts without a single pair is drawn again)."""
    rng = np.random.default_rng(seed)
    found = []
    seeds, prompts = len(data.seeds), len(data.totals)
    while len(found) < count:
        chosen = rng.integers(0, seeds, seeds)
        weights = np.bincount(rng.integers(0, prompts, prompts), minlength=prompts).astype(float)
        if data.totals @ weights > 0:
            found.append(data.accuracy(chosen, weights))
    return np.stack(found)


def bootstrap(data: Curves, statistic: Statistic, drawn: np.ndarray) -> Estimate:
    """The statistic on the mean curves, its 95% interval over the replicates `drawn`, and its
    value on each seed alone."""
    values = np.array([statistic(curve) for curve in drawn])
    # No interpolation: a replicate that never gets there (inf) stays inf, not nan.
    low, high = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    per_seed = [statistic(data.accuracy(np.array([s]))) for s in range(len(data.seeds))]
    return Estimate(statistic(data.accuracy()), float(low), float(high), per_seed)


def below_anywhere(data: Curves, name: str, reference: str, drawn: np.ndarray) -> float:
    """The largest amount by which `name`'s curve is below `reference`'s at a grid point where
    the interval of the difference lies wholly below 0 (0: nowhere shown below)."""
    m, r = data.index(name), data.index(reference)
    gaps = drawn[:, m, :] - drawn[:, r, :]  # (B, G)
    high = np.quantile(gaps, 0.975, axis=0, method="inverted_cdf")
    point = data.accuracy()[m] - data.accuracy()[r]
    shown = point[high < 0]
    return float(-shown.min()) if len(shown) else 0.0


def minutes_to_reach(data: Curves, name: str, reference: str, budget: float) -> Statistic:
    """`name`'s minutes to reach `reference`'s final accuracy, over the budget."""
    m, r = data.index(name), data.index(reference)
    return lambda acc: reach(acc[m], data.grid, acc[r, -1], budget)


def final_difference(data: Curves, name: str, reference: str) -> Statistic:
    m, r = data.index(name), data.index(reference)
    return lambda acc: float(acc[m, -1] - acc[r, -1])
