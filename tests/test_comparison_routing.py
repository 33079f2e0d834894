"""Comparison review on the routing side and in the loop's reviewer, without services: groups
as tasks, the record's `compare`, the budget over groups, the verdict of a rating reviewer, the
config that turns it on, and the credit a comparison gives the adaptive budget."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from annotation.compare_form import comparison_task, labeling_config
from annotation.comparison import ComparisonError, Verdict, comparison_pairs, labels_for
from annotation.review_form import ReviewForm
from lowtide.config.run_config import ServiceConfig
from lowtide.loop.reviewer import Review, compared_review, comparison_result
from sampling.batch import BatchInfo, PlainSample
from sampling.config import BudgetConfig, SamplingConfig
from sampling.records import RecordError, parse_record
from sampling.selection.budget_learning import Compared, credits
from sampling.selection.group_candidates import group_candidates, order_uncertainty
from sampling.wiring import build_router
from tests.helpers.records import CapturingProducer, comparison_records

pytestmark = pytest.mark.unit


def group(prompt: str, rewards: list[float], group_id: int = 0, start: int = 0) -> list:
    return [
        PlainSample(prompt, f"answer {group_id}.{i}", r, {"keyword": r}, group_id, start + i)
        for i, r in enumerate(rewards)
    ]


def routed(config: dict[str, Any], samples: list, step: int = 0) -> list[dict[str, Any]]:
    producer = CapturingProducer()
    router = build_router(SamplingConfig.model_validate({"watch": {"enabled": False}, **config}),
                    producer)  # fmt: skip
    router.route(samples, BatchInfo("run", step))
    router.close(5.0)
    return producer.records


def test_the_pairs_of_a_verdict_are_best_over_all_and_all_over_worst() -> None:
    assert comparison_pairs(["a", "b", "c", "d"], Verdict("B", "D")) == [
        ("b", "a"), ("b", "c"), ("b", "d"), ("a", "d"), ("c", "d"),
    ]  # fmt: skip
    assert comparison_pairs(["a", "b"], Verdict("B", "A")) == [("b", "a")]
    assert len(comparison_pairs(list("abc"), Verdict("A", "C"))) == 3  # all orders of 3
    with pytest.raises(ComparisonError, match="both the best and the worst"):
        comparison_pairs(["a", "b"], Verdict("A", "A"))
    with pytest.raises(ComparisonError, match="none of A, B"):
        comparison_pairs(["a", "b"], Verdict("C", "A"))
    with pytest.raises(ComparisonError, match="2 to 8"):
        labels_for(9)


def test_a_group_with_two_low_rewards_is_one_task_showing_the_best_and_a_spread() -> None:
    rewards = [0.9, 0.1, 0.6, 0.0, 0.8, 0.5]
    records = routed({"threshold": 0.2, "compare_size": 4}, group("Q?", rewards))
    assert len(records) == 1
    record = parse_record(records[0])
    shown = {member.response: member.reward for member in record.compare}
    assert len(shown) == 4 and "answer 0.0" in shown  # the group's highest reward is shown
    assert record.response in shown and record.reward in (0.1, 0.0)
    assert record.sample_id.startswith("c-") and record.schema_version == 4
    # The same group routed again (a retried batch) is the same task id.
    assert (
        routed({"threshold": 0.2, "compare_size": 4}, group("Q?", rewards))[0]["sample_id"]
        == record.sample_id
    )


def test_the_caps_count_tasks_a_group_is_one_however_many_of_it_are_picked() -> None:
    # The three lowest rewards are all of group 0: counting samples, a cap of 2 would send one
    # task (group 0's) and leave group 1 out.
    samples = [*group("Q?", [0.0, 0.01, 0.02, 0.9]), *group("R?", [0.1, 0.8, 0.7], 1, 4)]
    for cap in ({"max_per_step": 2}, {"max_per_minute": 2}):
        records = routed({"threshold": 0.2, "compare_size": 4, **cap}, samples)
        assert sorted(parse_record(r).prompt for r in records) == ["Q?", "R?"], cap


def test_a_selected_sample_alone_in_its_group_is_counted_not_sent() -> None:
    producer = CapturingProducer()
    router = build_router(SamplingConfig.model_validate(
        {"threshold": 0.2, "compare_size": 4, "watch": {"enabled": False}}), producer)  # fmt: skip
    counts = router.route([*group("Q?", [0.0]), *group("R?", [0.1, 0.9], 1, 1)], BatchInfo("r", 0))
    assert counts.submitted == 1 and len(producer.records) == 1
    assert router.metrics(counts)["sampling/compare_alone"] == (1, "sum")


def test_redaction_gives_a_value_the_same_placeholder_in_every_response_of_the_task() -> None:
    samples = [
        PlainSample("Mail me at ann@example.com", f"Sent to ann@example.com ({i})", r, {}, 0, i)
        for i, r in enumerate([0.0, 0.5, 0.9])
    ]
    record = parse_record(routed({"threshold": 0.2, "compare_size": 3}, samples)[0])
    assert "ann@example.com" not in str(record.model_dump())
    placeholders = {member.response.split(" (")[0] for member in record.compare}
    assert placeholders == {"Sent to <EMAIL_1>"} and record.prompt == "Mail me at <EMAIL_1>"
    assert record.redactions == {"EMAIL": 4}


def test_a_comparison_record_needs_two_distinct_responses() -> None:
    record = comparison_records("r", "Q?", ["a", "b", "c"], [0.0, 0.5, 0.9])[0]
    with pytest.raises(RecordError, match="compare: a comparison needs 2 to 8"):
        parse_record({**record, "compare": record["compare"][:1]})
    twice = [record["compare"][0], record["compare"][0]]
    with pytest.raises(RecordError, match="shows each sample once"):
        parse_record({**record, "compare": twice})


def test_the_budget_spends_one_review_per_group_and_scores_groups_by_their_members() -> None:
    samples = [
        *group("P0", [0.0, 0.1, 0.2, 0.3], 0, 0),
        *group("P1", [0.9, 0.95, 0.8, 0.85], 1, 4),
        *group("P2", [0.4, 0.6, 0.5, 0.45], 2, 8),
    ]
    records = routed(
        {"policy": "budget", "review_budget": {"reviews": 2, "per": "round"}, "compare_size": 4},
        samples,
    )
    assert len(records) == 2
    prompts = [record["prompt"] for record in records]
    assert len(set(prompts)) == 2 and all(len(record["compare"]) == 4 for record in records)
    reasons = {record["selected_by"]["reason"] for record in records}
    assert reasons <= {"random", "audit_high_reward", "uncertain", "low_reward"}


def test_a_group_is_uncertain_where_its_rewards_lie_within_their_spread() -> None:
    settings = BudgetConfig()
    spread = settings.uncertainty_key

    def members(rewards: list[float], spreads: list[float]) -> list[PlainSample]:
        return [PlainSample("p", f"r{i}", r, {spread: s}, 0, i)
                for i, (r, s) in enumerate(zip(rewards, spreads, strict=True))]  # fmt: skip

    sure = order_uncertainty(members([0.0, 1.0, 2.0], [0.1] * 3), settings)
    unsure = order_uncertainty(members([0.0, 0.1, 0.2], [0.5] * 3), settings)
    assert unsure > 0.99 and sure < 0.02
    found = group_candidates(members([0.0, 0.1, 0.2], [0.5] * 3), [0, 0, 0], settings)
    assert len(found) == 1 and found[0].members == (0, 1, 2)
    assert found[0].candidate.reward_details[spread] == pytest.approx(unsure)


def test_a_group_the_retrained_model_orders_unlike_its_first_is_uncertain() -> None:
    settings = BudgetConfig()

    def members(now: list[float], before: list[float]) -> list[PlainSample]:
        details = [{"reward_model": n, "reward_model/previous": b, settings.uncertainty_key: 9.0}
                   for n, b in zip(now, before, strict=True)]  # fmt: skip
        pairs = enumerate(zip(now, details, strict=True))
        return [PlainSample("p", f"r{i}", n, d, 0, i) for i, (n, d) in pairs]

    # Far apart and with a spread that would call every pair unsure: the first model's order
    # decides, not the spread.
    agreed = order_uncertainty(members([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]), settings)
    reversed_ = order_uncertainty(members([0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0]), settings)
    one_swap = order_uncertainty(members([0.0, 1.0, 2.0, 3.0], [1.0, 0.0, 2.0, 3.0]), settings)
    assert agreed < 0.02 and reversed_ > 0.99
    assert one_swap == pytest.approx(1 / 6, abs=0.02)


def test_a_rating_reviewer_compares_by_rating_each_response() -> None:
    task = comparison_task(
        comparison_records("r", "Q?", ["good one", "bad", "fine"], [0.1, 0.0, 0.5], size=3)[0], 3
    )["data"]

    def rate(data: dict[str, Any]) -> Review:
        rating = {"good one": 5, "bad": 1, "fine": 3}[data["response"]]
        return Review(rating, ("format",) if rating == 1 else (), "better" if rating == 1 else None)

    verdict = compared_review(rate, task, ("format",))
    labels = {m["response"]: m["label"] for m in task["compare"]}
    assert (verdict.best, verdict.worst) == (labels["good one"], labels["bad"])
    assert verdict.categories == ("format",) and verdict.better == "better"
    result = {item["from_name"]: item["value"] for item in comparison_result(verdict)}
    assert result["best"] == {"choices": [labels["good one"]]}
    # All alike: still two different picks, as the form requires.
    alike = compared_review(lambda data: Review(3), task)
    assert alike.best != alike.worst


def test_the_form_is_made_for_its_size_and_read_back_with_its_keys() -> None:
    form = ReviewForm.parse(labeling_config(3))
    assert form.is_comparison and form.labels == ("A", "B", "C")
    assert [c.hotkey for c in form.best] == ["1", "2", "3"]
    assert [c.hotkey for c in form.worst] == ["shift+1", "shift+2", "shift+3"]
    single = ReviewForm.from_file("configs/label_studio/review.xml")
    assert form.categories == single.categories and not single.is_comparison


def test_review_mode_compare_makes_the_routing_core_select_groups() -> None:
    config = ServiceConfig.model_validate({"annotation": {"review_mode": "compare"}})
    assert config.sampling.compare_size == 4
    sized = ServiceConfig.model_validate(
        {"annotation": {"review_mode": "compare", "compare": {"size": 3}}}
    )
    assert sized.sampling.compare_size == 3
    assert ServiceConfig.model_validate({}).sampling.compare_size is None
    with pytest.raises(ValidationError, match=r"follows annotation\.review_mode"):
        ServiceConfig.model_validate({"sampling": {"compare_size": 4}})


def test_a_comparison_credits_its_reason_with_the_orders_the_reward_got_wrong() -> None:
    wrong = Compared("audit_high_reward", ((0.1, 0.9), (0.2, 0.9)))  # preferred, paid less
    right = Compared("low_reward", ((0.9, 0.1), (0.5, 0.5)))  # one right, one tie
    found = credits([], [wrong, right])
    assert found["audit"].rate == 1.0 and found["low_reward"].rate == 0.25
    assert found["random"].reviews == 0
