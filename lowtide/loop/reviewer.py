"""Machine reviewers: a function that, given a task's data, returns a review.

A reviewer is named by dotted path (`package.module:function`). It sees the task's data as Label
Studio holds it (`prompt`, `response`, `sample_id`, `reward`, ...) and returns a `Review`, or an
annotation result list in the shape of configs/label_studio/review.xml. What it returns is
checked before anything is written: a reviewer that raises or returns nonsense for one task
leaves that task unreviewed, with the reason, and the others go on.

A comparison task (`annotation.review_mode: compare`) is reviewed with the same function: it
rates each response on its own (its data with that `response` and `sample_id`), and the verdict
is the best-rated and the worst-rated (the first of a tie in label order for the best, the last
for the worst), with the worst's categories and better response (`compared_review`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from annotation.review_results import (
    BEST_FIELD,
    BETTER_FIELD,
    CHOICES_KIND,
    FAILURE_FIELD,
    NOTE_FIELD,
    QUALITY_FIELD,
    WORST_FIELD,
    QualityKind,
    failure_result,
    pick_result,
    quality_of,
    quality_result,
    read_result,
)
from lowtide.errors import UsageError
from rl.plugins import PluginPathError, resolve_callable

RATINGS = range(1, 6)


@dataclass(frozen=True)
class Review:
    rating: int  # 1 (bad) .. 5 (good)
    categories: tuple[str, ...] = ()  # failure categories of review.xml
    better: str | None = None  # a better response, when the reviewer writes one
    note: str | None = None


class Reviewer(Protocol):
    def __call__(self, data: Mapping[str, Any]) -> Review | list[dict[str, Any]]: ...


class ReviewRejected(ValueError):
    """What a reviewer returned for one task cannot be stored; the message says why."""


def load_reviewer(path: str) -> Reviewer:
    try:
        return resolve_callable(path)
    except PluginPathError as error:
        raise UsageError(f"--reviewer {path}: {error}") from None


def checked_review(
    reviewer: Reviewer, data: Mapping[str, Any], categories: Collection[str] | None = None
) -> Review:
    """The reviewer's verdict on one task, checked; ReviewRejected with the reason otherwise.
    `categories`: the failure categories of the project's form (None: not checked, where only
    the rating is used)."""
    try:
        verdict = reviewer(dict(data))  # a copy: a reviewer cannot change what others see
    except Exception as error:  # one task's failure, whatever it is, must not stop the rest
        raise ReviewRejected(f"the reviewer raised {type(error).__name__}: {error}") from None
    if isinstance(verdict, list):
        verdict = _review_of_result(verdict)
    if not isinstance(verdict, Review):
        raise ReviewRejected(
            f"the reviewer returned {type(verdict).__name__}, not a Review or a result list"
        )
    if isinstance(verdict.rating, bool) or verdict.rating not in RATINGS:
        raise ReviewRejected(f"rating {verdict.rating!r} is not an integer from 1 to 5")
    if not isinstance(verdict.categories, tuple | list):
        raise ReviewRejected(f"categories {verdict.categories!r} is not a list of names")
    unknown = [c for c in verdict.categories if categories is not None and c not in categories]
    if unknown:
        raise ReviewRejected(
            f"unknown failure categories {unknown!r} (known: {', '.join(categories or ())})"
        )
    for name in ("better", "note"):
        value = getattr(verdict, name)
        if value is not None and not isinstance(value, str):
            raise ReviewRejected(f"{name} is {type(value).__name__}, not text")
    # 4.0 passes the range check; the project's choices store "4", never "4.0".
    return replace(verdict, rating=int(verdict.rating))


@dataclass(frozen=True)
class Comparison:
    """A comparison verdict by label (A, B, ...), with what went wrong with the worst."""

    best: str
    worst: str
    categories: tuple[str, ...] = ()
    better: str | None = None
    best_rating: int | None = None  # the rating that made it the best, when rated one by one


def compared_review(
    reviewer: Reviewer, data: Mapping[str, Any], categories: Collection[str] | None = None
) -> Comparison:
    """The verdict on one comparison task: each response rated by `reviewer` (module
    docstring); ReviewRejected when a rating fails or the task shows fewer than 2 responses."""
    shown = [m for m in data.get("compare") or [] if isinstance(m, Mapping)]
    if len(shown) < 2:
        raise ReviewRejected("the comparison task shows fewer than 2 responses")
    reviews = []
    for member in shown:
        one = {**data, "response": member.get("response", ""), "sample_id": member.get("sample_id")}
        reviews.append(checked_review(reviewer, one, categories))
    ratings = [review.rating for review in reviews]
    best = ratings.index(max(ratings))
    worst = len(ratings) - 1 - ratings[::-1].index(min(ratings))
    if best == worst:  # every rating the same: the form still asks for two different ones
        worst = len(ratings) - 1 if best == 0 else 0
    labels = [str(member.get("label")) for member in shown]
    return Comparison(
        best=labels[best],
        worst=labels[worst],
        categories=tuple(reviews[worst].categories),
        better=reviews[worst].better,
        best_rating=ratings[best],
    )


def comparison_result(verdict: Comparison) -> list[dict[str, Any]]:
    """The annotation result of a comparison verdict, in the shape of the comparison form."""
    result = [pick_result(BEST_FIELD, verdict.best), pick_result(WORST_FIELD, verdict.worst)]
    if verdict.categories:
        result.append(failure_result(verdict.categories, to_name="prompt"))
    if verdict.better:
        control = _control(BETTER_FIELD, "textarea", {"text": [verdict.better]})
        result.append({**control, "to_name": "prompt"})
    return result


def result_of(review: Review, quality: QualityKind = CHOICES_KIND) -> list[dict[str, Any]]:
    """The annotation result, in the shape of configs/label_studio/review.xml; `quality` is
    the project's quality control (an older project's star Rating: "rating")."""
    result: list[dict[str, Any]] = [quality_result(review.rating, quality)]
    if review.categories:
        result.append(failure_result(review.categories))
    if review.better:
        result.append(_control(BETTER_FIELD, "textarea", {"text": [review.better]}))
    if review.note:
        result.append(_control(NOTE_FIELD, "textarea", {"text": [review.note]}))
    return result


def _control(name: str, kind: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"from_name": name, "to_name": "response", "type": kind, "value": value}


def _review_of_result(result: list[Any]) -> Review:
    """The review a result list gives, read as the export reads it, once it passes the checks
    the export's tolerant reading would let slip (a user's function wrote it)."""
    values = _checked_item_values(result)
    if QUALITY_FIELD not in values:
        raise ReviewRejected(f"the result has no {QUALITY_FIELD!r} rating")
    categories = values.get(FAILURE_FIELD, {}).get("choices") or []
    if not isinstance(categories, list):
        raise ReviewRejected(f"categories {categories!r} is not a list of names")
    read = read_result(result)
    return Review(
        rating=_rating_as_given(values[QUALITY_FIELD]),
        categories=read.categories,
        better=read.better,
        note=read.note,
    )


def _checked_item_values(result: list[Any]) -> dict[str, Mapping[str, Any]]:
    """Each control's value (the last item's for it); ReviewRejected for a malformed item."""
    values: dict[str, Mapping[str, Any]] = {}
    for item in result:
        if not isinstance(item, Mapping) or not isinstance(item.get("value"), Mapping):
            raise ReviewRejected(f"result item {item!r:.80} has no 'from_name' and 'value'")
        values[str(item.get("from_name"))] = item["value"]
    return values


def _rating_as_given(quality: Mapping[str, Any]) -> Any:
    """The rating of {"choices": ["3"]} or the older {"rating": 3}, not yet checked: a star
    rating passes as it is, so that checked_review rejects 3.5 or "3" by name."""
    return quality["rating"] if "rating" in quality else quality_of(quality)
