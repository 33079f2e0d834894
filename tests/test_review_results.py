"""The quality rating in both forms Label Studio stores it: review.xml's single choice ("3")
and older projects' star Rating ({"rating": 3}); read alike, written in the project's form."""

from __future__ import annotations

from annotation.export import _result_values
from annotation.review_results import (
    CHOICES_KIND,
    RATING_KIND,
    quality_control,
    quality_kind,
    quality_of,
    quality_result,
)
from lowtide.loop.reviewer import Review, checked_review, result_of
from tests.helpers.labelstudio import REVIEW_XML_PATH

REVIEW_XML = REVIEW_XML_PATH.read_text()
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
    assert _result_values(old) == {"quality": 4}
    assert _result_values(new) == {"quality": 4, "failure": ["unsafe"]}


def test_the_form_follows_the_labeling_config() -> None:
    shipped = quality_control(REVIEW_XML)
    assert shipped is not None and shipped.kind == CHOICES_KIND
    assert shipped.ratings == (1, 2, 3, 4, 5) and shipped.to_name == "response"
    assert quality_kind(STARS_XML) == RATING_KIND
    assert quality_control("<View/>") is None and quality_control("<View") is None
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
