"""The review project as Label Studio serves it (real server): instructions, the saved view of
what is left to review ("Unreviewed" when blind, the default; "Unreviewed, lowest reward first"
otherwise), a numeric reward column."""

from __future__ import annotations

import json
import re

import pytest

from annotation.labelstudio import task_from_record
from annotation.review_instructions import BLIND_VIEW_TITLE, REVIEW_VIEW_TITLE
from annotation.review_results import RATING_KIND, quality_result
from tests.helpers.labelstudio import REVIEW_XML_PATH, LabelStudioServer
from tests.helpers.records import rollout_record

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(600)]

REVIEW_XML = REVIEW_XML_PATH.read_text()
QUALITY_CHOICES = re.search(r'  <Choices name="quality".*?</Choices>\n', REVIEW_XML, re.S)
STARS = (  # the quality control of projects made before the digit keys set the rating
    '  <Rating name="quality" toName="response" maxRating="5" icon="star" hotkey="1" '
    'required="true"/>\n'
)


def tasks_in_view(server: LabelStudioServer, project_id: int, view_id: int) -> list[dict]:
    body = server.get("/api/tasks", project=project_id, view=view_id, page_size=100).json()
    return body["tasks"]


def test_project_opens_with_instructions_and_the_review_view(label_studio: LabelStudioServer):
    with label_studio.client() as client:
        project_id = client.ensure_project("review setup", REVIEW_XML)
        project = label_studio.get(f"/api/projects/{project_id}").json()
        assert project["show_instruction"] is True
        instruction = project["expert_instruction"]
        for words in ("<b>5</b> (key <kbd>5</kbd>): excellent", "<b>3</b> (key <kbd>3</kbd>)",
                      "hallucination", "key <kbd>i</kbd>", "value × weight = contribution",
                      "Ctrl"):  # fmt: skip
            assert words in instruction

        views = label_studio.get("/api/dm/views", project=project_id).json()
        assert [v["data"]["title"] for v in views] == [BLIND_VIEW_TITLE]
        # Idempotent: a second start neither duplicates the view nor fails.
        assert client.ensure_project("review setup", REVIEW_XML) == project_id
        assert len(label_studio.get("/api/dm/views", project=project_id).json()) == 1
        # The review no longer blind: the same view becomes the one with the reward.
        assert client.ensure_project("review setup", REVIEW_XML, blind=False) == project_id
        views = label_studio.get("/api/dm/views", project=project_id).json()
        assert [v["data"]["title"] for v in views] == [REVIEW_VIEW_TITLE]
        assert views[0]["data"]["ordering"] == ["tasks:data.reward"]
        project = label_studio.get(f"/api/projects/{project_id}").json()
        assert "the reward is a hint, not the answer" in project["expert_instruction"]


def test_the_view_shows_unreviewed_tasks_by_numeric_reward_lowest_first(
    label_studio: LabelStudioServer,
) -> None:
    rewards = [10.0, 9.0, 100.0, None, -0.5, 2.0]
    records = [rollout_record(i, run_id="sort-run") for i in range(len(rewards))]
    for record, reward in zip(records, rewards, strict=True):
        record["reward"] = reward
    with label_studio.client() as client:
        project_id = client.ensure_project("review sort", REVIEW_XML, blind=False)
        task_ids = client.import_tasks(project_id, [task_from_record(r) for r in records])
        # One task reviewed: it leaves the view.
        client.create_annotation(
            task_ids[rewards.index(-0.5)],
            [quality_result(2)],
        )
        view_id = client.ensure_review_view(project_id, blind=False)

    shown = [
        task["data"].get("reward") for task in tasks_in_view(label_studio, project_id, view_id)
    ]
    # Numeric, not textual ("10" < "100" < "2" < "9"); a missing reward goes last.
    assert shown == [2.0, 9.0, 10.0, 100.0, None]

    # A numeric filter on the reward column, as the Data Manager sends it for a Number column;
    # the task without a reward passes no numeric filter.
    query = {
        "filters": {
            "conjunction": "and",
            "items": [
                {
                    "filter": "filter:tasks:data.reward",
                    "operator": "less",
                    "type": "Number",
                    "value": 9.5,
                }
            ],
        },
        "ordering": ["tasks:data.reward"],
    }
    body = label_studio.get(
        "/api/tasks", project=project_id, query=json.dumps(query), page_size=100
    ).json()
    assert [task["data"].get("reward") for task in body["tasks"]] == [-0.5, 2.0, 9.0]


def test_a_project_with_star_reviews_keeps_its_rating_and_exports_both_forms(
    label_studio: LabelStudioServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Projects made before the rating became one choice of 1-5 hold `{"rating": N}`
    annotations, and Label Studio refuses a config without a Rating while they exist: such a
    project keeps its stars (with a warning, not a failed worker start), results for it are
    written in its form, and the export reads both forms. Without reviews, it takes the new
    config."""
    import redis

    from annotation.config import AnnotationConfig
    from annotation.importer import ImportContext
    from annotation.review_form import ReviewForm
    from annotation.review_results import CHOICES_KIND, ResultValues, read_result

    assert QUALITY_CHOICES is not None
    stars_xml = REVIEW_XML.replace(QUALITY_CHOICES[0], STARS)
    assert "<Rating" in stars_xml and "<Rating" not in REVIEW_XML
    tasks = [task_from_record(rollout_record(i, run_id="stars")) for i in range(2)]
    with label_studio.client() as client:
        unreviewed = client.ensure_project("review stars, none yet", stars_xml)
        client.import_tasks(unreviewed, tasks)
        assert client.ensure_project("review stars, none yet", REVIEW_XML) == unreviewed
        assert client.labeling_config(unreviewed).strip() == REVIEW_XML.strip()

        project_id = client.ensure_project("review stars", stars_xml)
        (old, new) = client.import_tasks(project_id, tasks)
        client.create_annotation(old, [quality_result(2, RATING_KIND)])
        with caplog.at_level("WARNING"):
            assert client.ensure_project("review stars", REVIEW_XML) == project_id
        assert "keeps its labeling config" in caplog.text
        kept = client.labeling_config(project_id)
        kind = ReviewForm.read(kept).quality_kind
        assert kept.strip() == stars_xml.strip() and kind == RATING_KIND
        client.create_annotation(new, [quality_result(4, kind)])
    # The worker's suggestions for it take the same form.
    context = ImportContext.create(
        AnnotationConfig(
            label_studio_url=label_studio.url, api_key=label_studio.api_key,
            project="review stars", labeling_config=str(REVIEW_XML_PATH),
            suggestions={"judge": "score_bands"},
        ),
        redis.Redis.from_url("redis://127.0.0.1:6379/0"),
        queue_name="stars-test",
    )  # fmt: skip
    try:
        assert context.suggester is not None
        assert context.suggester.controls.rating_kind == CHOICES_KIND  # the file's, until...
        assert context.project_id() == project_id
        assert context.suggester.controls.rating_kind == RATING_KIND  # ...the project's
    finally:
        context.client.close()
    with label_studio.client() as client:
        # Its instructions are the stars' (click a star), not the digit keys'.
        instruction = label_studio.get(f"/api/projects/{project_id}").json()["expert_instruction"]
        assert "5 stars" in instruction and "Click a star" in instruction
    ratings = [
        read_result(label_studio.get(f"/api/tasks/{task}/annotations/").json()[0]["result"])
        for task in (old, new)
    ]
    assert ratings == [ResultValues(rating=2), ResultValues(rating=4)]
    # And review.xml's form reads the same.
    assert read_result([quality_result(3)]) == ResultValues(rating=3)
