"""Retraining the reward model as reviews come in: after every `every` reviews of a round (and
at its end) a reward model is trained on all reviews so far, so that "reviews, or reviewer-
minutes, needed to reach an accuracy" is read at that grain instead of at round ends only. The
bench does this for the methods whose minutes-to-reach a goal reads (budget, compare); the
others are read at round ends (a reference's final accuracy is its round end's).

Cost, measured on cool_and_short (seed 0, one thread): every 6 of 24 reviews for every method
made reward-model training 218 s of a 447 s seed, against ~120 s of policy training; hence
checkpoints for two methods only, and the heads fitted for round ends only.

Each checkpoint is trained from the reward model the round started with (warm start), on every
review so far, exactly as the round's end model is; the round's last checkpoint is that model,
the one the policy trains against next. So the checkpoints in between are readings only: they
change nothing the loop does. Their directories are measured at the seed's end (on the pool of
held-out samples, which later rounds add to) and then removed (`prune`).
"""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from annotation.reward_model.data import Pair, Rated, RMData
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from bench.loop_value.costs import MODELS, Work
from bench.loop_value.reviewing import Reviewed
from lowtide.loop.settings import LoopSettings

LOOP_RM_RATE = LoopSettings().rm_learning_rate  # a round retrains as the loop's rounds do


@dataclass
class Checkpoint:
    reviews_total: int  # tasks reviewed so far by the method, all rounds
    minutes: dict[str, float]  # reviewer-minutes so far, by cost model
    rm: str  # the reward model's directory, relative to the seed's
    rm_accuracy: float = math.nan


@dataclass
class Reviews:
    """A method's reviews so far and what they cost."""

    pairs: list[Pair] = field(default_factory=list)
    ratings: list[Rated] = field(default_factory=list)
    works: list[Work] = field(default_factory=list)

    def add(self, task: Reviewed) -> None:
        self.pairs += task.pairs
        self.ratings += task.ratings
        self.works.append(task.work)

    def minutes(self) -> dict[str, float]:
        return {model.name: model.minutes(self.works) for model in MODELS}


def batch_ends(count: int, every: int) -> list[int]:
    """Where a round's `count` reviews are cut: after every `every` and at the end (0: the end
    only)."""
    if count == 0:
        return []
    if every <= 0:
        return [count]
    return sorted({*range(every, count, every), count})


@dataclass(frozen=True)
class Retrained:
    reward_model: Path  # the round's end model
    checkpoints: list[Checkpoint]
    seconds: float  # reward-model training, all checkpoints


def retrain(
    tasks: list[Reviewed],
    reviews: Reviews,
    *,
    start: Path,
    seed_dir: Path,
    name: str,
    every: int,
    epochs: int,
    seed: int,
    source: str,
    train: str = "model",
    written_weight: float = RMTrainSettings().written_weight,
) -> Retrained:
    """Add `tasks` to `reviews` batch by batch, training a checkpoint after each batch."""
    started = time.perf_counter()
    checkpoints, done, current = [], 0, start
    ends = batch_ends(len(tasks), every)
    for number, end in enumerate(ends):
        for task in tasks[done:end]:
            reviews.add(task)
        done = end
        last = end == len(tasks)
        target = seed_dir / (name if last else f"{name}-{number}")
        if reviews.pairs or reviews.ratings:  # a batch of ties in compare mode may teach nothing
            data = RMData(pairs=list(reviews.pairs), ratings=list(reviews.ratings),
                          sources=[f"oracle reviews, {source}"])  # fmt: skip
            # A reading only needs the score: the uncertainty heads (which selection reads) are
            # fitted for the round's model alone. The model itself is trained alike either way.
            heads = RMTrainSettings().uncertainty_heads if last else 0
            train_reward_model(
                data, start, target,
                RMTrainSettings(epochs=epochs, learning_rate=LOOP_RM_RATE, holdout=0.0, seed=seed,
                                uncertainty_heads=heads, train=train,
                                written_weight=written_weight),
            )  # fmt: skip
            current = target
        checkpoints.append(
            Checkpoint(len(reviews.works), reviews.minutes(), _relative(current, seed_dir))
        )
    return Retrained(current, checkpoints, time.perf_counter() - started)


def _relative(path: Path, seed_dir: Path) -> str:
    try:
        return str(path.relative_to(seed_dir))
    except ValueError:  # the starting reward model, outside the seed's directory
        return str(path)


def prune(seed_dir: Path) -> None:
    """Remove the checkpoints in between once measured (4 MB each); round ends are kept."""
    for path in seed_dir.glob("*/rm*-*"):
        if path.is_dir():
            shutil.rmtree(path)
