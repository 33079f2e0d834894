"""Where a hook's `type:` leads: a registered key, or a dotted path to a factory.

Dotted paths let packages plug into `rl` without `rl` importing them. A factory builds the hook
once, at start, from the entry's `params` and the trainer's shared `resources`:

    factory(params: dict, resources: Mapping[str, Any]) -> Hook

A hook is any callable `hook(ctx: StageContext) -> None`; if it has `close()`, that runs when
training ends.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from rl.hooks.context import StageContext
from rl.suggest import did_you_mean


class HookError(ValueError):
    """A hook that cannot be found or built: a configuration mistake, reported at start."""


class Hook(Protocol):
    def __call__(self, ctx: StageContext) -> None: ...


HookFactory = Callable[[dict[str, Any], Mapping[str, Any]], Hook]
FactoryT = TypeVar("FactoryT", bound=Callable[..., Any])

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_IDENTIFIER}(\.{_IDENTIFIER})*")
_KEY = re.compile(r"[A-Za-z0-9_\-]+")


class HookRegistry:
    """A small alias table from YAML keys to hook factories; resolving fails loudly."""

    def __init__(self) -> None:
        self._factories: dict[str, HookFactory] = {}

    def register(self, key: str, *, replace: bool = False) -> Callable[[FactoryT], FactoryT]:
        """Decorator: `@register_hook("my_hook")` above a factory."""
        if not _KEY.fullmatch(key):
            raise HookError(f"hook key {key!r}: use letters, digits, '_' and '-' only")

        def decorator(factory: FactoryT) -> FactoryT:
            if not callable(factory):
                raise HookError(f"hook key {key!r}: {factory!r} is not callable")
            existing = self._factories.get(key)
            if existing is not None and existing is not factory and not replace:
                raise HookError(
                    f"hook key {key!r} is already registered to {_describe(existing)}; "
                    "pass replace=True to override it"
                )
            self._factories[key] = factory
            return factory

        return decorator

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, key: object) -> bool:
        return key in self._factories

    def resolve(self, type_name: str) -> HookFactory:
        """The factory for a registered key, else for a dotted path; HookError otherwise."""
        if type_name in self._factories:
            return self._factories[type_name]
        if "." in type_name or ":" in type_name:
            return _import_factory(type_name)
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


def _split_path(path: str) -> tuple[str, str]:
    """`pkg.mod:attr.sub` or `pkg.mod.attr` into (module, attribute path)."""
    if path.count(":") == 1:
        module, attribute = path.split(":")
    elif ":" not in path:
        module, _, attribute = path.rpartition(".")
    else:
        module = attribute = ""
    if not (_DOTTED.fullmatch(module) and _DOTTED.fullmatch(attribute)):
        raise HookError(
            f"hook type {path!r} is neither a registered key nor a dotted path "
            "('package.module:factory' or 'package.module.factory')"
        )
    return module, attribute


def _import_factory(path: str) -> HookFactory:
    module_name, attribute = _split_path(path)
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        # Only "that module does not exist" is a path mistake; a missing import inside it is not.
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise HookError(
                f"hook type {path!r}: no module named {exc.name!r} (is the package installed?)"
            ) from exc
        raise HookError(f"hook type {path!r}: importing {module_name!r} failed: {exc}") from exc
    except Exception as exc:
        raise HookError(
            f"hook type {path!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise HookError(
                f"hook type {path!r}: {module_name!r} has no attribute {attribute!r}"
            ) from None
    if not callable(target):
        raise HookError(
            f"hook type {path!r} is a {type(target).__name__}, not a callable hook factory"
        )
    return target


HOOKS = HookRegistry()
register_hook = HOOKS.register
