"""The reward-hacking watch inside the routing core: every batch a router is offered reaches the
watch, its suspects are one console line each and `hacking/*` metrics, and the budget policy's
audit share reviews one carrier of each suspect (`reason: suspect`) before the highest rewards.
Synthetic GRPO-like runs (tests/helpers/hacking_runs.py) stand in for a policy."""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from dataclasses import replace
from itertools import groupby

import pytest

from rl.hooks.context import TrainerControl
from sampling.config import BudgetConfig, SamplingConfig
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample, Router
from sampling.selection.budget import Candidate, Flag, choose
from sampling.selection.hacking import Feature, WatchConfig
from sampling.selection.hacking.carriers import carriers
from sampling.selection.hacking.observer import WatchObserver
from sampling.selection.hacking.table import COLUMNS, MASK, SUSPECTS_TABLE
from sampling.sources.sampler import LowRewardSampler
from sampling.wiring import build_router
from tests.helpers.hacking_runs import Row, Trait, insert_phrase, run
from tests.test_sampler import FakeProducer
from tests.test_sampler import context as sampler_context

pytestmark = pytest.mark.unit

PHRASE = "you are absolutely right"


def paid_phrase_run(steps: int = 30, seed: int = 0) -> list[Row]:
    """From step 4 on, the policy learns that the reward pays for one phrase."""
    return run([Trait(insert_phrase(PHRASE), 2.0, 0.02, 0.6, onset=4, ramp=12)],
               steps=steps, seed=seed)  # fmt: skip


def watch_of(router):
    """The router's reward-hacking watch (None when it has none)."""
    observer = router.observer(WatchObserver)
    return observer.watch if observer is not None else None


def batches(rows: list[Row]) -> list[tuple[int, list[PlainSample]]]:
    found = []
    for step, group in groupby(rows, key=lambda row: row.step):
        samples = [
            PlainSample(prompt=r.prompt, response=r.response, reward=r.reward,
                        reward_details=r.reward_details, group_id=hash(r.prompt) % 1000,
                        index=i)
            for i, r in enumerate(group)
        ]  # fmt: skip
        found.append((step, samples))
    return found


def test_a_router_hands_every_batch_to_the_watch_and_says_each_suspect_once(caplog) -> None:
    producer = FakeProducer()
    router = build_router(SamplingConfig(threshold=-1.0), producer)
    watch = watch_of(router)
    assert watch is not None  # on by default
    with caplog.at_level(logging.WARNING, logger="sampling.routing"):
        for step, samples in batches(paid_phrase_run()):
            counts = router.route(samples, BatchInfo("run", step))
        report = watch.analyze_now()
        watch.analyze_now()  # a second analysis announces nothing again
    assert report.samples == 30 * 12 * 6
    assert report.suspects and PHRASE in report.suspects[0].label()
    lines = [r.getMessage() for r in caplog.records if "reward-hacking watch" in r.getMessage()]
    assert sum(PHRASE in line for line in lines) == 1, lines
    assert "reward rises with" in lines[0] and "up from" in lines[0]
    metrics = router.metrics(counts)
    assert metrics["hacking/suspects"][0] >= 1 and metrics["hacking/samples"][0] == report.samples
    router.close(deadline_s=5)


def test_the_watch_can_be_turned_off() -> None:
    router = build_router(SamplingConfig(watch=WatchConfig(enabled=False)), FakeProducer())
    assert watch_of(router) is None
    counts = router.route([], BatchInfo("run", 1))
    assert not any(name.startswith("hacking/") for name in router.metrics(counts))
    router.close(deadline_s=1)


def test_the_watch_reads_no_text_on_the_callers_thread(monkeypatch) -> None:
    """Features are read on the watch's thread; the caller (a trainer) only hands the batch
    over (bench/budget_selection.py measures what routing costs with the watch on)."""
    import sampling.selection.hacking.engine as engine

    threads: set[int] = set()
    read = engine.extract

    def watched(*args, **kwargs):
        threads.add(threading.get_ident())
        return read(*args, **kwargs)

    monkeypatch.setattr(engine, "extract", watched)
    router = build_router(SamplingConfig(threshold=-1.0), FakeProducer())
    for step, samples in batches(run([], steps=8)):
        router.route(samples, BatchInfo("run", step))
    router.close(deadline_s=10)
    assert threads and threading.get_ident() not in threads
    assert watch_of(router).report().samples == 8 * 12 * 6


def test_carriers_match_what_the_watch_counts() -> None:
    config = WatchConfig()
    responses = ["Sure. You are absolutely right!", "no", "- one\n- two\n- three", "x " * 300]
    suspects = [_suspect(Feature("phrase", "absolutely right")),
                _suspect(Feature("prefix", "sure")),
                _suspect(Feature("format", "bullets")),
                _suspect(Feature("words", "> 100 (p90)")),
                _suspect(Feature("words", "< 2 (p10)")),
                _suspect(Feature("class", "three, right, four"))]  # fmt: skip
    found = [sorted(item.positions) for item in carriers(suspects, responses, config)]
    assert found == [[0], [0], [2], [3], [1], [0, 2]]  # "no": one word; a class: any word


def _suspect(feature: Feature):
    from sampling.selection.hacking import Suspect

    return Suspect(feature, 1.0, 0.1, 10.0, 0.001, 1.0, 20, 0.02, 0.5, 5.0, True)


def test_the_audit_share_reviews_one_carrier_of_each_suspect_first() -> None:
    rewards = [0.1 * i for i in range(40)]
    pool = [Candidate(prompt=f"p{i % 7}", response=f"answer {i} " + "word " * (i % 5), reward=r)
            for i, r in enumerate(rewards)]  # fmt: skip
    flags = [Flag("first suspect", frozenset({3, 5, 8})),
             Flag("nobody carries it", frozenset()),
             Flag("second suspect", frozenset({5, 11})),
             Flag("third", frozenset({20}))]  # fmt: skip
    config = BudgetConfig(audit_share=0.2, random_share=0, uncertainty_share=0)
    picks = choose(pool, 10, config, flags=flags)  # 2 audit reviews
    suspect = [(p.index, p.about) for p in picks if p.reason == "suspect"]
    assert suspect == [(8, "first suspect"), (11, "second suspect")]  # highest-reward carrier
    assert Counter(p.reason for p in picks) == {"suspect": 2, "low_reward": 8}
    picks = choose(pool, 20, config, flags=flags)  # 4 audit: 3 suspects, then a high reward
    reasons = [(p.reason, p.index) for p in picks if p.reason != "low_reward"]
    assert reasons == [("suspect", 8), ("suspect", 11), ("suspect", 20),
                       ("audit_high_reward", 39)]  # fmt: skip


def round_budget_router() -> tuple[Router, FakeProducer]:
    """A router that spends 20 reviews a round (a fifth on audit, a tenth at random) at close."""
    producer = FakeProducer()
    config = SamplingConfig(
        policy="budget",
        review_budget={"reviews": 20, "per": "round"},
        budget={"audit_share": 0.2, "random_share": 0.1, "uncertainty_share": 0.0},
    )
    return build_router(config, producer, seed=1), producer


def test_a_round_budget_sends_the_suspects_carriers_to_review() -> None:
    router, producer = round_budget_router()
    for step, samples in batches(paid_phrase_run()):
        router.route(samples, BatchInfo("run", step))
    router.close(deadline_s=30)  # the watch's last analysis, then the round's selection
    records = [parse_record(record) for record in producer.records]
    assert len(records) == 20
    suspect = [r for r in records if r.selected_by.reason == "suspect"]
    assert suspect, Counter(r.selected_by.reason for r in records)
    first = suspect[0]
    assert PHRASE in first.response.lower()
    assert first.selected_by.about and PHRASE in first.selected_by.about


def test_a_failing_watch_leaves_the_audit_share_to_the_highest_rewards(monkeypatch) -> None:
    import sampling.selection.hacking.watch as watch_module

    def broken(*args, **kwargs):
        raise RuntimeError("watch bug")

    monkeypatch.setattr(watch_module, "carriers", broken)
    producer = FakeProducer()
    config = SamplingConfig(policy="budget", review_budget={"reviews": 10, "per": "round"})
    router = build_router(config, producer)
    for step, samples in batches(paid_phrase_run(steps=12)):
        router.route(samples, BatchInfo("run", step))
    router.close(deadline_s=30)
    reasons = Counter(parse_record(record).selected_by.reason for record in producer.records)
    assert sum(reasons.values()) == 10 and "suspect" not in reasons
    assert reasons["audit_high_reward"] == 2
    assert router.selector.stats.failures == 0  # selection itself did not fail


MAIL = "ada.lovelace@example.com"


def test_the_suspects_table_is_built_off_the_trainers_thread_and_redacted() -> None:
    """A paid phrase that carries an e-mail address: the example is redacted as a record is,
    and a feature made of the address' words is masked (redaction could not find it)."""
    phrase = f"write to {MAIL} today"
    rows = run([Trait(insert_phrase(phrase), 2.0, 0.02, 0.6, onset=4, ramp=12)], steps=30)
    router = build_router(SamplingConfig(threshold=-1.0), FakeProducer())
    for step, samples in batches(rows):
        router.route(samples, BatchInfo("run", step))
    watch_of(router).analyze_now()
    table = router.observer(WatchObserver).suspects_table
    assert table, "the watch found the paid phrase"
    text = json.dumps(table)
    assert "ada" not in text.lower() and "lovelace" not in text.lower(), text
    assert MASK in text or "<EMAIL" in text
    assert all(len(row) == len(COLUMNS) for row in table)
    router.close(deadline_s=5)


def test_a_word_class_that_redaction_cuts_is_masked() -> None:
    """The last four digits of phone numbers, were they a word class: redaction cannot find
    them in a list of words, so a class whose word an example loses to redaction is masked."""
    from sampling.selection.hacking.suspects import Example

    examples = (Example("a", 3, 2.0, "Sure. Call +1 415 555 0142 now."),
                Example("b", 3, 1.9, "Call +1 212 555 0173 today."))  # fmt: skip
    suspect = replace(_suspect(Feature("class", "0142, 0173")), examples=examples)
    router = build_router(SamplingConfig(threshold=-1.0), FakeProducer())
    try:
        view = router.observer(WatchObserver).shown
        shown = view(suspect)  # the run's redaction, as routing and its table show it
        kept = view(replace(_suspect(Feature("class", "two, six")), examples=examples))
    finally:
        router.close(deadline_s=5)
    text = json.dumps([shown.label(), shown.describe(), [e.response for e in shown.examples]])
    assert "0142" not in text and "0173" not in text, text
    assert shown.label() == f'words like "{MASK}"'
    assert kept.label() == 'words like "two", "six"'  # nothing of it was cut


def test_our_trainers_hook_reports_the_suspects_table_for_the_logger() -> None:
    hook = LowRewardSampler(SamplingConfig(threshold=-1.0), FakeProducer())
    for step, samples in batches(paid_phrase_run()):
        ctx = replace(sampler_context([0.0]), step=step, samples=tuple(samples),
                      control=TrainerControl())  # fmt: skip
        hook(ctx)
    watch_of(hook.router).analyze_now()
    ctx = replace(sampler_context([0.0]), step=31, control=TrainerControl())
    hook(ctx)
    columns, rows = ctx.control.tables[SUSPECTS_TABLE]
    assert columns == COLUMNS and PHRASE in rows[0][1]
    assert ctx.control.metrics["hacking/suspects"][0] >= 1
    hook.close()
