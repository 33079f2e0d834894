"""Rounds of train -> import -> review -> export -> reward model -> evaluate, one method per stage.

Everything a round makes lives under `<loop_dir>/round-<k>/`: `run/<run id>/` (the training run:
config.yaml, checkpoints/), `logs/`, `export/` (the project's reviews; `reviews.jsonl`: this
loop's), `reward_model/`. A stage is recorded in state.json once it is done; a rerun skips what
is recorded and resumes a training run from its last checkpoint, and the import is idempotent
by sample_id, so nothing is imported or trained twice.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from annotation.export import ExportPaths
from lowtide.config import RunConfig
from lowtide.console import err
from lowtide.errors import UsageError
from lowtide.loop.budget_shares import (
    LearnedShares,
    adaptive,
    budgeted,
    learn_shares,
    needs_reasons,
    read_rows,
    selection_reasons,
    shares_of,
)
from lowtide.loop.reviewer import Reviewer, load_reviewer
from lowtide.loop.settings import LoopSettings, bound_settings
from lowtide.loop.state import STAGES, LoopState, open_loop_dir
from sampling.selection.budget_learning import Shares

REWARD_MODEL = "reward_model"
OUTLIER_REFERENCE = "outlier_reference.jsonl"  # the outlier score's reference, for every round


class LoopRunner:
    def __init__(
        self,
        base: RunConfig,
        config_path: Path | None,
        overrides: list[str],
        settings: LoopSettings,
        loop_dir: Path,
    ) -> None:
        self.base, self.config_path, self.overrides = base, config_path, overrides
        self.settings, self.loop_dir = settings, loop_dir
        self.initial_reward_model = _the_reward_model(base)
        self.reviewer: Reviewer | None = (
            load_reviewer(settings.reviewer) if settings.reviewer else None
        )
        self.eval_prompts = _eval_prompts(settings.eval_prompts)
        self.loop_id = open_loop_dir(loop_dir, bound_settings(settings, base))
        self.state = LoopState(loop_dir)

    # ---- the loop --------------------------------------------------------------------------

    def run(self) -> None:
        for number in range(1, self.settings.rounds + 1):
            for stage in STAGES:
                if self.state.done(number, stage) is not None:
                    continue
                err.rule(f"round {number}/{self.settings.rounds}: {stage.replace('_', ' ')}")
                self.state.record(number, stage, getattr(self, f"_{stage}")(number))

    def run_id(self, number: int) -> str:
        return f"{self.loop_id}-r{number}"

    def round_dir(self, number: int) -> Path:
        return self.loop_dir / f"round-{number}"

    def run_dir(self, number: int) -> Path:
        return self.round_dir(number) / "run" / self.run_id(number)

    # ---- stages ----------------------------------------------------------------------------

    def _train(self, number: int) -> dict[str, Any]:
        from lowtide.loop.stages import routed_count
        from lowtide.training import run_training

        config = self.round_config(number)
        shares = self._budget_shares(config)
        previous = next((r.params.get("previous") for r in config.rewards
                         if r.type == REWARD_MODEL), None)  # fmt: skip
        if previous:
            err.print(f"uncertain share: where the reward model disagrees with {previous}",
                      markup=False)  # fmt: skip
        result = run_training(config, self.config_path, self.overrides)
        if result.last_checkpoint is None:
            raise UsageError(f"round {number}: the training run saved no checkpoint")
        return {
            "run_id": result.run_id,
            "steps": result.steps,
            "routed": routed_count(_every_step(config, result)),
            "policy": str(result.last_checkpoint / "policy"),
            **({"budget_shares": shares} if shares is not None else {}),
        }

    def _import(self, number: int) -> dict[str, Any]:
        from lowtide.loop.stages import run_burst_worker, run_tasks

        overrides = list(self.overrides)
        if self.base.annotation.suggestions.judge != "off":
            # Label Studio prefills only from the project's model_version: one per round.
            overrides.append(f"--annotation.suggestions.model_version={self.run_id(number)}")
        run_burst_worker(self.config_path, overrides)
        annotation = self.base.annotation
        tasks = run_tasks(annotation, self.run_id(number))
        where = tasks.where(annotation.project)
        err.print(f"{tasks.total} review tasks of {self.run_id(number)} in project {where}",
                  markup=False)  # fmt: skip
        return {"project_ids": [pid for pid, _ in tasks.holding], "imported": tasks.total}

    def _review(self, number: int) -> dict[str, Any]:
        imported = self.state.done(number, "import") or {}
        project_ids = _project_ids(imported)
        total = int(imported.get("imported") or 0)
        if not project_ids or not total:
            err.print("nothing to review: the run routed no rollouts", markup=False)
            return {"reviewed": 0, "by": None, "failures": []}
        if self.reviewer is None:
            return self._wait_for_people(number, project_ids, total)
        from lowtide.loop.stages import review_run

        def told(failure) -> None:
            err.print(f"task {failure.task_id} (sample {failure.sample_id}) left unreviewed: "
                      f"{failure.reason}", markup=False)  # fmt: skip

        tally = review_run(self.base.annotation, project_ids, self.run_id(number), self.reviewer,
                           self.settings.reviewer_email, told)  # fmt: skip
        reviewed = total - self._unreviewed(project_ids, number)
        err.print(f"{reviewed} of {total} tasks reviewed by {tally.reviewer}"
                  f"{f'; {len(tally.failures)} left unreviewed' if tally.failures else ''}",
                  markup=False)  # fmt: skip
        failures = [failure.__dict__ for failure in tally.failures]
        return {"reviewed": reviewed, "by": tally.reviewer, "failures": failures}

    def _export(self, number: int) -> dict[str, Any]:
        from lowtide.loop.stages import export_reviews

        run_ids = [self.run_id(k) for k in range(1, number + 1)]
        path, rows = export_reviews(
            self.base.annotation, self.round_dir(number) / "export", run_ids,
            self.base.export.agreement,
        )  # fmt: skip
        err.print(f"{rows} reviews of this loop's rounds 1-{number} in {path}", markup=False)
        exported: dict[str, Any] = {"data": str(path), "rows": rows}
        if adaptive(self.base):
            learned = self._learn_shares(path, run_ids)
            err.print(f"budget shares for round {number + 1}: {learned.line()}", markup=False)
            exported["next_budget"] = learned.record()
        return exported

    def _reward_model(self, number: int) -> dict[str, Any]:
        from annotation.reward_model.data import RMDataError, load_rm_data
        from lowtide.training import train_with_progress

        parent = self._reward_model_for(number)
        exported = self.state.done(number, "export") or {}
        out = self.round_dir(number) / REWARD_MODEL
        settings = self.settings.rm_training()
        try:
            data = load_rm_data(exported["data"]) if exported.get("rows") else None
            if data is None:
                raise RMDataError("no reviews yet")
            report = train_with_progress(data, Path(parent), out, settings)
        except RMDataError as error:
            err.print(f"no new reward model this round ({error}); the next round keeps {parent}",
                      markup=False)  # fmt: skip
            return {"path": None, "parent": parent, "skipped": str(error)}
        err.print(f"saved {out}; held out: parent {report.before.line()}\n"
                  f"{'':>22}new {report.after.line()}", markup=False)  # fmt: skip
        return {
            "path": str(out),
            "parent": parent,
            "heldout_pair_accuracy": report.after.pair_accuracy,
            "parent_heldout_pair_accuracy": report.before.pair_accuracy,
            "heldout_pairs": report.after.pairs,
        }

    def _evaluate(self, number: int) -> dict[str, Any]:
        if self.reviewer is None or not self.eval_prompts:
            why = "people review" if self.reviewer is None else "no --eval-prompts"
            return {"policy_score": None, "why": why}
        from lowtide.loop.stages import score_policy

        policy = Path((self.state.done(number, "train") or {})["policy"])
        trainer = self.base.trainer
        score, rated = score_policy(
            policy, self.eval_prompts, self.reviewer, trainer.max_new_tokens, trainer.seed
        )
        shown = "-" if score is None else f"{score:.3f}"
        err.print(f"policy of round {number}: reviewer's mean rating {shown} on {rated} of "
                  f"{len(self.eval_prompts)} held-out prompts", markup=False)  # fmt: skip
        return {"policy_score": score, "rated": rated, "prompts": len(self.eval_prompts)}

    # ---- helpers ---------------------------------------------------------------------------

    def round_config(self, number: int) -> RunConfig:
        """The base config with this round's run id, directories, policy and reward model."""
        from rl.checkpoint import latest_checkpoint

        data = self.base.model_dump()
        data["run_id"] = self.run_id(number)
        data["trainer"]["output_dir"] = str(self.round_dir(number) / "run")
        data["logger"]["save_dir"] = str(self.round_dir(number) / "logs")
        if self.settings.steps is not None:
            data["trainer"]["max_steps"] = self.settings.steps
        if self.settings.start == "previous" and number > 1:
            previous = self.state.done(number - 1, "train") or {}
            data["model"]["actor"]["model_name_or_path"] = previous["policy"]
        for spec in data["rewards"]:
            if spec["type"] == REWARD_MODEL:
                spec["path"] = self._reward_model_for(number)
                params = spec["params"]
                if params.get("outlier_reference") and not params.get("outlier_reference_file"):
                    # Every round measures distance from the first round's starting responses,
                    # not from its own start (the policy the rounds before trained).
                    params["outlier_reference_file"] = str(self.loop_dir / OUTLIER_REFERENCE)
                if number > 1 and self._disagreement_wanted() and "previous" not in params:
                    params["previous"] = self.initial_reward_model
        if adaptive(self.base) and number > 1:
            learned = (self.state.done(number - 1, "export") or {}).get("next_budget")
            budget = self.base.sampling.budget
            data["sampling"]["budget"] = shares_of(learned, budget).applied_to(budget).model_dump()
        # A run that stopped part-way continues from its last checkpoint.
        data["trainer"]["resume"] = latest_checkpoint(self.run_dir(number)) is not None
        return RunConfig.model_validate(data)

    def _disagreement_wanted(self) -> bool:
        """Whether the round's reward model should also score with the loop's first: only the
        budget's uncertain share reads it, and it costs a forward pass per sample."""
        budget = self.base.sampling.budget
        return (
            self.settings.rm_disagreement
            and budgeted(self.base)
            and (budget.uncertainty_share > 0 or budget.adaptive)
        )

    def _budget_shares(self, config: RunConfig) -> dict[str, float] | None:
        """The round's budget shares, printed: what `lowtide loop` is asked to show per round."""
        if not budgeted(config):
            return None
        shares = Shares.of(config.sampling.budget)
        how = "adaptive" if adaptive(config) else "fixed"
        err.print(f"budget shares ({how}): {shares.line()}", markup=False)
        return shares.as_dict()

    def _learn_shares(self, reviews: Path, run_ids: list[str]) -> LearnedShares:
        """The next round's shares from this loop's reviews so far."""
        rows = read_rows(reviews)
        compared = read_rows(ExportPaths.beside(reviews).comparisons)
        unsure = needs_reasons([*rows, *compared])
        reasons = selection_reasons(self.base.annotation, run_ids) if unsure else {}
        return learn_shares(self.base.sampling.budget, rows, reasons, compared)

    def _reward_model_for(self, number: int) -> str:
        """The newest reward model the rounds before `number` trained, else the config's."""
        for earlier in range(number - 1, 0, -1):
            path = (self.state.done(earlier, REWARD_MODEL) or {}).get("path")
            if path:
                return str(path)
        return self.initial_reward_model

    def _unreviewed(self, project_ids: list[int], number: int) -> int:
        from lowtide.services.clients import label_studio_client

        with label_studio_client(self.base.annotation) as client:
            run_id = self.run_id(number)
            return sum(len(client.unreviewed_tasks(pid, run_id)) for pid in project_ids)

    def _wait_for_people(self, number: int, project_ids: list[int], total: int) -> dict[str, Any]:
        """Until --min-reviews of the round's tasks are reviewed, or the timeout. Ctrl-C stops
        here; the rerun waits again from what is reviewed by then. Label Studio out of reach
        for a while (a restart) is waited out, not a reason to stop."""
        from annotation.labelstudio import LabelStudioUnreachable

        target = min(self.settings.min_reviews or total, total)
        deadline = time.monotonic() + self.settings.review_timeout_s
        columns = (TextColumn("reviews"), MofNCompleteColumn(), BarColumn(),
                   TimeElapsedColumn(), TextColumn("{task.description}"))  # fmt: skip
        err.print(
            f"waiting for {target} of {total} tasks of {self.run_id(number)} to be reviewed in "
            "Label Studio (Ctrl-C stops; rerun to resume)",
            markup=False,
        )
        with Progress(*columns, console=err) as progress:
            bar = progress.add_task("", total=target)
            reviewed, unreachable = 0, None
            while True:
                try:
                    reviewed = total - self._unreviewed(project_ids, number)
                    progress.update(bar, completed=min(reviewed, target), description="")
                    unreachable = None
                except LabelStudioUnreachable as error:
                    progress.update(bar, description=escape(f"{error}: trying again"))
                    unreachable = error
                timed_out = time.monotonic() >= deadline
                if reviewed >= target or timed_out:
                    break
                time.sleep(self.settings.poll_s)
        if unreachable is not None:  # still out of reach at the deadline: the count is unknown
            raise unreachable
        if timed_out:
            err.print(f"timed out with {reviewed} of {target} reviews: going on with them",
                      markup=False)  # fmt: skip
        return {"reviewed": reviewed, "by": "people", "failures": [], "timed_out": timed_out}


def _project_ids(imported: dict[str, Any]) -> list[int]:
    """The projects a round's tasks went to (a state written before rollover: its one)."""
    if "project_ids" in imported:
        return [int(pid) for pid in imported["project_ids"]]
    return [int(imported["project_id"])] if imported.get("project_id") else []


def _every_step(config: RunConfig, result) -> list[dict[str, Any]]:
    """Each step's metrics, the steps before a resume included: the run's metrics.jsonl (it is
    appended to; a step taken again after the resume counts once), else the run's history."""
    from rl.jsonl import read_jsonl, skip_bad_line

    logs = Path(config.logger.save_dir) / (config.logger.name_run or result.run_id)
    path = logs / "metrics.jsonl"
    if not path.is_file():
        return list(result.history)
    rows = [row for _, row in read_jsonl(path, skip_bad_line)]
    by_step = {row["step"]: row for row in rows if type(row.get("step")) is int}
    return list(by_step.values())


def _the_reward_model(config: RunConfig) -> str:
    models = [spec for spec in config.rewards if spec.type == REWARD_MODEL]
    if len(models) != 1 or not models[0].path:
        raise UsageError(
            "lowtide loop retrains the run's reward model: the run config's rewards need exactly "
            f"one {{type: reward_model, path: ...}} (it has {len(models)}); its path is the "
            "reward model the first round trains against"
        )
    return str(models[0].path)


def _eval_prompts(path: str | None) -> list[str] | None:
    if path is None:
        return None
    from rl.config import DataConfig
    from rl.data import DataError, load_prompts

    try:
        return load_prompts(DataConfig(path=path))
    except (DataError, OSError) as error:
        raise UsageError(f"--eval-prompts {path}: {error}") from None
