"""Blind review (`annotation.blind_review`, the default): before deciding, a reviewer reads
nothing that names the reward or the reason the sample was picked; the reward waits in a panel
that opens once a rating (a comparison: the best) is chosen; the export records whether each
review was blind. What Label Studio renders is checked in headless Chromium
(tests/test_reviewer_ui.py, tests/test_comparison_review.py); here, the task data, the forms,
the Data Manager view, the instructions and the export rows."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.compare_form import REWARDS_FIELD, comparison_task, labeling_config
from annotation.comparison_rows import comparison_preferences, comparison_row
from annotation.config import AgreementConfig, AnnotationConfig, SuggestionsConfig
from annotation.export import preference_rows, rating_row, task_reviews
from annotation.importer import BatchOutcome, ImportContext, _task
from annotation.labelstudio import task_from_record
from annotation.review_display import trace_line
from annotation.review_form import fields_by_moment, reward_shown_before_deciding
from annotation.review_instructions import (
    BLIND_VIEW_TITLE,
    REVIEW_VIEW_TITLE,
    REWARD_COLUMN,
    review_instructions,
    review_view_data,
)
from annotation.suggestions import build_suggester
from sampling.records import RolloutRecord
from tests.helpers.labelstudio import REVIEW_XML_PATH
from tests.helpers.records import comparison_records, rollout_record

pytestmark = pytest.mark.unit

REVIEW_XML = REVIEW_XML_PATH.read_text()
REWARD = 0.0731  # a value no other field of the task would show by chance
SELECTIONS = [  # every kind of reason the routing core gives, each naming or implying the reward
    {"policy": "threshold", "parameter": {"threshold": 0.2}, "value": REWARD},
    {"policy": "budget", "parameter": {"budget": 50.0}, "value": REWARD, "reason": "low_reward"},
    {"policy": "budget", "value": REWARD, "reason": "audit_high_reward", "group_size": 3},
    {"policy": "search", "value": REWARD, "reason": "search", "about": "reward > 2"},
    {"policy": "hacking_watch", "value": REWARD, "component": "reward_model", "reason": "suspect"},
]


def record_picked_by(selection: dict[str, Any]) -> dict[str, Any]:
    record = rollout_record(4, run_id="run-b", reward=REWARD)
    record["selected_by"] = {**record["selected_by"], "component": None, "reason": None,
                             "about": None, **selection}  # fmt: skip
    record["reward_details"] = {"keyword": 0.0, "format": REWARD}
    record["reward_weights"] = {"keyword": 1.0, "format": 1.0}
    return RolloutRecord.model_validate(record).model_dump(mode="json")


def shown_before_deciding(form_xml: str) -> tuple[set[str], set[str]]:
    """The fields a form's Text tags show before the reviewer decides, and after."""
    early, late = fields_by_moment(form_xml)
    texts = {
        str(t.get("value")).removeprefix("$") for t in ElementTree.fromstring(form_xml).iter("Text")
    }
    return early & texts, late & texts


def words_of(data: dict[str, Any], fields: set[str]) -> str:
    return "\n".join(str(data.get(field, "")) for field in sorted(fields))


def test_blind_is_the_default() -> None:
    assert AnnotationConfig().blind_review is True
    assert task_from_record(record_picked_by(SELECTIONS[0]))["data"]["blind"] is True


@pytest.mark.parametrize("selection", SELECTIONS, ids=lambda s: s.get("reason") or s["policy"])
def test_a_blind_single_task_shows_no_reward_and_no_reason_until_a_rating(selection) -> None:
    record = record_picked_by(selection)
    data = task_from_record(record)["data"]
    at_once, after = shown_before_deciding(REVIEW_XML)
    seen = words_of(data, at_once)
    assert "reward" not in seen.lower() and "0.0731" not in seen
    for word in (selection["policy"], selection.get("reason"), "threshold", "audit", "low"):
        assert not word or word not in seen
    assert data["trace"].endswith("picked for review") or "near-identical" in data["trace"]
    # The panel that opens after deciding holds the reward and how it was computed.
    assert after == {"reward_text", "reward_details"}
    assert data["reward_text"] == "0.0731"
    assert "format: 0.0731 × weight 1 = 0.0731" in data["reward_details"]


def test_a_review_that_is_not_blind_shows_the_reward_beside_the_response_and_why() -> None:
    data = task_from_record(record_picked_by(SELECTIONS[1]), blind=False)["data"]
    at_once, _ = shown_before_deciding(REVIEW_XML)
    seen = words_of(data, at_once)
    assert "Reward: 0.0731" in seen and "format: 0.0731 × weight 1 = 0.0731" in seen
    assert "picked by budget (low reward): reward 0.0731 (budget 50)" in seen
    assert data["blind"] is False


def test_a_blind_comparison_shows_no_reward_and_no_reason_until_the_best_is_picked() -> None:
    records = comparison_records("run-c", "Name a colour.", ["Blue.", "Red.", "No."],
                                 [0.91, 0.13, 0.07], size=3)  # fmt: skip
    blind = comparison_task(records[0], 3)["data"]
    at_once, after = shown_before_deciding(labeling_config(3))
    seen = words_of(blind, at_once)
    assert "reward" not in seen.lower() and "picked by" not in seen
    assert not re.search(r"0\.(91|13|07)", seen)
    assert blind["trace"].endswith("picked for review") and blind["blind"] is True
    assert after == {REWARDS_FIELD}
    by_label = {m["label"]: m["reward"] for m in blind["compare"]}
    assert blind[REWARDS_FIELD].splitlines() == [
        f"{label}: reward {reward:.4g}" for label, reward in by_label.items()
    ]
    shown = comparison_task(records[0], 3, blind=False)["data"]
    assert [shown[f"reward_{label}"] for label in by_label] == [
        f"reward {reward:.4g}" for reward in by_label.values()
    ]
    assert "picked by threshold" in shown["trace"] and shown["blind"] is False


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)


@settings(max_examples=200, deadline=None)
@given(
    policy=names,
    reason=st.none() | names,
    about=st.none() | names,
    value=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    component=st.none() | names,
    parameter=st.dictionaries(names, st.floats(allow_nan=False), max_size=3),
    group_size=st.integers(1, 9),
)
def test_a_blind_trace_line_is_run_step_sample_and_picked_for_review_whatever_the_pick(
    policy, reason, about, value, component, parameter, group_size
) -> None:
    selection = dict(policy=policy, reason=reason, about=about, value=value,
                     component=component, parameter=parameter, group_size=group_size)  # fmt: skip
    record = {"run_id": "r-1", "step": 3, "sample_id": "s-9", "selected_by": selection}
    expected = "run r-1 · step 3 · sample s-9 · picked for review"
    if group_size > 1:
        expected += f" · stands for {group_size} near-identical responses"
    assert trace_line(record, blind=True) == expected


def test_a_task_with_a_suggestion_is_not_blind() -> None:
    record = RolloutRecord.model_validate(record_picked_by(SELECTIONS[0]))
    plain = _task(record, None, BatchOutcome())
    assert plain["data"]["blind"] is True and "predictions" not in plain
    suggester = build_suggester(SuggestionsConfig(judge="score_bands"), REVIEW_XML)
    suggested = _task(record, suggester, BatchOutcome())
    assert suggested["predictions"] and suggested["data"]["blind"] is False
    assert _task(record, None, BatchOutcome(), blind=False)["data"]["blind"] is False


# The single review form before blind review: the reward beside the response.
FORM_BEFORE = (
    REVIEW_XML.split("<View visibleWhen")[0].replace(
        '<Text name="reward_shown" value="$reward_shown"/>',
        '<Text name="reward_text" value="$reward_text"/>'
        '<Text name="reward_details" value="$reward_details"/>',
    )
    + "</View>"
)


def test_the_shipped_forms_keep_the_reward_out_of_sight_and_an_older_form_does_not() -> None:
    assert reward_shown_before_deciding(REVIEW_XML) == ()
    assert reward_shown_before_deciding(labeling_config(4)) == ()
    assert reward_shown_before_deciding(FORM_BEFORE) == ("reward_text", "reward_details")
    # In a panel that is there from the start, or after a choice but not in a panel: too early.
    open_panel = REVIEW_XML.replace('visibleWhen="choice-selected"', "")
    assert reward_shown_before_deciding(open_panel) == ("reward_text", "reward_details")
    header = REVIEW_XML.replace("<View>", '<View><Header value="$selected_by"/>', 1)
    assert reward_shown_before_deciding(header) == ("selected_by",)


class FormKeepingClient:
    """A Label Studio that keeps the project's form it is given, or `kept` (a project whose
    star reviews kept its older form)."""

    def __init__(self, kept: str | None = None) -> None:
        self.kept = kept
        self.given = ""

    def ensure_project(self, title: str, xml: str, reviews: int, blind: bool) -> int:
        self.given = xml
        return 11

    def labeling_config(self, project_id: int) -> str:
        return self.kept or self.given


def test_a_project_whose_form_shows_the_reward_early_exports_its_reviews_as_not_blind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = AnnotationConfig(labeling_config=str(REVIEW_XML_PATH))
    shipped = ImportContext(config, FormKeepingClient(), None, "q")  # type: ignore[arg-type]
    assert shipped._ensure("p") == 11 and shipped.blind_in(11) is True
    older = ImportContext(config, FormKeepingClient(FORM_BEFORE), None, "q")  # type: ignore[arg-type]
    older._ensure("p")
    assert older.blind_in(11) is False
    assert "shows reward_text, reward_details before the reviewer decides" in caplog.text
    record = RolloutRecord.model_validate(record_picked_by(SELECTIONS[0]))
    task = _task(record, None, BatchOutcome(), None, True, older.blind_in(11))
    assert task["data"]["blind"] is False
    assert task["data"]["trace"].endswith("picked for review")  # still hides what it can
    chosen_open = AnnotationConfig(labeling_config=str(REVIEW_XML_PATH), blind_review=False)
    not_blind = ImportContext(chosen_open, FormKeepingClient(), None, "q")  # type: ignore[arg-type]
    not_blind._ensure("p")
    assert not_blind.blind_in(11) is False


def _annotation(*results: dict[str, Any]) -> dict[str, Any]:
    return {"id": 1, "completed_by": 5, "updated_at": "2024-01-01T00:00:00Z",
            "was_cancelled": False, "result": list(results)}  # fmt: skip


def test_the_export_records_whether_each_review_was_blind() -> None:
    rated = [{"from_name": "quality", "type": "choices", "value": {"choices": ["2"]}},
             {"from_name": "better_response", "type": "textarea",
              "value": {"text": ["Blue."]}}]  # fmt: skip
    for flag, expected in ((True, True), (False, False), (None, False)):  # None: older task
        data = task_from_record(record_picked_by(SELECTIONS[0]))["data"]
        if flag is None:
            del data["blind"]
        else:
            data["blind"] = flag
        row = rating_row({"id": 3, "data": data, "annotations": [_annotation(*rated)]})
        assert row is not None and row["meta"]["blind"] is expected
        [preference] = preference_rows(row, AgreementConfig(preferences="all"))
        assert preference["meta"]["blind"] is expected

    records = comparison_records("run-e", "Q?", ["Blue.", "Red.", "No."], [0.9, 0.1, 0.0], size=3)
    verdict = [{"from_name": "best", "type": "choices", "value": {"choices": ["A"]}},
               {"from_name": "worst", "type": "choices", "value": {"choices": ["C"]}}]  # fmt: skip
    for blind in (True, False):
        task = {"id": 4, **comparison_task(records[0], 3, blind), "annotations": [
            _annotation(*verdict)]}  # fmt: skip
        row = comparison_row(task, task_reviews(task), AgreementConfig())
        assert row is not None and row["meta"]["blind"] is blind
        assert {p["meta"]["blind"] for p in comparison_preferences(row)} == {blind}


def test_the_blind_view_hides_every_reward_column_and_keeps_the_order_tasks_came_in() -> None:
    blind, open_ = review_view_data(), review_view_data(blind=False)
    assert blind["title"] == BLIND_VIEW_TITLE and open_["title"] == REVIEW_VIEW_TITLE
    assert blind["ordering"] == ["tasks:id"] and open_["ordering"] == [REWARD_COLUMN]
    hidden_keys = {"reward", "reward_text", "reward_details", "reward_shown", REWARDS_FIELD,
                   "reward_A", "reward_H", "compare", "selected_by"}  # fmt: skip
    for mode in ("explore", "labeling"):
        hidden = set(blind["hiddenColumns"][mode])
        assert {f"tasks:data.{key}" for key in hidden_keys} <= hidden, mode
        assert "tasks:predictions_results" in hidden
    # Not blind: the reward is listed and shown beside the task being labeled.
    assert REWARD_COLUMN not in open_["hiddenColumns"]["explore"]
    assert REWARD_COLUMN not in open_["hiddenColumns"]["labeling"]


def test_the_blind_instructions_say_the_reward_waits_and_not_why_a_task_was_picked() -> None:
    blind, open_ = review_instructions(REVIEW_XML), review_instructions(REVIEW_XML, blind=False)
    assert "scored low" not in blind and "says why it was picked" not in blind
    assert "not shown until you have decided" in blind
    assert "value × weight = contribution" in blind  # still explained, for the panel
    assert "scored low" in open_ and "the reward is a hint, not the answer" in open_


def test_a_comparisons_responses_come_in_an_order_that_does_not_follow_the_reward() -> None:
    """Where the highest-rewarded response sits, and whether the order follows the rewards,
    varies from group to group: position says nothing of the reward model's verdict."""
    best_at, by_reward = [], 0
    for group in range(40):
        records = comparison_records(f"run-{group}", "Q?", ["a.", "b.", "c.", "d."],
                                     [0.9, 0.1, 0.6, 0.0], size=4)  # fmt: skip
        rewards = [m["reward"] for m in comparison_task(records[0], 4)["data"]["compare"]]
        best_at.append(rewards.index(max(rewards)))
        by_reward += rewards in (sorted(rewards), sorted(rewards, reverse=True))
    assert set(best_at) == {0, 1, 2, 3}
    assert by_reward <= 10  # 2 of the 24 orders follow the rewards: ~3 of 40 by chance
