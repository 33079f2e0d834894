"""Reward types: the built-in names, and turning a `RewardSpec` into a scorer.

A `RewardSpec.type` is a built-in rule (`rl.plugins.BUILTIN_REWARD_RULES`), `reward_model`, or a
dotted path to a Python function (`pkg.mod:func` or `pkg.mod.func`; see `rl.rewards.function`
for what it is called with and may return). Built-in rules are ordinary batched functions behind
an alias, so they load exactly like a user's function.

`check_spec` finds every mistake in a spec without loading a reward model; `build_scorer` runs the
same check and then builds the scorer, so a config that passes the check fails only on what
loading itself finds (a directory that holds no model).
"""

from __future__ import annotations

import math
from typing import Any

from rl.config import RewardSpec
from rl.plugins import BUILTIN_REWARD_RULES, PluginPathError, resolve_callable
from rl.rewards.function import FunctionReward
from rl.rewards.model_spec import check_model_spec
from rl.rewards.types import RewardError, Scorer
from rl.suggest import did_you_mean

REWARD_MODEL_TYPE = "reward_model"
REWARD_ALIASES = BUILTIN_REWARD_RULES


def reward_types() -> list[str]:
    return sorted([*REWARD_ALIASES, REWARD_MODEL_TYPE])


def resolve_type(kind: str) -> Any:
    """What a type names: a reward function, or the RewardModel class for `reward_model`."""
    kind = kind.strip()
    if kind.lower() == REWARD_MODEL_TYPE:
        from rl.rewards.model import RewardModel  # torch and transformers only when needed

        return RewardModel
    if kind.lower() in REWARD_ALIASES:
        return import_function(REWARD_ALIASES[kind.lower()], kind)
    if ":" in kind or "." in kind:
        return import_function(kind, kind)
    raise RewardError(unknown_type_message(kind))


def check_spec(spec: RewardSpec) -> str:
    """The component's default name; RewardError for any mistake in the spec. Loads no model."""
    return _prepare(spec)[0]


def build_scorer(spec: RewardSpec, *, device: str = "cpu") -> tuple[str, Scorer]:
    """The component's default name and its scorer; every mistake in the spec fails here."""
    name, scorer = _prepare(spec)
    if scorer is not None:
        return name, scorer
    from rl.rewards.model import RewardModel  # torch and transformers only when needed

    return name, RewardModel.from_spec(spec, device=device)


def _prepare(spec: RewardSpec) -> tuple[str, FunctionReward | None]:
    """(default name, scorer) after every check; the scorer is None for a reward model, whose
    settings are checked here and which loads only in `build_scorer`."""
    kind = spec.type.strip()
    if not math.isfinite(spec.weight):
        raise RewardError(f"reward {kind!r}: weight must be finite, got {spec.weight}")
    if kind.lower() == REWARD_MODEL_TYPE:
        check_model_spec(spec)
        return REWARD_MODEL_TYPE, None
    if spec.path is not None:
        raise RewardError(
            f"reward {kind!r}: `path` is only read by type {REWARD_MODEL_TYPE!r}; "
            "pass function settings under `params`"
        )
    scorer = FunctionReward(resolve_type(kind), spec.params, label=kind)
    if kind.lower() in REWARD_ALIASES:
        scorer.dry_run()  # built-in rules check their params on an empty batch
        return kind.lower(), scorer
    return scorer.function_name, scorer


def unknown_type_message(kind: str) -> str:
    known = reward_types()
    close = did_you_mean(kind.lower(), known, n=3, cutoff=0.5, capital=True)
    hint = f" {close}" if close else ""
    return (
        f"unknown reward type {kind!r}.{hint} Known types: {', '.join(known)}; "
        "or a dotted path to a Python function (pkg.module:function)."
    )


def import_function(path: str, label: str) -> Any:
    """The callable at `pkg.mod:attr.sub` or `pkg.mod.attr`; import failures are fatal, with the
    reason."""
    try:
        return resolve_callable(path, "callable")
    except PluginPathError as error:
        raise RewardError(f"reward {label!r}: {error}") from error
