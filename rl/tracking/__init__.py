"""Training observability: a router that sends metrics, histograms and rollout tables to
backends (wandb, tensorboard, console, local JSONL files) off the trainer thread."""

from rl.tracking.backends import console, local_files  # noqa: F401  (registers the backends)
from rl.tracking.backends.base import Backend, RunInfo, Table, register_backend
from rl.tracking.router import Tracker

__all__ = ["Backend", "RunInfo", "Table", "Tracker", "register_backend"]
