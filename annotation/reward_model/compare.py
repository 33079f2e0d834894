"""`lowtide rm compare OLD NEW`: how two reward models score the rollouts that were routed for
review, next to what the reviewers said, so a user sees whether the new one fixed what they
flagged."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.reward_model.data import RMData
from annotation.reward_model.train import RMMetrics, evaluate, load_scorer


@dataclass
class ModelView:
    path: str
    metrics: RMMetrics  # on all the given data
    mean_flagged: float | None  # mean score of responses rated 1-2
    mean_approved: float | None  # mean score of responses rated 4-5
    mean_better: float | None  # mean score of the reviewers' better responses


@dataclass
class Comparison:
    old: ModelView
    new: ModelView
    examples: list[tuple[str, str, int, float, float]]  # prompt, response, rating, old, new


def compare_models(old: str, new: str, data: RMData, examples: int = 5) -> Comparison:
    views, scores = [], []
    for path in (old, new):
        scorer = load_scorer(path)
        try:
            rated = scorer.score_pairs(
                [r.prompt for r in data.ratings], [r.response for r in data.ratings]
            )
            better = scorer.score_pairs(
                [p.prompt for p in data.pairs], [p.chosen for p in data.pairs]
            )
            by_rating = list(zip(rated, (r.rating for r in data.ratings), strict=True))
            views.append(
                ModelView(
                    path=path,
                    metrics=evaluate(scorer, data),
                    mean_flagged=_mean([s for s, rating in by_rating if rating <= 2]),
                    mean_approved=_mean([s for s, rating in by_rating if rating >= 4]),
                    mean_better=_mean(better),
                )
            )
            scores.append(rated)
        finally:
            scorer.close()
    worst = sorted(range(len(data.ratings)), key=lambda i: data.ratings[i].rating)[:examples]
    rows = [
        (data.ratings[i].prompt, data.ratings[i].response, data.ratings[i].rating,
         scores[0][i], scores[1][i])
        for i in worst
    ]  # fmt: skip
    return Comparison(views[0], views[1], rows)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
