"""`--check-retrain`: do the head refits order the selections as `rm train` would?

On the first three seeds, at a third, two thirds and all of the budget, each selection's reviews
so far train a reward model the way a loop round does (annotation.reward_model.train from the
starting reward model, every weight, the loop's learning rate, 3 epochs, the bench's written
weight), and its accuracy on the
evaluation pairs is set beside the head ensemble's at the same point. The check is the ordering
of the selections by mean accuracy at each point: the share of selection pairs ordered alike
(Kendall's concordance), and the pairs ordered differently, named.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import torch

from annotation.reward_model.data import RMData
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from bench.loop_value.checkpoints import LOOP_RM_RATE
from bench.loop_value.intervals import interval
from bench.selection_value.model import correct_by_prompt
from bench.selection_value.pool import Pool
from bench.selection_value.run import KEPT_AT, Track
from rl.rewards.model import RewardModel

EPOCHS = 3


def check(
    pool: Pool,
    tracks: Mapping[int, Mapping[str, Track]],
    seeds: Sequence[int],
    names: Sequence[str],
    start_rm: Path,
    out: Path,
    written_weight: float,
) -> str:
    """One line: per budget point, the concordance of the two orderings and what differs."""
    evaluation = pool.evaluation
    pairs = float(evaluation.pairs)
    lines = []
    for fraction in KEPT_AT:
        heads: dict[str, list[float]] = {name: [] for name in names}
        full: dict[str, list[float]] = {name: [] for name in names}
        for seed in seeds:
            for name in names:
                track = tracks[seed][name]
                point, reviews = track.kept[fraction]
                heads[name].append(sum(point.correct) / pairs)
                full[name].append(_accuracy(pool, reviews, start_rm, out, seed, written_weight))
        mean_heads = {n: sum(v) / len(v) for n, v in heads.items()}
        mean_full = {n: sum(v) / len(v) for n, v in full.items()}
        alike, differ = 0, []
        for a, b in combinations(names, 2):
            if (mean_heads[a] - mean_heads[b]) * (mean_full[a] - mean_full[b]) > 0:
                alike += 1
            else:
                differ.append(f"{a}/{b}")
        total = len(names) * (len(names) - 1) // 2
        if "random" in full and fraction == KEPT_AT[-1]:  # rm train's own verdicts, per seed
            gaps = {n: [a - b for a, b in zip(full[n], full["random"], strict=True)] for n in names}
            versus = [f"{n} {interval(gaps[n]).text()}" for n in names if n != "random"]
            lines.append("rm train, minus random at the budget's end, 95% t-interval over seeds: "
                         + "; ".join(versus))  # fmt: skip
        best_heads = max(mean_heads, key=mean_heads.__getitem__)
        best_full = max(mean_full, key=mean_full.__getitem__)
        lines.append(
            f"at {fraction:.2f} of the budget: {alike}/{total} pairs ordered alike; best "
            f"{best_heads} (heads) vs {best_full} (rm train); accuracy, heads / rm train: "
            + ", ".join(f"{n} {mean_heads[n]:.3f} / {mean_full[n]:.3f}" for n in names)
            + (f"; differ: {', '.join(differ)}" if differ else "")
        )
    return " / ".join(lines)


def _accuracy(
    pool: Pool, reviews, start_rm: Path, out: Path, seed: int, written_weight: float
) -> float:
    pairs, ratings = reviews
    if not pairs and not ratings:
        model = start_rm
    else:
        model = out / "retrain-check"
        shutil.rmtree(model, ignore_errors=True)
        data = RMData(pairs=list(pairs), ratings=list(ratings), sources=["oracle reviews"])
        settings = RMTrainSettings(epochs=EPOCHS, learning_rate=LOOP_RM_RATE, holdout=0.0,
                                   seed=seed, uncertainty_heads=0,
                                   written_weight=written_weight)  # fmt: skip
        train_reward_model(data, start_rm, model, settings)
    scorer = RewardModel(model)
    try:
        texts = pool.evaluation.texts
        scores = torch.tensor(scorer.score_pairs([p for p, _ in texts], [r for _, r in texts]))
    finally:
        scorer.close()
    evaluation = pool.evaluation
    right = correct_by_prompt(scores, evaluation.first, evaluation.second, evaluation.prompt_of,
                              len(evaluation.prompts))  # fmt: skip
    return float(right.sum()) / evaluation.pairs
