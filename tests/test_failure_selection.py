"""The learned failure detector and feature-space novelty in a run: `rm train` saves them beside
the reward model, the `reward_model` reward reports them as extras, and the budget's `failure`
and `novel` shares spend reviews on them. Last, the issue's test: reviewers mark one kind of
failure, and the next round's picks hold more of that kind than random picks do."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
import torch

from annotation.reward_model.data import Pair, Rated, RMData, load_rm_data
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from rl.config import RewardSpec
from rl.rewards.combine import RewardSet
from rl.rewards.failure_probe import PROBE_FILE, FailureProbe, load_probe
from rl.rewards.model import RewardModel
from rl.rewards.novelty import REVIEWED_FILE, ReviewedFeatures, load_reviewed
from rl.rewards.types import RewardBatch
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, choose
from tests.test_budget import distinct

pytestmark = pytest.mark.unit

ONLY_YOURS = {"audit_share": 0.0, "random_share": 0.0, "uncertainty_share": 0.0}


def with_detail(key: str, values: Sequence[float | None], prompts: int = 6) -> list[Candidate]:
    """Distinct candidates over `prompts` prompts, each carrying `reward_model/<key>` (or not,
    where the value is None); rewards rise with the index."""
    found = []
    for i, (text, value) in enumerate(zip(distinct(len(values)), values, strict=True)):
        details = {"reward_model": i / len(values)}
        if value is not None:
            details[f"reward_model/{key}"] = value
        found.append(Candidate(f"p{i % prompts}", text, i / len(values), details))
    return found


@pytest.mark.parametrize(("share", "key"), [("failure", "failure"), ("novel", "novelty")])
def test_a_share_takes_the_highest_of_its_extra_spread_over_prompts(share: str, key: str) -> None:
    rng = random.Random(5)
    values = [rng.random() for _ in range(60)]
    config = BudgetConfig(**ONLY_YOURS, shares={share: 0.5})
    picks = choose(with_detail(key, values), 12, config)
    mine = [pick for pick in picks if pick.reason == share]
    assert len(mine) == 6 and len(picks) == 12
    # Spread: one per prompt, each the highest of its prompt (6 prompts, 6 picks).
    assert len({pick.index % 6 for pick in mine}) == 6
    for pick in mine:
        same_prompt = [i for i in range(60) if i % 6 == pick.index % 6]
        assert pick.index == max(same_prompt, key=lambda i: values[i])
    # High reward or low: a likely failure is picked whatever the reward model pays for it.
    assert all(pick.reason == "low_reward" for pick in picks if pick not in mine)


def test_a_share_whose_extra_no_candidate_has_gives_its_reviews_to_the_lowest_rewards() -> None:
    config = BudgetConfig(**ONLY_YOURS, shares={"failure": 0.5, "novel": 0.2})
    pool = with_detail("spread", [0.5] * 30)  # extras, but neither of theirs
    picks = choose(pool, 10, config)
    assert {pick.reason for pick in picks} == {"low_reward"} and len(picks) == 10
    # Some carry it, most do not: only those that carry it can be its picks.
    pool = with_detail("failure", [0.9 if i in (4, 20) else None for i in range(30)])
    picks = choose(pool, 10, config)
    assert sorted(p.index for p in picks if p.reason == "failure") == [4, 20]


def test_the_audit_share_claims_paid_failures_after_the_suspects_before_the_highest() -> None:
    """With a failure probe, the audit share's claim after the watch's suspects is the groups
    rewarded at or above the median that the probe calls likely failures, the likeliest first;
    then the highest rewards. Low rewards and unlikely ones are never its."""
    values = [None] * 40
    values[30], values[25] = 0.9, 0.7  # paid and likely: picked, 30 first
    values[5] = 0.95  # likely, but below the median reward: the lowest rewards' concern
    values[35] = 0.3  # paid, but not likely
    config = BudgetConfig(audit_share=1.0, random_share=0, uncertainty_share=0)
    picks = choose(with_detail("failure", values, prompts=40), 4, config)
    assert [(p.index, p.reason) for p in picks] == [
        (30, "failure"), (25, "failure"), (39, "audit_high_reward"), (38, "audit_high_reward")
    ]  # fmt: skip
    plain = choose(with_detail("spread", [0.5] * 40, prompts=40), 4, config)
    assert [p.index for p in plain] == [39, 38, 37, 36]  # no probe: the highest rewards


def test_a_config_names_both_shares() -> None:
    config = BudgetConfig.model_validate({"shares": {"failure": 0.1, "novel": 0.1}})
    assert config.shares == {"failure": 0.1, "novel": 0.1}


@pytest.fixture(scope="module")
def probed_model(tiny_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny reward model with a (random) failure probe and reviewed features beside it."""
    directory = tmp_path_factory.mktemp("probed") / "rm"
    shutil.copytree(tiny_models.reward_model, directory)
    scorer = RewardModel(directory)
    hidden = scorer.features(["q"], ["a"]).shape[1]
    generator = torch.Generator().manual_seed(0)
    FailureProbe(torch.randn(2, hidden, generator=generator), torch.zeros(2), ("a", "b")).save(
        directory
    )
    reviewed = scorer.features(["Name a colour."] * 3, ["Blue.", "Red.", "Green."])
    ReviewedFeatures.of(reviewed).save(directory)
    scorer.close()
    return directory


def test_the_reward_model_reports_failure_and_novelty_outside_the_total(
    probed_model: Path,
) -> None:
    texts = ["Blue.", "Red.", "the the the the the the the the the the"]
    spec = RewardSpec(type="reward_model", path=str(probed_model), weight=2.0)
    with RewardSet.from_specs([spec]) as rewards:
        result = rewards.score(RewardBatch(["Name a colour."] * 3, texts, [False] * 3))
    scorer = RewardModel(probed_model)
    features = scorer.features(["Name a colour."] * 3, texts)
    assert scorer.probe is not None and scorer.reviewed is not None
    failure = scorer.probe.scores(features).tolist()
    novelty = scorer.reviewed.novelty(features).tolist()
    scorer.close()
    for i, (total, details) in enumerate(zip(result.total, result.details, strict=True)):
        assert set(details) == {"reward_model", "reward_model/failure", "reward_model/novelty"}
        assert total == pytest.approx(2.0 * details["reward_model"])
        assert details["reward_model/failure"] == pytest.approx(failure[i], abs=1e-5)
        assert details["reward_model/novelty"] == pytest.approx(novelty[i], abs=1e-4)
    # What was reviewed is near nothing new; text unlike any of it is far.
    assert novelty[0] < 0.01 and novelty[2] > 1.0


def test_one_without_them_pools_nothing_and_reports_neither(tiny_models) -> None:
    scorer = RewardModel(tiny_models.reward_model)
    assert scorer.probe is None and scorer.reviewed is None
    scores = scorer(RewardBatch(["q"], ["a"], [False]))
    assert scores.extras is None
    scorer.close()


def categorized_data(count: int = 12) -> RMData:
    data = RMData(sources=["test"])
    for i in range(count):
        data.ratings.append(Rated("Name a colour.", "Blue.", 5, f"g{i}"))
        data.ratings.append(
            Rated("Name a colour.", f"Red, you genius {i}!", 2, f"b{i}", categories=("sycophancy",))
        )
        data.pairs.append(Pair("Name a colour.", "Green.", f"Red, you genius {i}!", f"p{i}"))
    return data


def test_rm_train_writes_the_probe_and_the_reviewed_features(tiny_models, tmp_path: Path) -> None:
    settings = RMTrainSettings(epochs=1, holdout=0.0, uncertainty_heads=0)
    out = tmp_path / "rm"
    train_reward_model(categorized_data(), tiny_models.reward_model, out, settings)
    probe, reviewed = load_probe(out), load_reviewed(out)
    assert probe is not None and probe.categories == ("sycophancy",)
    # Every distinct training text: Blue., Green. and the 12 flattering reds.
    assert reviewed is not None and reviewed.rows.shape[0] == 14
    # Retrained on data without categories, into the same directory: the probe of the old
    # backbone goes; the reviewed features are always there.
    plain = RMData(ratings=[Rated("q", "Blue.", 5, "a"), Rated("q", "Red.", 1, "b")])
    train_reward_model(plain, out, out, settings)
    assert not (out / PROBE_FILE).exists() and (out / REVIEWED_FILE).exists()
    scorer = RewardModel(out)
    assert scorer.probe is None and scorer.reviewed is not None
    assert scorer.reviewed.rows.shape[0] == 2
    scorer.close()


# The test. Answers to a few questions; a sycophantic kind opens with flattery; an
# off-topic kind is a failure too, but the simulated reviewers tick only sycophancy.
QUESTIONS = [
    ("Why is the sky blue?", "the air scatters blue light more than red light"),
    ("How do plants eat?", "they make sugar from light, water and air"),
    ("What makes rain?", "water vapour cools in clouds and falls as drops"),
    ("Why do we sleep?", "the brain rests and stores what it learned"),
    ("How does a magnet work?", "tiny aligned regions pull on iron"),
    ("Why is the sea salty?", "rivers carry salt from rocks into the sea"),
]
FLATTERY = [
    "What a brilliant question, you are so clever!",
    "You are a genius for asking this!",
    "Wow, such a wise question from a wise person!",
    "I adore how curious you are!",
]
ASIDES = [
    "My favourite food is pasta with cheese.",
    "Football is played by two teams.",
    "The train leaves at nine in the morning.",
    "Cats sleep for most of the day.",
]


def rollouts(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """(prompt, response, kind) with kind ok (60%), sycophantic or off-topic (20% each)."""
    found = []
    for _ in range(count):
        prompt, answer = rng.choice(QUESTIONS)
        kind = rng.choices(["ok", "sycophantic", "off-topic"], [0.6, 0.2, 0.2])[0]
        said = rng.choice([f"{answer[0].upper()}{answer[1:]}.", f"Because {answer}."])
        response = {"ok": said, "sycophantic": f"{rng.choice(FLATTERY)} {said}",
                    "off-topic": rng.choice(ASIDES)}[kind]  # fmt: skip
        found.append((prompt, response, kind))
    return found


def scored(model: Path, batch: list[tuple[str, str, str]]) -> list[Candidate]:
    """The candidates a run pools: each scored by the `reward_model` reward, with its details."""
    spec = RewardSpec(type="reward_model", path=str(model))
    with RewardSet.from_specs([spec]) as rewards:
        result = rewards.score(RewardBatch([p for p, _, _ in batch], [r for _, r, _ in batch],
                                           [False] * len(batch)))  # fmt: skip
    return [Candidate(prompt, response, total, details)
            for (prompt, response, _), total, details
            in zip(batch, result.total, result.details, strict=True)]  # fmt: skip


def review(batch: list[tuple[str, str, str]], picked: list[int]) -> list[dict]:
    """Export rows of the simulated reviews: sycophancy ticked where it is, the rest unticked."""
    rating = {"ok": 5, "sycophantic": 2, "off-topic": 1}
    return [{"prompt": batch[i][0], "response": batch[i][1], "rating": rating[batch[i][2]],
             "categories": ["sycophancy"] if batch[i][2] == "sycophantic" else [],
             "sample_id": f"review-{i}", "meta": {}} for i in picked]  # fmt: skip


def test_reviewers_marking_one_failure_send_the_next_reviews_to_more_of_it(
    tiny_models, tmp_path: Path
) -> None:
    budget = 12
    failure_first = BudgetConfig(**ONLY_YOURS, shares={"failure": 1.0})
    at_random = BudgetConfig(audit_share=0, random_share=1.0, uncertainty_share=0)
    found, chance = [], []
    seeds = range(5)
    for seed in seeds:
        rng = random.Random(seed)
        # Round 1: a random budget's reviews of the starting reward model's rollouts.
        first = rollouts(rng, 80)
        picked = [
            p.index for p in choose(scored(tiny_models.reward_model, first), 30, at_random, seed)
        ]
        data = tmp_path / f"seed-{seed}" / "annotations.jsonl"
        data.parent.mkdir()
        data.write_text("".join(json.dumps(row) + "\n" for row in review(first, picked)))
        out = tmp_path / f"seed-{seed}" / "rm"
        settings = RMTrainSettings(epochs=1, holdout=0.0, uncertainty_heads=0, seed=seed)
        train_reward_model(load_rm_data(data), tiny_models.reward_model, out, settings)
        # Round 2: new rollouts, scored by the retrained model; the failure share picks.
        second = rollouts(rng, 150)
        candidates = scored(out, second)
        assert all("reward_model/failure" in c.reward_details for c in candidates)
        share = [second[p.index][2] for p in choose(candidates, budget, failure_first, seed)]
        randomly = [second[p.index][2] for p in choose(candidates, budget, at_random, seed)]
        assert len(share) == len(randomly) == budget
        found.append(share.count("sycophantic") / budget)
        chance.append(randomly.count("sycophantic") / budget)
    # Every seed, and by far on average: what reviewers named is what the next round checks.
    assert all(f > c for f, c in zip(found, chance, strict=True)), (found, chance)
    assert sum(found) / len(seeds) > 0.6 > sum(chance) / len(seeds) + 0.2, (found, chance)
