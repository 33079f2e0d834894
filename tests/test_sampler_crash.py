"""SIGKILL a training run while Redis is down: what it had spooled is replayed later, once."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sampling.transport.spool import Spool
from tests.conftest import REPO, run_cli
from tests.helpers.queued import queued_sample_ids

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_sigkill_while_redis_is_down_then_replay(tmp_path: Path, tiny_models, own_redis) -> None:
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    own_redis.kill()  # down from the start: every batch goes to the spool
    env = {**os.environ, "REDIS_URL": own_redis.url, "OMP_NUM_THREADS": "1"}
    training = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "train", "--config", "configs/quickstart.yaml",
         f"--model.actor.model_name_or_path={tiny_models.policy}", "--trainer.max_steps=500",
         "--trainer.num_epochs=100", "--logger.name=[console]", "--run_id=crash"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    spool = Spool(tmp_path / "logs" / "spool")
    deadline = time.monotonic() + 120
    while spool.pending_records() < 40:
        assert training.poll() is None, "training ended before anything was spooled"
        assert time.monotonic() < deadline, "nothing was spooled"
        time.sleep(0.2)
    os.killpg(training.pid, signal.SIGKILL)
    training.wait()
    spooled = spool.pending_records()

    own_redis.start()
    replay = run_cli("queue", "replay", "--config", "configs/quickstart.yaml", cwd=tmp_path,
                     env={"REDIS_URL": own_redis.url})  # fmt: skip
    assert replay.returncode == 0, replay.stderr
    assert f"replayed {spooled} record(s)" in replay.stderr
    routed = queued_sample_ids(own_redis.url, "lowtide-annotate")
    assert len(routed) == len(set(routed)) == spooled
    assert spool.pending_batches() == 0
    again = run_cli("queue", "replay", "--config", "configs/quickstart.yaml", cwd=tmp_path,
                    env={"REDIS_URL": own_redis.url})  # fmt: skip
    assert "replayed 0 record(s)" in again.stderr
