"""A reward model scored beside the one a loop started from (`reward_model` param `previous`):
the first model's score is the extra `previous`, never in the total, and `lowtide loop` asks for
it from round 2 when the budget policy can read it (sampling.selection.budget: where the two
disagree is uncertainty)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rl.config import RewardSpec
from rl.rewards.combine import RewardSet
from rl.rewards.model import RewardModel
from rl.rewards.types import RewardBatch, RewardError

pytestmark = pytest.mark.unit

PROMPT = "Name a colour."
TEXTS = ["Blue.", "Green.", "It is blue.", "The sea is green.", "Red, I think.", "zzzz qqqq"]


def flipped_copy(source: Path, target: Path) -> Path:
    """The reward model with its score head negated: it orders everything the other way."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(source)
    with torch.no_grad():
        model.score.weight.mul_(-1)
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    return target


def test_the_previous_model_s_score_is_an_extra_outside_the_total(tiny_models, tmp_path) -> None:
    before = flipped_copy(tiny_models.reward_model, tmp_path / "first")
    spec = RewardSpec(
        type="reward_model", name="rm", path=str(tiny_models.reward_model),
        params={"previous": str(before)},
    )  # fmt: skip
    prompts = [PROMPT] * len(TEXTS)
    now, first = RewardModel(tiny_models.reward_model), RewardModel(before)
    with RewardSet.from_specs([spec]) as rewards:
        result = rewards.score(RewardBatch(prompts, TEXTS, [False] * len(TEXTS)))
    assert result.total == pytest.approx(now.score_pairs(prompts, TEXTS))
    previous = [details["rm/previous"] for details in result.details]
    assert previous == pytest.approx(first.score_pairs(prompts, TEXTS), abs=1e-5)
    assert previous == pytest.approx([-score for score in result.total], abs=1e-4)
    now.close()
    first.close()


@pytest.mark.parametrize(
    ("value", "message"),
    [(3, "previous is a reward model's directory"), ("nowhere", "previous 'nowhere' does not")],
)
def test_a_bad_previous_model_is_one_clear_error(tiny_models, value, message) -> None:
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model),
                      params={"previous": value})  # fmt: skip
    with pytest.raises(RewardError, match=message):
        RewardModel.from_spec(spec)


def test_the_loop_scores_with_its_first_model_from_round_2(tmp_path, monkeypatch) -> None:
    """round_config, no service: with the budget policy the loop's first reward model is the
    `previous` of every later round when its uncertain share can read it; not in round 1, not
    for another policy, not without an uncertain share unless the shares adapt, not with
    --no-rm-disagreement, and a `previous` the config names is kept."""
    from lowtide.config import RunConfig
    from lowtide.loop.runner import LoopRunner
    from lowtide.loop.settings import LoopSettings

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)
    first = str(tmp_path / "rm")

    def reward_params(
        number: int, *, policy="budget", params=None, budget=None, **settings
    ) -> dict:
        budget = {"random_share": 0.1, "uncertainty_share": 0.3} if budget is None else budget
        base = RunConfig.model_validate({
            "model": {"actor": {"model_name_or_path": str(tmp_path / "policy")}},
            "rewards": [{"type": "reward_model", "path": first, "params": params or {}}],
            "sampling": {"policy": policy, "review_budget": {"reviews": 50, "per": "round"},
                         "budget": budget},
        })  # fmt: skip
        loop = tmp_path / (f"loop-{number}-{policy}-{sorted(settings.items())}-{bool(params)}"
                           f"-{sorted(budget.items())}")  # fmt: skip
        runner = LoopRunner(base, None, [], LoopSettings(rounds=3, **settings), loop)
        for earlier in range(1, number):
            runner.state.record(earlier, "train", {"policy": str(tmp_path / f"p{earlier}")})
            runner.state.record(earlier, "reward_model", {"path": str(tmp_path / f"rm{earlier}")})
        config = runner.round_config(number)
        newest = first if number == 1 else str(tmp_path / f"rm{number - 1}")
        assert config.rewards[0].path == newest
        return config.rewards[0].params

    assert reward_params(1) == {}
    assert reward_params(2) == {"previous": first}
    assert reward_params(3) == {"previous": first}
    assert reward_params(2, policy="threshold") == {}
    assert reward_params(2, rm_disagreement=False) == {}
    assert reward_params(2, budget={}) == {"previous": first}  # the default uncertain share
    no_uncertain = {"uncertainty_share": 0.0}
    assert reward_params(2, budget=no_uncertain) == {}  # nothing would read it
    assert reward_params(2, budget={**no_uncertain, "adaptive": True}) == {"previous": first}
    own = {"previous": str(tmp_path / "mine")}
    assert reward_params(2, params=own) == own
