"""Completed reviews out of Label Studio as reward-model data, incrementally.

From `out` (say `data/reward_model/annotations.jsonl`) the export writes, next to each other:
- `annotations.jsonl`: one rating row per reviewed sample,
  `{prompt, response, rating, categories, sample_id, meta}` (meta: the better response and note,
  run, step, reward, task and annotation ids, when it was annotated);
- `annotations.preferences.jsonl`: `{prompt, chosen, rejected, sample_id, meta}` where the
  reviewer wrote a better response (chosen: the reviewer's, rejected: the model's), the format
  TRL's RewardTrainer reads;
- `annotations.hf/`: both as a HuggingFace `DatasetDict` (`ratings`, `preferences`);
- `annotations.cursor.json`: the newest task `updated_at` read, where the next export resumes
  (a task's `updated_at` moves when a review is edited; its `completed_at` does not).

Rows are keyed by sample_id: a sample reviewed again (or imported twice) keeps its latest
annotation. Skipped (cancelled) annotations are left out. With nothing new, nothing is written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from annotation.errors import AnnotationError
from annotation.labelstudio import LabelStudioClient
from rl.jsonl import read_jsonl

CATEGORIES = ("refusal", "hallucination", "off-topic", "sycophancy", "unsafe", "format", "other")
# The names in configs/label_studio/review.xml.
RATING_FIELD, FAILURE_FIELD = "quality", "failure"
BETTER_FIELD, NOTE_FIELD = "better_response", "note"


class ExportError(AnnotationError):
    """The export cannot run (no such project, a bad --since); the message says why."""


@dataclass(frozen=True)
class ExportPaths:
    ratings: Path
    preferences: Path
    dataset: Path
    cursor: Path

    @classmethod
    def beside(cls, out: str | Path) -> ExportPaths:
        out = Path(out)
        stem = out.name.removesuffix(".jsonl")
        return cls(
            ratings=out,
            preferences=out.with_name(f"{stem}.preferences.jsonl"),
            dataset=out.with_name(f"{stem}.hf"),
            cursor=out.with_name(f"{stem}.cursor.json"),
        )


@dataclass
class ExportSummary:
    since: str | None
    tasks_read: int = 0
    new_rows: int = 0
    updated_rows: int = 0
    skipped: int = 0  # tasks with only cancelled annotations, or not made by lowtide
    total_rows: int = 0
    preference_rows: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    ratings: Counter[str] = field(default_factory=Counter)
    written: bool = False
    cursor: str | None = None


def rating_row(task: Mapping[str, Any]) -> dict[str, Any] | None:
    """The rating row of one task: its latest annotation that was not skipped; None if there is
    none, or the task carries no sample_id (not imported by lowtide)."""
    data = task.get("data") or {}
    annotations = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    if not annotations or not data.get("sample_id"):
        return None
    latest = max(annotations, key=lambda a: (_annotated_at(a), a.get("id") or 0))
    values = _result_values(latest.get("result") or [])
    response = str(data.get("response", ""))
    return {
        "prompt": str(data.get("prompt", "")),
        "response": response,
        "rating": values.get(RATING_FIELD),
        "categories": values.get(FAILURE_FIELD, []),
        "sample_id": str(data["sample_id"]),
        "meta": {
            "better_response": values.get(BETTER_FIELD),
            "note": values.get(NOTE_FIELD),
            "run_id": data.get("run_id"),
            "step": data.get("step"),
            "reward": data.get("reward") if isinstance(data.get("reward"), int | float) else None,
            "task_id": task.get("id"),
            "annotation_id": latest.get("id"),
            "annotator_id": latest.get("completed_by"),
            "annotated_at": _annotated_at(latest),
        },
    }


def preference_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    better = row["meta"].get("better_response")
    if not better or better.strip() == row["response"].strip():
        return None
    return {
        "prompt": row["prompt"],
        "chosen": better,
        "rejected": row["response"],
        "sample_id": row["sample_id"],
        "meta": row["meta"],
    }


def export_annotations(
    client: LabelStudioClient, project_title: str, out: str | Path, since: str = "last"
) -> ExportSummary:
    paths = ExportPaths.beside(out)
    project_id = client.find_project(project_title)
    if project_id is None:
        raise ExportError(
            f"Label Studio at {client.url} has no project {project_title!r}: nothing to export "
            "(a worker creates it with the first batch; check annotation.project)"
        )
    cursor = _read_cursor(paths.cursor, client.url, project_id)
    start = _resolve_since(since, cursor)
    summary = ExportSummary(since=start)
    rows = _read_rows(paths.ratings) if start is not None else {}
    newest = start
    for task in client.annotated_tasks(project_id, start):
        summary.tasks_read += 1
        changed = task.get("updated_at")
        if changed and (newest is None or _as_time(changed) > _as_time(newest)):
            newest = changed
        row = rating_row(task)
        if row is None:
            summary.skipped += 1
            continue
        previous = rows.get(row["sample_id"])
        if previous is not None and previous["meta"]["annotated_at"] > row["meta"]["annotated_at"]:
            continue  # a duplicate task of the sample holds a newer review
        if previous is None:
            summary.new_rows += 1
        elif previous != row:
            summary.updated_rows += 1
        rows[row["sample_id"]] = row
    summary.cursor = newest
    if summary.new_rows or summary.updated_rows:
        _write_all(paths, rows)
        summary.written = True
    if summary.tasks_read:  # tasks touched without a new review still move the cursor
        cursor_state = {"label_studio_url": client.url, "project_id": project_id}
        _write_json(paths.cursor, {**cursor_state, "updated_at": newest})
    # `rows` already holds the file's rows, unless nothing was read (`--since all`, no reviews).
    _tally((rows or _read_rows(paths.ratings)).values(), summary)
    return summary


def _result_values(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for result in results:
        name, value = result.get("from_name"), result.get("value") or {}
        if name == RATING_FIELD and isinstance(value.get("rating"), int | float):
            values[name] = int(value["rating"])
        elif name == FAILURE_FIELD and isinstance(value.get("choices"), list):
            values[name] = [str(choice) for choice in value["choices"]]
        elif name in (BETTER_FIELD, NOTE_FIELD) and isinstance(value.get("text"), list):
            text = "\n".join(str(part) for part in value["text"]).strip()  # the UI may add "\n"
            values[name] = text or None
    return values


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


def _read_cursor(path: Path, url: str, project_id: int) -> str | None:
    try:
        stored = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except ValueError:
        raise ExportError(f"{path} is not valid JSON: delete it to export everything") from None
    if stored.get("label_studio_url") != url or stored.get("project_id") != project_id:
        return None  # a cursor of another server or project says nothing about this one
    return stored.get("updated_at")


def _read_rows(path: Path) -> dict[str, dict[str, Any]]:
    def broken(number: int, problem: str) -> None:
        raise ExportError(
            f"{path}:{number}: {problem}: fix or delete it, then export with --since all"
        )

    if not path.exists():
        return {}
    return {row["sample_id"]: row for _, row in read_jsonl(path, broken)}


def _write_all(paths: ExportPaths, rows: Mapping[str, dict[str, Any]]) -> None:
    ordered = sorted(rows.values(), key=lambda row: (row["meta"]["annotated_at"], row["sample_id"]))
    preferences = [p for p in (preference_row(row) for row in ordered) if p is not None]
    _write_jsonl(paths.ratings, ordered)
    _write_jsonl(paths.preferences, preferences)
    _write_datasets(paths.dataset, ordered, preferences)


def _tally(rows: Iterable[Mapping[str, Any]], summary: ExportSummary) -> None:
    for row in rows:
        summary.total_rows += 1
        summary.preference_rows += preference_row(row) is not None
        summary.categories.update(row["categories"])
        summary.ratings[str(row["rating"]) if row["rating"] is not None else "unrated"] += 1


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    _atomic_write(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def _write_json(path: Path, value: Any) -> None:
    _atomic_write(path, json.dumps(value, indent=2) + "\n")


def _atomic_write(path: Path, text: str) -> None:
    """Readers (a training job) never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _write_datasets(path: Path, ratings: list[dict], preferences: list[dict]) -> None:
    import datasets  # heavy: only when something is written

    datasets.disable_progress_bars()

    meta = datasets.Features(
        {
            "better_response": datasets.Value("string"),
            "note": datasets.Value("string"),
            "run_id": datasets.Value("string"),
            "step": datasets.Value("int64"),
            "reward": datasets.Value("float64"),
            "task_id": datasets.Value("int64"),
            "annotation_id": datasets.Value("int64"),
            "annotator_id": datasets.Value("int64"),
            "annotated_at": datasets.Value("string"),
        }
    )
    text = datasets.Value("string")
    rating_features = datasets.Features(
        {
            "prompt": text,
            "response": text,
            "rating": datasets.Value("int64"),
            "categories": datasets.List(text),
            "sample_id": text,
            "meta": meta,
        }
    )
    preference_features = datasets.Features(
        {"prompt": text, "chosen": text, "rejected": text, "sample_id": text, "meta": meta}
    )
    dataset = datasets.DatasetDict(
        {
            "ratings": datasets.Dataset.from_list(ratings, features=rating_features),
            "preferences": datasets.Dataset.from_list(preferences, features=preference_features),
        }
    )
    staging = path.with_name(f".{path.name}.new")
    dataset.save_to_disk(str(staging))
    if path.exists():
        shutil.rmtree(path)
    os.replace(staging, path)
