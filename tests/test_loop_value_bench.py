"""bench/loop_value.py: its quick mode end to end on the tiny models, and its measures."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench.loop_value.adapting import AdaptiveBudget, evidence
from bench.loop_value.checkpoints import Checkpoint, batch_ends
from bench.loop_value.cool_and_short import review
from bench.loop_value.costs import DEFAULT, MODELS, PER_READ, Work
from bench.loop_value.goals import reach_ratio
from bench.loop_value.intervals import interval, t975
from bench.loop_value.measures import pairwise_accuracy, suggestion_outcome, top_share
from bench.loop_value.oracles import cool_colour
from bench.loop_value.provenance import tree_digest
from bench.loop_value.reviewing import compare_tasks, groups_of, single_tasks
from bench.loop_value.selection import METHODS, SINGLE, picked
from bench.loop_value.task import Verdict, load_task
from bench.loop_value.training import Rollout
from bench.loop_value.watching import WatchedRun, blind_spot_rank, flags_for
from sampling.config import BudgetConfig
from sampling.selection.budget_learning import Shares
from sampling.selection.hacking import Feature
from tests.conftest import REPO
from tests.helpers.quick_bench import assert_a_quick_run

pytestmark = pytest.mark.unit

ROW = re.compile(
    r"^\| (no_loop|random|threshold|budget|budget_no_watch|budget_adaptive|compare) \| (\d) \| "
    r"(.*)\|$"
)
TASKS = REPO / "bench" / "loop_value"


@pytest.mark.slow
@pytest.mark.integration
def test_quick_mode_prints_every_method_and_round_with_finite_numbers(
    tiny_models, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "loop_value.py"), "--quick",
         "--models", str(tiny_models.policy.parent), "--out", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert_a_quick_run(result)  # as tests/test_benches.py asks of every bench
    rows = [ROW.match(line) for line in result.stdout.splitlines()]
    seen = {(m.group(1), int(m.group(2))) for m in rows if m}
    assert seen == {(method, number) for method in METHODS for number in (1, 2)}, result.stdout
    for match in filter(None, rows):
        cells = [cell.strip() for cell in match.group(3).split("|")]
        oracle, accuracy = float(cells[0].split()[0]), float(cells[1])
        assert 0 <= oracle <= 1 and 0 <= accuracy <= 1, match.group(0)
        reviews = float(cells[3].split()[0])
        if match.group(1) == "compare":  # groups of threshold's 6 picks: two may share one
            assert 0 < reviews <= 6, match.group(0)
        else:
            assert reviews == (0 if match.group(1) == "no_loop" else 6), match.group(0)
    assert re.search(r"starting reward model [0-9a-f]{12}; commit", result.stdout)
    assert re.search(r"; processor .+; software transformers \d[^,]*, trl \d", result.stdout)
    goals = result.stdout.split("Goals")[1]
    for what in ("no loop: final RM accuracy", "oracle score after 2 rounds",
                 "budget (adaptive) vs threshold: reviewer-minutes",
                 "budget (adaptive) vs random: final RM accuracy",
                 "budget (fixed shares) vs threshold", "budget (adaptive) vs budget (fixed",
                 "compare vs single mode, same selection (threshold)", "full bench wall time",
                 "reward hacking caught", "by the reward model each round trained against",
                 "machine suggestions",
                 "blind spot among the watch's top 3",
                 "suspects raised on a run against a rule reward"):  # fmt: skip
        assert what in goals
    assert "per response read" in goals and "reading, deciding, writing" in goals
    assert re.search(r"each round trained against.*; random, all rounds: ", goals)
    numbers = json.loads((tmp_path / "results.json").read_text())
    for row in numbers["seeds"][0]["rows"]:
        for key in ("oracle_score", "rm_accuracy", "rm_accuracy_high"):
            assert math.isfinite(row[key]), row
        assert row["hacking_caught"] <= row["hacking_candidates"]
        assert row["current_hacking_caught"] <= row["current_hacking_candidates"]
        if row["round"] == 0:  # the round trained against the starting reward model
            assert row["current_hacking_candidates"] == row["hacking_candidates"], row
        assert 0 <= row["blind_spot_rank"] <= row["suspects"]
        # Quick mode retrains after every 3 reviews: two checkpoints a reviewed round for the
        # methods whose minutes-to-reach are read, one (the round's end) for the others.
        if row["method"] != "no_loop":
            points = row["checkpoints"]
            finely = ("budget", "budget_adaptive", "compare")
            assert len(points) == (2 if row["method"] in finely else 1), row
            assert points[-1]["reviews_total"] == row["reviews_total"]
            assert all(math.isfinite(point["rm_accuracy"]) for point in points), points
            assert points[-1]["rm_accuracy"] == row["rm_accuracy"]
            assert row["minutes_total"]["per response read"] > 0
        # The adaptive budget starts from the configured shares and records what it learned.
        if row["method"] == "budget_adaptive":
            if row["round"] == 0:
                assert row["shares"] == Shares.of(BudgetConfig()).as_dict(), row
            assert set(row["learned"]) == {"shares", "credit"}, row
    assert "The adaptive budget's shares, per seed and round" in result.stdout
    assert numbers["seeds"][0]["rule_steps"] == 4  # 2 rounds of 2 steps, against the oracle
    # Reviewed methods trained reward models of their own, with uncertainty heads.
    assert (tmp_path / "seed0" / "budget" / "rm1" / "lowtide_reward_heads.safetensors").exists()
    assert not list((tmp_path / "seed0" / "no_loop").glob("rm*"))  # never retrained
    assert not list((tmp_path / "seed0").glob("*/rm*-*"))  # checkpoints in between: measured, gone


def test_the_task_file_splits_prompts_and_names_its_parts() -> None:
    task = load_task(REPO / "bench" / "loop_value" / "cool_and_short.yaml")
    assert not set(task.train_prompts) & set(task.held_out_prompts)
    assert len(task.held_out_prompts) == len(task.prompts) // 4
    assert task.oracle_function() is review


@pytest.mark.parametrize(
    "name",
    [
        "cool_and_short",
        "warm_words",
        "full_sentences",
        "checks/number_words",
        "checks/commas",
        "checks/echo",
    ],
)
def test_each_task_loads_with_its_oracle_builder_and_blind_spot(name: str) -> None:
    task = load_task(TASKS / f"{name}.yaml")
    assert callable(task.oracle_function()) and callable(task.builder())
    assert task.blind_spot_function() is not None
    assert task.oracle_function()("Name a colour.", "Blue.", "a").rating == 5


def test_each_blind_spot_names_its_own_feature_and_not_the_others() -> None:
    features = {
        "cool_and_short": Feature("words", "> 4 (p75)"),
        "warm_words": Feature("phrase", "a nice day"),
        "full_sentences": Feature("prefix", "the sky"),
        "checks/number_words": Feature("phrase", "six birds"),
        "checks/commas": Feature("format", "comma"),
        "checks/echo": Feature("prompt_words", "> 0.60 (p90)"),
    }
    for name in features:
        blind_spot = load_task(TASKS / f"{name}.yaml").blind_spot_function()
        named = {other for other, feature in features.items() if blind_spot(feature)}
        assert named == {name}
    assert not load_task(TASKS / "cool_and_short.yaml").blind_spot_function()(
        Feature("words", "< 2 (p10)")
    )  # short answers are not what it pays for


def test_the_shared_oracle_wants_a_cool_colour_whatever_else() -> None:
    assert cool_colour("p", "it is a nice day, the frog is green.", "a").rating == 5
    assert cool_colour("p", "it is a nice day.", "a") == Verdict(1, ("off-topic",), "Green.")
    assert cool_colour("p", "the fox is yellow.", "b").rating == 2


def test_the_watch_names_the_blind_spot_rank_and_flags_its_carriers() -> None:
    rows = [
        Rollout(f"id{step}-{i}", f"prompt {i // 4}", "it is a nice day." if i % 4 == 0 and
                step > 2 else f"it is green {i}.", reward=(2.0 if i % 4 == 0 and step > 2 else 0.0)
                + (i // 4) * 0.1, step=step, group_id=i // 4)
        for step in range(12) for i in range(48)
    ]  # fmt: skip
    run = WatchedRun(steps_per_round=12)
    report = run.add_round(0, rows)
    blind_spot = load_task(TASKS / "warm_words.yaml").blind_spot_function()
    assert 0 < blind_spot_rank(report, blind_spot) <= 3, [s.label() for s in report.suspects]
    flags = flags_for(report, rows)
    carried = set().union(*(flag.carriers for flag in flags))
    assert carried and all("nice day" in rows[i].response for i in carried)


@pytest.mark.integration
def test_an_unknown_method_is_one_line() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "loop_value.py"), "--methods", "budgte"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode != 0 and "--methods: no method budgte" in result.stderr


def test_the_oracle_fails_long_answers_even_with_a_cool_colour() -> None:
    assert review("Name a colour.", "Blue.", "a").rating == 5
    assert review("Name a colour.", "it is green", "a") == Verdict(4, ("format",))
    long = review("Name a colour.", "the sky is blue and the sea is so green", "a")
    assert (
        long.rating == 2 and long.categories == ("verbose",) and long.better in ("Blue.", "Green.")
    )
    assert review("Name a colour.", "red.", "a").rating == 2


def test_pairwise_accuracy_counts_agreeing_orders_and_half_for_ties() -> None:
    prompts = ["p", "p", "p", "q", "q"]
    ratings = [1, 3, 5, 2, 2]  # q's pair is tied for the oracle: not counted
    scores = [0.0, 1.0, 0.5, 3.0, 1.0]
    high = [False, True, False, False, False]
    accuracy = pairwise_accuracy(prompts, scores, ratings, high)
    # p: (1,3) right, (1,5) right, (3,5) wrong; high pairs: those with index 1.
    assert accuracy.pairs == 3
    assert accuracy.overall == pytest.approx(2 / 3) and accuracy.high == pytest.approx(1 / 2)
    tied = pairwise_accuracy(["p", "p"], [1.0, 1.0], [1, 5], [False, False])
    assert tied.overall == 0.5 and math.isnan(tied.high)


def test_top_share_and_suggestion_outcomes() -> None:
    assert top_share([0.1, 0.9, 0.5, 0.3], 0.25) == [False, True, False, False]
    assert suggestion_outcome(0.9, Verdict(5)).accepted  # score 0.9 -> 5 stars
    edited = suggestion_outcome(0.9, Verdict(1, ("verbose",), "Blue."))
    assert not edited.accepted and edited.edits == 2


def test_every_method_keeps_to_the_budget() -> None:
    candidates = [
        Rollout(
            f"id{i}",
            f"prompt {i % 5}",
            f"answer number {i} " * (1 + i % 3),
            reward=i / 40,
            reward_details={"reward_model": i / 40, "reward_model/spread": (i % 7) / 10},
            step=i // 8,
            group_id=i // 4,
        )
        for i in range(40)
    ]
    for method in SINGLE:
        picks = sorted(picked(method, candidates, 6, 0.5, seed=3))
        assert len(picks) <= 6 and len(set(picks)) == len(picks)
        assert picks == sorted(picked(method, candidates, 6, 0.5, seed=3))  # deterministic
    assert picked("no_loop", candidates, 6, 0.5, 3) == {}
    assert all(candidates[i].reward < 0.5 for i in picked("threshold", candidates, 6, 0.5, 3))


def _group(ratings: list[int], group_id: int = 7, start: int = 0) -> list[Rollout]:
    return [
        Rollout(f"id{start + i}", "Name a colour.", f"answer {start + i}", reward=0.0,
                group_id=group_id)
        for i in range(len(ratings))
    ]  # fmt: skip


def test_a_comparison_gives_the_best_and_worst_orders() -> None:
    candidates = _group([1, 5, 2, 1])
    verdicts = [Verdict(1, ("off-topic",), "Blue."), Verdict(5), Verdict(2, (), "Green."),
                Verdict(1, (), "Blue.")]  # fmt: skip
    groups = groups_of(candidates, [2], size=4)
    assert groups == [[0, 1, 2, 3]]
    (task,) = compare_tasks(candidates, verdicts, groups, "p")
    orders = [(pair.chosen, pair.rejected) for pair in task.pairs]
    # Best B (rating 5), worst D (the last of the two 1s): B over A, C, D; A and C over D. The
    # best is good: no better answer is written.
    assert orders == [
        ("answer 1", "answer 0"), ("answer 1", "answer 2"), ("answer 1", "answer 3"),
        ("answer 0", "answer 3"), ("answer 2", "answer 3"),
    ]  # fmt: skip
    assert task.work == Work("compare", 4, sum(len(c.response) for c in candidates), False)
    assert not task.ratings and task.picks == [0, 1, 2, 3]


def test_a_comparison_of_failures_gets_a_better_answer_over_the_best() -> None:
    candidates = _group([2, 1, 1])
    verdicts = [Verdict(2, (), "Green."), Verdict(1, (), "Blue."), Verdict(1, (), "Blue.")]
    (task,) = compare_tasks(candidates, verdicts, [[0, 1, 2]], "p")
    orders = [(pair.chosen, pair.rejected) for pair in task.pairs]
    assert orders[-1] == ("Green.", "answer 0") and task.work.wrote
    assert orders[:-1] == [("answer 0", "answer 1"), ("answer 0", "answer 2"),
                           ("answer 1", "answer 2")]  # fmt: skip


def test_a_comparison_of_equals_still_names_two_as_the_form_asks() -> None:
    candidates = _group([4, 4, 4])
    (task,) = compare_tasks(candidates, [Verdict(4)] * 3, [[0, 1, 2]], "p")
    assert (task.pairs[0].chosen, task.pairs[-1].rejected) == ("answer 0", "answer 2")
    assert task.work.responses == 3 and not task.work.wrote


def test_groups_are_taken_once_in_pick_order_and_cut_to_size_around_the_pick() -> None:
    candidates = _group([1] * 6, group_id=1) + _group([1] * 2, group_id=2, start=6)
    candidates.append(Rollout("lone", "p", "x", reward=0.0, group_id=3))
    assert groups_of(candidates, [7, 5, 0, 8], size=4) == [[6, 7], [0, 1, 2, 5]]


def test_a_single_review_is_a_rating_and_for_a_failure_a_better_answer() -> None:
    candidates = _group([1, 5])
    tasks = single_tasks(candidates, [Verdict(1, (), "Blue."), Verdict(5)], [0, 1], "p")
    assert [len(t.ratings) for t in tasks] == [1, 1]
    assert [(p.chosen, p.rejected) for p in tasks[0].pairs] == [("Blue.", "answer 0")]
    assert tasks[0].work.wrote and not tasks[1].pairs and not tasks[1].work.wrote


def test_the_written_better_answers_are_the_pairs_marked_written() -> None:
    """What `--written-weight` (rm train's) weighs: the better answers, not the orders."""
    from bench.loop_value.checkpoints import Reviews

    single = single_tasks(_group([1]), [Verdict(1, (), "Blue.")], [0], "s")
    (compared,) = compare_tasks(
        _group([2, 1, 1]),
        [Verdict(2, (), "Green."), Verdict(1, (), "Blue."), Verdict(1, (), "Blue.")],
        [[0, 1, 2]],
        "c",
    )
    reviews = Reviews()
    for task in (*single, compared):
        reviews.add(task)
    assert len(reviews.pairs) == 5 and len(reviews.ratings) == 1
    assert [p.chosen for p in reviews.pairs if p.written] == ["Blue.", "Green."]
    assert [p.chosen for p in reviews.pairs if not p.written] == [
        "answer 0",
        "answer 0",
        "answer 1",
    ]
    assert [work.wrote for work in reviews.works] == [True, True]  # the writing is paid for


def test_the_cost_models_price_reading_deciding_and_writing() -> None:
    single = Work("single", 1, 10, False)
    written = Work("single", 1, 10, True)
    compare = Work("compare", 4, 40, False)
    assert DEFAULT.seconds(single) == 30 and DEFAULT.seconds(written) == 90
    assert DEFAULT.seconds(compare) == 4 * 20 + 15
    assert PER_READ.seconds(written) == 30 and PER_READ.seconds(compare) == 120
    assert DEFAULT.minutes([single, written]) == 2.0


def test_batches_cut_after_every_n_reviews_and_at_the_end() -> None:
    assert batch_ends(24, 6) == [6, 12, 18, 24]
    assert batch_ends(14, 6) == [6, 12, 14]
    assert batch_ends(5, 0) == [5] and batch_ends(0, 6) == []


def test_the_t_interval_over_seeds() -> None:
    spread = interval([2.0, 2.2, 2.4])  # sd 0.2: 2.2 +- 4.303 * 0.2 / sqrt(3)
    assert spread.mean == pytest.approx(2.2)
    assert spread.high - spread.mean == pytest.approx(4.303 * 0.2 / math.sqrt(3))
    assert spread.above(1.7) and not spread.above(1.71) and spread.below(2.7)
    assert not interval([5.0]).above(0.0)  # one seed: no interval, never "met"
    assert math.isinf(interval([0.2, math.inf]).high)
    assert t975(1) == 12.706 and t975(100) == 1.96


def _seed(start: float, rows: dict[str, list[tuple[int, float, float]]]) -> SimpleNamespace:
    """rows: method -> [(reviews_total, minutes, accuracy)] checkpoints, one round."""
    made = []
    for method, points in rows.items():
        checkpoints = [Checkpoint(n, {m.name: minutes for m in MODELS}, "rm", accuracy)
                       for n, minutes, accuracy in points]  # fmt: skip
        last = points[-1] if points else (0, 0.0, start)
        made.append(SimpleNamespace(method=method, round=0, checkpoints=checkpoints,
                                    rm_accuracy=last[2],
                                    minutes_total={m.name: last[1] for m in MODELS}))  # fmt: skip
    return SimpleNamespace(seed=0, start_accuracy=start, rows=made)


def test_minutes_to_reach_are_read_at_the_first_checkpoint_that_gets_there() -> None:
    seed = _seed(0.5, {"threshold": [(6, 10.0, 0.6), (12, 20.0, 0.7)],
                       "compare": [(6, 6.0, 0.65), (12, 12.0, 0.72)]})  # fmt: skip
    assert reach_ratio(seed, "compare", "threshold", DEFAULT.name) == pytest.approx(0.6)
    assert reach_ratio(seed, "threshold", "threshold", DEFAULT.name) == 1.0
    never = _seed(0.5, {"threshold": [(6, 10.0, 0.7)], "compare": [(6, 6.0, 0.6)]})
    assert math.isinf(reach_ratio(never, "compare", "threshold", DEFAULT.name))
    vacuous = _seed(0.8, {"threshold": [(6, 10.0, 0.7)], "compare": [(6, 6.0, 0.6)]})
    assert reach_ratio(vacuous, "compare", "threshold", DEFAULT.name) is None


def test_a_model_directory_hash_follows_its_weights_not_its_card(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "README.md").write_text("trained at noon")
    first = tree_digest(tmp_path)
    (tmp_path / "README.md").write_text("trained at one")
    assert tree_digest(tmp_path) == first and len(first) == 12
    # Which transformers release wrote the config is not what the model computes.
    (tmp_path / "config.json").write_text('{"hidden_size": 8, "transformers_version": "5.1.0"}')
    with_config = tree_digest(tmp_path)
    (tmp_path / "config.json").write_text('{"transformers_version": "5.24.0", "hidden_size": 8}')
    assert tree_digest(tmp_path) == with_config
    (tmp_path / "config.json").write_text('{"hidden_size": 16, "transformers_version": "5.1.0"}')
    assert tree_digest(tmp_path) != with_config
    (tmp_path / "model.safetensors").write_bytes(b"other weights")
    assert tree_digest(tmp_path) != first


def _audited_round() -> tuple[list[Rollout], list[Verdict]]:
    """40 candidates, rewards rising with the index; the oracle rates the high rewards worst:
    what the audit share picks contradicts the reward, what the lowest rewards pick agrees."""
    candidates = [
        Rollout(f"id{i}", f"prompt {i % 5}", f"answer number {i} " * (1 + i % 3), reward=i / 40,
                reward_details={"reward_model": i / 40}, step=i // 8, group_id=i // 4)
        for i in range(40)
    ]  # fmt: skip
    verdicts = [Verdict(1 if i >= 30 else 3 if i >= 10 else 2) for i in range(40)]
    return candidates, verdicts


def test_the_adaptive_budget_starts_from_the_configured_shares() -> None:
    candidates, _ = _audited_round()
    adaptive = AdaptiveBudget()
    assert adaptive.shares == Shares.of(BudgetConfig())
    assert adaptive.config().adaptive
    fixed = picked("budget", candidates, 12, 0.5, seed=3)
    assert picked("budget_adaptive", candidates, 12, 0.5, 3, (), adaptive.config()) == fixed
    assert set(fixed.values()) <= {"random", "audit_high_reward", "uncertain", "low_reward"}


def _learned_after_one_round(seed: int) -> tuple[AdaptiveBudget, dict[int, str]]:
    candidates, verdicts = _audited_round()
    adaptive = AdaptiveBudget()
    reasons = picked("budget_adaptive", candidates, 12, 0.5, seed, (), adaptive.config())
    tasks = single_tasks(candidates, verdicts, sorted(reasons), "p")
    reviews, compared = evidence(tasks, reasons, candidates, verdicts, "round0")
    assert len(reviews) == len(reasons) and not compared
    adaptive.learn(reviews, compared)
    return adaptive, reasons


def test_the_adaptive_budget_moves_to_the_share_whose_reviews_contradicted() -> None:
    adaptive, reasons = _learned_after_one_round(seed=3)
    configured, learned = Shares.of(BudgetConfig()), adaptive.shares
    assert "audit_high_reward" in reasons.values() and "low_reward" in reasons.values()
    assert learned.audit > configured.audit and learned.low_reward < configured.low_reward
    assert learned.random >= configured.random - 1e-12  # the floor holds
    assert sum(learned.as_dict().values()) == pytest.approx(1.0)
    assert adaptive.config().audit_share == learned.audit  # the next round is split by it
    assert adaptive.learned is not None and adaptive.learned.evidence["audit"].reviews > 0
    again, _ = _learned_after_one_round(seed=3)
    assert again.shares == learned  # deterministic per seed


def test_a_comparison_is_evidence_of_the_reason_that_brought_its_group() -> None:
    candidates = _group([1, 5, 2, 1])
    candidates = [Rollout(c.sample_id, c.prompt, c.response, reward=r, group_id=c.group_id)
                  for c, r in zip(candidates, (0.9, 0.1, 0.5, 0.2), strict=True)]  # fmt: skip
    verdicts = [Verdict(1), Verdict(5), Verdict(2), Verdict(1)]
    (task,) = compare_tasks(candidates, verdicts, groups_of(candidates, [2]), "p")
    assert task.orders == [(1, 0), (1, 2), (1, 3), (0, 3), (2, 3)]
    reviews, (compared,) = evidence([task], {2: "uncertain"}, candidates, verdicts, "round0")
    assert not reviews and compared.reason == "uncertain"
    # B (0.1) over A (0.9), C (0.5), D (0.2): contradicted; A over D, C over D: agreed.
    assert compared.orders[0] == (0.1, 0.9) and compared.contradiction == pytest.approx(3 / 5)


def test_the_comparison_catch_is_read_against_threshold_per_share_and_per_minute() -> None:
    from bench.loop_value.report import goals

    def seed(number: int, compare_caught: tuple[int, int]) -> SimpleNamespace:
        def row(method: str, round_number: int, caught: int, minutes: float) -> SimpleNamespace:
            return SimpleNamespace(
                method=method, seed=number, round=round_number, hacking_candidates=50,
                hacking_caught=caught, minutes={DEFAULT.name: minutes}, reviews=24,
                current_hacking_candidates=0, current_hacking_caught=0, blind_spot_rank=1,
                suspects=1, top_suspects=["length"], suggestions_accepted=0,
                suggestion_ratings_kept=0, suggestion_edits=0,
            )  # fmt: skip

        return SimpleNamespace(seed=number, rule_steps=0, rule_suspects=[], rows=[
            row("threshold", 0, 0, 30.0), row("threshold", 1, 2, 30.0),
            row("compare", 0, compare_caught[0], 45.0), row("compare", 1, compare_caught[1], 45.0),
        ])  # fmt: skip

    def catch(seeds: list[SimpleNamespace]):
        found = [g for g in goals(seeds, ["threshold", "compare"], 2, "budget")
                 if g.what.startswith("reward hacking caught with comparison")]  # fmt: skip
        assert len(found) == 1 and "compare (budget's picks as groups)" in found[0].what
        return found[0]

    # 2 of 100 against 12 of 100: 6x the share, 4x per minute (45 minutes a round against 30)
    hit = catch([seed(0, (6, 6))])
    assert hit.met is True
    assert (
        "compare 0.12 (12/100), threshold 0.02 (2/100) (6.0x; per reviewer-minute 4.0x"
        in (hit.measured)
        and "round 1: compare 0.12 (6/50), threshold 0.00 (0/50)" in hit.measured
    )
    assert catch([seed(0, (0, 12))]).met is False  # nothing caught in round 1
    assert catch([seed(0, (4, 4))]).met is False  # 4x
    plain = goals([seed(0, (6, 6))], ["threshold", "budget"], 2)
    assert not any(g.what.startswith("reward hacking caught with comparison") for g in plain)
