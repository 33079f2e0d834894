"""`lowtide loop`: N rounds of train -> route -> review -> export -> next reward model."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from annotation.errors import AnnotationError
from lowtide.config import load_run_config
from lowtide.console import err, out
from lowtide.errors import UsageError, UserError
from lowtide.loop.settings import SCRIPTED_REVIEWER_EMAIL
from lowtide.services.clients import require_api_key


def loop(
    ctx: typer.Context,
    config: Path = typer.Option(
        ..., "--config", "-c", help="run config (with a reward_model reward)"
    ),
    loop_dir: Path = typer.Option(Path("outputs/loop"), "--dir", help="the loop directory"),
    rounds: int = typer.Option(3, "--rounds", min=1, help="rounds in all (a rerun may add more)"),
    steps: int | None = typer.Option(None, "--steps", min=1, help="training steps a round"),
    start: str = typer.Option(
        "previous",
        "--start",
        help="each round starts from the 'previous' round's policy or the 'initial' one",
    ),
    reviewer: str | None = typer.Option(
        None, "--reviewer", help="reviewer function, package.module:name (default: people review)"
    ),
    reviewer_email: str = typer.Option(
        SCRIPTED_REVIEWER_EMAIL,
        "--reviewer-email",
        help="the reviewer function's own Label Studio account",
    ),
    min_reviews: int | None = typer.Option(
        None, "--min-reviews", min=1, help="people: reviews to wait for a round (default: all)"
    ),
    review_timeout: float = typer.Option(
        24 * 3600, "--review-timeout", min=1, help="people: seconds to wait, then go on"
    ),
    poll: float = typer.Option(5.0, "--poll", min=0.1, help="people: seconds between checks"),
    eval_prompts: str | None = typer.Option(
        None,
        "--eval-prompts",
        help="held-out prompts file: the reviewer scores the policy on them",
    ),
    rm_epochs: int = typer.Option(3, "--rm-epochs", min=1),
    rm_lr: float = typer.Option(3e-4, "--rm-lr", min=0.0),
    rm_written_weight: float = typer.Option(
        1.0,
        "--rm-written-weight",
        min=0.0,
        max=1.0,
        help="rm train's --written-weight: the loss weight of the better answers' pairs",
    ),
    rm_disagreement: bool = typer.Option(
        True,
        "--rm-disagreement/--no-rm-disagreement",
        help="budget policy, from round 2: also score with the first reward model; the "
        "uncertain share reviews where the retrained one disagrees with it",
    ),
) -> None:
    """Round after round: train against the current reward model, route low-reward rollouts to
    Label Studio, review (people, or a reviewer function), export, train the next reward model.
    Rerun the same command to resume where it stopped. Override any key: --trainer.seed=1."""
    from lowtide.loop.runner import LoopRunner
    from lowtide.loop.settings import LoopSettings
    from lowtide.loop.state import LoopState
    from lowtide.loop.summary import save_summary, summary_rows

    if start not in ("previous", "initial"):
        raise UsageError(f"--start {start}: use 'previous' or 'initial'")
    settings = LoopSettings(
        rounds=rounds, steps=steps, start=start, reviewer=reviewer, reviewer_email=reviewer_email,
        min_reviews=min_reviews, review_timeout_s=review_timeout, poll_s=poll,
        eval_prompts=eval_prompts, rm_epochs=rm_epochs, rm_learning_rate=rm_lr,
        rm_written_weight=rm_written_weight, rm_disagreement=rm_disagreement,
    )  # fmt: skip
    base = load_run_config(config, ctx.args)
    require_api_key(base.annotation)
    runner = LoopRunner(base, config, list(ctx.args), settings, loop_dir)
    err.print(f"loop {runner.loop_id} in {loop_dir}: {rounds} rounds", markup=False)
    code, failed = 0, None
    try:
        runner.run()
    except KeyboardInterrupt:
        code = 130
    except typer.Exit as stop:  # the training run was interrupted and saved its step
        code = stop.exit_code
    except (UserError, AnnotationError) as error:  # Label Studio or Redis out of reach, ...
        code, failed = getattr(error, "exit_code", 1), error
    rows = summary_rows(LoopState(loop_dir), rounds)
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
