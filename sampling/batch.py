"""What a trainer hands the routing core: its scored samples and where the batch comes from."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class PlainSample:
    """One scored sample as any trainer knows it: what an adapter builds (our trainer's
    `rl.samples.Sample` has the same fields and is routed as it is)."""

    prompt: str
    response: str
    reward: float  # the total the trainer optimises; NaN/inf are never selected
    reward_details: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    group_id: int = 0  # samples of one prompt share it
    index: int = 0  # position in the step's batch on this rank: part of the sample id
    advantage: float = math.nan
    truncated: bool = False


@dataclass(frozen=True)
class BatchInfo:
    """Where a batch comes from: the part of each record that is the same for the whole batch."""

    run_id: str
    step: int
    rank: int = 0  # the process's rank: ids of different ranks never collide
    model_name: str = "unknown"
    checkpoint_step: int | None = None
    generation: Mapping[str, float | int | str | bool] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # Reward component -> its weight in the total, when the trainer says (shown to reviewers).
    reward_weights: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
