"""One round's policy training: the real `rl.Trainer` (what `lowtide train` builds), GRPO against
the round's reward model, with a hook that keeps every scored rollout as a review candidate (what
the sampler hook would route; here they stay in process instead of going through Redis)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.loop_value.task import TaskConfig
from rl.config import DataConfig, HookSpec, ModelConfig, ModelRef, RewardSpec, TrainerConfig
from rl.hooks.context import StageContext
from rl.jsonl import read_jsonl

CAPTURE_HOOK = "bench.loop_value.training:capture_candidates"
RULE_REWARD = "bench.loop_value.watching:oracle_reward"


@dataclass(frozen=True)
class Rollout:
    """A scored rollout of a training step: a review candidate."""

    sample_id: str
    prompt: str
    response: str
    reward: float
    reward_details: Mapping[str, float] = field(default_factory=dict)
    step: int = 0
    group_id: int = 0


@dataclass(frozen=True)
class RoundTraining:
    policy: Path  # the trained policy's directory
    candidates: list[Rollout]
    seconds: float


def capture_candidates(params: dict[str, Any], resources: Mapping[str, Any]):
    """Hook factory (stage `reward`): every scored sample appended to `params["path"]` as JSON."""
    path = Path(params["path"])

    def hook(ctx: StageContext) -> None:
        with path.open("a") as sink:
            for sample in ctx.samples:
                row = {
                    "sample_id": f"{ctx.run_id}-{ctx.step}-{sample.index}",
                    "prompt": sample.prompt,
                    "response": sample.response,
                    "reward": sample.reward,
                    "reward_details": dict(sample.reward_details),
                    "step": ctx.step,
                    "group_id": ctx.step * 100_000 + sample.group_id,
                }
                sink.write(json.dumps(row) + "\n")

    return hook


def train_round(
    task: TaskConfig,
    *,
    policy: Path,
    reference: Path,
    reward_model: Path | None,
    out: Path,
    seed: int,
    steps: int,
    previous: Path | None = None,
) -> RoundTraining:
    """Against `reward_model`; with None, against the task's oracle as a rule reward (the
    bench's run without a blind spot). `previous`: the reward model's `previous` param (scored
    beside it, as `lowtide loop` does from round 2 for the budget policy)."""
    from rl.trainer import Trainer  # torch: only when training

    settings = task.train
    out.mkdir(parents=True, exist_ok=True)
    candidates_file = out / "candidates.jsonl"
    candidates_file.unlink(missing_ok=True)
    trainer = Trainer(
        TrainerConfig(
            algorithm="grpo",
            num_epochs=1000,
            max_steps=steps,
            rollout_batch_size=settings.rollout_batch_size,
            samples_per_prompt=settings.samples_per_prompt,
            max_new_tokens=settings.max_new_tokens,
            learning_rate=settings.learning_rate,
            kl_coef=settings.kl_coef,
            seed=seed,
            output_dir=str(out),
        ),
        ModelConfig(
            actor=ModelRef(model_name_or_path=str(policy)),
            reference=ModelRef(model_name_or_path=str(reference)),
        ),
        DataConfig(prompts=task.train_prompts),
        [_reward(task, reward_model, previous)],
        [HookSpec(type=CAPTURE_HOOK, stage="reward", params={"path": str(candidates_file)})],
        device="cpu",
        run_id="run",
    )
    result = trainer.train()
    assert result.last_checkpoint is not None  # the end of every run is saved
    candidates = [
        Rollout(**row)
        for _, row in read_jsonl(candidates_file, _broken)
        if math.isfinite(row["reward"])
    ]
    return RoundTraining(result.last_checkpoint / "policy", candidates, result.elapsed_s)


def _reward(task: TaskConfig, reward_model: Path | None, previous: Path | None) -> RewardSpec:
    if reward_model is not None:
        params = {"previous": str(previous)} if previous is not None else {}
        return RewardSpec(type="reward_model", path=str(reward_model), params=params)
    return RewardSpec(type=RULE_REWARD, name="rule", params={"oracle": task.oracle})


def _broken(number: int, problem: str) -> None:
    raise ValueError(f"candidates line {number}: {problem}")
