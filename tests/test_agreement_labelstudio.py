"""Several reviewers per task against a real Label Studio: the project's overlap follows
annotation.reviews_per_task, and two reviewer accounts (made through the server's own sign-up)
agree, disagree, edit and skip; the export's aggregates, agreement figure and preference rows
are checked against values computed by hand."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import datasets
import pytest

from annotation.accounts import ensure_reviewer_account
from tests.helpers.labelstudio import LabelStudioServer, sdk_client
from tests.helpers.pipeline import Setup, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.labelstudio, pytest.mark.slow, pytest.mark.timeout(600)]


def review(rating: int, *failures: str, better: str | None = None) -> list[dict]:
    result = [{"from_name": "quality", "to_name": "response", "type": "rating",
               "value": {"rating": rating}}]  # fmt: skip
    if failures:
        result.append({"from_name": "failure", "to_name": "response", "type": "choices",
                       "value": {"choices": list(failures)}})  # fmt: skip
    if better is not None:
        result.append({"from_name": "better_response", "to_name": "response", "type": "textarea",
                       "value": {"text": [better]}})  # fmt: skip
    return result


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def overlap_of(server: LabelStudioServer, project_id: int) -> tuple[int, int]:
    project = server.get(f"/api/projects/{project_id}/").json()
    return project["maximum_annotations"], project["overlap_cohort_percentage"]


def test_two_reviewers_agreement_in_the_export(
    label_studio: LabelStudioServer, workdir: Path
) -> None:
    setup = Setup(label_studio, workdir, reviews_per_task="2")
    records = setup.records(0, 6)
    setup.enqueue(records)
    assert setup.cli("worker", "--burst").returncode == 0
    project_id = setup.project_id()
    assert overlap_of(label_studio, project_id) == (2, 100)
    by_sample = {task["sample_id"]: task["id"] for task in setup.tasks()}
    t = [by_sample[record["sample_id"]] for record in records]
    assert {label_studio.get(f"/api/tasks/{i}/").json()["overlap"] for i in t} == {2}

    tag = uuid.uuid4().hex[:8]
    accounts = [
        ensure_reviewer_account(label_studio.url, label_studio.api_key, f"{who}-{tag}@example.org")
        for who in ("alice", "bob")
    ]
    alice, bob = (sdk_client(label_studio.url, a.api_key) for a in accounts)
    alice_id, bob_id = (account.user_id for account in accounts)

    alice.annotations.create(id=t[0], result=review(2, "refusal", better="Blue."))
    bob.annotations.create(id=t[0], result=review(3, "refusal", better="Blue.\n"))  # agree
    alice.annotations.create(id=t[1], result=review(1, "hallucination", better="Paris."))
    bob.annotations.create(id=t[1], result=review(5))  # disagree
    first_take = alice.annotations.create(id=t[2], result=review(5)).id  # edited below
    bob.annotations.create(id=t[2], result=review(2, "format"))
    alice.annotations.create(id=t[3], result=[], was_cancelled=True)  # alice skips
    bob.annotations.create(id=t[3], result=review(4))
    alice.annotations.create(id=t[4], result=review(3, "off-topic", better="Yellow."))
    bob.annotations.create(id=t[5], result=[], was_cancelled=True)  # only a skip

    out = workdir / "rm" / "annotations.jsonl"
    first = setup.cli("export", "--out", str(out))
    assert first.returncode == 0, first.stderr
    # Tasks still short of their second review are read too: t3 and t4 with one vote each.
    assert "5 new, 0 updated" in first.stderr, first.stderr

    # Alice edits her review of t2 (one vote, not two); Bob reviews t4 after the export.
    alice.annotations.update(id=first_take, result=review(2, "format", better="Green."))
    bob.annotations.create(id=t[4], result=review(3, "off-topic"))
    second = setup.cli("export", "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert "0 new, 2 updated" in second.stderr, second.stderr

    rows = {row["sample_id"]: row for row in read_jsonl(out)}
    assert len(rows) == 5 and records[5]["sample_id"] not in rows
    row = [rows[record["sample_id"]] for record in records[:5]]
    # Computed by hand: (reviewers, rating (mean in whole stars), mean, spread, majority
    # categories, agreed, agreement = 1 - spread / 4).
    expected = [
        (2, 3, 2.5, 1, ["refusal"], True, 0.75),
        (2, 3, 3.0, 4, [], False, 0.0),
        (2, 2, 2.0, 0, ["format"], True, 1.0),
        (1, 4, 4.0, 0, [], True, 1.0),
        (2, 3, 3.0, 0, ["off-topic"], True, 1.0),
    ]
    got = [
        (r["meta"]["reviewers"], r["rating"], r["meta"]["rating_mean"], r["meta"]["rating_spread"],
         r["categories"], r["meta"]["agreed"], r["meta"]["agreement"])
        for r in row
    ]  # fmt: skip
    assert got == expected
    votes = [[(v["reviewer"], v["rating"]) for v in r["meta"]["reviews"]] for r in row]
    assert votes[2] == [(bob_id, 2), (alice_id, 2)]  # alice's edit replaced her 5
    assert votes[3] == [(bob_id, 4)]  # her skip is no vote
    assert {v["reviewer"] for r in row for v in r["meta"]["reviews"]} == {alice_id, bob_id}

    preferences = read_jsonl(out.with_name("annotations.preferences.jsonl"))
    assert [(p["sample_id"], p["chosen"], p["meta"]["reviewers"]) for p in preferences] == [
        (records[0]["sample_id"], "Blue.", 2),  # both wrote it
        (records[2]["sample_id"], "Green.", 2),
        (records[4]["sample_id"], "Yellow.", 2),
    ]  # t1's "Paris." is from a disputed sample: no preference row
    assert preferences[0]["rejected"] == records[0]["response"]

    on_disk = datasets.load_from_disk(str(out.with_name("annotations.hf")))
    assert (on_disk["ratings"].num_rows, on_disk["preferences"].num_rows) == (5, 3)
    assert on_disk["ratings"][0]["meta"]["reviews"][0]["reviewer"] in (alice_id, bob_id)

    # Ordinal alpha by hand over t0 (2,3), t1 (1,5), t2 (2,2), t4 (3,3): n1=1, n2=3, n3=3,
    # n5=1, n=8; observed sum 2*9 + 2*49 = 116; expected sum 2*(3*4 + 3*25 + 1*49 + 9*9 +
    # 3*25 + 3*4) = 608; alpha = 1 - 7 * 116 / 608 = -0.336.
    assert "Krippendorff's alpha (ordinal) = -0.336 over 4 samples" in second.stdout
    assert "3 of 4 samples with >= 2 reviews agree" in second.stdout
    disputed = second.stdout[second.stdout.index("most disputed") :]
    assert disputed.index(records[1]["sample_id"]) < disputed.index(records[0]["sample_id"])
    assert f"{t[1]}" in disputed and "1, 5" in disputed
    assert f"{label_studio.url}/projects/{project_id}/data?task=<task>" in disputed
    for path in out.parent.rglob("*"):
        if path.is_file():
            assert b"example.org" not in path.read_bytes(), path  # ids, never e-mails

    # Three reviewers per task from now on: the worker's setup updates the project in place.
    three = Setup(label_studio, workdir, project=setup.project, reviews_per_task="3")
    assert three.cli("annotation", "init").returncode == 0
    assert overlap_of(label_studio, project_id) == (3, 100)
    wait_for(
        lambda: label_studio.get(f"/api/tasks/{t[5]}/").json()["overlap"] == 3,
        30,
        "the tasks' overlap to follow the project",
    )
    setup.assert_no_key_leaked()
