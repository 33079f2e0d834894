"""A step's metrics, each with the way it combines across ranks, stated where it is produced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import torch
import torch.distributed as dist

from rl.distributed import all_reduce

Reduce = Literal["mean", "sum", "min", "max"]
_OPS = {"sum": "SUM", "mean": "SUM", "min": "MIN", "max": "MAX"}


class StepMetrics:
    def __init__(self) -> None:
        self._values: dict[str, tuple[float, Reduce]] = {}

    def add(self, name: str, value: float | torch.Tensor, reduce: Reduce = "mean") -> None:
        self._values[name] = (float(value), reduce)

    def add_all(self, values: Mapping[str, float], reduce: Reduce = "mean") -> None:
        for name, value in values.items():
            self.add(name, value, reduce)

    def as_dict(self) -> dict[str, float]:
        return {name: value for name, (value, _) in self._values.items()}

    def reduced(self) -> dict[str, float]:
        """Combine across ranks (every rank must call this with the same names)."""
        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return self.as_dict()
        world = dist.get_world_size()
        result: dict[str, float] = {}
        for reduce in ("mean", "sum", "min", "max"):
            names = sorted(n for n, (_, r) in self._values.items() if r == reduce)
            if not names:
                continue
            tensor = torch.tensor([self._values[n][0] for n in names], dtype=torch.float64)
            all_reduce(tensor, getattr(dist.ReduceOp, _OPS[reduce]))  # counted in system/comm_*
            if reduce == "mean":
                tensor /= world
            result.update(zip(names, tensor.tolist(), strict=True))
        return {name: result[name] for name in self._values}
