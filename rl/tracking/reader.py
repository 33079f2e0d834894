"""Read a run's local files back, with no server: metric history, rollout samples and their
per-token values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rl import jsonl
from rl.tracking.backends.local_files import (
    HISTOGRAMS_FILE,
    METRICS_FILE,
    ROLLOUTS_DIR,
    TOKENS_DIR,
)

# The per-token arrays of a tokens file and the column each becomes, one row per token.
TOKEN_ARRAYS = {
    "token_ids": "token_id",
    "tokens": "token",
    "logprobs": "logprob",
    "kl": "kl",
    "token_rewards": "token_reward",
    "advantages": "advantage",
}


@dataclass(frozen=True)
class RunLogs:
    path: Path
    metrics: pd.DataFrame  # one row per logged scalar set; columns: step and metric names
    rollouts: pd.DataFrame  # one row per logged sample
    histograms: pd.DataFrame  # step, name, values (a list)
    # One row per response token of the logged samples: step, sample_id, position and the
    # TOKEN_ARRAYS columns (kl is NaN without a reference model). Empty for runs before them.
    tokens: pd.DataFrame


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
    token_rows = [
        row for file in sorted((path / TOKENS_DIR).glob("*.jsonl")) for row in _rows(file)
    ]
    return RunLogs(
        path, metrics, _frame(rollout_rows), _frame(histogram_rows), _token_frame(token_rows)
    )


def _rows(file: Path) -> list[dict]:
    # A killed run may cut a line; a run directory may be anyone's: its lines are bounded.
    rows = jsonl.read_jsonl(file, jsonl.skip_bad_line, max_line_bytes=jsonl.MAX_LINE_BYTES)
    return [row for _, row in rows]


def _token_frame(rows: list[dict]) -> pd.DataFrame:
    columns: dict[str, list] = {
        name: [] for name in ("step", "sample_id", "position", *TOKEN_ARRAYS.values())
    }
    for row in rows:
        length = len(row["token_ids"])
        columns["step"] += [row["step"]] * length
        columns["sample_id"] += [row["sample_id"]] * length
        columns["position"] += range(length)
        for key, column in TOKEN_ARRAYS.items():
            columns[column] += row.get(key) or [math.nan] * length  # kl: null without a reference
    return pd.DataFrame(columns).sort_values("step", kind="stable", ignore_index=True)


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows)
    if "step" in frame.columns:
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
    return frame
