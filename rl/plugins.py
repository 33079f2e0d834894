"""rl's built-in plug-ins by the names configs give them, what packages above rl provide, and
how a dotted path becomes an object.

The three lists below are rl's built-ins. Each entry is a dotted path resolved when a run first
asks for it, so nothing heavy loads early. A package above rl provides its own hook types with
`provide_hook`, in its `__init__` (sampling's `low_reward_sampler`): rl names nothing of a
package it may not import, and every edge is an import statement the contract test sees.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from rl.suggest import did_you_mean

BUILTIN_HOOKS: dict[str, str] = {  # and what packages above rl provide (provide_hook)
    "early_stop": "rl.hooks.builtin:make_early_stop",
    "checkpoint": "rl.hooks.builtin:make_checkpoint",
}
BUILTIN_REWARD_RULES: dict[str, str] = {  # type: reward_model is the one built-in besides these
    "keyword": "rl.rewards.rules:keyword",
    "keywords": "rl.rewards.rules:keyword",
    "brevity": "rl.rewards.rules:brevity",
    "length": "rl.rewards.rules:brevity",
    "format": "rl.rewards.rules:sentence_format",
}
BUILTIN_LOGGER_BACKENDS: dict[str, str] = {
    "wandb": "rl.tracking.backends.wandb_backend:make_wandb_backend",
    "tensorboard": "rl.tracking.backends.tensorboard_backend:make_tensorboard_backend",
    "console": "rl.tracking.backends.console:make_console_backend",
    "jsonl": "rl.tracking.backends.local_files:make_local_files_backend",
    "prometheus": "rl.tracking.backends.prometheus_backend:make_prometheus_backend",
}

_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})*"
# `pkg.mod:attr.sub`, or `pkg.mod.attr` (at least one dot): what a config may name.
_PATH = re.compile(rf"{_DOTTED}:{_DOTTED}|{_IDENTIFIER}(?:\.{_IDENTIFIER})+")


class PluginPathError(ValueError):
    """A dotted path that does not lead to an object; the message says which part failed."""


def provide_hook(name: str, path: str) -> None:
    """A package's own built-in hook type, by the dotted path of its factory (not imported
    until a run names it). Providing a taken name for another path is a programming error."""
    if not is_dotted_path(path):
        raise PluginPathError(f"{path!r} is not a dotted path (write package.module:name)")
    if BUILTIN_HOOKS.setdefault(name, path) != path:
        raise PluginPathError(f"hook type {name!r} is already provided by {BUILTIN_HOOKS[name]}")


_REGISTERED_LOGGER_BACKENDS: set[str] = set()  # names rl.tracking.register_backend was given


def provide_logger_backend(name: str) -> None:
    """A logging backend registered by name (rl.tracking.register_backend): configs may name it."""
    _REGISTERED_LOGGER_BACKENDS.add(name)


def logger_backend_names() -> list[str]:
    return sorted({*BUILTIN_LOGGER_BACKENDS, *_REGISTERED_LOGGER_BACKENDS})


_TABLE_REDACTOR: list[str] = []  # the default `logger.redact.redactor`, once provided


def provide_table_redactor(path: str) -> None:
    """The default factory of `logger.redact.redactor` (sampling's redactor for the run)."""
    if not is_dotted_path(path):
        raise PluginPathError(f"{path!r} is not a dotted path (write package.module:name)")
    _TABLE_REDACTOR[:] = [path]


def table_redactor(configured: str | None) -> str:
    """The configured factory's path, else the provided one; PluginPathError when neither."""
    if configured is not None:
        return configured
    if not _TABLE_REDACTOR:
        raise PluginPathError(
            "no redactor: set logger.redact.redactor, or import sampling, which provides one"
        )
    return _TABLE_REDACTOR[0]


def is_dotted_path(text: str) -> bool:
    return _PATH.fullmatch(text) is not None


def same_plugin(one: object, other: object) -> bool:
    """Whether two registrations are the same function or class: the same one imported again
    (a module reloaded) registers again without a clash; another under a taken name clashes."""

    def origin(plugin: object) -> tuple[str, str]:
        return getattr(plugin, "__module__", ""), getattr(plugin, "__qualname__", "")

    return one is other or origin(one) == origin(other)


def resolve_callable(path: str, what: str = "function") -> Callable[..., Any]:
    """The callable at `path`; PluginPathError when it does not resolve or is not callable."""
    target = resolve_path(path)
    if not callable(target):
        raise PluginPathError(f"{path!r} is a {type(target).__name__}, not a {what}")
    return target


def resolve_into(
    registry: dict[str, Any],
    path: str,
    what: str,
    failed: Callable[[PluginPathError], Exception],
) -> Any:
    """The callable at `path`, kept in `registry` under `path` so it resolves once; a path that
    leads nowhere raises `failed(error)` (each registry words it for its config key)."""
    try:
        found = resolve_callable(path, what)
    except PluginPathError as error:
        raise failed(error) from None
    registry[path] = found
    return found


def resolve_path(path: str) -> Any:
    """The object at `path` (`pkg.mod:attr` or `pkg.mod.attr`), via `pkgutil.resolve_name`."""
    if not is_dotted_path(path):
        raise PluginPathError(f"{path!r} is not a dotted path (write package.module:name)")
    module = path.partition(":")[0] if ":" in path else path.rpartition(".")[0]
    try:
        return pkgutil.resolve_name(path)
    except ModuleNotFoundError as error:
        # Only "that module does not exist" is a path mistake; a missing import inside it is not.
        missing = error.name or ""
        if missing and (module == missing or module.startswith(missing + ".")):
            raise PluginPathError(
                f"cannot import module {module!r}: no module named {missing!r} "
                "(is the package installed?)"
            ) from error
        raise PluginPathError(_import_failed(module, error)) from error
    except AttributeError as error:
        owner, name = getattr(error, "obj", None), getattr(error, "name", None)
        if owner is None or name not in re.split(r"[.:]", path):  # raised inside the module
            raise PluginPathError(_import_failed(module, error)) from error
        _reraise_submodule_failure(owner, name, path)
        public = [attribute for attribute in dir(owner) if not attribute.startswith("_")]
        close = did_you_mean(name, public, n=3, capital=True)
        hint = f" {close}" if close else ""
        owner_name = getattr(owner, "__name__", type(owner).__name__)
        raise PluginPathError(f"{owner_name!r} has no attribute {name!r}.{hint}") from error
    except Exception as error:
        raise PluginPathError(_import_failed(module, error)) from error


def _reraise_submodule_failure(owner: object, name: str, path: str) -> None:
    # Without a colon, resolve_name takes a submodule that fails to import for a missing
    # attribute of its parent; import it again to say what really went wrong.
    if ":" in path or not isinstance(owner, ModuleType):
        return
    submodule = f"{owner.__name__}.{name}"
    try:
        found = importlib.util.find_spec(submodule) is not None
    except Exception:
        found = False
    if found:
        try:
            importlib.import_module(submodule)
        except Exception as error:
            raise PluginPathError(_import_failed(submodule, error)) from error


def _import_failed(module: str, error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"importing {module!r} failed: {type(error).__name__}: {text}"
