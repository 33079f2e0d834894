"""verl 0.9.1 with lowtide's reward manager, through verl's own code in verl's own virtualenv.

One run of tests/helpers/verl_reward_loop.py (the verl virtualenv's python, ~15 s) drives verl's
`RewardLoopWorker` (what each reward worker actor runs) on the real `ppo_trainer.yaml` composed
by Hydra and real `DataProto` batches tokenized by the tiny tokenizer, with and without lowtide;
the tests below read what verl got back, what reached Redis and the spool, and the rollout dump
verl's own `RayPPOTrainer._write_generations` wrote. No Ray cluster and no GPU are needed:
nothing is replaced. The virtualenv is built once per user (`make peer-venvs`); the tests skip,
saying why, only where it cannot be built.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from rq.serializers import JSONSerializer

from lowtide.errors import UserError
from lowtide.services import peer_venvs
from lowtide.services.process import free_port
from tests.conftest import REPO, run_cli, run_shared_dir
from tests.helpers.docs import page
from tests.helpers.queued import queued_records as read_queued_records
from tests.helpers.verl_reward_fn import GROUPS, compute_score

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
HELPER = REPO / "tests" / "helpers" / "verl_reward_loop.py"
# What verl's own writer made of the helper's step-7 batch: `lowtide ingest --format verl` tests
# read it without verl (test_the_dump_fixture_is_what_verl_writes keeps it true).
DUMP_FIXTURE = REPO / "tests" / "data" / "verl_rollout_data_dir" / "7.jsonl"
THRESHOLD = 0.5
README_THRESHOLD = 0.2  # what the docs' verl config sets


def readme_verl() -> dict[str, Any]:
    """The docs' verl config file and its command-line overrides, as shown."""
    section = page("integrations/verl.md")
    config = re.search(r"```yaml\n(.*?)```", section, flags=re.S)
    command = re.search(r"```bash\n(.*?)```", section, flags=re.S)
    assert config is not None and command is not None
    words = command[1].replace("\\\n", " ").split()
    assert words[:3] == ["python", "-m", "verl.trainer.main_ppo"]
    return {"readme_yaml": config[1], "readme_overrides": [w for w in words if "=" in w]}


@dataclass
class VerlRun:
    out: dict[str, Any]  # what the helper saw, per phase
    records: list[dict[str, Any]]  # everything queued in Redis, job by job
    dump_dir: Path
    queue: str
    tokenizer: Path


def expected(groups: list, threshold: float = THRESHOLD) -> Counter:
    """(prompt, response, reward, components) of every sample the threshold selects."""
    found: Counter = Counter()
    for prompt, truth, responses in groups:
        for response in responses:
            scored = compute_score("lowtide-tests", response, truth)
            if scored["score"] < threshold:
                details = {k: v for k, v in scored.items() if isinstance(v, float)}
                found[(prompt, response, scored["score"], tuple(sorted(details.items())))] += 1
    return found


def keyed(records: list[dict[str, Any]]) -> Counter:
    return Counter(
        (r["prompt"], r["response"], r["reward"], tuple(sorted(r["reward_details"].items())))
        for r in records
    )


def queued_records(queue: str) -> list[dict[str, Any]]:
    return read_queued_records(REDIS_URL, queue)


def delete_queue(queue: str) -> None:
    connection = redis.Redis.from_url(REDIS_URL)
    Queue(queue, connection=connection, serializer=JSONSerializer).delete(delete_jobs=True)
    for key in connection.scan_iter(f"*{queue}*"):
        connection.delete(key)


@pytest.fixture(scope="module")
def verl_python() -> Path:
    try:
        return peer_venvs.ensure(peer_venvs.VERL, REPO)
    except UserError as error:
        pytest.skip(f"the verl {peer_venvs.VERL.version} virtualenv cannot be built: {error}")


@pytest.fixture(scope="module")
def verl_run(verl_python: Path, tiny_models, tmp_path_factory) -> VerlRun:
    """One run of the helper per test run: the workers of a parallel run that get some of these
    tests read what the first saved (each would run verl again, ~14 s of CPU)."""
    shared = run_shared_dir(tmp_path_factory)
    work, saved = shared / "verl-run", shared / "verl-run.json"
    with open(shared / "verl-run.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            saved.write_text(json.dumps(run_verl(verl_python, tiny_models.policy, work)))
    run = json.loads(saved.read_text())
    return VerlRun(run["out"], run["records"], work / "dump", run["queue"], tiny_models.policy)


def run_verl(verl_python: Path, tokenizer: Path, work: Path) -> dict[str, Any]:
    """The helper's run in `work`: what it saw and what it queued (the queue then deleted)."""
    shutil.rmtree(work, ignore_errors=True)  # a run that failed before
    work.mkdir()
    queue = f"test-verl-{uuid.uuid4().hex[:8]}"
    spec = {
        "tokenizer": str(tokenizer),
        "queue": queue,
        "down_url": f"redis://127.0.0.1:{free_port()}/0",  # nobody listens there
        "spool_dir": str(work / "spool"),
        "dump_dir": str(work / "dump"),
        "threshold": THRESHOLD,
        **readme_verl(),
    }
    (work / "spec.json").write_text(json.dumps(spec))
    env = peer_venvs.VERL.environ(REPO, {**os.environ, "REDIS_URL": REDIS_URL})
    result = subprocess.run(
        [str(verl_python), str(HELPER), str(work / "spec.json"), str(work / "out.json")],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    try:
        assert result.returncode == 0, result.stderr[-4000:]
        out = json.loads((work / "out.json").read_text())
        return {"out": out, "records": queued_records(queue), "queue": queue}
    finally:
        delete_queue(queue)


def test_verl_builds_lowtide_manager_and_gets_the_same_rewards(verl_run: VerlRun) -> None:
    out = verl_run.out
    assert out["step"]["manager"] == "LowtideRewardManager"
    assert out["step"]["wrapped_manager"] == "NaiveRewardManager"
    for phase in ("step", "stream", "redis_down"):  # every score and extra info, as without
        assert out[phase]["wrapped"] == out[phase]["plain"], phase
        assert len(out[phase]["plain"]) in (8, 16)
    # A reward function that raises: verl sees the same error, lowtide adds nothing to it.
    assert out["raises"]["plain"]["raised"] == "ValueError"
    assert out["raises"]["wrapped"] == out["raises"]["plain"]
    assert out["problems"] == {}


def test_verls_reward_workers_share_one_review_budget(verl_run: VerlRun) -> None:
    """Reward workers are Ray actors that do not see WORLD_SIZE: the budget is split over
    verl's `reward.num_workers` (3 here) unless `review_budget.processes` says otherwise."""
    assert verl_run.out["budget"] == {"processes": 3}


def test_the_queued_records_are_the_low_scored_samples_once_each(verl_run: VerlRun) -> None:
    at_step = [r for r in verl_run.records if r["step"] == 7]
    want = expected(GROUPS)
    assert len(want) == 7  # some of each group, not all
    assert keyed(at_step) == want
    assert len({r["sample_id"] for r in verl_run.records}) == len(verl_run.records)
    groups = {r["prompt"]: set() for r in at_step}
    for record in at_step:
        groups[record["prompt"]].add(record["group_id"])
        assert record["run_id"] == f"lowtide-tests/{verl_run.queue}"
        assert record["rank"] == 0  # one worker outside Ray
        assert record["model"]["name_or_path"] == str(verl_run.tokenizer)
        assert record["generation"]["num_generations"] == 4
        assert record["generation"]["max_new_tokens"] == 16
        assert record["generation"]["step_source"] == "global_steps"
        assert record["selected_by"]["policy"] == "threshold"
        assert record["selected_by"]["parameter"] == {"threshold": THRESHOLD}
        assert record["truncated"] is False
    assert all(len(ids) == 1 for ids in groups.values())  # one uid per prompt: one group
    assert len(set.union(*groups.values())) == len(groups)
    # The idle timer routed the batch (not close): one round, 7 of 16 handed to the producer.
    assert verl_run.out["step"]["pending_before_idle"] == 16
    assert verl_run.out["step"]["rounds_after_idle"] == 1
    assert verl_run.out["step"]["totals"] == {"scored": 16, "submitted": 7}
    # Nothing from the batch whose reward function raised.
    assert {r["step"] for r in verl_run.records} == {7, 1, 8, 10, 12}


def test_requests_without_verls_step_are_routed_by_the_workers_round(verl_run: VerlRun) -> None:
    """Streaming requests (as verl 0.9.1's agent loop sends them) carry no step: the worker's
    second burst is round 1, and the records say so."""
    streamed = [r for r in verl_run.records if r["step"] == 1]
    assert keyed(streamed) == expected(GROUPS[:2])
    assert {r["generation"]["step_source"] for r in streamed} == {"round"}
    assert verl_run.out["stream"]["rounds_after_idle"] == 2


def test_redis_down_spools_without_stalling_then_replays_once(verl_run: VerlRun) -> None:
    down = verl_run.out["redis_down"]
    assert down["wrapped_s"] < down["plain_s"] + 1.0  # verl's scoring does not wait on Redis
    assert down["close_s"] < 5
    spooled = [record for batch in down["spool"] for record in batch["records"]]
    assert down["spooled"] == len(spooled) == 7
    assert keyed(spooled) == expected(GROUPS)
    # The next producer (Redis up) replayed the spool: each record queued exactly once.
    replayed = [r for r in verl_run.records if r["step"] == 8]
    assert sorted(r["sample_id"] for r in replayed) == sorted(r["sample_id"] for r in spooled)


def test_results_lowtide_cannot_read_pass_through_unrouted(verl_run: VerlRun) -> None:
    """A user's own manager, wrapped by `module:Class`: verl gets the very objects it returned;
    numpy and tensor scores are routed, a text score and NaN are not; without uids each sample
    is a group of its own."""
    odd = verl_run.out["odd"]
    assert odd["wrapped_manager"] == "OddManager"
    assert odd["same_objects"] is True
    assert odd["problems"] == {}
    routed = sorted((r for r in verl_run.records if r["step"] == 10), key=lambda r: r["reward"])
    assert [(r["reward"], r["reward_details"]) for r in routed] == [
        (0.125, {"n": 3.0, "ok": 1.0}),
        (0.25, {}),
    ]
    assert len({r["group_id"] for r in routed}) == 2


def test_mistakes_in_the_lowtide_section_are_one_clear_message(verl_run: VerlRun) -> None:
    mistakes = verl_run.out["mistakes"]
    assert mistakes["wrap"] == (
        "UsageError: lowtide.wrap: no reward manager 'naiv' is registered; did you mean 'naive'?"
    )
    assert mistakes["key"] == (
        "UsageError: lowtide.treshold: not a lowtide setting for verl; "
        "did you mean lowtide.sampling.threshold?"
    )
    assert mistakes["idle"] == (
        "UsageError: lowtide.flush_idle_s: must be a positive number of seconds"
    )
    assert mistakes["sampling"].startswith("UsageError: lowtide.sampling.treshold: unknown key")
    assert "threshold" in mistakes["sampling"]
    assert mistakes["run_id"] == "UsageError: lowtide.run_id: must be a name"
    # Once lowtide.verl is imported, verl's registry knows it by name too.
    assert verl_run.out["registry"] == {
        "lowtide": "LowtideRewardManager",
        "by_name": "LowtideRewardManager",
    }


def test_the_readme_config_file_works_as_shown(verl_run: VerlRun) -> None:
    """The docs' `my_ppo.yaml`, composed by Hydra over verl's ppo_trainer.yaml (with the
    test's own model, data and queue): its manager, its wrap, its threshold."""
    assert verl_run.out["readme_file"] == {
        "manager": "LowtideRewardManager",
        "wrapped_manager": "NaiveRewardManager",
        "same_scores": True,
    }
    from_file = [r for r in verl_run.records if r["step"] == 12]
    assert keyed(from_file) == expected(GROUPS, README_THRESHOLD)
    assert len(from_file) == 1


def test_the_dump_fixture_is_what_verl_writes(verl_run: VerlRun) -> None:
    written = verl_run.dump_dir / "7.jsonl"
    assert written.read_text() == DUMP_FIXTURE.read_text()
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert len(rows) == 16
    assert set(rows[0]) == {"input", "output", "gts", "score", "step", "overlap", "brevity",
                            "first_word"}  # fmt: skip
    assert {row["step"] for row in rows} == {7}


def test_two_reward_worker_actors_route_their_own_samples_under_their_own_ranks(
    verl_python: Path, tiny_models, tmp_path: Path
) -> None:
    """verl's RewardLoopManager with two Ray actors (a local Ray instance, ~25 s to start): the
    trainer's scores are the reward function's, and each low-scored sample is queued once, by
    the worker that scored it, with ids that do not collide."""
    queue = f"test-verl-ray-{uuid.uuid4().hex[:8]}"
    spec = {"ray": True, "tokenizer": str(tiny_models.policy), "queue": queue,
            "spool_dir": str(tmp_path / "spool"), "threshold": THRESHOLD,
            **readme_verl()}  # fmt: skip
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = peer_venvs.VERL.environ(REPO, {**os.environ, "REDIS_URL": REDIS_URL})
    try:
        result = subprocess.run(
            [str(verl_python), str(HELPER), str(tmp_path / "spec.json"), str(tmp_path / "out")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-4000:]
        scores = json.loads((tmp_path / "out").read_text())["scores"]
        want = [compute_score("", r, truth)["score"] for _, truth, rs in GROUPS for r in rs]
        assert scores == pytest.approx(want, abs=1e-6)  # float32, as verl keeps them
        records = queued_records(queue)
        assert keyed(records) == expected(GROUPS)
        assert {r["rank"] for r in records} == {0, 1}  # reward_loop_worker_0 and _1
        assert {r["step"] for r in records} == {11}
        assert len({r["sample_id"] for r in records}) == len(records)
    finally:
        delete_queue(queue)


def test_lowtide_ingest_routes_verls_dump(tmp_path: Path) -> None:
    """The no-code route on a dump verl itself wrote: the same low-scored samples, once each
    (a second `--once` run routes nothing more)."""
    dump = tmp_path / "rollouts"
    dump.mkdir()
    (dump / "7.jsonl").write_text(DUMP_FIXTURE.read_text())
    queue = f"test-verl-ingest-{uuid.uuid4().hex[:8]}"
    flags = [f"--queue.name={queue}", f"--sampling.threshold={THRESHOLD}",
             f"--queue.spool_dir={tmp_path / 'spool'}"]  # fmt: skip
    env = {"REDIS_URL": REDIS_URL}
    try:
        for _ in range(2):
            result = run_cli("ingest", str(dump), "--format", "verl", "--once", *flags,
                             cwd=tmp_path, env=env, timeout=120)  # fmt: skip
            assert result.returncode == 0, result.stderr
        records = queued_records(queue)
        # verl's dump keeps the reward function's own `score` (it overwrites the summed one), so
        # the records carry it as the reward and the other numbers as components.
        assert keyed(records) == Counter(
            {(p, r, score, tuple(d for d in details if d[0] != "score")): n
             for (p, r, score, details), n in expected(GROUPS).items()}
        )  # fmt: skip
        assert {r["step"] for r in records} == {7}
        assert len({r["sample_id"] for r in records}) == len(records)
    finally:
        delete_queue(queue)
