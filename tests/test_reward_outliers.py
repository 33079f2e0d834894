"""The reward model's outlier score (rl.rewards.representation): how far a response's
representation lies from the first samples scored (the starting policy's), reported as the extra
`outlier` of the `reward_model` reward, never in the total; and the reward-hacking watch reading
it as a feature."""

from __future__ import annotations

import pytest
import torch

from rl.config import RewardSpec
from rl.rewards.combine import RewardSet
from rl.rewards.model import RewardModel
from rl.rewards.representation import OutlierScore
from rl.rewards.types import RewardBatch, RewardError
from sampling.selection.hacking import WatchConfig, analyze_rows
from tests.helpers.hacking_runs import Row

pytestmark = pytest.mark.unit

PROMPT = "Name a colour."
LIKE_THE_START = ["Blue.", "Green.", "It is blue.", "The sea is green.", "Red.", "It is red."]
STRANGE = ["0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5", "zzzz qqqq xxxx zzzz qqqq xxxx zzzz"]


def test_the_score_fits_on_the_first_samples_and_ranks_the_far_ones_higher() -> None:
    torch.manual_seed(0)
    score = OutlierScore(reference=200)
    first = score(torch.randn(150, 8))
    assert first == [None] * 150  # the reference is filling
    mixed = score(torch.cat([torch.randn(50, 8), torch.randn(10, 8)]))
    assert mixed[:50] == [None] * 50 and all(v is not None for v in mixed[50:])
    near = score(torch.randn(500, 8))
    far = score(torch.randn(50, 8) * 4 + 3)
    share_beyond = sum(v > 1 for v in near) / len(near)
    assert 0.03 < share_beyond < 0.2  # about the 10% beyond the reference's p90
    assert min(far) > max(sorted(near)[:450])


def test_a_wide_representation_from_few_samples_still_inverts() -> None:
    score = OutlierScore(reference=16)
    score(torch.randn(16, 128))  # 16 samples of 128 dims: singular without shrinkage
    values = score(torch.randn(4, 128))
    assert all(v is not None and v == v and v > 0 for v in values)


def test_the_reward_model_reports_outliers_as_an_extra_outside_the_total(tiny_models) -> None:
    spec = RewardSpec(
        type="reward_model", name="rm", path=str(tiny_models.reward_model),
        params={"outlier_reference": 24},
    )  # fmt: skip
    plain = RewardModel(tiny_models.reward_model)
    with RewardSet.from_specs([spec]) as rewards:
        start = rewards.score(RewardBatch([PROMPT] * 24, LIKE_THE_START * 4, [False] * 24))
        assert all("rm/outlier" not in details for details in start.details)
        texts = LIKE_THE_START + STRANGE
        later = rewards.score(RewardBatch([PROMPT] * len(texts), texts, [False] * len(texts)))
    outliers = [details["rm/outlier"] for details in later.details]
    assert max(outliers[len(LIKE_THE_START) :]) > max(outliers[: len(LIKE_THE_START)])
    assert later.total == pytest.approx(plain.score_pairs([PROMPT] * len(texts), texts))
    plain.close()


@pytest.mark.parametrize("value", [1, -3, True, "many"])
def test_a_bad_outlier_reference_is_one_clear_error(tiny_models, value) -> None:
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model),
                      params={"outlier_reference": value})  # fmt: skip
    with pytest.raises(RewardError, match="outlier_reference must be 0"):
        RewardModel.from_spec(spec)


def test_the_watch_reads_a_growing_paid_outlier_score_as_a_suspect() -> None:
    import random

    rng = random.Random(0)
    rows = []
    for step in range(30):
        share = 0.05 if step < 8 else min(0.6, 0.05 + 0.05 * (step - 8))
        for prompt in range(12):
            base = rng.gauss(0, 1)
            for _ in range(6):
                far = rng.random() < share
                reward = base + rng.gauss(0, 1) + (2.0 if far else 0.0)
                words = " ".join(rng.choice("abcdefghij") * 3 for _ in range(12))
                details = {"rm": reward, "rm/outlier": 1.8 if far else rng.uniform(0.2, 0.95)}
                rows.append(Row(step, len(rows), f"q{step}-{prompt}", words, reward, details))
    report = analyze_rows(rows, WatchConfig())
    assert report.suspects and report.suspects[0].feature.kind == "outlier", [
        s.label() for s in report.suspects
    ]
    assert "far from the starting policy" in report.suspects[0].describe()
    assert "rm/outlier" not in report.suspects[0].component_lifts  # an extra, not a component
