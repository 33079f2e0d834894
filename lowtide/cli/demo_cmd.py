"""`lowtide demo`: the whole loop on a laptop. Services, the tiny model, a training run whose
low-reward rollouts go to Label Studio through the queue and a worker, then where to look.
`--simulate-review` goes on: a scripted reviewer annotates the routed rollouts through the API,
the reviews are exported, the next reward model is trained on them, and a second training runs
against it, with before/after figures."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import typer

from lowtide.cli import services_cmd
from lowtide.cli.model_cmd import tiny
from lowtide.config import RunConfig, load_run_config
from lowtide.console import err, out
from lowtide.errors import UsageError, UserError
from lowtide.services import labelstudio
from lowtide.services.clients import label_studio_client
from lowtide.services.credentials import ensure_credentials, load_env_file_into_environ
from lowtide.training import run_training

QUICKSTART = Path("configs/quickstart.yaml")
DEMO_PROMPTS = ["Name a color.", "What is two plus three?", "What does the cow say?"]
WINDOW = 3  # steps averaged for "start" and "end" figures


@dataclass
class Routed:
    routed: int  # rollouts the sampler selected
    imported: int  # tasks of this run in the Label Studio project
    project_ids: list[int] = field(default_factory=list)  # those holding the run's tasks

    @property
    def project_id(self) -> int | None:
        """The first project holding the run's tasks (a series rolls over)."""
        return self.project_ids[0] if self.project_ids else None


def demo(
    models: Path = typer.Option(Path("outputs/tiny"), "--models", help="where the tiny models go"),
    label_studio_port: int = typer.Option(
        int(os.environ.get("LABEL_STUDIO_PORT", labelstudio.DEFAULT_PORT)), "--label-studio-port"
    ),
    steps: int | None = typer.Option(
        None, "--steps", min=1, help="training steps (default: config)"
    ),
    simulate_review: bool = typer.Option(
        False, "--simulate-review", help="review, export, train a reward model, train again"
    ),
    second_steps: int = typer.Option(
        15, "--second-steps", min=1, help="--simulate-review: steps of the second training"
    ),
) -> None:
    """Start Redis and Label Studio, build the tiny model, train it with the low-reward sampler,
    import the routed rollouts into Label Studio, and say where to look."""
    if not QUICKSTART.exists():
        raise UsageError(f"{QUICKSTART} not found: run the demo from the lowtide project directory")
    total = 7 if simulate_review else 4
    err.rule(f"1/{total} services")
    services_cmd.up(only=None, label_studio_port=label_studio_port)
    load_env_file_into_environ()  # the token `up` may just have generated, for the worker too
    url = f"http://127.0.0.1:{label_studio_port}"

    err.rule(f"2/{total} tiny model")
    policy = models / "policy"
    if (policy / "config.json").exists():
        err.print(f"Reusing the tiny models in {models} (delete the directory to rebuild)")
    else:
        tiny(out=models, sft_steps=100, seed=0)
    from rl.models.generation import sample_completions  # torch import: only when needed

    completions = sample_completions(policy, DEMO_PROMPTS)
    for prompt, completion in zip(DEMO_PROMPTS, completions, strict=True):
        err.print(f"  {prompt!r:28} -> {completion!r}", markup=False)

    err.rule(f"3/{total} training, routing low-reward rollouts")
    overrides = [f"--model.actor.model_name_or_path={policy}",
                 f"--annotation.label_studio_url={url}"]  # fmt: skip
    if steps is not None:
        overrides.append(f"--trainer.max_steps={steps}")
    config = load_run_config(QUICKSTART, overrides)
    trainer = config.trainer
    err.print(
        f"{QUICKSTART}: {trainer.algorithm} on {policy}, {trainer.rollout_batch_size} prompts x "
        f"{trainer.samples_per_prompt} samples a step; reward: a cool colour (blue or green)",
        markup=False,
    )
    first = run_training(config, QUICKSTART)

    err.rule(f"4/{total} annotation worker")
    routed = _import_routed(config, first)
    logs = Path(config.logger.save_dir) / (config.logger.name_run or first.run_id)
    if simulate_review:
        _close_the_loop(config, overrides, first, routed, models, second_steps, total)
    _summary(url, config, policy, first.run_dir, logs, routed)


def _import_routed(config: RunConfig, result) -> Routed:
    """Run a burst worker over the queue; count this run's tasks in the project."""
    from lowtide.loop.stages import routed_count, run_burst_worker, run_tasks

    routed = routed_count(result.history)
    annotation = config.annotation
    run_burst_worker(QUICKSTART, [f"--annotation.label_studio_url={annotation.label_studio_url}"])
    tasks = run_tasks(annotation, result.run_id)
    err.print(
        f"routed {routed} low-reward rollouts (reward < {config.sampling.threshold}); "
        f"{tasks.total} are now review tasks in project {tasks.where(annotation.project)}",
        markup=False,
    )
    return Routed(routed, tasks.total, [pid for pid, _ in tasks.holding])


def _close_the_loop(
    config: RunConfig,
    overrides: list[str],
    first,
    routed: Routed,
    models: Path,
    second_steps: int,
    total: int,
) -> None:
    from annotation.export import export_annotations
    from annotation.reward_model.data import load_rm_data
    from lowtide.demo.scripted_reviewer import review_task
    from lowtide.loop.settings import LoopSettings
    from lowtide.loop.stages import review_run
    from lowtide.training import train_with_progress

    if not routed.project_id or not routed.imported:
        raise UserError("no rollouts reached Label Studio: nothing to review")
    annotation = config.annotation
    err.rule(f"5/{total} scripted review and export")
    tally = review_run(annotation, routed.project_ids, first.run_id, review_task)
    with label_studio_client(annotation) as client:
        summary = export_annotations(
            client, annotation.project, config.export.out, "last", config.export.agreement
        )
    histogram = ", ".join(f"{n} x {rating}" for rating, n in sorted(tally.ratings.items()))
    err.print(
        f"reviewed {tally.reviewed} tasks as {tally.reviewer} (ratings: {histogram}); exported "
        f"{summary.total_rows} rating rows, {summary.preference_rows} preference rows to "
        f"{config.export.out}",
        markup=False,
    )

    err.rule(f"6/{total} reward model from the reviews")
    rm_out = Path(config.trainer.output_dir) / "reward_models" / f"{first.run_id}-rm"
    report = train_with_progress(
        load_rm_data(config.export.out), models / "reward_model", rm_out,
        LoopSettings().rm_training(),  # as a loop's round retrains it
    )  # fmt: skip
    err.print(f"saved {rm_out}; held out: parent {report.before.line()}", markup=False)
    err.print(f"                      new {report.after.line()}", markup=False)

    err.rule(f"7/{total} training against the new reward model")
    rewards = (f"--rewards=[{{type: reward_model, path: {rm_out}}}, {{type: format, weight: 0.1}},"
               " {type: keyword, weight: 0.0, params: {words: [blue, green]}}]")  # fmt: skip
    second_config = load_run_config(
        QUICKSTART, [*overrides, rewards, f"--trainer.max_steps={second_steps}"]
    )
    second = run_training(second_config, QUICKSTART)
    _before_after(first.history, second.history, report)


def _before_after(first: list[dict], second: list[dict], report) -> None:
    def window(history: list[dict], key: str, end: bool) -> str:
        values = [row[key] for row in history if key in row]
        values = values[-WINDOW:] if end else values[:WINDOW]
        return "-" if not values else f"{sum(values) / len(values):.3f}"

    keyword = "reward/keyword/mean"
    learned = "reward/reward_model/mean"
    lines = [
        ("reward model, held-out pair accuracy",
         _fmt(report.before.pair_accuracy), _fmt(report.after.pair_accuracy)),
        ("run 1 (rule reward): blue/green rate",
         window(first, keyword, False), window(first, keyword, True)),
        ("run 2 (new reward model): blue/green rate",
         window(second, keyword, False), window(second, keyword, True)),
        ("run 2: new reward model's score",
         window(second, learned, False), window(second, learned, True)),
    ]  # fmt: skip
    err.rule("before / after")
    out.print(f"{'':44} {'before':>8} {'after':>8}", markup=False)
    for label, before, after in lines:
        out.print(f"{label:44} {before:>8} {after:>8}", markup=False)
    out.print(
        f"(reward model: the parent vs the model trained on the reviews; runs: the mean of "
        f"the first vs the last {WINDOW} steps)",
        markup=False,
    )


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _summary(
    url: str, config: RunConfig, policy: Path, run_dir: Path, logs: Path, routed: Routed
) -> None:
    credentials = ensure_credentials()
    project = f"{url}/projects/{routed.project_id}" if routed.project_id else url
    err.rule("where to look")
    err.print(
        f"  Label Studio    {url}  login {credentials.username}, password and API token in "
        f"{credentials.env_file}\n"
        f"  review tasks    {project} (project {config.annotation.project!r}: sort by reward)\n"
        f"  routed          {routed.routed} low-reward rollouts -> {routed.imported} tasks "
        f"(lowtide queue status)\n"
        f"  tiny policy     {policy} (loads with AutoModelForCausalLM.from_pretrained)\n"
        f"  training run    {run_dir} (config.yaml, checkpoints/)\n"
        f"  train again     lowtide train --config {QUICKSTART}\n"
        f"  after reviews   lowtide export --config {QUICKSTART}, then lowtide rm train\n"
        f"  services        lowtide status  |  stop with: lowtide down\n"
        f"  logs            {logs} (lowtide logs show {logs})\n"
        f"  tensorboard     tensorboard --logdir {logs.parent / 'tensorboard'}\n"
        f"  wandb (offline) {logs.parent / 'wandb'}  (wandb sync <offline-run dir>)",
        markup=False,
    )
