"""Built-in hooks (listed in `rl.plugins.BUILTIN_HOOKS`). Both only ask through `ctx.control`;
the trainer stops or saves. In a config:

hooks:
  - type: early_stop
    stage: step_end
    when: "reward/mean > 0.95 and step > 100"
    params: {reason: "reward saturated"}
  - type: checkpoint
    stage: step_end
    every: 50
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rl.hooks.context import StageContext
from rl.hooks.registry import HookError, validates_params
from rl.suggest import did_you_mean

logger = logging.getLogger("rl.hooks")


def check_params(params: Mapping[str, Any], known: tuple[str, ...]) -> None:
    """HookError for the first param the hook does not take, with the nearest known name."""
    for key in params:
        if key not in known:
            nearest = did_you_mean(str(key), known)
            hint = f"; {nearest}" if nearest else ""
            takes = ", ".join(known) or "none"
            raise HookError(f"unknown param {key!r}{hint} (takes: {takes})")


@dataclass(frozen=True)
class EarlyStop:
    reason: str | None
    when: str | None

    def __call__(self, ctx: StageContext) -> None:
        # The runner only calls this when `when` held, so the condition is the reason.
        condition = f"when {self.when!r} held" if self.when else "early_stop ran"
        reason = f"{self.reason} ({condition})" if self.reason else condition
        reason = f"{reason} at stage {ctx.stage}, step {ctx.step}"
        logger.info("early_stop: requesting stop: %s", reason)
        ctx.control.request_stop(reason)


@dataclass(frozen=True)
class Checkpoint:
    def __call__(self, ctx: StageContext) -> None:
        ctx.control.request_checkpoint()


def check_early_stop_params(params: Mapping[str, Any]) -> None:
    check_params(params, ("reason",))
    reason = params.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise HookError(f"param 'reason' must be text, got {type(reason).__name__}")


@validates_params(check_early_stop_params)
def make_early_stop(params: dict[str, Any], resources: Mapping[str, Any]) -> EarlyStop:
    check_early_stop_params(params)
    spec = resources.get("hook_spec")
    return EarlyStop(reason=params.get("reason"), when=getattr(spec, "when", None))


def check_checkpoint_params(params: Mapping[str, Any]) -> None:
    check_params(params, ())


@validates_params(check_checkpoint_params)
def make_checkpoint(params: dict[str, Any], resources: Mapping[str, Any]) -> Checkpoint:
    check_checkpoint_params(params)
    return Checkpoint()
