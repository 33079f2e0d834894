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
- `annotations.cursor.json`: per Label Studio server (known by its organization, whatever
  its URL is spelled: annotation/export_state.py) and project, the newest task `updated_at`
  read, where the next export resumes (a task's `updated_at` moves when a review is added,
  edited or deleted; its `completed_at` does not).

Every project of the `annotation.project` series is read (a full project rolls over to the
next: annotation/series.py); `ExportSummary.projects` says which.

Rows are keyed by sample_id. Each reviewer (Label Studio user) has one vote per sample: their
latest annotation, so an edited or redone review replaces the earlier one. Skipped (cancelled)
annotations are no votes. Rows written by older versions (one reviewer, no `meta.reviews`) are
read and upgraded. With nothing new, nothing is written.

The files only grow: every export merges what Label Studio holds now into the rows they hold
(`--since all` and another spelling of the server's URL too); a task's new reviews replace its
older ones. A review deleted in Label Studio leaves its row's votes; a row whose every review
is gone stays, marked `meta.deleted_in_label_studio` (annotation/export_deletions.py), and gives
no preference rows and no row in `annotations.hf/`. Only `rebuild` starts from what the server
holds now, after a backup of the files (annotation/export_files.py). One export at a time
writes the files: the next waits for the lock. Tasks whose text no longer matches the seal the
worker gave them are refused (annotation/export_seals.py), and the summary says which.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
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
from annotation.export_deletions import (
    Gone,
    find_gone,
    is_deleted,
    marked_deleted,
    split_reviews,
)
from annotation.export_files import back_up, exclusive
from annotation.export_rows import (
    ExportPaths,
    PreferenceRow,
    RatingReview,
    RatingRow,
    ReviewOrigin,
    dataset_features,
    row_meta,
    was_blind,
    with_every_meta_key,
)
from annotation.export_seals import Refusal, SealGate
from annotation.export_state import CursorFile, ProjectState, Server
from annotation.labelstudio import LabelStudioClient
from annotation.review_form import ReviewForm
from annotation.review_results import read_result
from annotation.series import series_projects
from annotation.suggestions import acceptance, suggestion_outcome
from rl.atomic_file import write_text_atomically
from rl.jsonl import read_jsonl
from rl.numbers import finite_or_none
from rl.private_files import private_dir


class ExportError(AnnotationError):
    """The export cannot run (no such project, a bad --since); the message says why."""


@dataclass
class ExportSummary:
    since: str | None
    tasks_read: int = 0
    new_rows: int = 0
    updated_rows: int = 0
    skipped: int = 0  # tasks with only cancelled annotations, not made by lowtide, or no int id
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
    refused: list[Refusal] = field(default_factory=list)  # tasks whose text broke its seal
    unsealed: int = 0  # tasks read that carry no seal (made before seals existed)
    deleted: list[str] = field(default_factory=list)  # samples whose every review went now
    withdrawn: list[str] = field(default_factory=list)  # samples that lost some reviews now
    deleted_rows: int = 0  # rows in the files marked deleted in Label Studio, all told
    backup: Path | None = None  # where a rebuild kept the previous files


def is_comparison(task: Mapping[str, Any]) -> bool:
    return bool((task.get("data") or {}).get("compare"))


def rule_of(settings: AgreementConfig) -> AgreementRule:
    return AgreementRule(settings.max_rating_spread, settings.min_category_share)


def task_reviews(
    task: Mapping[str, Any], origin: ReviewOrigin = ReviewOrigin()
) -> list[dict[str, Any]]:
    """Each reviewer's vote on one task: their latest annotation that was not skipped (of a
    comparison task, their verdict: annotation/comparison_rows.py), read from `origin`."""
    latest: dict[int | None, Mapping[str, Any]] = {}
    for annotation in task.get("annotations") or []:
        if annotation.get("was_cancelled"):
            continue
        reviewer = _reviewer_id(annotation)
        held = latest.get(reviewer)
        if held is None or _order(annotation) > _order(held):
            latest[reviewer] = annotation
    return sorted((_review(task, a, origin) for a in latest.values()), key=_review_order)


def rating_row(
    task: Mapping[str, Any],
    rule: AgreementRule = AgreementRule(),
    origin: ReviewOrigin = ReviewOrigin(),
) -> RatingRow | None:
    """The rating row of one task, from every reviewer's vote; None if there is no vote, or
    the task carries no sample_id (not imported by lowtide)."""
    data = task.get("data") or {}
    reviews = task_reviews(task, origin)
    if not reviews or not data.get("sample_id"):
        return None
    row: RatingRow = {
        "prompt": str(data.get("prompt", "")),
        "response": str(data.get("response", "")),
        "rating": None,
        "categories": [],
        "sample_id": str(data["sample_id"]),
        "meta": row_meta(
            # A task's data is anyone's with API access: a value of another type is None.
            run_id=_text(data.get("run_id")),
            step=_whole(data.get("step")),
            reward=finite_or_none(data.get("reward")),
            task_id=_whole(task.get("id")),
            selected_by=data.get("selected_by"),  # why it was picked (None: older tasks)
            deleted_in_label_studio=False,
            blind=was_blind(data),
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
    *,
    rebuild: bool = False,
    on_wait: Callable[[Path], None] | None = None,
) -> ExportSummary:
    """Export every project of `project_title`'s series (a template: annotation/series.py),
    each from its own cursor, merged into the rows the files beside `out` hold. `rebuild`:
    start from what Label Studio holds now, after a backup of the files. `on_wait(lock)`: told
    that another export holds the files, before this one waits for it."""
    settings = settings or AgreementConfig()
    since = "all" if rebuild else since
    _resolve_since(since, None)  # a bad --since fails before Label Studio is asked anything
    paths = ExportPaths.beside(out)
    projects = series_projects(client.projects_titled, project_title)
    if not projects:
        raise ExportError(
            f"Label Studio at {client.url} has no project {project_title!r}: nothing to export "
            "(a worker creates it with the first batch; check annotation.project)"
        )
    server = Server.of(client.organization(), client.url)
    first = projects[0][0]
    form = ReviewForm.read(client.labeling_config(first))
    with exclusive(paths.lock, on_wait):
        run = _Export.start(client, server, paths, settings, rebuild)
        summary = run.summary
        summary.project_id, summary.projects = first, projects
        summary.form_categories = form.categories
        starts = {pid: _resolve_since(since, run.state(pid).updated_at) for pid, _ in projects}
        summary.since = starts[first]
        # Read before anything is written: Label Studio failing here leaves the files as they
        # were.
        read = {pid: run.read(pid, starts[pid]) for pid, _ in projects}
        run.drop_gone(find_gone(client, server.key, read, run.states, run.every_row()))
        run.finish()
    return summary


@dataclass
class _Export:
    """One export's rows and cursors, from reading the files to writing them back."""

    client: LabelStudioClient
    server: Server
    paths: ExportPaths
    settings: AgreementConfig
    rebuild: bool
    cursor: CursorFile
    states: dict[int, ProjectState]
    rows: dict[str, dict[str, Any]]
    comparisons: dict[str, dict[str, Any]]
    summary: ExportSummary
    states_read: str  # the cursor's state as read: written back only when it changed
    compared_new: int = 0

    @classmethod
    def start(
        cls,
        client: LabelStudioClient,
        server: Server,
        paths: ExportPaths,
        settings: AgreementConfig,
        rebuild: bool,
    ) -> _Export:
        rule = rule_of(settings)
        cursor = CursorFile.read(paths.cursor)
        states = {} if rebuild else cursor.projects(server, client.url)
        summary = ExportSummary(since=None)
        rows: dict[str, dict[str, Any]] = {}
        comparisons: dict[str, dict[str, Any]] = {}
        if not rebuild:
            stored = _read_rows(paths.ratings)
            rows = {key: _regrouped(row, rule) for key, row in stored.items()}
            summary.regrouped = sum(rows[key] != stored[key] for key in rows)
            comparisons = _read_rows(paths.comparisons)
        return cls(client, server, paths, settings, rebuild, cursor, states, rows, comparisons,
                   summary, _states_json(states))  # fmt: skip

    def state(self, project_id: int) -> ProjectState:
        return self.states.setdefault(project_id, ProjectState())

    def read(self, project_id: int, start: str | None) -> set[int] | None:
        """Take the project's tasks changed since `start`; the ids of its annotated tasks
        when that was all of them (`start` None), else None."""
        state = self.state(project_id)
        gate = SealGate(self.client.seal_key, state.sealed_from)
        origin = ReviewOrigin(self.server.key, project_id)
        read: set[int] = set()
        newest = start
        for task in self.client.annotated_tasks(project_id, start):
            self.summary.tasks_read += 1
            task_id = _whole(task.get("id"))
            if task_id is None:  # nothing to key its row or its deletion on
                self.summary.skipped += 1
                continue
            read.add(task_id)
            changed = _stamp(task.get("updated_at"))
            if changed and (newest is None or _as_time(changed) > _as_time(newest)):
                newest = changed
            if gate.admit(task):
                self._take(task, origin, state)
        for task in gate.rest():
            self._take(task, origin, state)
        state.rowless |= {refusal.task_id for refusal in gate.refused}
        state.sealed_from = gate.sealed_from
        if read:  # a cursor moves only past what was read: a later --since never skips tasks
            state.updated_at = _later(state.updated_at, newest)
        self.summary.refused += gate.refused
        self.summary.unsealed += gate.unsealed
        return read if start is None else None

    def _take(self, task: dict[str, Any], origin: ReviewOrigin, state: ProjectState) -> None:
        task_id = task.get("id")
        if is_comparison(task):
            compared = comparison_row(task, task_reviews(task, origin), self.settings)
            if compared is None:
                self._skip(task_id, state)
                return
            previous = self.comparisons.get(compared["sample_id"])
            self._note_withdrawn(previous, compared, task_id)
            if previous != compared:
                self.compared_new += 1
                self.comparisons[compared["sample_id"]] = compared
            state.rowless.discard(task_id)
            return
        row = rating_row(task, rule_of(self.settings), origin)
        if row is None:
            self._skip(task_id, state)
            return
        previous = self.rows.get(row["sample_id"])
        if previous is not None and not is_deleted(previous):  # a deleted row's votes stay out
            self._note_withdrawn(previous, row, task_id)
            row = _merged(previous, row, task_id, rule_of(self.settings))
        if previous is None:
            self.summary.new_rows += 1
        elif previous != row:
            self.summary.updated_rows += 1
        self.rows[row["sample_id"]] = row
        state.rowless.discard(task_id)

    def _skip(self, task_id: Any, state: ProjectState) -> None:
        self.summary.skipped += 1
        if isinstance(task_id, int):
            state.rowless.add(task_id)

    def _note_withdrawn(
        self, previous: Mapping[str, Any] | None, row: Mapping[str, Any], task_id: Any
    ) -> None:
        if previous is not None and not is_deleted(previous) and _withdrawn(previous, row, task_id):
            self.summary.withdrawn.append(str(row["sample_id"]))

    def every_row(self) -> list[dict[str, Any]]:
        return [*self.rows.values(), *self.comparisons.values()]

    def drop_gone(self, gone: Gone) -> None:
        """Take the reviews that are `gone` out of the rows; a row left without any stays as
        it was, marked."""
        if not gone:
            return
        rule = rule_of(self.settings)
        for held in (self.rows, self.comparisons):
            for sample_id, row in list(held.items()):
                if is_deleted(row):
                    continue
                kept, lost = split_reviews(row, gone)
                if not lost:
                    continue
                if kept and held is self.rows:
                    fresh = {**row, "meta": dict(row["meta"])}
                    held[sample_id] = with_reviews(fresh, [dict(r) for r in kept], rule)
                    self.summary.withdrawn.append(sample_id)
                elif not kept:
                    held[sample_id] = marked_deleted(row)
                    self.summary.deleted.append(sample_id)

    def finish(self) -> None:
        """Write what changed, and tally the files' rows into the summary."""
        summary = self.summary
        counts = (summary.new_rows, summary.updated_rows, summary.regrouped, self.compared_new,
                  len(summary.deleted), len(summary.withdrawn))  # fmt: skip
        if any(counts) or self.rebuild:
            if self.rebuild:
                summary.backup = back_up(self.paths)
            _write_all(self.paths, self.rows, self.settings, self.comparisons)
            summary.written = True
        moved = _states_json(self.states) != self.states_read
        if self.rebuild or moved or not self.cursor.is_current():
            if self.rebuild:
                self.cursor.stored = {}  # every server's: the files hold no row of theirs
            self.cursor.write(self.server, self.states)
        summary.withdrawn = list(dict.fromkeys(summary.withdrawn))  # a sample named once
        stamps = [state.updated_at for state in self.states.values() if state.updated_at]
        summary.cursor = max(stamps, key=_as_time, default=None)
        live = [row for row in self.rows.values() if not is_deleted(row)]
        compared = [row for row in self.comparisons.values() if not is_deleted(row)]
        summary.deleted_rows = len(self.rows) + len(self.comparisons) - len(live) - len(compared)
        _tally(live, summary, self.settings)
        summary.comparison_rows = len(compared)
        summary.preference_rows += sum(
            len(comparison_preferences(row, self.settings)) for row in compared
        )
        summary.agreement = agreement_report(
            live, self.settings.alpha_metric, self.settings.disputed_shown
        )


def _later(first: str | None, second: str | None) -> str | None:
    if first is None or second is None:
        return first or second
    return max(first, second, key=_as_time)


def _states_json(states: Mapping[int, ProjectState]) -> str:
    return json.dumps({str(pid): state.to_json() for pid, state in sorted(states.items())})


def _merged(
    previous: dict[str, Any], row: dict[str, Any], task_id: Any, rule: AgreementRule
) -> dict[str, Any]:
    """A sample imported as two tasks (or on two servers): the votes of its other tasks join
    this task's; each reviewer still has one (their latest)."""
    others = [r for r in reviews_of(previous) if not _of_task(r, task_id, _server_of(row))]
    if not others:
        return row
    latest: dict[Any, dict[str, Any]] = {}
    for review in sorted([*others, *row["meta"]["reviews"]], key=_review_order):
        latest[review.get("reviewer")] = review
    return with_reviews(row, list(latest.values()), rule)


def _of_task(review: Mapping[str, Any], task_id: Any, server: str | None) -> bool:
    """Whether a stored review was one of this task's: the same task id on the same server (a
    review stored before reviews named their server counts as this server's)."""
    return review.get("task_id") == task_id and review.get("label_studio") in (None, server)


def _withdrawn(previous: Mapping[str, Any], row: Mapping[str, Any], task_id: Any) -> bool:
    """Whether a reviewer of this task in `previous` has no vote on it any more (their
    annotation was deleted, or skipped since)."""
    server = _server_of(row)
    voters = {r.get("reviewer") for r in reviews_of(row) if _of_task(r, task_id, server)}
    return any(
        r.get("reviewer") not in voters
        for r in reviews_of(previous)
        if _of_task(r, task_id, server)
    )


def _server_of(row: Mapping[str, Any]) -> str | None:
    reviews = reviews_of(row)
    return reviews[0].get("label_studio") if reviews else None


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
                "label_studio": None,  # not known: exported before reviews named their server
                "project_id": None,
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
    return _whole(who)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _stamp(value: Any) -> str | None:
    """A time Label Studio wrote (ISO 8601), or None."""
    try:
        return value if isinstance(value, str) and _as_time(value) else None
    except ValueError:
        return None


def _whole(value: Any) -> int | None:
    """An id as Label Studio gives it (a whole number a 64-bit column holds); None for anything
    else a server sent."""
    whole = isinstance(value, int) and not isinstance(value, bool)
    return value if whole and 0 <= value < 2**63 else None


def _review(
    task: Mapping[str, Any], annotation: Mapping[str, Any], origin: ReviewOrigin
) -> dict[str, Any]:
    values = read_result(annotation.get("result") or [])
    categories = list(values.categories)
    where = {
        "reviewer": _reviewer_id(annotation),
        "task_id": task.get("id"),
        "label_studio": origin.label_studio,
        "project_id": origin.project_id,
        "annotation_id": _whole(annotation.get("id")),
    }
    if is_comparison(task):
        return {**where, "annotated_at": _annotated_at(annotation), **comparison_review(values)}
    return {
        **where,
        "rating": values.rating,
        "categories": categories,
        "better_response": values.better,
        "note": values.note,
        "annotated_at": _annotated_at(annotation),
        # Did this reviewer keep the task's machine suggestion (None: the task had none)?
        "suggestion": suggestion_outcome(task.get("predictions") or [], values.rating, categories),
    }


def _order(annotation: Mapping[str, Any]) -> tuple[str, int]:
    return _annotated_at(annotation), _whole(annotation.get("id")) or 0


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
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    # Without a zone it is UTC, as Label Studio's own are: a naive time cannot be compared.
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _read_rows(path: Path) -> dict[str, dict[str, Any]]:
    def broken(number: int, problem: str) -> None:
        raise ExportError(
            f"{path}:{number}: {problem}: fix or delete it, then export with --since all"
        )

    if not path.exists():
        return {}
    rows = {}
    for number, row in read_jsonl(path, broken):
        if not isinstance(row.get("sample_id"), str):
            broken(number, "no 'sample_id' text")
        rows[row["sample_id"]] = row
    return rows


def _write_all(
    paths: ExportPaths,
    rows: Mapping[str, dict[str, Any]],
    settings: AgreementConfig,
    comparisons: Mapping[str, dict[str, Any]],
) -> None:
    ordered = sorted(rows.values(), key=_row_order)
    compared = sorted(comparisons.values(), key=_row_order)
    # The training views (preferences, the dataset) hold no row deleted in Label Studio.
    live = [row for row in ordered if not is_deleted(row)]
    preferences = [p for row in live for p in preference_rows(row, settings)]
    preferences += [
        p for row in compared if not is_deleted(row) for p in comparison_preferences(row, settings)
    ]
    _write_jsonl(paths.ratings, ordered)
    if compared or paths.comparisons.exists():
        _write_jsonl(paths.comparisons, compared)
    _write_jsonl(paths.preferences, preferences)
    _write_datasets(paths.dataset, live, preferences)


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
    private_dir(staging)  # owner-only, as the JSONL files beside it are
    if path.exists():
        shutil.rmtree(path)
    os.replace(staging, path)


def _dataset(datasets: Any, rows: list[dict], features: Any) -> Any:
    # from_list of no rows fails with nested features (datasets 5.x); from_dict keeps them.
    if rows:
        return datasets.Dataset.from_list(rows, features=features)
    return datasets.Dataset.from_dict({name: [] for name in features}, features=features)
