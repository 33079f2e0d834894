"""Tensors a reward model keeps beside its weights (its uncertainty heads, failure probe and
reviewed features): one safetensors file each, float32 on the CPU, with string metadata. A
directory without the file is a model without that part."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file


def save_beside(
    directory: str | Path,
    name: str,
    tensors: Mapping[str, torch.Tensor],
    metadata: Mapping[str, str] | None = None,
) -> Path:
    path = Path(directory) / name
    kept = {key: value.detach().float().cpu().contiguous() for key, value in tensors.items()}
    save_file(kept, str(path), metadata=dict(metadata) if metadata else None)
    return path


def load_beside(
    directory: str | Path, name: str
) -> tuple[dict[str, torch.Tensor], dict[str, str]] | None:
    """The file's tensors (float32) and metadata, or None when the directory has no such file."""
    path = Path(directory) / name
    if not path.is_file():
        return None
    with safe_open(str(path), framework="pt") as file:
        metadata = file.metadata() or {}
        tensors = {key: file.get_tensor(key).float() for key in file.keys()}  # noqa: SIM118
    return tensors, dict(metadata)
