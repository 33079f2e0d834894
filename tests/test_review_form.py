"""The review form, parsed once (annotation.review_form): what the shipped review.xml offers,
an older project's stars, a team's own categories, aliases, and a config that is not XML."""

from __future__ import annotations

import pytest

from annotation.review_form import FormChoice, ReviewForm, ReviewFormError
from annotation.review_results import CHOICES_KIND, RATING_KIND
from lowtide.loop.reviewer import Review, ReviewRejected, checked_review
from tests.helpers.labelstudio import REVIEW_XML_PATH

pytestmark = pytest.mark.unit

OWN_FORM = """<View>
  <Text name="response" value="$response"/>
  <Choices name="quality" toName="response">
    <Choice value="bad" alias="1" hotkey="q"/><Choice value="fine" alias="3"/>
    <Choice value="great" alias="5" hotkey="w"/>
  </Choices>
  <Choices name="failure" toName="response" choice="multiple">
    <Choice value="reward hacking" hotkey="h" hint="Games the reward"/>
    <Choice value="verbose"/>
  </Choices>
</View>"""


def test_the_shipped_form_offers_five_keyed_ratings_and_seven_categories() -> None:
    form = ReviewForm.from_file(REVIEW_XML_PATH)
    assert form.quality is not None and form.quality.kind == CHOICES_KIND
    assert form.quality.ratings == (1, 2, 3, 4, 5)
    assert form.quality.keys == tuple((r, str(r)) for r in range(1, 6))
    assert form.categories == (
        "refusal", "hallucination", "off-topic", "sycophancy", "unsafe", "format", "other"
    )  # fmt: skip
    assert form.failures[0] == FormChoice(
        "refusal", "refusal", "d", "Declined or deflected a request it should have answered"
    )
    assert form.failure_to == "response"


def test_a_teams_own_form_is_read_as_it_is_written() -> None:
    form = ReviewForm.parse(OWN_FORM)
    assert form.quality is not None
    assert form.quality.ratings == (1, 3, 5)  # what the aliases store
    assert form.quality.keys == ((1, "q"), (5, "w"))  # only the choices with a key
    assert form.categories == ("reward hacking", "verbose")
    assert form.failures[1] == FormChoice("verbose", "verbose")
    # The loop's reviewer is held to this project's categories, not the shipped ones.
    verdict = Review(rating=1, categories=("reward hacking",))
    assert checked_review(lambda data: verdict, {}, form.categories) == verdict
    with pytest.raises(ReviewRejected, match=r"unknown failure categories \['refusal'\]"):
        checked_review(lambda data: Review(1, ("refusal",)), {}, form.categories)


def test_an_older_projects_stars_and_a_form_without_controls() -> None:
    stars = ReviewForm.parse(
        "<View><Text name='r' value='$response'/>"
        "<Rating name='quality' toName='r' maxRating='4'/></View>"
    )
    assert stars.quality is not None and stars.quality.kind == RATING_KIND
    assert stars.quality.ratings == (1, 2, 3, 4) and stars.categories == ()
    bare = ReviewForm.parse("<View/>")
    assert bare.quality is None and bare.quality_kind == CHOICES_KIND and bare.failure_to is None


def test_a_config_that_is_not_xml_is_an_error_to_parse_and_an_empty_form_to_read() -> None:
    with pytest.raises(ReviewFormError, match="not valid XML"):
        ReviewForm.parse("<View")
    assert ReviewForm.read("<View") == ReviewForm(quality=None, failure_to=None, failures=())
