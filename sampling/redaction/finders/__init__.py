"""The finders, one module per family, and the registry that names them.

A finder is a class (or a factory) registered under a name with `register`:

```python
from sampling.redaction.finders import register
from sampling.redaction.spans import PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

@register("employee_id")
class EmployeeIdFinder:
    kinds = frozenset({"EMPLOYEE_ID"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=("emp-",))  # a view without "emp-" cannot hold one
    def find(self, text: Text): ...  # -> Span(start, end, "EMPLOYEE_ID") for each value
```

A class is built with no arguments, or by its `from_config(config)` classmethod when it reads
`sampling.redact` settings (the phone regions); a function is called with the config. The
modules of this folder are the built-in finders, every one of them on by default (the config's
`kinds` and `disable` choose among their kinds); a finder registered from outside runs when
`sampling.redact.finders` names it, by its registered name or by dotted path. Tables (the words
that name a value) are data files beside the modules, read with `table`.
"""

from __future__ import annotations

import functools
import importlib
import json
import pkgutil
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sampling.redaction.spans import Finder

F = TypeVar("F", bound=Callable[..., Any])
# A finder's factory takes the `sampling.redact` config (config.py's RedactConfig, or None for
# its defaults): not imported here, as config validation reads this registry.
_REGISTRY: dict[str, Callable[[Any], Finder]] = {}
_BUILTIN: list[str] = []  # names registered by this folder's modules, in registration order
_OUTSIDE_KINDS: dict[str, frozenset[str]] = {}  # name -> the kinds its class declares


class UnknownFinderError(KeyError):
    """No finder is registered under that name."""


def register(name: str) -> Callable[[F], F]:
    """Registers a finder class or factory under `name` (a decorator); a name is taken once."""

    def decorate(factory: F) -> F:
        if name in _REGISTRY:
            raise ValueError(f"a redaction finder is already registered as {name!r}")
        if isinstance(factory, type):  # a class's name is the one it is registered under
            declared = factory.__dict__.get("name", name)
            if declared != name:
                raise ValueError(f"finder class {factory.__name__} is named {declared!r}, "
                                 f"registered as {name!r}")  # fmt: skip
            factory.name = name
        _REGISTRY[name] = _factory(factory)
        if getattr(factory, "__module__", "").startswith(f"{__name__}."):  # this folder's
            _BUILTIN.append(name)
        elif isinstance(getattr(factory, "kinds", None), frozenset | set | tuple | list):
            _OUTSIDE_KINDS[name] = frozenset(factory.kinds)
        return factory

    return decorate


def _factory(factory: Callable[..., Any]) -> Callable[[Any], Finder]:
    if isinstance(factory, type):
        from_config = getattr(factory, "from_config", None)
        return from_config if from_config is not None else (lambda config: factory())
    return factory


@functools.cache
def _load_builtins() -> None:
    """Imports every module of this folder once: each registers its finders."""
    for module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")


def table(file: str) -> Any:
    """A data file of this folder (word lists and the like), parsed: JSON."""
    return json.loads(resources.files(__name__).joinpath(file).read_text(encoding="utf-8"))


def finder_names() -> list[str]:
    """Every registered name: the built-in finders, then those registered from outside."""
    _load_builtins()
    return [*_BUILTIN, *(name for name in _REGISTRY if name not in _BUILTIN)]


def builtin_names() -> list[str]:
    _load_builtins()
    return list(_BUILTIN)


def build(name: str, config: Any = None) -> Finder:
    """The finder registered as `name`, built for `config` (its defaults when None)."""
    _load_builtins()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise UnknownFinderError(name) from None
    return factory(config)


def builtin_finders(config: Any = None) -> list[Finder]:
    """Every built-in finder, built for `config` (the defaults when None)."""
    return [build(name, config) for name in builtin_names()]


def registered_kinds() -> frozenset[str]:
    """The kinds the finder classes registered from outside declare (the built-in ones are
    kinds.py's): config validation reads them without importing this folder's modules."""
    return frozenset(kind for kinds in _OUTSIDE_KINDS.values() for kind in kinds)
