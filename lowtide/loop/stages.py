"""The steps between two training runs, shared by `lowtide demo` and `lowtide loop`: import what a
run routed (a burst worker), review it (a machine reviewer under its own Label Studio account),
export the reviews; and a reviewer's score of a policy."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.config import AgreementConfig, AnnotationConfig
from lowtide.errors import UserError
from lowtide.loop.reviewer import (
    Reviewer,
    ReviewRejected,
    checked_review,
    compared_review,
    comparison_result,
    result_of,
)
from lowtide.loop.settings import SCRIPTED_REVIEWER_EMAIL


def routed_count(history: Iterable[Mapping[str, float]]) -> int:
    """Rollouts the sampler put on the queue during a run (selected, less those over the cap)."""
    return round(sum(r.get("sampling/selected", 0) - r.get("sampling/capped", 0) for r in history))


def run_burst_worker(config_path: Path | None, overrides: Sequence[str]) -> None:
    """Import everything queued: `lowtide worker --burst` with the run's config, in its own
    process (the worker's signal handling and imports stay out of this one)."""
    command = [sys.executable, "-m", "lowtide", "worker", "--burst", *overrides]
    if config_path is not None:
        command += ["--config", str(config_path)]
    worker = subprocess.run(command, stdin=subprocess.DEVNULL, check=False)
    if worker.returncode != 0:
        raise UserError("the annotation worker failed (see above); the rollouts wait in the queue")


@dataclass(frozen=True)
class RunTasks:
    """Where a run's review tasks are: {(project id, title): tasks of the run} over every
    project of `annotation.project`'s series (it rolls over)."""

    counts: dict[tuple[int, str], int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def holding(self) -> list[tuple[int, str]]:
        return [project for project, count in self.counts.items() if count]

    def where(self, fallback: str) -> str:
        """The titles of the projects holding them, for a message; `fallback` when none."""
        return ", ".join(repr(title) for _, title in self.holding) or repr(fallback)


def run_tasks(annotation: AnnotationConfig, run_id: str) -> RunTasks:
    """Count `run_id`'s tasks in each project of the series."""
    from annotation.series import series_projects
    from lowtide.services.clients import label_studio_client

    with label_studio_client(annotation) as client:
        projects = series_projects(client.projects_titled, annotation.project)
        return RunTasks({(pid, title): client.count_run_tasks(pid, run_id)
                         for pid, title in projects})  # fmt: skip


@dataclass
class ReviewFailure:
    task_id: int
    sample_id: str
    reason: str


@dataclass
class ReviewTally:
    reviewer: str  # the Label Studio account's e-mail
    reviewed: int = 0
    ratings: Counter[int] = field(default_factory=Counter)
    failures: list[ReviewFailure] = field(default_factory=list)


def review_run(
    annotation: AnnotationConfig,
    project_ids: Sequence[int],
    run_id: str,
    reviewer: Reviewer,
    email: str = SCRIPTED_REVIEWER_EMAIL,
    on_failure=None,
) -> ReviewTally:
    """Review every unreviewed task of one training run in these projects (the projects of a
    rolled-over series) with `reviewer`, as the Label Studio account `email` (made if missing),
    never as the admin whose token is in `annotation`. A task the reviewer fails on stays
    unreviewed; `on_failure(failure)` hears about it."""
    from annotation.accounts import ensure_reviewer_account
    from annotation.labelstudio import LabelStudioClient

    admin_key = annotation.api_key.get_secret_value() if annotation.api_key else ""
    account = ensure_reviewer_account(
        annotation.label_studio_url, admin_key, email, annotation.request_timeout_s
    )
    tally = ReviewTally(reviewer=account.email)
    with LabelStudioClient(
        annotation.label_studio_url, account.api_key, annotation.request_timeout_s
    ) as client:
        for project_id in project_ids:
            _review_project(client, project_id, run_id, reviewer, tally, on_failure)
    return tally


def _review_project(
    client: Any,
    project_id: int,
    run_id: str,
    reviewer: Reviewer,
    tally: ReviewTally,
    on_failure: Any,
) -> None:
    from annotation.review_form import ReviewForm

    # Results in the project's form (a project with older star reviews keeps the Rating).
    form = ReviewForm.read(client.labeling_config(project_id))
    for task in client.unreviewed_tasks(project_id, run_id):
        data = task["data"]
        try:
            if form.is_comparison:
                compared = compared_review(reviewer, data, form.categories)
                result, rating = comparison_result(compared), compared.best_rating
            else:
                verdict = checked_review(reviewer, data, form.categories)
                result, rating = result_of(verdict, form.quality_kind), verdict.rating
        except ReviewRejected as error:
            failure = ReviewFailure(int(task["id"]), str(data.get("sample_id")), str(error))
            tally.failures.append(failure)
            if on_failure is not None:
                on_failure(failure)
            continue
        client.create_annotation(task["id"], result)
        tally.reviewed += 1
        if rating is not None:  # of a comparison: the best response's
            tally.ratings[rating] += 1


def export_reviews(
    annotation: AnnotationConfig,
    out_dir: Path,
    run_ids: Collection[str],
    agreement: AgreementConfig | None = None,
) -> tuple[Path, int]:
    """Every review of the project into `out_dir/annotations.jsonl` (the export's files), and
    the reviews of `run_ids` alone into `out_dir/reviews.jsonl` with their preference rows
    beside it (`reviews.preferences.jsonl`, where a comparison's orders are): (that file, the
    reviewed tasks: rated samples and comparisons)."""
    from annotation.export import ExportPaths, export_annotations
    from lowtide.services.clients import label_studio_client

    exported = ExportPaths.beside(out_dir / "annotations.jsonl")
    with label_studio_client(annotation) as client:
        export_annotations(client, annotation.project, exported.ratings, "all", agreement)
    ours = _lines_of(exported.ratings, run_ids)
    path = out_dir / "reviews.jsonl"
    path.write_text("".join(f"{line}\n" for line in ours), encoding="utf-8")
    mine = ExportPaths.beside(path)
    compared = _lines_of(exported.comparisons, run_ids)
    for target, lines in ((mine.preferences, _lines_of(exported.preferences, run_ids)),
                          (mine.comparisons, compared)):  # fmt: skip
        target.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path, len(ours) + len(compared)


def _lines_of(path: Path, run_ids: Collection[str]) -> list[str]:
    """The lines of an export file whose rows come from `run_ids`."""
    if not path.exists():
        return []
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["meta"].get("run_id") in run_ids
    ]


def score_policy(
    policy: Path, prompts: Sequence[str], reviewer: Reviewer, max_new_tokens: int, seed: int
) -> tuple[float | None, int]:
    """The reviewer's mean rating (1-5) of one sampled response per prompt: (score, responses
    it could rate). Responses it fails on are left out of the mean."""
    from rl.models.generation import sample_completions

    responses = sample_completions(policy, prompts, max_new_tokens=max_new_tokens, seed=seed)
    ratings = []
    for prompt, response in zip(prompts, responses, strict=True):
        # Of the texts alone: the same answer gets the same id (and verdict) wherever it is.
        sample_id = hashlib.sha256(f"{prompt}\n{response}".encode()).hexdigest()[:16]
        data: dict[str, Any] = {"sample_id": sample_id, "prompt": prompt, "response": response}
        try:
            ratings.append(checked_review(reviewer, data).rating)
        except ReviewRejected:
            continue
    return (sum(ratings) / len(ratings) if ratings else None), len(ratings)
