"""The files and rows `lowtide export` writes: where the files lie beside `export.out`
(`ExportPaths`), and the rows typed, one schema that the JSONL files and the HuggingFace dataset
(`annotations.hf/`) both follow.

Rows stay plain dicts (they are JSON lines, read back by other tools), typed with `TypedDict`s
so that a key is named once: the export builds every meta with `row_meta`, and
`dataset_features` derives the dataset's columns from these classes, so a field added here
reaches both files and a field left out of here is caught by the tests
(tests/test_export_rows.py), never dropped silently. `selected_by` (sampling.records.Selection,
versioned with the record) is kept whole as JSON.

Readers of these files (annotation/reward_model/data.py, the loop) still read defensively:
the files may come from older versions or be edited by hand.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Union


@dataclass(frozen=True)
class ExportPaths:
    ratings: Path
    preferences: Path
    dataset: Path
    cursor: Path
    comparisons: Path
    lock: Path  # held by the export that writes them (annotation/export_files.py)

    @classmethod
    def beside(cls, out: str | Path) -> ExportPaths:
        out = Path(out)
        stem = out.name.removesuffix(".jsonl")
        return cls(
            ratings=out,
            preferences=out.with_name(f"{stem}.preferences.jsonl"),
            dataset=out.with_name(f"{stem}.hf"),
            cursor=out.with_name(f"{stem}.cursor.json"),
            comparisons=out.with_name(f"{stem}.comparisons.jsonl"),
            lock=out.with_name(f"{stem}.lock"),
        )

    def written(self) -> list[Path]:
        """Every file the export writes (the lock aside)."""
        return [self.ratings, self.preferences, self.comparisons, self.dataset, self.cursor]

    @classmethod
    def written_in(cls, directory: Path) -> list[Path]:
        """The files in `directory` that `lowtide export --out` named (their siblings left out)."""
        found = sorted(directory.glob("*.jsonl"))
        siblings = {
            p for f in found for p in (cls.beside(f).preferences, cls.beside(f).comparisons)
        }
        return [f for f in found if f not in siblings]


# Why a sample was picked: sampling.records.Selection as the task carried it (None: older tasks).
SelectedBy = dict[str, Any]


def was_blind(data: Any) -> bool:
    """Whether the review of a task with this `data` was blind: the flag the importer set; a
    task without one was imported before blind review existed, and showed the reward."""
    return isinstance(data, dict) and data.get("blind") is True


class SuggestionOutcome(TypedDict):
    """What became of a task's machine suggestion in one review (annotation/suggestions.py)."""

    model_version: str
    score: float | None
    rating: int
    categories: list[str]
    accepted: bool
    changed: list[str]  # the suggested fields the reviewer changed: "rating", "categories"


@dataclass(frozen=True)
class ReviewOrigin:
    """Where a review was read: the server's identity (annotation/export_state.py, never its
    URL) and the project. Task and annotation ids mean something only on their server."""

    label_studio: str | None = None
    project_id: int | None = None


class RatingReview(TypedDict):
    """One reviewer's vote on a single-response task: their latest annotation."""

    reviewer: int | None  # the Label Studio user id
    task_id: int | None
    label_studio: str | None  # ReviewOrigin; None: exported before reviews carried it
    project_id: int | None
    annotation_id: int | None
    rating: int | None
    categories: list[str]
    better_response: str | None
    note: str | None
    annotated_at: str
    suggestion: SuggestionOutcome | None  # None: the task had no suggestion


class RowMeta(TypedDict):
    """Where a row came from and what its reviewers said (annotation/export.py)."""

    better_response: str | None
    note: str | None
    run_id: str | None
    step: int | None
    reward: float | None
    task_id: int | None
    selected_by: SelectedBy | None
    annotation_id: int | None
    annotator_id: int | None
    annotated_at: str | None
    reviewers: int | None
    rating_mean: float | None
    rating_spread: int | None
    agreed: bool | None
    agreement: float | None
    reviews: list[RatingReview]
    suggestion: SuggestionOutcome | None
    # Every review of it was deleted in Label Studio (its annotations, its task or its project):
    # the row stays in annotations.jsonl as it was, and no training data is made of it.
    deleted_in_label_studio: bool | None
    # The review was blind (annotation.blind_review): the task showed no reward, no reason for
    # its pick and no machine suggestion before the rating. False for tasks imported before
    # blind review existed (they showed the reward); None: a row exported before it was recorded.
    blind: bool | None


class RatingRow(TypedDict):
    """`annotations.jsonl`: one reviewed sample."""

    prompt: str
    response: str
    rating: int | None
    categories: list[str]
    sample_id: str
    meta: RowMeta


class PreferenceRow(TypedDict):
    """`annotations.preferences.jsonl`: the form TRL's RewardTrainer reads."""

    prompt: str
    chosen: str
    rejected: str
    # chosen is a reviewer's own text (a better response), not one of the policy's: off-policy
    # text a reward model can tell apart by its style (`rm train --written-weight`)
    chosen_written: bool
    sample_id: str
    meta: RowMeta


class ComparedShown(TypedDict):
    """One response of a comparison task, as the reviewer saw it."""

    label: str
    sample_id: str
    response: str
    reward: float | None


class ComparisonReview(TypedDict):
    """One reviewer's verdict on a comparison task."""

    reviewer: int | None
    task_id: int | None
    label_studio: str | None  # ReviewOrigin, as a rating review has it
    project_id: int | None
    annotation_id: int | None
    annotated_at: str
    best: str | None  # a label: "A", "B", ...
    worst: str | None
    categories: list[str]  # what went wrong with the worst
    better_response: str | None
    note: str | None


class ComparisonMeta(TypedDict):
    run_id: str | None
    step: int | None
    task_id: int | None
    selected_by: SelectedBy | None
    annotation_id: int | None
    annotator_id: int | None
    annotated_at: str | None
    reviewers: int
    verdicts: int  # reviews that named a shown best and worst
    agreed: bool
    agreement: float
    disputed: list[list[str]]  # pairs of sample ids the reviewers ordered both ways
    reviews: list[ComparisonReview]
    deleted_in_label_studio: bool  # as a rating row's
    blind: bool | None  # as a rating row's


class ComparisonRow(TypedDict):
    """`annotations.comparisons.jsonl`: one reviewed comparison task
    (annotation/comparison_rows.py)."""

    prompt: str
    responses: list[ComparedShown]
    sample_id: str
    meta: ComparisonMeta


def row_meta(**known: Any) -> RowMeta:
    """A RowMeta with every key: `known`'s values, None (or no reviews) for the rest. An unknown
    key is a bug here, not a new column: it raises."""
    unknown = set(known) - set(RowMeta.__annotations__)
    if unknown:
        raise TypeError(f"not a field of RowMeta: {', '.join(sorted(unknown))}")
    meta: dict[str, Any] = dict.fromkeys(RowMeta.__annotations__)
    meta["reviews"] = []
    meta.update(known)
    return typing.cast(RowMeta, meta)


def with_every_meta_key(meta: Any) -> RowMeta:
    """A stored row's meta (an older version's may lack keys) with every key of RowMeta; keys
    it has beyond them are kept (the JSONL keeps them; the dataset has no column for them)."""
    known = dict(meta) if isinstance(meta, dict) else {}
    return typing.cast(RowMeta, {**row_meta(), **known})


_SCALARS = {str: "string", int: "int64", float: "float64", bool: "bool"}


def dataset_features(row_type: type, datasets: Any) -> Any:
    """`datasets.Features` for rows of `row_type` (RatingRow, PreferenceRow), read from its
    type hints: str/int/float/bool columns, lists, nested TypedDicts as structs, a free-form
    mapping (`selected_by`) as JSON; `X | None` is X (the column is nullable)."""
    return datasets.Features(_struct(row_type, datasets))


def _struct(typed: type, datasets: Any) -> dict[str, Any]:
    hints = typing.get_type_hints(typed)
    return {
        name: _feature(hint, datasets, f"{typed.__name__}.{name}") for name, hint in hints.items()
    }


def _feature(hint: Any, datasets: Any, where: str) -> Any:
    hint = _without_none(hint)
    if hint in _SCALARS:
        return datasets.Value(_SCALARS[hint])
    origin = typing.get_origin(hint)
    if origin is list:
        (item,) = typing.get_args(hint)
        return datasets.List(_feature(item, datasets, f"{where}[]"))
    if origin is dict:
        return datasets.Json()
    if typing.is_typeddict(hint):
        return _struct(hint, datasets)
    raise TypeError(f"{where}: no dataset column for {hint!r}")


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (Union, types.UnionType):
        rest = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return hint
