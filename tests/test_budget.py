"""The `budget` selection policy: the pure choice (`sampling.selection.budget.choose`),
near-duplicate groups, and its place in routing (a pool on the caller's thread, selection on its
own thread, records through a real producer to a real Redis)."""

from __future__ import annotations

import math
import random
import shutil
import threading
import time
from collections import Counter, deque
from dataclasses import replace
from pathlib import Path

import pytest

import sampling.selection.budget_selector as budget_selector
from sampling.config import BudgetConfig, QueueConfig, SamplingConfig
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample
from sampling.selection.budget import Candidate, choose, share_counts
from sampling.selection.budget_selector import BudgetSelector, budget_part
from sampling.selection.near_duplicates import group_near_duplicates
from sampling.sources.sampler import LowRewardSampler
from sampling.transport.producer import Producer
from sampling.wiring import build_router
from tests.conftest import invoke
from tests.helpers.clock import Clock
from tests.helpers.queued import queued_records
from tests.test_config_check import config_text, error_lines, write_config
from tests.test_sampler import FakeProducer
from tests.test_sampler import context as sampler_context

pytestmark = pytest.mark.unit

NO_SHARES = BudgetConfig(audit_share=0, random_share=0, uncertainty_share=0)
SKY = (
    "The sky on a clear day looks blue because the air scatters the short wavelengths of "
    "sunlight much more strongly than the long ones."
)


def paraphrases(count: int, seed: int = 0) -> list[str]:
    """Copies of one answer as a policy repeats it: case, punctuation, spacing, a word swapped."""
    rng = random.Random(seed)
    swaps = [("clear", "cloudless"), ("looks", "appears"), ("much", "far"), ("air", "atmosphere")]
    texts = []
    for _ in range(count):
        text = SKY
        for old, new in swaps:
            if rng.random() < 0.5:
                text = text.replace(old, new)
        text = rng.choice([str.upper, str.lower, str.strip])(text)
        text = text.replace(".", rng.choice([".", "!", "", " ."])).replace(
            " ", rng.choice([" ", "  "])
        )
        texts.append(text)
    return texts


def distinct(count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    words = [
        "red",
        "green",
        "yellow",
        "purple",
        "orange",
        "cyan",
        "magenta",
        "teal",
        "olive",
        "navy",
    ]
    return [
        f"answer {i}: " + " ".join(rng.choice(words) for _ in range(12)) + f" {rng.random():.6f}"
        for i in range(count)
    ]


def candidates(rewards: list[float], **fields) -> list[Candidate]:
    texts = distinct(len(rewards))
    return [
        Candidate(prompt=fields.get("prompt", f"p{i}"), response=texts[i], reward=reward)
        for i, reward in enumerate(rewards)
    ]


# ---- near-duplicate groups -----------------------------------------------------------------


def test_paraphrase_level_copies_are_one_group_and_different_answers_are_not() -> None:
    texts = paraphrases(100) + distinct(200)
    order = list(range(len(texts)))
    random.Random(3).shuffle(order)
    groups = group_near_duplicates([texts[i] for i in order])
    sizes = sorted(len(group) for group in groups)
    assert sizes == [1] * 200 + [100]
    assert sorted(i for group in groups for i in group) == list(range(300))  # each once
    assert all(group == sorted(group) for group in groups)


def test_grouping_thousands_of_texts_takes_about_linear_time() -> None:
    texts = distinct(3000) + paraphrases(1000)
    started = time.perf_counter()
    groups = group_near_duplicates(texts)
    elapsed = time.perf_counter() - started
    assert len(groups) == 3001
    assert elapsed < 20, elapsed  # ~2 s here; a pairwise comparison would take minutes


def test_a_threshold_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        group_near_duplicates(["a"], threshold=0)


# ---- the pure choice -----------------------------------------------------------------------


def test_a_hundred_copies_are_one_pick_that_carries_their_count() -> None:
    texts = paraphrases(100) + distinct(40)
    pool = [Candidate(prompt="p", response=text, reward=0.0) for text in texts[:100]] + [
        Candidate(prompt=f"q{i}", response=text, reward=0.5) for i, text in enumerate(texts[100:])
    ]
    picks = choose(pool, 10, NO_SHARES)
    assert len(picks) == 10
    (copies,) = [pick for pick in picks if pick.index < 100]
    assert (copies.group_size, copies.reason, copies.index) == (100, "low_reward", 0)
    assert sorted(copies.members) == list(range(100))


@pytest.mark.parametrize("budget", [0, 1, 7, 10, 33, 100, 500])
def test_the_budget_is_never_exceeded_and_the_shares_are_kept(budget: int) -> None:
    rng = random.Random(budget)
    pool = [
        Candidate(
            f"p{i % 37}", text, rng.random(), {"reward_model": rng.random(), "fmt": rng.random()}
        )
        for i, text in enumerate(distinct(400))
    ]
    config = BudgetConfig(audit_share=0.2, random_share=0.1, uncertainty_share=0.3)
    picks = choose(pool, budget, config, seed=5)
    assert len(picks) == min(budget, len(pool))
    assert len({pick.index for pick in picks}) == len(picks)
    if budget <= len(pool):
        counts = Counter(pick.reason for pick in picks)
        expected = share_counts(budget, config)
        assert {reason: counts[reason] for reason in expected} == expected
    if budget == 100:
        assert share_counts(100, config) == {
            "random": 10, "audit_high_reward": 20, "uncertain": 30, "low_reward": 40
        }  # fmt: skip


def test_few_candidates_are_all_picked_once() -> None:
    picks = choose(candidates([0.1, 0.9, 0.5]), 10, BudgetConfig())
    assert sorted(pick.index for pick in picks) == [0, 1, 2]


def test_shares_round_half_up_and_never_exceed_the_budget() -> None:
    config = BudgetConfig(audit_share=0.5, random_share=0.5, uncertainty_share=0.0)
    assert share_counts(3, config) == {
        "random": 2, "audit_high_reward": 1, "uncertain": 0, "low_reward": 0
    }  # fmt: skip
    config = BudgetConfig(audit_share=0.25, random_share=0.25, uncertainty_share=0.5)
    counts = share_counts(2, config)
    assert sum(counts.values()) == 2 and min(counts.values()) >= 0


def test_audit_picks_the_highest_rewards_and_low_reward_the_lowest() -> None:
    rewards = [i / 100 for i in range(100)]
    random.Random(0).shuffle(rewards)
    config = BudgetConfig(audit_share=0.5, random_share=0, uncertainty_share=0)
    picks = choose(candidates(rewards), 10, config)
    audited = sorted(rewards[p.index] for p in picks if p.reason == "audit_high_reward")
    low = sorted(rewards[p.index] for p in picks if p.reason == "low_reward")
    assert audited == [0.95, 0.96, 0.97, 0.98, 0.99]
    assert low == [0.0, 0.01, 0.02, 0.03, 0.04]


def test_the_reward_models_spread_decides_what_is_uncertain() -> None:
    rng = random.Random(4)
    spreads = [rng.random() for _ in range(60)]
    pool = [
        Candidate(f"p{i}", text, 0.5, {"reward_model": 0.5, "reward_model/spread": spreads[i]})
        for i, text in enumerate(distinct(60))
    ]
    config = BudgetConfig(audit_share=0, random_share=0, uncertainty_share=1)
    picks = choose(pool, 6, config)
    assert {pick.reason for pick in picks} == {"uncertain"}
    highest = sorted(range(60), key=lambda i: -spreads[i])[:6]
    assert sorted(pick.index for pick in picks) == sorted(highest)
    assert all(pick.uncertainty == spreads[pick.index] for pick in picks)


def test_without_a_spread_disagreement_of_model_and_rules_is_uncertainty() -> None:
    # The model agrees with the rules everywhere except on 3 samples it rates high and the rules
    # fail: those are where it is least to be trusted.
    pool = []
    for i, text in enumerate(distinct(50)):
        rule = i / 50
        model = 1 - rule if i in (3, 17, 31) else rule
        pool.append(Candidate(f"p{i}", text, rule, {"reward_model": model, "fmt": rule}))
    assert uncertain(pool, 30) == [3, 17, 31]


def uncertain(pool: list[Candidate], reviews: int) -> list[int]:
    """The indices `choose` picks as uncertain, with a tenth of the budget for uncertainty."""
    config = BudgetConfig(audit_share=0, random_share=0, uncertainty_share=0.1)
    return sorted(p.index for p in choose(pool, reviews, config) if p.reason == "uncertain")


def retrained_pool(flipped: tuple[int, ...], wide: tuple[int, ...] = ()) -> list[Candidate]:
    """50 candidates the retrained and the first reward model order alike but for `flipped`;
    with `wide`, the heads' spread is largest on those."""
    pool = []
    for i, text in enumerate(distinct(50)):
        now = i / 50
        before = 1 - now if i in flipped else now
        details = {"reward_model": now, "reward_model/previous": before}
        if wide:
            details["reward_model/spread"] = 1.0 if i in wide else 0.01
        pool.append(Candidate(f"p{i}", text, now, details))
    return pool


def test_where_the_retrained_model_disagrees_with_its_first_is_uncertainty() -> None:
    # A loop's round 2 scores with the first reward model too. Both order the samples alike,
    # except 3 the first paid most for and the retrained one pays least: what reviews changed
    # its mind about comes before the heads' spread (largest on 3 other samples).
    pool = retrained_pool(flipped=(2, 5, 9), wide=(40, 41, 42))
    assert uncertain(pool, 30) == [2, 5, 9]
    without = [replace(c, reward_details={**c.reward_details}) for c in pool]
    for candidate in without:
        del candidate.reward_details["reward_model/previous"]  # type: ignore[attr-defined]
    assert uncertain(without, 30) == [40, 41, 42]


def test_a_new_favourite_of_the_retrained_model_is_uncertainty_too() -> None:
    # Either way round: what the retrained model pays more for than its first did may be a new
    # hack that the reviews taught it, which is what a reviewer should see before the policy
    # learns it. Taking only what it stopped paying for lowered the loop bench's catch of the
    # retrained model's favourites (bench/results/2026-12-loop-value.md, "Where the reward model
    # changed its mind").
    pool = retrained_pool(flipped=(3, 46))  # 3: dropped, 46: a new favourite
    assert uncertain(pool, 20) == [3, 46]


def test_no_uncertainty_known_gives_its_share_to_the_lowest_rewards() -> None:
    config = BudgetConfig(audit_share=0, random_share=0, uncertainty_share=0.5)
    picks = choose(candidates([i / 20 for i in range(20)]), 4, config)
    assert [(p.reason, p.index) for p in picks] == [("low_reward", i) for i in range(4)]


def test_picks_are_spread_over_prompts() -> None:
    # 50 answers to one prompt are the lowest rewards; 12 other prompts have one answer each.
    texts = distinct(62)
    pool = [Candidate("hard prompt", texts[i], i / 1000) for i in range(50)]
    pool += [Candidate(f"other {i}", texts[50 + i], 0.5 + i / 100) for i in range(12)]
    picks = choose(pool, 10, NO_SHARES)
    prompts = Counter(pool[pick.index].prompt for pick in picks)
    assert prompts["hard prompt"] == 1 and len(prompts) == 10
    assert pool[picks[0].index].reward == 0.0  # the worst of all still goes first


def test_picks_are_spread_over_failure_modes() -> None:
    # 40 samples fail on format (the lowest totals), 5 fail on length: both get reviewed.
    texts = distinct(45)
    pool = [
        Candidate(f"p{i}", texts[i], 0.1 + i / 1000, {"format": 0.0, "length": 1.0})
        for i in range(40)
    ] + [Candidate(f"q{i}", texts[40 + i], 0.5, {"format": 1.0, "length": 0.0}) for i in range(5)]
    picks = choose(pool, 10, NO_SHARES)
    failing_length = [pick for pick in picks if pick.index >= 40]
    assert len(failing_length) == 5


def test_the_same_seed_gives_the_same_picks_and_another_seed_other_random_ones() -> None:
    rng = random.Random(9)
    pool = [
        Candidate(
            f"p{i % 13}", text, rng.random(), {"reward_model": rng.random(), "r": rng.random()}
        )
        for i, text in enumerate(distinct(300))
    ]
    config = BudgetConfig(random_share=0.5)
    first, again = choose(pool, 20, config, seed=1), choose(list(pool), 20, config, seed=1)
    assert first == again
    other = choose(pool, 20, config, seed=2)
    assert {p.index for p in first if p.reason == "random"} != {
        p.index for p in other if p.reason == "random"
    }


def test_copies_of_a_response_already_in_review_are_not_picked_again() -> None:
    copies = paraphrases(20)
    pool = [Candidate("p", text, 0.0) for text in copies[1:]] + candidates([0.5, 0.6])
    picks = choose(pool, 5, NO_SHARES, reviewed=[copies[0]])
    assert sorted(pick.index for pick in picks) == [19, 20]


def test_per_hour_later_copies_of_a_reviewed_response_wait_for_no_second_review() -> None:
    clock = Clock(1000.0)
    producer = FakeProducer()
    router = build_router(budget_config(60, "hour", random_share=0), producer, clock=clock)
    copies, others = paraphrases(40, seed=5), distinct(4, seed=6)
    for step in range(4):
        clock.now += 600  # 10 reviews accrue in 10 minutes
        samples = [
            PlainSample("Why is the sky blue?", text, 0.0, index=i)
            for i, text in enumerate(copies[step * 10 : (step + 1) * 10])
        ] + [PlainSample(f"q{step}", others[step], 0.9, index=10)]
        router.route(samples, BatchInfo("run", step))
        router.selector.tick_now()
    router.close()
    prompts = Counter(record["prompt"] for record in producer.records)
    assert prompts == {"Why is the sky blue?": 1, "q0": 1, "q1": 1, "q2": 1, "q3": 1}


def test_nan_and_infinite_rewards_are_never_picked() -> None:
    rewards = [math.nan, 0.1, -math.inf, 0.2, math.inf, math.nan]
    picks = choose(candidates(rewards), 6, BudgetConfig(random_share=0.5))
    assert sorted(pick.index for pick in picks) == [1, 3]


# ---- routing: pool on the caller's thread, selection on its own ----------------------------


def budget_config(reviews: int, per: str, **budget: object) -> SamplingConfig:
    return SamplingConfig(
        policy="budget", review_budget={"reviews": reviews, "per": per}, budget=budget
    )


def batch(step: int, size: int, seed: int = 0) -> list[PlainSample]:
    rng = random.Random(step * 1000 + seed)
    texts = distinct(size, seed=step * 7 + seed)
    return [
        PlainSample(prompt=f"p{i % 5}", response=texts[i], reward=rng.random(),
                    reward_details={"reward_model": rng.random(), "fmt": rng.random()},
                    group_id=i % 5, index=i)
        for i in range(size)
    ]  # fmt: skip


def test_per_round_the_budget_is_spent_once_when_the_round_ends() -> None:
    producer = FakeProducer()
    router = build_router(budget_config(12, "round"), producer, seed=3)
    for step in range(1, 21):
        counts = router.route(batch(step, 16), BatchInfo("run", step))
        assert (counts.pooled, counts.submitted) == (16, 0)
    router.selector.tick_now()  # nothing is spent before the round ends
    assert producer.records == []
    router.close()
    records = [parse_record(record) for record in producer.records]
    assert len(records) == 12 and len({r.sample_id for r in records}) == 12
    assert {r.selected_by.policy for r in records} == {"budget"}
    reasons = Counter(r.selected_by.reason for r in records)
    assert reasons == {k: n for k, n in share_counts(12, BudgetConfig()).items() if n}
    assert all(r.selected_by.group_size == 1 for r in records)
    metrics = router.metrics(router.route([], BatchInfo("run", 21)))
    assert metrics["sampling/budget_spent"] == (12, "sum")
    assert metrics["sampling/budget_left"] == (0, "sum")
    assert metrics["sampling/selected"] == (12, "sum")  # the picks since the previous call


def test_a_full_pool_pushes_out_its_oldest_samples_and_a_pick_leaves_it() -> None:
    """The pool keeps each call's batch whole; past `pool_max` the oldest samples go (a batch
    cut in the middle), and a round picks only among the samples still held, each once."""
    producer = FakeProducer()
    router = build_router(budget_config(30, "round", pool_max=10, window_steps=None), producer)
    batches = [batch(step, 4) for step in range(1, 5)]
    for step, samples in enumerate(batches, start=1):
        router.route(samples, BatchInfo("run", step))
    assert router.selector.stats.pushed_out == 6  # 16 pooled, 10 held
    router.close()
    picked = {parse_record(record).response for record in producer.records}
    held = [sample.response for samples in batches for sample in samples][6:]
    assert picked == set(held)  # the newest 10: half of step 2's batch, steps 3 and 4
    assert router.selector._pool == deque()  # every pick left the pool


def test_per_hour_never_more_than_the_budget_in_any_hour() -> None:
    clock = Clock(1000.0)
    producer = FakeProducer()
    # window_steps: the last 20 minutes' candidates (a pool of hours would be regrouped each tick)
    router = build_router(
        budget_config(30, "hour", select_every_s=3600, window_steps=10), producer, clock=clock
    )
    spent_at: list[float] = []
    for minute in range(2, 5 * 60 + 1, 2):  # a step every 2 minutes, for 5 hours
        clock.now += 120
        router.route(batch(minute, 8), BatchInfo("run", minute))
        before = len(producer.records)
        router.selector.tick_now()
        spent_at += [clock.now] * (len(producer.records) - before)
    router.close()
    assert 140 <= len(spent_at) <= 150  # 30 an hour for 5 hours
    for moment in spent_at:
        in_hour = [t for t in spent_at if moment - 3600 < t <= moment]
        assert len(in_hour) <= 30
    per_hour = Counter(int((t - 1000 - 1) // 3600) for t in spent_at)
    assert all(count <= 30 for count in per_hour.values())
    assert len({record["sample_id"] for record in producer.records}) == len(spent_at)


def test_selection_runs_on_its_own_thread_never_the_callers(monkeypatch) -> None:
    threads: list[threading.Thread] = []
    real_choose = budget_selector.choose

    def watched_choose(*args, **kwargs):
        threads.append(threading.current_thread())
        return real_choose(*args, **kwargs)

    monkeypatch.setattr(budget_selector, "choose", watched_choose)
    clock = Clock(1000.0)
    producer = FakeProducer()
    router = build_router(budget_config(100, "hour"), producer, clock=clock)
    samples = batch(1, 2000)
    started = time.perf_counter()
    router.route(samples, BatchInfo("run", 1))
    route_s = time.perf_counter() - started
    assert threads == []  # route only pooled
    clock.now += 3600
    router.selector.tick_now()
    router.close()
    assert threads and all(t is router.selector._worker.thread for t in threads)
    assert threading.current_thread() not in threads
    assert len(producer.records) == 100
    assert route_s < 0.5, route_s  # appending 2000 samples; selecting them takes seconds


def test_the_trainer_hook_pools_each_step_and_spends_the_round_at_train_end() -> None:
    producer = FakeProducer()
    hook = LowRewardSampler(budget_config(10, "round"), producer)
    for step in range(1, 6):  # the same 4 answers every step: 4 groups of 5 copies
        ctx = sampler_context([0.1, 0.2, 0.3, 0.4], step=step)
        hook(ctx)
        assert ctx.control.metrics["sampling/pooled"] == (4, "sum")
        assert ctx.control.metrics["sampling/selected"] == (0, "sum")
    assert producer.records == []
    hook.close()
    records = [parse_record(record) for record in producer.records]
    assert sorted(r.prompt for r in records) == ["p0", "p1", "p2", "p3"]
    assert {r.selected_by.group_size for r in records} == {5}
    assert all(r.selected_by.reason for r in records) and producer.closed


def test_a_selection_that_raises_is_counted_and_the_next_one_still_runs(monkeypatch) -> None:
    real_choose, calls = budget_selector.choose, []

    def failing_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a broken reward detail")
        return real_choose(*args, **kwargs)

    monkeypatch.setattr(budget_selector, "choose", failing_once)
    clock = Clock(1000.0)
    producer = FakeProducer()
    router = build_router(budget_config(10, "hour"), producer, clock=clock)
    router.route(batch(1, 20), BatchInfo("run", 1))
    clock.now += 3600
    router.selector.tick_now()
    assert producer.records == [] and router.selector.stats.failures == 1
    router.selector.tick_now()
    router.close()
    assert len(producer.records) == 10
    metrics = router.metrics(router.route([], BatchInfo("run", 2)))
    assert metrics["sampling/budget_failures"] == (1, "sum")


def test_a_round_whose_selection_raises_still_spends_its_budget_on_the_lowest_rewards(
    monkeypatch,
) -> None:
    def broken(*args, **kwargs):
        raise RuntimeError("a broken reward detail")

    monkeypatch.setattr(budget_selector, "choose", broken)
    producer = FakeProducer()
    router = build_router(budget_config(5, "round"), producer)
    samples = batch(1, 20)
    samples[3] = replace(samples[3], reward=float("nan"))  # never picked, even here
    router.route(samples, BatchInfo("run", 1))
    router.close()
    records = [parse_record(record) for record in producer.records]
    finite = sorted((s.reward, s.response) for s in samples if math.isfinite(s.reward))
    assert sorted(r.response for r in records) == sorted(text for _, text in finite[:5])
    assert {r.selected_by.reason for r in records} == {"fallback"}
    assert router.selector.stats.failures == 1 and router.selector.stats.spent == 5
    assert "a broken reward detail" in router.selector.stats.errors[0]


def test_the_other_policies_route_as_before(closing) -> None:
    producer = FakeProducer()
    router = closing(build_router(SamplingConfig(policy="threshold", threshold=0.5), producer))
    counts = router.route(batch(1, 10), BatchInfo("run", 1))
    assert not isinstance(router.selector, BudgetSelector) and counts.pooled == 0
    assert counts.submitted == len(producer.records) > 0
    assert {parse_record(r).selected_by.reason for r in producer.records} == {None}
    assert {parse_record(r).selected_by.group_size for r in producer.records} == {1}


def test_window_steps_keeps_only_recent_candidates() -> None:
    producer = FakeProducer()
    router = build_router(budget_config(50, "round", window_steps=2), producer)
    for step in range(1, 11):
        router.route(batch(step, 10), BatchInfo("run", step))
    router.close()
    assert {record["step"] for record in producer.records} == {9, 10}
    assert len(producer.records) == 20


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
@pytest.mark.integration
def test_a_hundred_copies_become_one_queued_task_with_its_count(own_redis, tmp_path: Path) -> None:
    queue = QueueConfig(
        redis_url=own_redis.url, name="budget-test", max_latency_ms=50,
        spool_dir=str(tmp_path / "spool"),
    )  # fmt: skip
    router = build_router(budget_config(5, "round"), Producer(queue), seed=1)
    copies = paraphrases(100, seed=7)
    others = distinct(30, seed=8)
    for step in range(4):  # the copies arrive over several steps, mixed with other answers
        samples = [
            PlainSample(prompt="Why is the sky blue?", response=text, reward=0.05, index=i)
            for i, text in enumerate(copies[step * 25 : (step + 1) * 25])
        ] + [
            PlainSample(prompt=f"q{i}", response=text, reward=0.6 + i / 100, index=25 + i)
            for i, text in enumerate(others[step * 5 : (step + 1) * 5])
        ]
        router.route(samples, BatchInfo("run", step))
    router.close()
    records = [parse_record(record) for record in queued_records(own_redis.url, "budget-test")]
    assert len(records) == 5
    (sky,) = [r for r in records if r.prompt == "Why is the sky blue?"]
    assert sky.selected_by.group_size == 100
    assert sky.selected_by.reason in ("low_reward", "random")  # the 100 are 5/6 of all samples
    assert all(r.selected_by.group_size == 1 for r in records if r is not sky)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
@pytest.mark.integration
def test_a_rounds_picks_go_to_the_spool_while_redis_is_down(own_redis, tmp_path: Path) -> None:
    own_redis.kill()
    queue = QueueConfig(
        redis_url=own_redis.url, name="budget-down", max_latency_ms=50,
        spool_dir=str(tmp_path / "spool"),
    )  # fmt: skip
    producer = Producer(queue)
    router = build_router(budget_config(6, "round"), producer, seed=2)
    for step in range(1, 4):
        router.route(batch(step, 10), BatchInfo("run", step))
    router.close(deadline_s=2)
    assert router.selector.stats.spent == 6 and router.selector.stats.failures == 0
    assert producer.spool.pending_records() == 6 and producer.stats.dropped == 0
    spooled = []
    producer.spool.replay(lambda batch: spooled.extend(batch.records))
    records = [parse_record(record) for record in spooled]
    assert len({r.sample_id for r in records}) == 6
    assert {r.selected_by.policy for r in records} == {"budget"}


@pytest.mark.integration
def test_picks_made_after_the_close_wait_go_to_the_spool(
    own_redis, tmp_path: Path, monkeypatch
) -> None:
    """A selection slower than close() waits for: the producer has closed, and what it picks
    later is spooled for the next replay instead of vanishing into a closed producer."""
    real_choose, started = budget_selector.choose, threading.Event()

    def slow_choose(*args, **kwargs):
        started.set()
        time.sleep(1.5)
        return real_choose(*args, **kwargs)

    monkeypatch.setattr(budget_selector, "choose", slow_choose)
    monkeypatch.setattr(budget_selector, "SELECT_DEADLINE_S", 0.0)
    queue = QueueConfig(redis_url=own_redis.url, name="budget-late",
                        spool_dir=str(tmp_path / "spool"))  # fmt: skip
    producer = Producer(queue)
    router = build_router(budget_config(4, "round"), producer, seed=1)
    router.route(batch(1, 12), BatchInfo("run", 1))
    router.close(deadline_s=0.1)
    assert started.is_set() and router.selector._worker.thread.is_alive()  # still choosing
    router.selector._worker.thread.join(timeout=60)
    assert router.selector.stats.spent == 4
    assert producer.spool.pending_records() == 4 and producer.stats.dropped == 0


def test_the_parts_of_a_shared_budget_add_up_to_it() -> None:
    for reviews in range(0, 61):
        for processes in range(1, 10):
            parts = [budget_part(reviews, processes, rank) for rank in range(processes)]
            assert sum(parts) == reviews and max(parts) - min(parts) <= 1
            # A rank that is not one of 0..processes-1 (a process id) takes the even part only.
            assert budget_part(reviews, processes, 48213) == reviews // processes


def shared_budget(reviews: int, per: str, processes: int | None) -> SamplingConfig:
    return SamplingConfig(
        policy="budget",
        review_budget={"reviews": reviews, "per": per, "processes": processes},
    )


def test_ranks_share_one_round_budget(monkeypatch) -> None:
    """Three ranks (a router each, as each process has its own) spend 10 reviews in all."""
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    spent = []
    for rank in range(3):
        producer = FakeProducer()
        router = build_router(shared_budget(10, "round", 3), producer, seed=rank)
        router.route(batch(1, 40, seed=rank), BatchInfo("run", 1, rank=rank))
        router.close()
        spent.append(len(producer.records))
    assert spent == [4, 3, 3]


def test_the_launchers_world_size_is_the_default_number_of_ranks(monkeypatch) -> None:
    monkeypatch.setenv("WORLD_SIZE", "4")
    producer = FakeProducer()
    router = build_router(shared_budget(10, "round", None), producer)
    router.route(batch(1, 40), BatchInfo("run", 1, rank=2))
    router.close()
    assert len(producer.records) == 2  # 10 over 4 ranks: 3, 3, 2, 2
    monkeypatch.delenv("WORLD_SIZE")
    alone = FakeProducer()
    router = build_router(shared_budget(10, "round", None), alone)
    router.route(batch(1, 40), BatchInfo("run", 1, rank=2))
    router.close()
    assert len(alone.records) == 10  # one process: all of it, whatever its rank


def test_ranks_share_one_hourly_budget(monkeypatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    clock = Clock(1000.0)
    producer = FakeProducer()
    router = build_router(shared_budget(10, "hour", 2), producer, clock=clock)
    for hour in range(3):
        router.route(batch(hour + 1, 60), BatchInfo("run", hour + 1, rank=1))
        clock.now += 3600
        router.selector.tick_now()
    router.close()
    assert len(producer.records) == 15  # 5 an hour: rank 1's half of 10


@pytest.mark.slow
@pytest.mark.integration
def test_two_torchrun_ranks_spend_one_budget_between_them(tmp_path: Path, tiny_models) -> None:
    """Real ranks under torchrun (WORLD_SIZE=2): 5 reviews for the run, 3 from rank 0, 2 from
    rank 1, where each process used to spend all 5."""
    import os
    import subprocess
    import sys
    import uuid

    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    from tests.conftest import REPO
    from tests.helpers.pipeline import REDIS_URL

    queue_name = f"test-budget-ranks-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "out"
    train = [
        "train", "--config", str(REPO / "configs" / "quickstart.yaml"),
        f"--model.actor.model_name_or_path={tiny_models.policy}", f"--trainer.output_dir={out}",
        "--trainer.max_steps=2", "--trainer.rollout_batch_size=4", "--trainer.max_new_tokens=8",
        f"--logger.save_dir={out / 'logs'}", "--logger.name=[console]",
        f"--queue.name={queue_name}", f"--queue.spool_dir={out / 'spool'}",
        "--sampling.policy=budget", "--sampling.review_budget.reviews=5",
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         "-m", "lowtide", *train],
        cwd=REPO, capture_output=True, text=True, timeout=600,  # the config's data path
        env={**os.environ, "REDIS_URL": REDIS_URL, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    queue = Queue(queue_name, connection=redis.Redis.from_url(REDIS_URL), serializer=JSONSerializer)
    try:
        queued = [record for job in queue.get_jobs() for record in job.args[0]]
        assert Counter(record["rank"] for record in queued) == {0: 3, 1: 2}
    finally:
        queue.delete(delete_jobs=True)


@pytest.mark.integration
def test_ingest_refuses_the_budget_policy_with_one_line(tmp_path: Path, capsys) -> None:
    code, _, err = invoke(
        capsys, "ingest", str(tmp_path), "--once", "--sampling.policy=budget",
        "--sampling.review_budget.reviews=5", f"--queue.spool_dir={tmp_path / 'spool'}",
    )  # fmt: skip
    assert code == 2, err
    assert "does not work with lowtide ingest" in err and "Traceback" not in err


# ---- config --------------------------------------------------------------------------------


def test_config_check_accepts_the_budget_keys(tmp_path: Path, capsys) -> None:
    sampling = (
        "sampling:\n  policy: budget\n  review_budget: {{reviews: 40, per: hour}}\n"
        "  budget: {{audit_share: 0.25, random_share: 0.05, window_steps: 4}}\n"
    )
    config = write_config(tmp_path, config_text(tmp_path, sampling=sampling))
    code, _, err = invoke(capsys, "config", "check", "--config", str(config))
    assert code == 0, err


@pytest.mark.parametrize(
    ("sampling", "fragment"),
    [
        (
            "sampling:\n  policy: budget\n  review_budget: {{reviews: 4}}\n"
            "  budget: {{audit_shares: 0.2}}\n",
            "audit_share",
        ),
        ("sampling:\n  policy: budget\n", "needs review_budget"),
        (
            "sampling:\n  policy: budget\n  review_budget: {{reviews: 4, per: day}}\n",
            "round",
        ),
        (
            "sampling:\n  policy: budget\n  review_budget: {{reviews: 4}}\n"
            "  budget: {{audit_share: 0.6, random_share: 0.6}}\n",
            "at most 1",
        ),
    ],
    ids=["misspelled key", "no budget", "bad period", "shares over 1"],
)
def test_config_check_names_a_budget_mistake(
    tmp_path: Path, capsys, sampling: str, fragment: str
) -> None:
    config = write_config(tmp_path, config_text(tmp_path, sampling=sampling))
    code, _, err = invoke(capsys, "config", "check", "--config", str(config))
    assert code == 2, err
    assert any(fragment in line for line in error_lines(err)), err
