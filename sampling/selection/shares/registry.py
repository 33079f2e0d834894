"""Budget shares by name. The built-ins (random, audit, uncertain) register in their own modules
of this folder and pick first, in that order; a share of your own registers with
`register_share` and gets its part of the budget from `sampling.budget.shares` (`{name: 0.1}`),
where a config may also name a share function by dotted path (imported when the run starts).
"""

from __future__ import annotations

from collections.abc import Callable

from rl.plugins import PluginPathError, is_dotted_path, resolve_callable, same_plugin
from rl.suggest import did_you_mean
from sampling.selection.shares.base import Picker, Share, ShareSettings

# What the shares leave: the lowest rewards. A reason, not a share of its own.
LOW_REWARD = "low_reward"

_SHARES: dict[str, Share] = {}
_BUILTIN: dict[str, int] = {}  # the built-ins' names and their places in the picking order


class ShareError(ValueError):
    """A share name that is not registered, or a dotted path that leads to no function."""


def register_share(
    name: str,
    *,
    fraction: Callable[[ShareSettings], float] | None = None,
    count_reason: str | None = None,
    builtin_place: int | None = None,
) -> Callable[[Picker], Picker]:
    """Decorator over a picker `(pool, count) -> list[Take]`: the share `name`. Its part of the
    budget is `sampling.budget.shares[name]` unless `fraction` says otherwise (the built-ins
    read their own keys); `count_reason` is the reason its count is reported under (its name).
    A built-in gives its place in the picking order and is always there."""

    def add(pick: Picker) -> Picker:
        taken = _SHARES.get(name)
        if name == LOW_REWARD or (taken is not None and not same_plugin(taken.pick, pick)):
            raise ShareError(f"budget share {name!r} is already registered")
        _SHARES[name] = Share(
            name, count_reason or name, fraction or _configured_fraction(name), pick
        )
        if builtin_place is not None:
            _BUILTIN[name] = builtin_place
        return pick

    return add


def share_names() -> list[str]:
    """The names `sampling.budget.shares` may give (the built-ins have keys of their own)."""
    return sorted(name for name in _SHARES if name not in _BUILTIN)


def check_share_name(name: str) -> str:
    """`name` when `sampling.budget.shares` may give it; else ShareError with the nearest."""
    if name in _BUILTIN:
        raise ShareError(
            f"{name!r} is a built-in share: set it with its own key (random_share, audit_share, "
            "uncertainty_share)"
        )
    if name in _SHARES or is_dotted_path(name):
        return name
    known = share_names()
    close = did_you_mean(name, known, quote=False)
    listed = f"known: {', '.join(known)}" if known else "none registered"
    raise ShareError(
        f"unknown budget share {name!r} ({close or listed}; or the dotted path of a share "
        "function: package.module:pick)"
    )


def shares_for(config: ShareSettings) -> list[Share]:
    """The shares a budget is split into, in the order they pick: the built-ins, then those
    of your own that `config.shares` names, in its order. ShareError for one that leads nowhere."""
    found = [_SHARES[name] for name in sorted(_BUILTIN, key=_BUILTIN.__getitem__)]
    for name in config.shares:
        found.append(_SHARES[name] if name in _SHARES else _resolved(name))
    return found


def _resolved(path: str) -> Share:
    check_share_name(path)
    try:
        pick = resolve_callable(path, "budget share")
    except PluginPathError as error:
        raise ShareError(f"sampling.budget.shares: {error}") from None
    if path not in _SHARES:  # importing it may have registered it under this name
        register_share(path)(pick)
    return _SHARES[path]


def _configured_fraction(name: str) -> Callable[[ShareSettings], float]:
    return lambda config: config.shares.get(name, 0.0)
