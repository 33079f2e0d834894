"""The local copy of everything, always on: JSONL under `<save_dir>/<run>/`, append-only and
flushed per write, so a killed run keeps what it logged and nothing needs a network to read it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from rl.config import LoggerConfig
from rl.tracking.backends.base import ROLLOUT_TABLE, RunInfo, Table

METRICS_FILE = "metrics.jsonl"
HISTOGRAMS_FILE = "histograms.jsonl"
ROLLOUTS_DIR = "rollouts"
# Per-token values live in files of their own under rollouts/, one line per sample joined to its
# row by sample_id: rows stay small for everything that reads rollouts/*.jsonl (read_run, logs
# show, export), and the ~1 KB of arrays per sample is read only by who asks for it.
TOKENS_DIR = "rollouts/tokens"
TABLES_DIR = "tables"  # the other tables (a hook's, e.g. hacking/suspects): never read as rollouts
TOKEN_DIGITS = 6  # significant digits: float32 holds ~7; lines ~2.5x shorter than full repr


def table_file_prefix(name: str) -> str:
    """A table's files are `<prefix><step, 7 digits>.jsonl`: `hacking/suspects` ->
    `hacking_suspects-step-`."""
    return f"{name.replace('/', '_')}-step-"


class LocalFilesBackend:
    name = "jsonl"
    remote = False

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
        rollouts = table.name == ROLLOUT_TABLE
        folder = self.run_dir / (ROLLOUTS_DIR if rollouts else TABLES_DIR)
        folder.mkdir(exist_ok=True)
        path = folder / f"{table_file_prefix(table.name)}{step:07d}.jsonl"
        with open(path, "a", encoding="utf-8") as handle:
            for row in table.rows:
                _append(handle, dict(zip(table.columns, row, strict=True)))
        if rollouts and table.tokens:
            self._log_tokens(path.name, table)

    def _log_tokens(self, file_name: str, table: Table) -> None:
        (self.run_dir / TOKENS_DIR).mkdir(parents=True, exist_ok=True)
        step_at, id_at = table.columns.index("step"), table.columns.index("sample_id")
        with open(self.run_dir / TOKENS_DIR / file_name, "a", encoding="utf-8") as handle:
            for row, tokens in zip(table.rows, table.tokens, strict=True):
                if tokens is None:
                    continue
                _append(
                    handle,
                    {
                        "step": row[step_at],
                        "sample_id": row[id_at],
                        "token_ids": list(tokens.ids),
                        "tokens": list(tokens.texts),
                        "logprobs": _rounded(tokens.logprobs),
                        "kl": _rounded(tokens.kl) if tokens.kl is not None else None,
                        "token_rewards": _rounded(tokens.rewards),
                        "advantages": _rounded(tokens.advantages),
                    },
                )

    def close(self) -> None:
        for handle in (self._metrics, self._histograms):
            if handle is not None and not handle.closed:
                handle.close()


def _rounded(values: Sequence[float]) -> list[float]:
    return [float(f"{value:.{TOKEN_DIGITS}g}") + 0.0 for value in values]  # + 0.0: no -0.0


def _append(handle: IO[str], row: Mapping[str, object]) -> None:
    # json writes floats with repr: values read back exactly (NaN and inf as NaN/Infinity).
    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    handle.flush()


def make_local_files_backend(info: RunInfo, config: LoggerConfig) -> LocalFilesBackend:
    return LocalFilesBackend(info.run_dir)
