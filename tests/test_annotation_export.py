"""`lowtide export` against a real Label Studio: reviews written through the API (as a reviewer's
would be) come out as rating and preference rows, incrementally, readable by `datasets`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import datasets
import httpx
import pytest

from annotation.export import export_annotations
from annotation.labelstudio import LabelStudioClient
from tests.helpers.labelstudio import LabelStudioServer, sdk_client
from tests.helpers.pipeline import Setup, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(600)]


def review(rating: int, *failures: str, better: str | None = None, note: str | None = None):
    result = [{"from_name": "quality", "to_name": "response", "type": "rating",
               "value": {"rating": rating}}]  # fmt: skip
    if failures:
        result.append({"from_name": "failure", "to_name": "response", "type": "choices",
                       "value": {"choices": list(failures)}})  # fmt: skip
    for name, text in (("better_response", better), ("note", note)):
        if text is not None:
            result.append({"from_name": name, "to_name": "response", "type": "textarea",
                           "value": {"text": [text]}})  # fmt: skip
    return result


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def imported(server: LabelStudioServer, workdir: Path, count: int) -> tuple[Setup, list[dict]]:
    """A Setup whose first `count` records a burst worker has made tasks of."""
    setup = Setup(server, workdir)
    records = setup.records(0, count)
    setup.enqueue(records)
    assert setup.cli("worker", "--burst").returncode == 0
    return setup, records


def test_reviews_become_rating_and_preference_rows_incrementally(
    any_label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup, records = imported(any_label_studio, workdir, 8)
    tasks = {task["sample_id"]: task["id"] for task in setup.tasks()}
    ids = [tasks[record["sample_id"]] for record in records]

    sdk = sdk_client(any_label_studio.url, any_label_studio.api_key)
    sdk.annotations.create(id=ids[0], result=review(1, "refusal", better="Blue is a colour."))
    sdk.annotations.create(id=ids[1], result=review(2, "off-topic", "format", better="Green."))
    sdk.annotations.create(id=ids[2], result=review(4, note="fine, just terse"))
    same = records[3]["response"]
    sdk.annotations.create(id=ids[3], result=review(3, "other", better=same + "\n"))
    sdk.annotations.create(id=ids[4], result=[], was_cancelled=True)  # skipped by the reviewer

    out = workdir / "data" / "rm" / "annotations.jsonl"
    first = setup.cli("export", "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "4 new" in first.stderr

    ratings = {row["sample_id"]: row for row in read_jsonl(out)}
    assert set(ratings) == {r["sample_id"] for r in records[:4]}
    row = ratings[records[1]["sample_id"]]
    assert set(row) == {"prompt", "response", "rating", "categories", "sample_id", "meta"}
    assert (row["prompt"], row["response"]) == (records[1]["prompt"], records[1]["response"])
    assert row["rating"] == 2 and row["categories"] == ["off-topic", "format"]
    assert row["meta"]["run_id"] == setup.run_id and row["meta"]["task_id"] == ids[1]
    assert ratings[records[2]["sample_id"]]["meta"]["note"] == "fine, just terse"

    preferences = read_jsonl(out.with_name("annotations.preferences.jsonl"))
    assert [p["sample_id"] for p in preferences] == [r["sample_id"] for r in records[:2]]
    assert preferences[0]["chosen"] == "Blue is a colour."
    assert preferences[0]["rejected"] == records[0]["response"]
    assert preferences[0]["prompt"] == records[0]["prompt"]
    assert all(p["chosen_written"] is True for p in preferences)  # reviewers' own texts

    # What TRL's RewardTrainer and our reward-model training load.
    trl_view = datasets.load_dataset("json", data_files=str(out.with_name(
        "annotations.preferences.jsonl")), split="train")  # fmt: skip
    assert {"prompt", "chosen", "rejected"} <= set(trl_view.column_names)
    on_disk = datasets.load_from_disk(str(out.with_name("annotations.hf")))
    assert (on_disk["ratings"].num_rows, on_disk["preferences"].num_rows) == (4, 2)
    assert "rating 2" in first.stdout and "failure: off-topic" in first.stdout

    # Nothing new: nothing is written.
    written = {p: p.stat().st_mtime_ns for p in out.parent.glob("*.jsonl")}
    second = setup.cli("export", "--out", str(out))
    assert second.returncode == 0 and "nothing new" in second.stderr
    assert {p: p.stat().st_mtime_ns for p in out.parent.glob("*.jsonl")} == written

    # One more review: the next export adds exactly it.
    sdk.annotations.create(id=ids[5], result=review(5))
    third = setup.cli("export", "--out", str(out))
    assert "1 new, 0 updated" in third.stderr
    assert len(read_jsonl(out)) == 5

    # A reviewer edits a review: the next export updates that row (the task's completed_at
    # stays where it was; its updated_at moves).
    first_review = next(a for a in sdk.annotations.list(id=ids[2]))
    sdk.annotations.update(id=first_review.id, result=review(1, "hallucination"))
    fourth = setup.cli("export", "--out", str(out))
    assert "0 new, 1 updated" in fourth.stderr, fourth.stderr
    edited = {row["sample_id"]: row for row in read_jsonl(out)}[records[2]["sample_id"]]
    assert edited["rating"] == 1 and edited["categories"] == ["hallucination"]
    assert len(read_jsonl(out)) == 5

    for path in out.parent.rglob("*"):
        if path.is_file():
            assert any_label_studio.api_key.encode() not in path.read_bytes(), path
    setup.assert_no_key_leaked()


def test_export_of_a_missing_project_says_so(label_studio: LabelStudioServer, workdir: Path):
    setup = Setup(label_studio, workdir)  # its project was never created
    result = setup.cli("export", "--out", str(workdir / "a.jsonl"))
    assert result.returncode == 1
    assert f"has no project {setup.project!r}" in result.stderr
    assert not (workdir / "a.jsonl").exists()


def by_sample(path: Path) -> dict[str, dict]:
    return {row["sample_id"]: row for row in read_jsonl(path)}


def test_rows_stay_when_reviews_are_deleted_or_edited_in_label_studio_until_a_rebuild(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup, records = imported(label_studio, workdir, 4)
    samples = [record["sample_id"] for record in records]
    ids = {task["sample_id"]: task["id"] for task in setup.tasks()}
    sdk = sdk_client(label_studio.url, label_studio.api_key)
    reviews = [sdk.annotations.create(id=ids[sample], result=review(2, better=f"Better {n}."))
               for n, sample in enumerate(samples)]  # fmt: skip
    out = workdir / "data" / "rm" / "annotations.jsonl"
    first = setup.cli("export", "--out", str(out))
    assert first.returncode == 0 and "4 new" in first.stderr, first.stderr
    assert "seal" not in first.stderr  # the worker sealed every task, and none was touched

    # In Label Studio: a reviewed task deleted, a task's only review deleted, and a task's
    # response rewritten through the API (any reviewer account may).
    sdk.tasks.delete(id=str(ids[samples[0]]))
    sdk.annotations.delete(id=int(reviews[1].id))
    data = label_studio.get(f"/api/tasks/{ids[samples[2]]}").json()["data"]
    patched = httpx.patch(f"{label_studio.url}/api/tasks/{ids[samples[2]]}",
                          json={"data": {**data, "response": "Say yes to everything."}},
                          headers={"Authorization": f"Token {label_studio.api_key}"})  # fmt: skip
    assert patched.status_code == 200, patched.text

    # The same server under another spelling of its URL: every row stays.
    setup.url = label_studio.url.replace("127.0.0.1", "localhost")
    for since in ("last", "all"):
        again = setup.cli("export", "--out", str(out), "--since", since)
        assert again.returncode == 0, again.stderr
        rows = by_sample(out)
        assert set(rows) == set(samples)
        assert [rows[s]["meta"]["deleted_in_label_studio"] for s in samples] == [
            True, True, False, False,
        ]  # fmt: skip
        assert rows[samples[2]]["response"] == records[2]["response"]  # as reviewed
        refused = (f"task {ids[samples[2]]} (sample {samples[2]}): its text does not match "
                   "its seal")  # fmt: skip
        assert "refused 1 reviewed task(s)" in again.stderr and refused in again.stderr
        if since == "last":  # found now; `--since all` keeps them as they are
            found = next(ln for ln in again.stderr.splitlines() if "lost every review" in ln)
            assert found.startswith("2 sample(s)") and all(s in found for s in samples[:2])
        preferences = read_jsonl(out.with_name("annotations.preferences.jsonl"))
        assert sorted(p["sample_id"] for p in preferences) == sorted(samples[2:])
    assert "rows deleted in Label Studio" in again.stdout

    # Only a rebuild drops rows, and it keeps the files it replaces.
    rebuilt = setup.cli("export", "--out", str(out), "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    line = next(ln for ln in rebuilt.stderr.splitlines() if "previous files are kept in" in ln)
    backup = Path(line.rsplit(" in ", 1)[1])
    assert backup.parent == out.parent and backup.name.endswith(".bak")
    assert set(by_sample(backup / "annotations.jsonl")) == set(samples)
    assert (backup / "annotations.cursor.json").is_file() and (backup / "annotations.hf").is_dir()
    assert set(by_sample(out)) == {samples[3]}  # task 2 is refused, 0 and 1 are gone
    for path in out.parent.rglob("*"):
        if path.is_file():
            assert label_studio.api_key.encode() not in path.read_bytes(), path
    setup.assert_no_key_leaked()


def test_two_exports_at_once_into_the_same_files_lose_nothing(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup, records = imported(label_studio, workdir, 3)
    ids = [task["id"] for task in sorted(setup.tasks(), key=lambda task: task["id"])]
    sdk = sdk_client(label_studio.url, label_studio.api_key)
    for task_id in ids[:2]:
        sdk.annotations.create(id=task_id, result=review(3))
    out = workdir / "data" / "rm" / "annotations.jsonl"
    read, resume = threading.Event(), threading.Event()

    class PausedAfterReading(LabelStudioClient):
        def annotated_tasks(self, project_id, since=None):
            yield from super().annotated_tasks(project_id, since)
            read.set()
            assert resume.wait(120)

    failures: list[BaseException] = []

    def first_export() -> None:
        try:
            with PausedAfterReading(label_studio.url, label_studio.api_key) as client:
                export_annotations(client, setup.project, out)
        except BaseException as error:  # reported by the test's thread
            failures.append(error)

    first = threading.Thread(target=first_export)
    first.start()
    try:
        assert read.wait(120)
        sdk.annotations.create(id=ids[2], result=review(5))  # after the first export's read
        log = workdir / "second-export.log"
        with log.open("w") as stderr:
            second = subprocess.Popen(
                [sys.executable, "-m", "lowtide", "export", "--out", str(out), *setup.flags],
                cwd=workdir, env={**os.environ, **setup.env()}, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=stderr,
            )  # fmt: skip
        wait_for(lambda: second.poll() is not None or "waiting for it" in log.read_text(),
                 120, "the second export to wait or end", explain=log.read_text)  # fmt: skip
    finally:
        resume.set()
        first.join(120)
    assert second.wait(120) == 0, log.read_text()
    assert not failures, failures
    assert set(by_sample(out)) == {record["sample_id"] for record in records}
