"""What a reviewer reads beside a response: visible whitespace and odd bytes, the trace line,
the reward by component (annotation/review_display.py, through task_from_record)."""

from __future__ import annotations

import math
from dataclasses import replace
from types import MappingProxyType

import pytest

from annotation.labelstudio import task_from_record
from annotation.review_display import reward_breakdown, trace_line, visible_response
from sampling.config import SamplingConfig
from sampling.records import RolloutRecord
from sampling.sources.sampler import LowRewardSampler
from tests.helpers.records import rollout_record

pytestmark = pytest.mark.unit


def test_leading_and_trailing_whitespace_is_marked_inner_text_is_kept() -> None:
    assert visible_response("  two\tinner  spaces\n") == "··two\tinner  spaces⏎\n"
    assert visible_response("\tx") == "→x"
    assert visible_response("line one\nline two") == "line one\nline two"
    assert visible_response("   ") == "···"
    assert visible_response("") == "(empty response)"


def test_control_and_invisible_characters_become_symbols() -> None:
    assert visible_response("a\x00b\x1bc\x7fd\re") == "a⟨NUL⟩b⟨ESC⟩c⟨DEL⟩d⟨CR⟩e"
    assert visible_response("zero\u200bwidth\ufeff") == "zero⟨U+200B⟩width⟨U+FEFF⟩"
    assert visible_response("bidi\u202eevil") == "bidi⟨U+202E⟩evil"
    assert visible_response("nb\u00a0sp") == "nb⟨U+00A0⟩sp"
    assert visible_response("café ✓") == "café ✓"  # ordinary text untouched


def test_trace_line_names_run_step_sample_and_why_it_was_picked() -> None:
    record = rollout_record(5, run_id="run-7", reward=0.05)
    line = trace_line(record)
    assert line == (
        f"run run-7 · step 0 · sample {record['sample_id']} · "
        "picked by threshold: reward 0.05 (threshold 0.2)"
    )


def test_trace_line_says_how_many_near_identical_responses_a_sample_stands_for() -> None:
    record = rollout_record(1)
    record["selected_by"] = {
        "policy": "budget",
        "parameter": {"budget": 50.0},
        "value": 0.1,
        "component": None,
        "reason": "low_reward",
        "group_size": 4,
    }
    line = trace_line(record)
    assert "picked by budget (low reward): reward 0.1 (budget 50)" in line
    assert line.endswith("stands for 4 near-identical responses")
    record["selected_by"]["group_size"] = 1
    assert "near-identical" not in trace_line(record)


def test_reward_breakdown_shows_weight_and_contribution_per_component() -> None:
    text = reward_breakdown(
        0.1,
        {"format": 1.0, "keyword": 0.0, "reward_model/spread": 0.3},
        {"format": 0.1, "keyword": 1.0},
    )
    assert text.splitlines() == [
        "format: 1 × weight 0.1 = 0.1",
        "keyword: 0 × weight 1 = 0",
        "reward_model/spread: 0.3 (not part of the total)",
        "total: 0.1 (the sum of the contributions)",
    ]


def test_reward_breakdown_without_weights_says_they_were_not_recorded() -> None:
    text = reward_breakdown(None, {"format": math.nan}, {})
    assert text.splitlines() == [
        "format: n/a",
        "total: n/a (component weights were not recorded by the trainer)",
    ]
    assert reward_breakdown(0.5, {}, {}) == "(no components recorded)\ntotal: 0.5"


def test_task_carries_the_display_fields_and_keeps_the_response_verbatim() -> None:
    record = rollout_record(2, response="  leading spaces\x00")
    data = task_from_record(record)["data"]
    assert data["response"] == "  leading spaces\x00"
    assert data["response_visible"] == "··leading spaces⟨NUL⟩"
    assert data["trace"].startswith("run run-1 · step 0 · sample ")
    assert data["reward"] == 0.05 and isinstance(data["reward"], float)


def test_the_sampler_puts_the_trainers_weights_in_the_record_and_the_task_shows_them(
    closing,
) -> None:
    from tests.test_sampler import FakeProducer, context

    producer = FakeProducer()
    hook = closing(LowRewardSampler(SamplingConfig(threshold=0.2), producer))
    ctx = replace(context([0.1]), reward_weights=MappingProxyType({"keyword": 0.5, "extra": 2}))
    hook(ctx)
    record = RolloutRecord.model_validate(producer.records[0])
    assert record.reward_weights == {"keyword": 0.5}  # only the components the record keeps
    data = task_from_record(record.model_dump(mode="json"))["data"]
    assert data["reward_details"].splitlines()[0] == "keyword: 0.1 × weight 0.5 = 0.05"


def test_trace_line_quotes_the_query_that_found_a_searched_sample() -> None:
    record = rollout_record(2)
    record["selected_by"] = {"policy": "search", "parameter": {}, "value": 2.5,
                             "component": None, "reason": "search",
                             "about": 'reward > 2 AND response CONTAINS "I agree"'}  # fmt: skip
    assert trace_line(record).endswith(
        'picked by search "reward > 2 AND response CONTAINS \\"I agree\\"": reward 2.5'
    )
