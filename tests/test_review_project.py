"""The review project as Label Studio serves it (real server): instructions, the saved
"Unreviewed, lowest reward first" view, a numeric reward column."""

from __future__ import annotations

import json

import pytest

from annotation.labelstudio import task_from_record
from annotation.review_instructions import REVIEW_VIEW_TITLE
from tests.helpers.labelstudio import REVIEW_XML_PATH, LabelStudioServer
from tests.helpers.records import rollout_record

pytestmark = [pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(600)]

REVIEW_XML = REVIEW_XML_PATH.read_text()


def tasks_in_view(server: LabelStudioServer, project_id: int, view_id: int) -> list[dict]:
    body = server.get("/api/tasks", project=project_id, view=view_id, page_size=100).json()
    return body["tasks"]


def test_project_opens_with_instructions_and_the_review_view(label_studio: LabelStudioServer):
    with label_studio.client() as client:
        project_id = client.ensure_project("review setup", REVIEW_XML)
        project = label_studio.get(f"/api/projects/{project_id}").json()
        assert project["show_instruction"] is True
        instruction = project["expert_instruction"]
        for words in ("5 stars", "excellent", "hallucination", "key <kbd>i</kbd>",
                      "value × weight = contribution", "Ctrl"):  # fmt: skip
            assert words in instruction

        views = label_studio.get("/api/dm/views", project=project_id).json()
        assert [v["data"]["title"] for v in views] == [REVIEW_VIEW_TITLE]
        # Idempotent: a second start neither duplicates the view nor fails.
        assert client.ensure_project("review setup", REVIEW_XML) == project_id
        assert len(label_studio.get("/api/dm/views", project=project_id).json()) == 1


def test_the_view_shows_unreviewed_tasks_by_numeric_reward_lowest_first(
    label_studio: LabelStudioServer,
) -> None:
    rewards = [10.0, 9.0, 100.0, None, -0.5, 2.0]
    records = [rollout_record(i, run_id="sort-run") for i in range(len(rewards))]
    for record, reward in zip(records, rewards, strict=True):
        record["reward"] = reward
    with label_studio.client() as client:
        project_id = client.ensure_project("review sort", REVIEW_XML)
        task_ids = client.import_tasks(project_id, [task_from_record(r) for r in records])
        # One task reviewed: it leaves the view.
        client.create_annotation(
            task_ids[rewards.index(-0.5)],
            [{"from_name": "quality", "to_name": "response", "type": "rating",
              "value": {"rating": 2}}],
        )  # fmt: skip
        view_id = client.ensure_review_view(project_id)

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
