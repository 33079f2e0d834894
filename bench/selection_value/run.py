"""One seed of the pool bench: every selection spends the task's reviewer-minutes in rounds.

Each round the seed's offer (the same pool rollouts for every selection, less what that
selection already had reviewed) is scored by the selection's current reward model, the selection
picks at most a batch, the oracle reviews the picks (bench.loop_value.reviewing: a rating, its
categories and a better answer for a failure; or, for `compare:`, the best and the worst of
each pick's GRPO group), the reviews are charged by the default cost model, and the reward model
is refit on every review so far (bench/selection_value/model.py) and measured on the evaluation
set. A review that would take the selection past its minutes is not done: every selection ends
at or under the same budget.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from annotation.reward_model.probe import fit_failure_probe
from bench.loop_value.checkpoints import Reviews
from bench.loop_value.costs import DEFAULT
from bench.loop_value.reviewing import compare_tasks, groups_of, single_tasks
from bench.loop_value.task import TaskConfig
from bench.loop_value.training import Rollout
from bench.loop_value.watching import flags_for
from bench.selection_value.model import (
    Ensemble,
    EnsembleSettings,
    Features,
    correct_by_prompt,
    refit,
    starting,
)
from bench.selection_value.pool import Pool
from bench.selection_value.selections import (
    COMPARE_PREFIX,
    FAILURE_KEY,
    NOVELTY_KEY,
    PREVIOUS_KEY,
    SPREAD_KEY,
    Offer,
    details,
    selection,
)
from rl.rewards.novelty import ReviewedFeatures

KEPT_AT = (1 / 3, 2 / 3, 1.0)  # the budget points --check-retrain reads
HACK_TOP_SHARE = 0.1  # "top-scored": the starting reward model's top decile of the pool


@dataclass
class Point:
    reviews: int
    minutes: dict[str, float]  # by cost model
    correct: list[float]  # per held-out prompt: pairs ordered as the oracle orders them


@dataclass
class Track:
    """A selection's seed: its curve and what reached the reviewer."""

    selection: str
    seed: int
    points: list[Point] = field(default_factory=list)
    shown: int = 0  # responses a reviewer read
    failures_shown: int = 0  # of them, the oracle's failures
    hacks_shown: int = 0  # the starting RM's top-decile failures a reviewer read
    # Round 2 on, the learned failure detector's top `batch` among the offer: the oracle's
    # failure share, beside that of the watch's suspects' carriers and of the whole offer.
    detector: list[tuple[float, float, float]] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class SeedPlan:
    offers: list[list[int]]  # pool indices offered each round
    hacks: frozenset[int]  # the starting reward model's top-decile failures
    budget_minutes: float
    batch: int
    compare_size: int
    ensemble: EnsembleSettings
    centre: torch.Tensor  # the pool's mean feature


def hacks_of(pool: Pool) -> frozenset[int]:
    rewards = [r.reward for r in pool.rollouts]
    count = max(1, math.ceil(HACK_TOP_SHARE * len(rewards)))
    top = sorted(range(len(rewards)), key=lambda i: -rewards[i])[:count]
    return frozenset(i for i in top if pool.verdicts[i].failure)


def run_selection(
    name: str, pool: Pool, task: TaskConfig, plan: SeedPlan, seed: int, features: Features
) -> Track:
    chosen = selection(name)
    compare = name.startswith(COMPARE_PREFIX)
    track = Track(name, seed)
    reviews = Reviews()
    done: set[int] = set()  # pool indices reviewed
    responses: list[str] = []
    labelled: list[int] = []  # pool indices whose categories a reviewer gave
    categories: list[tuple[str, ...]] = []
    model = starting(pool.start_head)
    track.points.append(Point(0, reviews.minutes(), _correct(model, pool)))
    track.kept = {}  # budget fraction -> the last point within it and its reviews (not saved)
    _keep(track, reviews, plan.budget_minutes)
    for number, offered_all in enumerate(plan.offers):
        spent = DEFAULT.minutes(reviews.works)
        if spent >= plan.budget_minutes:
            break
        offered = [i for i in offered_all if i not in done]
        feats = pool.features[offered]
        scores = model.scores(feats).tolist()
        extra = _extras(chosen.reads, model, feats, pool, offered, labelled, categories, number,
                        chosen.previous_from_round, done)  # fmt: skip
        reads = chosen.reads | {PREVIOUS_KEY}
        rollouts = [
            Rollout(pool.rollouts[i].sample_id, pool.rollouts[i].prompt,
                    pool.rollouts[i].response, score,
                    details(score, {k: v[j] for k, v in extra.items()}, reads),
                    pool.rollouts[i].step, pool.rollouts[i].group_id)
            for j, (i, score) in enumerate(zip(offered, scores, strict=True))
        ]  # fmt: skip
        verdicts = [pool.verdicts[i] for i in offered]
        flags = flags_for(pool.report, rollouts) if pool.report is not None else []
        offer = Offer(rollouts, flags, responses, plan.batch, task.threshold,
                      seed * 1000 + number, verdicts)  # fmt: skip
        reasons = chosen.pick(offer)
        picks = list(reasons)
        if FAILURE_KEY in extra and number >= 1:
            track.detector.append(_detector(extra[FAILURE_KEY], verdicts, flags, plan.batch))
        prefix = f"s{seed}-r{number}-{name}"
        if compare:
            tasks = compare_tasks(rollouts, verdicts, groups_of(rollouts, picks,
                                  plan.compare_size), prefix)  # fmt: skip
        else:
            tasks = single_tasks(rollouts, verdicts, picks, prefix)
        over = False
        for reviewed in tasks:
            if DEFAULT.minutes([*reviews.works, reviewed.work]) > plan.budget_minutes:
                over = True
                break
            reviews.add(reviewed)
            for j in reviewed.picks:
                done.add(offered[j])
                responses.append(rollouts[j].response)
                track.shown += 1
                track.failures_shown += verdicts[j].failure
                track.hacks_shown += offered[j] in plan.hacks
            # What a reviewer named: a rating's categories; a comparison's, for its worst.
            named = reviewed.picks if not compare else [reviewed.worst]
            for j in named:
                if j is not None:
                    labelled.append(offered[j])
                    categories.append(verdicts[j].categories)
        if len(reviews.works) > track.points[-1].reviews:
            model = refit(pool.start_head, reviews.pairs, reviews.ratings, features,
                          plan.ensemble, seed * 1000 + number, plan.centre)  # fmt: skip
            track.points.append(Point(len(reviews.works), reviews.minutes(), _correct(model, pool)))
            _keep(track, reviews, plan.budget_minutes)
        if over:
            break
    return track


def _keep(track: Track, reviews: Reviews, budget: float) -> None:
    """What `--check-retrain` retrains on: at each of its budget fractions, the reviews of the
    last point still within it."""
    spent = DEFAULT.minutes(reviews.works)
    for fraction in KEPT_AT:
        if spent <= fraction * budget + 1e-9:
            track.kept[fraction] = (track.points[-1], (list(reviews.pairs), list(reviews.ratings)))


def _correct(model: Ensemble, pool: Pool) -> list[float]:
    evaluation = pool.evaluation
    scores = model.scores(evaluation.features)
    return correct_by_prompt(
        scores, evaluation.first, evaluation.second, evaluation.prompt_of,
        len(evaluation.prompts),
    ).tolist()  # fmt: skip


def _extras(
    reads: frozenset[str],
    model: Ensemble,
    feats: torch.Tensor,
    pool: Pool,
    offered: Sequence[int],
    labelled: Sequence[int],
    categories: Sequence[Sequence[str]],
    number: int,
    previous_from: int | None,
    done: set[int],
) -> dict[str, list[float]]:
    """What a run's reward-model reward would write beside the score, for the keys the
    selection reads: the ensemble's spread, the starting model's score (`previous`), the failure
    detector fitted on the reviews so far, the novelty against everything reviewed."""
    found: dict[str, list[float]] = {}
    if SPREAD_KEY in reads and model.weight.shape[0] > 1:
        found[SPREAD_KEY] = model.spread(feats).tolist()
    if previous_from is not None and number >= previous_from:
        found[PREVIOUS_KEY] = [pool.rollouts[i].reward for i in offered]
    if FAILURE_KEY in reads and labelled:
        probe = fit_failure_probe(pool.features[list(labelled)], categories)
        if probe is not None:
            found[FAILURE_KEY] = probe.scores(feats).tolist()
    if NOVELTY_KEY in reads and done:
        reviewed = ReviewedFeatures.of(pool.features[sorted(done)])
        found[NOVELTY_KEY] = reviewed.novelty(feats).tolist()
    return found


def _detector(
    scores: Sequence[float], verdicts: Sequence, flags: Sequence, batch: int
) -> tuple[float, float, float]:
    def failing(indices: Sequence[int]) -> float:
        return sum(verdicts[i].failure for i in indices) / len(indices) if indices else math.nan

    top = sorted(range(len(scores)), key=lambda i: -scores[i])[:batch]
    carriers = sorted(set().union(*(flag.carriers for flag in flags))) if flags else []
    return failing(top), failing(carriers), failing(range(len(verdicts)))
