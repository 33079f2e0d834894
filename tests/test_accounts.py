"""Reviewer accounts against a real Label Studio: each has its own token, and what it annotates
is stored under it, never under the admin."""

from __future__ import annotations

import httpx
import pytest

from annotation.accounts import ensure_reviewer_account
from annotation.labelstudio import LabelStudioError, task_from_record
from tests.helpers.labelstudio import REVIEW_XML_PATH
from tests.helpers.records import rollout_record

pytestmark = pytest.mark.e2e

RATING = [{"from_name": "quality", "to_name": "response", "type": "rating",
           "value": {"rating": 3}}]  # fmt: skip


def _task(sample_id: str) -> dict:
    return task_from_record(rollout_record(0, run_id="accounts") | {"sample_id": sample_id})


def test_two_reviewer_accounts_annotate_under_their_own_users(label_studio) -> None:
    first = ensure_reviewer_account(label_studio.url, label_studio.api_key, "Bot-A@lowtide.local")
    second = ensure_reviewer_account(label_studio.url, label_studio.api_key, "bot-b@lowtide.local")
    admin_id = label_studio.get("/api/current-user/whoami").json()["id"]
    assert first.email == "bot-a@lowtide.local"
    assert len({first.user_id, second.user_id, admin_id}) == 3
    assert len({first.api_key, second.api_key, label_studio.api_key}) == 3
    assert first.api_key not in repr(first)

    # Asked again (another process, a rerun): the same account and token, no second user.
    again = ensure_reviewer_account(label_studio.url, label_studio.api_key, "bot-a@lowtide.local")
    assert (again.user_id, again.api_key) == (first.user_id, first.api_key)
    emails = [user["email"] for user in label_studio.get("/api/users/").json()]
    assert emails.count("bot-a@lowtide.local") == 1

    with label_studio.client() as admin:
        project = admin.ensure_project("accounts test", REVIEW_XML_PATH.read_text())
        task_ids = admin.import_tasks(project, [_task("acc-1"), _task("acc-2"), _task("acc-3")])
    made = {}
    for account, task_id in zip((first, second), task_ids, strict=False):
        with label_studio.client(account.api_key) as client:
            made[account.user_id] = client.create_annotation(task_id, RATING)
    with label_studio.client() as admin:
        made[admin_id] = admin.create_annotation(task_ids[2], RATING)
    for user_id, annotation_id in made.items():
        stored = label_studio.get(f"/api/annotations/{annotation_id}/").json()
        assert stored["completed_by"] == user_id


def test_an_account_lowtide_cannot_sign_in_to_is_one_clear_error(label_studio) -> None:
    # A person's account: made by the admin with no password lowtide knows.
    response = httpx.post(
        f"{label_studio.url}/api/users/",
        json={"email": "person@lowtide.local", "username": "person"},
        headers={"Authorization": f"Token {label_studio.api_key}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    with pytest.raises(LabelStudioError, match="cannot sign in") as raised:
        ensure_reviewer_account(label_studio.url, label_studio.api_key, "person@lowtide.local")
    assert label_studio.api_key not in str(raised.value)


def test_a_wrong_admin_token_is_an_auth_error(label_studio) -> None:
    with pytest.raises(LabelStudioError, match="HTTP 401") as raised:
        ensure_reviewer_account(label_studio.url, "not-the-token-1234", "bot-c@lowtide.local")
    assert "not-the-token-1234" not in str(raised.value)
