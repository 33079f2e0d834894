"""`lowtide loop` end to end through a real Label Studio and Redis: rounds, resume after a kill,
a reviewer that fails on some tasks, and a loop directory that belongs to another config."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
import yaml

from annotation.accounts import ensure_reviewer_account
from annotation.config import AnnotationConfig
from lowtide.loop.stages import review_run
from lowtide.loop.state import STAGES
from tests.conftest import REPO, invoke, run_cli
from tests.helpers.labelstudio import REVIEW_XML_PATH
from tests.helpers.pipeline import Setup

pytestmark = pytest.mark.e2e

STEPS = 3


def loop_config(workdir: Path, tiny_models) -> Path:
    config = {
        "device": "cpu",
        "trainer": {
            "algorithm": "grpo",
            "num_epochs": 5,
            "rollout_batch_size": 4,
            "samples_per_prompt": 4,
            "max_new_tokens": 16,
            "seed": 0,
            "save_every": 2,
        },
        "model": {"actor": {"model_name_or_path": str(tiny_models.policy)}},
        "data": {"path": str(REPO / "configs" / "prompts" / "quickstart.yaml")},
        "rewards": [
            {"type": "reward_model", "path": str(tiny_models.reward_model)},
            {"type": "format", "weight": 0.1},
            {"type": "keyword", "weight": 0.0, "params": {"words": ["blue", "green"]}},
        ],
        "hooks": [{"type": "low_reward_sampler", "stage": "reward", "every": 1}],
        "logger": {"name": ["console"]},
        "sampling": {"policy": "quantile", "quantile": 0.25},  # 4 of 16 rollouts a step
        "queue": {"spool_dir": str(workdir / "spool")},
        # Machine suggestions from the keyword rule: the table reports how often they stood.
        "annotation": {"suggestions": {"judge": "score_bands", "score": "keyword"}},
    }
    path = workdir / "loop.yaml"
    path.write_text(yaml.safe_dump(config))
    (workdir / "eval.yaml").write_text(
        yaml.safe_dump({"prompts": ["Name a color.", "What color is the sea?", "Say a colour."]})
    )
    return path


def loop_argv(setup: Setup, config: Path, loop_dir: Path, email: str) -> list[str]:
    return [
        "loop",
        "--config",
        str(config),
        "--dir",
        str(loop_dir),
        "--rounds",
        "2",
        "--steps",
        str(STEPS),
        "--reviewer",
        "tests.helpers.loop_reviewers:flaky",
        "--reviewer-email",
        email,
        "--eval-prompts",
        str(config.parent / "eval.yaml"),
        "--rm-epochs",
        "2",
        *setup.flags,
    ]


def loop_setup(label_studio, workdir: Path, tiny_models) -> tuple[Setup, Path, Path]:
    """A test's queue and project, its run config, and its loop directory `<workdir>/loop`."""
    return Setup(label_studio, workdir), loop_config(workdir, tiny_models), workdir / "loop"


def scripted_loop(setup: Setup, workdir: Path, tiny_models, **sections: dict):
    """Two rounds in `<workdir>/loop`, reviewed by the demo's scripted reviewer, with these
    sections of the run config replaced; the finished process (it must succeed)."""
    config = loop_config(workdir, tiny_models)
    config.write_text(yaml.safe_dump({**yaml.safe_load(config.read_text()), **sections}))
    argv = loop_argv(setup, config, workdir / "loop", f"bot-{uuid.uuid4().hex[:6]}@lowtide.local")
    argv[argv.index("tests.helpers.loop_reviewers:flaky")] = (
        "lowtide.demo.scripted_reviewer:review_task"
    )
    result = run_cli(*argv, cwd=workdir, env={**setup.env(), "PYTHONPATH": str(REPO)}, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    return result


def state_of(loop_dir: Path) -> dict:
    path = loop_dir / "state.json"
    return json.loads(path.read_text())["rounds"] if path.exists() else {}


def project_tasks(setup: Setup) -> list[dict]:
    with setup.server.client() as client:
        project_id = client.find_project(setup.project)
        return [
            {"id": task.id, "data": task.data, "annotations": task.total_annotations}
            for task in client._sdk.tasks.list(project=project_id, fields="task_only")
        ]


def mtimes(*paths: Path) -> dict[Path, int]:
    return {path: path.stat().st_mtime_ns for path in paths}


def test_two_rounds_resume_after_a_kill_without_importing_or_training_again(
    label_studio, workdir: Path, tiny_models
) -> None:
    setup, config, loop_dir = loop_setup(label_studio, workdir, tiny_models)
    email = f"bot-{uuid.uuid4().hex[:6]}@lowtide.local"
    argv = loop_argv(setup, config, loop_dir, email)
    env = {**os.environ, **setup.env(), "PYTHONPATH": str(REPO), "COLUMNS": "200"}

    # First run: killed (SIGKILL, no cleanup) once round 2's tasks are imported.
    log = (workdir / "first.log").open("w")
    first = subprocess.Popen(
        [sys.executable, "-m", "lowtide", *argv],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 400
    while "import" not in state_of(loop_dir).get("2", {}):
        assert first.poll() is None, (workdir / "first.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "round 2 never reached its import"
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = state_of(loop_dir)
    assert "evaluate" not in killed_at["2"], "the kill came too late to test a resume"
    tasks_at_kill = project_tasks(setup)
    run_ids = {k: killed_at[k]["train"]["run_id"] for k in ("1", "2")}
    checkpoints = {
        k: loop_dir / f"round-{k}" / "run" / run_ids[k] / "checkpoints" for k in ("1", "2")
    }
    done_before = mtimes(
        checkpoints["1"] / f"step-{STEPS:06d}",
        checkpoints["2"] / f"step-{STEPS:06d}",
        loop_dir / "round-1" / "reward_model" / "config.json",
        loop_dir / "round-1" / "export" / "reviews.jsonl",
    )

    # The same command again: it finishes round 2 from where it stopped.
    result = run_cli(*argv, cwd=workdir, env={**setup.env(), "PYTHONPATH": str(REPO)}, timeout=400)
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    state = state_of(loop_dir)
    for number in ("1", "2"):
        assert set(state[number]) == set(STAGES)

    # Nothing imported twice, nothing trained twice.
    tasks = project_tasks(setup)
    assert (
        len(tasks)
        == len(tasks_at_kill)
        == state["1"]["import"]["imported"] + state["2"]["import"]["imported"]
    )
    sample_ids = Counter(task["data"]["sample_id"] for task in tasks)
    assert sample_ids and max(sample_ids.values()) == 1
    assert mtimes(*done_before) == done_before
    for number in ("1", "2"):
        assert sorted(
            p.name for p in checkpoints[number].iterdir() if p.name.startswith("step")
        ) == ["step-000002", f"step-{STEPS:06d}"]

    # Every round's files; round 2 trained from round 1's policy against round 1's reward model.
    for number in ("1", "2"):
        round_dir = loop_dir / f"round-{number}"
        run_dir = round_dir / "run" / run_ids[number]
        assert (run_dir / "config.yaml").is_file()
        assert (round_dir / "export" / "annotations.jsonl").is_file()
        assert (round_dir / "export" / "reviews.jsonl").is_file()
        assert (round_dir / "reward_model" / "config.json").is_file()
    round_2 = yaml.safe_load(
        (loop_dir / "round-2" / "run" / run_ids["2"] / "config.yaml").read_text()
    )
    first_rm = str(loop_dir / "round-1" / "reward_model")
    assert round_2["rewards"][0] == {
        **round_2["rewards"][0],
        "type": "reward_model",
        "path": first_rm,
    }
    assert round_2["model"]["actor"]["model_name_or_path"] == str(
        checkpoints["1"] / f"step-{STEPS:06d}" / "policy"
    )
    round_1 = yaml.safe_load(
        (loop_dir / "round-1" / "run" / run_ids["1"] / "config.yaml").read_text()
    )
    assert round_1["rewards"][0]["path"] == str(tiny_models.reward_model)
    assert state["2"]["reward_model"]["parent"] == first_rm

    # Reviews: under the reviewer's own account; the tasks it failed on stay unreviewed.
    reviewer = ensure_reviewer_account(label_studio.url, label_studio.api_key, email)
    failures = state["1"]["review"]["failures"] + state["2"]["review"]["failures"]
    assert failures, "the flaky reviewer fails on one task in three: none failed?"
    for failure in failures:
        assert "raised RuntimeError: reviewer crashed" in failure["reason"] or (
            "rating 9 is not an integer from 1 to 5" in failure["reason"]
        )
    by_id = {task["id"]: task for task in tasks}
    assert all(by_id[failure["task_id"]]["annotations"] == 0 for failure in failures)
    reviewed = [task for task in tasks if task["annotations"]]
    assert len(reviewed) == len(tasks) - len(failures)
    assert len(reviewed) == state["1"]["review"]["reviewed"] + state["2"]["review"]["reviewed"]
    rows = [
        json.loads(line)
        for line in (loop_dir / "round-2" / "export" / "reviews.jsonl").read_text().splitlines()
    ]
    assert len(rows) == len(reviewed)
    assert {row["meta"]["annotator_id"] for row in rows} == {reviewer.user_id}

    # The table: printed and saved.
    summary = json.loads((loop_dir / "summary.json").read_text())
    assert [row["round"] for row in summary] == [1, 2]
    for row, number in zip(summary, ("1", "2"), strict=True):
        assert row["reviewed"] == state[number]["review"]["reviewed"]
        assert row["routed"] == STEPS * 4
        assert row["imported"] == state[number]["import"]["imported"] == STEPS * 4
        assert isinstance(row["policy_score"], float) and 1 <= row["policy_score"] <= 5
        assert isinstance(row["suggestions_accepted"], float)
        assert 0 <= row["suggestions_accepted"] <= 1
    assert "RM held-out acc." in (loop_dir / "summary.md").read_text()
    assert "policy score" in result.stdout

    # A rerun with the loop done does nothing more; one with another config is refused.
    again = run_cli(*argv, cwd=workdir, env={**setup.env(), "PYTHONPATH": str(REPO)}, timeout=200)
    assert again.returncode == 0 and "round 1/2: train" not in again.stderr
    assert project_tasks(setup) == tasks
    other = run_cli(
        *argv,
        "--trainer.learning_rate=0.001",
        cwd=workdir,
        env={**setup.env(), "PYTHONPATH": str(REPO)},
        timeout=200,
    )
    assert other.returncode == 2
    assert "another config" in other.stderr and "trainer.learning_rate" in other.stderr


def test_a_reviewer_that_raises_or_returns_nonsense_leaves_that_task_unreviewed(
    any_label_studio, workdir: Path
) -> None:
    setup = Setup(any_label_studio, workdir)
    names = ["raises-1", "string-1", "badcategory-1", "result-1", "fine-1"]
    records = [setup.record(i) | {"sample_id": name} for i, name in enumerate(names)]
    from annotation.labelstudio import task_from_record

    with setup.server.client() as client:
        project_id = client.ensure_project(setup.project, REVIEW_XML_PATH.read_text())
        client.import_tasks(project_id, [task_from_record(record) for record in records])
    annotation = AnnotationConfig(
        label_studio_url=any_label_studio.url,
        api_key=any_label_studio.api_key,
        project=setup.project,
    )
    from tests.helpers.loop_reviewers import by_sample

    told = []
    tally = review_run(
        annotation,
        [project_id],
        setup.run_id,
        by_sample,
        f"bot-{uuid.uuid4().hex[:6]}@lowtide.local",
        told.append,
    )
    reasons = {failure.sample_id: failure.reason for failure in tally.failures}
    assert told == tally.failures
    assert tally.reviewed == 2 and dict(tally.ratings) == {4: 1, 1: 1}
    assert reasons == {
        "raises-1": "the reviewer raised ValueError: no opinion",
        "string-1": "the reviewer returned str, not a Review or a result list",
        "badcategory-1": reasons["badcategory-1"],
    }
    assert "unknown failure categories ['boring']" in reasons["badcategory-1"]
    unreviewed = {
        task["data"]["sample_id"] for task in project_tasks(setup) if not task["annotations"]
    }
    assert unreviewed == set(reasons)


@pytest.mark.unit
def test_a_loop_directory_of_another_config_is_refused(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before anything trains or touches a service."""
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    config = workdir / "loop.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": {"actor": {"model_name_or_path": str(workdir / "no-model")}},
                "rewards": [{"type": "reward_model", "path": str(workdir / "no-rm")}],
            }
        )
    )
    argv = ["loop", "--config", str(config), "--dir", str(workdir / "loop"), "--rounds", "2"]
    code, _, err = invoke(capsys, *argv)
    assert code == 2 and "model.actor.model_name_or_path" in err  # got as far as training
    loop_json = json.loads((workdir / "loop" / "loop.json").read_text())
    # A setting at its default is not stored: directories made before it existed resume.
    assert "rm_written_weight" not in loop_json["settings"]["loop"]
    assert "rm_disagreement" not in loop_json["settings"]["loop"]
    # More rounds, or the same again: the same loop. Another seed or start: refused.
    code, _, err = invoke(capsys, *argv, "--rounds", "3")
    assert code == 2 and "another config" not in err
    for change, differs in (
        (["--trainer.seed=7"], "trainer.seed"),
        (["--start", "initial"], "loop.start"),
        (["--rm-written-weight", "0"], "loop.rm_written_weight"),
        (["--no-rm-disagreement"], "loop.rm_disagreement"),
    ):
        code, _, err = invoke(capsys, *argv, *change)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, lines
        assert "made by a loop with another config" in lines[0] and differs in lines[0]
    assert json.loads((workdir / "loop" / "loop.json").read_text()) == loop_json
    # A loop needs a reward model to retrain.
    config.write_text(yaml.safe_dump({"model": {"actor": {"model_name_or_path": "m"}}}))
    code, _, err = invoke(capsys, "loop", "--config", str(config), "--dir", str(workdir / "l2"))
    assert code == 2 and "exactly one {type: reward_model" in err


def wait_for_text(path: Path, text: str, process: subprocess.Popen, timeout: float = 400) -> None:
    deadline = time.monotonic() + timeout
    while text not in path.read_text():
        assert process.poll() is None, path.read_text()[-3000:]
        assert time.monotonic() < deadline, f"no {text!r} in {path}"
        time.sleep(0.1)


def test_people_review_ctrl_c_stops_the_wait_and_a_rerun_waits_again(
    label_studio, workdir: Path, tiny_models
) -> None:
    setup, config, loop_dir = loop_setup(label_studio, workdir, tiny_models)
    argv = ["loop", "--config", str(config), "--dir", str(loop_dir), "--rounds", "1",
            "--steps", "2", "--min-reviews", "2", "--poll", "0.2", *setup.flags]  # fmt: skip
    env = {**os.environ, **setup.env(), "COLUMNS": "200"}

    def start(log: Path) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "lowtide", *argv], cwd=workdir, env=env,
                                stdout=log.open("w"), stderr=subprocess.STDOUT)  # fmt: skip

    first_log = workdir / "first.log"
    first = start(first_log)
    wait_for_text(first_log, "to be reviewed in Label Studio", first)
    first.send_signal(signal.SIGINT)
    assert first.wait(timeout=60) == 130
    said = first_log.read_text()
    assert "stopped in round 1 after stage 'import': rerun the same command" in said
    assert "Traceback" not in said
    assert set(state_of(loop_dir)["1"]) == {"train", "import"}

    second_log = workdir / "second.log"
    second = start(second_log)
    wait_for_text(second_log, "to be reviewed in Label Studio", second)
    assert "round 1/1: train" not in second_log.read_text()  # resumed at the review
    with label_studio.client() as person:  # a person reviews two tasks in Label Studio
        project_id = person.find_project(setup.project)
        for task in person.unreviewed_tasks(project_id)[:2]:
            review = [{"from_name": "quality", "to_name": "response", "type": "rating",
                       "value": {"rating": 2}},
                      {"from_name": "better_response", "to_name": "response", "type": "textarea",
                       "value": {"text": ["Blue."]}}]  # fmt: skip
            person.create_annotation(task["id"], review)
    assert second.wait(timeout=300) == 0, second_log.read_text()[-3000:]
    state = state_of(loop_dir)["1"]
    assert state["review"] == {"reviewed": 2, "by": "people", "failures": [], "timed_out": False}
    assert state["evaluate"]["policy_score"] is None
    summary = json.loads((loop_dir / "summary.json").read_text())
    assert summary[0]["reviewed"] == 2 and summary[0]["policy_score"] is None


def test_a_kill_during_training_resumes_from_the_last_checkpoint(
    workdir: Path, tiny_models
) -> None:
    """No Label Studio needed: the round stops at its import (nothing listens), after the
    training stage is recorded."""
    from rq import Queue

    from lowtide.services.process import free_port
    from tests.helpers.pipeline import REDIS_URL

    config = loop_config(workdir, tiny_models)
    loop_dir = workdir / "loop"
    queue_name = f"test-loop-{uuid.uuid4().hex[:8]}"
    argv = ["loop", "--config", str(config), "--dir", str(loop_dir), "--rounds", "1",
            "--steps", "6", f"--queue.name={queue_name}"]  # fmt: skip
    env = {**os.environ, "REDIS_URL": REDIS_URL, "LABEL_STUDIO_API_KEY": "k" * 40,
           "LABEL_STUDIO_URL": f"http://127.0.0.1:{free_port()}", "COLUMNS": "200"}  # fmt: skip
    log = workdir / "first.log"
    first = subprocess.Popen([sys.executable, "-m", "lowtide", *argv], cwd=workdir, env=env,
                             stdout=log.open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 300
    latest = None
    while latest is None or latest.read_text() != "step-000004":
        assert first.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < deadline, "no checkpoint of step 4"
        found = list(loop_dir.glob("round-1/run/*/checkpoints/latest"))
        latest = found[0] if found else None
        time.sleep(0.05)
    first.kill()
    first.wait()
    checkpoints = latest.parent
    kept = mtimes(checkpoints / "step-000002", checkpoints / "step-000004")
    assert "train" not in state_of(loop_dir).get("1", {})

    try:
        again = run_cli(*argv, cwd=workdir, env=env, timeout=300)
        assert again.returncode == 1, again.stderr[-3000:]
        # Stopped at the import: nothing listens where Label Studio should be.
        assert "cannot reach Label Studio" in again.stderr
        assert "import" not in state_of(loop_dir)["1"]
        train = state_of(loop_dir)["1"]["train"]
        assert train["steps"] == 6
        # Steps 5 and 6 only were taken again; steps 1-4 stay as they were.
        assert mtimes(*kept) == kept
        assert sorted(p.name for p in checkpoints.iterdir() if p.name.startswith("step")) == [
            "step-000002", "step-000004", "step-000006"]  # fmt: skip
        assert "trainer.resume" not in again.stderr
        assert train["routed"] == 6 * 4  # the steps before the kill count too
        assert (checkpoints.parent / "config.yaml").read_text().count("resume: true") == 1
    finally:
        from redis import Redis

        Queue(queue_name, connection=Redis.from_url(REDIS_URL)).empty()


def test_two_rounds_of_comparisons_train_each_next_reward_model(
    label_studio, workdir: Path, tiny_models
) -> None:
    """`annotation.review_mode: compare`: each round's groups become comparison tasks, the
    scripted reviewer picks best and worst, and their orders train the next reward model."""
    setup = Setup(label_studio, workdir, project=f"loop compare {uuid.uuid4().hex[:6]}")
    # groups of 4: samples_per_prompt
    scripted_loop(setup, workdir, tiny_models, annotation={"review_mode": "compare"})
    loop_dir = workdir / "loop"
    state = state_of(loop_dir)
    tasks = project_tasks(setup)
    assert tasks and all(len(task["data"]["compare"]) >= 2 for task in tasks)
    assert len(tasks) == state["1"]["import"]["imported"] + state["2"]["import"]["imported"]
    for number in ("1", "2"):
        assert set(state[number]) == set(STAGES)
        assert state[number]["review"]["reviewed"] == state[number]["import"]["imported"]
        export = loop_dir / f"round-{number}" / "export"
        compared = (export / "reviews.comparisons.jsonl").read_text().splitlines()
        pairs = (export / "reviews.preferences.jsonl").read_text().splitlines()
        assert compared and len(pairs) >= len(compared)  # at least one order per comparison
        assert state[number]["reward_model"]["path"], state[number]["reward_model"]
    assert state["2"]["reward_model"]["parent"] == str(loop_dir / "round-1" / "reward_model")


def test_with_the_budget_round_2_reviews_where_the_reward_model_changed_its_mind(
    label_studio, workdir: Path, tiny_models
) -> None:
    """`sampling.policy: budget`: round 2 scores with the loop's first reward model too, each of
    its tasks shows that score outside the total, and its uncertain share is spent; round 1 has
    nothing to disagree with."""
    setup = Setup(label_studio, workdir, project=f"loop budget {uuid.uuid4().hex[:6]}")
    sampling = {"policy": "budget", "review_budget": {"reviews": 8, "per": "round"},
                "budget": {"uncertainty_share": 0.5}}  # fmt: skip
    result = scripted_loop(setup, workdir, tiny_models, sampling=sampling)
    loop_dir = workdir / "loop"
    first = str(tiny_models.reward_model)
    assert (
        result.stderr.count(f"uncertain share: where the reward model disagrees with {first}") == 1
    )
    state = state_of(loop_dir)
    run_ids = {number: state[number]["train"]["run_id"] for number in ("1", "2")}
    for number, expected in (("1", None), ("2", first)):
        saved = yaml.safe_load(
            (loop_dir / f"round-{number}" / "run" / run_ids[number] / "config.yaml").read_text()
        )
        assert saved["rewards"][0]["params"].get("previous") == expected
    tasks = project_tasks(setup)
    by_round = {number: [t["data"] for t in tasks if t["data"]["run_id"] == run_id]
                for number, run_id in run_ids.items()}  # fmt: skip
    assert by_round["1"] and by_round["2"]
    assert not any("reward_model/previous" in t["reward_details"] for t in by_round["1"])
    assert all(
        "reward_model/previous" in t["reward_details"] and "not part of the total" in
        t["reward_details"] for t in by_round["2"]
    )  # fmt: skip
    # Which samples the disagreement ranks first is choose()'s unit test (tests/test_budget.py).
    assert any(t["selected_by"]["reason"] == "uncertain" for t in by_round["2"])
