"""The local copy of everything, always on: JSONL under `<save_dir>/<run>/`, append-only and
flushed per write, so a killed run keeps what it logged and nothing needs a network to read it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from rl.config import LoggerConfig
from rl.tracking.backends.base import RunInfo, Table, register_backend

METRICS_FILE = "metrics.jsonl"
HISTOGRAMS_FILE = "histograms.jsonl"
ROLLOUTS_DIR = "rollouts"


class LocalFilesBackend:
    name = "jsonl"

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        (run_dir / ROLLOUTS_DIR).mkdir(parents=True, exist_ok=True)
        self._metrics = open(run_dir / METRICS_FILE, "a", encoding="utf-8")  # noqa: SIM115
        self._histograms: IO[str] | None = None

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        _append(self._metrics, {**values, "step": step})  # the int step wins over a metric

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        if self._histograms is None:
            self._histograms = open(self.run_dir / HISTOGRAMS_FILE, "a", encoding="utf-8")  # noqa: SIM115
        for name, series in values.items():
            _append(self._histograms, {"step": step, "name": name, "values": list(series)})

    def log_table(self, step: int, table: Table) -> None:
        path = self.run_dir / ROLLOUTS_DIR / f"{table.name}-step-{step:07d}.jsonl"
        with open(path, "a", encoding="utf-8") as handle:
            for row in table.rows:
                _append(handle, dict(zip(table.columns, row, strict=True)))

    def close(self) -> None:
        for handle in (self._metrics, self._histograms):
            if handle is not None and not handle.closed:
                handle.close()


def _append(handle: IO[str], row: Mapping[str, object]) -> None:
    # json writes floats with repr: values read back exactly (NaN and inf as NaN/Infinity).
    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    handle.flush()


@register_backend("jsonl")
def _local_files(info: RunInfo, config: LoggerConfig) -> LocalFilesBackend:
    return LocalFilesBackend(info.run_dir)
