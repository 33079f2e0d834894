"""`annotation.labelstudio` against a real Label Studio (the session's)."""

from __future__ import annotations

import re
import secrets
import time

import pytest

from annotation.labelstudio import LabelStudioClient, LabelStudioError, task_from_record
from lowtide.services.process import free_port
from tests.conftest import REPO
from tests.helpers.labelstudio import LabelStudioServer
from tests.helpers.proxies import LostAnswerProxy

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(900)]

REVIEW_XML = (REPO / "configs" / "label_studio" / "review.xml").read_text()
LOOKUP_COUNT = 1500  # above the ~1,000 keys that overflow one URL: the lookup must chunk


@pytest.fixture
def server(label_studio: LabelStudioServer) -> LabelStudioServer:
    return label_studio


def record(i: int, reward: float | None = 0.05) -> dict:
    return {
        "sample_id": f"sample-{i:05d}",
        "run_id": "run-1",
        "step": i,
        "prompt": f"prompt {i}",
        "response": f"response {i}",
        "reward": reward,
        "reward_details": {"format": 0.0, "correctness": None},
    }


@pytest.mark.unit
def test_task_from_record_fills_every_field_the_config_uses() -> None:
    task = task_from_record(record(3, reward=None))
    data = task["data"]
    assert set(task) == {"data"}
    # absent, not a word or null: the reward column must stay numeric for sorting and filtering
    assert "reward" not in data and data["reward_text"] == "n/a"
    assert data["reward_details"] == (
        "correctness: n/a\nformat: 0\n"
        "total: n/a (component weights were not recorded by the trainer)"
    )
    assert task_from_record(record(1, reward=0.125))["data"]["reward"] == 0.125
    used = set(re.findall(r"\$(\w+)", REVIEW_XML))
    assert used == {"trace", "prompt", "response_visible", "reward_shown", "reward_text",
                    "reward_details"}  # fmt: skip
    assert used <= set(data)
    assert data["response"] == "response 3"  # verbatim: the export reads it


def test_ensure_project_is_idempotent_and_updates_the_config(server: LabelStudioServer) -> None:
    with server.client() as client:
        project_id = client.ensure_project("review idempotent", REVIEW_XML)
        assert client.ensure_project("review idempotent", REVIEW_XML) == project_id
        # A title that contains ours is another project (the server filters by substring).
        assert client.ensure_project("review idempotent 2", REVIEW_XML) != project_id
        client.import_tasks(project_id, [task_from_record(record(i)) for i in range(3)])

        changed = REVIEW_XML.replace("A better response (optional)", "A better response")
        assert client.ensure_project("review idempotent", changed) == project_id
        label_config = server.get(f"/api/projects/{project_id}").json()["label_config"]
        assert "A better response (optional)" not in label_config
        assert client.count_tasks(project_id) == 3


def test_a_create_whose_answer_was_lost_is_not_sent_again(server: LabelStudioServer) -> None:
    """A gateway that answers 502 after Label Studio made the project (or the annotation): the
    SDK's own retry would send the POST again and make a second one. The create is sent once,
    the call fails, and the next call finds what the first one made."""
    title = f"lost answer {secrets.token_hex(3)}"
    task_ids: list[int] = []  # the annotation's task, once there is one

    def creates(method: str, path: str) -> bool:
        created = {"/api/projects", *(f"/api/tasks/{n}/annotations" for n in task_ids)}
        return method == "POST" and path.split("?")[0].rstrip("/") in created

    with LostAnswerProxy(server.url, creates) as proxy, proxy_client(proxy, server) as client:
        with pytest.raises(LabelStudioError, match="HTTP 502"):
            client.ensure_project(title, REVIEW_XML)
        with server.client() as direct:
            made = [pid for pid, name in direct.projects_titled(title) if name == title]
            assert len(made) == 1, "the create was sent again"
            assert client.ensure_project(title, REVIEW_XML) == made[0]
            direct.import_tasks(made[0], [task_from_record(record(0))])
            task_ids.append(direct.task_ids_by_sample_id(made[0], ["sample-00000"])["sample-00000"])
        with pytest.raises(LabelStudioError, match="HTTP 502"):
            client.create_annotation(task_ids[0], [])
        assert len(proxy.lost) == 2
    annotations = server.get(f"/api/tasks/{task_ids[0]}/annotations/").json()
    assert len(annotations) == 1, "the annotation was sent again"


def proxy_client(proxy: LostAnswerProxy, server: LabelStudioServer) -> LabelStudioClient:
    return LabelStudioClient(proxy.url, server.api_key)


def test_bulk_import_and_lookup_by_sample_id(server: LabelStudioServer) -> None:
    with server.client() as client:
        project_id = client.ensure_project("review import", REVIEW_XML)
        records = [record(i) for i in range(LOOKUP_COUNT)]
        started = time.monotonic()
        ids = client.import_tasks(project_id, [task_from_record(r) for r in records])
        imported_s = time.monotonic() - started
        assert len(ids) == LOOKUP_COUNT and ids == sorted(ids) and len(set(ids)) == LOOKUP_COUNT
        assert client.count_tasks(project_id) == LOOKUP_COUNT

        started = time.monotonic()
        found = client.task_ids_by_sample_id(
            project_id, [r["sample_id"] for r in records] + ["not-imported"]
        )
        looked_up_s = time.monotonic() - started
        assert found == {r["sample_id"]: task_id for r, task_id in zip(records, ids, strict=True)}
        print(f"import {LOOKUP_COUNT}: {imported_s:.2f} s, lookup: {looked_up_s:.2f} s")

        # No dedupe on the server: a second import makes a second task; the lookup keeps the first.
        again = client.import_tasks(project_id, [task_from_record(records[0])])
        assert again[0] > ids[-1]
        assert client.task_ids_by_sample_id(project_id, [records[0]["sample_id"]]) == {
            records[0]["sample_id"]: ids[0]
        }
        assert client.import_tasks(project_id, []) == []


def test_wrong_token_says_so_without_the_key(server: LabelStudioServer) -> None:
    wrong = "wrong-" + secrets.token_hex(16)
    with server.client(api_key=wrong) as client, pytest.raises(LabelStudioError) as caught:
        client.ensure_project("review token", REVIEW_XML)
    message = str(caught.value)
    assert "token" in message and "LABEL_STUDIO_API_KEY" in message
    assert wrong not in message and server.api_key not in message


def test_unknown_project_is_a_404_message(server: LabelStudioServer) -> None:
    with server.client() as client, pytest.raises(LabelStudioError, match="no project 999999"):
        client.count_tasks(999999)


def test_bad_labeling_config_is_a_clear_400(server: LabelStudioServer) -> None:
    with server.client() as client, pytest.raises(LabelStudioError) as caught:
        client.ensure_project("review bad config", "<View><Text name='x' value='$x'/>")
    assert "labeling config (HTTP 400)" in str(caught.value)


@pytest.mark.integration
def test_unreachable_server_fails_fast() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    client = LabelStudioClient(url, "some-key", timeout_s=30)
    with client, pytest.raises(LabelStudioError) as caught:
        client.ensure_project("review unreachable", REVIEW_XML)
    assert time.monotonic() - started < 10
    assert url in str(caught.value) and "lowtide up" in str(caught.value)
