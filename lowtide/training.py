"""Training with a progress bar and a summary on the console: a policy (`run_training`, what
`lowtide train`, the demo and `lowtide loop` run) and a reward model (`train_with_progress`, what
`lowtide rm train`, the demo and the loop run). The commands and the loop share it; it imports
no command."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from lowtide.config import RunConfig, dump_run_config
from lowtide.console import err, out
from lowtide.errors import UsageError
from lowtide.interrupts import Interrupt, stop_after_the_step

SUMMARY_KEYS = (
    "reward/mean", "reward/std", "kl_divergence", "actor_loss", "critic_loss", "entropy",
    "response_length/mean", "perf/samples_per_s", "timing_s/step",
)  # fmt: skip


def run_training(run_config: RunConfig, config_path: Path | None, overrides: Sequence[str] = ()):
    """Train with a progress bar on rank 0; returns the TrainResult after printing the summary.
    First the checks of `lowtide config check` (the same function): a config it rejects stops
    here, before any model loads; `overrides` only say where a value came from."""
    from lowtide.config.preflight import require_runnable

    require_runnable(run_config, config_path, overrides)
    trainer = _build_trainer(run_config, config_path)
    main_rank = trainer.world.is_main
    if main_rank:
        _save_config(trainer.run_dir, run_config)
        trainer.tracker = _build_tracker(run_config, trainer.run_id)
        err.print(
            f"run {trainer.run_id}: {run_config.trainer.algorithm} on "
            f"{run_config.model.actor.model_name_or_path}, {trainer.device}, "
            f"{trainer.world.world_size} process(es), {trainer.total_steps} steps, "
            f"KL estimator {run_config.trainer.kl_estimator} "
            f"(in the {run_config.trainer.kl_mode}, coef {run_config.trainer.kl_coef})",
            markup=False,
        )
    columns = (
        TextColumn("step"), MofNCompleteColumn(), BarColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"),
    )  # fmt: skip
    with Progress(*columns, console=err, disable=not main_rank) as progress:
        task = progress.add_task("", total=trainer.total_steps, completed=trainer.step)

        def on_step(step: int, total: int, metrics: Mapping[str, float]) -> None:
            progress.update(task, completed=step, description=_short(metrics))

        def announce(interrupt: Interrupt) -> None:
            if main_rank:
                err.print(
                    f"{interrupt.name}: finishing step {trainer.step}, then saving it "
                    "(again to quit at once, without saving)",
                    markup=False,
                )

        with stop_after_the_step(trainer.control, announce) as interrupt:
            result = trainer.train(on_step)
    if main_rank:
        _summary(result)
        if trainer.tracker is not None:
            _where_logs_are(trainer.tracker)
    if interrupt.signum is not None:
        if main_rank:
            err.print(
                f"resume with     lowtide train ... --run_id={result.run_id} --trainer.resume=true",
                markup=False,
            )
        # The signal's exit code (130 after Ctrl-C), as the second signal's exit has it
        # (lowtide/interrupts.py): a library ends the process without a command's exception.
        raise SystemExit(interrupt.exit_code)
    return result


def _build_trainer(config: RunConfig, config_path: Path | None):
    from rl.data import DataError  # torch and transformers: only for commands that train
    from rl.hooks import HookError
    from rl.rewards import RewardError
    from rl.trainer import Trainer

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return Trainer(
            config.trainer,
            config.model,
            config.data,
            config.rewards,
            config.hooks,
            device=config.device,
            run_id=config.run_id,
            hook_resources={"config": config},
            base_dir=config_path.parent if config_path else None,
        )
    except (DataError, HookError, RewardError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:  # from_pretrained on a path that is not a model
        raise UsageError(
            f"model.actor.model_name_or_path: cannot load {config.model.actor.model_name_or_path} "
            f"({str(exc).splitlines()[0]}); build the tiny model with "
            "`lowtide model tiny --out outputs/tiny`"
        ) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _build_tracker(config: RunConfig, run_id: str):
    import yaml

    tracker = build_tracker(config.logger, run_id, yaml.safe_load(dump_run_config(config)))
    _save_config(tracker.info.run_dir, config)
    return tracker


def build_tracker(logger, run_id: str, config: dict):
    """The logger backends of `logger` (a LoggerConfig) for one run; `config` is what they
    record as the run's config (secrets already masked)."""
    from rl.tracking import RunInfo, Tracker

    name = logger.name_run or run_id
    save_dir = Path(logger.save_dir)
    info = RunInfo(
        run_id=run_id, run_name=name, save_dir=save_dir, run_dir=save_dir / name, config=config
    )
    try:
        return Tracker.from_config(logger, info)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _where_logs_are(tracker) -> None:
    lines = [f"local logs      {tracker.info.run_dir} (lowtide logs show {tracker.info.run_dir})"]
    for backend in tracker.backends:
        if backend.name == "tensorboard":
            lines.append(
                f"tensorboard     tensorboard --logdir {tracker.info.save_dir / 'tensorboard'}"
            )
        offline = getattr(backend, "offline_dir", None)
        if backend.name == "wandb" and offline is not None:
            lines.append(f"wandb (offline) {offline}  upload: wandb sync {offline}")
    err.print("\n".join(lines), markup=False)


def _save_config(run_dir: Path, config: RunConfig) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(dump_run_config(config))  # secrets masked


def _short(metrics: Mapping[str, float]) -> str:
    parts = [f"reward {metrics.get('reward/mean', float('nan')):.3f}"]
    if "kl_divergence" in metrics:
        parts.append(f"kl {metrics['kl_divergence']:.4f}")
    parts.append(f"{metrics.get('timing_s/step', 0):.2f} s/step")
    return " | ".join(parts)


def _summary(result) -> None:
    table = Table(title=f"run {result.run_id}: {result.steps} steps in {result.elapsed_s:.1f} s")
    table.add_column("metric")
    table.add_column("first", justify="right")
    table.add_column("last", justify="right")
    first = result.history[0] if result.history else {}
    for key in SUMMARY_KEYS:
        if key in result.metrics:
            table.add_row(key, f"{first.get(key, float('nan')):.4g}", f"{result.metrics[key]:.4g}")
    out.print(table)
    if result.stop_reason:
        err.print(f"stopped early: {result.stop_reason}", markup=False)
    err.print(f"run directory   {result.run_dir}", markup=False)
    if result.last_checkpoint:
        err.print(f"checkpoint      {result.last_checkpoint}", markup=False)
    err.print(f"finished at     {time.strftime('%H:%M:%S')}", markup=False)


def train_with_progress(rm_data, base: Path, out_dir: Path, settings, tracker=None):
    """train_reward_model with a progress bar on stderr and, given a tracker, rm/* metrics."""
    from annotation.reward_model.train import train_reward_model

    columns = (TextColumn("rm step"), MofNCompleteColumn(), BarColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))  # fmt: skip
    with Progress(*columns, console=err) as progress:
        task = progress.add_task("", total=None)

        def on_step(step: int, total: int, metrics: dict[str, float]) -> None:
            progress.update(task, completed=step, total=total,
                            description=f"loss {metrics['rm/loss']:.4f}")  # fmt: skip
            if tracker is not None:
                tracker.on_stage("step_end", step, metrics, [])

        report = train_reward_model(rm_data, base, out_dir, settings, on_step)
    if tracker is not None:
        tracker.on_stage("step_end", report.steps + 1, _eval_metrics(report), [])
    return report


def _eval_metrics(report) -> dict[str, float]:
    metrics = {}
    for name, value in (
        ("rm/heldout_pair_accuracy", report.after.pair_accuracy),
        ("rm/heldout_pair_accuracy_parent", report.before.pair_accuracy),
        ("rm/heldout_policy_pair_accuracy", report.after.policy_pair_accuracy),
        ("rm/heldout_policy_pair_accuracy_parent", report.before.policy_pair_accuracy),
        ("rm/heldout_rating_spearman", report.after.rating_spearman),
        ("rm/heldout_rating_spearman_parent", report.before.rating_spearman),
    ):
        if value is not None:
            metrics[name] = value
    return metrics
