"""`lowtide loop`: N rounds of train -> route -> review -> export -> next reward model."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from annotation.errors import AnnotationError
from lowtide.cli.settings_options import settings_options
from lowtide.config import load_run_config
from lowtide.console import err, out
from lowtide.errors import UserError
from lowtide.loop.settings import LoopSettings
from lowtide.services.clients import require_api_key


@settings_options(
    LoopSettings,
    flags={
        "review_timeout_s": "--review-timeout",
        "poll_s": "--poll",
        "rm_learning_rate": "--rm-lr",
    },
)
def loop(
    ctx: typer.Context,
    config: Path = typer.Option(
        ..., "--config", "-c", help="run config (with a reward_model reward)"
    ),
    loop_dir: Path = typer.Option(Path("outputs/loop"), "--dir", help="the loop directory"),
    settings: LoopSettings = LoopSettings(),
) -> None:
    """Round after round: train against the current reward model, route low-reward rollouts to
    Label Studio, review (people, or a reviewer function), export, train the next reward model.
    Rerun the same command to resume where it stopped. Override any key: --trainer.seed=1."""
    from lowtide.loop.runner import LoopRunner
    from lowtide.loop.state import LoopState
    from lowtide.loop.summary import save_summary, summary_rows

    base = load_run_config(config, ctx.args)
    require_api_key(base.annotation)
    runner = LoopRunner(base, config, list(ctx.args), settings, loop_dir)
    err.print(f"loop {runner.loop_id} in {loop_dir}: {settings.rounds} rounds", markup=False)
    code, failed = 0, None
    try:
        runner.run()
    except KeyboardInterrupt:
        code = 130
    except typer.Exit as stop:  # the training run was interrupted and saved its step
        code = stop.exit_code
    except (UserError, AnnotationError) as error:  # Label Studio or Redis out of reach, ...
        code, failed = getattr(error, "exit_code", 1), error
    rows = summary_rows(LoopState(loop_dir), settings.rounds)
    json_path, markdown_path = save_summary(loop_dir, rows)
    _print_table(rows)
    err.print(f"summary         {markdown_path} and {json_path}\n"
              f"rounds          {loop_dir}/round-<k>/ (run, logs, export, reward_model)",
              markup=False)  # fmt: skip
    if code:
        _stopped(runner, code, failed)


def _stopped(runner, code: int, failed: Exception | None) -> None:
    """Where the loop stopped; then the error that stopped it, if one did (main prints it)."""
    state = runner.state
    number = next((k for k in range(1, runner.settings.rounds + 1)
                   if state.reached(k) != "evaluate"), runner.settings.rounds)  # fmt: skip
    err.print(f"stopped in round {number} after stage '{state.reached(number)}': rerun the same "
              "command to resume there", markup=False)  # fmt: skip
    if failed is not None:
        raise failed
    raise typer.Exit(code)


def _print_table(rows) -> None:
    from lowtide.loop.summary import cell, columns_for

    columns = columns_for(rows)
    table = Table(title="lowtide loop")
    for _, title in columns:
        table.add_column(title, justify="right")
    for row in rows:
        table.add_row(*(cell(row, key) for key, _ in columns))
    out.print(table)
