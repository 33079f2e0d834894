"""Reviews deleted in Label Studio: found, so that the stored rows say so.

A review is gone when its task has no (not skipped) annotation left, or the task is gone, or
its whole project is. A task that keeps some annotations moves its `updated_at` when one is
deleted, so the export reads it again and rebuilds its row from what is left; what this module
finds are the tasks that drop out of the export's read altogether.

Each review carries its origin (server identity and project: export_rows.ReviewOrigin); only
reviews of this server are judged, and only in projects this export reads (or that the server no
longer holds). What it costs, per project and export: one counted query
(`annotated_task_count`, ~0.08 s at 10,000 tasks on SQLite), compared with the tasks the files
hold plus those known to have no row (`ProjectState.rowless`). Only when they differ, or when
the read covered every annotated task anyway (`--since all`), are task ids compared: a listing
of ids (~0.45 s per 1,000 tasks), and a second one to confirm a task missing from the first
(a paged listing can skip a task while others change).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from annotation.agreement import reviews_of
from annotation.export_rows import ReviewOrigin
from annotation.export_state import ProjectState


class AnnotatedTasks(Protocol):
    """What this module asks Label Studio (annotation/labelstudio.py)."""

    def annotated_task_count(self, project_id: int) -> int: ...

    def annotated_task_ids(self, project_id: int) -> set[int]: ...

    def project_exists(self, project_id: int) -> bool: ...


@dataclass
class Gone:
    """The tasks and projects of one server whose reviews are gone."""

    server: str
    tasks: set[int] = field(default_factory=set)
    projects: set[int] = field(default_factory=set)

    def covers(self, review: Mapping[str, Any]) -> bool:
        if review.get("label_studio") != self.server:
            return False
        return review.get("project_id") in self.projects or review.get("task_id") in self.tasks

    def __bool__(self) -> bool:
        return bool(self.tasks or self.projects)


def is_deleted(row: Mapping[str, Any]) -> bool:
    return (row.get("meta") or {}).get("deleted_in_label_studio") is True


def marked_deleted(row: dict[str, Any]) -> dict[str, Any]:
    """The row as it was, marked: its reviews stay, for the record."""
    return {**row, "meta": {**row["meta"], "deleted_in_label_studio": True}}


def split_reviews(
    row: Mapping[str, Any], gone: Gone
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(the reviews kept, the reviews gone) of a row."""
    kept, lost = [], []
    for review in reviews_of(row):
        (lost if gone.covers(review) else kept).append(review)
    return kept, lost


def held_task_ids(rows: Iterable[Mapping[str, Any]], origin: ReviewOrigin) -> set[int]:
    """The tasks of one project whose reviews the files hold (rows not marked deleted)."""
    return {
        int(review["task_id"])
        for row in rows
        if not is_deleted(row)
        for review in reviews_of(row)
        if _origin(review) == origin and isinstance(review.get("task_id"), int)
    }


def find_gone(
    client: AnnotatedTasks,
    server: str,
    read: Mapping[int, set[int] | None],
    states: Mapping[int, ProjectState],
    rows: list[Mapping[str, Any]],
) -> Gone:
    """What is gone on `server`. `read`: {project id: the ids of its annotated tasks when this
    export read every one of them, else None}. Updates each project's `rowless`."""
    gone = Gone(server)
    for project_id, read_ids in read.items():
        state = states[project_id]
        held = held_task_ids(rows, ReviewOrigin(server, project_id))
        annotated = read_ids
        if annotated is None and client.annotated_task_count(project_id) != len(
            held | state.rowless
        ):
            annotated = client.annotated_task_ids(project_id)
        if annotated is None:
            continue  # the counts agree: nothing gone
        missing = held - annotated
        if missing:
            missing &= held - client.annotated_task_ids(project_id)
        gone.tasks |= missing
        state.rowless = annotated - held
    for project_id in _other_projects(rows, server, set(read)):
        if not client.project_exists(project_id):
            gone.projects.add(project_id)
    return gone


def _other_projects(rows: Iterable[Mapping[str, Any]], server: str, read: set[int]) -> set[int]:
    """Projects of this server that live reviews name and this export did not read."""
    return {
        int(review["project_id"])
        for row in rows
        if not is_deleted(row)
        for review in reviews_of(row)
        if review.get("label_studio") == server
        and isinstance(review.get("project_id"), int)
        and review["project_id"] not in read
    }


def _origin(review: Mapping[str, Any]) -> ReviewOrigin:
    return ReviewOrigin(review.get("label_studio"), review.get("project_id"))
