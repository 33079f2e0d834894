"""What logging costs the trainer: the quickstart run with every backend on vs logging off.

Every backend (wandb offline, tensorboard, console, local JSONL) at the intervals of the
observability issue (scalars every step... see LOGGER below) against no tracker at all. Each run
is its own process, runs alternate (off, on, notokens, off_again, then the other way round),
same seed, so every mode trains on the same samples; `notokens` is `on` without the per-token
values (Sample.tokens, rollouts/tokens/, reward/token_distribution); `off_again` repeats `off`:
how far two identical runs differ here, the noise floor.
Prints:
  median step-time ratio on/off (goal <= 1.02), and per round (each run's median step against
  its round's `off`): median and range, beside the noise floor's,
  the trainer-thread cost of one step's logging calls, median and p99 (goal: median <= 1 ms),
  what building the per-token values costs on the steps that log them (tables, the token
  histogram), and the step-time ratio on/notokens, median and mean (they are built on 1 step
  in 5 here: the mean shows them, the median shows the steps without them),
  the CPU a step costs, off vs on: the trainer thread's, the process's other threads' (the
  tracking thread, wandb's and TensorBoard's), and the helper processes' (wandb-core); and the
  work logging adds to a step (its calls on the trainer thread, and what the other threads and
  processes use beyond off), as a share of the trainer thread's CPU: what it would cost the
  step time with all of it on the trainer's core. On a shared 2-core machine, step times of
  identical runs differ by more than the goal: see the noise floor.
Knobs: BENCH_RUNS (4), BENCH_STEPS (20).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from _child_run import child_main, percentile, run_child
from _quick import QUICK, announce, knob, repeat_or_measure, sized, tiny_models

REPO = Path(__file__).resolve().parent.parent
RUNS = knob("RUNS", 4, 1)
STEPS = knob("STEPS", 20, 2)  # quick: every step logs histograms, the last one tables too
WARMUP = sized(3, 1)
LOGGER = {
    "name": ["wandb", "tensorboard", "console", "jsonl"],
    "log_interval": {"scalars": 1, "histograms": sized(5, 1), "tables": sized(10, 2)},
    "metrics": {
        "histograms": [
            "reward/distribution",
            "reward/token_distribution",
            "response_length/distribution",
        ]
    },
}
# Quick: the quickstart's steps on a smaller batch (the same code paths).
QUICK_BATCH = {"rollout_batch_size": 2, "samples_per_prompt": 2, "max_new_tokens": 8}


def child(mode: str, model: str, out: str) -> None:
    import torch
    import yaml

    # sampling provides the logger's default table redactor (wandb's tables are redacted), as
    # the import of the run config does for `lowtide train`.
    import sampling  # noqa: F401
    from rl.config import DataConfig, LoggerConfig, ModelConfig, ModelRef, RewardSpec, TrainerConfig
    from rl.tracking import RunInfo, Tracker
    from rl.trainer import Trainer

    torch.set_num_threads(1)
    quickstart = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text())
    settings = {**quickstart["trainer"], "max_steps": STEPS, "output_dir": out, "save_every": 0}
    settings |= sized({}, QUICK_BATCH)
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
    helpers = {}  # helper processes' CPU seconds at the first measured step and at the end

    def stamp(step: int, total: int, metrics: object) -> None:
        if step in (WARMUP, STEPS):  # before the stamp: its cost falls in an unmeasured step
            helpers[step] = helper_cpu_s()
        stamps.append((time.perf_counter(), time.thread_time(), time.process_time()))

    stamps = [(time.perf_counter(), time.thread_time(), time.process_time())]
    trainer.train(stamp)
    steps = [b[0] - a[0] for a, b in itertools.pairwise(stamps)]
    trainer_cpu = [b[1] - a[1] for a, b in itertools.pairwise(stamps)]
    process_cpu = [b[2] - a[2] for a, b in itertools.pairwise(stamps)]
    per_step_logging = [sum(on_stage_s[i : i + 4]) for i in range(0, len(on_stage_s), 4)]
    helper_s = (helpers[STEPS] - helpers[WARMUP]) / (STEPS - WARMUP)
    print(json.dumps({"steps": steps, "logging_s": per_step_logging, "token_s": token_s,
                      "trainer_cpu": trainer_cpu, "process_cpu": process_cpu,
                      "helper_cpu": helper_s}))  # fmt: skip


def helper_cpu_s() -> float:
    """CPU seconds used so far by this process's child processes (wandb-core), all threads."""
    import psutil

    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.Error:  # gone meanwhile
            continue
        total += times.user + times.system
    return total


# Offline wandb with no key, as a user without an account runs it.
WANDB_ENV = {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_API_KEY": ""}


def measure(mode: str, model: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        if QUICK:  # every mode in the one shared child process, in the same environment
            os.environ.update(WANDB_ENV)
            return run_child(__file__, mode, model, out)
        return run_child(__file__, mode, model, out, env=WANDB_ENV)


MODES = ("off", "on", "notokens", "off_again")


def main() -> None:
    announce()
    with tiny_models() as models:
        model = str(models.policy)
        steps: dict[str, list[float]] = {mode: [] for mode in MODES}
        rounds: dict[str, list[float]] = {mode: [] for mode in MODES}  # each run's median step
        # per mode, per run: medians of a step's CPU (trainer thread, other threads), helpers'
        cpu: dict[str, list[tuple[float, float, float]]] = {mode: [] for mode in MODES}
        logging_s: list[float] = []
        token_ms: list[float] = []
        last: dict[str, dict] = {}  # each mode's latest run
        for run in range(RUNS):
            for mode in MODES if run % 2 == 0 else MODES[::-1]:
                result = repeat_or_measure(
                    mode, last, lambda mode: measure(mode.removesuffix("_again"), model)
                )
                steps[mode] += result["steps"][WARMUP:]
                if mode == "on":
                    logging_s += result["logging_s"][WARMUP:]
                token_ms += [1000 * s for s in result.get("token_s", [])]
                median = statistics.median(result["steps"][WARMUP:])
                rounds[mode].append(median)
                trainer, whole = result["trainer_cpu"][WARMUP:], result["process_cpu"][WARMUP:]
                others = [w - t for w, t in zip(whole, trainer, strict=True)]
                cpu[mode].append((statistics.median(trainer), statistics.median(others),
                                  result["helper_cpu"]))  # fmt: skip
                print(f"run {run + 1}/{RUNS} logging {mode:9}: median step {median:.3f} s")
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

    def per_round(mode: str) -> str:
        ratios = sorted(a / b for a, b in zip(rounds[mode], rounds["off"], strict=True))
        return f"median {statistics.median(ratios):.3f} [{ratios[0]:.3f}..{ratios[-1]:.3f}]"

    print(f"per round, each run's median step / its round's off: on {per_round('on')}, "
          f"notokens {per_round('notokens')}; off_again (noise floor) "
          f"{per_round('off_again')}")  # fmt: skip
    ms = {mode: [1000 * statistics.median(run[i] for run in cpu[mode]) for i in range(3)]
          for mode in ("off", "on")}  # fmt: skip
    own = statistics.median(logging_ms)
    added = own + (ms["on"][1] - ms["off"][1]) + (ms["on"][2] - ms["off"][2])
    print(f"CPU per step (ms, medians), off -> on: trainer thread {ms['off'][0]:.1f} -> "
          f"{ms['on'][0]:.1f} (its logging calls: {own:.2f}), the process's other threads "
          f"{ms['off'][1]:.1f} -> {ms['on'][1]:.1f}, helper processes (wandb-core) "
          f"{ms['off'][2]:.1f} -> {ms['on'][2]:.1f}; the work logging adds: {added:.1f} ms a "
          f"step, {1 + added / ms['off'][0]:.3f}x the trainer thread's")  # fmt: skip


if __name__ == "__main__":
    if not child_main(child):
        main()
