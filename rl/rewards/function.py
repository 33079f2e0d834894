"""A Python function as a reward component: its signature checked at start, its results checked
on every batch.

A function is called per sample as `func(prompt, response, **params)`, or, when it carries
`func.batched = True` (see `batched`), once per batch as `func(prompts, responses, **params)`.
A function that names a `truncated` parameter also gets the truncation flag(s) that way. It
returns a float (a bool counts as 0/1), a `(score, {name: value})` tuple, or a dict with a
`score` key; the other names are extra values reported as `<component>/<name>`, not summed.
"""

from __future__ import annotations

import inspect
import logging
import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sized
from typing import Any

from rl.rewards.types import ComponentScores, RewardBatch, RewardError
from rl.suggest import did_you_mean

logger = logging.getLogger("rl.rewards")

MAX_ERRORS_KEPT = 20  # per component and batch: enough to diagnose, never a flood


class FunctionReward:
    """A per-sample or batched Python function as a component scorer.

    An exception from the function scores the sample (or, for a batched function, the whole
    batch) NaN and is reported; a result of the wrong type raises `RewardError`, since that is a
    bug in the function rather than a bad sample.
    """

    def __init__(self, func: Callable[..., Any], params: Mapping[str, Any], *, label: str):
        self.func = func
        self.params = dict(params)
        self.label = label
        self.function_name = getattr(func, "__name__", label.replace(":", ".").split(".")[-1])
        self.is_batched = bool(getattr(func, "batched", False))
        self.wants_truncated = _names_parameter(func, "truncated")
        self._check_signature()

    def _check_signature(self) -> None:
        try:
            signature = inspect.signature(self.func)
        except (TypeError, ValueError):  # some builtins have no inspectable signature
            return
        parameters = signature.parameters
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        own = [
            name
            for name, parameter in list(parameters.items())[2:]
            if name != "truncated" and parameter.kind not in variadic
        ]
        takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
        unknown = [key for key in self.params if key not in parameters]
        if unknown and not takes_any:
            close = did_you_mean(unknown[0], own, capital=True)
            hint = f" {close}" if close else ""
            raise RewardError(
                f"reward {self.label!r}: unknown params {unknown} for {self.function_name}()."
                f"{hint} Its params: {', '.join(own) or 'none'}"
            )
        example: Any = [] if self.is_batched else ""
        extra = {"truncated": [] if self.is_batched else False} if self.wants_truncated else {}
        try:
            signature.bind(example, example, **extra, **self.params)
        except TypeError as error:
            call = "(prompts, responses" if self.is_batched else "(prompt, response"
            raise RewardError(
                f"reward {self.label!r}: {self.function_name}{signature} cannot be called as "
                f"{self.function_name}{call}, **{self.params}): {error}"
            ) from error

    def dry_run(self) -> None:
        """Call the function on an empty batch, so params it checks up front fail at start."""
        empty: list[Any] = []
        extra = {"truncated": empty} if self.wants_truncated else {}
        try:
            self.func(empty, empty, **extra, **self.params)
        except Exception as error:
            raise RewardError(
                f"reward {self.label!r}: bad params {self.params}: {error}"
            ) from error

    def __call__(self, batch: RewardBatch) -> ComponentScores:
        if self.is_batched:
            return self._score_batched(batch)
        return self._score_each(batch)

    def _score_each(self, batch: RewardBatch) -> ComponentScores:
        values: list[float] = []
        extras: list[dict[str, float]] = []
        errors: list[str] = []
        for index, (prompt, response, truncated) in enumerate(
            zip(batch.prompts, batch.responses, batch.truncated, strict=True)
        ):
            try:
                if self.wants_truncated:
                    out = self.func(prompt, response, truncated=truncated, **self.params)
                else:
                    out = self.func(prompt, response, **self.params)
            except Exception as error:
                values.append(math.nan)
                extras.append({})
                errors.append(self._failure(f"sample {index}", error))
                continue
            value, extra = self.to_score(out, f"sample {index}")
            values.append(value)
            extras.append(extra)
        return self._report(values, extras if any(extras) else None, errors)

    def _score_batched(self, batch: RewardBatch) -> ComponentScores:
        size = len(batch)
        try:
            if self.wants_truncated:
                outs = self.func(
                    batch.prompts, batch.responses, truncated=batch.truncated, **self.params
                )
            else:
                outs = self.func(batch.prompts, batch.responses, **self.params)
        except Exception as error:
            failure = self._failure(f"the batch (samples 0-{size - 1})", error)
            return self._report([math.nan] * size, None, [failure])
        is_column = isinstance(outs, Sized) and isinstance(outs, Iterable)
        if not is_column or isinstance(outs, (str, bytes, Mapping)):
            raise RewardError(
                f"reward {self.label!r}: batched {self.function_name}() returned "
                f"{type(outs).__name__}; expected a list with one result per sample"
            )
        if len(outs) != size:
            raise RewardError(
                f"reward {self.label!r}: batched {self.function_name}() returned {len(outs)} "
                f"results for {size} samples"
            )
        values: list[float] = []
        extras: list[dict[str, float]] = []
        for index, out in enumerate(list(outs)):
            if type(out) is float:  # the common case, kept cheap
                values.append(out)
                extras.append({})
                continue
            value, extra = self.to_score(out, f"sample {index}")
            values.append(value)
            extras.append(extra)
        return self._report(values, extras if any(extras) else None, [])

    def to_score(self, out: Any, where: str) -> tuple[float, dict[str, float]]:
        """A function's result as (score, extra values); the wrong shape raises RewardError."""
        if isinstance(out, Mapping):
            if "score" not in out:
                raise self._wrong_type(where, f"a dict without a 'score' key (keys: {list(out)})")
            extras = {str(key): self._number(val, where, key) for key, val in out.items()}
            return extras.pop("score"), extras
        if isinstance(out, tuple):
            if len(out) != 2 or not isinstance(out[1], Mapping):
                raise self._wrong_type(where, f"a tuple of {len(out)} items")
            extras = {str(key): self._number(val, where, key) for key, val in out[1].items()}
            return self._number(out[0], where), extras
        return self._number(out, where), {}

    def _number(self, value: Any, where: str, key: Any = None) -> float:
        if isinstance(value, numbers.Real):  # bool, int, float, numpy scalars
            return float(value)
        item = getattr(value, "item", None)  # a one-element tensor or array
        if callable(item) and not isinstance(value, (str, bytes)):
            try:
                scalar = item()
            except (ValueError, RuntimeError, TypeError):  # more than one element
                scalar = None
            if isinstance(scalar, numbers.Real):
                return float(scalar)
        what = f"{type(value).__name__} {value!r}"[:80]
        raise self._wrong_type(where, what if key is None else f"{what} for {key!r}")

    def _wrong_type(self, where: str, what: str) -> RewardError:
        return RewardError(
            f"reward {self.label!r}: {self.function_name}() returned {what} for {where}; "
            "expected a float, a (float, {name: float}) tuple or a dict with a 'score' key"
        )

    def _failure(self, where: str, error: Exception) -> str:
        return (
            f"reward {self.label!r}: {self.function_name}() raised on {where}: "
            f"{type(error).__name__}: {error}"
        )

    def _report(
        self, values: list[float], extras: list[dict[str, float]] | None, errors: list[str]
    ) -> ComponentScores:
        if errors:
            logger.warning("%s (%d failure(s) in this batch, scored NaN)", errors[0], len(errors))
        return ComponentScores(values, extras, tuple(errors[:MAX_ERRORS_KEPT]))

    def close(self) -> None:
        pass


def _names_parameter(func: Callable[..., Any], name: str) -> bool:
    try:
        parameter = inspect.signature(func).parameters.get(name)
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.kind not in (
        parameter.VAR_POSITIONAL,
        parameter.VAR_KEYWORD,
    )
