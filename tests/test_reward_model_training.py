"""`lowtide rm train | eval | compare` on the tiny reward model, with export-format data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from annotation.reward_model.data import RMDataError, load_rm_data
from annotation.reward_model.train import METADATA_FILE, spearman
from rl.rewards.model import RewardModel
from tests.conftest import invoke, run_cli

pytestmark = pytest.mark.integration

GOOD = ["Blue.", "Green.", "It is blue.", "The sea is green."]
BAD = ["Red.", "I do not know.", "It is red.", "Yellow and red."]


def export_rows(count: int) -> list[dict]:
    """Rating rows as `lowtide export` writes them: bad answers with a better one, good ones."""
    rows = []
    for i in range(count):
        prompt = f"Name a colour, please ({i})."
        bad, good = BAD[i % len(BAD)], GOOD[i % len(GOOD)]
        meta = {"better_response": good, "note": None, "run_id": "run-a", "step": i}
        rows.append({"prompt": prompt, "response": bad, "rating": 1, "categories": ["off-topic"],
                     "sample_id": f"bad-{i}", "meta": meta})  # fmt: skip
        approved = {**meta, "better_response": None}
        rows.append({"prompt": prompt, "response": good, "rating": 5, "categories": [],
                     "sample_id": f"good-{i}", "meta": approved})  # fmt: skip
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_trained_reward_model_ranks_held_out_pairs_above_chance(
    tiny_models, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_jsonl(tmp_path / "data" / "annotations.jsonl", export_rows(60))
    out = tmp_path / "rm-1"
    result = run_cli(
        "rm", "train", "--data", str(data), "--base", str(tiny_models.reward_model),
        "--out", str(out), "--epochs", "3", "--lr", "3e-4", cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    metadata = json.loads((out / METADATA_FILE).read_text())
    assert metadata["parent"] == str(tiny_models.reward_model)
    assert metadata["run_ids"] == ["run-a"]
    assert metadata["settings"]["lr_schedule"] == "constant"  # the command's default
    held_out = metadata["after"]
    assert held_out["pairs"] > 5 and held_out["pair_accuracy"] > 0.8, metadata
    assert held_out["rating_spearman"] > 0.5, metadata
    assert "pairwise accuracy" in result.stdout
    card = (out / "README.md").read_text()
    assert str(tiny_models.reward_model) in card and "type: reward_model" in card

    # The saved model loads the way a run's `reward_model` reward loads it, and prefers GOOD.
    scorer = RewardModel(out)
    scores = scorer.score_pairs(["Name a colour, please (999)."] * 8, GOOD + BAD)
    assert sum(scores[:4]) > sum(scores[4:])
    scorer.close()

    # `eval` and `compare` in this process: it has torch loaded already (a process each cost
    # ~5 s of CPU, most of it imports); `rm train` above is the separate process a user runs.
    monkeypatch.chdir(tmp_path)
    code, evaluated, _ = invoke(capsys, "rm", "eval", str(out), "--data", str(data))
    assert code == 0 and "pair accuracy" in evaluated
    code, compared, err = invoke(
        capsys, "rm", "compare", str(tiny_models.reward_model), str(out), "--data", str(data)
    )
    assert code == 0, err
    assert "mean score, rated 1-2" in compared and "worst-rated" in compared


@pytest.mark.unit
def test_a_directory_given_as_data_names_the_file_in_it(tmp_path: Path) -> None:
    with pytest.raises(RMDataError, match=r"a directory; give the file `lowtide export` wrote "):
        load_rm_data(tmp_path)
    (tmp_path / "annotations.jsonl").write_text("")
    (tmp_path / "annotations.preferences.jsonl").write_text("")
    message = f"{tmp_path}: a directory; give the file `lowtide export` wrote: "
    with pytest.raises(RMDataError, match=re.escape(f"{message}{tmp_path / 'annotations.jsonl'}?")):
        load_rm_data(tmp_path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no preference rows"),
        ('{"prompt": "p", "response": "r", "rating": 3}\nnot json\n', ":2: not valid JSON"),
        ('{"prompt": "p", "response": "r"}\n', "needs either chosen/rejected"),
        ('{"prompt": "p", "response": "r", "rating": 9}\n', "rating must be an integer from 1"),
        ('{"prompt": "p", "chosen": 3, "rejected": "r"}\n', "chosen must be a string"),
    ],
)
def test_bad_data_fails_with_a_clear_message(tmp_path: Path, content: str, message: str) -> None:
    data = tmp_path / "annotations.jsonl"
    data.write_text(content)
    with pytest.raises(RMDataError, match=message):
        load_rm_data(data)
    result = run_cli(
        "rm", "train", "--data", str(data), "--base", str(tmp_path), "--out", str(tmp_path / "o"),
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1 and message.strip(":") in result.stderr
    assert "Traceback" not in result.stderr


def test_a_base_that_is_not_a_model_says_so(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "annotations.jsonl", export_rows(10))
    result = run_cli(
        "rm", "train", "--data", str(data), "--base", str(tmp_path / "nope"),
        "--out", str(tmp_path / "o"), cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1 and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr
    given_a_file = run_cli(
        "rm", "train", "--data", str(data), "--base", str(data), "--out", str(tmp_path / "o"),
        cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert given_a_file.returncode == 1 and "is a file" in given_a_file.stderr
    assert not (tmp_path / "o").exists()  # nothing written before the inputs were checked
    for command in (["eval", str(tmp_path / "nope")],
                    ["compare", str(tmp_path), str(tmp_path / "nope")]):  # fmt: skip
        result = run_cli("rm", *command, "--data", str(data), cwd=tmp_path, timeout=120)
        assert result.returncode == 1 and "does not exist" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.unit
def test_pairs_come_from_better_responses_and_the_preferences_file(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "annotations.jsonl", export_rows(3))
    write_jsonl(tmp_path / "annotations.preferences.jsonl",
                [{"prompt": "p", "chosen": "a", "rejected": "b", "sample_id": "x"}])  # fmt: skip
    loaded = load_rm_data(data)
    assert len(loaded.ratings) == 6 and len(loaded.pairs) == 4  # 3 from better + 1 from file
    train, held = loaded.split(0.5)
    assert len(train.pairs) + len(held.pairs) == 4
    assert loaded.split(0.5)[1].pairs == held.pairs  # the split is stable


@pytest.mark.unit
def test_spearman() -> None:
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None


@pytest.mark.unit
def test_minibatches_keep_a_sample_together_and_cut_one_larger_than_a_batch() -> None:
    """A sample's pairs and rating share a step; one sample_id on many rows (hand-made data)
    does not make one step of all of them."""
    from annotation.reward_model.data import Pair, Rated, RMData
    from annotation.reward_model.train import RMTrainSettings, _batches

    small = [Pair("p", f"c{i}", "r", "s1") for i in range(3)] + [Pair("q", "c", "r", "s2")]
    huge = [Pair("p", f"c{i}", f"r{i}", "same") for i in range(40)]
    data = RMData(pairs=small + huge, ratings=[Rated("p", "r", 2, "s1")])
    batches = _batches(data, RMTrainSettings(batch_size=8))
    assert max(len(pairs) + len(rated) for pairs, rated in batches) <= 16
    assert sorted(map(id, (p for pairs, _ in batches for p in pairs))) == sorted(
        map(id, small + huge)
    )  # each pair once
    (with_s1,) = [b for b in batches if any(p.sample_id == "s1" for p in b[0])]
    assert len([p for p in with_s1[0] if p.sample_id == "s1"]) == 3 and with_s1[1]


@pytest.mark.unit
@pytest.mark.parametrize("schedule", ["linear", "constant"])
def test_the_learning_rate_falls_to_zero_by_the_last_step_unless_held(
    tiny_models, tmp_path: Path, schedule: str
) -> None:
    from annotation.reward_model.train import RMTrainSettings, train_reward_model

    data = load_rm_data(write_jsonl(tmp_path / "annotations.jsonl", export_rows(8)))
    settings = RMTrainSettings(epochs=2, learning_rate=2e-4, holdout=0.0, uncertainty_heads=0,
                               lr_schedule=schedule)  # fmt: skip
    rates: list[float] = []

    def seen(step: int, total: int, parts: dict[str, float]) -> None:
        rates.append(parts["rm/learning_rate"])

    report = train_reward_model(data, tiny_models.reward_model, tmp_path / "rm", settings, seen)
    total = report.steps
    assert len(rates) == total > 2
    if schedule == "constant":
        assert rates == [2e-4] * total
    else:  # each step's rate: the base one times the share of the run still to go
        assert rates == pytest.approx([2e-4 * (1 - done / total) for done in range(total)])
    saved = json.loads((tmp_path / "rm" / METADATA_FILE).read_text())
    assert saved["settings"]["lr_schedule"] == schedule


@pytest.mark.unit
def test_an_unknown_learning_rate_schedule_is_refused_by_name() -> None:
    from annotation.reward_model.train import RMTrainSettings

    with pytest.raises(ValueError, match="lr_schedule: 'cosine'; one of constant, linear"):
        RMTrainSettings(lr_schedule="cosine")
    with pytest.raises(ValueError, match="train: 'backbone'; one of model, head"):
        RMTrainSettings(train="backbone")


def test_an_unknown_schedule_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "annotations.jsonl", export_rows(2))
    result = run_cli(
        "rm", "train", "--data", str(data), "--base", str(tmp_path), "--out", str(tmp_path / "o"),
        "--lr-schedule", "cosine", cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "--lr-schedule" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "o").exists()


@pytest.mark.unit
def test_the_command_offers_the_schedules_training_accepts() -> None:
    # The command's choices come from training's settings (torch-free): they must not drift.
    import inspect
    import typing

    from annotation.reward_model.settings import LR_SCHEDULES
    from lowtide.cli.rm_cmd import train

    option = inspect.signature(train).parameters["lr_schedule"]
    assert list(typing.get_args(option.annotation)) == list(LR_SCHEDULES)


@pytest.mark.unit
def test_the_command_defaults_to_trainings_written_weight() -> None:
    # Spelled out so that `--help` needs no torch (the loop bench reads training's own default).
    import inspect

    from annotation.reward_model.train import RMTrainSettings
    from lowtide.cli.loop_cmd import loop
    from lowtide.cli.rm_cmd import train
    from lowtide.loop.settings import LoopSettings

    option = inspect.signature(train).parameters["written_weight"].default
    assert option.default == RMTrainSettings().written_weight == 1.0
    looped = inspect.signature(loop).parameters["rm_written_weight"].default
    assert looped.default == LoopSettings.model_fields["rm_written_weight"].default == 1.0


def _weights(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


@pytest.mark.unit
def test_a_head_refit_moves_the_score_head_alone_and_learns_from_the_reviews(
    tiny_models, tmp_path: Path
) -> None:
    """The loop bench's `--rm-train head` (a diagnostic of the first round's collapse)."""
    from annotation.reward_model.train import RMTrainSettings, train_reward_model

    data = load_rm_data(write_jsonl(tmp_path / "annotations.jsonl", export_rows(60)))
    out = tmp_path / "rm-head"
    train_reward_model(data, tiny_models.reward_model, out, RMTrainSettings(train="head"))
    metadata = json.loads((out / METADATA_FILE).read_text())
    assert metadata["settings"]["train"] == "head"
    held_out = metadata["after"]
    assert held_out["pairs"] > 5 and held_out["pair_accuracy"] > 0.8, metadata
    assert held_out["pair_accuracy"] > metadata["before"]["pair_accuracy"], metadata
    parent, refit = _weights(tiny_models.reward_model), _weights(out)
    assert parent.keys() == refit.keys()
    moved = sorted(name for name in parent if not parent[name].equal(refit[name]))
    assert moved == ["score.weight"], moved


@pytest.mark.unit
def test_the_anchor_holds_the_head_near_the_parents(tiny_models, tmp_path: Path) -> None:
    """The pull is in the head's own size: the stronger it is, the less the head moves."""
    from annotation.reward_model.head_refit import HeadRefitSettings, refit_score_head

    data = load_rm_data(write_jsonl(tmp_path / "annotations.jsonl", export_rows(16)))
    moved = []
    for anchor in (0.1, 1.0, 100.0):
        scorer = RewardModel(tiny_models.reward_model)
        parent = scorer.model.score.weight.detach().clone()
        refit_score_head(scorer, data, HeadRefitSettings(steps=100, anchor=anchor))
        change = (scorer.model.score.weight.detach() - parent).norm() / parent.norm()
        moved.append(change.item())
        scorer.close()
    assert moved[0] > moved[1] > moved[2] > 0, moved
    assert moved[2] < 0.05, moved


@pytest.mark.unit
def test_a_model_without_a_linear_score_head_cannot_be_refit(tiny_models, tmp_path) -> None:
    from torch import nn

    from annotation.reward_model.head_refit import HeadRefitSettings, refit_score_head

    data = load_rm_data(write_jsonl(tmp_path / "annotations.jsonl", export_rows(2)))
    scorer = RewardModel(tiny_models.reward_model)
    scorer.model.score = nn.Sequential(scorer.model.score)
    with pytest.raises(RMDataError, match=r"no one-output linear `score` head.*train=\"model\""):
        refit_score_head(scorer, data, HeadRefitSettings(steps=1))
    scorer.close()


@pytest.mark.unit
def test_pairs_know_whether_a_reviewer_wrote_their_chosen_side(tmp_path: Path) -> None:
    """The export's `chosen_written`; rows exported before it by their meta's better response;
    a rating row's better response; a malformed flag fails with its line."""
    rows = [
        {"prompt": "p", "chosen": "Blue.", "rejected": "Red.", "chosen_written": True,
         "sample_id": "a", "meta": {}},
        {"prompt": "p", "chosen": "It is blue.", "rejected": "Red.", "chosen_written": False,
         "sample_id": "b", "meta": {}},  # a comparison's order between two policy responses
        {"prompt": "p", "chosen": "Green.", "rejected": "Red.", "sample_id": "c",
         "meta": {"better_response": "Green."}},  # an older export's preference row
        {"prompt": "p", "chosen": "Green.", "rejected": "Pink.", "sample_id": "d", "meta": {}},
    ]  # fmt: skip
    data = load_rm_data(write_jsonl(tmp_path / "preferences.jsonl", rows))
    assert {p.sample_id: p.written for p in data.pairs} == {
        "a": True, "b": False, "c": True, "d": False,
    }  # fmt: skip
    rated = load_rm_data(write_jsonl(tmp_path / "annotations.jsonl", export_rows(1)))
    assert [(p.chosen, p.written) for p in rated.pairs] == [("Blue.", True)]
    broken = write_jsonl(tmp_path / "broken.jsonl", [{**rows[0], "chosen_written": "yes"}])
    with pytest.raises(RMDataError, match=r"broken.jsonl:1: chosen_written must be true or false"):
        load_rm_data(broken)


@pytest.mark.unit
def test_a_written_pair_weighs_written_weight_and_agreement_alike() -> None:
    import torch

    from annotation.reward_model.data import Pair
    from annotation.reward_model.train import RMTrainSettings, Weighting, _weighted_mean

    pairs = [Pair("p", "c", "r", "a", 1.0, written=True), Pair("p", "c", "r", "b", 0.5)]
    losses = torch.tensor([2.0, 4.0])
    assert Weighting(written=0.25).of_items(pairs).tolist() == [0.25, 1.0]  # agreement unweighed
    assert Weighting(2.0, 0.25).of_items(pairs).tolist() == [0.5, 1.0]  # agreement times scale
    assert Weighting().of_items(pairs) is None  # unweighted
    assert _weighted_mean(losses, pairs, Weighting(written=0.25)).item() == pytest.approx(2.25)
    with pytest.raises(ValueError, match=r"written_weight: 1\.5; from 0 to 1"):
        RMTrainSettings(written_weight=1.5)


@pytest.mark.unit
def test_the_written_weight_decides_between_written_and_compared_pairs(
    tiny_models, tmp_path: Path
) -> None:
    """40 written pairs prefer short answers to the policy's sentences; 20 pairs between the
    policy's own responses prefer the sentences. At weight 1 the written majority wins; at 0
    only the compared pairs train; a set of written pairs alone at 0 is nothing to train on."""
    from annotation.reward_model.data import Pair, RMData
    from annotation.reward_model.train import RMTrainSettings, evaluate, train_reward_model
    from rl.rewards.model import RewardModel

    short, sentence = ["Blue.", "Green.", "Red."], ["It is blue.", "It is green.", "It is red."]
    written = [Pair(f"Name a colour ({i}).", short[i % 3], sentence[i % 3], f"w-{i}",
                    written=True) for i in range(40)]  # fmt: skip
    compared = [Pair(f"Name a colour ({i}).", sentence[i % 3], short[i % 3], f"c-{i}")
                for i in range(40, 60)]  # fmt: skip

    def margin(weight: float) -> float:
        out = tmp_path / f"rm-{weight}"
        settings = RMTrainSettings(epochs=3, learning_rate=3e-4, rating_weight=0.0, holdout=0.0,
                                   uncertainty_heads=0, written_weight=weight)  # fmt: skip
        data = RMData(pairs=written + compared)
        train_reward_model(data, tiny_models.reward_model, out, settings)
        scorer = RewardModel(out)
        scores = scorer.score_pairs(["Name a colour (999)."] * 6, sentence + short)
        scorer.close()
        return sum(scores[:3]) - sum(scores[3:])

    assert margin(1.0) < 0 < margin(0.0)
    # Held-out figures tell the pairs between the policy's own responses apart.
    scorer = RewardModel(tmp_path / "rm-0.0")
    metrics = evaluate(scorer, RMData(pairs=written[:10] + compared[:10]))
    scorer.close()
    assert (metrics.pairs, metrics.policy_pairs, metrics.policy_pair_accuracy) == (20, 10, 1.0)
    assert metrics.pair_accuracy == 0.5, metrics  # the written ten lose: they were left out
    assert "(1.000 on the 10 between the policy's own)" in metrics.line()
    settings = RMTrainSettings(holdout=0.0, uncertainty_heads=0, written_weight=0.0)
    with pytest.raises(RMDataError, match="nothing to train on"):
        train_reward_model(RMData(pairs=written), tiny_models.reward_model, tmp_path, settings)


def test_rm_train_takes_the_written_weight_on_the_command_line(tiny_models, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "annotations.jsonl", export_rows(6))
    common = ("rm", "train", "--data", str(data), "--base", str(tiny_models.reward_model),
              "--holdout", "0", "--epochs", "1")  # fmt: skip
    refused = run_cli(*common, "--out", str(tmp_path / "no"), "--written-weight", "2",
                      cwd=tmp_path, timeout=120)  # fmt: skip
    assert refused.returncode == 2 and "--written-weight" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "no").exists()
    out = tmp_path / "rm"
    result = run_cli(*common, "--out", str(out), "--written-weight", "0", cwd=tmp_path,
                     timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = "6 of 6 pairs prefer a reviewer's written response: left out (--written-weight)"
    assert said in result.stderr, result.stderr
    saved = json.loads((out / METADATA_FILE).read_text())
    assert saved["settings"]["written_weight"] == 0.0 and saved["train_pairs"] == 0


def test_a_huge_value_is_quoted_cut_in_the_message(tmp_path: Path) -> None:
    data = tmp_path / "annotations.jsonl"
    data.write_text('{"prompt": "p", "response": "r", "rating": "' + "x" * 10**6 + '"}\n')
    with pytest.raises(RMDataError, match=r":1: rating must be an integer from 1 to 5, got 'x+…$"):
        load_rm_data(data)
    with pytest.raises(RMDataError) as error:
        load_rm_data(data)
    assert len(str(error.value)) < 200 + len(str(data))  # not a megabyte
