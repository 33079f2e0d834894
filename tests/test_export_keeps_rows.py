"""The export's files only grow, without a server: stored rows stay and are merged with what Label
Studio holds now, rows whose reviews were deleted there are marked (and left out of training
data), cursors are kept per server whatever its URL is spelled, one export writes at a time, and
a task's text is sealed by the worker and checked by the export."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from annotation.compare_form import comparison_task
from annotation.export import ExportError, export_annotations
from annotation.export_deletions import find_gone
from annotation.export_files import exclusive
from annotation.export_rows import ExportPaths
from annotation.export_seals import SEAL_REMOVED, SealGate
from annotation.export_state import CursorFile, ProjectState, Server
from annotation.labelstudio import task_from_record
from annotation.review_results import quality_result
from annotation.reward_model.data import load_rm_data
from annotation.task_seal import SEAL_FIELD, SealCheck, check_seal, seal_key, sealed
from tests.helpers.labelstudio import REVIEW_XML_PATH

pytestmark = pytest.mark.unit

KEY = seal_key("a-task-key-for-tests", None)
ORGANIZATION = (1, "2024-01-01T00:00:00.123456Z")


def _record(sample_id: str, response: str = "No.") -> dict[str, Any]:
    return {"sample_id": sample_id, "run_id": "r", "step": 2, "prompt": "Name a colour.",
            "response": response, "reward": 0.1}  # fmt: skip


def _review(annotation_id: int, reviewer: int, day: int, stars: int, better: str | None = None):
    result: list[dict[str, Any]] = [
        {"from_name": "quality", "type": "rating", "value": {"rating": stars}}
    ]
    if better:
        result.append({"from_name": "better_response", "type": "textarea",
                       "value": {"text": [better]}})  # fmt: skip
    return {"id": annotation_id, "completed_by": reviewer, "was_cancelled": False,
            "updated_at": f"2024-01-0{day}T00:00:00Z", "result": result}  # fmt: skip


class FakeLabelStudio:
    """Our client's interface as the export uses it: one project, tasks a test edits."""

    def __init__(self, url: str = "http://127.0.0.1:8080") -> None:
        self.url = url
        self.seal_key = KEY
        self.tasks: dict[int, dict[str, Any]] = {}
        self.calls: Counter[str] = Counter()
        self._changes = 0

    def add(self, task_id: int, record: dict[str, Any], *annotations: dict[str, Any]) -> None:
        task = sealed(task_from_record(record), KEY)
        self.tasks[task_id] = {"id": task_id, **task, "annotations": list(annotations)}
        self.touch(task_id)

    def touch(self, task_id: int) -> None:
        """As Label Studio moves a task's updated_at when its annotations change."""
        self._changes += 1
        self.tasks[task_id]["updated_at"] = f"2024-02-01T00:00:{self._changes:02d}Z"

    def organization(self) -> tuple[int, str]:
        return ORGANIZATION

    def projects_titled(self, text: str) -> list[tuple[int, str]]:
        return [(1, text)]

    def labeling_config(self, project_id: int) -> str:
        return REVIEW_XML_PATH.read_text()

    def annotated_tasks(self, project_id: int, since: str | None = None) -> list[dict]:
        found = [t for t in self.tasks.values() if t["id"] in self._annotated()]
        found = [t for t in found if since is None or t["updated_at"] > since]
        return sorted(found, key=lambda task: task["updated_at"])

    def annotated_task_count(self, project_id: int) -> int:
        self.calls["count"] += 1
        return len(self._annotated())

    def annotated_task_ids(self, project_id: int) -> set[int]:
        self.calls["ids"] += 1
        return self._annotated()

    def project_exists(self, project_id: int) -> bool:
        return project_id == 1

    def _annotated(self) -> set[int]:
        return {
            task_id
            for task_id, task in self.tasks.items()
            if any(not a["was_cancelled"] for a in task["annotations"])
        }


def _rows(path: Path) -> dict[str, dict]:
    return {row["sample_id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_stored_rows_stay_merged_and_marked_when_their_reviews_are_deleted(tmp_path: Path) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2, "Blue."), _review(2, 11, 1, 3))
    client.add(8, _record("s-2"), _review(3, 10, 2, 1, "Green."))
    first = export_annotations(client, "p", out)
    assert (first.new_rows, first.total_rows, first.preference_rows) == (2, 2, 2)

    # Another spelling of the same server: its cursor still applies (nothing is read again),
    # and the task deleted since is found by one count and confirmed by two id listings.
    client.url = "http://localhost:8080"
    del client.tasks[8]
    client.calls.clear()
    second = export_annotations(client, "p", out)
    assert second.tasks_read == 0 and second.deleted == ["s-2"] and second.written
    assert (client.calls["count"], client.calls["ids"]) == (1, 2)
    rows = _rows(out)
    assert set(rows) == {"s-1", "s-2"}
    assert rows["s-2"]["meta"]["deleted_in_label_studio"] is True
    assert rows["s-2"]["meta"]["reviews"][0]["annotation_id"] == 3  # kept as it was
    assert rows["s-1"]["meta"]["deleted_in_label_studio"] is False
    assert [p["sample_id"] for p in map(json.loads, out.with_name(
        "annotations.preferences.jsonl").read_text().splitlines())] == ["s-1"]  # fmt: skip
    assert {pair.sample_id for pair in load_rm_data(out).pairs} == {"s-1"}
    assert (second.total_rows, second.deleted_rows) == (1, 1)

    # Nothing changed: one count, no listing, nothing written.
    client.calls.clear()
    quiet = export_annotations(client, "p", out)
    assert not quiet.written and (client.calls["count"], client.calls["ids"]) == (1, 0)

    # `--since all` reads every task again, and still keeps the deleted row.
    again = export_annotations(client, "p", out, since="all")
    assert again.tasks_read == 1 and not again.written and set(_rows(out)) == {"s-1", "s-2"}

    # One of two reviewers deletes their review: the task is read again, its row rebuilt.
    client.tasks[7]["annotations"].pop()
    client.touch(7)
    withdrawn = export_annotations(client, "p", out)
    assert withdrawn.withdrawn == ["s-1"] and withdrawn.updated_rows == 1
    assert _rows(out)["s-1"]["meta"]["reviewers"] == 1

    # Only a rebuild drops rows, after a copy of the files.
    rebuilt = export_annotations(client, "p", out, rebuild=True)
    assert set(_rows(out)) == {"s-1"} and rebuilt.backup is not None
    assert set(_rows(rebuilt.backup / "annotations.jsonl")) == {"s-1", "s-2"}
    assert (rebuilt.backup / "annotations.hf").is_dir()
    assert (rebuilt.backup / "annotations.cursor.json").is_file()


def test_a_new_server_on_the_same_url_starts_its_own_cursor(tmp_path: Path) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2))
    export_annotations(client, "p", out)
    fresh = FakeLabelStudio()  # same URL, another organization: task 7 is another task
    fresh.organization = lambda: (1, "2025-06-01T00:00:00Z")  # type: ignore[method-assign]
    fresh.add(7, _record("s-9"), _review(1, 10, 1, 4))
    summary = export_annotations(fresh, "p", out)
    assert summary.tasks_read == 1 and summary.deleted == []  # nothing of the first is judged
    rows = _rows(out)
    assert set(rows) == {"s-1", "s-9"} and rows["s-1"]["meta"]["deleted_in_label_studio"] is False
    servers = json.loads(ExportPaths.beside(out).cursor.read_text())["servers"]
    assert len(servers) == 2


def test_the_cursor_is_kept_per_server_and_holds_no_password(tmp_path: Path) -> None:
    path = tmp_path / "annotations.cursor.json"
    spelled = Server.of(ORGANIZATION, "http://me:s3cret-pw@localhost:8080/?token=t0ken-value")
    other = Server.of(ORGANIZATION, "http://127.0.0.1:8080")
    assert spelled.key == other.key
    assert Server.of((1, "2025-01-01T00:00:00Z"), "http://127.0.0.1:8080").key != other.key
    CursorFile.read(path).write(spelled, {3: ProjectState("2024-05-01T00:00:00Z", 12, {4})})
    text = path.read_text()
    assert "s3cret-pw" not in text and "t0ken-value" not in text
    assert CursorFile.read(path).projects(other, "http://127.0.0.1:8080") == {
        3: ProjectState("2024-05-01T00:00:00Z", 12, {4})
    }

    # An earlier version's file, kept per exact URL (a password in it): read for that URL's
    # server, and rewritten keyed by the server, without the password.
    legacy = {"label_studio_url": "http://me:s3cret-pw@ls:8080", "projects": {"3": "2024-05-01"}}
    path.write_text(json.dumps(legacy))
    assert CursorFile.read(path).projects(other, "http://elsewhere:8080") == {}
    cursor = CursorFile.read(path)
    states = cursor.projects(other, "http://ls:8080/")
    assert states == {3: ProjectState("2024-05-01")}
    cursor.write(other, states)
    assert "s3cret-pw" not in path.read_text()
    assert CursorFile.read(path).projects(other, "http://anything:1") == states


def test_an_earlier_cursor_file_resumes_and_loses_its_password(tmp_path: Path) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2))
    export_annotations(client, "p", out)
    cursor = ExportPaths.beside(out).cursor
    stamp = client.tasks[7]["updated_at"]
    legacy = {"label_studio_url": "http://me:s3cret-pw@127.0.0.1:8080", "project_id": 1,
              "updated_at": stamp}  # fmt: skip
    cursor.write_text(json.dumps(legacy))
    summary = export_annotations(client, "p", out)
    assert summary.tasks_read == 0 and not summary.written  # resumed where it was
    assert "s3cret-pw" not in cursor.read_text()
    assert json.loads(cursor.read_text())["version"] == 2


def test_a_seal_ties_a_tasks_texts_to_its_record() -> None:
    task = sealed(task_from_record(_record("s-1")), KEY)
    data = task["data"]
    assert check_seal(data, KEY) is SealCheck.MATCHES
    for field, value in (("response", "Blue."), ("prompt", "?"), ("sample_id", "s-2")):
        assert check_seal({**data, field: value}, KEY) is SealCheck.BROKEN, field
    assert check_seal(data, seal_key("another key", None)) is SealCheck.BROKEN
    assert check_seal({k: v for k, v in data.items() if k != SEAL_FIELD}, KEY) is (
        SealCheck.UNSEALED
    )
    assert check_seal(data, None) is SealCheck.UNCHECKABLE

    # A comparison: each shown response, its sample id and its label's place.
    members = [{"sample_id": f"m{i}", "response": f"text {i}", "reward": 0.1} for i in range(3)]
    compared = sealed(comparison_task({**_record("c-1"), "compare": members}, 4), KEY)["data"]
    assert check_seal(compared, KEY) is SealCheck.MATCHES
    swapped = [compared["compare"][1], compared["compare"][0], compared["compare"][2]]
    assert check_seal({**compared, "compare": swapped}, KEY) is SealCheck.BROKEN
    edited = [{**compared["compare"][0], "response": "text 9"}, *compared["compare"][1:]]
    assert check_seal({**compared, "compare": edited}, KEY) is SealCheck.BROKEN

    # The key: LOWTIDE_TASK_KEY, else derived from (never equal to) the API token.
    assert seal_key("set", "api-token") == b"set"
    derived = seal_key(None, "api-token")
    assert derived is not None and b"api-token" not in derived
    assert derived == seal_key(None, "api-token") != seal_key(None, "other-token")
    assert seal_key(None, None) is None and sealed({"data": {}}, None) == {"data": {}}


def test_an_unsealed_task_made_after_a_sealed_one_is_refused() -> None:
    def task(task_id: int, seal: str | None) -> dict[str, Any]:
        made = sealed(task_from_record(_record(f"s-{task_id}")), KEY)
        if seal is None:
            del made["data"][SEAL_FIELD]
        elif seal == "broken":
            made["data"]["response"] = "edited"
        return {"id": task_id, **made}

    gate = SealGate(KEY, sealed_from=None)
    admitted = [t["id"] for t in (task(9, None), task(5, None), task(7, "ok"), task(11, "broken"))
                if gate.admit(t)]  # fmt: skip
    assert admitted == [7] and [t["id"] for t in gate.rest()] == [5]
    reasons = {refusal.task_id: refusal.reason for refusal in gate.refused}
    assert set(reasons) == {9, 11} and reasons[9] == SEAL_REMOVED
    assert reasons[11].startswith("its text does not match its seal") and gate.unsealed == 1
    remembered = SealGate(KEY, sealed_from=3)  # an earlier export saw task 3 sealed
    assert not remembered.admit(task(5, None)) and remembered.refused[0].reason == SEAL_REMOVED


def test_an_edited_task_is_refused_and_its_stored_row_kept(tmp_path: Path) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 1, "Blue."))
    export_annotations(client, "p", out)
    client.tasks[7]["data"]["response"] = "an attacker's text"
    client.touch(7)
    summary = export_annotations(client, "p", out)
    assert [(r.task_id, r.sample_id) for r in summary.refused] == [(7, "s-1")]
    assert _rows(out)["s-1"]["response"] == "No."
    assert summary.deleted == []  # still reviewed in Label Studio: not a deletion


def test_deletions_are_counted_first_and_listed_only_when_the_count_differs() -> None:
    client = FakeLabelStudio()
    review = {"label_studio": "srv", "project_id": 1, "task_id": 7, "reviewer": 1}
    rows = [{"sample_id": "s", "meta": {"reviews": [review]}}]
    client.add(7, _record("s"), _review(1, 10, 1, 3))
    client.add(9, _record("x"), _review(2, 10, 1, 3))  # annotated, no row (skipped)
    states = {1: ProjectState(rowless={9})}
    assert not find_gone(client, "srv", {1: None}, states, rows)
    assert (client.calls["count"], client.calls["ids"]) == (1, 0)
    client.tasks[7]["annotations"] = []
    gone = find_gone(client, "srv", {1: None}, states, rows)
    assert gone.tasks == {7} and client.calls["ids"] == 2 and states[1].rowless == {9}


def test_a_second_export_waits_for_the_first(tmp_path: Path) -> None:
    lock = tmp_path / "annotations.lock"
    order: list[str] = []
    waited = threading.Event()

    def second() -> None:
        with exclusive(lock, on_wait=lambda _: waited.set()):
            order.append("second")

    with exclusive(lock):
        thread = threading.Thread(target=second)
        thread.start()
        assert waited.wait(10)
        time.sleep(0.1)
        order.append("first")
    thread.join(10)
    assert order == ["first", "second"]


@pytest.mark.parametrize("line", ['{"prompt": "p"}', '{"sample_id": ["s-1"]}'])
def test_a_stored_row_without_a_sample_id_is_one_error_naming_its_line(
    tmp_path: Path, line: str
) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2, "Blue."))
    export_annotations(client, "p", out)
    with out.open("a") as handle:
        handle.write(line + "\n")
    with pytest.raises(ExportError, match=f"^{out}:2: .*: fix or delete it, then export with"):
        export_annotations(client, "p", out)
    assert set(_rows(out.with_name("annotations.preferences.jsonl"))) == {"s-1"}  # untouched


@pytest.mark.parametrize("annotation_id", [[], "7", 2**70, True])
def test_an_annotation_id_a_server_garbled_is_kept_as_none(
    tmp_path: Path, annotation_id: Any
) -> None:
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    garbled = {**_review(1, 10, 2, 2, "Blue."), "id": annotation_id}  # the later one: kept
    client.add(7, _record("s-1"), garbled, _review(2, 10, 1, 3))  # the same reviewer twice
    assert export_annotations(client, "p", out).new_rows == 1
    assert _rows(out)["s-1"]["meta"]["reviews"][0]["annotation_id"] is None


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("predictions", True),
        ("predictions", [None, {"id": "x", "result": [quality_result(3)]}]),
        ("updated_at", "2024-03-01T00:00:00"),  # no zone: UTC, comparable with the others
        ("step", []),
        ("reward", 10**400),
        ("run_id", {"a": 1}),
    ],
)  # fmt: skip
def test_task_fields_a_server_garbled_never_stop_the_export(
    tmp_path: Path, where: str, value: Any
) -> None:
    """Anyone with API access writes a task's data and predictions."""
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2, "Blue."))
    client.add(8, _record("s-2"), _review(2, 10, 1, 3))
    task = client.tasks[7]
    if where in ("predictions", "updated_at"):
        task[where] = value
    else:
        task["data"] = {**task["data"], where: value}
    assert export_annotations(client, "p", out).new_rows == 2
    assert set(_rows(out)) == {"s-1", "s-2"}


@pytest.mark.parametrize("task_id", ["7b", None, 1.5, True])
def test_a_task_whose_id_is_not_an_integer_is_skipped(tmp_path: Path, task_id: Any) -> None:
    """Before: `int(task["id"])` stopped the export with a ValueError or TypeError."""
    out = tmp_path / "annotations.jsonl"
    client = FakeLabelStudio()
    client.add(7, _record("s-1"), _review(1, 10, 1, 2, "Blue."))
    client.add(8, _record("s-2"), _review(2, 10, 1, 3))
    client.tasks[task_id] = {**client.tasks.pop(8), "id": task_id}
    summary = export_annotations(client, "p", out)
    assert (summary.new_rows, summary.skipped) == (1, 1)
    assert set(_rows(out)) == {"s-1"}
