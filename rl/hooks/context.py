"""What a stage hook receives: a read-only view of the step, and a small control handle."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rl.config import Stage
from rl.samples import Sample


@dataclass
class TrainerControl:
    """What a hook may ask of the trainer: to stop, to save a checkpoint, to log a metric or a
    table of its own. The trainer reads it after each stage's hooks ran."""

    should_stop: bool = False
    stop_reason: str | None = None
    should_save: bool = False
    metrics: dict[str, tuple[float, str]] = field(default_factory=dict)
    # name -> (columns, rows): logged at the step's end when the tables interval says so.
    tables: dict[str, tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]] = field(
        default_factory=dict
    )

    def request_stop(self, reason: str) -> None:
        self.should_stop = True
        self.stop_reason = reason

    def request_checkpoint(self) -> None:
        self.should_save = True

    def report_metric(self, name: str, value: float, reduce: str = "sum") -> None:
        """A hook's own metric (e.g. `sampling/selected`), logged with the step's metrics and
        combined across ranks by `reduce` (sum, mean, min or max)."""
        self.metrics[name] = (float(value), reduce)

    def report_table(
        self, name: str, columns: tuple[str, ...], rows: tuple[tuple[Any, ...], ...]
    ) -> None:
        """A hook's own table (e.g. `hacking/suspects`), the latest given in a step, logged by
        the process that logs (rank 0) at the logger's table interval. Cells are str, int,
        float or bool, one type per column; the text is logged as given (redact it first)."""
        self.tables[name] = (tuple(columns), tuple(tuple(row) for row in rows))


@dataclass(frozen=True)
class StageContext:
    """Read-only: `samples` is a tuple of frozen samples and `metrics` a read-only mapping."""

    stage: Stage
    step: int  # 1-based optimizer step being run
    epoch: int  # 0-based pass over the prompts
    run_id: str
    rank: int
    world_size: int
    samples: tuple[Sample, ...]
    metrics: Mapping[str, float]  # this step's metrics so far (reduced across ranks)
    run_dir: Path
    model_name: str
    generation: Mapping[str, Any]  # temperature, top_p, max_new_tokens, samples_per_prompt
    control: TrainerControl = field(compare=False, repr=False)
    # Each reward component's weight in the total (name -> weight): what a reviewer needs to
    # see how the reward was computed. Empty where the caller does not know them.
    reward_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
