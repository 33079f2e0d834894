"""Where a hook's `type:` leads: a built-in or registered key, or a dotted path to a factory.

Dotted paths let packages plug into `rl` without `rl` importing them; the built-ins are the
dotted paths listed in `rl.plugins.BUILTIN_HOOKS`, imported when a run first names them. A
factory builds the hook once, at start, from the entry's `params` and the trainer's shared
`resources`:

    factory(params: dict, resources: Mapping[str, Any]) -> Hook

A hook is any callable `hook(ctx: StageContext) -> None`; if it has `close()`, that runs when
training ends. A factory may say how to check its params without building anything (see
`validates_params`): `lowtide config check` and the trainer run that check before any step.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from rl.hooks.context import StageContext
from rl.plugins import BUILTIN_HOOKS, PluginPathError, is_dotted_path, resolve_callable
from rl.suggest import did_you_mean


class HookError(ValueError):
    """A hook that cannot be found or built: a configuration mistake, reported at start."""


class Hook(Protocol):
    def __call__(self, ctx: StageContext) -> None: ...


HookFactory = Callable[[dict[str, Any], Mapping[str, Any]], Hook]
ParamsCheck = Callable[[Mapping[str, Any]], None]
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])

_KEY = re.compile(r"[A-Za-z0-9_\-]+")


def validates_params(check: ParamsCheck) -> Callable[[FactoryT], FactoryT]:
    """Decorator: `check(params)` raises HookError for params the factory would refuse, without
    building the hook (no files, threads or connections), so a config can be checked alone."""

    def decorator(factory: FactoryT) -> FactoryT:
        factory.validate_params = check  # type: ignore[attr-defined]
        return factory

    return decorator


def params_check(factory: HookFactory) -> ParamsCheck | None:
    """The factory's params check, if it has one (see `validates_params`)."""
    check = getattr(factory, "validate_params", None)
    return check if callable(check) else None


class HookRegistry:
    """A small alias table from YAML keys to hook factories; resolving fails loudly."""

    def __init__(self, builtins: dict[str, str] | None = None) -> None:
        # Imported on first use; the built-ins' table is read live (rl.plugins.provide_hook).
        self._paths: dict[str, str] = builtins if builtins is not None else {}
        self._factories: dict[str, HookFactory] = {}

    def register(self, key: str, *, replace: bool = False) -> Callable[[FactoryT], FactoryT]:
        """Decorator: `@register_hook("my_hook")` above a factory."""
        if not _KEY.fullmatch(key):
            raise HookError(f"hook key {key!r}: use letters, digits, '_' and '-' only")

        def decorator(factory: FactoryT) -> FactoryT:
            if not callable(factory):
                raise HookError(f"hook key {key!r}: {factory!r} is not callable")
            existing = self._factories.get(key)
            taken = (existing is not None and existing is not factory) or key in self._paths
            if taken and not replace:
                holder = _describe(existing) if existing is not None else self._paths[key]
                raise HookError(
                    f"hook key {key!r} is already registered to {holder}; "
                    "pass replace=True to override it"
                )
            self._paths.pop(key, None)
            self._factories[key] = factory
            return factory

        return decorator

    def names(self) -> list[str]:
        return sorted({*self._paths, *self._factories})

    def __contains__(self, key: object) -> bool:
        return key in self._factories or key in self._paths

    def resolve(self, type_name: str) -> HookFactory:
        """The factory for a registered key, else for a dotted path; HookError otherwise."""
        if type_name in self._factories:
            return self._factories[type_name]
        if type_name in self._paths:
            factory = _import_factory(self._paths[type_name], type_name)
            self._factories[type_name] = factory
            return factory
        if "." in type_name or ":" in type_name:
            return _import_factory(type_name, type_name)
        raise HookError(self._unknown_message(type_name))

    def _unknown_message(self, type_name: str) -> str:
        message = f"unknown hook type {type_name!r}"
        nearest = did_you_mean(type_name, self.names(), n=3)
        if nearest:
            message += f"; {nearest}"
        registered = ", ".join(self.names()) or "none"
        return (
            f"{message} (registered: {registered}; or give a dotted path such as "
            "'my_package.hooks:make_hook')"
        )


def _describe(obj: object) -> str:
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    return f"{module}:{name}" if module else name


def _import_factory(path: str, type_name: str) -> HookFactory:
    if not is_dotted_path(path):
        raise HookError(
            f"hook type {path!r} is neither a registered key nor a dotted path "
            "('package.module:factory' or 'package.module.factory')"
        )
    try:
        return resolve_callable(path, "callable hook factory")
    except PluginPathError as exc:
        raise HookError(f"hook type {type_name!r}: {exc}") from exc


HOOKS = HookRegistry(BUILTIN_HOOKS)
register_hook = HOOKS.register
