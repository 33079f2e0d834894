"""TRL (`GRPOTrainer`, `RLOOTrainer`): route low-reward rollouts by wrapping the reward functions
the trainer already gets; nothing else in the training script changes.

    from lowtide.trl import route_low_rewards

    reward_funcs = route_low_rewards([format_reward, correctness], config="lowtide.yaml")
    trainer = GRPOTrainer(model=..., reward_funcs=reward_funcs, args=GRPOConfig(...), ...)

Routing uses the total TRL optimises: the weights (`GRPOConfig.reward_weights`) and function
names are read from the trainer at each batch, so they are not repeated here. What is waiting is
flushed at interpreter exit, or by `reward_funcs.close()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lowtide.integrations import adapter_setup, router_from_config
from sampling.sources.trl.adapter import RewardRouting, RoutedRewardFuncs

__all__ = ["RoutedRewardFuncs", "route_low_rewards"]


def route_low_rewards(
    reward_funcs: Callable[..., Any] | Sequence[Callable[..., Any]],
    *,
    reward_weights: Sequence[float] | None = None,
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    run_id: str | None = None,
) -> RoutedRewardFuncs:
    """The reward functions, wrapped: pass the result to TRL as `reward_funcs`.

    `config`: a lowtide YAML file with `sampling` and `queue` sections (else `$LOWTIDE_CONFIG`,
    else defaults and `REDIS_URL`); `overrides`: dotted flags such as `--sampling.threshold=0.1`.
    `reward_weights` is only for calling the functions outside a trainer (inside one, the
    trainer's own weights are used, and a difference is warned about). `run_id` names the run in
    the records (default: `GRPOConfig.run_name`, else the output directory's name). A mistake in
    any of these raises `UsageError` here, before training starts."""
    funcs = list(reward_funcs) if isinstance(reward_funcs, list | tuple) else [reward_funcs]
    router = router_from_config(config, overrides)
    with adapter_setup(router):
        routing = RewardRouting(router, funcs, reward_weights=reward_weights, run_id=run_id)
    return RoutedRewardFuncs(routing)  # closed at interpreter exit too (`TrainerAdapter`)
