"""verl (0.9.1): route low-reward rollouts with a reward manager that wraps the one verl would
use; the rewards verl trains on stay exactly what that manager returns. In verl's config:

    reward:
      reward_manager:
        source: importlib              # verl imports the class from the module below
        name: LowtideRewardManager
        module:
          path: pkg://lowtide.verl
    lowtide:
      wrap: naive                      # the manager verl used before: naive, dapo, ...
      config: /abs/path/lowtide.yaml   # optional: sampling and queue sections

Importing this module also registers the class in verl's reward-manager registry as `lowtide`.
The `lowtide` section: `wrap` (a registered name, or `<module path>:<ClassName>` as verl's
`module.path`), `config` (else `$LOWTIDE_CONFIG`, else defaults and `REDIS_URL`), `sampling` and
`queue` (keys that override that file's), `run_id` (default `project_name/experiment_name`),
`flush_idle_s`. A mistake in it raises `UsageError` when the reward workers start.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from omegaconf import OmegaConf
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls, register
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER

from lowtide.errors import UsageError
from lowtide.integrations import router_from_config
from rl.suggest import closest, did_you_mean
from sampling.config import QueueConfig, SamplingConfig
from sampling.routing import Router
from sampling.sources.verl import Routing, RoutingRewardManager, batch_info

__all__ = ["LowtideRewardManager", "VerlSettings"]
SECTION = "lowtide"
NAME = "lowtide"
NESTED = {"sampling": SamplingConfig, "queue": QueueConfig}


@dataclass(frozen=True)
class VerlSettings:
    """The `lowtide` section of a verl config."""

    wrap: str = "naive"
    config: str | None = None
    run_id: str | None = None
    flush_idle_s: float = 1.0
    sampling: dict[str, Any] = field(default_factory=dict)
    queue: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_verl_config(cls, config: Any) -> VerlSettings:
        raw = OmegaConf.select(config, SECTION, default=None)
        section = {} if raw is None else OmegaConf.to_container(raw, resolve=True)
        if not isinstance(section, dict):
            raise UsageError(f"{SECTION}: must be a mapping (wrap, config, sampling, ...)")
        known = list(cls.__dataclass_fields__)
        for key in section:
            if key not in known:
                raise UsageError(
                    f"{SECTION}.{key}: not a lowtide setting for verl; {_hint(str(key), known)}"
                )
        for key in ("sampling", "queue"):
            if not isinstance(section.get(key, {}), dict):
                raise UsageError(f"{SECTION}.{key}: must be a mapping of {key} settings")
        texts = {"wrap": "a reward manager's name", "config": "a file path", "run_id": "a name"}
        for key, what in texts.items():
            value = section.get(key, "")
            if value == "" or (value is None and key != "wrap"):
                continue  # unset: the default
            if not (isinstance(value, str) and value):
                raise UsageError(f"{SECTION}.{key}: must be {what}")
        idle = section.get("flush_idle_s", 1.0)
        if isinstance(idle, bool) or not isinstance(idle, int | float) or not 0 < idle < math.inf:
            raise UsageError(f"{SECTION}.flush_idle_s: must be a positive number of seconds")
        return cls(**section)

    def overrides(self) -> list[str]:
        """The `sampling`/`queue` keys as the dotted flags the run config takes."""
        return [
            f"--{name}.{key}={json.dumps(value)}"
            for name in ("sampling", "queue")
            for key, value in getattr(self, name).items()
        ]

    def wrapped_class(self) -> type[RewardManagerBase]:
        """The manager to wrap: by registered name, or `<module path>:<ClassName>`."""
        if ":" in self.wrap:
            from verl.utils.import_utils import load_extern_object

            path, _, name = self.wrap.rpartition(":")
            try:
                found = load_extern_object(module_path=path, object_name=name)
            except Exception as error:
                raise UsageError(f"{SECTION}.wrap: cannot load {self.wrap}: {error}") from None
        else:
            if self.wrap == NAME:
                raise UsageError(f"{SECTION}.wrap: name the manager to wrap, not {NAME!r} itself")
            if self.wrap not in REWARD_MANAGER:
                names = [name for name in REWARD_MANAGER if name != NAME]
                hint = did_you_mean(self.wrap, names)
                raise UsageError(
                    f"{SECTION}.wrap: no reward manager {self.wrap!r} is registered"
                    + (f"; {hint}" if hint else f" (registered: {', '.join(sorted(names))})")
                )
            found = get_reward_manager_cls(self.wrap)
        if not (isinstance(found, type) and issubclass(found, RewardManagerBase)):
            raise UsageError(f"{SECTION}.wrap: {self.wrap} is not a verl reward manager class")
        if issubclass(found, RoutingRewardManager):
            raise UsageError(f"{SECTION}.wrap: {self.wrap} routes already; name the one it wraps")
        return found


def _hint(key: str, known: list[str]) -> str:
    """Did-you-mean among the section's keys, then among the sampling and queue keys (a key
    written one level too high)."""
    paths = {name: f"{SECTION}.{name}" for name in known}
    for name, schema in NESTED.items():
        paths |= {field: f"{SECTION}.{name}.{field}" for field in schema.model_fields}
    near = closest(key, known) or closest(key, paths)
    return f"did you mean {paths[near[0]]}?" if near else f"known: {', '.join(known)}"


def _router(settings: VerlSettings, reward_workers: int | None) -> Router:
    try:
        return router_from_config(settings.config, settings.overrides(), processes=reward_workers)
    except UsageError as error:  # name the keys as they are written in verl's config
        message = str(error)
        for name in NESTED:
            message = message.replace(f"--{name}.", f"{SECTION}.{name}.")
        raise UsageError(message) from None


def reward_workers(config: Any) -> int | None:
    """How many reward workers verl starts (`reward.num_workers`; older configs
    `reward_model.num_workers`): they share a review budget, and none sees WORLD_SIZE."""
    for key in ("reward.num_workers", "reward_model.num_workers"):
        value = OmegaConf.select(config, key, default=None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class LowtideRewardManager(RoutingRewardManager):
    """What verl builds in each reward worker: the wrapped manager, plus routing."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kwargs: Any):
        settings = VerlSettings.from_verl_config(config)
        wrapped = settings.wrapped_class()
        router = _router(settings, reward_workers(config))
        routing = Routing(
            wrapped=wrapped,
            router=router,
            info=batch_info(config, settings.run_id),
            flush_idle_s=settings.flush_idle_s,
        )
        super().__init__(config, tokenizer, compute_score, routing=routing, **kwargs)


# verl's registry refuses a second class under one name: this module loaded again by file path
# (`module.path: /.../lowtide/verl.py`) keeps the first registration.
if NAME not in REWARD_MANAGER:
    register(NAME)(LowtideRewardManager)
