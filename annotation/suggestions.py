"""Machine suggestions: a judge's rating and failure categories, attached to a review task as a
Label Studio prediction, so that reviewers confirm or correct instead of starting blank.

The judge (`annotation.suggestions.judge`) is `score_bands` (the reward, or one reward
component, mapped to a rating by `bands`) or a function named by dotted path that takes a
`Rollout` and returns a `Suggestion`, a mapping with the same keys, or None (no suggestion for
this one). A judge that raises or returns something else costs that task its suggestion, with
the reason logged and counted; the task is imported anyway and the batch goes on.

On export, `suggestion_outcome` compares the reviewer's annotation with the prediction: the
suggestion was accepted (rating and categories unchanged) or edited (which of them changed).
A prediction is never a review: a task nobody annotated exports nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.config import SCORE_BANDS, SUGGESTIONS_OFF, ScoreBand, SuggestionsConfig
from annotation.errors import AnnotationError
from annotation.review_form import ReviewForm, ReviewFormError
from annotation.review_results import (
    FAILURE_FIELD,
    QUALITY_FIELD,
    QualityKind,
    failure_result,
    quality_result,
    read_result,
)
from rl.plugins import PluginPathError, resolve_callable
from sampling.records import RolloutRecord

# The controls of configs/label_studio/review.xml a suggestion fills.
RATING_CONTROL, FAILURE_CONTROL = QUALITY_FIELD, FAILURE_FIELD
SUGGESTED_FIELDS = ("rating", "categories")
TOTAL_REWARD = "reward"


class SuggestionConfigError(AnnotationError):
    """The judge cannot be set up (unknown function, categories the labeling config lacks)."""


class SuggestionRejected(ValueError):
    """One task's suggestion could not be made; the message is the reason."""


@dataclass(frozen=True)
class Rollout:
    """What a judge sees of one rollout. `score` is the configured score (`suggestions.score`:
    the total reward or one component); None when the record has no finite value for it."""

    sample_id: str
    run_id: str
    step: int
    prompt: str
    response: str
    reward: float | None
    reward_details: Mapping[str, float | None]
    model: str
    score: float | None


@dataclass(frozen=True)
class Suggestion:
    rating: int  # 1-5, as the review's quality control
    categories: tuple[str, ...] = ()  # failure categories, from the labeling config's Choices
    score: float | None = None  # the prediction's score; None: the rollout's score


Judge = Callable[[Rollout], Suggestion | Mapping[str, Any] | None]


@dataclass(frozen=True)
class ReviewControls:
    """The labeling config's quality control (one choice of 1-5, or an older project's star
    Rating) and failure Choices, which a prediction's result must name and match."""

    rating_to: str
    rating_kind: QualityKind
    failure_to: str | None
    categories: tuple[str, ...]

    @classmethod
    def from_xml(cls, xml: str) -> ReviewControls:
        try:
            form = ReviewForm.parse(xml)
        except ReviewFormError as error:
            raise SuggestionConfigError(str(error)) from None
        rating = form.quality
        if rating is None or any(r not in rating.ratings for r in range(1, 6)):
            raise SuggestionConfigError(
                f'suggestions need a quality rating (<Choices name="{RATING_CONTROL}"> with the '
                'choices "1" to "5", or <Rating name="quality">) in the labeling config (as in '
                "configs/label_studio/review.xml); set annotation.suggestions.judge=off"
            )
        return cls(
            rating_to=rating.to_name,
            rating_kind=rating.kind,
            failure_to=form.failure_to,
            categories=form.categories,
        )


class ScoreBands:
    """The score mapped to a rating (and categories) by ascending bands."""

    def __init__(self, bands: list[ScoreBand]) -> None:
        self.bands = bands

    def __call__(self, rollout: Rollout) -> Suggestion | None:
        if rollout.score is None:
            return None  # nothing to map: no suggestion rather than a made-up one
        band = next(b for b in self.bands if b.below is None or rollout.score < b.below)
        return Suggestion(band.rating, tuple(band.categories))


@dataclass
class Suggester:
    """Makes the prediction of each task with one judge, under one model_version."""

    judge: Judge
    model_version: str
    score_name: str
    controls: ReviewControls

    def prediction(self, record: RolloutRecord) -> dict[str, Any] | None:
        """The Label Studio prediction for `record`, or None when the judge has none for it.
        Raises SuggestionRejected (with the reason) when the judge raised or returned
        nonsense."""
        rollout = rollout_of(record, self.score_name)
        try:
            answer = self.judge(rollout)
        except Exception as error:  # a judge's bug costs one suggestion, never the batch
            raise SuggestionRejected(f"the judge raised {type(error).__name__}: {error}") from None
        if answer is None:
            return None
        suggestion = self._check(answer)
        score = suggestion.score if suggestion.score is not None else rollout.score
        prediction: dict[str, Any] = {
            "model_version": self.model_version,
            "result": self._result(suggestion),
        }
        if score is not None:
            prediction["score"] = score
        return prediction

    def _check(self, answer: object) -> Suggestion:
        if isinstance(answer, Mapping):
            unknown = set(answer) - {"rating", "categories", "score"}
            if unknown:
                raise SuggestionRejected(f"the judge returned unknown keys {sorted(unknown)}")
            answer = Suggestion(
                rating=answer.get("rating"),  # type: ignore[arg-type]  # checked below
                categories=answer.get("categories", ()),
                score=answer.get("score"),
            )
        if not isinstance(answer, Suggestion):
            raise SuggestionRejected(
                f"the judge returned a {type(answer).__name__}, not a Suggestion, a mapping or None"
            )
        rating = answer.rating
        if isinstance(rating, float) and rating.is_integer():
            rating = int(rating)
        if isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5:
            raise SuggestionRejected(f"rating {answer.rating!r} is not a whole number from 1 to 5")
        categories = answer.categories
        if isinstance(categories, str):
            categories = (categories,)
        if not isinstance(categories, list | tuple) or not all(
            isinstance(c, str) for c in categories
        ):
            raise SuggestionRejected(f"categories {answer.categories!r} is not a list of names")
        unknown = [c for c in categories if c not in self.controls.categories]
        if unknown:
            raise SuggestionRejected(
                f"categories {unknown} are not in the labeling config's failure choices "
                f"{list(self.controls.categories)}"
            )
        score = answer.score
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise SuggestionRejected(f"score {score!r} is not a finite number")
        return Suggestion(rating, tuple(dict.fromkeys(categories)), score)

    def _result(self, suggestion: Suggestion) -> list[dict[str, Any]]:
        controls = self.controls
        result = [quality_result(suggestion.rating, controls.rating_kind, controls.rating_to)]
        if suggestion.categories:
            result.append(failure_result(suggestion.categories, controls.failure_to))
        return result


def build_suggester(config: SuggestionsConfig, labeling_config_xml: str) -> Suggester | None:
    """The configured suggester, or None when suggestions are off. Every mistake in the config
    (a judge that cannot be imported, a category the labeling config lacks) fails here, when
    the worker starts, not on the first batch."""
    if config.judge == SUGGESTIONS_OFF:
        return None
    controls = ReviewControls.from_xml(labeling_config_xml)
    judge: Judge
    if config.judge == SCORE_BANDS:
        for band in config.bands:
            unknown = [c for c in band.categories if c not in controls.categories]
            if unknown:
                raise SuggestionConfigError(
                    f"annotation.suggestions.bands: categories {unknown} are not in the "
                    f"labeling config's failure choices {list(controls.categories)}"
                )
        judge = ScoreBands(config.bands)
    else:
        try:
            judge = resolve_callable(config.judge)
        except PluginPathError as error:
            raise SuggestionConfigError(f"annotation.suggestions.judge: {error}") from None
    model_version = config.model_version or f"{config.judge}/{config.score}"
    return Suggester(judge, model_version, config.score, controls)


def rollout_of(record: RolloutRecord, score_name: str) -> Rollout:
    score = record.reward if score_name == TOTAL_REWARD else record.reward_details.get(score_name)
    return Rollout(
        sample_id=record.sample_id,
        run_id=record.run_id,
        step=record.step,
        prompt=record.prompt,
        response=record.response,
        reward=record.reward,
        reward_details=dict(record.reward_details),
        model=record.model.name_or_path,
        score=score if score is not None and math.isfinite(score) else None,
    )


# --- export side ---------------------------------------------------------------------------


def suggestion_outcome(
    predictions: Iterable[Mapping[str, Any]], rating: int | None, categories: Iterable[str]
) -> dict[str, Any] | None:
    """What became of a task's suggestion in one review (its rating and categories): None when
    the task had no suggestion, else `{model_version, score, rating, categories, accepted,
    changed}`, where `changed` names the suggested fields the reviewer changed."""
    given = predictions if isinstance(predictions, list | tuple) else ()  # a server's: anything
    ours = [
        p
        for p in given
        if isinstance(p, Mapping) and _suggested_values(p.get("result") or []) is not None
    ]
    if not ours:
        return None
    latest = max(ours, key=lambda p: (str(p.get("created_at") or ""), _number_or_zero(p.get("id"))))
    suggested_rating, suggested_categories = _suggested_values(latest.get("result") or [])  # type: ignore[misc]
    changed = []
    if rating != suggested_rating:
        changed.append("rating")
    if set(categories) != set(suggested_categories):
        changed.append("categories")
    score = latest.get("score")
    return {
        "model_version": str(latest.get("model_version") or ""),
        "score": float(score) if isinstance(score, int | float) else None,
        "rating": suggested_rating,
        "categories": suggested_categories,
        "accepted": not changed,
        "changed": changed,
    }


def _number_or_zero(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _suggested_values(result: Iterable[Any]) -> tuple[int, list[str]] | None:
    """(rating, categories) of a prediction's result; None if it suggests no rating."""
    values = read_result(result)
    return None if values.rating is None else (values.rating, list(values.categories))


@dataclass(frozen=True)
class SuggestionAcceptance:
    """How reviewers treated the suggestions in a set of export rows."""

    accepted: int = 0
    edited: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # field name -> rows that changed it

    @property
    def suggested(self) -> int:
        return self.accepted + self.edited

    @property
    def rate(self) -> float | None:
        """Share of reviewed suggestions accepted unchanged; None with none reviewed."""
        return self.accepted / self.suggested if self.suggested else None


def acceptance(rows: Iterable[Mapping[str, Any]]) -> SuggestionAcceptance:
    """Accepted and edited suggestions among export rows (`annotations.jsonl`'s rows, or the
    rows `annotation.export.rating_row` builds), one count per review: a sample with several
    reviewers counts each (`meta.reviews`), else the row's `meta.suggestion`. Reviews of tasks
    without a suggestion are not counted."""
    accepted = edited = 0
    changed: dict[str, int] = {}
    for row in rows:
        meta = row.get("meta") or {}
        reviews = meta.get("reviews") or [meta]
        for outcome in (review.get("suggestion") for review in reviews):
            if not outcome:
                continue
            if outcome.get("accepted"):
                accepted += 1
            else:
                edited += 1
                for name in outcome.get("changed") or ():
                    changed[name] = changed.get(name, 0) + 1
    return SuggestionAcceptance(accepted, edited, changed)
