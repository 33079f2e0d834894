"""A sample verl scored, read from its reward request and result as the routing core reads it;
the texts are decoded only for the samples a policy selects."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from sampling.sources import group_id_of


@dataclass(kw_only=True, eq=False)
class VerlSample:
    """One scored sample: what the routing core reads (`ScoredSample`). The texts are decoded
    on first use, which is only for the samples a policy selects."""

    advantage: ClassVar[float] = math.nan  # computed by the trainer after scoring: not known here

    index: int
    group_id: int
    reward: float
    reward_details: Mapping[str, float]
    truncated: bool
    step: int | None
    prompt_ids: Any = field(repr=False)
    response_ids: Any = field(repr=False)
    decode: Callable[[Any], str] = field(repr=False)

    @cached_property
    def prompt(self) -> str:
        return self.decode(self.prompt_ids)

    @cached_property
    def response(self) -> str:
        # As verl's managers decode the `solution_str` they score, and as its rollout dumps do.
        return self.decode(self.response_ids)


def as_float(value: Any) -> float | None:
    """A real number (Python, numpy, or a one-element tensor) as a float; None for anything
    else (strings, lists, None)."""
    if not isinstance(value, bool | numbers.Number):
        item = getattr(value, "item", None)  # numpy scalars and arrays, tensors
        if not callable(item):
            return None
        try:
            value = item()
        except (ValueError, RuntimeError, TypeError):  # more than one element
            return None
        if not isinstance(value, bool | numbers.Number):
            return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # complex
        return None


def reward_components(extra_info: Any) -> dict[str, float]:
    """The numeric values of a manager's `reward_extra_info` (strings and lists left out). The
    record keeps at most `MAX_REWARD_DETAILS` of them, as for every trainer; the policy may
    select on any of them."""
    if not isinstance(extra_info, Mapping):
        return {}
    found: dict[str, float] = {}
    for key, value in extra_info.items():
        number = as_float(value)
        if number is not None:
            found[str(key)] = number
    return found


def group_of(uid: Any) -> int:
    """verl's group key (`uid`, a uuid string per prompt) as a stable integer, the same on every
    worker."""
    if isinstance(uid, numbers.Integral):
        return int(uid)
    return group_id_of(str(uid))
