"""Prompts for training: an inline YAML list, a JSONL file, or a `datasets` directory on disk."""

from __future__ import annotations

import random
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import yaml

from rl.config import DataConfig
from rl.jsonl import read_jsonl


class DataError(ValueError):
    """A prompt source that cannot be read; the message says which and why."""


def load_prompts(config: DataConfig, base_dir: Path | None = None) -> list[str]:
    if config.prompts is not None and config.path is not None:
        raise DataError("data: give either prompts or path, not both")
    if config.prompts is not None:
        prompts = list(config.prompts)
    elif config.path is not None:
        path = Path(config.path)
        if not path.is_absolute() and base_dir is not None and not path.exists():
            path = base_dir / path
        prompts = _read_path(path, config)
    else:
        raise DataError("data: no prompts (set data.prompts or data.path)")
    prompts = [p for p in prompts if isinstance(p, str) and p.strip()]
    if not prompts:
        raise DataError(f"data: the prompt source is empty ({config.path or 'data.prompts'})")
    return prompts


def _read_path(path: Path, config: DataConfig) -> list[str]:
    if not path.exists():
        raise DataError(f"data.path: {path} not found")
    if path.is_dir():
        return _read_datasets_dir(path, config)
    if path.suffix == ".jsonl":
        return _read_jsonl(path, config.prompt_field)
    if path.suffix in (".yaml", ".yml"):
        data = yaml.safe_load(path.read_text())
        prompts = data.get("prompts") if isinstance(data, dict) else data
        if not isinstance(prompts, list):
            raise DataError(f"data.path: {path} must hold a list or a 'prompts:' list")
        return prompts
    raise DataError(f"data.path: {path}: use .jsonl, .yaml, or a datasets save_to_disk directory")


def _read_jsonl(path: Path, field: str) -> list[str]:
    def broken(number: int, problem: str) -> None:
        raise DataError(f"{path}:{number}: {problem}")

    prompts = []
    for number, row in read_jsonl(path, broken):
        if field not in row:
            raise DataError(f"{path}:{number}: no '{field}' field (data.prompt_field)")
        prompts.append(row[field])
    return prompts


def _read_datasets_dir(path: Path, config: DataConfig) -> list[str]:
    import datasets  # heavy: only when a datasets directory is used

    try:
        loaded = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise DataError(f"data.path: {path} is not a datasets directory ({exc})") from None
    if isinstance(loaded, datasets.DatasetDict):
        if config.split not in loaded:
            raise DataError(f"data.split: {config.split!r} not in {sorted(loaded)}")
        loaded = loaded[config.split]
    if config.prompt_field not in loaded.column_names:
        raise DataError(f"data.prompt_field: {config.prompt_field!r} not in {loaded.column_names}")
    return list(loaded[config.prompt_field])


@dataclass(eq=False)
class PromptSampler:
    """Epochs over the prompts in batches, reshuffled per epoch from a seed; resumable by position.

    Each rank takes every world_size-th batch, so ranks see disjoint prompts in the same step.
    """

    prompts: list[str]
    batch_size: int
    _: KW_ONLY
    seed: int
    shuffle: bool
    rank: int = 0
    world_size: int = 1

    def steps_per_epoch(self) -> int:
        # Every rank takes the same number of steps; a short last round wraps around.
        per_round = self.batch_size * self.world_size
        return max(1, -(-len(self.prompts) // per_round))

    def batch(self, epoch: int, step_in_epoch: int) -> list[str]:
        order = list(range(len(self.prompts)))
        if self.shuffle:
            random.Random(self.seed * 1_000_003 + epoch).shuffle(order)
        start = (step_in_epoch * self.world_size + self.rank) * self.batch_size
        return [self.prompts[order[(start + i) % len(order)]] for i in range(self.batch_size)]
