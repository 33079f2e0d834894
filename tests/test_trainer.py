"""The trainer on the tiny model, CPU, fixed seeds: it learns, resumes exactly, feeds hooks."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
import torch

import rl.trainer
from rl.checkpoint import latest_checkpoint, save_checkpoint
from rl.config import DataConfig, HookSpec, ModelConfig, ModelRef, RewardSpec, TrainerConfig
from rl.trainer import Trainer
from tests.conftest import REPO
from tests.helpers import trainer_plugins

pytestmark = pytest.mark.unit

QUICKSTART_REWARDS_YAML = REPO / "configs" / "quickstart.yaml"


def quickstart_rewards() -> list[RewardSpec]:
    import yaml

    return [
        RewardSpec(**spec)
        for spec in yaml.safe_load(QUICKSTART_REWARDS_YAML.read_text())["rewards"]
    ]


def quickstart_data() -> DataConfig:
    return DataConfig(path=str(REPO / "configs" / "prompts" / "quickstart.yaml"))


def make_trainer(tmp_path: Path, tiny_models, **overrides) -> Trainer:
    hooks = overrides.pop("hooks", None)
    rewards = overrides.pop("rewards", None) or quickstart_rewards()
    run_id = overrides.pop("run_id", "test")
    settings = {
        "rollout_batch_size": 4,
        "samples_per_prompt": 4,
        "max_new_tokens": 16,
        "learning_rate": 2e-4,
        "max_steps": 4,
        "num_epochs": 100,  # max_steps decides
        "output_dir": str(tmp_path),
        "seed": 3,
    }
    settings.update(overrides)
    return Trainer(
        TrainerConfig(**settings),
        ModelConfig(actor=ModelRef(model_name_or_path=str(tiny_models.policy))),
        quickstart_data(),
        rewards,
        hooks,
        device="cpu",
        run_id=run_id,
    )


def first_and_last_mean(history: list[dict[str, float]], window: int = 5) -> tuple[float, float]:
    rewards = [row["reward/mean"] for row in history]
    return statistics.mean(rewards[:window]), statistics.mean(rewards[-window:])


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["grpo", "ppo"])
def test_reward_rises_on_the_quickstart_task(tmp_path: Path, tiny_models, algorithm: str) -> None:
    import yaml

    quickstart = yaml.safe_load(QUICKSTART_REWARDS_YAML.read_text())["trainer"]
    keys = (
        "learning_rate",
        "rollout_batch_size",
        "samples_per_prompt",
        "max_new_tokens",
        "kl_coef",
    )
    # 25 steps: the last 5 are 0.34 (grpo) and 0.53 (ppo) above the first 5 (measured; at 20
    # steps grpo's rise is 0.15, too near the bound)
    trainer = make_trainer(
        tmp_path, tiny_models, algorithm=algorithm, max_steps=25, **{k: quickstart[k] for k in keys}
    )
    result = trainer.train()
    first, last = first_and_last_mean(result.history)
    print(f"{algorithm}: reward/mean first 5 = {first:.3f}, last 5 = {last:.3f}")
    assert result.steps == 25
    assert last > first + 0.1, (first, last)


def test_metrics_of_a_step(tmp_path: Path, tiny_models) -> None:
    result = make_trainer(tmp_path, tiny_models, algorithm="ppo", max_steps=1).train()
    metrics = result.metrics
    expected = {
        "reward/mean", "reward/std", "reward/min", "reward/max", "kl_divergence", "actor_loss",
        "critic_loss", "entropy", "grad_norm", "clip_fraction", "advantage/mean",
        "response_length/mean", "response_length/max", "response_length/clip_ratio",
        "learning_rate", "timing_s/rollout", "timing_s/reward", "timing_s/update", "timing_s/step",
        "perf/samples_per_s", "perf/tokens_per_s", "perf/ms_per_token", "reward/nonfinite_count",
    }  # fmt: skip
    assert expected <= set(metrics)
    components = [name for name in metrics if name.startswith("reward/") and name.count("/") == 2]
    assert components, "one reward/<component>/mean per reward component"
    assert metrics["reward/min"] <= metrics["reward/mean"] <= metrics["reward/max"]
    assert all(math.isfinite(metrics[name]) for name in expected)


def test_resume_takes_the_same_next_steps(tmp_path: Path, tiny_models) -> None:
    straight = make_trainer(tmp_path / "a", tiny_models, max_steps=4)
    straight_result = straight.train()

    first_half = make_trainer(tmp_path / "b", tiny_models, max_steps=2)
    first_half.train()
    resumed = make_trainer(tmp_path / "b", tiny_models, max_steps=4, resume=True)
    assert resumed.step == 2
    resumed_result = resumed.train()

    assert resumed_result.metrics["reward/mean"] == straight_result.metrics["reward/mean"]
    assert resumed_result.metrics["actor_loss"] == straight_result.metrics["actor_loss"]
    for (name, a), b in zip(
        straight.policy.state_dict().items(), resumed.policy.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b), name


def test_hooks_see_the_batch_at_each_stage(tmp_path: Path, tiny_models) -> None:
    trainer_plugins.RECORDED.clear()
    recorder = "tests.helpers.trainer_plugins:make_recorder"
    hooks = [
        HookSpec(type=recorder, stage="rollout", params={"tag": "rollout"}),
        HookSpec(type=recorder, stage="reward", params={"tag": "reward"}),
        HookSpec(type=recorder, stage="update", every=2, params={"tag": "every2"}),
        HookSpec(type=recorder, stage="step_end", when="step >= 3", params={"tag": "late"}),
        HookSpec(type=recorder, stage="train_end", params={"tag": "end"}),
    ]
    make_trainer(tmp_path, tiny_models, max_steps=4, hooks=hooks).train()
    by_tag: dict[str, list] = {}
    for call in trainer_plugins.RECORDED:
        by_tag.setdefault(call["tag"], []).append(call)
    assert [c["step"] for c in by_tag["rollout"]] == [1, 2, 3, 4]
    assert [c["step"] for c in by_tag["every2"]] == [2, 4]
    assert [c["step"] for c in by_tag["late"]] == [3, 4]
    assert len(by_tag["end"]) == 1

    rollout_call, reward_call = by_tag["rollout"][0], by_tag["reward"][0]
    assert len(rollout_call["samples"]) == 16  # 4 prompts x 4 samples
    assert all(math.isnan(s.reward) for s in rollout_call["samples"])  # not scored yet
    assert "response_length/mean" in rollout_call["metrics"]
    samples = reward_call["samples"]
    assert all(math.isfinite(s.reward) and math.isfinite(s.advantage) for s in samples)
    assert {s.group_id for s in samples} == {samples[0].group_id + i for i in range(4)}
    assert all(s.reward_details for s in samples)
    assert all(
        s.prompt and s.prompt_ids and s.response_length == len(s.response_ids) for s in samples
    )
    assert "reward/mean" in reward_call["metrics"]
    assert reward_call["reward_weights"] == {"keyword": 1.0, "format": 0.1}  # quickstart's
    assert "actor_loss" in by_tag["every2"][0]["metrics"]
    assert "timing_s/step" in by_tag["late"][0]["metrics"]
    for s in samples:  # GRPO: advantages are centred inside each group
        group = [t.advantage for t in samples if t.group_id == s.group_id]
        assert abs(sum(group)) < 1e-4


def test_early_stop_hook_ends_the_run(tmp_path: Path, tiny_models) -> None:
    hooks = [HookSpec(type="early_stop", stage="step_end", when="step >= 2")]
    result = make_trainer(tmp_path, tiny_models, max_steps=10, hooks=hooks).train()
    assert result.steps == 2
    assert result.stop_reason and "step >= 2" in result.stop_reason
    assert result.last_checkpoint is not None and result.last_checkpoint.exists()


SMALL = {"rollout_batch_size": 2, "samples_per_prompt": 2, "max_new_tokens": 8}


def saved_steps(run_dir: Path) -> list[str]:
    return sorted(path.name for path in (run_dir / "checkpoints").glob("step-*"))


def test_the_last_steps_are_saved_and_a_resumed_run_repeats_none(
    tmp_path: Path, tiny_models
) -> None:
    result = make_trainer(tmp_path, tiny_models, max_steps=12, save_every=10, **SMALL).train()
    run_dir = tmp_path / "test"
    assert saved_steps(run_dir) == ["step-000010", "step-000012"]
    assert result.last_checkpoint == run_dir / "checkpoints" / "step-000012"
    assert latest_checkpoint(run_dir) == result.last_checkpoint

    resumed = make_trainer(tmp_path, tiny_models, max_steps=14, save_every=10, resume=True, **SMALL)
    assert resumed.step == 12
    assert [row["step"] for row in resumed.train().history] == [13, 14]
    assert saved_steps(run_dir) == ["step-000010", "step-000012", "step-000014"]


@pytest.mark.parametrize(
    ("stop_at", "max_steps", "saves"),
    [(3, 10, [2, 3]), (2, 10, [2]), (None, 4, [2, 4])],
    ids=["hook-stop-between-saves", "hook-stop-on-a-save-step", "finished-on-a-save-step"],
)
def test_the_end_of_a_run_is_saved_once(
    tmp_path: Path, tiny_models, monkeypatch: pytest.MonkeyPatch, stop_at, max_steps, saves
) -> None:
    written: list[int] = []

    def counting_save(run_dir: Path, step: int, **kwargs):
        written.append(step)
        return save_checkpoint(run_dir, step, **kwargs)

    monkeypatch.setattr(rl.trainer, "save_checkpoint", counting_save)
    hooks = [HookSpec(type="early_stop", stage="step_end", when=f"step >= {stop_at}")]
    trainer = make_trainer(
        tmp_path, tiny_models, max_steps=max_steps, save_every=2,
        hooks=hooks if stop_at else None, **SMALL,
    )  # fmt: skip
    result = trainer.train()
    assert result.steps == saves[-1]
    assert written == saves
    assert result.last_checkpoint == tmp_path / "test" / "checkpoints" / f"step-{saves[-1]:06d}"


def test_non_finite_rewards_are_counted_and_left_out(tmp_path: Path, tiny_models) -> None:
    broken = [RewardSpec(type="tests.helpers.trainer_plugins:nan_for_every_third")]
    trainer_plugins.RECORDED.clear()
    hooks = [HookSpec(type="tests.helpers.trainer_plugins:make_recorder", stage="reward")]
    result = make_trainer(tmp_path, tiny_models, max_steps=2, rewards=broken, hooks=hooks).train()
    assert result.steps == 2
    counts = [row["reward/nonfinite_count"] for row in result.history]
    assert sum(counts) > 0
    for call in trainer_plugins.RECORDED:
        for sample in call["samples"]:
            if not math.isfinite(sample.reward):
                assert sample.advantage == 0.0  # excluded from the update
    assert all(math.isfinite(row["actor_loss"]) for row in result.history)


@pytest.mark.parametrize(
    "settings",
    [
        {
            "algorithm": "ppo",
            "ppo_epochs": 2,
            "mini_batch_size": 8,
            "gradient_accumulation_steps": 2,
        },
        {"algorithm": "grpo", "ppo_epochs": 2, "kl_mode": "reward", "kl_estimator": "k1"},
        {"algorithm": "ppo", "kl_mode": "reward", "lr_scheduler": "cosine", "warmup_steps": 1},
        {"algorithm": "grpo", "kl_coef": 0.0, "scale_rewards": False},
    ],
    ids=["ppo-minibatches-accumulation", "grpo-kl-in-reward", "ppo-kl-in-reward", "grpo-no-ref"],
)
def test_update_variants_run_and_report(tmp_path: Path, tiny_models, settings: dict) -> None:
    trainer = make_trainer(tmp_path, tiny_models, max_steps=2, **settings)
    assert (trainer.reference is None) == (settings.get("kl_coef") == 0.0)
    result = trainer.train()
    for row in result.history:
        assert math.isfinite(row["actor_loss"]) and math.isfinite(row["grad_norm"])
    # Several passes (or KL in the reward) need the sampling-time log-probs kept apart.
    several_passes = settings.get("ppo_epochs", 1) > 1 or "mini_batch_size" in settings
    in_reward = settings.get("kl_mode") == "reward"
    assert trainer._needs_sampling_logprobs() == (several_passes or in_reward)
    if settings["algorithm"] == "ppo":
        assert all(math.isfinite(row["critic_loss"]) for row in result.history)


def test_no_rewards_is_the_reward_error_preflight_gives(tmp_path: Path, tiny_models) -> None:
    from rl.rewards import RewardError, check_reward_specs

    with pytest.raises(RewardError) as error:
        Trainer(
            TrainerConfig(output_dir=str(tmp_path)),
            ModelConfig(actor=ModelRef(model_name_or_path=str(tiny_models.policy))),
            quickstart_data(),
            [],
            device="cpu",
        )
    assert [(None, str(error.value))] == check_reward_specs([])


class _Planted:
    """Unpickling it would call Path.touch: what a checkpoint from someone else could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_checkpoint_that_names_code_or_is_cut_is_one_error_and_runs_nothing(
    tmp_path: Path,
) -> None:
    from rl.checkpoint import load_trainer_state

    good = {"step": 2, "optimizer": {"state": {}}, "rng": {"torch": torch.get_rng_state()}}
    torch.save(good, tmp_path / "trainer_state.pt")
    assert load_trainer_state(tmp_path)["step"] == 2
    marker = tmp_path / "ran"
    torch.save({"step": 2, "x": _Planted(marker)}, tmp_path / "trainer_state.pt")
    with pytest.raises(ValueError, match=r"trainer_state.pt: cannot read this checkpoint"):
        load_trainer_state(tmp_path)
    assert not marker.exists()
    torch.save(good, tmp_path / "trainer_state.pt")
    cut = (tmp_path / "trainer_state.pt").read_bytes()
    (tmp_path / "trainer_state.pt").write_bytes(cut[: len(cut) // 2])
    with pytest.raises(ValueError, match=r"delete the checkpoint folder to resume from the one"):
        load_trainer_state(tmp_path)
