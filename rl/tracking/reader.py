"""Read a run's local files back, with no server: metric history and rollout samples."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rl.jsonl import read_jsonl, skip_bad_line
from rl.tracking.backends.local_files import HISTOGRAMS_FILE, METRICS_FILE, ROLLOUTS_DIR


@dataclass(frozen=True)
class RunLogs:
    path: Path
    metrics: pd.DataFrame  # one row per logged scalar set; columns: step and metric names
    rollouts: pd.DataFrame  # one row per logged sample
    histograms: pd.DataFrame  # step, name, values (a list)


def read_run(path: str | Path) -> RunLogs:
    """`path` is `<save_dir>/<run>` (the directory with metrics.jsonl)."""
    path = Path(path)
    if not (path / METRICS_FILE).exists():
        raise FileNotFoundError(f"{path}: no {METRICS_FILE} here (is it <save_dir>/<run>?)")
    metrics = _frame(_rows(path / METRICS_FILE))
    if "step" in metrics.columns:  # metrics of one step may come from several stages
        metrics = metrics.groupby("step", as_index=False, sort=True).first()
    rollout_rows = [
        row for file in sorted((path / ROLLOUTS_DIR).glob("*.jsonl")) for row in _rows(file)
    ]
    histogram_rows = _rows(path / HISTOGRAMS_FILE) if (path / HISTOGRAMS_FILE).exists() else []
    return RunLogs(path, metrics, _frame(rollout_rows), _frame(histogram_rows))


def _rows(file: Path) -> list[dict]:
    return [row for _, row in read_jsonl(file, skip_bad_line)]  # a killed run may cut a line


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows)
    if "step" in frame.columns:
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
    return frame
