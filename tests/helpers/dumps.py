"""Dump files written the way each trainer writes them, in this process: verl 0.9.1's
`RayPPOTrainer._write_generations` (its body, line for line: one `json.dumps(..., default=str)`
per sample, extra-info keys with one value per sample), TRL 1.16's `log_completions` files
(pandas `to_parquet` of the same columns), and our own tracker's rollout tables (the real
`rl.tracking.Tracker`). Tests that need verl's own code run it in verl's virtualenv instead
(tests/test_ingest.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def write_verl_step(
    directory: Path,
    step: int,
    inputs: Sequence[str],
    outputs: Sequence[str],
    scores: Sequence[float],
    extra: Mapping[str, Sequence[Any]] | None = None,
) -> Path:
    """`RayPPOTrainer._write_generations(inputs, outputs, gts, scores, extra, dir, step)`."""
    os.makedirs(directory, exist_ok=True)
    path = directory / f"{step}.jsonl"
    n = len(inputs)
    base = {"input": list(inputs), "output": list(outputs), "gts": [str(i) for i in range(n)],
            "score": list(scores), "step": [step] * n}  # fmt: skip
    for key, values in (extra or {}).items():
        if len(values) == n:
            base[key] = list(values)
    with open(path, "w") as handle:
        for i in range(n):
            entry = {key: values[i] for key, values in base.items()}
            handle.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
    return path


def write_trl_completions(
    directory: Path,
    step: int,
    prompts: Sequence[str],
    completions: Sequence[str],
    rewards: Mapping[str, Sequence[float | None]],
    conversational: bool = True,
) -> Path:
    """`completions/completions_{step:05d}.parquet` as TRL's `GRPOTrainer` logs it."""
    import pandas as pd

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"completions_{step:05d}.parquet"
    if conversational:
        prompt_column: list[Any] = [[{"role": "user", "content": text}] for text in prompts]
        completion_column: list[Any] = [
            [{"role": "assistant", "content": text}] for text in completions
        ]
    else:
        prompt_column, completion_column = list(prompts), list(completions)
    frame = {"step": [step] * len(prompts), "prompt": prompt_column,
             "completion": completion_column, **{k: list(v) for k, v in rewards.items()},
             "advantage": [0.25] * len(prompts)}  # fmt: skip
    pd.DataFrame(frame).to_parquet(path)
    return path


def write_lowtide_run(
    run_dir: Path, steps: Mapping[int, Sequence[tuple[str, str, float, Mapping[str, float]]]]
) -> None:
    """Our tracker's rollout tables under `run_dir/rollouts/`: step -> (prompt, response,
    reward, reward_details) per sample, the fourth sample of a step truncated."""
    from rl.config import LoggerConfig
    from rl.samples import Sample
    from rl.tracking import RunInfo, Tracker

    config = LoggerConfig(name=["jsonl"], log_interval={"tables": 1})
    info = RunInfo(run_dir.name, run_dir.name, run_dir.parent, run_dir, {})
    tracker = Tracker.from_config(config, info)
    for step, rows in steps.items():
        samples = [
            Sample(index=i, group_id=i // 2, prompt=prompt, response=response,
                   prompt_ids=(1,), response_ids=(2, 3), truncated=i == 3, reward=reward,
                   reward_details=dict(details))
            for i, (prompt, response, reward, details) in enumerate(rows)
        ]  # fmt: skip
        tracker.on_stage("step_end", step, {}, samples)
    tracker.close()
