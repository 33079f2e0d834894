"""`lowtide train`: run GRPO or PPO from a run config, with a progress bar and a final summary."""

from __future__ import annotations

import signal
from pathlib import Path

import typer

from lowtide.config import load_run_config
from lowtide.training import run_training


def train(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", "-c", help="YAML run config"),
) -> None:
    """Train a policy with GRPO or PPO. Override any key: --trainer.num_epochs=1 --device=cpu."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # until training starts: nothing to save
        signal.signal(signum, _stop_on_signal)
    run_training(load_run_config(config, ctx.args), config, ctx.args)


def _stop_on_signal(signum: int, frame: object) -> None:
    # Unwind, without a traceback: hooks close (the producer flushes or spools), loggers flush.
    raise SystemExit(128 + signum)
