"""`lowtide ingest` against a real redis-server: each dump format, written by the trainer's own
code (verl's `RayPPOTrainer._write_generations`, a real TRL `GRPOTrainer` with
`log_completions`, our tracker's local files), is routed with the dump's own values; a follower
killed at any point and restarted queues every selected sample exactly once; a line still being
written waits for its newline; malformed lines are counted and skipped; a Redis outage spools."""

from __future__ import annotations

import fcntl
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rl.samples import make_sample_id
from tests.conftest import REPO, invoke, run_shared_dir
from tests.helpers.queued import queued_records as read_queued_records
from tests.helpers.redis_server import OwnRedis

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

QUEUE = "ingest-test"
ROUTE_ALL = [
    "--sampling.policy=threshold",
    "--sampling.threshold=1e30",
    "--sampling.max_per_step=1000000",
    "--sampling.max_per_minute=1000000000",
]
THRESHOLD = 0.5
ROUTE_LOW = [  # the policy selects part of each step
    "--sampling.policy=threshold",
    f"--sampling.threshold={THRESHOLD}",
    "--sampling.max_per_step=1000000",
    "--sampling.max_per_minute=1000000000",
]
# A well-formed verl dump line (sampling/sources/verl/dumps.py).
VERL_ROW = {"input": "q", "output": "a", "gts": None, "score": 0.1, "step": 3}
STEPS = 6
PER_STEP = 8  # 2 prompts x 4 responses
VERL_WRITER = """
import json, sys
from verl.trainer.ppo.ray_trainer import RayPPOTrainer
spec = json.load(sys.stdin)
for s in spec["steps"]:
    RayPPOTrainer._write_generations(
        s["inputs"], s["outputs"], s["gts"], s["scores"], s["extra"], spec["dir"], s["step"]
    )
"""


# ---- helpers -----------------------------------------------------------------------------------


def queued_records(url: str, name: str = QUEUE) -> list[dict[str, Any]]:
    return read_queued_records(url, name)


def queued_ids(url: str, name: str = QUEUE) -> Counter[str]:
    return Counter(record["sample_id"] for record in queued_records(url, name))


def each_once(ids: Any) -> Counter[str]:
    return Counter({sample_id: 1 for sample_id in ids})


def flags(tmp_path: Path, policy: list[str] = ROUTE_ALL) -> list[str]:
    return [*policy, f"--queue.name={QUEUE}", f"--queue.spool_dir={tmp_path / 'spool'}"]


def verl_spec(seed: int = 0) -> list[dict[str, Any]]:
    """What verl's trainer hands its dump writer: per step, decoded prompts and responses, the
    ground truths, the summed token-level scores and the reward extra info (one NaN score)."""
    rng = random.Random(seed)
    steps = []
    for step in range(1, STEPS + 1):
        inputs = [f"Question {step}.{i // 4}: what is {step} + {i // 4}?" for i in range(PER_STEP)]
        outputs = [f"Answer {step}-{i}: " + "x" * rng.randrange(50, 300) for i in range(PER_STEP)]
        scores = [round(rng.random(), 6) for _ in range(PER_STEP)]
        if step == 2:
            scores[3] = math.nan  # a score verl could not compute: never selected
        extra = {
            "acc": [score >= THRESHOLD for score in scores],  # a bool, as math_dapo returns it
            "format": [round(rng.random(), 3) for _ in range(PER_STEP)],
            "pred": [f"pred {i}" for i in range(PER_STEP)],  # not a number: not a component
        }
        gts = [str(step + i // 4) for i in range(PER_STEP)]
        steps.append({"step": step, "inputs": inputs, "outputs": outputs, "gts": gts,
                      "scores": scores, "extra": extra})  # fmt: skip
    return steps


def expected_verl(spec: list[dict[str, Any]], run_id: str, below: float = math.inf) -> dict:
    """sample id -> what its record must hold, for the samples the threshold selects."""
    found = {}
    for s in spec:
        texts = zip(s["inputs"], s["outputs"], s["scores"], strict=True)
        for i, (prompt, response, score) in enumerate(texts):
            if not score < below:  # NaN: never selected
                continue
            sample_id = make_sample_id(run_id, s["step"], 0, i, prompt, response)
            found[sample_id] = {
                "step": s["step"], "index": i, "prompt": prompt, "response": response,
                "reward": score,
                "reward_details": {"acc": float(s["extra"]["acc"][i]),
                                   "format": s["extra"]["format"][i]},
            }  # fmt: skip
    return found


@dataclass(frozen=True)
class VerlLibrary:
    """verl's dump files of every step, and the spec they were written from."""

    directory: Path
    spec: list[dict[str, Any]]

    def copy_steps(self, target: Path, steps: range) -> None:
        copy_steps(self.directory, target, steps)

    def expected(self, run_id: str, below: float = math.inf) -> dict:
        return expected_verl(self.spec, run_id, below)


@pytest.fixture(scope="module")
def verl_library(tmp_path_factory: pytest.TempPathFactory) -> VerlLibrary:
    """verl dumps written by verl 0.9.1's own writer, in its virtualenv, once per test run:
    the workers of a parallel run that get these tests read what the first wrote (each would
    start verl again, a module-scoped fixture being built once per worker)."""
    from lowtide.services.peer_venvs import VERL, ensure

    spec = verl_spec()
    shared = run_shared_dir(tmp_path_factory)
    directory, written = shared / "verl-library", shared / "verl-library.written"
    with open(shared / "verl-library.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not written.exists():
            python = ensure(VERL, REPO)
            shutil.rmtree(directory, ignore_errors=True)  # a write that failed before
            directory.mkdir()
            subprocess.run(
                [str(python), "-c", VERL_WRITER],
                input=json.dumps({"dir": str(directory), "steps": spec}),
                text=True, check=True, capture_output=True, env=VERL.environ(REPO),
            )  # fmt: skip
            written.touch()
    return VerlLibrary(directory, spec)


def copy_steps(library: Path, target: Path, steps: range) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for step in steps:
        shutil.copy(library / f"{step}.jsonl", target / f"{step}.jsonl")


def start_ingest(directory: Path, extra: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "lowtide", "ingest", str(directory), *extra],
        env={**os.environ, **env}, cwd=directory.parent, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def run_ingest(directory: Path, extra: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    process = start_ingest(directory, extra, env)
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def wait_for(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def env(own_redis: OwnRedis, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    return {"REDIS_URL": own_redis.url, "OMP_NUM_THREADS": "1"}


@pytest.fixture
def dumps(workdir: Path) -> Path:
    """An empty dump directory for a test to write its own lines into."""
    path = workdir / "dumps"
    path.mkdir()
    return path


# ---- each format, read and routed as the trainer wrote it --------------------------------------


def test_verl_dumps_are_routed_with_verls_values(
    verl_library, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = workdir / "rollouts-verl"
    verl_library.copy_steps(dumps, range(1, STEPS + 1))
    code, out, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0, err
    expected = verl_library.expected(run_id="rollouts-verl")  # the directory's name by default
    records = queued_records(own_redis.url)
    assert len(records) == len(expected) == STEPS * PER_STEP - 1  # all but the NaN score
    for record in records:
        want = expected[record["sample_id"]]
        assert {key: record[key] for key in want} == want
        assert record["run_id"] == "rollouts-verl" and record["rank"] == 0
    # Samples of one input share a group within a step; the two inputs differ.
    groups = {(r["step"], r["prompt"]): r["group_id"] for r in records}
    assert len(set(groups.values())) == len(groups) == 2 * STEPS
    assert f"{STEPS} verl dump files" in out and f"{len(expected)} routed" in out
    assert "0 malformed" in out and "cursor: " in out


def test_trl_completion_logs_are_routed_with_trls_totals(
    tiny_models, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real GRPOTrainer with two reward functions (weights 1.0 and 0.5; the second gives None
    for some samples) writes its log_completions parquet files; every row is routed once, with
    TRL's weighted, NaN-aware total and each function's value."""
    import pandas as pd

    from tests.helpers.trl_run import lengths_reward, trainer

    def sometimes(completions: list[str], **_: Any) -> list[float | None]:
        return [None if len(text) % 3 == 0 else -1.0 for text in completions]

    out_dir = workdir / "trl-out"
    run = trainer(
        "grpo", tiny_models.policy, out_dir, [lengths_reward, sometimes], 3,
        log_completions=True, reward_weights=[1.0, 0.5], per_device_train_batch_size=8,
    )  # fmt: skip
    run.train()
    files = sorted((out_dir / "completions").glob("completions_*.parquet"))
    assert len(files) == 3
    rows = [row for path in files for row in pd.read_parquet(path).to_dict("records")]

    code, out, err = invoke(
        capsys, "ingest", str(out_dir), "--once", "--reward-weights", "1.0,0.5", *flags(workdir)
    )
    assert code == 0, err
    records = queued_records(own_redis.url)
    assert len(records) == len(rows) == 3 * 8
    by_text = {(r["step"], r["prompt"], r["response"]): r for r in records}
    for row in rows:
        record = by_text[(row["step"], row["prompt"], row["completion"])]
        other = row["sometimes"]
        total = row["lengths_reward"] + (0.0 if math.isnan(other) else 0.5 * other)
        assert record["reward"] == pytest.approx(total)
        assert record["reward_details"] == {
            "lengths_reward": row["lengths_reward"],
            "sometimes": None if math.isnan(other) else other,
        }
        assert record["advantage"] == pytest.approx(row["advantage"])
    assert "3 trl dump files" in out and "trl-out" in {r["run_id"] for r in records}


def test_our_own_rollout_tables_are_routed(
    own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tables our tracker writes (rollouts/*.jsonl; never rollouts/tokens/)."""
    from rl.config import LoggerConfig
    from rl.samples import Sample
    from rl.tracking import RunInfo, Tracker

    run_dir = workdir / "logs" / "run-7"
    config = LoggerConfig(name=["jsonl"], log_interval={"tables": 1})
    tracker = Tracker.from_config(config, RunInfo("run-7", "run-7", run_dir.parent, run_dir, {}))
    written = []
    for step in (1, 2):
        samples = [
            Sample(index=i, group_id=i // 2, prompt=f"p{step}-{i // 2}", response=f"r{step}-{i}",
                   prompt_ids=(1,), response_ids=(2, 3), truncated=i == 3, reward=i / 4,
                   reward_details={"kind": i / 8})
            for i in range(4)
        ]  # fmt: skip
        tracker.on_stage("step_end", step, {}, samples)
        written += [(step, sample) for sample in samples]
    tracker.close()
    (run_dir / "rollouts" / "tokens").mkdir(exist_ok=True)
    (run_dir / "rollouts" / "tokens" / "rollout_samples-step-0000001.jsonl").write_text("{}\n")

    code, out, err = invoke(capsys, "ingest", str(run_dir), "--once", *flags(workdir))
    assert code == 0, err
    records = {(r["step"], r["index"]): r for r in queued_records(own_redis.url)}
    assert len(records) == len(written) == 8
    for step, sample in written:
        record = records[(step, sample.index)]
        assert (record["prompt"], record["response"], record["reward"]) == (
            sample.prompt, sample.response, sample.reward,
        )  # fmt: skip
        assert record["reward_details"] == dict(sample.reward_details)
        assert record["truncated"] == sample.truncated and record["run_id"] == "run-7"
    assert "2 lowtide dump files" in out and "0 malformed" in out


# ---- restarts: exactly once --------------------------------------------------------------------


@pytest.mark.parametrize(
    "failpoint",
    [
        "routed:3",  # killed after routing, before anything was saved
        "submitting:1",  # the records saved with the cursor, not yet handed over
        "handed:1",  # on the queue, the cursor not yet saved without them
    ],
)
def test_killed_mid_directory_and_restarted_queues_each_selected_sample_once(
    verl_library, own_redis: OwnRedis, env, workdir: Path, failpoint: str
) -> None:
    """SIGKILL at each point of the hand-over while following a run's first steps; the restart
    sees more steps (so a naive re-read would batch the re-routed records differently)."""
    dumps = workdir / "dumps"
    verl_library.copy_steps(dumps, range(1, 4))
    killed = start_ingest(
        dumps, ["--interval", "0.1", *flags(workdir, ROUTE_LOW)],
        {**env, "LOWTIDE_INGEST_FAILPOINT": failpoint},
    )  # fmt: skip
    assert killed.wait(timeout=60) == -signal.SIGKILL, killed.communicate()
    if failpoint == "handed:1":
        assert sum(queued_ids(own_redis.url).values()) > 0  # the kill came after queueing
    verl_library.copy_steps(dumps, range(4, STEPS + 1))
    code, out, err = run_ingest(dumps, ["--once", *flags(workdir, ROUTE_LOW)], env)
    assert code == 0, err
    expected = verl_library.expected("dumps", below=THRESHOLD)
    assert queued_ids(own_redis.url) == each_once(expected)  # each exactly once
    if failpoint != "routed:3":
        assert "interrupted run" in out


def test_sigkill_at_random_moments_while_a_run_writes_loses_and_repeats_nothing(
    verl_library, own_redis: OwnRedis, env, workdir: Path, dumps: Path
) -> None:
    rng = random.Random(7)
    args = ["--interval", "0.05", *flags(workdir, ROUTE_LOW), "--queue.max_latency_ms=20"]
    for step in range(1, STEPS + 1):
        follower = start_ingest(dumps, args, env)
        verl_library.copy_steps(dumps, range(step, step + 1))
        time.sleep(rng.uniform(0.8, 1.6))  # start-up is ~0.7 s: kills land in various places
        follower.kill()
        follower.wait()
    code, _, err = run_ingest(dumps, ["--once", *flags(workdir, ROUTE_LOW)], env)
    assert code == 0, err
    assert queued_ids(own_redis.url) == each_once(verl_library.expected("dumps", below=THRESHOLD))


def test_a_stopped_follower_resumes_where_it_stopped(
    verl_library, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = workdir / "dumps"
    verl_library.copy_steps(dumps, range(1, 3))
    assert invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))[0] == 0
    verl_library.copy_steps(dumps, range(3, STEPS + 1))
    code, out, _ = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0 and f"{(STEPS - 2) * PER_STEP} samples read" in out
    assert queued_ids(own_redis.url) == each_once(verl_library.expected("dumps"))
    # Another queue keeps a cursor of its own: it gets everything.
    other = [*flags(workdir), "--queue.name=ingest-other"]
    assert invoke(capsys, "ingest", str(dumps), "--once", *other)[0] == 0
    assert queued_ids(own_redis.url, "ingest-other") == each_once(verl_library.expected("dumps"))
    # A cursor keeps its run id: another one is refused, not routed again under new ids.
    code, _, err = invoke(capsys, "ingest", str(dumps), "--once", "--run-id=x", *flags(workdir))
    assert code == 1 and "follows run id 'dumps'" in err and len(err.strip().splitlines()) == 1


# ---- files being written, bad lines, Redis down ------------------------------------------------


def test_a_half_written_last_line_is_picked_up_when_complete(
    own_redis: OwnRedis, env, workdir: Path, dumps: Path
) -> None:
    lines = [
        json.dumps({"input": f"q{i}", "output": f"a{i}", "gts": "", "score": 0.1, "step": 1})
        for i in range(4)
    ]
    path = dumps / "1.jsonl"
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    follower = start_ingest(dumps, ["--interval", "0.1", *flags(workdir)], env)
    try:
        wait_for(lambda: sum(queued_ids(own_redis.url).values()) == 3)
        time.sleep(1.5)  # polls and flushes go by: the cut line stays unread
        assert sum(queued_ids(own_redis.url).values()) == 3
        with open(path, "a") as handle:
            handle.write(lines[3][20:] + "\n")
        wait_for(lambda: sum(queued_ids(own_redis.url).values()) == 4)
    finally:
        follower.send_signal(signal.SIGTERM)
        out, err = follower.communicate(timeout=30)
    assert follower.returncode == 0, err
    expected = {make_sample_id("dumps", 1, 0, i, f"q{i}", f"a{i}") for i in range(4)}
    assert queued_ids(own_redis.url) == each_once(expected)
    assert "malformed" in out and "0 malformed" in out and "SIGTERM" in err


def test_malformed_lines_are_counted_and_skipped_with_file_and_line(
    own_redis: OwnRedis, env, workdir: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        json.dumps(VERL_ROW),
        "{not json",
        "[1, 2]",
        "",  # a blank line is no sample and no mistake
        json.dumps({**VERL_ROW, "score": "high"}),
        json.dumps({key: value for key, value in VERL_ROW.items() if key != "output"}),
        json.dumps({**VERL_ROW, "output": "b"}),
    ]
    (dumps / "3.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    where = [line.split(": ")[1] for line in warnings]
    assert where == [f"{dumps / '3.jsonl'}:{n}" for n in (2, 3, 5, 6)], warnings
    assert "not valid JSON" in warnings[0] and "'score' must be a number" in warnings[2]
    assert "4 malformed lines skipped" in out and "2 routed" in out
    assert sorted(r["response"] for r in queued_records(own_redis.url)) == ["a", "b"]


@pytest.mark.timeout(60)  # reading a FIFO never ends: fail, not hang
def test_a_fifo_among_the_dump_files_is_told_once_and_skipped(
    own_redis: OwnRedis, env, workdir: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (dumps / "3.jsonl").write_text(json.dumps(VERL_ROW) + "\n")
    os.mkfifo(dumps / "4.jsonl")
    code, _, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {dumps / '4.jsonl'}: not a regular file; skipped"]
    assert [r["response"] for r in queued_records(own_redis.url)] == ["a"]


def test_a_deep_line_and_an_over_long_line_are_skipped_and_a_restart_reads_on(
    own_redis: OwnRedis,
    env,
    workdir: Path,
    dumps: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line nested past the interpreter's recursion limit and one longer than the line limit
    (small here, 64 MiB by default) are two malformed lines: the follower goes on past them,
    and its cursor does too, so a restart reads only what was written since."""
    from rl import jsonl

    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)
    good = {**VERL_ROW, "step": 1}
    deep = '{"input": "q", "output": ' + "[" * 1500 + "]" * 1500 + ', "score": 0.1}'
    lines = [good, deep, {**good, "output": "x" * 5000}, {**good, "output": "b"}]
    path = dumps / "1.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                            for line in lines))  # fmt: skip
    code, out, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert [line.split(": ")[1] for line in warnings] == [f"{path}:2", f"{path}:3"], warnings
    assert "nested deeper than" in warnings[0] and "longer than 4096 bytes" in warnings[1]
    assert "2 samples read" in out and "2 malformed lines skipped" in out
    with path.open("a") as handle:
        handle.write(json.dumps({**good, "output": "c"}) + "\n")
    code, out, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0 and "1 samples read" in out and "0 malformed" in out, out + err
    assert sorted(r["response"] for r in queued_records(own_redis.url)) == ["a", "b", "c"]


def test_redis_down_spools_and_a_replay_queues_everything_once(
    verl_library, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dumps = workdir / "dumps"
    verl_library.copy_steps(dumps, range(1, STEPS + 1))
    own_redis.kill()
    code, out, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir, ROUTE_LOW))
    expected = verl_library.expected("dumps", below=THRESHOLD)
    assert code == 0, err
    assert f"{len(expected)} spooled" in out and "lowtide queue replay" in out
    own_redis.start()
    code, _, said = invoke(capsys, "queue", "replay", *flags(workdir)[-2:])
    assert code == 0 and f"replayed {len(expected)} record(s)" in said
    assert queued_ids(own_redis.url) == each_once(expected)
    # The cursor moved past them: nothing is routed again.
    code, out, _ = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir, ROUTE_LOW))
    assert code == 0 and "0 samples read" in out
    assert queued_ids(own_redis.url) == each_once(expected)


# ---- TRL files, the per-minute cap, mistakes ---------------------------------------------------


def write_completions(
    directory: Path, step: int, rewards: list[float], more: dict[str, list[float]] | None = None
) -> Path:
    """A file as TRL writes it (pandas to_parquet of the same columns)."""
    import pandas as pd

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"completions_{step:05d}.parquet"
    pd.DataFrame(
        {
            "step": [step] * len(rewards),
            "prompt": [[{"role": "user", "content": f"say {i // 2}"}] for i in range(len(rewards))],
            "completion": [[{"role": "assistant", "content": f"{i} at {step}"}]
                           for i in range(len(rewards))],
            "accuracy": rewards,
            **(more or {}),
            "advantage": [0.0] * len(rewards),
        }
    ).to_parquet(path)  # fmt: skip
    return path


def test_trl_files_cut_or_repeated_are_not_routed_twice(
    own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    completions = workdir / "out" / "completions"
    first = write_completions(completions, 1, [0.1, 0.2, 0.3, 0.4])
    repeated = completions / "completions_00002.parquet"  # the same generation batch, logged again
    shutil.copy(first, repeated)
    whole = write_completions(completions, 3, [0.5, 0.6]).read_bytes()
    cut = completions / "completions_00003.parquet"
    cut.write_bytes(whole[: len(whole) // 2])  # still being written
    code, out, err = invoke(capsys, "ingest", str(workdir / "out"), "--once", *flags(workdir))
    assert code == 0
    assert "completions_00003.parquet: not complete" in err
    assert sorted(r["reward"] for r in queued_records(own_redis.url)) == [0.1, 0.2, 0.3, 0.4]
    prompts = {r["prompt"] for r in queued_records(own_redis.url)}
    assert prompts == {"user: say 0", "user: say 1"}
    assert "repeated the batch before them: 1" in out
    cut.write_bytes(whole)
    code, out, _ = invoke(capsys, "ingest", str(workdir / "out"), "--once", *flags(workdir))
    assert code == 0 and "2 samples read" in out
    assert len(queued_records(own_redis.url)) == 6


def test_the_per_minute_cap_counts_the_trainers_minutes(
    verl_library, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run read in one go routes what the hook would have: with 2 a minute and a
    step a minute, 2 per step (not 2 for the whole run)."""
    dumps = workdir / "dumps"
    verl_library.copy_steps(dumps, range(1, STEPS + 1))
    start = time.time() - 3600
    for step in range(1, STEPS + 1):
        moment = start + 60 * step
        os.utime(dumps / f"{step}.jsonl", (moment, moment))
    capped = [*flags(workdir)[:-2], "--sampling.max_per_minute=2", *flags(workdir)[-2:]]
    code, _, err = invoke(capsys, "ingest", str(dumps), "--once", *capped)
    assert code == 0, err
    steps = Counter(record["step"] for record in queued_records(own_redis.url))
    assert steps == {step: 2 for step in range(1, STEPS + 1)}


def test_once_on_a_directory_without_dumps_is_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "empty").mkdir()
    code, _, err = invoke(capsys, "ingest", str(workdir / "empty"), "--once")
    assert code == 1 and err.count("\n") == 1 and "no dump files in" in err
    code, _, err = invoke(capsys, "ingest", str(workdir / "missing"), "--once")
    assert code == 2 and "no such directory" in err
    code, _, err = invoke(capsys, "ingest", str(workdir), "--once", "--format", "verll")
    assert code == 2 and err.count("\n") == 1 and "--format" in err


def test_a_damaged_cursor_is_one_line_and_loses_nothing(
    own_redis: OwnRedis, env, workdir: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"input": "p", "output": f"r{i}", "score": 0.1, "step": 1} for i in range(3)]
    (dumps / "1.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    cursor = workdir / "cursor.json"
    args = ["ingest", str(dumps), "--once", "--cursor", str(cursor), *flags(workdir)]
    assert invoke(capsys, *args)[0] == 0
    first = queued_ids(own_redis.url)
    assert len(first) == 3
    saved = json.loads(cursor.read_text())
    for damaged in ("{not json", json.dumps({**saved, "files": []})):
        cursor.write_text(damaged)
        code, _, err = invoke(capsys, *args)
        assert code == 1 and err.count("\n") == 1, err
        assert "is damaged" in err and "move it away" in err
    cursor.unlink()  # as the message says: the dumps are routed again, each sample still once
    assert invoke(capsys, *args)[0] == 0
    assert queued_ids(own_redis.url) == first


@pytest.mark.unit
def test_a_file_given_for_the_dump_directory_is_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = workdir / "1.jsonl"
    dump.write_text(json.dumps({"input": "p", "output": "r", "score": 0.1}) + "\n")
    for mode in (["--format", "verl"], ["--once"]):  # followed, it was a traceback
        code, _, err = invoke(capsys, "ingest", str(dump), *mode, "--cursor", "c.json")
        assert code == 2 and err.count("\n") == 1 and "is a file" in err, err


def test_the_readme_commands_run_as_shown(
    verl_library, own_redis: OwnRedis, env, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The docs' three `lowtide ingest` lines, each on the dumps its comment names (paths
    moved under the test's directory, `--once` added to the followers)."""
    import re

    from tests.helpers.docs import page

    section = page("integrations/ingest.md").split("(`lowtide ingest`)", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    commands = [line.split("  #")[0].split() for line in block.splitlines() if line.strip()]
    assert [words[:2] for words in commands] == [["lowtide", "ingest"]] * 3
    verl_library.copy_steps(workdir / "data" / "rollouts", range(1, 3))
    write_completions(workdir / "grpo-out" / "completions", 1, [0.1, 0.9], {"brevity": [0.0, 0.2]})
    (workdir / "logs" / "run-1" / "rollouts").mkdir(parents=True)
    row = {"step": 1, "sample_id": "s", "prompt": "p", "response": "r", "reward": 0.05,
           "reward_details": "{}", "truncated": False}  # fmt: skip
    (workdir / "logs/run-1/rollouts/rollout_samples-step-0000001.jsonl").write_text(
        json.dumps(row) + "\n"
    )
    (workdir / "lowtide.yaml").write_text(f"queue: {{name: {QUEUE}}}\n")
    routed = 0
    for words in commands:
        argv = [word.replace("/data/", "data/").replace("<run>", "run-1") for word in words[1:]]
        if "--once" not in argv:
            argv.append("--once")
        code, out, err = invoke(capsys, *argv, f"--queue.name={QUEUE}")
        assert code == 0, f"{words}: {err}"
        assert " 0 malformed" in out
        now = len(queued_records(own_redis.url))
        assert now > routed, words  # each routed something
        routed = now


def test_a_step_file_rewritten_by_a_resumed_run_is_read_again(
    own_redis: OwnRedis, env, workdir: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verl opens `{step}.jsonl` with "w": a run resumed from a checkpoint writes the step's
    new samples over the old file, which may even grow past what was read."""

    def write(responses: list[str]) -> None:
        rows = [{"input": "q", "output": r, "gts": "", "score": 0.0, "step": 4} for r in responses]
        (dumps / "4.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    write(["first", "second"])
    assert invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))[0] == 0
    write(["again 1", "again 2", "again 3"])
    code, _, err = invoke(capsys, "ingest", str(dumps), "--once", *flags(workdir))
    assert code == 0 and "was rewritten" in err
    responses = sorted(r["response"] for r in queued_records(own_redis.url))
    assert responses == ["again 1", "again 2", "again 3", "first", "second"]


@pytest.mark.labelstudio
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.e2e
def test_ingested_samples_become_label_studio_tasks_once(
    verl_library, label_studio, workdir: Path
) -> None:
    """verl dumps followed by an ingest killed after queueing and restarted, then workers: each
    selected sample is one Label Studio task with the dump's texts and score."""
    from tests.helpers.pipeline import Setup

    setup = Setup(label_studio, workdir)
    dumps = workdir / "dumps"
    verl_library.copy_steps(dumps, range(1, 4))
    args = [*ROUTE_LOW, f"--run-id={setup.run_id}", f"--queue.spool_dir={workdir / 'spool'}",
            *setup.flags]  # fmt: skip
    killed = start_ingest(
        dumps, ["--interval", "0.1", *args],
        {**setup.env(), "LOWTIDE_INGEST_FAILPOINT": "handed:1"},
    )  # fmt: skip
    assert killed.wait(timeout=60) == -signal.SIGKILL
    verl_library.copy_steps(dumps, range(4, STEPS + 1))
    code, _, err = run_ingest(dumps, ["--once", *args], setup.env())
    assert code == 0, err
    for _ in range(2):  # a second worker finds nothing new to create
        result = setup.cli("worker", "--burst")
        assert result.returncode == 0, result.stderr
    expected = verl_library.expected(setup.run_id, below=THRESHOLD)
    assert setup.sample_id_counts() == each_once(expected)
    for task in setup.tasks():
        want = expected[task["sample_id"]]
        assert (task["prompt"], task["response"], task["reward"]) == (
            want["prompt"], want["response"], want["reward"],
        )  # fmt: skip
    setup.assert_no_key_leaked()


@pytest.mark.unit
def test_waiting_for_a_directory_that_does_not_exist_says_so(tmp_path: Path, capsys) -> None:
    import threading

    from lowtide.cli.ingest_cmd import _wait_for_dumps

    stopped = threading.Event()
    stopped.set()  # one look, one notice, then the stop it was waiting for
    assert _wait_for_dumps(tmp_path / "rollout_dumps", "auto", False, stopped) is None
    assert "rollout_dumps, which does not exist yet (Ctrl-C to stop)" in capsys.readouterr().err
    assert _wait_for_dumps(tmp_path, "auto", False, stopped) is None
    assert "does not exist" not in capsys.readouterr().err
