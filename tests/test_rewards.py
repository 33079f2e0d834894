"""Rewards: rule edge cases, weighted combination, user functions by dotted path, NaN accounting,
loud errors, and the reward model type on the tiny local model."""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import yaml
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from rl.config import RewardSpec
from rl.models.tiny import TinyModelPaths, build_tiny_models
from rl.rewards import RewardBatch, RewardError, RewardSet, batched, reward_types
from tests.conftest import REPO

pytestmark = pytest.mark.unit

HERE = "tests.test_rewards"
SFT_STEPS = 20


# --- reward functions named by dotted path, as users do in YAML ----------------------------------


def my_reward(prompt: str, response: str, bonus: float = 0.0) -> float:
    return len(response.split()) / 10 + bonus


def with_parts(prompt: str, response: str) -> dict[str, float]:
    return {"score": 1.0, "words": len(response.split()), "chars": len(response)}


def with_tuple(prompt: str, response: str) -> tuple[float, dict[str, float]]:
    return 0.5, {"has_period": response.endswith(".")}


def ends_with_period(prompt: str, response: str) -> bool:
    return response.endswith(".")


def as_tensor(prompt: str, response: str) -> torch.Tensor:
    return torch.tensor(0.25)


def sees_truncation(prompt: str, response: str, truncated: bool) -> float:
    return -1.0 if truncated else 1.0


def fails_on_boom(prompt: str, response: str) -> float:
    if "boom" in response:
        raise ZeroDivisionError("boom")
    return 1.0


def non_finite(prompt: str, response: str) -> float:
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(response, 1.0)


def returns_text(prompt: str, response: str) -> str:
    return "good"


def dict_without_score(prompt: str, response: str) -> dict[str, float]:
    return {"value": 1.0}


@batched
def batch_lengths(prompts: list[str], responses: list[str], scale: float = 1.0) -> list[float]:
    return [scale * len(response) for response in responses]


@batched
def batch_parts(prompts: list[str], responses: list[str], truncated: list[bool]) -> list:
    pairs = zip(prompts, truncated, strict=True)
    return [{"score": float(not cut), "prompt_chars": len(prompt)} for prompt, cut in pairs]


@batched
def batch_raises(prompts: list[str], responses: list[str]) -> list[float]:
    raise RuntimeError("the judge is down")


@batched
def batch_too_short(prompts: list[str], responses: list[str]) -> list[float]:
    return [1.0]


# --- helpers -------------------------------------------------------------------------------------


def make_batch(responses: list[str], truncated: list[bool] | None = None) -> RewardBatch:
    prompts = [f"question {index}" for index in range(len(responses))]
    return RewardBatch(prompts, responses, truncated or [False] * len(responses))


def score(specs: list[RewardSpec], responses: list[str], truncated: list[bool] | None = None):
    return RewardSet.from_specs(specs).score(make_batch(responses, truncated))


def rule(kind: str, responses: list[str], truncated: list[bool] | None = None, **params):
    return score([RewardSpec(type=kind, params=params)], responses, truncated).total


def spec(kind: str, **fields) -> RewardSpec:
    return RewardSpec(type=kind, **fields)


# --- built-in rules ------------------------------------------------------------------------------


def test_keyword_matches_whole_words_ignoring_case_and_punctuation() -> None:
    responses = ["Blue.", "I like BLUE!", "(blue)", "bluebird", "blueish sky", "", "the sky"]
    assert rule("keyword", responses) == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]


def test_keyword_takes_several_words_a_single_word_and_phrases() -> None:
    assert rule("keyword", ["green.", "red.", "Blue"], words=["blue", "green"]) == [1, 0, 1]
    assert rule("keywords", ["a red fox", "redo"], words="red") == [1.0, 0.0]
    assert rule("keyword", ["light blue.", "blue light"], words=["light blue"]) == [1.0, 0.0]
    assert rule("keyword", ["c++ rocks", "abc++"], words=["c++"]) == [1.0, 0.0]


def test_keyword_ignores_truncation() -> None:
    assert rule("keyword", ["blue blue blue"], [True]) == [1.0]


def test_brevity_peaks_at_the_target_and_zeroes_empty_and_truncated() -> None:
    responses = ["one two three four", "one two", "", "1 2 3 4 5 6 7 8 9", "one two three four"]
    truncated = [False, False, False, False, True]
    assert rule("brevity", responses, truncated) == [1.0, 0.5, 0.0, 0.0, 0.0]
    assert rule("length", ["a b", "a"], [False, True], target=2, truncated_value=-1) == [1.0, -1.0]


def test_format_wants_a_finished_sentence() -> None:
    responses = ["blue is nice.", "blue is nice", ".", "", "Blue.  ", "blue is nice.", "wow!"]
    truncated = [False, False, False, False, False, True, False]
    assert rule("format", responses, truncated) == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert rule("format", ["wow!", "ok."], endings=["!", "."]) == [1.0, 1.0]


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("keyword", {"words": []}, "non-empty list"),
        ("keyword", {"words": ["blue", ""]}, "non-empty list"),
        ("keyword", {"word": ["blue"]}, "Did you mean 'words'?"),
        ("brevity", {"target": 0}, "positive number"),
        ("brevity", {"target": "four"}, "positive number"),
        ("format", {"ending": "."}, "Did you mean 'endings'?"),
    ],
)
def test_bad_rule_params_fail_at_start(kind: str, params: dict, message: str) -> None:
    with pytest.raises(RewardError, match=message):
        RewardSet.from_specs([spec(kind, params=params)])


def test_rule_scoring_is_cheap() -> None:
    rewards = RewardSet.from_specs(
        [spec("keyword", params={"words": ["blue", "green"]}), spec("format"), spec("brevity")]
    )
    batch = make_batch(["the fish is blue.", "it is red and long", ""] * 1000)
    timings = []
    for _ in range(3):  # the best of three: a busy machine's pauses are not the scoring's cost
        start = time.perf_counter()
        rewards.score(batch)
        timings.append((time.perf_counter() - start) / len(batch))
    per_sample = min(timings)
    assert per_sample < 100e-6, per_sample  # ~10 us here; generous for busy machines


# --- combination ---------------------------------------------------------------------------------


def test_total_is_the_weighted_sum_and_details_hold_raw_values() -> None:
    specs = [spec("keyword", weight=2.0), spec("brevity", weight=0.5, params={"target": 2})]
    result = score(specs, ["blue fish", "red", "nothing here at all"])
    assert result.total == [2.5, 0.25, 0.0]
    assert result.details == [
        {"keyword": 1.0, "brevity": 1.0},
        {"keyword": 0.0, "brevity": 0.5},
        {"keyword": 0.0, "brevity": 0.0},
    ]
    assert result.nonfinite == [False, False, False]
    assert result.nonfinite_count == 0
    assert result.errors == []


def test_duplicate_names_get_suffixes_and_spec_names_win() -> None:
    specs = [
        spec("keyword"),
        spec("keyword", params={"words": ["red"]}),
        spec("keyword", params={"words": ["green"]}),
        spec("format", name="keyword_2"),
        spec("length", name="short"),
        spec(f"{HERE}:my_reward"),
    ]
    rewards = RewardSet.from_specs(specs)
    assert rewards.component_names == [
        "keyword",
        "keyword_2",
        "keyword_3",
        "keyword_2_2",
        "short",
        "my_reward",
    ]
    assert list(rewards.score(make_batch(["red."])).details[0]) == rewards.component_names


def test_empty_batch_and_empty_reward_list() -> None:
    result = score([spec("keyword"), spec(f"{HERE}:my_reward")], [])
    assert (result.total, result.details, result.nonfinite, result.nonfinite_count) == (
        [],
        [],
        [],
        0,
    )
    with pytest.raises(RewardError, match="at least one reward"):
        RewardSet.from_specs([])


def test_batch_columns_must_have_the_same_length() -> None:
    with pytest.raises(RewardError, match="differ in length"):
        RewardBatch(["p"], ["a", "b"], [False])


def test_weight_must_be_finite() -> None:
    with pytest.raises(RewardError, match="finite"):
        RewardSet.from_specs([spec("keyword", weight=math.inf)])


def test_reward_set_is_a_context_manager() -> None:
    with RewardSet.from_specs([spec("keyword")]) as rewards:
        assert rewards.score(make_batch(["blue"])).total == [1.0]


# --- Python functions ----------------------------------------------------------------------------


@pytest.mark.parametrize("path", [f"{HERE}:my_reward", f"{HERE}.my_reward"])
def test_function_by_dotted_path_with_params(path: str) -> None:
    result = score([spec(path, params={"bonus": 1.0}, weight=2.0)], ["a b", "a b c d"])
    assert result.details == [{"my_reward": 1.2}, {"my_reward": 1.4}]
    assert result.total == pytest.approx([2.4, 2.8])


def test_dict_and_tuple_results_report_extra_values_by_name() -> None:
    specs = [spec(f"{HERE}:with_parts", name="parts"), spec(f"{HERE}:with_tuple")]
    result = score(specs, ["blue fish."])
    assert result.details == [
        {
            "parts": 1.0,
            "parts/words": 2.0,
            "parts/chars": 10.0,
            "with_tuple": 0.5,
            "with_tuple/has_period": 1.0,
        }
    ]
    assert result.total == [1.5]  # extra values are reported, not summed


def test_bool_and_tensor_results_are_numbers() -> None:
    specs = [spec(f"{HERE}:ends_with_period"), spec(f"{HERE}:as_tensor")]
    result = score(specs, ["done.", "not done"])
    assert result.details == [
        {"ends_with_period": 1.0, "as_tensor": 0.25},
        {"ends_with_period": 0.0, "as_tensor": 0.25},
    ]


def test_a_function_naming_truncated_gets_the_flag() -> None:
    assert score([spec(f"{HERE}:sees_truncation")], ["a", "b"], [False, True]).total == [1, -1]


def test_batched_function_gets_whole_columns() -> None:
    result = score([spec(f"{HERE}:batch_lengths", params={"scale": 0.5})], ["ab", "abcd"])
    assert result.total == [1.0, 2.0]
    result = score([spec(f"{HERE}:batch_parts")], ["x", "y"], [False, True])
    assert result.details == [
        {"batch_parts": 1.0, "batch_parts/prompt_chars": 10.0},
        {"batch_parts": 0.0, "batch_parts/prompt_chars": 10.0},
    ]


def test_function_raising_on_one_sample_scores_it_nan(caplog) -> None:
    specs = [spec(f"{HERE}:fails_on_boom"), spec("keyword")]
    with caplog.at_level(logging.WARNING, logger="rl.rewards"):
        result = score(specs, ["blue", "boom", "fine"])
    assert result.total[0] == 2.0 and result.total[2] == 1.0
    assert math.isnan(result.total[1]) and math.isnan(result.details[1]["fails_on_boom"])
    assert result.details[1]["keyword"] == 0.0  # the other components are still reported
    assert result.nonfinite == [False, True, False]
    assert result.nonfinite_count == 1
    assert len(result.errors) == 1
    assert "fails_on_boom()" in result.errors[0] and "sample 1" in result.errors[0]
    assert "ZeroDivisionError: boom" in result.errors[0]
    assert "fails_on_boom()" in caplog.text


def test_batched_function_raising_scores_the_whole_batch_nan() -> None:
    result = score([spec(f"{HERE}:batch_raises")], ["a", "b", "c"])
    assert all(math.isnan(total) for total in result.total)
    assert result.nonfinite_count == 3
    assert "batch_raises()" in result.errors[0] and "the judge is down" in result.errors[0]


def test_nan_and_inf_make_the_total_nan_and_are_counted() -> None:
    specs = [spec(f"{HERE}:non_finite"), spec("keyword", weight=0.0)]
    result = score(specs, ["nan", "fine", "inf", "-inf"])
    assert result.total[1] == 1.0
    assert all(math.isnan(result.total[index]) for index in (0, 2, 3))
    assert result.details[2]["non_finite"] == math.inf  # details keep the raw value
    assert result.nonfinite == [True, False, True, True]
    assert result.nonfinite_count == 3
    assert result.errors == []

    # A zero weight does not hide a non-finite component.
    result = score([spec("keyword"), spec(f"{HERE}:non_finite", weight=0.0)], ["nan"])
    assert math.isnan(result.total[0]) and result.nonfinite == [True]


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("returns_text", r"returned str 'good' for sample 0"),
        ("dict_without_score", r"without a 'score' key"),
        ("batch_too_short", r"returned 1 results for 2 samples"),
    ],
)
def test_wrong_return_types_raise_with_the_function_name(function: str, message: str) -> None:
    rewards = RewardSet.from_specs([spec(f"{HERE}:{function}")])
    with pytest.raises(RewardError, match=message) as error:
        rewards.score(make_batch(["a", "b"]))
    assert function in str(error.value)


# --- loud errors at start ------------------------------------------------------------------------


def test_unknown_type_suggests_the_nearest_names() -> None:
    with pytest.raises(RewardError) as error:
        RewardSet.from_specs([spec("keywrod")])
    message = str(error.value)
    assert "unknown reward type 'keywrod'" in message
    assert "Did you mean 'keyword'" in message
    assert "reward_model" in message and "pkg.module:function" in message
    with pytest.raises(RewardError, match="Did you mean 'reward_model'"):
        RewardSet.from_specs([spec("rewardmodel")])


def test_reward_types_lists_rules_and_the_reward_model() -> None:
    assert {"keyword", "brevity", "length", "format", "reward_model"} <= set(reward_types())


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("no_such_package.rewards:score", "cannot import module 'no_such_package.rewards'"),
        (f"{HERE}:my_rewrad", "has no attribute 'my_rewrad'. Did you mean 'my_reward'"),
        (f"{HERE}:HERE", "not a callable"),
        ("tests:", "not a dotted path"),
    ],
)
def test_bad_function_paths_fail_at_start(kind: str, message: str) -> None:
    with pytest.raises(RewardError, match=message):
        RewardSet.from_specs([spec(kind)])


def test_unknown_function_params_fail_at_start() -> None:
    with pytest.raises(RewardError, match=r"unknown params \['bonsu'\].*Did you mean 'bonus'"):
        RewardSet.from_specs([spec(f"{HERE}:my_reward", params={"bonsu": 1})])


def test_path_is_only_for_reward_models() -> None:
    with pytest.raises(RewardError, match="only read by type 'reward_model'"):
        RewardSet.from_specs([spec("keyword", path="models/rm")])


# --- reward_model on the tiny local model --------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> Iterator[None]:
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # shared small CPU boxes
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TinyModelPaths:
    return build_tiny_models(tmp_path_factory.mktemp("tiny"), sft_steps=SFT_STEPS, seed=0)


LONG = " and ".join(["the fish is blue"] * 30) + "."
PAIRS = [("Name a color.", "blue is a nice color."), ("What does the cat say?", "meow.")]


def model_batch(pairs: list[tuple[str, str]]) -> RewardBatch:
    return RewardBatch([p for p, _ in pairs], [r for _, r in pairs], [False] * len(pairs))


def direct_score(model_dir: Path, text: str, *, special_tokens: bool) -> float:
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    inputs = tokenizer(text, return_tensors="pt", add_special_tokens=special_tokens)
    with torch.no_grad():
        return model(**inputs).logits[0, 0].item()


def test_reward_model_scores_finite_deterministic_values(tiny: TinyModelPaths) -> None:
    rewards = RewardSet.from_specs([spec("reward_model", path=str(tiny.reward_model))])
    assert rewards.component_names == ["reward_model"]
    first = rewards.score(model_batch(PAIRS))
    again = rewards.score(model_batch(PAIRS))
    assert all(math.isfinite(value) and type(value) is float for value in first.total)
    assert first.total == again.total
    assert first.details == [{"reward_model": value} for value in first.total]

    # It is the model's logit for the chat-rendered conversation, read at the last token.
    text = "<|bos|>User: Name a color.\nAssistant: blue is a nice color.<|eos|>"
    expected = direct_score(tiny.reward_model, text, special_tokens=False)
    assert first.total[0] == pytest.approx(expected, abs=1e-4)
    rewards.close()


@pytest.mark.parametrize("padding_side", ["left", "right"])
def test_reward_model_score_does_not_depend_on_padding(
    tiny: TinyModelPaths, padding_side: str
) -> None:
    params = {"padding_side": padding_side, "batch_size": 8}
    with RewardSet.from_specs(
        [spec("reward_model", path=str(tiny.reward_model), params=params)]
    ) as rm:
        alone = [rm.score(model_batch([pair])).total[0] for pair in PAIRS]
        together = rm.score(model_batch([*PAIRS, ("Tell me a long story.", LONG)])).total
    assert together[:2] == pytest.approx(alone, abs=1e-4)


def test_reward_model_batches_in_chunks_in_the_original_order(tiny: TinyModelPaths) -> None:
    pairs = [*PAIRS, ("Tell me a long story.", LONG), ("Hi.", "hello."), ("Hi.", "")]
    path = str(tiny.reward_model)
    with RewardSet.from_specs([spec("reward_model", path=path)]) as one_batch:
        expected = one_batch.score(model_batch(pairs)).total
    small = spec("reward_model", path=path, params={"batch_size": 2})
    with RewardSet.from_specs([small]) as chunked:
        assert chunked.score(model_batch(pairs)).total == pytest.approx(expected, abs=1e-4)


def test_reward_model_without_chat_template_scores_prompt_plus_response(
    tiny: TinyModelPaths, tmp_path: Path
) -> None:
    plain = tmp_path / "plain_rm"
    shutil.copytree(tiny.reward_model, plain)
    (plain / "chat_template.jinja").unlink()
    with RewardSet.from_specs([spec("reward_model", path=str(plain))]) as rewards:
        got = rewards.score(model_batch(PAIRS[:1])).total[0]
    expected = direct_score(plain, "Name a color.blue is a nice color.", special_tokens=True)
    assert got == pytest.approx(expected, abs=1e-4)


def test_reward_model_combines_with_rules(tiny: TinyModelPaths) -> None:
    specs = [spec("reward_model", path=str(tiny.reward_model), weight=0.0), spec("keyword")]
    with RewardSet.from_specs(specs) as rewards:
        result = rewards.score(model_batch(PAIRS))
    assert result.total == [1.0, 0.0]
    assert math.isfinite(result.details[0]["reward_model"])


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "needs `path`"),
        ({"path": "no/such/dir"}, "does not exist"),
        ({"path": str(REPO / "pyproject.toml")}, "is a file"),
        ({"path": str(REPO / "configs")}, "cannot load"),
        ({"params": {"batchsize": 4}}, "Did you mean 'batch_size'"),
        ({"params": {"batch_size": 0}}, "batch_size must be a positive integer"),
        ({"params": {"padding_side": "middle"}}, "padding_side must be"),
        ({"params": {"dtype": "float64"}}, "dtype must be one of"),
    ],
)
def test_reward_model_errors(tiny: TinyModelPaths, fields: dict, message: str) -> None:
    fields = {"path": str(tiny.reward_model), **fields} if "params" in fields else fields
    with pytest.raises(RewardError, match=message):
        RewardSet.from_specs([spec("reward_model", **fields)])


def test_reward_model_refuses_to_score_after_close(tiny: TinyModelPaths) -> None:
    rewards = RewardSet.from_specs([spec("reward_model", path=str(tiny.reward_model))])
    rewards.close()
    with pytest.raises(RewardError, match="after close"):
        rewards.score(model_batch(PAIRS))


# --- the quickstart prompt list ------------------------------------------------------------------


def test_quickstart_prompts_are_short_unique_questions() -> None:
    prompts = yaml.safe_load((REPO / "configs" / "prompts" / "quickstart.yaml").read_text())
    prompts = prompts["prompts"]
    assert 40 <= len(prompts) <= 64
    assert len(set(prompts)) == len(prompts)
    assert all(isinstance(p, str) and 0 < len(p.split()) <= 8 for p in prompts)
