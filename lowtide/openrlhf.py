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
`lowtide.openrlhf_proxy`). How samples are read, windowed and numbered:
`sampling.sources.openrlhf`.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lowtide.errors import UsageError
from lowtide.integrations import router_from_config
from rl.plugins import PluginPathError, resolve_callable
from sampling.sources.openrlhf import (
    MAX_SAMPLES,
    QUIET_S,
    WINDOW_S,
    RewardRouting,
    RoutedRewardFunc,
)

__all__ = ["RoutedRewardFunc", "routed"]
RUN_ID_VAR = "LOWTIDE_RUN_ID"
RANK_VAR = "LOWTIDE_RANK"


def default_run_id() -> str:
    """`$LOWTIDE_RUN_ID`, else one per process (each vLLM engine loads the reward file in its own
    process: give `run_id` to see one run)."""
    return os.environ.get(RUN_ID_VAR) or (
        f"openrlhf-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{socket.gethostname()}-"
        f"{os.getpid()}"
    )


def default_rank() -> int:
    """`$LOWTIDE_RANK`, else the process id: processes of one run never share sample ids."""
    value = os.environ.get(RANK_VAR, "")
    if value:
        if not value.isdigit():
            raise UsageError(f"{RANK_VAR} must be a non-negative integer, got {value!r}")
        return int(value)
    return os.getpid()


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
    try:
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
    except (ValueError, UsageError) as error:
        router.close(deadline_s=0.5)
        raise UsageError(str(error)) from None


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
    atexit.register(routing.close)  # OpenRLHF never closes a reward function
    return RoutedRewardFunc(reward_func, routing)


def load_function(spec: str) -> Callable[..., Any]:
    """`module:attribute` (`my_rewards:reward_func`) -> the callable; UsageError otherwise."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise UsageError(f"--func {spec}: give MODULE:FUNCTION, e.g. my_rewards:reward_func")
    try:
        return resolve_callable(spec)  # the one loader every plug-in path goes through
    except PluginPathError as error:
        raise UsageError(f"--func {spec}: {error}") from None


def reward_file_text(
    func_spec: str,
    out: Path,
    *,
    config: Path | None,
    overrides: list[str] | None = None,
    run_id: str | None = None,
    model_name: str = "unknown",
) -> str:
    """The source of a reward file for `--reward.remote_url`. OpenRLHF loads it by path, so it
    puts its own directory on `sys.path` (for the user's module) and names the config relative
    to itself."""
    module_name, _, attribute = func_spec.partition(":")
    arguments = [f"config={_path_expression(config, out)}"] if config is not None else []
    if overrides:
        arguments.append(f"overrides={json.dumps(list(overrides))}")
    if run_id:
        arguments.append(f"run_id={json.dumps(run_id)}")
    if model_name != "unknown":
        arguments.append(f"model_name={json.dumps(model_name)}")
    call = ", ".join(["_reward_func", *arguments])
    return (
        f'"""OpenRLHF reward file (--reward.remote_url {out.name}): {func_spec}, with its\n'
        "low-reward samples routed to review by lowtide.\n"
        'Written by `lowtide openrlhf reward-file`."""\n'
        "\n"
        "import sys\n"
        "from pathlib import Path\n"
        "\n"
        "_HERE = Path(__file__).resolve().parent\n"
        "sys.path.insert(0, str(_HERE))  # OpenRLHF loads this file by path\n"
        "\n"
        "from lowtide.openrlhf import routed  # noqa: E402\n"
        f"from {module_name} import {attribute} as _reward_func  # noqa: E402\n"
        "\n"
        f"reward_func = routed({call})\n"
    )


def _path_expression(config: Path, out: Path) -> str:
    try:
        relative = config.resolve().relative_to(out.resolve().parent)
    except ValueError:
        return json.dumps(str(config.resolve()))
    return f"_HERE / {json.dumps(relative.as_posix())}"
