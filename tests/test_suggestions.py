"""Machine suggestions: the judges (score bands, a function by dotted path, one that raises or
returns nonsense), and, with a real Label Studio and Redis, a suggestion on an imported task,
what the export says about accepted and edited ones, and that an unconfirmed one is no data."""

from __future__ import annotations

import json
import math
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from pydantic import ValidationError

from annotation import jobs, ledger
from annotation.config import AnnotationConfig, SuggestionsConfig
from annotation.importer import ImportContext, JobMemo, import_records
from annotation.review_results import quality_of, quality_result
from annotation.suggestions import (
    Rollout,
    Suggestion,
    SuggestionConfigError,
    SuggestionRejected,
    acceptance,
    build_suggester,
    suggestion_outcome,
)
from sampling.records import RolloutRecord
from tests.conftest import invoke, run_cli
from tests.helpers.docs import page
from tests.helpers.labelstudio import REVIEW_XML_PATH, LabelStudioServer, sdk_client
from tests.helpers.records import rollout_record

pytestmark = pytest.mark.unit

REVIEW_XML = REVIEW_XML_PATH.read_text()
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
HERE = "tests.test_suggestions"


# --- judges named by dotted path in the tests below ---


def judge_hallucination(rollout: Rollout) -> Suggestion:
    return Suggestion(rating=2, categories=("hallucination",), score=0.9)


def judge_as_mapping(rollout: Rollout) -> dict[str, Any]:
    return {"rating": 4.0, "categories": "format"}


def judge_raises(rollout: Rollout) -> Suggestion:
    raise KeyError("no such rubric")


def judge_by_prompt(rollout: Rollout) -> Any:
    """Per sample, by the number in its prompt: 3 raises, 4 answers nonsense, 5 declines."""
    number = int(rollout.prompt.rsplit("(", 1)[1].rstrip(").")) % 10
    if number == 3:
        raise RuntimeError("judge fell over")
    if number == 4:
        return {"rating": 11, "categories": ["bad vibes"]}
    if number == 5:
        return None
    return Suggestion(rating=2, categories=("refusal",))


NOT_A_FUNCTION = 42


def record(i: int = 0, reward: float | None = 0.05) -> RolloutRecord:
    fields = rollout_record(i, reward=0.05 if reward is None else reward)
    if reward is None:  # the record of a non-finite reward
        fields.update(reward=None, reward_details={"keyword": 0.0, "format": None})
    return RolloutRecord.model_validate(fields)


def suggester(**config: Any):
    built = build_suggester(SuggestionsConfig(**config), REVIEW_XML)
    assert built is not None
    return built


def rating_and_categories(prediction: dict[str, Any]) -> tuple[int, list[str]]:
    values = {item["from_name"]: item["value"] for item in prediction["result"]}
    rating = quality_of(values["quality"])
    assert rating is not None
    return rating, values.get("failure", {}).get("choices", [])


# --- judges ---


def test_suggestions_are_off_by_default() -> None:
    assert AnnotationConfig().suggestions.judge == "off"
    assert build_suggester(SuggestionsConfig(), REVIEW_XML) is None


def test_score_bands_map_the_reward_to_a_rating_and_categories() -> None:
    bands = [
        {"below": 0.1, "rating": 1, "categories": ["refusal", "format"]},
        {"below": 0.5, "rating": 3},
        {"rating": 5},
    ]
    bands_judge = suggester(judge="score_bands", bands=bands)
    low = bands_judge.prediction(record(reward=0.05))
    assert low is not None and rating_and_categories(low) == (1, ["refusal", "format"])
    assert low["score"] == 0.05 and low["model_version"] == "score_bands/reward"
    # The form of review.xml's quality control: one choice, "1" to "5".
    assert low["result"][0] == {"from_name": "quality", "to_name": "response", "type": "choices",
                                "value": {"choices": ["1"]}}  # fmt: skip
    assert rating_and_categories(bands_judge.prediction(record(reward=0.1))) == (3, [])
    assert rating_and_categories(bands_judge.prediction(record(reward=0.7))) == (5, [])
    assert len(bands_judge.prediction(record(reward=0.7))["result"]) == 1  # no empty choices
    # A non-finite reward (None in the record) has no band: no suggestion, not a made-up one.
    assert bands_judge.prediction(record(reward=None)) is None


def test_score_bands_can_read_one_reward_component() -> None:
    # The test records carry reward_details {"keyword": 0.0, "format": reward}.
    on_keyword = suggester(judge="score_bands", score="keyword", model_version="rm-round-2")
    prediction = on_keyword.prediction(record(reward=0.9))
    assert prediction is not None and rating_and_categories(prediction) == (1, [])
    assert (prediction["score"], prediction["model_version"]) == (0.0, "rm-round-2")
    assert suggester(judge="score_bands", score="missing").prediction(record()) is None


def test_a_function_by_dotted_path_suggests() -> None:
    by_path = suggester(judge=f"{HERE}:judge_hallucination")
    prediction = by_path.prediction(record())
    assert prediction is not None and rating_and_categories(prediction) == (2, ["hallucination"])
    assert prediction["score"] == 0.9  # the judge's own score wins over the reward
    assert prediction["model_version"] == f"{HERE}:judge_hallucination/reward"
    mapping = suggester(judge=f"{HERE}.judge_as_mapping").prediction(record())
    assert mapping is not None and rating_and_categories(mapping) == (4, ["format"])
    assert mapping["score"] == 0.05  # none from the judge: the rollout's score


def test_a_raising_judge_costs_one_suggestion_with_the_reason() -> None:
    with pytest.raises(SuggestionRejected, match="raised KeyError: 'no such rubric'"):
        suggester(judge=f"{HERE}:judge_raises").prediction(record())


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ({"rating": 6}, "rating 6 is not a whole number from 1 to 5"),
        ({"rating": 2.5}, "rating 2.5 is not a whole number"),
        ({"rating": True}, "rating True is not"),
        ({"rating": "3"}, "rating '3' is not"),
        ({"rating": None}, "rating None is not"),
        ({"rating": 2, "categories": ["boring"]}, "categories ['boring'] are not in the labeling"),
        ({"rating": 2, "categories": [1]}, "is not a list of names"),
        ({"rating": 2, "score": math.inf}, "score inf is not a finite number"),
        ({"rating": 2, "confidence": 0.3}, "unknown keys ['confidence']"),
        ("five stars", "returned a str, not a Suggestion"),
        (3, "returned a int, not a Suggestion"),
    ],
)
def test_nonsense_from_a_judge_is_rejected_with_the_reason(answer: Any, reason: str) -> None:
    made = suggester(judge=f"{HERE}:judge_raises")
    made.judge = lambda rollout: answer
    with pytest.raises(SuggestionRejected, match=None) as rejected:
        made.prediction(record())
    assert reason in str(rejected.value)


def test_judge_mistakes_fail_when_the_suggester_is_built() -> None:
    with pytest.raises(SuggestionConfigError, match=r"cannot import module 'tests\.nowhere'"):
        suggester(judge="tests.nowhere:judge")
    with pytest.raises(SuggestionConfigError, match="has no attribute 'judge_hallucinations'"):
        suggester(judge=f"{HERE}:judge_hallucinations")
    with pytest.raises(SuggestionConfigError, match="is a int, not a function"):
        suggester(judge=f"{HERE}:NOT_A_FUNCTION")
    with pytest.raises(SuggestionConfigError, match=r"categories \['boring'\] are not in"):
        suggester(judge="score_bands", bands=[{"rating": 1, "categories": ["boring"]}])
    no_rating = "<View><Text name='response' value='$response'/></View>"
    with pytest.raises(SuggestionConfigError, match="need a quality rating"):
        build_suggester(SuggestionsConfig(judge="score_bands"), no_rating)
    three = REVIEW_XML.replace('<Choice value="4"', '<Choice value="four"')
    with pytest.raises(SuggestionConfigError, match='with the choices "1" to "5"'):
        build_suggester(SuggestionsConfig(judge="score_bands"), three)


def test_a_project_with_the_older_star_rating_gets_suggestions_in_its_form() -> None:
    stars = (
        "<View><Text name='response' value='$response'/>"
        "<Rating name='quality' toName='response' maxRating='5'/>"
        "<Choices name='failure' toName='response' choice='multiple'>"
        "<Choice value='refusal'/></Choices></View>"
    )
    built = build_suggester(SuggestionsConfig(judge="score_bands"), stars)
    assert built is not None
    prediction = built.prediction(record(reward=0.05))
    assert prediction is not None
    assert prediction["result"][0] == {"from_name": "quality", "to_name": "response",
                                       "type": "rating", "value": {"rating": 1}}  # fmt: skip


def test_suggestion_config_is_checked_on_load() -> None:
    with pytest.raises(ValidationError, match="judge 'bands': use 'off', 'score_bands'"):
        SuggestionsConfig(judge="bands")
    with pytest.raises(ValidationError, match="must increase"):
        SuggestionsConfig(bands=[{"below": 0.5, "rating": 1}, {"below": 0.2, "rating": 2},
                                 {"rating": 3}])  # fmt: skip
    with pytest.raises(ValidationError, match="only it, has no `below`"):
        SuggestionsConfig(bands=[{"below": 0.5, "rating": 1}])
    with pytest.raises(ValidationError, match="less than or equal to 5"):
        SuggestionsConfig(bands=[{"rating": 6}])
    with pytest.raises(ValidationError, match="Extra inputs"):
        SuggestionsConfig(judges="score_bands")


def test_outcome_and_acceptance_of_reviews() -> None:
    prediction = {"model_version": "v1", "score": 0.2, "result": [
        {"from_name": "quality", "to_name": "response", "type": "rating", "value": {"rating": 2}},
        {"from_name": "failure", "to_name": "response", "type": "choices",
         "value": {"choices": ["refusal", "format"]}},
    ]}  # fmt: skip
    accepted = suggestion_outcome([prediction], 2, ["format", "refusal"])
    assert accepted == {
        "model_version": "v1", "score": 0.2, "rating": 2, "categories": ["refusal", "format"],
        "accepted": True, "changed": [],
    }  # fmt: skip
    assert suggestion_outcome([prediction], 3, ["refusal"])["changed"] == ["rating", "categories"]
    # A suggestion in review.xml's form (the rating as one choice) compares the same way.
    as_choice = {**prediction, "result": [quality_result(2), *prediction["result"][1:]]}
    assert suggestion_outcome([as_choice], 2, ["format", "refusal"]) == accepted
    assert suggestion_outcome([as_choice], 4, ["format", "refusal"])["changed"] == ["rating"]
    assert suggestion_outcome([], 3, []) is None
    rows = [
        {"meta": {"suggestion": accepted}},
        {"meta": {"suggestion": suggestion_outcome([prediction], 1, ["refusal", "format"])}},
        {"meta": {"suggestion": None}},
        {"meta": {}},
    ]
    rate = acceptance(rows)
    assert (rate.accepted, rate.edited, rate.suggested, rate.rate) == (1, 1, 2, 0.5)
    assert rate.changed == {"rating": 1}
    assert acceptance([]).rate is None


def test_the_readme_judge_example_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    review_page = page("review.md")
    code = re.search(r"```python\n(# my_judges.py.*?)```", review_page, flags=re.S)
    assert code is not None and "judge: score_bands" in review_page
    (tmp_path / "my_judges.py").write_text(code[1])
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_judges", raising=False)
    readme_judge = suggester(judge="my_judges:rate")
    assert rating_and_categories(readme_judge.prediction(record(reward=0.9))) == (4, [])
    assert rating_and_categories(readme_judge.prediction(record(reward=0.1))) == (2, [])
    empty = RolloutRecord.model_validate(rollout_record(0, response=""))
    assert rating_and_categories(readme_judge.prediction(empty)) == (1, ["format"])
    assert readme_judge.prediction(record(reward=None)) is None


@pytest.mark.integration
def test_a_worker_with_a_judge_it_cannot_use_stops_at_start(workdir: Path) -> None:
    env = {"LABEL_STUDIO_API_KEY": "not-needed-before-the-judge", "REDIS_URL": REDIS_URL}
    xml = f"--annotation.labeling_config={REVIEW_XML_PATH}"
    missing = run_cli("worker", "--burst", "--annotation.suggestions.judge=nowhere.at_all:rate",
                      xml, cwd=workdir, env=env)  # fmt: skip
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr.strip().splitlines() == [
        "error: annotation.suggestions.judge: cannot import module 'nowhere.at_all': no module "
        "named 'nowhere' (is the package installed?)"
    ]
    bands = '[{"rating": 1, "categories": ["boring"]}]'
    flags = [
        "--annotation.suggestions.judge=score_bands",
        f"--annotation.suggestions.bands={bands}",
    ]
    unknown = run_cli("worker", "--burst", *flags, xml, cwd=workdir, env=env)
    assert unknown.returncode == 1
    assert "categories ['boring'] are not in the labeling config" in unknown.stderr


# --- with Label Studio ---


@pytest.mark.labelstudio
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.e2e
def test_suggestions_in_label_studio_and_the_export(
    label_studio: LabelStudioServer,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tag = uuid.uuid4().hex[:8]
    connection = redis.Redis.from_url(REDIS_URL)
    queue_name = f"test-suggestions-{tag}"
    config = AnnotationConfig(
        label_studio_url=label_studio.url,
        api_key=label_studio.api_key,
        project=f"suggestions {tag}",
        labeling_config=str(REVIEW_XML_PATH),
        suggestions={"judge": f"{HERE}:judge_by_prompt", "model_version": "judge-v1"},
    )
    records = [rollout_record(i, run_id=f"run-{tag}", reward=0.1 * i) for i in range(7)]
    context = ImportContext.create(config, connection, queue_name)
    try:
        # 3 raises and 4 answers nonsense: imported without a suggestion; 5 declines. The job
        # function a worker runs, bound to this context.
        jobs.bind(context)
        counts = jobs.import_batch(records)
        assert isinstance(counts, dict) and counts["imported"] == 7
        assert (counts["suggested"], counts["suggestions_rejected"]) == (4, 2)
        counters = ledger.read_stats(connection, queue_name).counters
        assert (counters["suggested"], counters["suggestions_rejected"]) == (4, 2)
        sdk = sdk_client(label_studio.url, label_studio.api_key)
        project_id = context.project_id()
        task_ids = context.client.task_ids_by_sample_id(
            project_id, [r["sample_id"] for r in records]
        )
        ids = [task_ids[r["sample_id"]] for r in records]

        # Read back through the API: the suggestion, its model_version and score.
        def predictions(i: int) -> list[Any]:
            return list(sdk.predictions.list(task=ids[i]))

        first = predictions(1)
        assert len(first) == 1 and first[0].model_version == "judge-v1"
        assert first[0].score == pytest.approx(0.1)
        assert [(r["from_name"], r["value"]) for r in first[0].result] == [
            ("quality", {"choices": ["2"]}), ("failure", {"choices": ["refusal"]})
        ]  # fmt: skip
        assert [len(predictions(i)) for i in range(7)] == [1, 1, 1, 0, 0, 0, 1]
        project = sdk.projects.get(project_id)
        assert project.show_collab_predictions and project.model_version == "judge-v1"

        # Importing the same records again changes nothing: no second task, no second prediction.
        again = import_records(records, ImportContext.create(config, connection, queue_name),
                               JobMemo("job-2", {}))  # fmt: skip
        assert (again.imported, again.duplicates, again.suggested) == (0, 7, 0)
        assert context.client.count_tasks(project_id) == 7
        assert len(list(sdk.predictions.list(project=project_id))) == 4

        # Reviews: 0 confirms the suggestion as it was, 1 changes the rating, 2 changes the
        # categories, 3 had none; 6 is never reviewed (its suggestion is no data).
        sdk.annotations.create(id=ids[0], result=predictions(0)[0].result)
        sdk.annotations.create(id=ids[1], result=review(4, "refusal"))
        sdk.annotations.create(id=ids[2], result=review(2, "refusal", "format"))
        sdk.annotations.create(id=ids[3], result=review(1, "other"))

        out = workdir / "annotations.jsonl"
        monkeypatch.setenv("LABEL_STUDIO_URL", label_studio.url)
        monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.api_key)
        code, printed, _ = invoke(
            capsys, "export", "--out", str(out), f"--annotation.project={config.project}"
        )
        assert code == 0
        rows = {row["sample_id"]: row for row in map(json.loads, out.read_text().splitlines())}
        assert set(rows) == {r["sample_id"] for r in records[:4]}
        assert records[6]["sample_id"] not in rows  # an unconfirmed suggestion is not exported

        def outcome_of(i: int) -> dict[str, Any]:
            return rows[records[i]["sample_id"]]["meta"]["suggestion"]

        assert outcome_of(0)["accepted"] is True and outcome_of(0)["changed"] == []
        assert outcome_of(0)["model_version"] == "judge-v1"
        assert outcome_of(0)["score"] == pytest.approx(0.0)
        assert rows[records[0]["sample_id"]]["rating"] == 2
        assert (outcome_of(1)["accepted"], outcome_of(1)["changed"]) == (False, ["rating"])
        assert (outcome_of(1)["rating"], rows[records[1]["sample_id"]]["rating"]) == (2, 4)
        assert outcome_of(2)["changed"] == ["categories"]
        assert outcome_of(3) is None
        assert re.search(r"suggestions accepted\s+│\s+1 \(33%\)", printed), printed
        assert re.search(r"suggestions edited\s+│\s+2 ", printed), printed
        assert acceptance(rows.values()).rate == pytest.approx(1 / 3)

        # The label stream serves each task with the predictions a new review is prefilled
        # from: those of the project's model_version.
        for i in (4, 5):
            sdk.annotations.create(id=ids[i], result=review(3))
        assert next_task(label_studio, project_id) == (ids[6], ["judge-v1"])

        # A new judge version (say, a retrained reward model): its suggestions are the ones
        # Label Studio prefills from now on; the older ones stay on their tasks.
        config_v2 = config.model_copy(
            update={"suggestions": SuggestionsConfig(judge=f"{HERE}:judge_hallucination",
                                                     model_version="judge-v2")}
        )  # fmt: skip
        newer = ImportContext.create(config_v2, connection, queue_name)
        later = rollout_record(17, run_id=f"run-{tag}")
        import_records([later], newer, JobMemo("job-3", {}))
        newer.client.close()
        assert sdk.projects.get(project_id).model_version == "judge-v2"
        later_id = context.client.task_ids_by_sample_id(project_id, [later["sample_id"]])
        assert next_task(label_studio, project_id) == (ids[6], [])
        assert len(predictions(6)) == 1
        sdk.annotations.create(id=ids[6], result=review(3))
        assert next_task(label_studio, project_id) == (later_id[later["sample_id"]], ["judge-v2"])
    finally:
        jobs.bind(None)
        context.client.close()
        for key in connection.scan_iter(f"*{queue_name}*"):
            connection.delete(key)


def next_task(server: LabelStudioServer, project_id: int) -> tuple[int, list[str]]:
    """The task the label stream serves next, and the model versions it prefills from."""
    task = server.get(f"/api/projects/{project_id}/next").json()
    return task["id"], [prediction["model_version"] for prediction in task["predictions"]]


def review(rating: int, *failures: str) -> list[dict[str, Any]]:
    result = [quality_result(rating)]  # as review.xml's digit keys store it
    if failures:
        result.append({"from_name": "failure", "to_name": "response", "type": "choices",
                       "value": {"choices": list(failures)}})  # fmt: skip
    return result
