"""The `lowtide` section of a verl config, and what lowtide reads of the rest of it (the run,
the model, the generation settings, the number of reward workers).

The section: `wrap` (the manager verl used before: a registered name, or `<module
path>:<ClassName>` as verl's `module.path`), `config` (a lowtide YAML file, else
`$LOWTIDE_CONFIG`, else defaults and `REDIS_URL`), `sampling` and `queue` (keys that override
that file's), `run_id` (default `project_name/experiment_name`), `flush_idle_s`. A mistake in it
is an `AdapterSetupError` naming the key as it is written in verl's config.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from omegaconf import OmegaConf
from pydantic import ConfigDict, Field, ValidationError
from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.experimental.reward_loop.reward_manager.registry import REWARD_MANAGER

from rl.config_base import ConfigSection
from rl.suggest import closest, did_you_mean
from sampling.config import QueueConfig, SamplingConfig
from sampling.routing import BatchInfo
from sampling.sources.adapter import AdapterSetupError
from sampling.sources.verl.manager import RoutingRewardManager

SECTION = "lowtide"
NAME = "lowtide"  # in verl's reward-manager registry
NESTED = {"sampling": SamplingConfig, "queue": QueueConfig}
GENERATION_SETTINGS = {  # actor_rollout_ref.rollout key -> record field (as the TRL adapter's)
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "response_length": "max_new_tokens",
    "n": "num_generations",
}
_WORKER_NAME = re.compile(r".*_(\d+)")


def worker_rank() -> int:
    """This reward worker's number, so that sample ids of different workers never collide:
    `i` of the Ray actor `reward_loop_worker_{i}`, else a number from the actor's id, else 0
    (outside Ray: one process)."""
    try:
        import ray

        if not ray.is_initialized():
            return 0
        context = ray.get_runtime_context()
        name = context.get_actor_name() or ""
        actor_id = context.get_actor_id()
    except Exception:
        return 0
    numbered = _WORKER_NAME.fullmatch(name)
    if numbered:
        return int(numbered[1])
    return int(actor_id[:8], 16) if actor_id else 0


def batch_info(config: Any, run_id: str | None = None) -> BatchInfo:
    """Run, rank, model and generation settings from verl's config (step 0: set per batch).
    The run is `trainer.project_name/trainer.experiment_name` unless `run_id` is given."""
    trainer = OmegaConf.select(config, "trainer", default=None) or {}
    if run_id is None:
        project = trainer.get("project_name") or "verl"
        run_id = f"{project}/{trainer.get('experiment_name') or 'run'}"
    rollout = OmegaConf.select(config, "actor_rollout_ref.rollout", default=None) or {}
    generation: dict[str, float | int | str | bool] = {}
    for key, name in GENERATION_SETTINGS.items():
        value = rollout.get(key)
        if isinstance(value, bool | int | float | str) and value is not None:
            generation[name] = value
    return BatchInfo(
        run_id=run_id,
        step=0,
        rank=worker_rank(),
        model_name=str(OmegaConf.select(config, "actor_rollout_ref.model.path", default="unknown")),
        generation=generation,
    )


def reward_workers(config: Any) -> int | None:
    """How many reward workers verl starts (`reward.num_workers`; older configs
    `reward_model.num_workers`): they share a review budget, and none sees WORLD_SIZE."""
    for key in ("reward.num_workers", "reward_model.num_workers"):
        value = OmegaConf.select(config, key, default=None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class VerlSettings(ConfigSection):
    """The `lowtide` section of a verl config. `from_verl_config` checks it first, to name a
    mistake as verl's config writes it (`lowtide.flush_idle_s`); the model's own rules are the
    same, for a section built in code."""

    model_config = ConfigDict(frozen=True)

    wrap: str = "naive"
    config: str | None = None
    run_id: str | None = None
    flush_idle_s: float = Field(1.0, gt=0, allow_inf_nan=False)
    sampling: dict[str, Any] = Field(default_factory=dict)
    queue: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_verl_config(cls, config: Any) -> VerlSettings:
        raw = OmegaConf.select(config, SECTION, default=None)
        section = {} if raw is None else OmegaConf.to_container(raw, resolve=True)
        if not isinstance(section, dict):
            raise AdapterSetupError(f"{SECTION}: must be a mapping (wrap, config, sampling, ...)")
        known = list(cls.model_fields)
        for key in section:
            if key not in known:
                raise AdapterSetupError(
                    f"{SECTION}.{key}: not a lowtide setting for verl; {_hint(str(key), known)}"
                )
        for key in ("sampling", "queue"):
            if not isinstance(section.get(key, {}), dict):
                raise AdapterSetupError(f"{SECTION}.{key}: must be a mapping of {key} settings")
        texts = {"wrap": "a reward manager's name", "config": "a file path", "run_id": "a name"}
        for key, what in texts.items():
            value = section.get(key, "")
            if value == "" or (value is None and key != "wrap"):
                continue  # unset: the default
            if not (isinstance(value, str) and value):
                raise AdapterSetupError(f"{SECTION}.{key}: must be {what}")
        idle = section.get("flush_idle_s", 1.0)
        if isinstance(idle, bool) or not isinstance(idle, int | float) or not 0 < idle < math.inf:
            raise AdapterSetupError(f"{SECTION}.flush_idle_s: must be a positive number of seconds")
        try:
            return cls(**section)
        except ValidationError as error:  # what the checks above let through: one line still
            first = error.errors()[0]
            where = ".".join(str(part) for part in (SECTION, *first["loc"]))
            raise AdapterSetupError(f"{where}: {first['msg']}") from None

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
                raise AdapterSetupError(
                    f"{SECTION}.wrap: cannot load {self.wrap}: {error}"
                ) from None
        else:
            if self.wrap == NAME:
                raise AdapterSetupError(
                    f"{SECTION}.wrap: name the manager to wrap, not {NAME!r} itself"
                )
            if self.wrap not in REWARD_MANAGER:
                names = [name for name in REWARD_MANAGER if name != NAME]
                hint = did_you_mean(self.wrap, names)
                raise AdapterSetupError(
                    f"{SECTION}.wrap: no reward manager {self.wrap!r} is registered"
                    + (f"; {hint}" if hint else f" (registered: {', '.join(sorted(names))})")
                )
            found = get_reward_manager_cls(self.wrap)
        if not (isinstance(found, type) and issubclass(found, RewardManagerBase)):
            raise AdapterSetupError(
                f"{SECTION}.wrap: {self.wrap} is not a verl reward manager class"
            )
        if issubclass(found, RoutingRewardManager):
            raise AdapterSetupError(
                f"{SECTION}.wrap: {self.wrap} routes already; name the one it wraps"
            )
        return found


def _hint(key: str, known: list[str]) -> str:
    """Did-you-mean among the section's keys, then among the sampling and queue keys (a key
    written one level too high)."""
    paths = {name: f"{SECTION}.{name}" for name in known}
    for name, schema in NESTED.items():
        paths |= {field: f"{SECTION}.{name}.{field}" for field in schema.model_fields}
    near = closest(key, known) or closest(key, paths)
    return f"did you mean {paths[near[0]]}?" if near else f"known: {', '.join(known)}"
