"""How much reviewers agree: per sample (for the export's rows) and over all samples
(Krippendorff's alpha on ratings), and which samples are the most disputed.

Per sample, from each reviewer's latest answer:
- `rating_mean` and `rating_spread` (highest minus lowest rating);
- `majority_categories`: failure categories ticked by more than half of the reviewers;
- `agreed`: the rating spread is at most `max_rating_spread` and, for every category anyone
  ticked, at least `min_category_share` of the reviewers take the same side (ticked or not).
  One reviewer alone agrees with themself;
- `agreement`: 1 - spread / 4 on the 1-5 scale (1 with fewer than two ratings), the weight
  `rm train --weight-by-agreement` gives the sample.

Krippendorff's alpha is computed from its coincidence-matrix definition (Krippendorff,
"Computing Krippendorff's Alpha-Reliability", 2011): alpha = 1 - D_o / D_e, over the samples
with at least two ratings (one rating pairs with nothing).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

RATING_MIN, RATING_MAX = 1, 5  # the Rating control of configs/label_studio/review.xml
Metric = Literal["nominal", "ordinal", "interval"]
METRICS: tuple[Metric, ...] = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class AgreementRule:
    max_rating_spread: int = 1
    min_category_share: float = 0.6


@dataclass(frozen=True)
class SampleAgreement:
    reviewers: int
    rating_mean: float | None
    rating_spread: int | None
    majority_categories: list[str]
    agreed: bool
    agreement: float  # in [0, 1]; 1 - spread / (RATING_MAX - RATING_MIN)


def sample_agreement(
    ratings: Sequence[int | None],
    categories: Sequence[Sequence[str]],
    rule: AgreementRule = AgreementRule(),
) -> SampleAgreement:
    """The agreement of one sample's reviewers: `ratings[i]` and `categories[i]` are reviewer
    i's (None: they gave no rating)."""
    reviewers = len(categories)
    given = [rating for rating in ratings if rating is not None]
    spread = max(given) - min(given) if given else None
    ticks = Counter(category for chosen in categories for category in set(chosen))
    first_seen = list(dict.fromkeys(category for chosen in categories for category in chosen))
    majority = [category for category in first_seen if ticks[category] * 2 > reviewers]
    categories_agree = all(
        max(count, reviewers - count) >= rule.min_category_share * reviewers
        for count in ticks.values()
    )
    return SampleAgreement(
        reviewers=reviewers,
        rating_mean=sum(given) / len(given) if given else None,
        rating_spread=spread,
        majority_categories=majority,
        agreed=(spread or 0) <= rule.max_rating_spread and categories_agree,
        agreement=1.0 - (spread or 0) / (RATING_MAX - RATING_MIN),
    )


def rounded_rating(mean: float | None) -> int | None:
    """The mean in whole stars, halves up (2.5 -> 3): the `rating` column stays an integer."""
    return None if mean is None else int(mean + 0.5)


@dataclass(frozen=True)
class Alpha:
    value: float | None  # None: fewer than two pairable ratings, or every rating the same
    metric: Metric
    samples: int  # samples with at least two ratings: the ones alpha is computed over
    ratings: int  # the ratings in those samples

    @property
    def name(self) -> str:
        return f"Krippendorff's alpha ({self.metric})"


def krippendorff_alpha(units: Iterable[Sequence[float]], metric: Metric = "ordinal") -> Alpha:
    """Alpha over `units`, each the values its coders gave (missing values left out)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    coincidences: dict[tuple[float, float], float] = defaultdict(float)
    samples = ratings = 0
    for unit in units:
        values = list(unit)
        if len(values) < 2:
            continue  # a lone value pairs with nothing: it carries no information on agreement
        samples += 1
        ratings += len(values)
        # o_ck: each ordered pair of values from different coders, weighted 1 / (m_u - 1).
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[c, k] += 1 / (len(values) - 1)
    marginals: dict[float, float] = defaultdict(float)
    for (c, _), count in coincidences.items():
        marginals[c] += count
    n = sum(marginals.values())
    delta = _difference(metric, marginals)
    observed = sum(count * delta(c, k) for (c, k), count in coincidences.items())
    expected = sum(marginals[c] * marginals[k] * delta(c, k) for c in marginals for k in marginals)
    if n < 2 or expected == 0:
        return Alpha(None, metric, samples, ratings)
    return Alpha(1 - (n - 1) * observed / expected, metric, samples, ratings)


def _difference(metric: Metric, marginals: Mapping[float, float]):
    """delta^2(c, k) of the metric; the ordinal one counts the values between c and k."""
    if metric == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if metric == "interval":
        return lambda c, k: float(c - k) ** 2
    order = sorted(marginals)
    position = {value: index for index, value in enumerate(order)}
    cumulative = [0.0]
    for value in order:
        cumulative.append(cumulative[-1] + marginals[value])

    def ordinal(c: float, k: float) -> float:
        low, high = sorted((position[c], position[k]))
        between = cumulative[high + 1] - cumulative[low]  # n_g for g from c to k, both included
        return (between - (marginals[c] + marginals[k]) / 2) ** 2

    return ordinal


@dataclass(frozen=True)
class Disputed:
    sample_id: str
    task_ids: list[int]
    ratings: list[int | None]  # one per reviewer, in review order
    split_categories: list[str]  # categories some reviewers ticked and others did not
    agreed: bool


@dataclass
class AgreementReport:
    alpha: Alpha
    reviewed_twice: int  # samples with at least two reviewers
    agreed: int  # of those, how many agree
    disputed: list[Disputed] = field(default_factory=list)


def reviews_of(row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    reviews = (row.get("meta") or {}).get("reviews")
    return reviews if isinstance(reviews, list) else []


def agreement_report(
    rows: Iterable[Mapping[str, Any]], metric: Metric = "ordinal", disputed: int = 10
) -> AgreementReport:
    """Alpha over the export's rating rows (`meta.reviews` each) and the `disputed` samples
    whose reviewers differ most: widest rating spread first, then most split categories."""
    units: list[list[int]] = []
    candidates: list[tuple[tuple, Disputed]] = []
    reviewed_twice = agreed = 0
    for row in rows:
        reviews = reviews_of(row)
        units.append([r["rating"] for r in reviews if isinstance(r.get("rating"), int)])
        if len(reviews) < 2:
            continue
        reviewed_twice += 1
        meta = row.get("meta") or {}
        agreed += bool(meta.get("agreed"))
        ticks = Counter(c for review in reviews for c in set(review.get("categories") or []))
        split = sorted(category for category, count in ticks.items() if count < len(reviews))
        spread = meta.get("rating_spread") or 0
        if spread == 0 and not split:
            continue  # unanimous: nothing to adjudicate
        tasks = sorted({int(r["task_id"]) for r in reviews if r.get("task_id") is not None})
        entry = Disputed(
            sample_id=str(row["sample_id"]),
            task_ids=tasks,
            ratings=[r.get("rating") for r in reviews],
            split_categories=split,
            agreed=bool(meta.get("agreed")),
        )
        candidates.append(((entry.agreed, -spread, -len(split), entry.sample_id), entry))
    candidates.sort(key=lambda pair: pair[0])
    return AgreementReport(
        alpha=krippendorff_alpha(units, metric),
        reviewed_twice=reviewed_twice,
        agreed=agreed,
        disputed=[entry for _, entry in candidates[:disputed]],
    )
