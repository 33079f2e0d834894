"""Learning-rate schedules: linear warmup, then constant, linear or cosine decay to zero."""

from __future__ import annotations

import math
from collections.abc import Callable

from rl.config import TrainerConfig


def lr_lambda(config: TrainerConfig, total_updates: int) -> Callable[[int], float]:
    warmup = config.warmup_steps
    kind = config.lr_scheduler

    def factor(update: int) -> float:
        if update < warmup:
            return (update + 1) / warmup
        if kind == "constant":
            return 1.0
        progress = min(1.0, (update - warmup) / max(1, total_updates - warmup))
        if kind == "linear":
            return 1.0 - progress
        return 0.5 * (1.0 + math.cos(math.pi * progress))

    return factor
