"""The quality rating in both forms Label Studio stores it: review.xml's single choice ("3")
and older projects' star Rating ({"rating": 3}); read alike, written in the project's form."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from annotation.review_form import ReviewForm
from annotation.review_results import (
    CHOICES_KIND,
    QUALITY_FIELD,
    RATING_KIND,
    ResultValues,
    failure_result,
    quality_of,
    quality_result,
    read_result,
)
from lowtide.loop.reviewer import Review, ReviewRejected, checked_review, result_of
from tests.helpers.labelstudio import REVIEW_XML_PATH

pytestmark = pytest.mark.unit

REVIEW_XML = REVIEW_XML_PATH.read_text()
CATEGORIES = ReviewForm.parse(REVIEW_XML).categories
STARS_XML = (
    "<View><Text name='response' value='$response'/>"
    "<Rating name='quality' toName='response' maxRating='5' hotkey='1'/></View>"
)


def test_both_forms_read_as_the_same_rating() -> None:
    assert quality_of({"choices": ["3"]}) == 3
    assert quality_of({"rating": 3}) == quality_of({"rating": 3.0}) == 3
    for nonsense in ({"choices": []}, {"choices": ["3", "4"]}, {"choices": ["good"]},
                     {"rating": "3"}, {"rating": True}, {}, None, "3"):  # fmt: skip
        assert quality_of(nonsense) is None, nonsense
    old = [{"from_name": "quality", "type": "rating", "value": {"rating": 4}}]
    new = [
        {"from_name": "quality", "type": "choices", "value": {"choices": ["4"]}},
        {"from_name": "failure", "type": "choices", "value": {"choices": ["unsafe"]}},
    ]
    assert read_result(old) == ResultValues(rating=4)
    assert read_result(new) == ResultValues(rating=4, categories=("unsafe",))


def test_the_form_follows_the_labeling_config() -> None:
    shipped = ReviewForm.parse(REVIEW_XML).quality
    assert shipped is not None and shipped.kind == CHOICES_KIND
    assert shipped.ratings == (1, 2, 3, 4, 5) and shipped.to_name == "response"
    assert ReviewForm.read(STARS_XML).quality_kind == RATING_KIND
    assert ReviewForm.read("<View/>").quality is None and ReviewForm.read("<View").quality is None
    assert quality_result(2) == {"from_name": "quality", "to_name": "response",
                                 "type": "choices", "value": {"choices": ["2"]}}  # fmt: skip
    assert quality_result(2, RATING_KIND)["value"] == {"rating": 2}


def test_a_machine_reviewer_writes_the_projects_form_whatever_it_returned() -> None:
    review = Review(rating=2, categories=("refusal",))
    assert result_of(review)[0]["value"] == {"choices": ["2"]}
    assert result_of(review, RATING_KIND)[0]["value"] == {"rating": 2}
    for form in ({"choices": ["5"]}, {"rating": 5}):
        returned = [{"from_name": "quality", "to_name": "response", "value": form}]
        assert checked_review(lambda data, r=returned: r, {}).rating == 5


def test_a_whole_float_rating_is_written_as_the_choice_it_names() -> None:
    star_result = [{"from_name": "quality", "value": {"rating": 4.0}}]
    for returned in (Review(rating=4.0), star_result):  # type: ignore[arg-type]
        verdict = checked_review(lambda data, r=returned: r, {})
        assert verdict.rating == 4 and type(verdict.rating) is int
        assert read_result(result_of(verdict)).rating == 4


def _text(name: str, *parts: Any) -> dict[str, Any]:
    return {"from_name": name, "to_name": "response", "type": "textarea",
            "value": {"text": list(parts)}}  # fmt: skip


def test_a_result_list_reads_into_its_values() -> None:
    full = [
        quality_result(2, RATING_KIND),
        failure_result(["refusal", "format"]),
        _text("better_response", "Paris.", "It is the capital.\n"),
        _text("note", "  too curt  "),
        {"from_name": "elsewhere", "value": {"choices": ["x"]}},  # not a review control
    ]
    assert read_result(full) == ResultValues(
        rating=2,
        categories=("refusal", "format"),
        better="Paris.\nIt is the capital.",
        note="too curt",
    )
    assert read_result([]) == ResultValues()
    assert read_result([_text("note", " \n"), _text("better_response")]) == ResultValues()


def test_junk_items_are_skipped_and_the_rest_read() -> None:
    junk = [
        "quality",
        None,
        {"from_name": "quality"},
        {"from_name": "quality", "value": "3"},
        {"from_name": "quality", "value": {"choices": ["good"]}},
        {"from_name": "failure", "value": {"choices": "unsafe"}},
        {"from_name": "note", "value": {"text": "not a list"}},
    ]
    assert read_result(junk) == ResultValues()
    assert read_result([quality_result(3), *junk, failure_result(["other"])]) == ResultValues(
        rating=3, categories=("other",)
    )


def test_a_later_item_for_a_control_replaces_an_earlier_one() -> None:
    twice = [
        quality_result(2),
        failure_result(["refusal"]),
        _text("note", "first"),
        quality_result(5, RATING_KIND),
        failure_result([]),
        _text("note", ""),  # emptied: no note, not the first one
    ]
    assert read_result(twice) == ResultValues(rating=5)


def _returning(result: list[Any]) -> Any:
    return lambda data: result


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        (["quality"], "result item 'quality' has no 'from_name' and 'value'"),
        ([{"from_name": "quality", "value": "3"}], "has no 'from_name' and 'value'"),
        ([failure_result(["refusal"])], "the result has no 'quality' rating"),
        ([{"from_name": "quality", "value": {"rating": 3.5}}], "rating 3.5 is not an integer"),
        ([{"from_name": "quality", "value": {"rating": "3"}}], "rating '3' is not an integer"),
        ([quality_result(9)], "rating 9 is not an integer from 1 to 5"),
        ([{"from_name": "quality", "value": {"choices": ["good"]}}], "rating None is not"),
        (
            [quality_result(3), {"from_name": "failure", "value": {"choices": "unsafe"}}],
            "categories 'unsafe' is not a list of names",
        ),
        ([quality_result(3), failure_result(["boring"])], "unknown failure categories ['boring']"),
    ],
)
def test_a_machine_reviewers_malformed_result_is_rejected_with_the_reason(
    result: list[Any], reason: str
) -> None:
    with pytest.raises(ReviewRejected) as rejected:
        checked_review(_returning(result), {}, CATEGORIES)
    assert reason in str(rejected.value)


def test_a_machine_reviewers_result_reads_as_the_export_reads_it() -> None:
    result = [
        quality_result(4),
        failure_result(["format"]),
        _text("better_response", "A better one.\n"),
        _text("note", "  "),
    ]
    assert checked_review(_returning(result), {}, CATEGORIES) == Review(
        rating=4, categories=("format",), better="A better one."
    )


RESULT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
    | st.sampled_from([QUALITY_FIELD, "choices", "rating", "text", "9" * 5000]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["from_name", "value", "rating", "choices", "text"]), inner,
                      max_size=3),
    max_leaves=10,
)  # fmt: skip


@settings(max_examples=150, deadline=timedelta(seconds=1), database=None)
@example(True)
@example([{"from_name": QUALITY_FIELD, "value": {"rating": 9.3e18}}])
@example([{"from_name": QUALITY_FIELD, "value": {"rating": float("nan")}}])
@example([{"from_name": QUALITY_FIELD, "value": {"choices": ["9" * 5000]}}])
@given(RESULT_VALUES)
def test_whatever_a_server_sends_as_a_result_reads_as_values_or_none(result: Any) -> None:
    values = read_result(result)
    assert values.rating is None or 0 <= values.rating <= 100
