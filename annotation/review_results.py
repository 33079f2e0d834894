"""The review's quality rating (1-5) as Label Studio stores it, read and written in one place.

configs/label_studio/review.xml asks for it as a single choice among "1".."5" (`<Choices
name="quality">`), so that pressing a digit sets that rating. Projects made before used a star
control (`<Rating name="quality">`), whose annotations hold `{"rating": N}`. Both forms are
read; a result is written in the form of the labeling config it goes to.

`read_result` reads a whole result list (an annotation's or a prediction's) into its values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

QUALITY_FIELD = "quality"
FAILURE_FIELD = "failure"  # the failure categories: a multiple choice
BETTER_FIELD, NOTE_FIELD = "better_response", "note"  # free texts
BEST_FIELD, WORST_FIELD = "best", "worst"  # a comparison's verdict: one label each (A, B, ...)
QualityKind = Literal["choices", "rating"]
CHOICES_KIND: QualityKind = "choices"  # what the shipped review.xml has
RATING_KIND: QualityKind = "rating"  # older projects: a star control
_WHOLE_NUMBER = re.compile(r"\s*(\d+)\s*")
MAX_RATING = 100  # far past any form's scale (review.xml's maxRating is 5)


def quality_of(value: Any) -> int | None:
    """The rating in one result item's `value` of the quality control, in either form:
    `{"rating": 3}` or `{"choices": ["3"]}`; None for anything else."""
    if not isinstance(value, Mapping):
        return None
    rating = value.get("rating")
    if isinstance(rating, int | float) and not isinstance(rating, bool):
        return _on_a_scale(rating)
    choices = value.get("choices")
    if isinstance(choices, list) and len(choices) == 1:
        matched = _WHOLE_NUMBER.fullmatch(str(choices[0])[:20])
        return _on_a_scale(int(matched.group(1))) if matched else None
    return None


def _on_a_scale(rating: float) -> int | None:
    """A rating a form can give, as a whole number; None for NaN, infinities and numbers past
    any form's scale (a server may send anything, and a row keeps it as a 64-bit number)."""
    return int(rating) if 0 <= rating <= MAX_RATING else None


@dataclass(frozen=True)
class ResultValues:
    """What a result list says, in review.xml's controls; None/() for what it does not say."""

    rating: int | None = None
    categories: tuple[str, ...] = ()
    better: str | None = None
    note: str | None = None
    best: str | None = None  # comparison forms: the label picked as best
    worst: str | None = None


def read_result(items: Iterable[Any]) -> ResultValues:
    """The values of a Label Studio result list. Tolerant, since reviewers and older versions
    wrote what they wrote: an item that is not a mapping, has no mapping `value`, or whose
    value cannot be read is skipped; of readable items for one control, the last one counts."""
    values: dict[str, Any] = {}
    for item in items if isinstance(items, list | tuple) else ():  # a server may send anything
        value = item.get("value") if isinstance(item, Mapping) else None
        if isinstance(value, Mapping):
            name = item.get("from_name")
            read = _read_value(name, value)
            if read is not None:
                values[name] = read
    return ResultValues(
        rating=values.get(QUALITY_FIELD),
        categories=values.get(FAILURE_FIELD, ()),
        better=values.get(BETTER_FIELD) or None,  # an emptied text is no text
        note=values.get(NOTE_FIELD) or None,
        best=values.get(BEST_FIELD),
        worst=values.get(WORST_FIELD),
    )


def _read_value(name: Any, value: Mapping[str, Any]) -> Any:
    """One control's value as read_result keeps it; None when unreadable (or not ours)."""
    if name == QUALITY_FIELD:
        return quality_of(value)  # either form: see there
    if name in (BEST_FIELD, WORST_FIELD):
        choices = value.get("choices")
        one = isinstance(choices, list) and len(choices) == 1
        return str(choices[0]) if one else None  # type: ignore[index]
    if name == FAILURE_FIELD and isinstance(value.get("choices"), list):
        return tuple(str(choice) for choice in value["choices"])
    if name in (BETTER_FIELD, NOTE_FIELD) and isinstance(value.get("text"), list):
        text = "\n".join(str(part) for part in value["text"]).strip()  # the UI may add "\n"
        return text  # even empty: an emptied text replaces an earlier one
    return None


def quality_result(
    rating: int, kind: QualityKind = CHOICES_KIND, to_name: str = "response"
) -> dict[str, Any]:
    """The result item that gives `rating` in a project whose quality control is `kind`."""
    value: dict[str, Any] = (
        {"rating": rating} if kind == RATING_KIND else {"choices": [str(rating)]}
    )
    return {"from_name": QUALITY_FIELD, "to_name": to_name, "type": kind, "value": value}


def failure_result(categories: Iterable[str], to_name: str | None = "response") -> dict[str, Any]:
    """The result item that picks `categories` in the failure control."""
    return {"from_name": FAILURE_FIELD, "to_name": to_name, "type": "choices",
            "value": {"choices": list(categories)}}  # fmt: skip


def pick_result(field: str, label: str, to_name: str = "prompt") -> dict[str, Any]:
    """The result item that picks `label` as the best (`field` BEST_FIELD) or the worst."""
    return {"from_name": field, "to_name": to_name, "type": "choices",
            "value": {"choices": [label]}}  # fmt: skip
