"""Read a run's local files back, with no server: metric history, rollout samples and their
per-token values."""

from __future__ import annotations

import math
from collections.abc import Callable
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
OnProblem = Callable[[str], None]


@dataclass(frozen=True)
class RunLogs:
    path: Path
    metrics: pd.DataFrame  # one row per logged scalar set; columns: step and metric names
    rollouts: pd.DataFrame  # one row per logged sample
    histograms: pd.DataFrame  # step, name, values (a list)
    # One row per response token of the logged samples: step, sample_id, position and the
    # TOKEN_ARRAYS columns (kl is NaN without a reference model). Empty for runs before them.
    tokens: pd.DataFrame
    # What was skipped or left blank, one line each naming `file:line` (a line a killed run cut,
    # a row without a whole-number step, ...): a run directory may be anyone's.
    problems: tuple[str, ...] = ()


def read_run(path: str | Path) -> RunLogs:
    """`path` is `<save_dir>/<run>` (the directory with metrics.jsonl)."""
    path = Path(path)
    if not (path / METRICS_FILE).exists():
        raise FileNotFoundError(f"{path}: no {METRICS_FILE} here (is it <save_dir>/<run>?)")
    problems: list[str] = []
    metrics = _frame([_metric_row(row, where, problems.append)
                      for where, row in _rows(path / METRICS_FILE, problems.append)])  # fmt: skip
    if "step" in metrics.columns:  # metrics of one step may come from several stages
        metrics = metrics.groupby("step", as_index=False, sort=True).first()
    rollout_rows = [row for _, row in _rows_of(path / ROLLOUTS_DIR, problems.append)]
    histogram_rows = [row for _, row in _rows(path / HISTOGRAMS_FILE, problems.append)]
    token_rows = _rows_of(path / TOKENS_DIR, problems.append)
    tokens = _token_frame(token_rows, problems.append)
    return RunLogs(
        path, metrics, _frame(rollout_rows), _frame(histogram_rows), tokens, tuple(problems)
    )


def _rows_of(folder: Path, note: OnProblem) -> list[tuple[str, dict]]:
    return [row for file in sorted(folder.glob("*.jsonl")) for row in _rows(file, note)]


def _rows(file: Path, note: OnProblem) -> list[tuple[str, dict]]:
    """(`file:line`, object) for each line with a whole-number step; a line a killed run cut,
    or any other bad line, is a problem and skipped, as is a file that cannot be read."""
    if not file.exists():
        return []  # histograms.jsonl: only runs that log histograms have one
    if not file.is_file():  # a directory, a FIFO (whose reading would never end)
        note(f"{file}: not a regular file; skipped")
        return []

    def bad_line(number: int, problem: str) -> None:
        note(f"{file}:{number}: {problem}; skipped")

    found = []
    try:
        # Anyone's run: its lines are bounded (size, nesting).
        for number, row in jsonl.read_jsonl(file, bad_line, max_line_bytes=jsonl.MAX_LINE_BYTES):
            step = row.get("step")
            if isinstance(step, bool) or not isinstance(step, int):
                bad_line(number, f"'step' must be a whole number, got {_kind(step)}")
            else:  # pandas stores texts as UTF-8: a lone surrogate would end the reading
                found.append((f"{file}:{number}", jsonl.valid_texts(row)))
    except OSError as error:
        note(f"{file}: cannot read it ({error.strerror or error}); the rest of it skipped")
    return found


def _metric_row(row: dict, where: str, note: OnProblem) -> dict:
    """The row's numbers (NaN and infinities included, as the tracker writes them); any other
    value is left out, and told."""
    kept = {}
    for name, value in row.items():
        number = _number(value)
        if number is None and name != "step":
            note(f"{where}: {name!r} is {_kind(value)}, not a number; left out")
        else:
            kept[name] = value if name == "step" else number
    return kept


def _token_frame(rows: list[tuple[str, dict]], note: OnProblem) -> pd.DataFrame:
    columns: dict[str, list] = {
        name: [] for name in ("step", "sample_id", "position", *TOKEN_ARRAYS.values())
    }
    for where, row in rows:
        arrays = _token_arrays(row, where, note)
        if arrays is None:
            continue
        length = len(next(iter(arrays.values())))  # all as long (_token_arrays)
        columns["step"] += [row["step"]] * length
        columns["sample_id"] += [row["sample_id"]] * length
        columns["position"] += range(length)
        for key, column in TOKEN_ARRAYS.items():  # kl: null without a reference model
            columns[column] += arrays.get(key) or [math.nan] * length
    return pd.DataFrame(columns).sort_values("step", kind="stable", ignore_index=True)


def _token_arrays(row: dict, where: str, note: OnProblem) -> dict[str, list] | None:
    """The row's per-token arrays, each as long as the others; None (told) for a row that
    cannot be shown: no sample id, an array that is not a list, arrays of different lengths.
    An array the row lacks is left blank (told, but for kl: null without a reference model)."""
    if not isinstance(row.get("sample_id"), str):
        note(f"{where}: 'sample_id' must be a text, got {_kind(row.get('sample_id'))}; skipped")
        return None
    arrays, missing = {}, []
    for key in TOKEN_ARRAYS:
        value = row.get(key)
        if isinstance(value, list):
            arrays[key] = value
        elif value is not None:
            note(f"{where}: {key!r} must be a list, got {_kind(value)}; skipped")
            return None
        elif key != "kl":
            missing.append(key)
    if not arrays:
        note(f"{where}: no per-token arrays; skipped")
        return None
    lengths = {len(values) for values in arrays.values()}
    if len(lengths) != 1:
        sizes = ", ".join(f"{key} {len(values)}" for key, values in arrays.items())
        note(f"{where}: per-token arrays of different lengths ({sizes}); skipped")
        return None
    if missing:
        note(f"{where}: no {', '.join(missing)}; shown blank")
    return arrays


def _number(value: object) -> float | None:
    """A JSON number as a float (an integer too large for one is infinite); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _kind(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "nothing" if value is None else "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a text", list: "a list", dict: "an object"}.get(type(value), "missing")


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(rows)
    if "step" in frame.columns:
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
    return frame
