"""The reward model's outlier score (rl.rewards.representation): how far a response's
representation lies from the first samples scored (the starting policy's), reported as the extra
`outlier` of the `reward_model` reward, never in the total; and the reward-hacking watch reading
it as a feature."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_a_reference_file_keeps_the_first_run_s_reference_for_the_next(
    tiny_models, tmp_path
) -> None:
    """The first run writes the texts its reference filled with; a later run (the next round of
    a loop, whose policy has moved on) fits its reference from them, not from its own first
    samples, and so scores every response as the first run did."""
    reference = tmp_path / "outlier_reference.jsonl"
    spec = RewardSpec(
        type="reward_model", name="rm", path=str(tiny_models.reward_model),
        params={"outlier_reference": 24, "outlier_reference_file": str(reference)},
    )  # fmt: skip
    texts = LIKE_THE_START + STRANGE
    batch = RewardBatch([PROMPT] * len(texts), texts, [False] * len(texts))
    with RewardSet.from_specs([spec]) as first:
        first.score(RewardBatch([PROMPT] * 24, LIKE_THE_START * 4, [False] * 24))
        assert reference.exists()
        before = [details["rm/outlier"] for details in first.score(batch).details]
    written = reference.read_text().splitlines()
    assert len(written) == 24 and json.loads(written[1]) == {"prompt": PROMPT, "response": "Green."}

    with RewardSet.from_specs([spec]) as later:  # its first samples are strange ones
        strange = RewardBatch([PROMPT] * 24, STRANGE * 12, [False] * 24)
        assert all("rm/outlier" in details for details in later.score(strange).details)
        after = [details["rm/outlier"] for details in later.score(batch).details]
    assert after == pytest.approx(before)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"prompt": "a", "response": "b"}\n', "holds 1 sample(s); a reference needs at least 2"),
        ('{"prompt": "a", "response": "b"}\nnot json\n', ":2: "),
        ('{"prompt": "a"}\n{"prompt": "a", "response": "b"}\n', ":1: needs a string `prompt`"),
    ],
)
def test_a_broken_reference_file_is_one_clear_error(
    tiny_models, tmp_path, content: str, problem: str
) -> None:
    reference = tmp_path / "reference.jsonl"
    reference.write_text(content)
    params = {"outlier_reference": 8, "outlier_reference_file": str(reference)}
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model), params=params)
    with pytest.raises(RewardError, match="outlier_reference_file") as raised:
        RewardModel.from_spec(spec)
    assert problem in str(raised.value) and "\n" not in str(raised.value)


def test_a_reference_file_needs_a_reference_size(tiny_models, tmp_path) -> None:
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model),
                      params={"outlier_reference_file": str(tmp_path / "r.jsonl")})  # fmt: skip
    with pytest.raises(RewardError, match="needs outlier_reference: N"):
        RewardModel.from_spec(spec)


def test_every_round_of_a_loop_reads_the_first_round_s_reference(tmp_path, monkeypatch) -> None:
    """round_config, no service: with an outlier reference configured, every round names the
    loop's one reference file (the first round writes it); a file the config names is kept."""
    from lowtide.config import RunConfig
    from lowtide.loop.runner import LoopRunner
    from lowtide.loop.settings import LoopSettings

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "k" * 40)

    def reward_params(params: dict, number: int, loop: Path) -> dict:
        base = RunConfig.model_validate({
            "model": {"actor": {"model_name_or_path": str(tmp_path / "policy")}},
            "rewards": [{"type": "reward_model", "path": str(tmp_path / "rm"), "params": params}],
        })  # fmt: skip
        runner = LoopRunner(base, None, [], LoopSettings(rounds=2), loop)
        if number > 1:
            runner.state.record(1, "train", {"policy": str(tmp_path / "p1")})
        return runner.round_config(number).rewards[0].params

    loop = tmp_path / "loop"
    for number in (1, 2):
        params = reward_params({"outlier_reference": 64}, number, loop)
        file = str(loop / "outlier_reference.jsonl")
        assert params == {"outlier_reference": 64, "outlier_reference_file": file}
    own = {"outlier_reference": 64, "outlier_reference_file": str(tmp_path / "mine.jsonl")}
    assert reward_params(own, 2, tmp_path / "own") == own
    assert reward_params({}, 2, tmp_path / "none") == {}


def test_a_reference_file_that_cannot_be_written_is_one_clear_error(tiny_models, tmp_path) -> None:
    (tmp_path / "a-file").write_text("")
    params = {"outlier_reference": 4, "outlier_reference_file": str(tmp_path / "a-file" / "r")}
    spec = RewardSpec(type="reward_model", path=str(tiny_models.reward_model), params=params)
    model = RewardModel.from_spec(spec)
    with pytest.raises(RewardError, match=r"cannot write outlier_reference_file .*a-file/r: "):
        model(RewardBatch([PROMPT] * 4, LIKE_THE_START[:4], [False] * 4))
    model.close()
