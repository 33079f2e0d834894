"""Stage hooks: plug-ins that read each step's full batch and may ask the trainer to stop or save.

Importing this package registers the built-ins (`early_stop`, `checkpoint`).
"""

from rl.hooks.builtin import check_params  # importing builtin registers the built-in hooks
from rl.hooks.conditions import Condition, ConditionError, MissingMetric, compile_condition
from rl.hooks.context import StageContext, TrainerControl
from rl.hooks.registry import HOOKS, Hook, HookError, HookFactory, HookRegistry, register_hook
from rl.hooks.runner import HookFailed, HookRunner, HookStats

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
    "check_params",
    "compile_condition",
    "register_hook",
]
