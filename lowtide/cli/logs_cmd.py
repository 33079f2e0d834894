"""`lowtide logs show|export RUN`: a run's local logs, read back with no server."""

from __future__ import annotations

import json
import math
from enum import Enum
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from lowtide.cli import logs_bias_cmd, logs_report_cmd, logs_search_cmd
from lowtide.cli.settings_options import option_for
from lowtide.cli.usage import reads
from lowtide.console import err, out, warn_problems
from lowtide.errors import UsageError, UserError
from rl.config import LoggerConfig
from rl.numbers import finite_or_none
from rl.suggest import did_you_mean
from rl.tracking.text import CUT_MARKER
from rl.visible_text import escaped_json, visible_text

app = typer.Typer(help="Read a run's local logs (metrics, rollout samples).", no_args_is_help=True)
SaveDir = option_for(LoggerConfig, "save_dir", help="logger.save_dir of the run")
SHOWN = ("reward/mean", "reward/std", "kl_divergence", "actor_loss", "critic_loss",
         "response_length/mean", "timing_s/step", "system/rss_mb")  # fmt: skip
# Characters of a cell shown (`logs export` writes them whole): the lowest-reward table, one sample.
CELL_CHARS, SAMPLE_CELL_CHARS = 2_000, 20_000


class Format(str, Enum):
    parquet = "parquet"
    csv = "csv"


@app.command()
def show(
    run: str = typer.Argument(..., help="run name or directory"),
    save_dir: Path = SaveDir,
    sample: str | None = typer.Option(
        None, "--sample", help="one sample: its sample_id (or its start), or its row number"
    ),
    tokens: bool = typer.Option(
        False, "--tokens", help="with --sample: per token, its logprob, KL, reward, advantage"
    ),
) -> None:
    """Steps logged, first and last values of the main metrics, the lowest-reward samples; or,
    with --sample, one sample (and with --tokens, the values of each of its tokens)."""
    if tokens and sample is None:
        raise UsageError("--tokens shows one sample's tokens: add --sample <sample_id or row>")
    logs = _read(run, save_dir)
    if sample is not None:
        _show_sample(logs, sample, with_tokens=tokens)
        return
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
        lowest = logs.rollouts.sort_values("reward", key=_as_numbers, na_position="first").head(5)
        samples = Table(title="lowest-reward samples (lowtide logs show RUN --sample ID --tokens)")
        for column in ("step", "sample_id", "reward", "prompt", "response"):
            samples.add_column(column, overflow="fold")
        for _, row in lowest.iterrows():
            samples.add_row(
                str(row["step"]),
                _cell(row.get("sample_id", "")),
                _number(row["reward"], ".3f"),
                _cell(row.get("prompt", "")),
                _cell(row.get("response", "")),
            )
        out.print(samples)


def _show_sample(logs: Any, wanted: str, *, with_tokens: bool) -> None:
    row = _find_sample(logs.rollouts, wanted)
    sample_id = str(row["sample_id"])
    fields = Table(title=f"{logs.path}: sample {sample_id}", show_header=False)
    fields.add_column("field")
    fields.add_column("value", overflow="fold")
    for name, value in row.items():
        fields.add_row(_cell(name), _cell(value, SAMPLE_CELL_CHARS))
    out.print(fields)
    if not with_tokens:
        return
    tokens = logs.tokens[logs.tokens["sample_id"] == sample_id]
    if tokens.empty:
        raise UserError(
            f"no per-token values for {sample_id}: {logs.path}/rollouts/tokens/ has none for "
            "it (runs logged before per-token values have none at all)"
        )
    table = Table(title="per token: what the update used")
    for column in ("#", "token", "id", "logprob", "KL", "token reward", "advantage"):
        table.add_column(column, justify="left" if column == "token" else "right")
    for _, token in tokens.iterrows():
        table.add_row(
            str(token["position"]),
            Text(escaped_json(token["token"])),  # quoted: spaces show
            _cell(token["token_id"]),
            *(_number(token[name], ".4g") for name in ("logprob", "kl", "token_reward")),
            _number(token["advantage"], ".4g"),
        )
    out.print(table)


def _find_sample(rollouts: Any, wanted: str) -> Any:
    """The sample with this id, the one whose id starts with it, or the one at this row."""
    if rollouts.empty or "sample_id" not in rollouts.columns:
        raise UserError("this run logged no rollout samples (see logger.log_interval.tables)")
    ids = rollouts["sample_id"].astype(str)
    if wanted.isdigit():
        if int(wanted) >= len(rollouts):
            last = len(rollouts) - 1
            raise UsageError(f"--sample {wanted}: this run logged samples 0 to {last}")
        return rollouts.iloc[int(wanted)]
    matches = rollouts[ids == wanted]
    if matches.empty:
        matches = rollouts[ids.str.startswith(wanted)]
    if ids[matches.index].nunique() == 1:  # as texts: an id may be any JSON value
        return matches.iloc[-1]  # a resumed run may log a step again: its latest
    if len(matches):
        raise UsageError(f"--sample {wanted}: {len(matches)} sample ids start with it")
    close = did_you_mean(wanted, ids.tolist(), quote=False)
    hint = f" ({close})" if close else ""
    raise UsageError(f"--sample {wanted}: no such sample in this run{hint}")


def _cell(value: Any, limit: int = CELL_CHARS) -> Text:
    """A value as table text, its marks visible, cut at `limit` characters: a cell of
    megabytes takes the terminal minutes to lay out."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + CUT_MARKER.format(omitted=len(text) - limit)
    return Text(visible_text(text))


def _number(value: Any, spec: str) -> Text:
    if isinstance(value, float) and math.isfinite(value):
        return Text(format(value, spec))
    return _cell(value)  # anyone's run: a value may be any JSON, "[/x]" too (not markup)


def _as_numbers(values: Any) -> Any:
    """Rewards to sort by: a value that is not a finite number sorts with the missing ones."""
    return values.map(finite_or_none).astype(float)


@app.command()
def export(
    run: str = typer.Argument(..., help="run name or directory"),
    format: Format = typer.Option(Format.parquet, "--format"),
    out_dir: Path | None = typer.Option(None, "--out", help="default: <run>/export"),
    save_dir: Path = SaveDir,
) -> None:
    """Write the metric history, the rollout samples and their per-token values (one row per
    token) as Parquet or CSV files."""
    logs = _read(run, save_dir)
    target = out_dir or logs.path / "export"
    target.mkdir(parents=True, exist_ok=True)
    frames = {"metrics": logs.metrics, "rollouts": logs.rollouts, "tokens": logs.tokens}
    for name, frame in frames.items():
        if name == "tokens" and frame.empty:
            continue  # a run from before per-token values
        path = target / f"{name}.{format.value}"
        if format is Format.parquet:
            _write_parquet(frame, path)
        else:
            frame.to_csv(path, index=False)
        err.print(f"wrote {path} ({len(frame)} rows)", markup=False)


def _write_parquet(frame: Any, path: Path) -> None:
    """A column Parquet cannot type (a run's rows may mix texts, numbers and lists under one
    name) is written as JSON text, and told; the other columns keep their types."""
    import pyarrow as pa

    try:
        frame.to_parquet(path, index=False)
        return
    except (pa.ArrowException, OverflowError):
        pass
    frame = frame.copy()
    for name in frame.columns:
        if not _parquet_takes(frame[[name]]):
            frame[name] = frame[name].map(_json_text)
            err.print(f"warning: {path}: column {visible_text(str(name))!r} mixes kinds of values; "
                      "written as JSON text", markup=False)  # fmt: skip
    frame.to_parquet(path, index=False)


def _parquet_takes(column: Any) -> bool:
    import io

    import pyarrow as pa

    try:
        column.to_parquet(io.BytesIO(), index=False)
    except (pa.ArrowException, OverflowError):
        return False
    return True


def _json_text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return json.dumps(value, ensure_ascii=False)  # a text quoted: "[1]" is not [1]


def _read(run: str, save_dir: Path):
    from rl.tracking.reader import read_run  # pandas: only for this command

    candidates = [Path(run), save_dir / run]
    for path in candidates:
        if (path / "metrics.jsonl").exists():
            logs = read_run(path)
            warn_problems(logs.problems)
            return logs
    raise UsageError(f"no run logs at {' or '.join(map(str, candidates))} (no metrics.jsonl)")


app.command("search", cls=reads("sampling", "queue"))(logs_search_cmd.search)
app.command("bias")(logs_bias_cmd.bias)
app.command("report")(logs_report_cmd.report)
