"""Say a problem once: the paths that run on every batch or poll (the producer, the budget
selector, the adapters, the dump follower) warn once per kind of problem, not every time."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)

KEPT = 20  # distinct problems kept (and said): one that quotes a changing value must not grow


def first_time(seen: list[Key], key: Key, kept: int = KEPT) -> bool:
    """Whether `key` is new to `seen` (then it is added) while fewer than `kept` are there: the
    caller says it only then. `seen` doubles as the stats' list of distinct problems."""
    if key in seen or len(seen) >= kept:
        return False
    seen.append(key)
    return True
