"""One line per scalar interval on stderr, and the lowest-reward samples at the table interval.

`[Step 10] reward/mean=1.24 ±0.31 | kl_divergence=0.08 | actor_loss=0.42 | response_len=42.1`
Printed through sys.stderr at call time, so a live progress bar (which redirects it) stays intact.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.table import Table as RichTable

from rl.config import LoggerConfig
from rl.tracking.backends.base import ROLLOUT_TABLE, RunInfo, Table

# What the line shows, in order, with its label; a metric that is missing is left out.
LINE = (
    ("reward/mean", "reward/mean"),
    ("kl_divergence", "kl_divergence"),
    ("actor_loss", "actor_loss"),
    ("critic_loss", "critic_loss"),
    ("response_length/mean", "response_len"),
)
LOWEST_SHOWN = 5


def format_line(step: int, values: Mapping[str, float]) -> str:
    parts = []
    for key, label in LINE:
        if key not in values:
            continue
        text = f"{label}={_number(values[key])}"
        if key == "reward/mean" and "reward/std" in values:
            text += f" ±{_number(values['reward/std'])}"
        parts.append(text)
    return f"[Step {step}] " + " | ".join(parts)


def _number(value: float) -> str:
    """Three significant figures or so: 1.24, 0.08, 42.1, 1234, 0.0012."""
    size = abs(value)
    if not math.isfinite(value):
        return str(value)
    if size >= 100:
        return f"{value:.0f}"
    if size >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}" if size >= 0.01 or value == 0 else f"{value:.2g}"


class ConsoleBackend:
    name = "console"
    remote = False  # the owner's terminal

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        if any(key in values for key, _ in LINE):
            print(format_line(step, values), file=sys.stderr, flush=True)

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        """Histograms do not fit a terminal line; the other backends have them."""

    def log_table(self, step: int, table: Table) -> None:
        if table.name != ROLLOUT_TABLE or not table.rows:
            return
        column = {name: i for i, name in enumerate(table.columns)}
        rows = sorted(table.rows, key=lambda row: _sort_key(row[column["reward"]]))[:LOWEST_SHOWN]
        view = RichTable(title=f"step {step}: lowest-reward samples", show_lines=False)
        for name in ("reward", "prompt", "response"):
            view.add_column(name, overflow="fold", max_width=60 if name != "reward" else 8)
        for row in rows:
            reward = row[column["reward"]]
            view.add_row(_number(reward), row[column["prompt"]], row[column["response"]])
        Console(file=sys.stderr, highlight=False, markup=False).print(view)

    def close(self) -> None:
        sys.stderr.flush()


def _sort_key(reward: float) -> float:
    return reward if math.isfinite(reward) else -math.inf  # broken rewards first


def make_console_backend(info: RunInfo, config: LoggerConfig) -> ConsoleBackend:
    return ConsoleBackend()
