"""What every logging backend implements, and the registry that names them in YAML.

Backends run on the tracker's background thread, never on the trainer's: they may be slow, and
the router guarantees that one backend's failure does not reach the others or the trainer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from rl.config import LoggerConfig
from rl.plugins import (
    BUILTIN_LOGGER_BACKENDS,
    PluginPathError,
    is_dotted_path,
    logger_backend_names,
    provide_logger_backend,
    resolve_into,
    resolve_path,
    same_plugin,
)
from rl.samples import TokenValues
from rl.suggest import did_you_mean

ROLLOUT_TABLE = "rollout_samples"
ROLLOUT_COLUMNS = ("step", "sample_id", "prompt", "response", "reward", "reward_details")


@dataclass(frozen=True)
class RunInfo:
    """Where and what a run is, for backends that open files or remote runs."""

    run_id: str
    run_name: str  # logger.name_run or the run id
    save_dir: Path  # logger.save_dir
    run_dir: Path  # <save_dir>/<run_name>: the local copy of everything
    config: Mapping[str, Any]  # the resolved run config, secrets masked


@dataclass(frozen=True)
class Table:
    """Rows of single-typed cells: str, int, float or bool per column, None never used."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    # Per row, the sample's per-token values (None where it has none), or () when no row has
    # any. Backends that keep files store them beside the rows; the others show the rows only.
    tokens: tuple[TokenValues | None, ...] = ()


class Backend(Protocol):
    name: str
    # Whether what it is given leaves this machine (a hosted service, files made to be uploaded):
    # its rollout tables are redacted unless `logger.redact.remote: false`. A backend without the
    # attribute counts as remote.
    remote: bool

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None: ...

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None: ...

    def log_table(self, step: int, table: Table) -> None: ...

    def close(self) -> None: ...


def is_remote(backend: Backend) -> bool:
    return bool(getattr(backend, "remote", True))


BackendFactory = Callable[[RunInfo, LoggerConfig], Backend]
_REGISTRY: dict[str, BackendFactory] = {}  # built-ins once first used, and register_backend's


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator for a backend of your own; the built-ins are in rl.plugins. A name that is
    taken (a built-in's, or another factory's) is refused: a config would get the wrong one."""

    def add(factory: BackendFactory) -> BackendFactory:
        taken = _REGISTRY.get(name)
        if name in BUILTIN_LOGGER_BACKENDS or (
            taken is not None and not same_plugin(taken, factory)
        ):
            raise ValueError(f"logging backend {name!r} is already registered")
        _REGISTRY[name] = factory
        provide_logger_backend(name)
        return factory

    return add


def backend_names() -> list[str]:
    return logger_backend_names()


def backend_factory(name: str) -> BackendFactory:
    """A backend's factory by its name (a built-in or a registered one) or, as configs may name a
    backend of the user's own, by the dotted path of the factory."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name not in BUILTIN_LOGGER_BACKENDS and is_dotted_path(name):
        return resolve_into(
            _REGISTRY, name, "backend factory", lambda error: ValueError(f"logger.name: {error}")
        )
    if name in BUILTIN_LOGGER_BACKENDS:
        try:
            factory = resolve_path(BUILTIN_LOGGER_BACKENDS[name])
        except PluginPathError as exc:
            raise ValueError(f"logger.name: the {name} backend cannot load: {exc}") from None
        _REGISTRY[name] = factory
        return factory
    known = backend_names()
    close = did_you_mean(name, known, quote=False)
    hint = f" ({close})" if close else f" (known: {', '.join(known)})"
    raise ValueError(f"logger.name: unknown backend {name!r}{hint}")
