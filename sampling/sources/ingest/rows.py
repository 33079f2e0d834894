"""What a dump reader declares (`DumpFormat`: where its files are and how they are named) and
what it turns a line or a parquet row into: one `DumpRow`, or `BadRow` with a one-line reason
that the follower prints with the file and line and counts."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rl.jsonl import valid_text

# A step a 64-bit column (the search table's, a record's) holds.
MAX_STEP = 2**63 - 1
# Reward components of one row: a record keeps as many (sampling.records.MAX_REWARD_DETAILS).
MAX_COMPONENTS = 64


class BadRow(ValueError):
    """A row that cannot be read as a sample; the message is one line."""


@dataclass(frozen=True)
class DumpFormat:
    """One trainer's dump files, as `lowtide ingest` finds and reads them."""

    name: str
    kind: Literal["jsonl", "parquet"]
    pattern: re.Pattern[str]  # a dump file's name; group 1 is its step
    subdir: str | None  # the folder of files under the directory the trainer was given
    parse: Callable[[dict[str, Any], int, int], DumpRow] | None = None  # jsonl: (row, index, step)
    describe: str = ""


@dataclass(frozen=True)
class DumpRow:
    step: int
    index: int  # the row's position in its file: part of the sample id
    prompt: str
    response: str
    reward: float  # the total the trainer optimised; NaN: unknown (never selected)
    reward_details: Mapping[str, float] = field(default_factory=dict)
    advantage: float = math.nan
    truncated: bool = False


def text_field(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    if not isinstance(value, str):
        raise BadRow(f"{name!r} must be a string, got {type_name(value)}")
    return valid_text(value)


def number_field(row: Mapping[str, Any], name: str) -> float:
    """A JSON number (NaN and infinity included, as Python's json writes them); None is NaN."""
    value = row.get(name, _MISSING)
    if value is _MISSING:
        raise BadRow(f"no {name!r}")
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRow(f"{name!r} must be a number, got {type_name(value)}")
    return as_float(value)


def as_float(value: int | float) -> float:
    """A JSON number as a float; an integer too large for one is infinite, as `1e999` is."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def step_field(row: Mapping[str, Any], default: int | None) -> int:
    value = row.get("step", default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STEP:
        # repr() of an integer past 4300 digits raises: never show one that large
        large = isinstance(value, int) and abs(value) > MAX_STEP
        shown = "a larger number" if large else repr(value)[:40]
        raise BadRow(f"'step' must be a whole number >= 0, got {shown}")
    return value


def numeric_components(row: Mapping[str, Any], skip: frozenset[str]) -> dict[str, float]:
    """Every number in the row outside `skip`, as a reward component. Booleans count (verl's
    `acc` is one): 1.0 or 0.0."""
    found: dict[str, float] = {}
    for name, value in row.items():
        if name in skip:
            continue
        if isinstance(value, int | float):  # bool is an int: True -> 1.0
            found[valid_text(name)] = as_float(value)
    if len(found) > MAX_COMPONENTS:
        raise BadRow(f"{len(found)} reward components; at most {MAX_COMPONENTS} are read")
    return found


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


_MISSING = object()
