"""A measured task: prompts (train / held out), the hidden oracle reviewer, the starting reward
model, and the training settings of a round. Loaded from YAML; the oracle and the builder are
dotted paths, so a new task is a new YAML file and module, not a change to the bench.

Oracle: `oracle(prompt, response, sample_id) -> Verdict` (what a careful reviewer would say:
a 1-5 rating, failure categories, a better response or None). Only the reviewers of the bench
call it; the trainer and the reward models never see it.

Starting reward model: `builder(models: TinyModelPaths, prompts: list[str], out: Path,
seed: int) -> Path`, a reward-model directory (usually with a blind spot the task is about).

Blind spot (optional): `blind_spot(feature) -> bool`, whether a reward-hacking watch suspect's
feature names what the starting reward model pays for. Only the bench's score of the watch
reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rl.plugins import resolve_path


@dataclass(frozen=True)
class Verdict:
    rating: int  # 1 (bad) .. 5 (good)
    categories: tuple[str, ...] = ()
    better: str | None = None  # the reviewer's better response, for a failure

    @property
    def failure(self) -> bool:
        return self.rating <= 2


Oracle = Callable[[str, str, str], Verdict]


class TrainSettings(BaseModel):
    """One round's policy training (GRPO on the tiny model, as configs/quickstart.yaml)."""

    model_config = ConfigDict(extra="forbid")

    steps_per_round: int = Field(20, ge=1)
    rollout_batch_size: int = Field(8, ge=1)
    samples_per_prompt: int = Field(4, ge=2)
    max_new_tokens: int = Field(24, ge=1)
    learning_rate: float = 2e-4
    kl_coef: float = 0.05
    continue_policy: bool = Field(True, description="a round starts from the last round's policy")


class PoolSettings(BaseModel):
    """The pool bench's (bench/selection_value.py): what the pool holds and what a selection
    may spend, fixed in the task file before any run."""

    model_config = ConfigDict(extra="forbid")

    review_minutes: float = Field(
        60.0, gt=0, description="reviewer-minutes (default cost model) every selection spends"
    )
    batch: int = Field(6, ge=1, description="reviews a round: the reward model refits between")
    offered: int = Field(240, ge=2, description="pool rollouts offered to the selections a round")
    start_samples: int = Field(16, ge=2, description="the starting policy's, per train prompt")
    policies: int = Field(2, ge=0, description="policies trained against the starting RM")
    policy_steps: int = Field(40, ge=1, description="GRPO steps of each of those")
    eval_samples: int = Field(16, ge=2, description="per held-out prompt, per policy")


class TaskConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    prompts: list[str] = Field(min_length=4)
    held_out_every: int = Field(4, ge=2, description="every Nth prompt is held out")
    oracle: str = Field(description="dotted path: (prompt, response, sample_id) -> Verdict")
    starting_reward_model: str = Field(description="dotted path: builder of the starting RM")
    blind_spot: str | None = Field(
        None,
        description="dotted path: (Feature) -> bool, what the starting RM pays for as the "
        "reward-hacking watch would name it; scores the watch, which is never told",
    )
    threshold: float = Field(0.0, description="the threshold policy's reward bar")
    train: TrainSettings = Field(default_factory=TrainSettings)
    pool: PoolSettings = Field(default_factory=PoolSettings)

    @property
    def train_prompts(self) -> list[str]:
        return [p for i, p in enumerate(self.prompts) if i % self.held_out_every != 0]

    @property
    def held_out_prompts(self) -> list[str]:
        return [p for i, p in enumerate(self.prompts) if i % self.held_out_every == 0]

    def oracle_function(self) -> Oracle:
        return resolve_path(self.oracle)

    def builder(self) -> Callable[..., Path]:
        return resolve_path(self.starting_reward_model)

    def blind_spot_function(self) -> Callable[[Any], bool] | None:
        return resolve_path(self.blind_spot) if self.blind_spot else None


def load_task(path: Path) -> TaskConfig:
    """The task in `path`; a file that cannot be read or is not a task ends the bench with one
    line naming the file and the problem (both benches read tasks through here)."""
    try:
        raw = yaml.safe_load(path.read_text()) or {}
        if not isinstance(raw, dict):
            raise ValueError("not a mapping of task settings")
        prompts = raw.get("prompts")
        if isinstance(prompts, str):  # a prompts file as configs/prompts/*.yaml writes them
            source = (path.parent / prompts) if not Path(prompts).is_absolute() else Path(prompts)
            if not source.exists():
                source = Path(prompts)
            raw["prompts"] = (yaml.safe_load(source.read_text()) or {})["prompts"]
        return TaskConfig.model_validate(raw)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'task'}: {e['msg']}" for e in error.errors()
        )
        raise SystemExit(f"--task {path}: {problems}") from None
    except yaml.YAMLError as error:
        raise SystemExit(
            f"--task {path}: not valid YAML ({' '.join(str(error).split())})"
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        said = " ".join(str(error).split())
        raise SystemExit(f"--task {path}: {type(error).__name__}: {said}") from None
