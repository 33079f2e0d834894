"""Our GRPO (and PPO) against TRL's GRPOTrainer on the same tiny model, prompts, batch and reward.

8 prompts x 4 samples, 32 new tokens, fp32, one CPU thread. Each run is its own process (so peak
RSS is its own), runs are interleaved (ours, TRL, ours-PPO, ...) so machine noise hits all alike,
and the first steps are dropped as warm-up. Prints medians and the ratios:
  ours/TRL step time (goal <= 1.0), ours/TRL peak RSS (goal <= 0.85), PPO/GRPO step (goal <= 1.8).
Needs `pip install -e '.[bench]'` (TRL). Knobs: BENCH_RUNS (3), BENCH_STEPS (12).
"""

from __future__ import annotations

import importlib.util
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

from _child_run import child_main, run_child
from _quick import announce, knob, sized, tiny_models

REPO = Path(__file__).resolve().parent.parent
RUNS = knob("RUNS", 3, 1)
STEPS = knob("STEPS", 12, 1)
WARMUP = sized(2, 0)  # quick: one step, measured (its figure means nothing anyway)
# Quick: the same trainers on a smaller batch.
PROMPTS, SAMPLES, NEW_TOKENS = sized((8, 4, 32), (2, 2, 4))
LR, BETA = 2e-4, 0.05


def quickstart_rewards():
    import yaml

    from rl.config import RewardSpec

    specs = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text())["rewards"]
    return [RewardSpec(**spec) for spec in specs]


def prompts() -> list[str]:
    from rl.config import DataConfig
    from rl.data import load_prompts

    return load_prompts(DataConfig(path=str(REPO / "configs" / "prompts" / "quickstart.yaml")))


def run_ours(model: str, algorithm: str, out: Path) -> list[float]:
    from rl.config import DataConfig, ModelConfig, ModelRef, TrainerConfig
    from rl.trainer import Trainer

    trainer = Trainer(
        TrainerConfig(
            algorithm=algorithm, rollout_batch_size=PROMPTS, samples_per_prompt=SAMPLES,
            max_new_tokens=NEW_TOKENS, learning_rate=LR, kl_coef=BETA, max_steps=STEPS,
            num_epochs=100, output_dir=str(out), save_every=0,
        ),
        ModelConfig(actor=ModelRef(model_name_or_path=model)),
        DataConfig(path=str(REPO / "configs" / "prompts" / "quickstart.yaml")),
        quickstart_rewards(),
        device="cpu",
        run_id=f"bench-{algorithm}",
    )  # fmt: skip
    history = trainer.train().history
    return [row["timing_s/step"] for row in history]


def run_trl(model: str, out: Path) -> list[float]:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rl.rewards import RewardBatch, RewardSet

    rewards = RewardSet.from_specs(quickstart_rewards())

    def reward(prompts, completions, **_):  # TRL hands the rendered prompts back
        raw = [p.rsplit("User: ", 1)[-1].split("\n")[0] for p in prompts]
        truncated = [False] * len(completions)
        return rewards.score(RewardBatch(raw, list(completions), truncated)).total

    tokenizer = AutoTokenizer.from_pretrained(model)
    data = Dataset.from_dict(
        {"prompt": [tokenizer.apply_chat_template([{"role": "user", "content": p}],
                    add_generation_prompt=True, tokenize=False) for p in prompts()]}
    )  # fmt: skip
    stamps: list[float] = []

    class StepTimer(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            stamps.append(time.perf_counter())

    config = GRPOConfig(
        output_dir=str(out), per_device_train_batch_size=PROMPTS * SAMPLES,
        num_generations=SAMPLES, max_completion_length=NEW_TOKENS, learning_rate=LR, beta=BETA,
        max_steps=STEPS, temperature=1.0, top_p=1.0, top_k=0, bf16=False, fp16=False,
        gradient_checkpointing=False, use_cpu=True, report_to="none", logging_steps=10_000,
        save_strategy="no", seed=0, dataloader_num_workers=0,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model), reward_funcs=reward, args=config,
        train_dataset=data, processing_class=tokenizer, callbacks=[StepTimer()],
    )  # fmt: skip
    start = time.perf_counter()
    trainer.train()
    return [b - a for a, b in zip([start, *stamps], stamps, strict=False)]


def child(kind: str, model: str) -> None:
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        steps = run_trl(model, Path(out)) if kind == "trl" else run_ours(model, kind, Path(out))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"steps": steps, "peak_mb": peak_mb}))


def measure(kind: str, model: str) -> dict:
    return run_child(__file__, kind, model)


def main() -> None:
    if importlib.util.find_spec("trl") is None:  # found, not imported: the runs import it
        raise SystemExit("TRL is not installed: pip install -e '.[bench]'")
    announce()
    with tiny_models() as models:
        model = str(models.policy)
        kinds = ("grpo", "trl", "ppo")
        steps: dict[str, list[float]] = {k: [] for k in kinds}
        peaks: dict[str, list[float]] = {k: [] for k in kinds}
        for run in range(RUNS):
            for kind in kinds:
                result = measure(kind, model)
                steps[kind] += result["steps"][WARMUP:]
                peaks[kind].append(result["peak_mb"])
                print(f"run {run + 1}/{RUNS} {kind:4} median step "
                      f"{statistics.median(result['steps'][WARMUP:]):.3f} s, "
                      f"peak RSS {result['peak_mb']:.0f} MB", flush=True)  # fmt: skip
    median = {k: statistics.median(v) for k, v in steps.items()}
    peak = {k: statistics.median(v) for k, v in peaks.items()}
    print(
        f"\n{PROMPTS} prompts x {SAMPLES} samples, {NEW_TOKENS} new tokens, {STEPS} steps x {RUNS}"
    )
    for kind in kinds:
        print(f"{kind:5} median step {median[kind]:.3f} s   peak RSS {peak[kind]:.0f} MB")
    print(f"step time ours/TRL (GRPO): {median['grpo'] / median['trl']:.2f}  (goal <= 1.0)")
    print(f"peak RSS  ours/TRL (GRPO): {peak['grpo'] / peak['trl']:.2f}  (goal <= 0.85)")
    print(f"PPO step / GRPO step:      {median['ppo'] / median['grpo']:.2f}  (goal <= 1.8)")


if __name__ == "__main__":
    if not child_main(child):
        main()
