"""Uncertainty heads of a reward model: fitted with it, saved beside it, their spread reported as
an extra of the `reward_model` reward, never added into the reward total."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import torch

from annotation.reward_model.data import Pair, Rated, RMData
from annotation.reward_model.train import RMTrainSettings, train_reward_model
from rl.config import RewardSpec
from rl.rewards.combine import RewardSet
from rl.rewards.model import RewardModel
from rl.rewards.types import RewardBatch
from rl.rewards.uncertainty import HEADS_FILE, UncertaintyHeads, load_heads

pytestmark = pytest.mark.unit

PROMPT = "Name a colour."
GOOD = ["Blue.", "Green.", "It is blue.", "The sea is green."]
BAD = ["Red.", "I do not know.", "It is red.", "Yellow and red."]
# Nothing like the training data: long, off-task text.
STRANGE = ["the the the the the the the the the the the the the the", "0 1 2 3 4 5 6 7 8 9 0 1 2"]


def colour_data(count: int = 24) -> RMData:
    data = RMData(sources=["test"])
    for i in range(count):
        good, bad = GOOD[i % 4], BAD[i % 4]
        data.pairs.append(Pair(PROMPT, good, bad, f"pair-{i}"))
        data.ratings.append(Rated(PROMPT, good, 5, f"good-{i}"))
        data.ratings.append(Rated(PROMPT, bad, 1, f"bad-{i}"))
    return data


@pytest.fixture(scope="module")
def with_heads(tiny_models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rm-heads") / "rm"
    settings = RMTrainSettings(epochs=2, learning_rate=3e-4, holdout=0.0, uncertainty_heads=5)
    train_reward_model(colour_data(), tiny_models.reward_model, out, settings)
    return out


def test_trained_heads_are_saved_beside_the_model_and_reload_identically(with_heads: Path) -> None:
    heads = load_heads(with_heads)
    assert heads is not None and heads.count == 5
    assert heads.weight.shape[1] == 128  # the tiny model's hidden size
    # The bootstraps and random starts differ: the heads are not copies of one another.
    assert not torch.allclose(heads.weight[0], heads.weight[1])

    copy = with_heads.parent / "copy"
    shutil.copytree(with_heads, copy)
    texts = GOOD + BAD + STRANGE
    first, again = RewardModel(with_heads), RewardModel(copy)
    scores, spreads = first.score_with_spread([PROMPT] * len(texts), texts)
    scores_again, spreads_again = again.score_with_spread([PROMPT] * len(texts), texts)
    assert spreads is not None and spreads_again is not None
    assert scores == pytest.approx(scores_again) and spreads == pytest.approx(spreads_again)
    assert all(math.isfinite(value) and value >= 0 for value in spreads)
    # What the heads saw in training, they agree on more than on text unlike any of it.
    seen = sum(spreads[:8]) / 8
    unseen = sum(spreads[8:]) / len(STRANGE)
    assert unseen > seen, (seen, unseen)
    first.close()
    again.close()


def test_heads_that_agree_have_zero_spread() -> None:
    row = torch.randn(1, 16)
    agreeing = UncertaintyHeads(row.repeat(4, 1), torch.full((4,), 0.3))
    features = torch.randn(7, 16)
    assert agreeing.spread(features).abs().max().item() < 1e-6
    disagreeing = UncertaintyHeads(torch.randn(4, 16), torch.zeros(4))
    assert disagreeing.spread(features).min().item() > 0


def test_the_spread_is_a_detail_and_not_part_of_the_total(with_heads: Path) -> None:
    spec = RewardSpec(type="reward_model", path=str(with_heads), weight=2.0)
    batch = RewardBatch([PROMPT] * 3, ["Blue.", "Red.", STRANGE[0]], [False] * 3)
    with RewardSet.from_specs([spec]) as rewards:
        result = rewards.score(batch)
    for total, details in zip(result.total, result.details, strict=True):
        # rm train keeps the reviewed texts' features too: novelty, another extra.
        assert set(details) == {"reward_model", "reward_model/spread", "reward_model/novelty"}
        assert details["reward_model/spread"] > 0
        assert total == pytest.approx(2.0 * details["reward_model"])


def test_a_model_without_heads_scores_as_before_and_reports_no_spread(tiny_models) -> None:
    assert not (Path(tiny_models.reward_model) / HEADS_FILE).exists()
    scorer = RewardModel(tiny_models.reward_model)
    texts = GOOD + BAD
    scores, spreads = scorer.score_with_spread([PROMPT] * 8, texts)
    assert spreads is None and scores == scorer.score_pairs([PROMPT] * 8, texts)
    component = scorer(RewardBatch([PROMPT] * 8, texts, [False] * 8))
    assert component.extras is None and component.values == scores
    scorer.close()
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model))
    with RewardSet.from_specs([spec]) as rewards:
        details = rewards.score(RewardBatch([PROMPT], ["Blue."], [False])).details
    assert set(details[0]) == {"reward_model"}


def test_training_without_heads_leaves_no_stale_heads_file(with_heads: Path) -> None:
    # Retraining into a directory that had heads, with heads turned off: the old heads were
    # fitted to another backbone and must go.
    settings = RMTrainSettings(epochs=1, holdout=0.0, uncertainty_heads=0)
    train_reward_model(colour_data(8), with_heads, with_heads.parent / "again", settings)
    target = with_heads.parent / "overwrite"
    shutil.copytree(with_heads, target)
    assert (target / HEADS_FILE).exists()
    train_reward_model(colour_data(8), target, target, settings)
    assert not (with_heads.parent / "again" / HEADS_FILE).exists()
    assert not (target / HEADS_FILE).exists()
    assert RewardModel(target).heads is None


def test_heads_fit_on_ratings_alone_and_on_pairs_alone(tiny_models, tmp_path: Path) -> None:
    # People gave stars without writing a better answer: no pairs at all (and the reverse).
    stars = RMData(ratings=[Rated(PROMPT, "Blue.", 5, "a"), Rated(PROMPT, "Red.", 2, "b")])
    pairs = RMData(pairs=[Pair(PROMPT, "Blue.", "Red.", "c"), Pair(PROMPT, "Green.", "No.", "d")])
    for name, data in (("stars", stars), ("pairs", pairs)):
        settings = RMTrainSettings(epochs=1, holdout=0.0, uncertainty_heads=3)
        train_reward_model(data, tiny_models.reward_model, tmp_path / name, settings)
        heads = load_heads(tmp_path / name)
        assert heads is not None and heads.count == 3
        assert torch.isfinite(heads.weight).all() and torch.isfinite(heads.bias).all()


def test_heads_fitted_together_are_the_heads_fitted_one_by_one() -> None:
    # All heads are one (K, hidden) fit for speed; no head may learn from another's bootstrap.
    from annotation.reward_model.heads import HeadSettings, fit_linear

    generator = torch.Generator().manual_seed(3)
    heads, pairs, rated, hidden = 4, 40, 20, 16
    start = torch.randn(heads, hidden, generator=generator)
    margins = torch.randn(heads, pairs, hidden, generator=generator)
    features = torch.randn(heads, rated, hidden, generator=generator)
    targets = torch.randn(heads, rated, generator=generator)
    settings = HeadSettings(steps=60)
    weight, bias, _ = fit_linear(start, margins, features, targets, settings)
    for k in range(heads):
        alone = fit_linear(start[k : k + 1], margins[k : k + 1], features[k : k + 1],
                     targets[k : k + 1], settings)  # fmt: skip
        assert torch.allclose(weight[k], alone[0][0], atol=1e-5)
        assert torch.allclose(bias[k], alone[1][0], atol=1e-5)
    moved = (weight - start).norm(dim=1)
    assert (moved > 1e-3).all()  # each head was fitted, not left at its start
