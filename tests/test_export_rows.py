"""The export's rows against their one schema (annotation/export_rows.py): every row the export
builds has exactly the typed keys, the HuggingFace dataset's columns are derived from the same
types, and nothing a row carries is dropped on the way into the dataset (`selected_by` was)."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import datasets
import pytest

from annotation.comparison_rows import comparison_preferences, comparison_row
from annotation.config import AgreementConfig
from annotation.export import (
    _regrouped,
    _write_datasets,
    preference_rows,
    rating_row,
    rule_of,
    task_reviews,
)
from annotation.export_rows import (
    ComparisonRow,
    PreferenceRow,
    RatingRow,
    RowMeta,
    dataset_features,
    row_meta,
)

pytestmark = pytest.mark.unit

SELECTED = {"policy": "budget", "parameter": {"budget": 24.0}, "value": 0.9,
            "component": None, "reason": "suspect", "group_size": 1,
            "about": 'reward rises with "i agree"'}  # fmt: skip


def _annotation(id_: int, who: int, *results: dict[str, Any]) -> dict[str, Any]:
    return {"id": id_, "completed_by": who, "updated_at": f"2024-01-0{id_}T00:00:00Z",
            "was_cancelled": False, "result": list(results)}  # fmt: skip


def _rated(stars: int, better: str | None = None) -> list[dict[str, Any]]:
    found = [{"from_name": "quality", "type": "rating", "value": {"rating": stars}},
             {"from_name": "failure", "type": "choices",
              "value": {"choices": ["format"]}}]  # fmt: skip
    if better:
        found.append({"from_name": "better_response", "type": "textarea",
                      "value": {"text": [better]}})  # fmt: skip
    return found


def _single_task() -> dict[str, Any]:
    data = {"sample_id": "s-1", "prompt": "Name a colour.", "response": "No.", "run_id": "r",
            "step": 2, "reward": 0.1, "selected_by": SELECTED}  # fmt: skip
    votes = [_annotation(1, 10, *_rated(2, "Blue.")), _annotation(2, 11, *_rated(3))]
    return {"id": 7, "data": data, "annotations": votes}


def _comparison_task() -> dict[str, Any]:
    shown = [{"label": label, "sample_id": f"s{label}", "response": f"text {label}", "reward": 0.5}
             for label in "ABCD"]  # fmt: skip
    verdict = [{"from_name": "best", "type": "choices", "value": {"choices": ["A"]}},
               {"from_name": "worst", "type": "choices", "value": {"choices": ["D"]}}]  # fmt: skip
    data = {"sample_id": "c-1", "run_id": "r", "step": 0, "prompt": "p", "compare": shown,
            "selected_by": SELECTED}  # fmt: skip
    return {"id": 8, "data": data, "annotations": [_annotation(1, 10, *verdict)]}


def _keys(typed: type) -> set[str]:
    return set(typing.get_type_hints(typed))


def test_a_rating_row_and_its_preferences_have_exactly_the_typed_keys() -> None:
    row = rating_row(_single_task())
    assert row is not None
    assert set(row) == _keys(RatingRow) and set(row["meta"]) == _keys(RowMeta)
    assert row["meta"]["selected_by"] == SELECTED
    [preference] = preference_rows(row, AgreementConfig(preferences="all"))
    assert set(preference) == _keys(PreferenceRow) and set(preference["meta"]) == _keys(RowMeta)


def test_a_comparison_row_and_its_preferences_have_exactly_the_typed_keys() -> None:
    task = _comparison_task()
    row = comparison_row(task, task_reviews(task), AgreementConfig())
    assert row is not None and set(row) == _keys(ComparisonRow)
    assert set(row["meta"]) == set(typing.get_type_hints(ComparisonRow)["meta"].__annotations__)
    preferences = comparison_preferences(row)
    assert len(preferences) == 5  # best-and-worst of 4
    for preference in preferences:
        assert set(preference) == _keys(PreferenceRow) and set(preference["meta"]) == _keys(RowMeta)
        assert preference["meta"]["selected_by"] == SELECTED  # why the group was picked


def test_an_older_row_is_read_with_every_key() -> None:
    older = {"prompt": "p", "response": "r", "rating": 2, "categories": [], "sample_id": "s",
             "meta": {"run_id": "r", "annotator_id": 3, "task_id": 1}}  # fmt: skip
    upgraded = _regrouped(older, rule_of(AgreementConfig()))
    assert set(upgraded["meta"]) == _keys(RowMeta) and upgraded["meta"]["reviewers"] == 1


def test_the_dataset_keeps_every_field_a_row_carries(tmp_path: Path) -> None:
    row = rating_row(_single_task())
    task = _comparison_task()
    compared = comparison_row(task, task_reviews(task), AgreementConfig())
    assert row is not None and compared is not None
    preferences = preference_rows(row, AgreementConfig(preferences="all"))
    preferences += comparison_preferences(compared)
    _write_datasets(tmp_path / "annotations.hf", [row], preferences)
    on_disk = datasets.load_from_disk(str(tmp_path / "annotations.hf"))
    assert on_disk["ratings"][0] == row  # nothing dropped, nothing added
    assert on_disk["preferences"].to_list() == preferences
    assert on_disk["ratings"][0]["meta"]["selected_by"]["parameter"] == {"budget": 24.0}


def test_the_columns_come_from_the_types() -> None:
    features = dataset_features(RatingRow, datasets)
    assert set(features) == _keys(RatingRow) and set(features["meta"]) == _keys(RowMeta)
    assert isinstance(features["meta"]["selected_by"], datasets.Json)
    assert features["meta"]["reviews"].feature["suggestion"]["accepted"] == datasets.Value("bool")
    with pytest.raises(TypeError, match="not a field of RowMeta: colour"):
        row_meta(colour="blue")
