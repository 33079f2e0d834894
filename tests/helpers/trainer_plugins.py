"""Hooks and reward functions that tests name by dotted path, as users do in YAML."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

RECORDED: list[dict[str, Any]] = []


def make_recorder(params: dict[str, Any], resources: Mapping[str, Any]):
    def record(ctx) -> None:
        RECORDED.append(
            {
                "stage": ctx.stage,
                "step": ctx.step,
                "tag": params.get("tag"),
                "samples": ctx.samples,
                "metrics": dict(ctx.metrics),
                "run_id": ctx.run_id,
                "reward_weights": dict(ctx.reward_weights),
            }
        )

    return record


def nan_for_every_third(prompt: str, response: str) -> float:
    """A broken reward function: NaN or inf for some samples."""
    length = len(response)
    if length % 3 == 0:
        return math.nan
    if length % 3 == 1:
        return math.inf
    return 0.5
