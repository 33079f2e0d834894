"""The budget that learns (`sampling.selection.budget_learning`): each reason credited with how
often its reviews contradicted the reward's order, the next split by that credit, and how
`lowtide loop` carries the learned shares from one round's export to the next round's budget."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from lowtide.config import RunConfig
from lowtide.loop.budget_shares import compared_of, learn_shares, reviews_of, shares_of
from lowtide.loop.runner import LoopRunner
from lowtide.loop.settings import LoopSettings
from lowtide.loop.summary import columns_for, summary_rows
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, choose, share_counts
from sampling.selection.budget_learning import (
    BUCKETS,
    Credit,
    Review,
    Shares,
    contradictions,
    credits,
    next_shares,
)

pytestmark = pytest.mark.unit

# All three built-in shares, for the learning to move (the default has no uncertain share).
CONFIGURED = BudgetConfig(random_share=0.1, audit_share=0.2, uncertainty_share=0.3)  # rest 0.4


def reviews_where_audit_finds_hacking(count: int, round_id: str = "r1") -> list[Review]:
    """The reward's order holds everywhere but on the audit's picks: a high reward the reviewer
    rates 1 (what reward hacking looks like)."""
    found = []
    for i in range(count):
        found.append(Review("low_reward", 0.1 + i * 0.001, 2, round_id))
        found.append(Review("random", 0.5 + i * 0.001, 3, round_id))
        found.append(Review("uncertain", 0.6 + i * 0.001, 4, round_id))
        found.append(Review("audit_high_reward", 0.9 + i * 0.001, 1, round_id))
    return found


def noisy_reviews(seed: int, count: int = 40) -> list[Review]:
    rng = random.Random(seed)
    reasons = ["random", "suspect", "audit_high_reward", "uncertain", "low_reward", "fallback"]
    return [
        Review(rng.choice(reasons), rng.random(), rng.randint(1, 5), f"r{rng.randint(1, 2)}")
        for _ in range(count)
    ]


def test_a_contradiction_is_the_share_of_differently_rated_reviews_the_reward_put_the_other_way():
    a = Review("random", 0.9, 1)  # the highest reward, the lowest rating
    b = Review("low_reward", 0.1, 3)
    c = Review("uncertain", 0.5, 5)
    d = Review("uncertain", 0.5, 1)  # rated as a: not compared with it
    found = dict((review, value) for review, value in contradictions([a, b, c, d]))
    assert found[a] == 1.0  # b and c rated higher, both rewarded lower
    assert found[b] == pytest.approx(2 / 3)  # a and d: rated lower, a rewarded higher, d too
    # Rated above all three: a was paid more (1), b less (0), d the same (a tie counts half).
    assert found[c] == pytest.approx((1 + 0 + 0.5) / 3)
    assert found[d] == pytest.approx((1 + 0.5) / 2)  # b rated higher, paid less; tied with c


def test_rewards_of_different_rounds_are_never_compared():
    # Each round is in order on its own; across rounds the rewards' scales differ.
    reviews = [Review("random", 10.0, 1, "r1"), Review("random", 20.0, 5, "r1"),
               Review("random", 0.1, 5, "r2"), Review("random", 0.0, 1, "r2")]  # fmt: skip
    assert [value for _, value in contradictions(reviews)] == [0.0] * 4


def test_with_no_feedback_the_configured_shares_come_back_exactly():
    for config in (CONFIGURED, BudgetConfig(audit_share=0.25, random_share=0.15)):
        for evidence in (credits([]), {}, {bucket: Credit() for bucket in BUCKETS}):
            assert next_shares(config, evidence) == Shares.of(config)
        # Every verdict agrees with the reward: nothing says where reviews pay more.
        agreeing = [Review(r, reward, reward * 4 + 1) for r, reward in
                    [("random", 0.0), ("low_reward", 0.5), ("audit_high_reward", 1.0)]]  # fmt: skip
        assert next_shares(config, credits(agreeing)) == Shares.of(config)
        adapted = Shares.of(config).applied_to(config)
        for share in ("random_share", "audit_share", "uncertainty_share"):
            assert getattr(adapted, share) == getattr(config, share)


def test_a_reason_whose_reviews_contradict_the_reward_more_gets_a_bigger_share_next_time():
    evidence = credits(reviews_where_audit_finds_hacking(10))
    assert evidence["audit"].rate == 1.0 and evidence["low_reward"].rate < 0.5
    shares = next_shares(CONFIGURED, evidence)
    assert shares.audit > CONFIGURED.audit_share
    assert shares.low_reward < 1 - 0.2 - 0.1 - 0.3
    counts = share_counts(50, shares.applied_to(CONFIGURED))
    assert counts["audit_high_reward"] > share_counts(50, CONFIGURED)["audit_high_reward"]


def test_little_feedback_moves_the_shares_little():
    few = next_shares(CONFIGURED, credits(reviews_where_audit_finds_hacking(1)))
    many = next_shares(CONFIGURED, credits(reviews_where_audit_finds_hacking(30)))
    assert CONFIGURED.audit_share < few.audit < many.audit
    stiff = CONFIGURED.model_copy(update={"prior_reviews": 1000.0})
    assert next_shares(stiff, credits(reviews_where_audit_finds_hacking(30))).audit == (
        pytest.approx(CONFIGURED.audit_share, abs=0.01)
    )


def test_the_random_share_never_goes_below_its_floor():
    # Random picks never contradicted the reward; every other reason's mostly did.
    evidence = {"random": Credit(20, 0.0), "audit": Credit(20, 20.0),
                "uncertain": Credit(20, 15.0), "low_reward": Credit(20, 18.0)}  # fmt: skip
    for floor, expected in ((None, 0.1), (0.05, 0.05)):
        config = CONFIGURED.model_copy(update={"random_floor": floor})
        shares = next_shares(config, evidence)
        assert shares.random == pytest.approx(expected) and shares.random >= expected
        assert sum(shares.as_dict().values()) == pytest.approx(1.0)
        assert share_counts(40, shares.applied_to(config))["random"] >= round(40 * expected)
    unfloored = next_shares(CONFIGURED.model_copy(update={"random_floor": 0.0}), evidence)
    assert 0 < unfloored.random < 0.05  # what the floors above held back
    with pytest.raises(ValidationError, match=r"random_floor 0\.2 is above random_share 0\.1"):
        BudgetConfig(random_share=0.1, random_floor=0.2)


@pytest.mark.parametrize("seed", range(20))
def test_the_adaptive_split_never_exceeds_the_budget_and_keeps_the_floor(seed: int):
    config = BudgetConfig(
        audit_share=0.3, random_share=0.2, uncertainty_share=0.4, random_floor=0.1,
        prior_reviews=1.0,
    )  # fmt: skip
    shares = next_shares(config, credits(noisy_reviews(seed)))
    adapted = shares.applied_to(config)  # validated: the three shares fit in 1
    assert min(shares.as_dict().values()) >= 0
    assert sum(shares.as_dict().values()) == pytest.approx(1.0)
    assert shares.random >= 0.1 - 1e-12
    for budget in (0, 1, 2, 3, 7, 10, 50, 101):
        counts = share_counts(budget, adapted)
        assert sum(counts.values()) == budget and min(counts.values()) >= 0
        assert counts["random"] >= share_counts(budget, config.model_copy(
            update={"random_share": 0.1}))["random"]  # fmt: skip


def test_the_split_is_deterministic_whatever_order_the_reviews_come_in():
    reviews = noisy_reviews(3, count=60)
    first = next_shares(CONFIGURED, credits(reviews))
    assert first != Shares.of(CONFIGURED)
    for seed in range(5):
        shuffled = list(reviews)
        random.Random(seed).shuffle(shuffled)
        assert next_shares(CONFIGURED, credits(shuffled)) == first
    # The picks too, with a seed: the same adapted config and seed choose the same samples.
    pool = [Candidate("p", f"answer {i} " * 3, reward=random.Random(i).random()) for i in range(40)]
    adapted = first.applied_to(CONFIGURED)
    assert choose(pool, 12, adapted, seed=4) == choose(list(pool), 12, adapted, seed=4)


def test_a_lesson_taught_again_earns_less_than_a_new_one():
    """Audit and uncertain picks contradict the reward alike, but every audit pick is the same
    failure ("verbose") while each uncertain pick names another: with the discount, uncertain
    earns the bigger share; without it, the two earn alike."""
    reviews = []
    for i in range(12):
        reviews.append(Review("audit_high_reward", 0.9 + i * 1e-3, 1, "r1", ("verbose",)))
        reviews.append(Review("uncertain", 0.8 + i * 1e-3, 1, "r1", (f"failure-{i}",)))
        reviews.append(Review("low_reward", 0.1 + i * 1e-3, 4, "r1"))
    plain = credits(reviews)  # repeat_discount 0: every contradiction counts alike
    assert plain["audit"].rate == plain["uncertain"].rate == 1.0
    assert plain["audit"].earned == plain["uncertain"].earned == 12.0
    discounted = credits(reviews, repeat_discount=0.5)
    assert discounted["audit"].rate == 1.0  # what a person reads is not discounted
    assert discounted["audit"].earned == pytest.approx(12 / 12**0.5)
    assert discounted["uncertain"].earned == pytest.approx(12.0)  # each kind seen once
    config = BudgetConfig(
        random_share=0.1, audit_share=0.3, uncertainty_share=0.3, prior_reviews=1.0
    )
    even = next_shares(config, plain)
    assert even.audit == pytest.approx(even.uncertain)
    shares = next_shares(config, discounted)
    assert shares.uncertain > 0.3 > shares.audit
    assert sum(shares.as_dict().values()) == pytest.approx(1.0) and shares.random >= 0.1


def test_the_loop_reads_a_review_s_kind_from_the_categories_its_reviewers_named():
    rows = [rating_row("a", 0.9, 1, selected_by={"reason": "audit_high_reward"}),
            rating_row("b", 0.1, 4, selected_by={"reason": "low_reward"})]  # fmt: skip
    rows[0]["categories"] = ["verbose", "off-topic", "verbose"]
    assert [review.kind for review in reviews_of(rows, {})] == [("off-topic", "verbose"), ()]
    named = [["verbose"], ["verbose", "format"], []]
    reviews = [{"best": "A", "worst": "B", "categories": categories} for categories in named]
    responses = [{"label": label, "sample_id": f"g{label}", "response": label, "reward": reward}
                 for label, reward in (("A", 0.1), ("B", 0.9))]  # fmt: skip
    meta = {"selected_by": {"reason": "uncertain"}, "run_id": "loop-r1", "verdicts": 3,
            "reviews": reviews}  # fmt: skip
    comparison = {"sample_id": "g", "prompt": "p", "responses": responses, "meta": meta}
    (found,) = compared_of([comparison], {})
    assert found.kind == ("verbose",)  # two of three named it; "format" only one
    assert found.contradiction == 1.0  # preferred A was paid less than B


def test_a_configured_off_share_stays_off():
    config = BudgetConfig(audit_share=0, random_share=0.1, uncertainty_share=0.3)
    assert next_shares(config, credits(reviews_where_audit_finds_hacking(10))).audit == 0


def rating_row(sample_id: str, reward: float, rating: int, **meta) -> dict:
    return {"sample_id": sample_id, "rating": rating, "prompt": "p", "response": sample_id,
            "meta": {"reward": reward, "run_id": "loop-r1", **meta}}  # fmt: skip


def test_export_rows_are_evidence_with_a_reason_a_rating_and_agreeing_reviewers():
    rows = [
        rating_row("a", 0.9, 1, selected_by={"reason": "audit_high_reward"}),
        rating_row("b", 0.1, 4),  # its reason from the task data
        rating_row("c", 0.5, 5, agreed=False),  # reviewers disagree: no verdict
        rating_row("d", float("nan"), 3),  # no finite reward
        rating_row("e", 0.2, 2),  # not known why it was picked
        rating_row("f", 0.05, 1, selected_by={"reason": "low_reward"}),
    ]
    reasons = {"b": "low_reward", "c": "random", "d": "random"}
    assert list(reviews_of(rows, reasons)) == [
        Review("audit_high_reward", 0.9, 1.0, "loop-r1"),
        Review("low_reward", 0.1, 4.0, "loop-r1"),
        Review("low_reward", 0.05, 1.0, "loop-r1"),
    ]
    learned = learn_shares(CONFIGURED, rows, reasons)
    assert learned.reviews == 3 and learned.shares.audit > CONFIGURED.audit_share
    assert shares_of(learned.record(), CONFIGURED) == learned.shares
    assert shares_of(None, CONFIGURED) == Shares.of(CONFIGURED)
    assert "contradicted: audit 1.00 of 1" in learned.line()


def test_the_loop_gives_the_next_round_the_shares_its_export_learned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """round_config, no service: round 1 starts from the configured shares, round 2 gets the
    ones the export of round 1 recorded, and the summary shows each round's."""
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    shares = {"random_share": 0.1, "audit_share": 0.2, "uncertainty_share": 0.3}
    sampling = {"policy": "budget", "review_budget": {"reviews": 20},
                "budget": {"adaptive": True, **shares}}  # fmt: skip
    base = RunConfig.model_validate(
        {
            "model": {"actor": {"model_name_or_path": str(tmp_path / "policy")}},
            "rewards": [{"type": "reward_model", "path": str(tmp_path / "rm")}],
            "sampling": sampling,
        }
    )
    runner = LoopRunner(base, None, [], LoopSettings(rounds=2), tmp_path / "loop")
    first = runner.round_config(1).sampling.budget
    assert Shares.of(first) == Shares.of(CONFIGURED)
    rows = [rating_row(f"s{i}", 0.9 + i / 100, 1, selected_by={"reason": "audit_high_reward"})
            for i in range(5)]  # fmt: skip
    rows += [rating_row(f"t{i}", i / 100, 2 + i % 3, selected_by={"reason": "low_reward"})
             for i in range(5)]  # fmt: skip
    learned = runner._learn_shares(_written(tmp_path / "reviews.jsonl", rows), ["loop-r1"])
    runner.state.record(1, "train", {"policy": str(tmp_path / "p1"),
                                     "budget_shares": Shares.of(first).as_dict()})  # fmt: skip
    runner.state.record(1, "export", {"data": "", "rows": 10, "next_budget": learned.record()})
    second = runner.round_config(2).sampling.budget
    assert Shares.of(second) == learned.shares and second.audit_share > first.audit_share
    assert second.random_share >= first.random_share  # the floor: the configured random share
    rows = summary_rows(runner.state, 2)
    assert rows[0]["budget_shares"] == "0.10/0.20/0.30/0.40"
    assert "budget_shares" in dict(columns_for(rows))
    assert "budget_shares" not in dict(columns_for([{**rows[0], "budget_shares": None}]))


def _written(path: Path, rows: list[dict]) -> Path:
    import json

    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
