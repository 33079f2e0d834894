"""Training observability: a router that sends metrics, histograms and rollout tables to
backends (wandb, tensorboard, console, prometheus, local JSONL files) off the trainer thread."""

# Importing the backend modules registers them; wandb and tensorboard load only when used.
from rl.tracking.backends import (  # noqa: F401
    console,
    local_files,
    prometheus_backend,
    tensorboard_backend,
    wandb_backend,
)
from rl.tracking.backends.base import Backend, RunInfo, Table, register_backend
from rl.tracking.router import Tracker

__all__ = ["Backend", "RunInfo", "Table", "Tracker", "register_backend"]
