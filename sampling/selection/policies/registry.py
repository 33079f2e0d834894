"""Selection policies by name. Each built-in registers itself in its own module of this folder;
a policy of your own registers with `register_policy`, or a config names its function by dotted
path (`sampling.policy: my_package.policies:lowest_two`), imported when the run starts.

A policy is a function `(config, values, group_ids) -> Selected` over one batch: `values` are
what each sample is judged on (its reward or `sampling.component`), `group_ids` its prompt
group, `config` the `sampling` section (its `threshold`, `quantile` and `group_k` are there for
policies to read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rl.plugins import is_dotted_path, resolve_into, same_plugin
from rl.suggest import did_you_mean
from sampling.selection.policies.selected import Selected


class PolicySettings(Protocol):
    """What the built-in policies read of the `sampling` section (`SamplingConfig`, which they
    are given whole; not imported here, as the config checks its policy name against this
    registry)."""

    @property
    def policy(self) -> str: ...
    @property
    def threshold(self) -> float: ...
    @property
    def quantile(self) -> float: ...
    @property
    def group_k(self) -> float: ...


Policy = Callable[[PolicySettings, Sequence[float], Sequence[int]], Selected]
# Not a per-step policy: the budget selector pools steps (sampling/selection/budget_selector.py).
BUDGET = "budget"

_REGISTRY: dict[str, Policy] = {}


class PolicyError(ValueError):
    """A policy name that is not registered, or a dotted path that leads to no function."""


def register_policy(name: str) -> Callable[[Policy], Policy]:
    """Decorator: `@register_policy("mine")` over a policy function makes `sampling.policy: mine`
    select with it, once the module that holds it is imported."""

    def add(policy: Policy) -> Policy:
        taken = _REGISTRY.get(name)
        if name == BUDGET or (taken is not None and not same_plugin(taken, policy)):
            raise PolicyError(f"selection policy {name!r} is already registered")
        _REGISTRY[name] = policy
        return policy

    return add


def policy_names() -> list[str]:
    """The names a config may give `sampling.policy` (besides a dotted path)."""
    return sorted({*_REGISTRY, BUDGET})


def check_policy_name(name: str) -> str:
    """`name` when a config may give it: a registered name, `budget`, or the dotted path of a
    policy function; else PolicyError naming the nearest one."""
    if name in _REGISTRY or name == BUDGET or is_dotted_path(name):
        return name
    known = policy_names()
    close = did_you_mean(name, known, quote=False)
    raise PolicyError(
        f"unknown policy {name!r} ({close or 'known: ' + ', '.join(known)}; or the dotted path "
        "of a policy function: package.module:select)"
    )


def policy_for(name: str) -> Policy:
    """The per-step policy `name` leads to; PolicyError when it leads nowhere."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name == BUDGET:
        raise PolicyError("the budget policy is not a per-step policy: it pools steps")
    check_policy_name(name)
    return resolve_into(
        _REGISTRY, name, "selection policy", lambda error: PolicyError(f"sampling.policy: {error}")
    )
