"""`lowtide rm train | eval | compare`: the next reward model from reviewed rollouts."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.table import Table

from annotation.reward_model.settings import RMTrainSettings
from lowtide.cli.settings_options import settings_options
from lowtide.cli.usage import reads
from lowtide.config import ServiceConfig, load_service_config
from lowtide.console import err, out
from lowtide.errors import UserError

app = typer.Typer(help="Train, evaluate and compare reward models.", no_args_is_help=True)
DataOption = typer.Option(
    None,
    "--data",
    help="lowtide export output (JSONL) [default: export.out, data/reward_model/annotations.jsonl]",
    show_default=False,
)


ConfigOption = typer.Option(None, "--config", "-c", help="run config (its export.out is --data)")


def _config(ctx: typer.Context, config: Path | None, *defaults: str) -> ServiceConfig:
    return load_service_config(config, [*defaults, *ctx.args])


def _data_path(data: Path | None, service: ServiceConfig) -> Path:
    return data or Path(service.export.out)


def _load(data: Path):
    from annotation.reward_model.data import load_rm_data

    return load_rm_data(data)


def _check_model(path: Path, what: str) -> None:
    """The check `RewardModel` makes of its directory, made before torch is imported: a
    mistyped path is a one-line answer in a second, not after seconds of imports."""
    from rl.rewards.model_spec import check_model_dir
    from rl.rewards.types import RewardError

    try:
        check_model_dir(path)
    except RewardError as error:
        raise UserError(f"{what}: {str(error).removeprefix('reward_model: ')}") from None


# Every training setting is an option but these, which `rm train` never offered: how many
# spread heads are fitted and which weights are trained (the loop bench's diagnostics), and
# the gradient clip norm.
RM_FIXED = ("max_grad_norm", "uncertainty_heads", "train")


@app.command(cls=reads("logger", "export"))
@settings_options(RMTrainSettings, flags={"learning_rate": "--lr"}, exclude=RM_FIXED)
def train(
    ctx: typer.Context,
    data: Path | None = DataOption,
    base: Path = typer.Option(..., "--base", help="model to start from: the previous reward model"),
    out_dir: Path = typer.Option(..., "--out", help="where to save the new reward model"),
    settings: RMTrainSettings = RMTrainSettings(),
    config: Path | None = typer.Option(
        None, "--config", "-c", help="run config (its logger; its export.out is --data)"
    ),
) -> None:
    """Bradley-Terry on preference pairs (+ a regression on ratings), warm-started from --base;
    held-out accuracy before and after; saved with save_pretrained and a model card."""
    # Without a config file, the log goes to the console only.
    service = _config(ctx, config, *([] if config else ["--logger.name=[console]"]))
    data = _data_path(data, service)
    rm_data = _load(data)
    _check_model(base, "--base")
    # torch and transformers only once the inputs are known good.
    from lowtide.training import build_tracker, train_with_progress

    run_id = f"rm-{time.strftime('%Y%m%d-%H%M%S')}"
    tracker = build_tracker(service.logger, run_id, {"rm": {"data": str(data), "base": str(base),
                                                    **settings.model_dump()}})  # fmt: skip
    err.print(
        f"reward model from {base}: {len(rm_data.pairs)} pairs, {len(rm_data.ratings)} rated "
        f"responses ({', '.join(rm_data.sources)})",
        markup=False,
    )
    if settings.weight_by_agreement:
        weights = [item.agreement for item in (*rm_data.pairs, *rm_data.ratings)]
        below = sum(weight < 1 for weight in weights)
        err.print(
            f"weighted by reviewer agreement: {below} of {len(weights)} pairs and ratings below "
            f"1 (mean {sum(weights) / len(weights):.3f})",
            markup=False,
        )
    written = sum(pair.written for pair in rm_data.pairs)
    written_weight = settings.written_weight
    if written and written_weight < 1:
        err.print(
            f"{written} of {len(rm_data.pairs)} pairs prefer a reviewer's written response: "
            + (f"weighted {written_weight:g}" if written_weight else "left out")
            + " (--written-weight)",
            markup=False,
        )
    try:
        report = train_with_progress(rm_data, base, out_dir, settings, tracker)
    finally:
        tracker.close()
    table = Table(title=f"held out: {report.after.pairs} pairs, {report.after.ratings} ratings")
    for column in ("", "parent", "new"):
        table.add_column(column, justify="right")
    table.add_row(
        "pairwise accuracy", _f(report.before.pair_accuracy), _f(report.after.pair_accuracy)
    )
    if report.after.policy_pairs_apart:
        table.add_row(f"  between the policy's own ({report.after.policy_pairs})",
                      _f(report.before.policy_pair_accuracy),
                      _f(report.after.policy_pair_accuracy))  # fmt: skip
    table.add_row("Spearman with ratings", _f(report.before.rating_spearman),
                  _f(report.after.rating_spearman))  # fmt: skip
    out.print(table)
    err.print(
        f"saved {out_dir} (model card: {out_dir / 'README.md'}); use it with\n"
        f"  rewards: [{{type: reward_model, path: {out_dir}}}]",
        markup=False,
    )


@app.command("eval", cls=reads("export"))
def evaluate_cmd(
    ctx: typer.Context,
    model: Path = typer.Argument(..., help="reward model directory"),
    data: Path | None = DataOption,
    config: Path | None = ConfigOption,
) -> None:
    """Score a saved reward model on reviewed data: pairwise accuracy and rating correlation."""
    rm_data = _load(_data_path(data, _config(ctx, config)))
    _check_model(model, "MODEL")
    from annotation.reward_model.train import evaluate, load_scorer

    scorer = load_scorer(model)
    metrics = evaluate(scorer, rm_data)
    scorer.close()
    out.print(f"{model}: {metrics.line()}", markup=False)


@app.command(cls=reads("export"))
def compare(
    ctx: typer.Context,
    old: Path = typer.Argument(..., help="the reward model the run used"),
    new: Path = typer.Argument(..., help="the reward model trained on the reviews"),
    data: Path | None = DataOption,
    examples: int = typer.Option(5, "--examples", min=0, help="worst-rated rollouts to show"),
    config: Path | None = ConfigOption,
) -> None:
    """How OLD and NEW score the rollouts that were routed for review, beside the reviews."""
    rm_data = _load(_data_path(data, _config(ctx, config)))
    _check_model(old, "OLD")
    _check_model(new, "NEW")
    from annotation.reward_model.compare import compare_models

    result = compare_models(str(old), str(new), rm_data, examples)
    table = Table(title=f"{len(rm_data.ratings)} reviewed rollouts, {len(rm_data.pairs)} pairs")
    for column in ("", "old", "new"):
        table.add_column(column, justify="right")
    rows = [
        ("pairwise accuracy (better > model's)", "pair_accuracy"),
        ("Spearman with reviewers' ratings", "rating_spearman"),
    ]
    for label, name in rows:
        table.add_row(label, _f(getattr(result.old.metrics, name)),
                      _f(getattr(result.new.metrics, name)))  # fmt: skip
    for label, name in (("mean score, rated 1-2", "mean_flagged"),
                        ("mean score, rated 4-5", "mean_approved"),
                        ("mean score, reviewers' better answers", "mean_better")):  # fmt: skip
        table.add_row(label, _f(getattr(result.old, name)), _f(getattr(result.new, name)))
    out.print(table)
    if result.examples:
        shown = Table(title="worst-rated rollouts")
        for column in ("prompt", "response", "rating", "old", "new"):
            shown.add_column(column, overflow="fold")
        for prompt, response, rating, old_score, new_score in result.examples:
            shown.add_row(prompt[:80], response[:80], str(rating), _f(old_score), _f(new_score))
        out.print(shown)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
