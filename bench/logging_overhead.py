"""What logging costs the trainer: the quickstart run with every backend on vs logging off.

Every backend (wandb offline, tensorboard, console, local JSONL) at the intervals of the
observability issue (scalars every step... see LOGGER below) against no tracker at all. Each run
is its own process, runs alternate (off, on, notokens, off, ...), same seed; `notokens` is `on`
without the per-token values (Sample.tokens, rollouts/tokens/, reward/token_distribution).
Prints:
  median step-time ratio on/off (goal <= 1.02),
  the trainer-thread cost of one step's logging calls, median and p99 (goal: median <= 1 ms),
  what building the per-token values costs on the steps that log them (tables, the token
  histogram), and the step-time ratio on/notokens, median and mean (they are built on 1 step
  in 5 here: the mean shows them, the median shows the steps without them).
Knobs: BENCH_RUNS (4), BENCH_STEPS (20).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from child_run import percentile, run_child

REPO = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("BENCH_RUNS", "4"))
STEPS = int(os.environ.get("BENCH_STEPS", "20"))
WARMUP = 3
LOGGER = {
    "name": ["wandb", "tensorboard", "console", "jsonl"],
    "log_interval": {"scalars": 1, "histograms": 5, "tables": 10},
    "metrics": {
        "histograms": [
            "reward/distribution",
            "reward/token_distribution",
            "response_length/distribution",
        ]
    },
}


def child(mode: str, model: str, out: str) -> None:
    import torch
    import yaml

    from rl.config import DataConfig, LoggerConfig, ModelConfig, ModelRef, RewardSpec, TrainerConfig
    from rl.tracking import RunInfo, Tracker
    from rl.trainer import Trainer

    torch.set_num_threads(1)
    quickstart = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text())
    settings = {**quickstart["trainer"], "max_steps": STEPS, "output_dir": out, "save_every": 0}
    trainer = Trainer(
        TrainerConfig(**settings),
        ModelConfig(actor=ModelRef(model_name_or_path=model)),
        DataConfig(path=str(REPO / "configs" / "prompts" / "quickstart.yaml")),
        [RewardSpec(**spec) for spec in quickstart["rewards"]],
        device="cpu",
        run_id=f"bench-{mode}",
    )
    on_stage_s: list[float] = []
    token_s: list[float] = []
    if mode in ("on", "notokens"):
        config = LoggerConfig(**LOGGER, save_dir=str(Path(out) / "logs"))
        info = RunInfo(
            "bench-on", "bench-on", Path(out) / "logs", Path(out) / "logs" / "bench-on", {}
        )
        tracker = Tracker.from_config(config, info)
        original = tracker.on_stage

        def timed(*args, **kwargs):
            started = time.perf_counter()
            original(*args, **kwargs)
            on_stage_s.append(time.perf_counter() - started)

        tracker.on_stage = timed
        trainer.tracker = tracker
        with_tokens = trainer._with_token_values

        def timed_tokens(*args, **kwargs):
            started = time.perf_counter()
            samples = with_tokens(*args, **kwargs)
            token_s.append(time.perf_counter() - started)
            return samples

        trainer._with_token_values = timed_tokens
        if mode == "notokens":
            trainer._tokens_logged = lambda: False
    stamps = [time.perf_counter()]
    trainer.train(lambda step, total, metrics: stamps.append(time.perf_counter()))
    steps = [b - a for a, b in itertools.pairwise(stamps)]
    per_step_logging = [sum(on_stage_s[i : i + 4]) for i in range(0, len(on_stage_s), 4)]
    print(json.dumps({"steps": steps, "logging_s": per_step_logging, "token_s": token_s}))


def measure(mode: str, model: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        # Offline wandb with no key, as a user without an account runs it.
        env = {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_API_KEY": ""}
        return run_child(__file__, mode, model, out, env=env)


def main() -> None:
    from rl.models.tiny import build_tiny_models

    with tempfile.TemporaryDirectory() as tmp:
        model = str(build_tiny_models(Path(tmp), sft_steps=100, seed=0).policy)
        steps: dict[str, list[float]] = {"off": [], "on": [], "notokens": []}
        logging_s: list[float] = []
        token_ms: list[float] = []
        for run in range(RUNS):
            for mode in steps:
                result = measure(mode, model)
                steps[mode] += result["steps"][WARMUP:]
                if mode == "on":
                    logging_s += result["logging_s"][WARMUP:]
                token_ms += [1000 * s for s in result.get("token_s", [])]
                median = statistics.median(result["steps"][WARMUP:])
                print(f"run {run + 1}/{RUNS} logging {mode:8}: median step {median:.3f} s")
    off, on = statistics.median(steps["off"]), statistics.median(steps["on"])
    logging_ms = sorted(1000 * s for s in logging_s)
    p99 = percentile(logging_ms, 0.99)
    print(f"\nquickstart, {STEPS} steps x {RUNS} runs per mode, backends {LOGGER['name']}")
    print(
        f"median step: off {off:.3f} s, on {on:.3f} s; ratio on/off {on / off:.3f} (goal <= 1.02)"
    )
    print(f"trainer-thread logging per step: median {statistics.median(logging_ms):.3f} ms, "
          f"p99 {p99:.3f} ms (goal: median <= 1 ms)")  # fmt: skip
    if token_ms:
        median_ms = statistics.median(token_ms)
        print(f"per-token values, on the {len(token_ms)} steps that build them: median "
              f"{median_ms:.3f} ms, max {max(token_ms):.3f} ms "
              f"({median_ms / (10 * off):.2f}% of the median step)")  # fmt: skip
    median_ratio = on / statistics.median(steps["notokens"])
    mean_ratio = statistics.mean(steps["on"]) / statistics.mean(steps["notokens"])
    print(f"with/without per-token values: step ratio, median {median_ratio:.3f}, "
          f"mean {mean_ratio:.3f}")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        main()
