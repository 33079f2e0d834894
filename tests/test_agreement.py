"""Reviewer agreement without a server: Krippendorff's alpha against the published worked
example, the per-sample aggregate and flag, the export's rows from several reviewers, and the
agreement weights of reward-model training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.agreement import (
    AgreementRule,
    agreement_report,
    krippendorff_alpha,
    rounded_rating,
    sample_agreement,
)
from annotation.config import AgreementConfig
from annotation.export import _regrouped, preference_rows, rating_row, task_reviews
from annotation.reward_model.data import Pair, Rated, RMData, RMDataError, load_rm_data
from annotation.reward_model.train import Weighting, _weighted_mean, agreement_scale

pytestmark = pytest.mark.unit

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, values 1-5, None where an observer gave no value. Published: nominal .743,
# ordinal .815, interval .849.
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
UNITS = [[value for value in unit if value is not None] for unit in zip(*OBSERVERS, strict=True)]


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_matches_krippendorffs_worked_example(metric: str, published: float) -> None:
    alpha = krippendorff_alpha(UNITS, metric)
    assert round(alpha.value, 3) == published
    # Unit 12 has one value: it pairs with nothing and is left out.
    assert (alpha.samples, alpha.ratings) == (11, 40)
    assert alpha.name == f"Krippendorff's alpha ({metric})"


def test_alpha_of_a_small_case_computed_by_hand() -> None:
    # Units (1,1), (2,3), (3,3). Coincidences: o11 = 2, o23 = o32 = 1, o33 = 2; n1 = 2,
    # n2 = 1, n3 = 3, n = 6. Interval: D_o = 2 * 1 / 6; expected sum over c != k of
    # n_c n_k (c - k)^2 = 2 * (2*1*1 + 2*3*4 + 1*3*1) = 58, D_e = 58 / (6 * 5).
    # alpha = 1 - (1/3) / (58/30) = 1 - 10/58.
    alpha = krippendorff_alpha([[1, 1], [2, 3], [3, 3]], "interval")
    assert alpha.value == pytest.approx(1 - 10 / 58)
    # Ordinal: delta(1,2) = (2 + 1 - 1.5)^2 = 2.25, delta(2,3) = (1 + 3 - 2)^2 = 4,
    # delta(1,3) = (2 + 1 + 3 - 2.5)^2 = 12.25. D_o = 2 * 4 / 6; expected sum =
    # 2 * (2*1*2.25 + 2*3*12.25 + 1*3*4) = 180, alpha = 1 - 5 * 8 / 180.
    assert krippendorff_alpha([[1, 1], [2, 3], [3, 3]], "ordinal").value == pytest.approx(
        1 - 40 / 180
    )


def test_alpha_is_one_for_perfect_agreement_and_undefined_without_variation() -> None:
    assert krippendorff_alpha([[1, 1], [4, 4, 4], [2, 2]]).value == pytest.approx(1.0)
    assert krippendorff_alpha([[3, 3], [3, 3]]).value is None
    alone = krippendorff_alpha([[3], [5]])
    assert alone.value is None and alone.samples == 0
    with pytest.raises(ValueError, match="metric"):
        krippendorff_alpha(UNITS, "ratio")  # type: ignore[arg-type]


def test_sample_agreement_flag_mean_spread_and_majority() -> None:
    agreeing = sample_agreement([2, 3], [["refusal"], ["refusal"]])
    assert (agreeing.rating_mean, agreeing.rating_spread, agreeing.agreed) == (2.5, 1, True)
    assert agreeing.majority_categories == ["refusal"] and agreeing.agreement == 0.75
    apart = sample_agreement([1, 5], [["refusal"], []])
    assert (apart.rating_spread, apart.agreed, apart.agreement) == (4, False, 0.0)
    assert apart.majority_categories == []  # one of two is no majority
    # Close ratings, but the two split on a category: no agreement with two reviewers ...
    split = sample_agreement([2, 2], [["refusal", "format"], ["refusal"]])
    assert not split.agreed and split.majority_categories == ["refusal"]
    # ... while two of three on one side is enough (2/3 >= 0.6).
    three = sample_agreement([2, 2, 3], [["format"], ["format"], []])
    assert three.agreed and three.majority_categories == ["format"]
    assert sample_agreement([2, 4], [[], []], AgreementRule(max_rating_spread=2)).agreed
    lone = sample_agreement([4], [["other"]])
    assert (lone.reviewers, lone.agreed, lone.agreement, lone.rating_spread) == (1, True, 1.0, 0)
    assert [rounded_rating(x) for x in (2.5, 2.49, 3.0, None)] == [3, 2, 3, None]


# --- export rows from several reviewers ---


def _rating(stars: int) -> dict:
    return {"from_name": "quality", "type": "rating", "value": {"rating": stars}}


def _failures(*names: str) -> dict:
    return {"from_name": "failure", "type": "choices", "value": {"choices": list(names)}}


def _better(text: str) -> dict:
    return {"from_name": "better_response", "type": "textarea", "value": {"text": [text]}}


def _annotation(id_: int, who: object, day: int, *results: dict, cancelled: bool = False):
    return {"id": id_, "completed_by": who, "updated_at": f"2024-01-0{day}T00:00:00Z",
            "was_cancelled": cancelled, "result": list(results)}  # fmt: skip


def _task(*annotations: dict, task_id: int = 7, sample_id: str = "s-1") -> dict:
    data = {"sample_id": sample_id, "prompt": "Name a colour.", "response": "No.", "run_id": "r",
            "step": 2, "reward": 0.1}  # fmt: skip
    return {"id": task_id, "data": data, "annotations": list(annotations)}


def test_each_reviewer_has_one_vote_their_latest_and_skips_are_none() -> None:
    task = _task(
        _annotation(1, 10, 1, _rating(5)),  # reviewer 10's first review ...
        _annotation(
            2,
            {"id": 11, "email": "b@x.org", "first_name": "B"},
            2,
            _rating(1),
            _failures("refusal"),
            _better("Blue."),
        ),
        _annotation(3, 10, 3, _rating(2), _failures("refusal"), _better("Red.")),  # ... edited
        _annotation(4, 12, 4, cancelled=True),  # reviewer 12 skipped
    )
    assert [(r["reviewer"], r["rating"]) for r in task_reviews(task)] == [(11, 1), (10, 2)]
    row = rating_row(task)
    assert (row["rating"], row["categories"]) == (2, ["refusal"])  # mean 1.5 -> 2
    meta = row["meta"]
    assert (meta["reviewers"], meta["rating_mean"], meta["rating_spread"]) == (2, 1.5, 1)
    assert (meta["agreed"], meta["agreement"]) == (True, 0.75)
    assert meta["annotation_id"] == 3 and meta["annotator_id"] == 10  # the latest review
    assert "b@x.org" not in json.dumps(row) and "first_name" not in json.dumps(row)
    preferences = preference_rows(row)
    assert [(p["chosen"], p["meta"]["annotator_id"]) for p in preferences] == [
        ("Blue.", 11),
        ("Red.", 10),
    ]
    assert all(p["meta"]["reviewers"] == 2 and p["rejected"] == "No." for p in preferences)


def test_disputed_samples_give_no_preferences_unless_asked() -> None:
    task = _task(
        _annotation(1, 10, 1, _rating(1), _better("Blue.")),
        _annotation(2, 11, 2, _rating(4), _better("Blue. ")),
    )
    row = rating_row(task)
    assert not row["meta"]["agreed"] and row["rating"] == 3  # mean 2.5 -> 3
    assert preference_rows(row) == []
    everything = preference_rows(row, AgreementConfig(preferences="all"))
    assert [p["chosen"] for p in everything] == ["Blue."]  # one pair for one text, two authors
    single = rating_row(_task(_annotation(1, 10, 1, _rating(1), _better("Blue."))))
    assert preference_rows(single, AgreementConfig(min_reviewers=2)) == []
    assert len(preference_rows(single)) == 1


def test_rows_of_older_exports_are_read_as_one_review() -> None:
    old = {"prompt": "p", "response": "r", "rating": 2, "categories": ["format"],
           "sample_id": "s", "meta": {"better_response": "b", "note": None, "run_id": "x",
           "step": 1, "reward": 0.5, "task_id": 3, "annotation_id": 4, "annotator_id": 1,
           "annotated_at": "2024-01-01T00:00:00Z"}}  # fmt: skip
    upgraded = _regrouped(old, AgreementRule())
    assert upgraded["rating"] == 2 and upgraded["categories"] == ["format"]
    assert upgraded["meta"]["reviews"] == [
        {"reviewer": 1, "task_id": 3, "annotation_id": 4, "rating": 2, "categories": ["format"],
         "better_response": "b", "note": None, "annotated_at": "2024-01-01T00:00:00Z",
         "suggestion": None,  # older versions made no suggestions
         "label_studio": None, "project_id": None}  # nor named the review's server and project
    ]  # fmt: skip
    assert upgraded["meta"]["agreed"] and preference_rows(upgraded)[0]["chosen"] == "b"
    assert _regrouped(upgraded, AgreementRule()) == upgraded  # stable: nothing to rewrite


def test_report_lists_the_most_disputed_first() -> None:
    rows = [
        rating_row(
            _task(
                _annotation(1, 10, 1, _rating(r1)),
                _annotation(2, 11, 2, _rating(r2)),
                task_id=t,
                sample_id=f"s-{t}",
            )
        )
        for t, (r1, r2) in enumerate([(1, 5), (3, 3), (2, 3), (4, 1)], start=1)
    ]
    rows.append(rating_row(_task(_annotation(1, 10, 1, _rating(2)), sample_id="alone")))
    report = agreement_report(rows, "interval", disputed=2)
    assert (report.reviewed_twice, report.agreed) == (4, 2)
    assert [(d.sample_id, d.task_ids, d.ratings) for d in report.disputed] == [
        ("s-1", [1], [1, 5]),
        ("s-4", [4], [4, 1]),
    ]
    assert report.alpha.samples == 4  # the lone review does not count
    assert report.alpha.value == pytest.approx(
        krippendorff_alpha([[1, 5], [3, 3], [2, 3], [4, 1]], "interval").value
    )


# --- weighting reward-model training by agreement ---


def test_reward_model_data_keeps_agreement_and_drops_disputed_pairs(tmp_path: Path) -> None:
    rows = [
        rating_row(
            _task(
                _annotation(1, 10, 1, _rating(2), _better("Blue.")),
                _annotation(2, 11, 2, _rating(3)),
                sample_id="agreed",
            )
        ),
        rating_row(
            _task(
                _annotation(1, 10, 1, _rating(1), _better("Red.")),
                _annotation(2, 11, 2, _rating(5)),
                sample_id="disputed",
            )
        ),
    ]
    path = tmp_path / "annotations.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = load_rm_data(path)  # no preferences file: pairs come from the rating rows
    assert [(p.sample_id, p.chosen, p.agreement) for p in data.pairs] == [("agreed", "Blue.", 0.75)]
    assert {(r.sample_id, r.rating, r.agreement) for r in data.ratings} == {
        ("agreed", 3, 0.75),
        ("disputed", 3, 0.0),
    }


def test_agreement_weights_keep_the_loss_scale_and_scale_each_sample() -> None:
    import torch

    data = RMData(
        pairs=[Pair("p", "c", "r", "a", agreement=1.0)],
        ratings=[Rated("p", "r", 2, "a", agreement=1.0), Rated("p", "r", 2, "b", agreement=0.0)],
    )
    scale = agreement_scale(data)
    assert scale == pytest.approx(1.5)  # mean weight 2/3
    losses = torch.tensor([2.0, 4.0])
    weighted = _weighted_mean(losses, data.ratings, Weighting(scale))
    assert weighted.item() == pytest.approx((1.5 * 2.0 + 0.0 * 4.0) / 2)
    assert _weighted_mean(losses, data.ratings, Weighting()).item() == pytest.approx(3.0)
    with pytest.raises(RMDataError, match="agreement 0"):
        agreement_scale(RMData(ratings=[Rated("p", "r", 1, "b", agreement=0.0)]))


def test_weighting_by_agreement_lets_clear_samples_outvote_disputed_ones(
    tiny_models, tmp_path: Path
) -> None:
    """20 clear pairs prefer the good answers; 40 disputed ones (agreement 0) the bad ones.
    Unweighted, the disputed majority wins; weighted, only the clear pairs count."""
    from annotation.reward_model.train import RMTrainSettings, train_reward_model
    from rl.rewards.model import RewardModel

    good, bad = ["Blue.", "Green.", "It is blue."], ["Red.", "I do not know.", "It is red."]
    pairs = [
        Pair(f"Name a colour ({i}).", good[i % 3], bad[i % 3], f"clear-{i}", 1.0) for i in range(20)
    ] + [
        Pair(f"Name a colour ({i}).", bad[i % 3], good[i % 3], f"disputed-{i}", 0.0)
        for i in range(20, 60)
    ]

    def margin(weighted: bool) -> float:
        out = tmp_path / f"rm-{weighted}"
        settings = RMTrainSettings(epochs=3, learning_rate=3e-4, rating_weight=0.0, holdout=0.0,
                                   uncertainty_heads=0, weight_by_agreement=weighted)  # fmt: skip
        train_reward_model(RMData(pairs=list(pairs)), tiny_models.reward_model, out, settings)
        scorer = RewardModel(out)
        scores = scorer.score_pairs(["Name a colour (999)."] * 6, good + bad)
        scorer.close()
        return sum(scores[:3]) - sum(scores[3:])

    assert margin(weighted=False) < 0 < margin(weighted=True)


@pytest.mark.integration
def test_rm_train_weight_by_agreement_on_the_command_line(
    tiny_models, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotation.reward_model.train import METADATA_FILE
    from tests.conftest import invoke, run_cli

    disputed = rating_row(
        _task(_annotation(1, 10, 1, _rating(1)), _annotation(2, 11, 2, _rating(5)))
    )
    clear = rating_row(
        _task(_annotation(3, 10, 1, _rating(2), _better("Blue.")),
              _annotation(4, 11, 2, _rating(2)), sample_id="s-2")
    )  # fmt: skip
    only_disputed, mixed = tmp_path / "disputed.jsonl", tmp_path / "mixed.jsonl"
    only_disputed.write_text(json.dumps(disputed) + "\n")
    mixed.write_text(json.dumps(disputed) + "\n" + json.dumps(clear) + "\n")

    argv = ["rm", "train", "--base", str(tiny_models.reward_model), "--out", str(tmp_path / "rm"),
            "--holdout", "0", "--epochs", "1", "--weight-by-agreement"]  # fmt: skip

    # Refused in this process (torch is loaded here already; a process of its own costs ~4 s
    # of CPU, most of it imports). `invoke` fails on a traceback.
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(capsys, *argv, "--data", str(only_disputed))
    assert code == 1 and "every training sample has agreement 0" in err
    # its disputed rating (weight 0), the clear rating and pair (1)
    result = run_cli(*argv, "--data", str(mixed), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "weighted by reviewer agreement: 1 of 3 pairs and ratings below 1" in result.stderr
    metadata = json.loads((tmp_path / "rm" / METADATA_FILE).read_text())
    assert metadata["settings"]["weight_by_agreement"] is True


class _FakeLabelStudio:
    """Our client's interface as the export uses it, serving the tasks a test gives it."""

    url = "http://label-studio.test"
    seal_key = None  # no key: these tasks carry no seal

    def __init__(self) -> None:
        self.tasks: list[dict] = []

    def organization(self) -> tuple[int, str]:
        return 1, "2024-01-01T00:00:00Z"

    def annotated_task_ids(self, project_id: int) -> set[int]:
        return {task["id"] for task in self.tasks}

    def annotated_task_count(self, project_id: int) -> int:
        return len(self.annotated_task_ids(project_id))

    def project_exists(self, project_id: int) -> bool:
        return project_id == 1

    def find_project(self, title: str) -> int:
        return 1

    def projects_titled(self, text: str) -> list[tuple[int, str]]:
        return [(1, text)]

    def labeling_config(self, project_id: int) -> str:
        from tests.helpers.labelstudio import REVIEW_XML_PATH

        return REVIEW_XML_PATH.read_text()

    def annotated_tasks(self, project_id: int, since: str | None = None):
        return [task for task in self.tasks if since is None or task["updated_at"] > since]


def test_an_older_export_is_upgraded_and_duplicate_tasks_share_one_vote_per_reviewer(
    tmp_path: Path,
) -> None:
    import datasets

    from annotation.export import export_annotations

    out = tmp_path / "annotations.jsonl"
    old = {"prompt": "Name a colour.", "response": "No.", "rating": 2, "categories": ["refusal"],
           "sample_id": "s-1", "meta": {"better_response": "Blue.", "note": None, "run_id": "r",
           "step": 2, "reward": 0.1, "task_id": 7, "annotation_id": 1, "annotator_id": 10,
           "annotated_at": "2024-01-01T00:00:00Z"}}  # fmt: skip
    out.write_text(json.dumps(old) + "\n")
    cursor = {"label_studio_url": _FakeLabelStudio.url, "project_id": 1,
              "updated_at": "2024-01-01T00:00:00Z"}  # fmt: skip
    out.with_name("annotations.cursor.json").write_text(json.dumps(cursor))
    client = _FakeLabelStudio()
    # Task 7 gets a second reviewer.
    seven = _task(_annotation(1, 10, 1, _rating(2), _failures("refusal"), _better("Blue.")),
                  _annotation(2, 11, 2, _rating(3), _failures("refusal")))  # fmt: skip
    client.tasks = [{**seven, "updated_at": "2024-01-02T00:00:00Z"}]
    summary = export_annotations(client, "p", out)
    assert (summary.new_rows, summary.updated_rows) == (0, 1)
    [row] = read_rows(out)
    assert (row["rating"], row["meta"]["rating_mean"], row["meta"]["reviewers"]) == (3, 2.5, 2)
    # The same sample imported again as task 8, where reviewer 10 reviews it anew: still one
    # vote each, reviewer 10's the newer.
    eight = _task(_annotation(5, 10, 3, _rating(3), _failures("refusal")), task_id=8)
    client.tasks.append({**eight, "updated_at": "2024-01-03T00:00:00Z"})
    export_annotations(client, "p", out)
    [row] = read_rows(out)
    assert [(v["reviewer"], v["task_id"], v["rating"]) for v in row["meta"]["reviews"]] == [
        (11, 7, 3),
        (10, 8, 3),
    ]
    assert row["meta"]["rating_spread"] == 0 and row["meta"]["agreed"]
    # The better response was reviewer 10's earlier review, which the newer one replaced.
    assert read_rows(out.with_name("annotations.preferences.jsonl")) == []
    on_disk = datasets.load_from_disk(str(out.with_name("annotations.hf")))
    assert on_disk["ratings"][0]["meta"]["reviews"][1]["task_id"] == 8


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]
