"""`lowtide logs bias DIR`: the reward-hacking watch over a finished run's rollout dumps (ours,
verl's `rollout_data_dir`, TRL's completions), read with `lowtide ingest`'s readers. Prints the
suspects: features whose presence raises the reward within a prompt's group (same step, same
prompt text) and whose share of the responses grew from the first steps to the last."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from lowtide.cli.dump_options import DumpFormatName, parse_reward_weights
from lowtide.cli.settings_options import option_for
from lowtide.console import err, out, warn_problems
from lowtide.errors import UsageError, UserError
from rl.visible_text import visible_line, visible_text
from sampling.selection.hacking.config import WatchConfig

if TYPE_CHECKING:
    from sampling.selection.hacking import Suspect, WatchReport

EXAMPLE_CHARS = 80


def bias(
    directory: Path = typer.Argument(
        ..., help="the dump directory: logs/<run>, verl's rollout_data_dir, TRL's output_dir"
    ),
    dump_format: DumpFormatName = typer.Option(
        DumpFormatName.auto, "--format", help="auto: from the file names"
    ),
    top: int = option_for(WatchConfig, "top", help="suspects shown at most"),
    json_path: Path | None = typer.Option(
        None, "--json", help="also write the suspects (and the paid, not growing) to this file"
    ),
    window_steps: int | None = typer.Option(
        None,
        "--window-steps",
        min=1,
        help="steps in the first and the latest window (default: a third of the run, at most 5)",
    ),
    reward_weights: str | None = typer.Option(
        None, "--reward-weights", help="TRL: the trainer's reward_weights, e.g. 1.0,0.5"
    ),
) -> None:
    """Find response features the reward pays for within groups and that spread over the run
    (phrases and kinds of words, prefix and suffix, length, format, script, words taken from
    the prompt), strongest first."""
    from sampling.selection.hacking import analyze_rows
    from sampling.sources.ingest.dump_rows import read_dump
    from sampling.sources.ingest.formats import FormatError, expected_files, list_files, locate

    if not directory.is_dir():
        what = "is a file" if directory.exists() else "no such directory"
        raise UsageError(f"{directory}: {what}: give the directory the dump files are in")
    weights = parse_reward_weights(reward_weights)
    try:
        location = locate(directory, dump_format.value)
        files = list_files(location) if location is not None else []
    except FormatError as error:
        raise UsageError(str(error)) from None
    if location is None or not files:
        raise UserError(f"no dump files in {directory} (expected {expected_files()})")
    if weights is not None and location.format.name != "trl":
        raise UsageError(f"--reward-weights: {location.format.name} dumps have one reward")
    config = WatchConfig.for_run(len({file.step for file in files}), top=top,
                                 window_steps=window_steps)  # fmt: skip
    problems: list[str] = []
    with err.status(f"reading {len(files)} {location.format.name} dump files"):
        rows = read_dump(location, problems.append, reward_weights=weights, files=files)
        report = analyze_rows(rows, config, run_id=location.run_dir.resolve().name)
    warn_problems(problems)
    if not report.samples:
        raise UserError(
            f"no scored samples in {location.files_dir}: no row of its {len(files)} dump files "
            "has a prompt, a response and a finite reward"
        )
    _print(report, location.files_dir)
    if json_path is not None:
        json_path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        err.print(f"wrote {json_path}", markup=False)


def _print(report: WatchReport, where: Path) -> None:
    first, latest = report.first_window, report.latest_window
    windows = ""
    if first is not None:
        windows = f"; then = steps {first[0]}-{first[1]}"
        if latest is not None:
            windows += f", now = steps {latest[0]}-{latest[1]}"
    err.print(
        f"{where}: {report.steps} steps, {report.samples} scored samples, {report.groups} "
        f"groups, {report.features_tested} features tested{windows}",
        markup=False,
    )
    if report.suspects:
        for rank, suspect in enumerate(report.suspects, 1):
            out.print(f"{rank}. {visible_text(suspect.describe())}", markup=False)
        out.print(_table("reward-hacking suspects: paid within groups, spreading", report.suspects))
    else:
        out.print("no suspects: no feature is both paid within groups and spreading")
    if report.lift_only:
        out.print(_table("paid within groups, not spreading", report.lift_only))


def _table(title: str, suspects: tuple[Suspect, ...]) -> Table:
    from sampling.selection.hacking import share_text

    table = Table(title=title)
    for column in ("#", "feature", "lift", "then -> now", "groups", "z", "paid by", "example"):
        table.add_column(
            column, justify="right" if column in ("#", "lift", "groups", "z") else "left"
        )
    for rank, suspect in enumerate(suspects, 1):
        now = suspect.prevalence_now
        shares = f"{share_text(suspect.prevalence_then)} -> {share_text(now)}"
        paid = suspect.paid_by
        example = suspect.examples[0].response[:EXAMPLE_CHARS] if suspect.examples else ""
        feature = Text(visible_line(suspect.label()))  # words of the responses
        if suspect.folded:
            feature.append(f" (+{len(suspect.folded)} folded)", style="dim")
        table.add_row(
            str(rank),
            feature,
            f"{suspect.lift:+.3g}",
            shares,
            str(suspect.groups),
            "inf" if suspect.z == float("inf") else f"{suspect.z:.1f}",
            Text(visible_line(f"{paid[0]} {paid[1]:+.3g}") if paid else ""),
            Text(visible_line(example)),
        )
    return table
