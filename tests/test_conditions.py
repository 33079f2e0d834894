"""The `when:` evaluator: grammar, precedence, IEEE arithmetic, and everything it must refuse."""

from __future__ import annotations

import builtins
import math

import pytest

from rl.hooks.conditions import (
    MAX_DEPTH,
    MAX_LENGTH,
    ConditionError,
    MissingMetric,
    compile_condition,
)

pytestmark = pytest.mark.unit


def holds(source: str, **values: float) -> bool:
    return compile_condition(source).evaluate(values)


@pytest.mark.parametrize(
    "source",
    [
        "1 + 2 * 3 == 7",
        "(1 + 2) * 3 == 9",
        "2 - 3 - 4 == -5",  # left-associative
        "8 / 4 / 2 == 1",
        "10 % 4 == 2",
        "-2 * 3 == -6",
        "--2 == 2",
        "- (1 + 1) == -2",
        "1e-3 * 2 == 0.002",
        ".5 + 2. == 2.5",
        "1E3 == 1000",
        "true or false and false",  # and binds tighter than or
        "not 1 > 2",  # not binds looser than comparisons
        "not false and true",
        "true == 1 and false == 0",
        "1 + 1 > 1 and 2 * 2 == 4",
    ],
)
def test_precedence_and_literals(source: str) -> None:
    assert holds(source)


def test_or_and_not_give_bools() -> None:
    assert compile_condition("0 or 0").evaluate({}) is False
    assert compile_condition("2 and 3").evaluate({}) is True


@pytest.mark.parametrize(("x", "expected"), [(0.5, True), (1.5, False), (-1, False), (1, False)])
def test_comparisons_chain_like_python(x: float, expected: bool) -> None:
    assert holds("0 < x < 1", x=x) is expected


def test_chains_of_mixed_comparisons() -> None:
    assert holds("1 < 2 > 0.5")
    assert holds("1 == 1 == 1")
    assert not holds("1 < 2 < 2")
    assert holds("1 <= 1 >= 1 != 2")


def test_slash_without_spaces_is_a_name_and_with_spaces_divides() -> None:
    condition = compile_condition("reward/mean / kl_divergence > 50 and step > 20")
    assert condition.names == {"reward/mean", "kl_divergence", "step"}
    assert condition.evaluate({"reward/mean": 600, "kl_divergence": 10, "step": 21})
    assert not condition.evaluate({"reward/mean": 400, "kl_divergence": 10, "step": 21})
    assert not condition.evaluate({"reward/mean": 600, "kl_divergence": 10, "step": 20})


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("timing_s/rollout > 1", {"timing_s/rollout"}),
        ("response_length/clip_ratio > 0.5", {"response_length/clip_ratio"}),
        ("a/b/c > 0", {"a/b/c"}),
        ("a / b > 0", {"a", "b"}),
        ("a /b > 0", {"a", "b"}),
        ("a/ b > 0", {"a", "b"}),
        ("a/2 > 0", {"a"}),  # a digit cannot start a name segment: this divides
        ("(a)/b > 0", {"a", "b"}),
    ],
)
def test_names(source: str, names: set[str]) -> None:
    assert compile_condition(source).names == names


def test_division_forms_evaluate_as_division() -> None:
    assert holds("a /b == 4", a=8, b=2)
    assert holds("a/2 == 4", a=8)
    assert holds("a/b == 1", **{"a/b": 1})


def test_division_by_zero_follows_ieee() -> None:
    assert holds("x / 0 > 1e308", x=1)
    assert holds("-x / 0 < -1e308", x=1)
    assert holds("x / -0.0 < 0", x=1)
    assert not holds("0 / 0 == 0 / 0")  # nan
    assert not holds("x % 0 == x % 0", x=3)  # nan
    assert holds("not 0 / 0 > 0")


@pytest.mark.parametrize("source", ["x < 1", "x > 1", "x == x", "x != 1", "x <= x", "0 < x < 1"])
def test_nan_comparisons_are_false(source: str) -> None:
    assert holds(source, x=math.nan) is False


def test_not_of_a_nan_comparison_is_true() -> None:
    assert holds("not x < 1", x=math.nan)


def test_missing_name_raises_missing_metric_naming_the_key() -> None:
    condition = compile_condition("reward/mean < 0.5")
    with pytest.raises(MissingMetric) as raised:
        condition.evaluate({"reward/std": 1.0})
    assert isinstance(raised.value, KeyError)
    assert raised.value.name == "reward/mean"
    assert "'reward/mean'" in str(raised.value)


def test_and_or_short_circuit_so_late_metrics_are_not_needed_early() -> None:
    condition = compile_condition("step > 20 and kl > 1")
    assert condition.evaluate({"step": 5}) is False
    with pytest.raises(MissingMetric):
        condition.evaluate({"step": 25})
    assert compile_condition("step > 0 or kl > 1").evaluate({"step": 1})


def test_non_numeric_metric_is_a_condition_error() -> None:
    with pytest.raises(ConditionError, match="'label' is not a number"):
        compile_condition("label > 1").evaluate({"label": "abc"})  # type: ignore[dict-item]


def test_metric_values_are_converted_with_float() -> None:
    assert holds("x == 2 and y", x=2, y=True)


def test_a_condition_is_reusable() -> None:
    condition = compile_condition("x > 1")
    assert [condition.evaluate({"x": x}) for x in (0, 2, 1, 3)] == [False, True, False, True]
    assert condition.source == "x > 1"
    assert repr(condition) == "Condition('x > 1')"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("__import__('os').system('x')", "unexpected '(' at column 11"),
        ("().__class__", "unexpected ')' at column 2"),
        ("a.b", "unexpected '.' at column 2"),
        ("x[0]", "unexpected '[' at column 2"),
        ("lambda: 1", "unexpected 'lambda' at column 1"),
        ("'str'", 'unexpected "\'" at column 1'),
        ('"str" == x', "unexpected '\"' at column 1"),
        ("1 if 2 else 3", "unexpected 'if' at column 3"),
        ("a = 1", "unexpected '=' at column 3"),
        ("a < f(x)", "unexpected '(' at column 6"),
        ("a ** 2", "unexpected '*' at column 4"),
        ("a // 2", "unexpected '/' at column 4"),
        ("a & b", "unexpected '&' at column 3"),
        ("a <", "unexpected end of condition at column 4"),
        ("(a > 1", "unexpected end of condition at column 7"),
        ("a > 1)", "unexpected ')' at column 6"),
        ("1 2", "unexpected '2' at column 3"),
        ("1abc", "unexpected 'a' at column 2"),
        ("x > 1, 2", "unexpected ',' at column 6"),
        ("True", "unexpected 'True' at column 1"),
        ("None", "unexpected 'None' at column 1"),
        ("not", "unexpected end of condition"),
        ("a.5", "unexpected '.5' at column 2"),
        ("-not a", "unexpected 'not' at column 2"),
        ("", "empty condition"),
        ("   ", "empty condition"),
    ],
)
def test_rejected_at_compile_time_with_the_position(source: str, message: str) -> None:
    with pytest.raises(ConditionError) as raised:
        compile_condition(source)
    assert message in str(raised.value)
    assert str(raised.value).startswith("when: ")


def test_message_quotes_the_whole_source() -> None:
    with pytest.raises(ConditionError) as raised:
        compile_condition("__import__('os')")
    assert str(raised.value) == (
        "when: unexpected '(' at column 11 in \"__import__('os')\": calls are not allowed"
    )


def test_overly_long_input_is_rejected() -> None:
    source = "x" + " + x" * 200
    assert len(source) > MAX_LENGTH
    with pytest.raises(ConditionError, match="characters long; the limit is 500"):
        compile_condition(source)
    compile_condition("1" + "+1" * ((MAX_LENGTH - 1) // 2))  # just under the limit: fine


@pytest.mark.parametrize(("opening", "closing"), [("(", ")"), ("-", ""), ("not ", ""), ("-(", ")")])
def test_deeply_nested_input_is_rejected(opening: str, closing: str) -> None:
    depth = MAX_DEPTH + 1
    with pytest.raises(ConditionError, match="nested more than 50 levels"):
        compile_condition(opening * depth + "1" + closing * depth)
    compile_condition("(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH)


def test_non_string_is_rejected() -> None:
    with pytest.raises(ConditionError, match="expected a string"):
        compile_condition(1)  # type: ignore[arg-type]


def test_never_uses_eval_or_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("eval/compile used")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "compile", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    assert holds(
        "(reward/mean - 1) * 2 < kl and not step % 2", **{"reward/mean": 1, "kl": 1}, step=2
    )
