"""Process memory and GPU memory, logged with the scalars of every step."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import torch

_PAGE = resource.getpagesize()


def resource_metrics(device: torch.device) -> dict[str, float]:
    metrics = {"system/rss_mb": _rss_bytes() / 2**20}
    if device.type == "cuda":
        metrics["system/cuda_allocated_mb"] = torch.cuda.memory_allocated(device) / 2**20
        metrics["system/cuda_reserved_mb"] = torch.cuda.memory_reserved(device) / 2**20
    return metrics


def _rss_bytes() -> float:
    try:  # current RSS on Linux
        return int(Path("/proc/self/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):  # elsewhere: the peak, in KB (bytes on macOS)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024
