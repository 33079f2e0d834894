"""`lowtide train` as users run it: one process, and two processes under torchrun (gloo, CPU)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, invoke, run_cli
from tests.helpers.queued import queued_sample_ids
from tests.test_trainer import saved_steps

pytestmark = pytest.mark.e2e


def train_args(tiny_models, out: Path, redis_url: str, steps: int = 2) -> list[str]:
    return [
        "train", "--config", str(REPO / "configs" / "quickstart.yaml"),
        f"--model.actor.model_name_or_path={tiny_models.policy}",
        f"--trainer.output_dir={out}", f"--trainer.max_steps={steps}",
        "--trainer.rollout_batch_size=4", "--trainer.max_new_tokens=12", "--run_id=cli",
        f"--logger.save_dir={out / 'logs'}", "--logger.log_interval.tables=2",
        f"--queue.redis_url={redis_url}", f"--queue.spool_dir={out / 'spool'}",
    ]  # fmt: skip


def test_train_prints_a_summary_and_keeps_the_run(
    tmp_path: Path, tiny_models, own_redis, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_cli(*train_args(tiny_models, tmp_path / "out", own_redis.url), cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "run cli: 2 steps" in result.stdout
    assert "reward/mean" in result.stdout
    run_dir = tmp_path / "out" / "cli"
    assert (run_dir / "config.yaml").exists()
    assert (run_dir / "checkpoints" / "step-000002" / "policy" / "config.json").exists()
    assert "KL estimator k3" in result.stderr
    # The sampler routed this run's low-reward rollouts to the queue, once each.
    routed = queued_sample_ids(own_redis.url, "lowtide-annotate")
    assert routed and len(routed) == len(set(routed))
    # Observability: a console line per step, and the local files, read back.
    assert "[Step 1] reward/mean=" in result.stderr and "[Step 2] reward/mean=" in result.stderr
    assert "lowest-reward samples" in result.stderr
    from rl.tracking.reader import read_run

    logs = read_run(tmp_path / "out" / "logs" / "cli")
    assert logs.metrics["step"].tolist() == [1, 2]
    assert "system/rss_mb" in logs.metrics and "system/comm_bytes" not in logs.metrics  # 1 process
    assert len(logs.rollouts) == 16  # step 2: 4 prompts x 4 samples
    assert (tmp_path / "out" / "logs" / "cli" / "config.yaml").exists()

    # The logs commands read what the run left, in this process (a start each is ~1 s).
    code, out, err = invoke(
        capsys, "logs", "show", "cli", "--save-dir", str(tmp_path / "out" / "logs")
    )
    assert code == 0, err
    assert "2 logged steps, 16 samples" in out and "lowest-reward samples" in out
    code, _, err = invoke(
        capsys, "logs", "export", str(tmp_path / "out" / "logs" / "cli"), "--format", "parquet",
        "--out", str(tmp_path / "export"),
    )  # fmt: skip
    assert code == 0, err
    import pandas as pd

    exported = pd.read_parquet(tmp_path / "export" / "metrics.parquet")
    assert exported["reward/mean"].tolist() == logs.metrics["reward/mean"].tolist()
    assert len(pd.read_parquet(tmp_path / "export" / "rollouts.parquet")) == 16
    code, _, err = invoke(capsys, "logs", "show", "nope", "--save-dir", str(tmp_path))
    assert code == 2 and "no run logs" in err


def test_train_with_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli(
        "train", "--config", str(REPO / "configs" / "quickstart.yaml"),
        f"--model.actor.model_name_or_path={tmp_path / 'nope'}", cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        "model.actor.model_name_or_path" in result.stderr and "lowtide model tiny" in result.stderr
    )


def logged_steps(stderr: str) -> list[int]:
    return [int(step) for step in re.findall(r"\[Step (\d+)\] reward/mean=", stderr)]


def signal_mid_run(command: list[str], signum: int) -> tuple[int, str, str]:
    """Run `command`, send it `signum` once step 2 is logged; (exit code, stdout, stderr)."""
    process = subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"},
    )  # fmt: skip
    seen = []
    for line in process.stderr:
        seen.append(line)
        if "[Step 2] reward/mean=" in line:
            break
    process.send_signal(signum)
    stdout, rest = process.communicate(timeout=300)
    return process.returncode, stdout, "".join(seen) + rest


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_ends_the_step_saves_it_and_resume_goes_on(
    tmp_path: Path, tiny_models, own_redis, signum: int
) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "lowtide", *train_args(tiny_models, out, own_redis.url, 40)]
    returncode, stdout, stderr = signal_mid_run(command, signum)

    assert returncode == 128 + signum, stderr[-3000:]
    assert "Traceback" not in stderr
    last = logged_steps(stderr)[-1]
    assert 2 <= last < 40  # stopped after the step it was in, long before the end
    checkpoint = out / "cli" / "checkpoints" / f"step-{last:06d}"
    assert (checkpoint / "trainer_state.pt").exists()
    assert f"checkpoint      {checkpoint}" in stderr  # says where it is
    assert f"run cli: {last} steps" in stdout

    resumed = run_cli(
        *train_args(tiny_models, out, own_redis.url, steps=last + 1), "--trainer.resume=true",
        cwd=REPO,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert logged_steps(resumed.stderr) == [last + 1]  # nothing repeated
    assert (out / "cli" / "checkpoints" / f"step-{last + 1:06d}").exists()


@pytest.mark.slow
def test_torchrun_two_processes_on_cpu(tmp_path: Path, tiny_models, own_redis) -> None:
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
        "-m", "lowtide", *train_args(tiny_models, tmp_path / "out", own_redis.url),
        "--trainer.mini_batch_size=8",  # 16 samples a rank: two updates, two all-reduces a step
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.count("run cli: grpo") == 1  # rank 0 logs, once
    assert result.stdout.count("run cli: 2 steps") == 1
    assert "2 process(es)" in result.stderr
    checkpoints = list((tmp_path / "out" / "cli" / "checkpoints").glob("step-*"))
    assert [c.name for c in checkpoints] == ["step-000002"]
    routed = queued_sample_ids(own_redis.url, "lowtide-annotate")  # both ranks route their own
    assert len(routed) == len(set(routed))
    assert "destroy_process_group" not in result.stderr  # each rank left the group it joined

    # Communication per step: the gradient all-reduces (every trainable parameter, 4 bytes, twice)
    # and the metric reductions and gathers (a few hundred bytes), and the time they were in flight.
    from transformers import AutoModelForCausalLM

    from rl.tracking import read_run

    policy = AutoModelForCausalLM.from_pretrained(tiny_models.policy)
    gradient_bytes = 2 * 4 * sum(p.numel() for p in policy.parameters() if p.requires_grad)
    metrics = read_run(tmp_path / "out" / "logs" / "cli").metrics
    assert metrics["step"].tolist() == [1, 2]
    for _, row in metrics.iterrows():
        assert gradient_bytes <= row["system/comm_bytes"] <= gradient_bytes + 16 * 1024
        assert 0 < row["system/comm_s"] < row["timing_s/step"]


@pytest.mark.slow
def test_sigterm_to_torchrun_stops_every_rank_at_one_step(
    tmp_path: Path, tiny_models, own_redis
) -> None:
    """torchrun passes the signal on to each rank; they agree on the step to stop after (or
    their collectives would part ways and hang), and rank 0 alone saves it."""
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
        "-m", "lowtide", *train_args(tiny_models, out, own_redis.url, steps=40),
    ]  # fmt: skip
    _, stdout, stderr = signal_mid_run(command, signal.SIGTERM)  # torchrun's own code: 1

    last = logged_steps(stderr)[-1]
    assert 2 <= last < 40
    assert stderr.count("SIGTERM: finishing step") == 1  # rank 0 speaks
    assert stdout.count(f"run cli: {last} steps") == 1
    assert saved_steps(out / "cli") == [f"step-{last:06d}"]
    assert f"checkpoint      {out / 'cli' / 'checkpoints' / f'step-{last:06d}'}" in stderr
