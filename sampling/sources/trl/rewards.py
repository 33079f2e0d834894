"""TRL's reward arithmetic, as TRL 1.16 does it: each reward function's output as a float32
column (None as NaN), and the total `(rewards * reward_weights).nansum(dim=1)` in float32, NaN
where every function gave NaN."""

from __future__ import annotations

import array
import math
from collections.abc import Sequence
from typing import Any

import torch


def reward_columns(outputs: Sequence[Any], rows: int) -> list[array.array] | None:
    """Each function's output as TRL holds it (float32, None as NaN), or None when one of them
    is not what TRL accepts (TRL itself then raises)."""
    columns = []
    for output in outputs:
        if not isinstance(output, list | tuple | torch.Tensor) and not hasattr(output, "__array__"):
            return None  # a generator would be consumed here: leave it to TRL
        if isinstance(output, list | tuple) and None not in output:
            values = output  # nothing to replace: spare a copy
        else:
            values = [math.nan if value is None else value for value in output]
        if len(values) != rows:
            return None
        column = float32_column(values)
        if column is None:
            return None
        columns.append(column)
    return columns


def float32_column(values: Sequence[Any]) -> array.array | None:
    """`torch.tensor(values, dtype=float32)` as TRL converts them. Plain Python numbers go
    through an `array` (the same rounding, without torch's dispatch); anything else, which
    `array` might accept where torch does not, through torch itself."""
    if set(map(type, values)) <= {float, int, bool}:
        try:
            return array.array("f", values)
        except OverflowError:  # an int beyond float range: let torch decide
            pass
    try:
        column = torch.tensor(values, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        return None
    return array.array("f", column.tolist()) if column.dim() == 1 else None


def weighted_totals(columns: Sequence[array.array], weights: Sequence[float]) -> list[float]:
    """TRL's total, `(rewards * weights).nansum(dim=1)` in float32, NaN where every function
    gave NaN (never selected). With one or two functions computed here: a float32 product or
    sum rounded from double is the float32 result (double has more than 2 x 24 + 2 bits), in
    any order. With more, torch's own reduction, whose order decides the last bit."""
    weights = array.array("f", weights)
    if not columns or not columns[0]:
        return []
    if len(columns) > 2:
        stacked = torch.stack([torch.tensor(c, dtype=torch.float32) for c in columns], dim=1)
        totals = (stacked * torch.tensor(weights, dtype=torch.float32).unsqueeze(0)).nansum(dim=1)
        totals[torch.isnan(stacked).all(dim=1)] = math.nan
        return totals.tolist()
    products = [array.array("f", [w * v for v in c]) for w, c in zip(weights, columns, strict=True)]
    nan = math.nan
    if len(columns) == 1:
        return [
            p if p == p else (0.0 if v == v else nan)
            for p, v in zip(products[0], columns[0], strict=True)
        ]
    sums = array.array(
        "f",
        [
            (0.0 + (a if a == a else 0.0)) + (b if b == b else 0.0)
            for a, b in zip(products[0], products[1], strict=True)
        ],
    )
    return [t if (u == u or v == v) else nan for t, u, v in zip(sums, *columns, strict=True)]
