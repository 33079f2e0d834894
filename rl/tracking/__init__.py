"""Training observability: a router that sends metrics, histograms and rollout tables to
backends (wandb, tensorboard, console, prometheus, local JSONL files) off the trainer thread,
and `read_run`, which reads a run's local files back as pandas DataFrames."""

from typing import TYPE_CHECKING

# The built-in backends are listed in rl.plugins and load when a run names them.
from rl.tracking.backends.base import Backend, RunInfo, Table, register_backend
from rl.tracking.router import Tracker

if TYPE_CHECKING:
    from rl.tracking.reader import RunLogs, read_run

__all__ = ["Backend", "RunInfo", "RunLogs", "Table", "Tracker", "read_run", "register_backend"]


def __getattr__(name: str) -> object:
    # The reader needs pandas (~0.3 s to import): it loads on first use, not with the trainer.
    if name in ("read_run", "RunLogs"):
        from rl.tracking import reader

        return getattr(reader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
