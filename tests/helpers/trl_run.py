"""A real TRL run on the tiny model, on CPU, as the TRL adapter's tests and benchmark use it.

Also a script: `accelerate launch ... tests/helpers/trl_run.py MODEL OUT QUEUE REDIS_URL STEPS`
trains a few GRPO steps with lowtide routing every sample, and writes what each process saw
(its rank, the samples its reward function scored) to OUT/seen-<rank>.json.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

PROMPTS = (
    "Name a color.", "What color is the cat?", "What color is the sea?", "Pick a color.",
    "What color is the fox?", "Say a color.", "What color is the frog?", "Tell me a color.",
)  # fmt: skip
# Routes every sample: no threshold, cap or rate limit gets in the way.
ROUTE_ALL = [
    "--sampling.policy=threshold",
    "--sampling.threshold=1e30",
    "--sampling.max_per_step=1000000",
    "--sampling.max_per_minute=1000000000",
]


def dataset(model: str | Path, kinds: Sequence[str] = ("plain",)) -> Any:
    """The prompts with the tiny model's chat template, and an extra column `kind` (a reward
    function reads it: the extra columns must reach it)."""
    from datasets import Dataset
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    texts = [
        tokenizer.apply_chat_template(
            [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
        )
        for p in PROMPTS
    ]
    return Dataset.from_dict(
        {"prompt": texts, "kind": [kinds[i % len(kinds)] for i in range(len(texts))]}
    )


def config_kwargs(out: Path, steps: int, **overrides: Any) -> dict[str, Any]:
    """fp32 on CPU, no gradient checkpointing (TRL's CPU defaults differ), 4 prompts x 4."""
    return {
        "output_dir": str(out),
        "per_device_train_batch_size": 16,
        "num_generations": 4,
        "max_completion_length": 12,
        "max_steps": steps,
        "learning_rate": 1e-4,
        "temperature": 1.0,
        "bf16": False,
        "fp16": False,
        "gradient_checkpointing": False,
        "use_cpu": True,
        "report_to": "none",
        "logging_steps": 1,
        "save_strategy": "no",
        "seed": 0,
        "dataloader_num_workers": 0,
        "disable_tqdm": True,
        **overrides,
    }


def trainer(
    kind: str,
    model: str | Path,
    out: Path,
    reward_funcs: list[Callable[..., Any]],
    steps: int,
    *,
    kinds: Sequence[str] = ("plain",),
    callbacks: Sequence[Any] = (),
    evaluate: bool = False,
    **overrides: Any,
) -> Any:
    """A `GRPOTrainer` (kind "grpo") or `RLOOTrainer` ("rloo") on the tiny model; `evaluate`:
    the prompts as an eval dataset too."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer, RLOOConfig, RLOOTrainer

    torch.set_num_threads(1)
    config_class, trainer_class = {
        "grpo": (GRPOConfig, GRPOTrainer),
        "rloo": (RLOOConfig, RLOOTrainer),
    }[kind]
    return trainer_class(
        model=AutoModelForCausalLM.from_pretrained(model),
        reward_funcs=reward_funcs,
        args=config_class(**config_kwargs(out, steps, **overrides)),
        train_dataset=dataset(model, kinds),
        eval_dataset=dataset(model, kinds) if evaluate else None,
        processing_class=AutoTokenizer.from_pretrained(model),
        callbacks=list(callbacks),
    )


def completion_rows(out: Path) -> list[dict[str, Any]]:
    """Every row of TRL's `log_completions` files (one per logged step)."""
    import pandas as pd

    rows = []
    for path in sorted((out / "completions").glob("completions_*.parquet")):
        rows += pd.read_parquet(path).to_dict("records")
    return rows


class CompletionTable:
    """TRL's own table of what it scored (the rows its `log_completions` parquet holds), copied
    at each log: RLOOTrainer keeps the table but writes no parquet. Log every step."""

    def __init__(self, run: Any) -> None:
        from transformers import TrainerCallback

        self.rows: list[dict[str, Any]] = []
        table = self

        class Copy(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                if logs and "train_runtime" in logs:
                    return  # the run's summary, not a step
                logs = run._logs
                names = list(logs["rewards"])
                for i, (prompt, completion) in enumerate(
                    zip(logs["prompt"], logs["completion"], strict=True)
                ):
                    row = {"step": state.global_step, "prompt": prompt, "completion": completion}
                    table.rows.append(row | {name: logs["rewards"][name][i] for name in names})

        run.add_callback(Copy())


def nan_to_none(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def lengths_reward(completions: list[str], **_: Any) -> list[float]:
    return [len(text) / 10 for text in completions]


def main(argv: list[str]) -> None:
    model, out, queue, redis_url, steps = argv
    import os

    from lowtide.trl import route_low_rewards

    seen: list[dict[str, Any]] = []

    def recorded_reward(prompts, completions, trainer_state, **_: Any) -> list[float]:
        rewards = lengths_reward(completions)
        seen.extend(
            {"step": trainer_state.global_step + 1, "prompt": p, "completion": c, "reward": r}
            for p, c, r in zip(prompts, completions, rewards, strict=True)
        )
        return rewards

    os.environ["REDIS_URL"] = redis_url
    funcs = route_low_rewards(
        [recorded_reward],
        overrides=[*ROUTE_ALL, f"--queue.name={queue}", f"--queue.spool_dir={out}/spool"],
    )
    run = trainer("grpo", model, Path(out), funcs, int(steps), per_device_train_batch_size=8)
    run.train()
    funcs.close()
    rank = run.accelerator.process_index
    report = {
        "rank": rank,
        "world": run.accelerator.num_processes,
        "distributed": str(run.accelerator.distributed_type),
        "seen": seen,
    }
    (Path(out) / f"seen-{rank}.json").write_text(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main(sys.argv[1:])
