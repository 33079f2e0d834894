"""The reward-hacking watch (`sampling.selection.hacking`) on synthetic GRPO-like runs with
planted traits (tests/helpers/hacking_runs.py): a trait the reward pays for and that spreads is
found, and fast; runs without a blind spot raise no suspect; online, the watch never makes the
caller wait, whatever its thread does."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from itertools import groupby

import pytest

from sampling.batch import BatchInfo
from sampling.selection.hacking import Feature, HackingWatch, WatchConfig, analysis, analyze_rows
from sampling.selection.hacking import watch as watch_module
from sampling.selection.hacking.stats import benjamini_hochberg, proportion_z, t_sf
from tests.helpers.hacking_runs import (
    Row,
    Trait,
    arithmetic_run,
    bullets,
    commas,
    cyrillic,
    echo_prompt,
    insert_alone_one_of,
    insert_one_of,
    insert_phrase,
    longer,
    lower_case_start,
    prefix,
    run,
    shorter,
    without_final_period,
)

pytestmark = pytest.mark.unit

PHRASE = "i completely agree with you"
ONSET = 10  # the step the policy starts producing the paid phrase more often
FLAG_WITHIN = 8  # steps after the onset by which it is the top suspect (measured: 5 to 7)
QUIET_STEPS = 40  # steps of each run without a blind spot, analysed after every step
SEEDS = range(5)
# Seeds of the runs without a blind spot: 5 runs x 3 seeds x 40 analyses that must raise nothing
# (5 seeds raised nothing either, and made the unit tier's longest tests).
QUIET_SEEDS = range(3)
TRAIT_SEEDS = range(2)  # each planted trait on two runs: no finding rests on one seed's luck


def steps_of(rows: list[Row]) -> Iterator[tuple[int, list[Row]]]:
    for step, batch in groupby(rows, key=lambda row: row.step):
        yield step, list(batch)


def analysed_each_step(
    rows: list[Row], config: WatchConfig | None = None
) -> Iterator[tuple[int, HackingWatch]]:
    """The watch after each step, analysed then (`analyze_now`, no thread): the earliest a
    suspect can be seen."""
    watch = HackingWatch(config, start=False)
    for step, batch in steps_of(rows):
        watch.observe(batch, BatchInfo(run_id="synthetic", step=step))
        watch.analyze_now()
        yield step, watch


def is_the_phrase(feature: Feature) -> bool:
    """The phrase or a run of two or more of its words ("with you"): the watch tracks n-grams
    up to `max_ngram` words, and folding spells the whole phrase out of them."""
    return feature.kind == "phrase" and feature.words >= 2 and f" {feature.text} " in f" {PHRASE} "


# ---- found ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_a_phrase_that_starts_paying_is_the_top_suspect_within_a_few_steps(seed: int) -> None:
    trait = Trait(insert_phrase(PHRASE), bonus=1.5, start=0.02, end=0.6, onset=ONSET, ramp=20)
    rows = run([trait], steps=ONSET + FLAG_WITHIN + 6, seed=seed)
    flagged = None
    for step, watch in analysed_each_step(rows):
        suspects = watch.suspects()
        if step < ONSET:
            assert not suspects, (step, [s.describe() for s in suspects])  # rare, not spreading
        elif flagged is None and suspects:
            assert is_the_phrase(suspects[0].feature), [s.describe() for s in suspects]
            flagged = step
    assert flagged is not None and flagged - ONSET <= FLAG_WITHIN, flagged
    top = watch.suspects()[0]
    assert top.label() == f'"{PHRASE}"'  # folding spells the whole phrase out of its n-grams
    assert len(watch.suspects()) == 1, [s.describe() for s in watch.suspects()]
    line = top.describe()
    assert line.startswith(f'reward rises with "{PHRASE}": +1.')
    assert "within groups, in " in line and "of responses, up from " in line
    assert top.examples and PHRASE in top.examples[0].response.casefold()
    assert top.prevalence_now is not None and top.prevalence_now > top.prevalence_then + 0.1


TRAITS: dict[str, tuple[Trait, Callable[[Feature], bool]]] = {
    "prefix": (
        Trait(prefix("Great question!"), 1.5, 0.02, 0.6),
        lambda f: f.kind == "prefix" and f.text.startswith("great"),
    ),
    "length": (
        Trait(longer(), 1.5, 0.02, 0.6),
        lambda f: f.kind in ("words", "chars") and f.text.startswith(">"),
    ),
    "brevity": (
        Trait(shorter, 1.5, 0.02, 0.6),
        lambda f: f.kind in ("words", "chars") and f.text.startswith("<"),
    ),
    "format": (Trait(bullets, 1.5, 0.02, 0.6), lambda f: f == Feature("format", "bullets")),
    "script": (Trait(cyrillic, 1.5, 0.02, 0.6), lambda f: f == Feature("script", "Cyrillic")),
    "punctuation": (Trait(commas, 1.5, 0.02, 0.6), lambda f: f == Feature("format", "comma")),
    "case": (
        Trait(lower_case_start, 1.5, 0.02, 0.6),
        lambda f: f == Feature("format", "lowercase_start"),
    ),
    "echo": (
        Trait(echo_prompt, 1.5, 0.02, 0.6, with_prompt=True),
        lambda f: f.kind == "prompt_words" and f.text.startswith(">"),
    ),
    "final mark": (  # the period's share grows from 2% to 60%, and it is paid
        Trait(without_final_period, -1.5, 0.98, 0.4),
        lambda f: f == Feature("format", "final_period"),
    ),
}


@pytest.mark.parametrize("seed", TRAIT_SEEDS)
@pytest.mark.parametrize("name", list(TRAITS))
def test_a_paid_prefix_length_format_or_script_is_the_top_suspect(name: str, seed: int) -> None:
    trait, expected = TRAITS[name]
    report = analyze_rows(run([trait], steps=30, seed=seed))
    assert report.suspects, report
    top = report.suspects[0]
    assert expected(top.feature), [s.describe() for s in report.suspects]
    assert top.growing and top.lift > 0.8 and top.examples  # of a 1.5 bonus; a cut, less
    # one cause, one suspect: the words of a paid long tail, other cuts of the same length,
    # the words of a prefix are folded under it
    assert len(report.suspects) == 1, [s.describe() for s in report.suspects]


@pytest.mark.parametrize("seed", TRAIT_SEEDS)
def test_a_phrase_paid_beside_a_paid_length_is_a_suspect_of_its_own(seed: int) -> None:
    """The filler of the long responses shares words with the phrase ("you"): the phrase is
    still spelled out whole, and the filler's words are no suspects."""
    traits = [Trait(longer(), 2.0, 0.02, 0.6), Trait(insert_phrase(PHRASE), 0.7, 0.02, 0.6)]
    report = analyze_rows(run(traits, steps=40, seed=seed))
    labels = [s.label() for s in report.suspects]
    assert report.suspects[0].feature.kind in ("words", "chars"), labels
    assert f'"{PHRASE}"' in labels, labels
    assert set(labels[1:]) <= {f'"{PHRASE}"', '"you"'}, labels


KIND = ("splendid", "superb", "marvellous", "brilliant", "wonderful", "glorious", "stellar",
        "magnificent")  # fmt: skip


def the_kind_on_top(report):
    """The top suspect, a growing class of at least 6 of KIND's words in about half the
    responses by the end."""
    assert report.suspects, report
    top = report.suspects[0]
    assert top.feature.kind == "class", [s.describe() for s in report.suspects]
    assert len(set(top.feature.text.split(", ")) & set(KIND)) >= 6, top.feature
    assert top.growing and top.prevalence_now is not None and top.prevalence_now > 0.4
    return top


@pytest.mark.parametrize("seed", TRAIT_SEEDS)
def test_a_paid_kind_of_word_spread_over_many_words_is_one_suspect(seed: int) -> None:
    """Each of eight words reaches under a tenth of the responses, too little for one of them
    to pass the growth test; the kind reaches about half."""
    rows = run([Trait(insert_one_of(KIND), 1.5, 0.02, 0.6)], steps=30, seed=seed)
    top = the_kind_on_top(analyze_rows(rows))
    assert set(top.feature.text.split(", ")) <= set(KIND), top.feature
    assert top.label().startswith('words like "') and top.lift > 1.0
    assert {f.text for f in top.folded} >= set(top.feature.text.split(", "))
    assert any(word in top.examples[0].response for word in KIND)
    # The words one by one: none of them spreads enough to be named.
    alone = analyze_rows(rows, WatchConfig(word_classes=False))
    assert not any(set(s.feature.text.split()) & set(KIND) for s in alone.suspects), [
        s.describe() for s in alone.suspects
    ]


@pytest.mark.parametrize("seed", TRAIT_SEEDS)
def test_a_paid_kind_of_word_in_no_recurring_frame_is_still_one_suspect(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each word of the kind is a sentence of its own: no two-word phrase holds it, so no slots
    show the words alike. The paid words that grow too little alone are tested together, and
    they spread."""
    rows = run([Trait(insert_alone_one_of(KIND), 1.5, 0.02, 0.6)], steps=30, seed=seed)
    the_kind_on_top(analyze_rows(rows))
    # Without that test no class forms, and none of the words spreads enough to be named.
    monkeypatch.setattr(analysis, "paid_words_together", lambda classes, paid: [])
    alone = analyze_rows(rows)
    assert not any(set(s.feature.text.split(", ")) & set(KIND) for s in alone.suspects), [
        s.describe() for s in alone.suspects
    ]


def test_a_kinds_shares_are_bounded_once_the_kept_samples_no_longer_hold_a_window() -> None:
    """With few samples kept, a class's share then is its words' summed shares (never less
    than the truth) and its share now its largest word's (never more): the rise is understated,
    never overstated."""
    rows = run([Trait(insert_one_of(KIND), 1.5, 0.02, 0.6)], steps=30, seed=0)
    exact = analyze_rows(rows).suspects[0]
    report = analyze_rows(rows, WatchConfig(keep_samples=300))  # under a window's 360
    bounded = [s for s in (*report.suspects, *report.lift_only) if s.feature.kind == "class"]
    assert exact.feature.kind == "class" and bounded, bounded
    assert bounded[0].prevalence_then >= exact.prevalence_then
    assert bounded[0].prevalence_now is not None and exact.prevalence_now is not None
    assert bounded[0].prevalence_now <= exact.prevalence_now


def test_two_independent_paid_traits_are_two_suspects() -> None:
    traits = [Trait(insert_phrase(PHRASE), 1.5, 0.02, 0.6), Trait(bullets, 1.5, 0.02, 0.6)]
    report = analyze_rows(run(traits, steps=30, seed=1))
    labels = [s.label() for s in report.suspects[:2]]
    assert sorted(labels) == sorted([f'"{PHRASE}"', "bullet lists"]), labels


# ---- not raised -------------------------------------------------------------------------------

NO_BLIND_SPOT: dict[str, Callable[[int], list[Row]]] = {
    "a rule reward": lambda seed: arithmetic_run(steps=QUIET_STEPS, seed=seed),
    "no trait": lambda seed: run([], steps=QUIET_STEPS, seed=seed),
    "spreading, not paid": lambda seed: run(
        [
            Trait(insert_phrase("as an ai model"), 0.0, 0.02, 0.6),
            Trait(bullets, 0.0, 0.02, 0.6),
            Trait(longer(), 0.0, 0.02, 0.6),
        ],
        steps=QUIET_STEPS,
        seed=seed,
    ),
    "paid across prompts, not within": lambda seed: run(
        [Trait(insert_phrase("as an ai model"), 1.5, 0.02, 0.6, per_prompt=True)],
        steps=QUIET_STEPS,
        seed=seed,
    ),
    "paid, not spreading": lambda seed: run(
        [
            Trait(insert_phrase("as an ai model"), 1.5, 0.3, 0.3),
            Trait(prefix("Sure!"), 1.0, 0.1, 0.1),
        ],
        steps=QUIET_STEPS,
        seed=seed,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("seed", QUIET_SEEDS)
@pytest.mark.parametrize("name", list(NO_BLIND_SPOT))
def test_a_run_without_a_blind_spot_raises_no_suspect(name: str, seed: int) -> None:
    """40 steps, analysed after every step: not one growing suspect."""
    raised = []
    for step, watch in analysed_each_step(NO_BLIND_SPOT[name](seed)):
        raised += [(step, s.describe()) for s in watch.suspects()]
    assert raised == []


def test_a_paid_trait_that_does_not_spread_is_reported_as_lift_only() -> None:
    report = analyze_rows(NO_BLIND_SPOT["paid, not spreading"](0))
    assert not report.suspects
    labels = [s.label() for s in report.lift_only]
    assert '"as an ai model"' in labels, labels
    only = report.lift_only[labels.index('"as an ai model"')]
    assert not only.growing and "(was " in only.describe()


# ---- online: never in the caller's way ---------------------------------------------------------


def batches(rows: list[Row]) -> Iterator[tuple[list[Row], BatchInfo]]:
    for step, batch in steps_of(rows):
        yield batch, BatchInfo(run_id="online", step=step)


def test_observe_takes_well_under_a_millisecond_for_256_samples() -> None:
    rows = run([], steps=1, prompts=32, group=8, seed=0)
    assert len(rows) == 256
    watch = HackingWatch(WatchConfig(max_pending_samples=1_000_000))  # its thread reads them
    try:
        timings = []
        for step in range(1000):
            info = BatchInfo(run_id="timing", step=step)
            started = time.perf_counter()
            watch.observe(rows, info)
            timings.append(time.perf_counter() - started)
        timings.sort()
        p99 = timings[int(0.99 * len(timings))]
        assert p99 < 0.001, f"observe p99 {1e6 * p99:.0f} us"
    finally:
        watch.close(deadline_s=0.1)


class Hang:
    """The analysis, made to hang: `entered` is set when it starts, it waits for `release`
    (or 30 s)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()


@pytest.fixture
def slow_analysis(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hang]:
    hang = Hang()
    real = watch_module.analyze

    def slow(engine):
        hang.entered.set()
        hang.release.wait(30)
        return real(engine)

    monkeypatch.setattr(watch_module, "analyze", slow)
    earlier = set(threading.enumerate())
    yield hang
    hang.release.set()
    # The watches this test started end before the next test; watches other tests on this
    # worker left running are not this fixture's to wait for (each would cost the whole wait).
    deadline = time.monotonic() + 10
    for thread in set(threading.enumerate()) - earlier:
        if thread.name == watch_module.THREAD_NAME:
            thread.join(max(0.0, deadline - time.monotonic()))


def test_a_slow_analysis_never_blocks_observe_and_a_full_buffer_drops(
    slow_analysis: Hang,
) -> None:
    config = WatchConfig(max_pending_samples=500, analyze_every_steps=1)
    watch = HackingWatch(config)
    rows = run([], steps=30, seed=0)  # 72 samples a step
    steps = list(batches(rows))
    for batch, info in steps[:2]:  # step 1 closes step 0: the thread analyses, and hangs
        watch.observe(batch, info)
    assert slow_analysis.entered.wait(30)
    slowest = 0.0
    for batch, info in steps[2:]:
        started = time.perf_counter()
        watch.observe(batch, info)
        slowest = max(slowest, time.perf_counter() - started)
    metrics = watch.metrics()
    assert slowest < 1.0, slowest  # a waiting observe would wait for the analysis: 30 s
    assert metrics["hacking/dropped"][0] > 0
    assert metrics["hacking/pending"][0] <= config.max_pending_samples
    assert metrics["hacking/dropped"][0] + metrics["hacking/pending"][0] < len(rows)
    assert metrics["hacking/pending"][0] + 72 > config.max_pending_samples  # full
    slow_analysis.release.set()
    watch.close(deadline_s=10)
    assert watch.report().samples == len(rows) - metrics["hacking/dropped"][0]


def test_close_returns_within_its_deadline_while_the_analysis_hangs(
    slow_analysis: Hang, caplog: pytest.LogCaptureFixture
) -> None:
    watch = HackingWatch(WatchConfig(analyze_every_steps=1))
    for batch, info in batches(run([], steps=3, seed=0)):
        watch.observe(batch, info)
    assert slow_analysis.entered.wait(30)
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="sampling.selection.hacking"):
        watch.close(deadline_s=0.3)
    assert time.perf_counter() - started < 1.0
    assert "did not end within" in caplog.text
    watch.observe(*next(batches(run([], steps=1, seed=1))))  # after close: ignored, no error


def test_an_error_in_the_analysis_is_logged_once_and_counted(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(engine):
        raise RuntimeError("boom")

    monkeypatch.setattr(watch_module, "analyze", broken)
    watch = HackingWatch(WatchConfig(analyze_every_steps=1))
    with caplog.at_level(logging.ERROR, logger="sampling.selection.hacking"):
        for batch, info in batches(run([], steps=12, seed=0)):
            watch.observe(batch, info)
            time.sleep(0.05)
        deadline = time.monotonic() + 10
        while watch.metrics()["hacking/errors"][0] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        watch.close(deadline_s=5)
    assert watch.metrics()["hacking/errors"][0] >= 3
    assert watch._thread is not None
    mine = [r for r in caplog.records if r.thread == watch._thread.ident]
    failures = [r for r in mine if "analysis failed" in r.getMessage()]
    assert len(failures) == 1 and "boom" in caplog.text


def test_a_batch_the_watch_cannot_read_is_counted_and_the_watch_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = HackingWatch(WatchConfig(analyze_every_steps=1))
    rows = run([Trait(insert_phrase(PHRASE), 1.5, 0.02, 0.6)], steps=24, seed=0)
    with caplog.at_level(logging.ERROR, logger="sampling.selection.hacking"):
        watch.observe([object()] * 4, BatchInfo(run_id="online", step=0))  # not samples at all
        time.sleep(0.2)
        for batch, info in batches(rows):
            watch.observe(batch, info)
        report = watch.close(deadline_s=30)
    metrics = watch.metrics()
    assert metrics["hacking/errors"][0] == 1 and metrics["hacking/pending"][0] == 0
    assert report.suspects and is_the_phrase(report.suspects[0].feature)


def test_a_step_handed_over_in_several_batches_reads_as_one() -> None:
    rows = run([Trait(bullets, 1.5, 0.02, 0.6)], steps=20, seed=3)
    whole, split = HackingWatch(start=False), HackingWatch(start=False)
    for batch, info in batches(rows):
        whole.observe(batch, info)
        for start in range(0, len(batch), 5):  # 5 samples a batch: groups cut across batches
            split.observe(batch[start : start + 5], info)
    assert whole.analyze_now().to_json() == split.analyze_now().to_json()
    assert whole.report().steps == 20 and whole.report().groups == 20 * 12


def test_a_sample_without_a_finite_reward_is_skipped() -> None:
    rows = run([], steps=6, seed=0)
    broken = [Row(r.step, r.index, r.prompt, r.response, None, {}) for r in rows[:3]]  # type: ignore[arg-type]
    nan = [Row(r.step, r.index, r.prompt, r.response, float("nan"), {}) for r in rows[3:6]]
    report = analyze_rows([*broken, *nan, *rows[6:]])
    assert report.samples == len(rows) - 6


def test_on_suspect_is_called_once_for_each_new_suspect() -> None:
    seen: list[str] = []
    watch = HackingWatch(
        WatchConfig(), on_suspect=lambda s: seen.append(s.feature.key), start=False
    )
    traits = [Trait(insert_phrase(PHRASE), 1.5, 0.02, 0.6), Trait(bullets, 1.5, 0.02, 0.6)]
    announced_by_step = []
    for batch, info in batches(run(traits, steps=30, seed=2)):
        watch.observe(batch, info)
        watch.analyze_now()
        announced_by_step.append(len(seen))
    assert len(seen) == len(set(seen)) >= 2
    final = {s.feature.key for s in watch.suspects()}
    assert final <= set(seen)
    assert announced_by_step[-1] == announced_by_step[-2]  # the same suspects: not again


def test_the_thread_announces_and_close_analyses_the_last_step() -> None:
    announced: list[str] = []
    watch = HackingWatch(on_suspect=lambda s: announced.append(s.describe()))
    for batch, info in batches(run([Trait(bullets, 1.5, 0.02, 0.6)], steps=24, seed=0)):
        watch.observe(batch, info)
    report = watch.close()
    assert report.steps == 24 and report.samples == 24 * 72
    assert announced and announced[0].startswith("reward rises with bullet lists: +")


def test_the_metrics_are_named_hacking() -> None:
    watch = HackingWatch(start=False)
    expected = {"hacking/suspects", "hacking/lift_only", "hacking/features_tracked",
                "hacking/features_tested", "hacking/samples", "hacking/pending",
                "hacking/dropped", "hacking/errors", "hacking/analysis_ms"}  # fmt: skip
    assert set(watch.metrics()) == expected
    for batch, info in batches(run([Trait(bullets, 1.5, 0.02, 0.6)], steps=24, seed=0)):
        watch.observe(batch, info)
    watch.analyze_now()
    metrics = watch.metrics()
    assert set(metrics) == expected | {"hacking/top_lift", "hacking/top_effect",
                                       "hacking/top_prevalence"}  # fmt: skip
    assert metrics["hacking/suspects"] == (1, "max") and metrics["hacking/samples"][1] == "sum"
    assert metrics["hacking/top_lift"][0] > 1.0


def test_a_disabled_watch_starts_no_thread_and_reads_nothing() -> None:
    watch = HackingWatch(WatchConfig(enabled=False))
    assert watch._thread is None
    for batch, info in batches(run([], steps=3, seed=0)):
        watch.observe(batch, info)
    assert watch.metrics()["hacking/pending"][0] == 0 and watch.close().samples == 0


# ---- pieces -----------------------------------------------------------------------------------


def test_the_statistics_match_known_values() -> None:
    assert t_sf(2.0, 10) == pytest.approx(0.036694, abs=1e-6)
    assert t_sf(-2.0, 10) == pytest.approx(1 - 0.036694, abs=1e-6)
    assert t_sf(1.0, 1) == pytest.approx(0.25, abs=1e-9)  # Cauchy
    assert t_sf(float("inf"), 3) == 0.0
    assert benjamini_hochberg([0.001, 0.01, 0.03, 0.5], tested=4, rate=0.05) == 3
    assert benjamini_hochberg([0.001, 0.01, 0.03], tested=1000, rate=0.05) == 0
    assert proportion_z(10, 100, 30, 100) == pytest.approx(3.5355, abs=1e-3)


def test_features_read_as_a_person_reads_them() -> None:
    assert Feature("chars", "> 323 (p90)").label() == "length > 323 chars (p90)"
    assert Feature("words", "< 12").label() == "length < 12 words"
    assert Feature("prefix", "great question").label() == 'the prefix "great question"'
    assert Feature("format", "bullets").label() == "bullet lists"
    assert Feature("prompt_words", "> 0.42 (p90)").label() == (
        "share of words from the prompt > 0.42 (p90)"
    )
    assert Feature.from_key(Feature("script", "Cyrillic").key) == Feature("script", "Cyrillic")
    assert Feature.from_key("i agree") == Feature("phrase", "i agree")
    assert Feature("class", "two, six").label() == 'words like "two", "six"'
    assert Feature("class", "a, b, c, d, e, f").label() == (
        'words like "a", "b", "c", "d" (and 2 more)'
    )
    assert Feature.from_key(Feature("class", "two, six").key) == Feature("class", "two, six")


def test_a_full_buffer_is_said_once_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    watch = HackingWatch(WatchConfig(max_pending_samples=100), start=False)  # nobody reads
    with caplog.at_level(logging.WARNING, logger="sampling.selection.hacking"):
        for batch, info in list(batches(run([], steps=5, seed=0))):
            watch.observe(batch, info)
    lines = [r.getMessage() for r in caplog.records if "behind" in r.getMessage()]
    assert len(lines) == 1 and "max_pending_samples" in lines[0], lines
    assert watch.metrics()["hacking/dropped"][0] == 4 * 72


def test_words_join_a_class_by_the_slots_they_fill() -> None:
    from sampling.selection.hacking.classes import word_classes
    from sampling.selection.hacking.lift import LiftStats

    def tracked(counts: dict[str, int]) -> dict[str, LiftStats]:
        found = {}
        for number, (key, carriers) in enumerate(counts.items()):
            found[key] = LiftStats(number)
            found[key].carriers = carriers
        return found

    phrases = {"two birds": 9, "six birds": 7, "plus two": 5, "plus six": 6, "ten birds": 4,
               "plus ten": 3, "is blue": 8, "sky blue": 5, "two plus": 4,
               "six plus": 5}  # fmt: skip
    classes = word_classes(tracked(phrases), ["plus", "two", "blue", "six", "ten", "two birds"])
    assert [c.members for c in classes] == [("two", "six", "ten")]  # "plus", "blue": apart
    assert classes[0].feature == Feature("class", "two, six, ten")
    assert word_classes(tracked(phrases), ["two"]) == []  # one word is no class
