"""RolloutRecord: built from a sample, JSON-native, deterministic ids, capped texts, and one-line
errors for the payloads a worker must quarantine."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

import pytest

from rl.samples import Sample, make_sample_id
from sampling.records import (
    MAX_REWARD_DETAILS,
    SAMPLE_ID_PATTERN,
    RecordError,
    RolloutRecord,
    Selection,
    parse_record,
    record_size_bytes,
    utc_timestamp,
)

pytestmark = pytest.mark.unit

NOW = datetime(2024, 5, 1, 12, 30, 45, 123456, tzinfo=timezone.utc)


def make_sample(**changes: Any) -> Sample:
    fields: dict[str, Any] = {
        "index": 3,
        "group_id": 1,
        "prompt": "What is 2 + 2?",
        "response": "5",
        "prompt_ids": (1, 2, 3),
        "response_ids": (4,),
        "truncated": False,
        "reward": 0.1,
        "reward_details": MappingProxyType({"correct": 0.0, "format": 1.0}),
        "advantage": -0.5,
    }
    return Sample(**{**fields, **changes})


def make_record(sample: Sample | None = None, **changes: Any) -> RolloutRecord:
    arguments: dict[str, Any] = {
        "run_id": "run-1",
        "step": 7,
        "rank": 0,
        "model_name_or_path": "./models/tiny",
        "checkpoint_step": 5,
        "generation": {"temperature": 1.0, "max_new_tokens": 64, "do_sample": True, "mode": "x"},
        "selection": Selection(policy="threshold", parameter={"threshold": 0.2}, value=0.1),
        "now": NOW,
    }
    return RolloutRecord.from_sample(sample or make_sample(), **{**arguments, **changes})


def through_json(record: RolloutRecord) -> Any:
    return json.loads(json.dumps(record.model_dump(mode="json")))


def error_line(data: Any) -> str:
    with pytest.raises(RecordError) as caught:
        parse_record(data)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- from_sample and JSON ---


def test_from_sample_round_trips_through_json() -> None:
    record = make_record()
    assert parse_record(through_json(record)) == record
    assert parse_record(json.dumps(record.model_dump(mode="json"))) == record  # JSON text too
    assert record.schema_version == 4
    assert record.reward == 0.1 and record.advantage == -0.5
    assert record.reward_details == {"correct": 0.0, "format": 1.0}
    assert record.model.name_or_path == "./models/tiny" and record.model.checkpoint_step == 5
    assert record.generation == {
        "temperature": 1.0,
        "max_new_tokens": 64,
        "do_sample": True,
        "mode": "x",
    }
    assert type(parse_record(through_json(record)).generation["max_new_tokens"]) is int
    assert record.created_at == "2024-05-01T12:30:45.123Z"
    assert (record.prompt_cut, record.response_cut) == (False, False)
    assert (record.prompt_chars, record.response_chars) == (14, 1)


def test_sample_id_is_deterministic_and_valid() -> None:
    record = make_record()
    assert record.sample_id == make_record().sample_id
    assert record.sample_id == make_sample_id("run-1", 7, 0, 3, "What is 2 + 2?", "5")
    assert re.fullmatch(SAMPLE_ID_PATTERN, record.sample_id)
    # Only identity and texts count: a later time or another reward is the same sample.
    assert make_record(now=NOW + timedelta(hours=1)).sample_id == record.sample_id
    assert make_record(make_sample(reward=0.9)).sample_id == record.sample_id


@pytest.mark.parametrize(
    "change",
    [
        {"run_id": "run-2"},
        {"step": 8},
        {"rank": 1},
        {"sample": make_sample(index=4)},
        {"sample": make_sample(prompt="What is 2 + 3?")},
        {"sample": make_sample(response="4")},
    ],
)
def test_any_identity_change_changes_the_sample_id(change: dict[str, Any]) -> None:
    assert make_record(**change).sample_id != make_record().sample_id


def test_non_finite_floats_become_none_or_a_name() -> None:
    sample = make_sample(
        reward=math.nan,
        advantage=math.inf,
        reward_details={"a": -math.inf, "b": 0.5},
    )
    record = make_record(sample, generation={"temperature": math.inf})
    assert record.reward is None and record.advantage is None
    assert record.reward_details == {"a": None, "b": 0.5}
    assert record.generation == {"temperature": "inf"}
    text = json.dumps(record.model_dump(mode="json"), allow_nan=False)  # raises on NaN/inf
    assert parse_record(json.loads(text)) == record


def test_reward_details_keep_the_first_64_names() -> None:
    details = {f"c{number:03d}": float(number) for number in range(100)}
    record = make_record(make_sample(reward_details=details))
    assert list(record.reward_details) == [f"c{number:03d}" for number in range(64)]
    assert MAX_REWARD_DETAILS == 64


def test_a_huge_response_is_cut_with_flags_and_its_length_kept() -> None:
    huge = "x" * 1_000_000
    sample = make_sample(response=huge)
    record = make_record(sample)
    assert record.response == "x" * 20_000
    assert record.response_cut and not record.prompt_cut
    assert record.response_chars == 1_000_000
    assert record.sample_id == make_sample_id("run-1", 7, 0, 3, sample.prompt, huge)
    assert record_size_bytes(record) < 20_000 + 4_000
    assert record_size_bytes(record) == len(json.dumps(record.model_dump(mode="json")))
    assert parse_record(through_json(record)) == record


def test_max_text_chars_caps_the_prompt_too() -> None:
    record = make_record(max_text_chars=5)
    assert (record.prompt, record.prompt_cut, record.prompt_chars) == ("What ", True, 14)
    assert (record.response, record.response_cut) == ("5", False)
    with pytest.raises(ValueError, match="max_text_chars"):
        make_record(max_text_chars=0)


def test_a_lone_surrogate_is_replaced_so_the_text_is_valid_utf8() -> None:
    record = make_record(make_sample(response="ok \ud800 then"))
    assert record.response == "ok \ufffd then"
    record.model_dump_json()  # pydantic's UTF-8 writer rejects a lone surrogate
    assert record.sample_id == make_sample_id("run-1", 7, 0, 3, "What is 2 + 2?", "ok \ud800 then")


def test_timestamps_are_utc_with_z() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert utc_timestamp(datetime(2024, 1, 1, 14, 0, tzinfo=plus_two)) == "2024-01-01T12:00:00.000Z"
    assert utc_timestamp(datetime(2024, 1, 1, 12, 0)) == "2024-01-01T12:00:00.000Z"  # naive: UTC
    assert utc_timestamp().endswith("Z")


def test_record_is_frozen() -> None:
    record = make_record()
    with pytest.raises(ValueError):
        record.step = 8  # type: ignore[misc]


def test_bad_arguments_to_from_sample_give_one_line() -> None:
    with pytest.raises(RecordError, match=r"^run_id: string should have at least 1 character"):
        make_record(run_id="")


# --- parse_record errors ---


def test_missing_field() -> None:
    data = through_json(make_record())
    del data["response"]
    assert error_line(data) == "response: field required"


def test_wrong_type() -> None:
    data = through_json(make_record())
    data["step"] = "7"  # strict: a string is not a step
    assert error_line(data) == "step: input should be a valid integer, got '7'"
    data["step"] = True
    assert error_line(data) == "step: input should be a valid integer, got True"


def test_wrong_type_in_a_nested_field() -> None:
    data = through_json(make_record())
    data["model"]["checkpoint_step"] = "five"
    assert error_line(data) == "model.checkpoint_step: input should be a valid integer, got 'five'"
    data = through_json(make_record())
    data["generation"]["temperature"] = [1.0]
    assert error_line(data) == (
        "generation.temperature: must be a finite number, a string or a boolean, got [1.0]"
    )


@pytest.mark.parametrize(
    ("path", "value", "shown"),
    [
        (("run_id",), "r" * 257, "run_id: string should have at most 256 characters"),
        (("model", "name_or_path"), "m" * 4097,
         "model.name_or_path: string should have at most 4096 characters"),
        (("generation", "stop"), "s" * 1001, "generation.stop: must be at most 1000 characters"),
        (("generation",), {f"k{i}": i for i in range(65)},
         "generation: dictionary should have at most 64 items"),
        (("selected_by", "policy"), "p" * 257,
         "selected_by.policy: string should have at most 256 characters"),
        (("selected_by", "parameter"), {"q" * 257: 0.1},
         f"selected_by.parameter.{'q' * 37}....[key]: string should have at most 256 characters"),
        (("reward_details",), {"d" * 257: 0.1},
         f"reward_details.{'d' * 37}....[key]: string should have at most 256 characters"),
    ],
)  # fmt: skip
def test_every_field_a_task_shows_is_bounded(path: tuple[str, ...], value: Any, shown: str) -> None:
    """A worker reads records anyone who can write to Redis wrote; it copies `selected_by` into
    each task and may title a project with the run id. The line that says so stays short."""
    data = through_json(make_record())
    *parents, last = path
    target = data
    for name in parents:
        target = target[name]
    target[last] = value
    line = error_line(data)
    assert line.startswith(shown) and len(line) < 200, line


def test_extra_field() -> None:
    data = through_json(make_record())
    data["colour"] = "red"
    assert error_line(data) == "colour: unexpected field"


def test_several_problems_stay_on_one_line() -> None:
    data = through_json(make_record())
    for name in ("run_id", "step", "rank", "prompt", "response"):
        del data[name]
    assert error_line(data) == (
        "run_id: field required; step: field required; rank: field required (and 2 more)"
    )


@pytest.mark.parametrize(
    ("version", "shown"),
    [(5, "5"), (0, "0"), ("1", "'1'"), (True, "True"), (None, "None")],
)
def test_unknown_schema_version(version: Any, shown: str) -> None:
    data = through_json(make_record())
    data["schema_version"] = version
    assert error_line(data) == (
        f"schema_version: {shown} is not supported (this worker reads 1, 2, 3 and 4)"
    )


def test_a_version_1_record_still_reads_with_no_redactions() -> None:
    data = through_json(make_record())
    data["schema_version"] = 1
    del data["redactions"]
    record = parse_record(data)
    assert record.schema_version == 1 and record.redactions == {}


def test_a_version_2_record_still_reads_with_nothing_about_its_reason() -> None:
    data = through_json(make_record())
    data["schema_version"] = 2
    del data["selected_by"]["about"]
    record = parse_record(data)
    assert record.schema_version == 2 and record.selected_by.about is None


@pytest.mark.parametrize(
    ("data", "kind"),
    [([1, 2], "array"), (None, "null"), (3, "number"), ("[1]", "array"), (b"true", "boolean")],
)
def test_non_object_input(data: Any, kind: str) -> None:
    assert error_line(data) == f"record: expected a JSON object, got {kind}"


def test_invalid_json_text() -> None:
    assert error_line("{not json").startswith("record: not valid JSON (")


def test_non_finite_and_bad_values_are_rejected() -> None:
    data = through_json(make_record())
    data["reward"] = math.nan
    assert error_line(data) == "reward: input should be a finite number, got nan"
    data = through_json(make_record())
    data["sample_id"] = "has space"
    assert error_line(data).startswith("sample_id: string should match pattern")
    data = through_json(make_record())
    for bad_time in ("2024-05-01 12:30:45", "2024-05-01T12:30:45+00:00", "2024-05-01T12:30:45Z\n"):
        data["created_at"] = bad_time
        assert error_line(data).startswith("created_at: must be an ISO-8601 UTC time ending in Z")
    data = through_json(make_record())
    data["created_at"] = "2024-02-30T00:00:00Z"
    assert error_line(data) == (
        "created_at: must be a real date and time (2024-02-30 is not), got '2024-02-30T00:00:00Z'"
    )


def test_cut_flags_must_agree_with_the_lengths() -> None:
    data = through_json(make_record())
    data["response_chars"] = 500  # claims a longer original, but not cut
    assert error_line(data) == (
        "record: response_chars=500 and response_cut=False disagree with the 1 characters of "
        "response"
    )


def test_sample_ids_stay_the_same_across_versions() -> None:
    """The id is the key of exactly-once end to end (the imported set, export dedup): a new
    version that computed other ids would make second tasks for samples already reviewed."""
    assert make_sample_id("run-x", 10, 3, 255, "héllo", "a\x00b") == (
        "s-06a5cc00b7bd4b9e2c4ff81542e4af72"
    )
