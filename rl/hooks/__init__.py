"""Stage hooks: plug-ins that read each step's full batch and may ask the trainer to stop or save.

The built-in hook types are listed in `rl.plugins.BUILTIN_HOOKS` and imported when first used.
"""

from rl.hooks.builtin import check_params
from rl.hooks.conditions import Condition, ConditionError, MissingMetric, compile_condition
from rl.hooks.context import StageContext, TrainerControl
from rl.hooks.registry import (
    HOOKS,
    Hook,
    HookError,
    HookFactory,
    HookRegistry,
    register_hook,
    validates_params,
)
from rl.hooks.runner import HookFailed, HookRunner, HookStats, check_hook_specs

__all__ = [
    "HOOKS",
    "Condition",
    "ConditionError",
    "Hook",
    "HookError",
    "HookFactory",
    "HookFailed",
    "HookRegistry",
    "HookRunner",
    "HookStats",
    "MissingMetric",
    "StageContext",
    "TrainerControl",
    "check_hook_specs",
    "check_params",
    "compile_condition",
    "register_hook",
    "validates_params",
]
