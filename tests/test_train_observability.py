"""The observability acceptance run: the quickstart as users run it leaves wandb (offline),
TensorBoard and local files under logger.save_dir, each read back without a server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_quickstart_leaves_wandb_tensorboard_and_local_logs(
    tmp_path: Path, tiny_models, own_redis
) -> None:
    shutil.copytree(REPO / "configs", tmp_path / "configs")
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "tiny").symlink_to(Path(tiny_models.policy).parent)
    env = {"WANDB_API_KEY": "", "WANDB_MODE": "", "WANDB_DIR": "", "WANDB_DATA_DIR": ""}
    env["REDIS_URL"] = own_redis.url  # the quickstart's sampler routes to a Redis of our own
    result = run_cli(
        "train", "--config", "configs/quickstart.yaml", "--trainer.num_epochs=1",
        "--trainer.rollout_batch_size=4", "--device=cpu", "--run_id=obs",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    steps = 12  # 48 prompts / 4 per step, one epoch
    logs = tmp_path / "logs"
    assert "wandb sync" in result.stderr and "tensorboard --logdir" in result.stderr

    # Local files, always on.
    from rl.tracking.reader import read_run

    local = read_run(logs / "obs")
    assert local.metrics["step"].tolist() == list(range(1, steps + 1))
    assert len(local.rollouts) == 16  # the table interval is 10: step 10 only
    assert set(local.histograms["name"]) == {
        "reward/distribution", "reward/token_distribution", "response_length/distribution"
    }  # fmt: skip
    # Per-token values beside the table's rows: one row per response token of its 16 samples.
    assert set(local.tokens["sample_id"]) == set(local.rollouts["sample_id"])
    assert len(local.tokens) == local.rollouts["response_length"].sum()

    # WandB, offline by itself: the rollout_samples table with its columns.
    runs = list((logs / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and list(runs[0].glob("run-*.wandb"))
    tables = list(runs[0].glob("files/media/table/rollout_samples_*.table.json"))
    assert len(tables) == 1
    table = json.loads(tables[0].read_text())
    columns = ["step", "sample_id", "prompt", "response", "reward", "reward_details"]
    assert table["columns"][:6] == columns
    assert {"reward/keyword", "reward/format"} <= set(table["columns"])
    assert len(table["data"]) == 16

    # TensorBoard: scalars and histograms, nothing dropped by the reader's defaults.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(
        str(logs / "tensorboard" / "obs"),
        size_guidance={"scalars": 0, "histograms": 0, "tensors": 0},
    ).Reload()
    assert [e.step for e in events.Scalars("reward/mean")] == list(range(1, steps + 1))
    assert [e.step for e in events.Histograms("reward/distribution")] == [5, 10]
    assert [e.step for e in events.Histograms("reward/token_distribution")] == [5, 10]
