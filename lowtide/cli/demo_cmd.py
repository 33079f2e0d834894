"""`lowtide demo`: bring up the local stack and the tiny model, then say where everything is."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from lowtide.cli import services_cmd
from lowtide.cli.console import err
from lowtide.cli.model_cmd import tiny
from lowtide.cli.train_cmd import run_training
from lowtide.config import load_run_config
from lowtide.errors import UsageError
from lowtide.services import labelstudio
from lowtide.services.credentials import ensure_credentials

QUICKSTART = Path("configs/quickstart.yaml")
DEMO_PROMPTS = ["Name a color.", "What is two plus three?", "What does the cow say?"]


def demo(
    models: Path = typer.Option(Path("outputs/tiny"), "--models", help="where the tiny models go"),
    label_studio_port: int = typer.Option(
        int(os.environ.get("LABEL_STUDIO_PORT", labelstudio.DEFAULT_PORT)), "--label-studio-port"
    ),
    steps: int | None = typer.Option(
        None, "--steps", min=1, help="training steps (default: config)"
    ),
) -> None:
    """Start Redis and Label Studio, build the tiny model, train it briefly, say where to look."""
    if not QUICKSTART.exists():
        raise UsageError(f"{QUICKSTART} not found: run the demo from the lowtide project directory")
    err.rule("1/3 services")
    services_cmd.up(only=None, label_studio_port=label_studio_port)

    err.rule("2/3 tiny model")
    policy = models / "policy"
    if (policy / "config.json").exists():
        err.print(f"Reusing the tiny models in {models} (delete the directory to rebuild)")
    else:
        tiny(out=models, sft_steps=100, seed=0)
    from rl.models.generation import sample_completions  # torch import: only when needed

    completions = sample_completions(policy, DEMO_PROMPTS)
    for prompt, completion in zip(DEMO_PROMPTS, completions, strict=True):
        err.print(f"  {prompt!r:28} -> {completion!r}", markup=False)

    err.rule("3/3 training")
    overrides = [f"--model.actor.model_name_or_path={policy}"]
    if steps is not None:
        overrides.append(f"--trainer.max_steps={steps}")
    config = load_run_config(QUICKSTART, overrides)
    trainer = config.trainer
    err.print(
        f"{QUICKSTART}: {trainer.algorithm} on {policy}, {trainer.rollout_batch_size} prompts x "
        f"{trainer.samples_per_prompt} samples a step; reward: a cool colour (blue or green)",
        markup=False,
    )
    result = run_training(config, QUICKSTART)
    logs = Path(config.logger.save_dir) / (config.logger.name_run or result.run_id)
    _summary(label_studio_port, policy, result.run_dir, logs, _routed(result.history, config))


def _routed(history, config) -> str:
    """How many low-reward rollouts went to the queue, and what waits there now."""
    from sampling.queue_admin import queue_status

    routed = sum(r.get("sampling/selected", 0) - r.get("sampling/capped", 0) for r in history)
    state = queue_status(config.queue)
    return (
        f"{routed:.0f} low-reward rollouts (reward < {config.sampling.threshold}) to queue "
        f"'{config.queue.name}': {state.depth} jobs waiting, {state.spool_records} records "
        "spooled (lowtide queue status)"
    )


def _summary(port: int, policy: Path, run_dir: Path, logs: Path, routed: str) -> None:
    credentials = ensure_credentials()
    err.rule("where to look")
    err.print(
        f"  Label Studio    http://127.0.0.1:{port}  login {credentials.username}, password and "
        f"API token in {credentials.env_file}\n"
        f"  tiny policy     {policy} (loads with AutoModelForCausalLM.from_pretrained)\n"
        f"  training run    {run_dir} (config.yaml, checkpoints/)\n"
        f"  train again     lowtide train --config {QUICKSTART}\n"
        f"  services        lowtide status  |  stop with: lowtide down\n"
        f"  logs            {logs} (lowtide logs show {logs})\n"
        f"  tensorboard     tensorboard --logdir {logs.parent / 'tensorboard'}\n"
        f"  wandb (offline) {logs.parent / 'wandb'}  (wandb sync <offline-run dir>)\n"
        f"  routed          {routed}\n"
        "\n  Not in this version yet: the worker that imports the queued rollouts into Label\n"
        "  Studio for review (they wait in the queue until then).",
        markup=False,
    )
