"""Completed reviews out of Label Studio as reward-model data, incrementally.

From `out` (say `data/reward_model/annotations.jsonl`) the export writes, next to each other:
- `annotations.jsonl`: one rating row per reviewed sample,
  `{prompt, response, rating, categories, sample_id, meta}`. With several reviewers, `rating` is
  their mean rating in whole stars and `categories` the failure categories most of them ticked;
  meta has every reviewer's answer (`reviews`: Label Studio user id, rating, categories, better
  response, note), `reviewers`, `rating_mean`, `rating_spread`, `agreed` and `agreement` (see
  annotation/agreement.py), and, from the latest review, the better response and note, run,
  step, reward, task and annotation ids, when it was annotated;
- `annotations.preferences.jsonl`: `{prompt, chosen, rejected, chosen_written, sample_id,
  meta}` for each distinct better response a reviewer wrote (chosen: the reviewer's, rejected:
  the model's; `chosen_written` true), from samples whose reviewers agree
  (`export.agreement.preferences`); `meta.reviewers` says how many reviewers stood behind it.
  The format TRL's RewardTrainer reads;
- `annotations.comparisons.jsonl` (with comparison tasks, `annotation.review_mode: compare`):
  one row per comparison task with every reviewer's best and worst; its orders join the
  preferences (annotation/comparison_rows.py);
- `annotations.hf/`: both as a HuggingFace `DatasetDict` (`ratings`, `preferences`);
- `annotations.cursor.json`: per project, the newest task `updated_at` read, where the next
  export resumes (a task's `updated_at` moves when a review is added or edited; its
  `completed_at` does not).

Every project of the `annotation.project` series is read (a full project rolls over to the
next: annotation/series.py); `ExportSummary.projects` says which.

Rows are keyed by sample_id. Each reviewer (Label Studio user) has one vote per sample: their
latest annotation, so an edited or redone review replaces the earlier one. Skipped (cancelled)
annotations are no votes. Rows written by older versions (one reviewer, no `meta.reviews`) are
read and upgraded. With nothing new, nothing is written.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from annotation.agreement import (
    AgreementReport,
    AgreementRule,
    agreement_report,
    reviews_of,
    rounded_rating,
    sample_agreement,
)
from annotation.comparison_rows import comparison_preferences, comparison_review, comparison_row
from annotation.config import AgreementConfig
from annotation.errors import AnnotationError
from annotation.export_rows import (
    ExportPaths,
    PreferenceRow,
    RatingReview,
    RatingRow,
    dataset_features,
    row_meta,
    with_every_meta_key,
)
from annotation.labelstudio import LabelStudioClient
from annotation.review_form import ReviewForm
from annotation.review_results import read_result
from annotation.series import series_projects
from annotation.suggestions import acceptance, suggestion_outcome
from rl.atomic_file import write_text_atomically
from rl.jsonl import read_jsonl


class ExportError(AnnotationError):
    """The export cannot run (no such project, a bad --since); the message says why."""


@dataclass
class ExportSummary:
    since: str | None
    tasks_read: int = 0
    new_rows: int = 0
    updated_rows: int = 0
    skipped: int = 0  # tasks with only cancelled annotations, or not made by lowtide
    regrouped: int = 0  # stored rows whose aggregate changed with the agreement settings
    total_rows: int = 0
    comparison_rows: int = 0  # comparison tasks with a review (annotation/comparison_rows.py)
    preference_rows: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    ratings: Counter[str] = field(default_factory=Counter)
    written: bool = False
    cursor: str | None = None
    agreement: AgreementReport | None = None
    project_id: int | None = None  # the series' first project
    projects: list[tuple[int, str]] = field(default_factory=list)  # (id, title) of all read
    form_categories: tuple[str, ...] = ()  # the project's failure categories, in its form's order
    suggestions_accepted: int = 0  # reviews that kept a machine suggestion as it was
    suggestions_edited: int = 0  # reviews that changed its rating or categories


def is_comparison(task: Mapping[str, Any]) -> bool:
    return bool((task.get("data") or {}).get("compare"))


def rule_of(settings: AgreementConfig) -> AgreementRule:
    return AgreementRule(settings.max_rating_spread, settings.min_category_share)


def task_reviews(task: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each reviewer's vote on one task: their latest annotation that was not skipped (of a
    comparison task, their verdict: annotation/comparison_rows.py)."""
    latest: dict[int | None, Mapping[str, Any]] = {}
    for annotation in task.get("annotations") or []:
        if annotation.get("was_cancelled"):
            continue
        reviewer = _reviewer_id(annotation)
        held = latest.get(reviewer)
        if held is None or _order(annotation) > _order(held):
            latest[reviewer] = annotation
    return sorted((_review(task, a) for a in latest.values()), key=_review_order)


def rating_row(task: Mapping[str, Any], rule: AgreementRule = AgreementRule()) -> RatingRow | None:
    """The rating row of one task, from every reviewer's vote; None if there is no vote, or
    the task carries no sample_id (not imported by lowtide)."""
    data = task.get("data") or {}
    reviews = task_reviews(task)
    if not reviews or not data.get("sample_id"):
        return None
    reward = data.get("reward")
    row: RatingRow = {
        "prompt": str(data.get("prompt", "")),
        "response": str(data.get("response", "")),
        "rating": None,
        "categories": [],
        "sample_id": str(data["sample_id"]),
        "meta": row_meta(
            run_id=data.get("run_id"),
            step=data.get("step"),
            reward=reward if isinstance(reward, int | float) else None,
            task_id=task.get("id"),
            selected_by=data.get("selected_by"),  # why it was picked (None: older tasks)
        ),
    }
    return with_reviews(row, reviews, rule)


def with_reviews(row: RatingRow, reviews: list[RatingReview], rule: AgreementRule) -> RatingRow:
    """`row` with `reviews` (one per reviewer) and what follows from them: the aggregate
    rating and categories, agreement, and the latest review's text and ids."""
    reviews = sorted(reviews, key=_review_order)
    latest = reviews[-1]
    agreement = sample_agreement(
        [review["rating"] for review in reviews], [review["categories"] for review in reviews], rule
    )
    row["rating"] = rounded_rating(agreement.rating_mean)
    row["categories"] = agreement.majority_categories
    written = better_responses(reviews, row["response"])
    row["meta"].update(
        better_response=written[0][0] if written else latest["better_response"],
        note=latest["note"],
        task_id=latest["task_id"],
        annotation_id=latest["annotation_id"],
        annotator_id=latest["reviewer"],
        annotated_at=latest["annotated_at"],
        reviewers=agreement.reviewers,
        rating_mean=agreement.rating_mean,
        rating_spread=agreement.rating_spread,
        agreed=agreement.agreed,
        agreement=agreement.agreement,
        reviews=reviews,
        suggestion=latest.get("suggestion"),  # the latest review's, as its text and ids
    )
    return row


def preference_rows(row: RatingRow, settings: AgreementConfig | None = None) -> list[PreferenceRow]:
    """One preference per distinct better response the sample's reviewers wrote (most
    written first), when its reviewers agree (or `settings.preferences` is "all")."""
    settings = settings or AgreementConfig()
    meta = row["meta"]
    reviews = meta.get("reviews") or []
    if settings.preferences == "agreed" and not meta.get("agreed", True):
        return []
    if len(reviews) < settings.min_reviewers:
        return []
    return [
        {
            "prompt": row["prompt"],
            "chosen": chosen,
            "rejected": row["response"],
            "chosen_written": True,
            "sample_id": row["sample_id"],
            "meta": {
                **meta,
                "better_response": chosen,
                "note": written[0].get("note"),
                "annotation_id": written[0].get("annotation_id"),
                "annotator_id": written[0].get("reviewer"),
                "annotated_at": written[0].get("annotated_at"),
            },
        }
        for chosen, written in better_responses(reviews, row["response"])
    ]


def better_responses(
    reviews: Iterable[Mapping[str, Any]], response: str
) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Each distinct better response the reviewers wrote (not the response itself) with the
    reviews that wrote it: most written first, then in review order."""
    authors: dict[str, list[Mapping[str, Any]]] = {}
    for review in reviews:
        better = (review.get("better_response") or "").strip()
        if better and better != response.strip():
            authors.setdefault(better, []).append(review)
    return sorted(authors.items(), key=lambda item: -len(item[1]))  # sorted() is stable


def export_annotations(
    client: LabelStudioClient,
    project_title: str,
    out: str | Path,
    since: str = "last",
    settings: AgreementConfig | None = None,
) -> ExportSummary:
    """Export every project of `project_title`'s series (a template: annotation/series.py),
    each from its own cursor."""
    settings = settings or AgreementConfig()
    rule = rule_of(settings)
    paths = ExportPaths.beside(out)
    projects = series_projects(client.projects_titled, project_title)
    if not projects:
        raise ExportError(
            f"Label Studio at {client.url} has no project {project_title!r}: nothing to export "
            "(a worker creates it with the first batch; check annotation.project)"
        )
    cursors = _read_cursors(paths.cursor, client.url)
    starts = {pid: _resolve_since(since, cursors.get(pid)) for pid, _ in projects}
    # Read before anything is written: Label Studio failing here leaves the files as they were.
    first = projects[0][0]
    form = ReviewForm.read(client.labeling_config(first))
    summary = ExportSummary(
        since=starts[first], project_id=first, form_categories=form.categories, projects=projects
    )
    rows: dict[str, dict[str, Any]] = {}
    comparisons: dict[str, dict[str, Any]] = {}
    if any(start is not None for start in starts.values()):
        stored = _read_rows(paths.ratings)
        rows = {key: _regrouped(row, rule) for key, row in stored.items()}
        summary.regrouped = sum(rows[key] != stored[key] for key in rows)
        comparisons = _read_rows(paths.comparisons)
    newest = dict(starts)
    compared_new = 0
    for project_id, _ in projects:
        for task in client.annotated_tasks(project_id, starts[project_id]):
            summary.tasks_read += 1
            changed = task.get("updated_at")
            held = newest[project_id]
            if changed and (held is None or _as_time(changed) > _as_time(held)):
                newest[project_id] = changed
            if is_comparison(task):
                compared = comparison_row(task, task_reviews(task), settings)
                if compared is None:
                    summary.skipped += 1
                elif comparisons.get(compared["sample_id"]) != compared:
                    compared_new += 1
                    comparisons[compared["sample_id"]] = compared
                continue
            row = rating_row(task, rule)
            if row is None:
                summary.skipped += 1
                continue
            previous = rows.get(row["sample_id"])
            if previous is not None:
                row = _merged(previous, row, task.get("id"), rule)
            if previous is None:
                summary.new_rows += 1
            elif previous != row:
                summary.updated_rows += 1
            rows[row["sample_id"]] = row
    summary.cursor = max((t for t in newest.values() if t), key=_as_time, default=None)
    if summary.new_rows or summary.updated_rows or summary.regrouped or compared_new:
        _write_all(paths, rows, settings, comparisons)
        summary.written = True
    if summary.tasks_read:  # tasks touched without a new review still move the cursor
        _write_cursors(paths.cursor, client.url, {**cursors, **newest})
    # `rows` already holds the file's rows, unless nothing was read (`--since all`, no reviews).
    final = rows or {k: _regrouped(r, rule) for k, r in _read_rows(paths.ratings).items()}
    _tally(final.values(), summary, settings)
    compared_rows = comparisons or _read_rows(paths.comparisons)
    summary.comparison_rows = len(compared_rows)
    summary.preference_rows += sum(
        len(comparison_preferences(row, settings)) for row in compared_rows.values()
    )
    summary.agreement = agreement_report(
        final.values(), settings.alpha_metric, settings.disputed_shown
    )
    return summary


def _merged(
    previous: dict[str, Any], row: dict[str, Any], task_id: Any, rule: AgreementRule
) -> dict[str, Any]:
    """A sample imported as two tasks: the votes of its other tasks join this task's; each
    reviewer still has one (their latest)."""
    others = [review for review in reviews_of(previous) if review.get("task_id") != task_id]
    if not others:
        return row
    latest: dict[Any, dict[str, Any]] = {}
    for review in sorted([*others, *row["meta"]["reviews"]], key=_review_order):
        latest[review.get("reviewer")] = review
    return with_reviews(row, list(latest.values()), rule)


def _regrouped(row: dict[str, Any], rule: AgreementRule) -> dict[str, Any]:
    """A stored row with its aggregate recomputed under `rule`; a row of an older version
    (one reviewer, no `meta.reviews`) becomes one with that single review."""
    meta = with_every_meta_key(row.get("meta"))
    reviews = reviews_of(row)
    if not reviews:
        reviews = [
            {
                "reviewer": meta.get("annotator_id"),
                "task_id": meta.get("task_id"),
                "annotation_id": meta.get("annotation_id"),
                "rating": row.get("rating"),
                "categories": list(row.get("categories") or []),
                "better_response": meta.get("better_response"),
                "note": meta.get("note"),
                "annotated_at": str(meta.get("annotated_at") or ""),
                "suggestion": None,
            }
        ]
    return with_reviews({**row, "meta": meta}, [dict(r) for r in reviews], rule)


def _reviewer_id(annotation: Mapping[str, Any]) -> int | None:
    """The Label Studio user id only: an expanded user (with e-mail and name) is cut down."""
    who = annotation.get("completed_by")
    if isinstance(who, Mapping):
        who = who.get("id")
    return who if isinstance(who, int) and not isinstance(who, bool) else None


def _review(task: Mapping[str, Any], annotation: Mapping[str, Any]) -> dict[str, Any]:
    values = read_result(annotation.get("result") or [])
    categories = list(values.categories)
    if is_comparison(task):
        return {
            "reviewer": _reviewer_id(annotation),
            "task_id": task.get("id"),
            "annotation_id": annotation.get("id"),
            "annotated_at": _annotated_at(annotation),
            **comparison_review(values),
        }
    return {
        "reviewer": _reviewer_id(annotation),
        "task_id": task.get("id"),
        "annotation_id": annotation.get("id"),
        "rating": values.rating,
        "categories": categories,
        "better_response": values.better,
        "note": values.note,
        "annotated_at": _annotated_at(annotation),
        # Did this reviewer keep the task's machine suggestion (None: the task had none)?
        "suggestion": suggestion_outcome(task.get("predictions") or [], values.rating, categories),
    }


def _order(annotation: Mapping[str, Any]) -> tuple[str, int]:
    return _annotated_at(annotation), annotation.get("id") or 0


def _review_order(review: Mapping[str, Any]) -> tuple[str, int]:
    return str(review.get("annotated_at") or ""), review.get("annotation_id") or 0


def _annotated_at(annotation: Mapping[str, Any]) -> str:
    return str(annotation.get("updated_at") or annotation.get("created_at") or "")


def _resolve_since(since: str, cursor: str | None) -> str | None:
    if since == "last":
        return cursor
    if since == "all":
        return None
    try:
        moment = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        raise ExportError(
            f"--since {since!r}: use 'last' (resume), 'all', or an ISO time such as "
            "2024-05-01T12:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    # Label Studio's filter wants exactly this form, microseconds included.
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _as_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _read_cursors(path: Path, url: str) -> dict[int, str | None]:
    """{project id: the newest `updated_at` read} of this server's projects (a cursor of
    another server says nothing about this one). The form of a single project's cursor, as
    earlier versions wrote it, reads too."""
    try:
        stored = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError:
        raise ExportError(f"{path} is not valid JSON: delete it to export everything") from None
    if not isinstance(stored, dict) or stored.get("label_studio_url") != url:
        return {}
    if "projects" in stored:
        return {int(pid): stamp for pid, stamp in dict(stored["projects"]).items()}
    if stored.get("project_id") is not None:
        return {int(stored["project_id"]): stored.get("updated_at")}
    return {}


def _write_cursors(path: Path, url: str, cursors: Mapping[int, str | None]) -> None:
    projects = {str(pid): stamp for pid, stamp in sorted(cursors.items())}
    _write_json(path, {"label_studio_url": url, "projects": projects})


def _read_rows(path: Path) -> dict[str, dict[str, Any]]:
    def broken(number: int, problem: str) -> None:
        raise ExportError(
            f"{path}:{number}: {problem}: fix or delete it, then export with --since all"
        )

    if not path.exists():
        return {}
    return {row["sample_id"]: row for _, row in read_jsonl(path, broken)}


def _write_all(
    paths: ExportPaths,
    rows: Mapping[str, dict[str, Any]],
    settings: AgreementConfig,
    comparisons: Mapping[str, dict[str, Any]],
) -> None:
    ordered = sorted(rows.values(), key=_row_order)
    compared = sorted(comparisons.values(), key=_row_order)
    preferences = [p for row in ordered for p in preference_rows(row, settings)]
    preferences += [p for row in compared for p in comparison_preferences(row, settings)]
    _write_jsonl(paths.ratings, ordered)
    if compared or paths.comparisons.exists():
        _write_jsonl(paths.comparisons, compared)
    _write_jsonl(paths.preferences, preferences)
    _write_datasets(paths.dataset, ordered, preferences)


def _row_order(row: Mapping[str, Any]) -> tuple[str, str]:
    return str(row["meta"].get("annotated_at") or ""), row["sample_id"]


def _tally(
    rows: Iterable[Mapping[str, Any]], summary: ExportSummary, settings: AgreementConfig
) -> None:
    rows_done = list(rows)
    for row in rows_done:
        summary.total_rows += 1
        summary.preference_rows += len(preference_rows(row, settings))
        summary.categories.update(row["categories"])
        summary.ratings[str(row["rating"]) if row["rating"] is not None else "unrated"] += 1
    suggestions = acceptance(rows_done)
    summary.suggestions_accepted = suggestions.accepted
    summary.suggestions_edited = suggestions.edited


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    # Readers (a training job) never see half a file.
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    write_text_atomically(path, text)


def _write_json(path: Path, value: Any) -> None:
    write_text_atomically(path, json.dumps(value, indent=2) + "\n")


def _write_datasets(path: Path, ratings: list[RatingRow], preferences: list[PreferenceRow]) -> None:
    import datasets  # heavy: only when something is written

    datasets.disable_progress_bars()

    dataset = datasets.DatasetDict(
        {
            "ratings": _dataset(datasets, ratings, dataset_features(RatingRow, datasets)),
            "preferences": _dataset(
                datasets, preferences, dataset_features(PreferenceRow, datasets)
            ),
        }
    )
    staging = path.with_name(f".{path.name}.new")
    # An empty split saved with the default (zero) shards cannot be loaded back.
    empty = {name: 1 for name, split in dataset.items() if not split.num_rows}
    dataset.save_to_disk(str(staging), num_shards=empty or None)
    if path.exists():
        shutil.rmtree(path)
    os.replace(staging, path)


def _dataset(datasets: Any, rows: list[dict], features: Any) -> Any:
    # from_list of no rows fails with nested features (datasets 5.x); from_dict keeps them.
    if rows:
        return datasets.Dataset.from_list(rows, features=features)
    return datasets.Dataset.from_dict({name: [] for name in features}, features=features)
