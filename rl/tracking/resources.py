"""The resource view logged with the scalars of every step: process memory, GPU memory, and under
torchrun the collective communication of the step (rl.comm)."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import torch

from rl.comm import CommMeter

_PAGE = resource.getpagesize()


def resource_metrics(device: torch.device, comm: CommMeter | None = None) -> dict[str, float]:
    """`comm`: the meter whose bytes and seconds since its last reading are this step's
    `system/comm_bytes` and `system/comm_s` (none in a single process: nothing to count)."""
    metrics = {"system/rss_mb": _rss_bytes() / 2**20}
    if device.type == "cuda":
        metrics["system/cuda_allocated_mb"] = torch.cuda.memory_allocated(device) / 2**20
        metrics["system/cuda_reserved_mb"] = torch.cuda.memory_reserved(device) / 2**20
    if comm is not None:
        metrics.update(comm.take())
    return metrics


def _rss_bytes() -> float:
    try:  # current RSS on Linux
        return int(Path("/proc/self/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):  # elsewhere: the peak, in KB (bytes on macOS)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
