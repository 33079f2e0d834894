"""OpenRLHF: route low-reward rollouts from the reward function it already calls.

The file form of `--reward.remote_url` (a `.py` file with `reward_func(queries, prompts,
labels)`): a three-line file wraps the user's own function, and OpenRLHF gets exactly what that
function returns or raises.

    # lowtide_reward.py, passed as --reward.remote_url lowtide_reward.py
    from lowtide.openrlhf import routed
    from my_rewards import reward_func as _reward_func
    reward_func = routed(_reward_func, config="lowtide.yaml", run_id="grpo-7")

`lowtide openrlhf reward-file --func my_rewards:reward_func` writes such a file. For a reward
server, `lowtide openrlhf proxy` forwards OpenRLHF's requests and routes on the answers (see
`sampling.sources.openrlhf.proxy`). How samples are read, windowed and numbered:
`sampling.sources.openrlhf.adapter`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lowtide.errors import UsageError
from lowtide.integrations import adapter_setup, router_from_config
from rl.plugins import PluginPathError, resolve_callable
from sampling.sources.openrlhf.adapter import (
    MAX_SAMPLES,
    QUIET_S,
    WINDOW_S,
    RewardRouting,
    RoutedRewardFunc,
    default_rank,
    default_run_id,
)
from sampling.sources.openrlhf.reward_file import reward_file_text

__all__ = ["RoutedRewardFunc", "load_function", "reward_file_text", "routed", "start_routing"]


def start_routing(
    *,
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    run_id: str | None = None,
    rank: int | None = None,
    model_name: str = "unknown",
    end_tokens: Sequence[str] | None = None,
    quiet_s: float = QUIET_S,
    window_s: float = WINDOW_S,
    max_samples: int = MAX_SAMPLES,
) -> RewardRouting:
    """A `RewardRouting` on the run config's `sampling` and `queue` sections (the file, else
    `$LOWTIDE_CONFIG`, else defaults and `REDIS_URL`). Mistakes raise `UsageError`."""
    router = router_from_config(config, overrides)
    with adapter_setup(router):
        return RewardRouting(
            router,
            run_id=run_id or default_run_id(),
            rank=default_rank() if rank is None else rank,
            model_name=model_name,
            end_tokens=end_tokens,
            quiet_s=quiet_s,
            window_s=window_s,
            max_samples=max_samples,
        )


def routed(
    reward_func: Callable[..., Any],
    *,
    config: str | Path | None = None,
    overrides: list[str] | None = None,
    run_id: str | None = None,
    model_name: str = "unknown",
    end_tokens: Sequence[str] | None = None,
    quiet_s: float = QUIET_S,
    window_s: float = WINDOW_S,
) -> RoutedRewardFunc:
    """`reward_func`, routed: name the result `reward_func` in the file OpenRLHF loads.

    `config`: a lowtide YAML file (relative paths are read from the current directory);
    `overrides`: dotted flags such as `--sampling.threshold=0.1`; `run_id` names the run in
    the records (set it: each engine process makes its own otherwise); `end_tokens`: the exact
    special tokens to cut from the end of a response (default: anything that looks like one,
    `<|im_end|>`, `</s>`...). A step is a generation burst of the process: see
    `sampling.sources.openrlhf`. A mistake raises `UsageError` when OpenRLHF loads the file,
    before training starts. What is waiting is flushed at interpreter exit, or by `.close()`."""
    if not callable(reward_func):
        raise UsageError(f"routed() takes the reward function, got {type(reward_func).__name__}")
    routing = start_routing(
        config=config,
        overrides=overrides,
        run_id=run_id,
        model_name=model_name,
        end_tokens=end_tokens,
        quiet_s=quiet_s,
        window_s=window_s,
    )
    return RoutedRewardFunc(reward_func, routing)  # closed at interpreter exit (`TrainerAdapter`)


def load_function(spec: str) -> Callable[..., Any]:
    """`module:attribute` (`my_rewards:reward_func`) -> the callable; UsageError otherwise."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"--func {spec}: give MODULE:FUNCTION, e.g. my_rewards:reward_func")
    try:
        return resolve_callable(spec)  # the one loader every plug-in path goes through
    except PluginPathError as error:
        raise UsageError(f"--func {spec}: {error}") from None
