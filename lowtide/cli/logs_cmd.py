"""`lowtide logs show|export RUN`: a run's local logs, read back with no server."""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path

import typer
from rich.table import Table

from lowtide.cli.console import err, out
from lowtide.errors import UsageError

app = typer.Typer(help="Read a run's local logs (metrics, rollout samples).", no_args_is_help=True)
SaveDir = typer.Option(Path("logs"), "--save-dir", help="logger.save_dir of the run")
SHOWN = ("reward/mean", "reward/std", "kl_divergence", "actor_loss", "critic_loss",
         "response_length/mean", "timing_s/step", "system/rss_mb")  # fmt: skip


class Format(str, Enum):
    parquet = "parquet"
    csv = "csv"


@app.command()
def show(
    run: str = typer.Argument(..., help="run name or directory"), save_dir: Path = SaveDir
) -> None:
    """Steps logged, first and last values of the main metrics, the lowest-reward samples."""
    logs = _read(run, save_dir)
    metrics = logs.metrics
    table = Table(title=f"{logs.path}: {len(metrics)} logged steps, {len(logs.rollouts)} samples")
    for column in ("metric", "first", "last", "min", "max"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name in [n for n in SHOWN if n in metrics.columns]:
        series = metrics[name].dropna()
        if series.empty:
            continue
        table.add_row(
            name,
            *(f"{v:.4g}" for v in (series.iloc[0], series.iloc[-1], series.min(), series.max())),
        )
    out.print(table)
    if not logs.rollouts.empty and "reward" in logs.rollouts.columns:
        lowest = logs.rollouts.sort_values("reward", na_position="first").head(5)
        samples = Table(title="lowest-reward samples")
        for column in ("step", "reward", "prompt", "response"):
            samples.add_column(column, overflow="fold")
        for _, row in lowest.iterrows():
            reward = row["reward"]
            shown = (
                f"{reward:.3f}"
                if isinstance(reward, float) and math.isfinite(reward)
                else str(reward)
            )
            samples.add_row(str(row["step"]), shown, str(row["prompt"]), str(row["response"]))
        out.print(samples)


@app.command()
def export(
    run: str = typer.Argument(..., help="run name or directory"),
    format: Format = typer.Option(Format.parquet, "--format"),
    out_dir: Path | None = typer.Option(None, "--out", help="default: <run>/export"),
    save_dir: Path = SaveDir,
) -> None:
    """Write the metric history and the rollout samples as Parquet or CSV files."""
    logs = _read(run, save_dir)
    target = out_dir or logs.path / "export"
    target.mkdir(parents=True, exist_ok=True)
    for name, frame in (("metrics", logs.metrics), ("rollouts", logs.rollouts)):
        path = target / f"{name}.{format.value}"
        if format is Format.parquet:
            frame.to_parquet(path, index=False)
        else:
            frame.to_csv(path, index=False)
        err.print(f"wrote {path} ({len(frame)} rows)", markup=False)


def _read(run: str, save_dir: Path):
    from rl.tracking.reader import read_run  # pandas: only for this command

    candidates = [Path(run), save_dir / run]
    for path in candidates:
        if (path / "metrics.jsonl").exists():
            return read_run(path)
    raise UsageError(f"no run logs at {' or '.join(map(str, candidates))} (no metrics.jsonl)")
