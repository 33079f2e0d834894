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

from typing import Any

from lowtide.errors import UsageError
from lowtide.integrations import adapter_setup, router_from_config
from sampling.routing import Router
from sampling.sources.verl.manager import Routing, RoutingRewardManager, register_manager
from sampling.sources.verl.settings import (
    NAME,
    NESTED,
    SECTION,
    VerlSettings,
    batch_info,
    reward_workers,
)

__all__ = ["LowtideRewardManager", "VerlSettings"]


class LowtideRewardManager(RoutingRewardManager):
    """What verl builds in each reward worker: the wrapped manager, plus routing."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, **kwargs: Any):
        with adapter_setup():
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


def _router(settings: VerlSettings, reward_workers: int | None) -> Router:
    try:
        return router_from_config(settings.config, settings.overrides(), processes=reward_workers)
    except UsageError as error:  # name the keys as they are written in verl's config
        message = str(error)
        for name in NESTED:
            message = message.replace(f"--{name}.", f"{SECTION}.{name}.")
        raise UsageError(message) from None


register_manager(NAME, LowtideRewardManager)
