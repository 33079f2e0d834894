"""bench/loop_value.py: its quick mode end to end on the tiny models, and its measures."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.loop_value.cool_and_short import review
from bench.loop_value.measures import pairwise_accuracy, suggestion_outcome, top_share
from bench.loop_value.selection import METHODS, select
from bench.loop_value.task import Verdict, load_task
from bench.loop_value.training import Rollout
from tests.conftest import REPO

pytestmark = pytest.mark.unit

ROW = re.compile(r"^\| (no_loop|random|threshold|budget) \| (\d) \| (.*)\|$")


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
    rows = [ROW.match(line) for line in result.stdout.splitlines()]
    seen = {(m.group(1), int(m.group(2))) for m in rows if m}
    assert seen == {(method, number) for method in METHODS for number in (1, 2)}, result.stdout
    for match in filter(None, rows):
        cells = [cell.strip() for cell in match.group(3).split("|")]
        oracle, accuracy = float(cells[0].split()[0]), float(cells[1])
        assert 0 <= oracle <= 1 and 0 <= accuracy <= 1, match.group(0)
        reviews = float(cells[3].split()[0])
        assert reviews == (0 if match.group(1) == "no_loop" else 6), match.group(0)
    goals = result.stdout.split("Goals:")[1]
    for what in ("oracle score after 2 rounds", "reviews needed", "reward hacking caught",
                 "machine suggestions"):  # fmt: skip
        assert what in goals
    numbers = json.loads((tmp_path / "results.json").read_text())
    for row in numbers["seeds"][0]["rows"]:
        for key in ("oracle_score", "rm_accuracy", "rm_accuracy_high"):
            assert math.isfinite(row[key]), row
        assert row["hacking_caught"] <= row["hacking_candidates"]
    # Reviewed methods trained reward models of their own, with uncertainty heads.
    assert (tmp_path / "seed0" / "budget" / "rm1" / "lowtide_reward_heads.safetensors").exists()
    assert not list((tmp_path / "seed0" / "no_loop").glob("rm*"))  # never retrained


def test_the_task_file_splits_prompts_and_names_its_parts() -> None:
    task = load_task(REPO / "bench" / "loop_value" / "cool_and_short.yaml")
    assert not set(task.train_prompts) & set(task.held_out_prompts)
    assert len(task.held_out_prompts) == len(task.prompts) // 4
    assert task.oracle_function() is review


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
    for method in METHODS:
        picks = select(method, candidates, 6, 0.5, seed=3)
        assert len(picks) <= 6 and len(set(picks)) == len(picks)
        assert picks == select(method, candidates, 6, 0.5, seed=3)  # deterministic
    assert select("no_loop", candidates, 6, 0.5, 3) == []
    assert all(candidates[i].reward < 0.5 for i in select("threshold", candidates, 6, 0.5, 3))
