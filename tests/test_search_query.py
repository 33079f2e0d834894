"""The query language of `lowtide logs search`: the parser's tree (precedence, NOT, parentheses,
quoting, case-insensitive keywords), one-line errors that name the position, and the SQL it
compiles to: values only as bound parameters, so an injection attempt is just text to look for."""

from __future__ import annotations

import math

import pytest

from sampling.sources.search.query import (
    MAX_DEPTH,
    MAX_LENGTH,
    And,
    Column,
    Compare,
    Flag,
    Not,
    Or,
    QueryError,
    TextMatch,
    parse,
)
from sampling.sources.search.sql import compile_query

pytestmark = pytest.mark.unit

COLUMNS = {
    "step": "number", "sample_id": "text", "reward": "number", "prompt": "text",
    "response": "text", "prompt_length": "number", "response_length": "number",
    "truncated": "bool", "reward_details": "other", "reward_model": "number",
    "format": "number", "odd name/x": "number",
}  # fmt: skip


def columns_named(node) -> list[str]:
    if isinstance(node, And | Or):
        return [name for operand in node.operands for name in columns_named(operand)]
    if isinstance(node, Not):
        return columns_named(node.operand)
    return [node.column.name]


def error_of(query: str, columns=COLUMNS) -> str:
    with pytest.raises(QueryError) as caught:
        compile_query(query, columns)
    message = str(caught.value)
    assert "\n" not in message
    return message


# ---- the tree ----------------------------------------------------------------------------------


def test_the_issues_example() -> None:
    tree = parse('reward > 2.0 AND response CONTAINS "I agree"')
    assert tree == And(
        (
            Compare(Column("reward", 0), ">", 2.0, 9),
            TextMatch(Column("response", 17), "contains", "I agree", False, 35),
        )
    )


def test_and_binds_tighter_than_or() -> None:
    tree = parse("step = 1 OR step = 2 AND reward < 0")
    assert isinstance(tree, Or)
    assert isinstance(tree.operands[1], And)
    assert columns_named(tree) == ["step", "step", "reward"]


def test_parentheses_change_the_grouping() -> None:
    tree = parse("(step = 1 OR step = 2) AND reward < 0")
    assert isinstance(tree, And)
    assert isinstance(tree.operands[0], Or)


def test_not_binds_to_the_next_condition_and_stacks() -> None:
    tree = parse("NOT reward > 1 AND step < 3")
    assert isinstance(tree, And) and isinstance(tree.operands[0], Not)
    assert parse("NOT NOT truncated") == Not(Not(Flag(Column("truncated", 8))))
    assert parse("NOT (step = 1 OR step = 2)") == Not(
        Or((Compare(Column("step", 5), "=", 1.0, 12), Compare(Column("step", 17), "=", 2.0, 24)))
    )


def test_keywords_are_case_insensitive() -> None:
    upper = parse('reward >= 1 AND NOT response CONTAINS CASE "x" OR prompt MATCHES "y"')
    lower = parse('reward >= 1 and not response contains case "x" or prompt matches "y"')
    mixed = parse('reward >= 1 And Not response Contains Case "x" oR prompt MaTcHeS "y"')
    assert upper == lower == mixed


def test_not_contains_and_case() -> None:
    assert parse('response NOT CONTAINS "sorry"') == Not(
        TextMatch(Column("response", 0), "contains", "sorry", False, 22)
    )
    exact = parse('response CONTAINS CASE "I"')
    assert isinstance(exact, TextMatch) and exact.case_sensitive
    regex = parse(r'response MATCHES "\d+ apples"')
    assert isinstance(regex, TextMatch) and regex.text == r"\d+ apples"


def test_quoting_texts_and_names() -> None:
    assert parse(r'response CONTAINS "say \"hi\""').text == 'say "hi"'  # type: ignore[union-attr]
    with pytest.raises(QueryError, match="position 23: expected AND, OR"):
        parse("response CONTAINS 'it''s'")  # SQL's doubled quote is two texts here
    assert parse(r"response CONTAINS 'it\'s'").text == "it's"  # type: ignore[union-attr]
    assert parse(r'response CONTAINS "a\\b"').text == "a\\b"  # type: ignore[union-attr]
    # An odd column name in backquotes or in double quotes where a column is expected.
    assert parse("`odd name/x` > 1").column.name == "odd name/x"  # type: ignore[union-attr]
    assert parse('"odd name/x" > 1').column.name == "odd name/x"  # type: ignore[union-attr]


def test_numbers() -> None:
    values = [parse(f"reward > {text}").value for text in ("2", "-1.5", "1e-3", ".5", "-inf")]
    assert values == [2.0, -1.5, 0.001, 0.5, -math.inf]
    assert parse("reward>-1").value == -1.0  # type: ignore[union-attr]
    assert parse("reward == 1").op == "=" and parse("reward <> 1").op == "!="  # type: ignore


# ---- mistakes: one line, at a position ---------------------------------------------------------


NUMBER_OR_TEXT = "expected a number or a quoted text after 'reward >'"
COMPARISON = "expected a comparison (< <= > >= = !=), CONTAINS or MATCHES after 'reward'"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", "at position 1: the query is empty"),
        ("reward >", f"at position 9: {NUMBER_OR_TEXT}, got the end of the query"),
        ("reward > high", f"at position 10: {NUMBER_OR_TEXT}, got 'high'"),
        ("reward 2", f"at position 8: {COMPARISON}, got '2'"),
        ("(reward > 1", "at position 12: expected ')' to close the '(' at position 1, got the"),
        ("reward > 1)", "at position 11: this ')' closes no '('"),
        ("reward > 1 step < 2", "at position 12: expected AND, OR or the end of the query"),
        (
            'response CONTAINS "I agree',
            'at position 19: the text that starts here has no closing "',
        ),
        ("response CONTAINS sorry", "at position 19: expected a quoted text after 'response CON"),
        ("reward > 1 AND", "at position 15: expected a column (reward, step, response, ...), got"),
        ("AND reward > 1", "at position 1: expected a column, got AND"),
        ("reward > 1.2.3", "at position 10: '1.2.3' is not a number"),
        ("reward ! 1", "at position 8: unexpected '!'"),
        ("reward > 1 ; DROP", "at position 12: unexpected ';'"),
        ("response NOT 'x'", "at position 14: expected CONTAINS or MATCHES after 'response NOT'"),
    ],
)
def test_a_query_that_cannot_be_read_is_one_line_with_its_position(
    query: str, expected: str
) -> None:
    assert error_of(query).startswith(expected)


def test_nesting_and_length_are_bounded_with_one_line_errors() -> None:
    deep = "NOT (" * MAX_DEPTH + "truncated" + ")" * MAX_DEPTH  # each NOT and ( is a level
    assert error_of(deep) == "at position 251: nested more than 100 levels deep"
    compile_query("(" * MAX_DEPTH + "truncated" + ")" * MAX_DEPTH, COLUMNS)
    padded = "truncated" + " " * (MAX_LENGTH - len("truncated"))
    compile_query(padded, COLUMNS)  # at the limit: fine
    assert error_of(padded + " ") == "at position 10001: the query is longer than 10,000 characters"


def test_an_unknown_column_names_the_nearest_one() -> None:
    assert error_of("rewrd > 1") == "at position 1: unknown column 'rewrd' (did you mean 'reward'?)"
    assert "did you mean 'reward_model'?" in error_of("step > 1 AND reward_modle < 0")
    assert error_of("step > 1 AND reward_modle < 0").startswith("at position 14:")
    listed = error_of("zzz > 1")
    assert listed.startswith("at position 1: unknown column 'zzz' (columns: step, sample_id,")


def test_a_column_is_found_whatever_its_case() -> None:
    assert compile_query("REWARD > 1 AND Response CONTAINS 'x'", COLUMNS).columns == (
        "reward",
        "response",
    )


TEXT_COLUMNS = "CONTAINS looks in text columns (sample_id, prompt, response)"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("reward > 'high'", "at position 10: expected a number after 'reward >'"),
        ("response > 1", "at position 12: 'response' holds text: compare it to a quoted text"),
        ("response < 'x'", "at position 1: 'response' holds text: use = or !=, CONTAINS or"),
        ("reward CONTAINS 'x'", f"at position 1: {TEXT_COLUMNS}; 'reward' is not one"),
        ("reward", "at position 1: 'reward' alone is not a condition: compare it (for example:"),
        ("truncated = 1", "at position 13: 'truncated' is true or false: compare it to TRUE"),
        ("reward_details > 1", "at position 1: 'reward_details' cannot be compared here: query"),
    ],
)
def test_a_condition_of_the_wrong_kind_is_one_line(query: str, expected: str) -> None:
    assert error_of(query).startswith(expected)


# ---- the SQL -----------------------------------------------------------------------------------


def test_values_travel_as_parameters_and_names_come_quoted_from_the_table() -> None:
    compiled = compile_query(
        'reward > 2.0 AND (response CONTAINS "I agree" OR `odd name/x` <= -1) AND NOT truncated',
        COLUMNS,
    )
    assert compiled.where == (
        '("reward" > ?) AND ((regexp_matches("response", ?, \'i\')) OR ("odd name/x" <= ?)) AND '
        '(("truncated" IS TRUE) IS NOT TRUE)'
    )
    assert compiled.params == (2.0, "I agree", -1.0)


def test_contains_is_a_literal_whatever_it_holds_and_case_keeps_case() -> None:
    compiled = compile_query(r'response CONTAINS "1.5% (a_b)*\x?"', COLUMNS)
    assert compiled.where == "regexp_matches(\"response\", ?, 'i')"
    assert compiled.params == (r"1\.5\% \(a_b\)\*\\x\?",)
    exact = compile_query('response CONTAINS CASE "I agree"', COLUMNS)
    assert exact.where == 'contains("response", ?)' and exact.params == ("I agree",)
    regex = compile_query('prompt MATCHES "^(?i)why"', COLUMNS)
    assert regex.where == 'regexp_matches("prompt", ?)' and regex.patterns == (("^(?i)why", 15),)


@pytest.mark.parametrize(
    "query",
    [
        'response CONTAINS "x\'); DROP TABLE rollouts; --"',
        "response = 'a'' OR 1=1 --'",
        'prompt MATCHES "\'; SELECT * FROM sources; --"',
        'sample_id != "\\"; DELETE FROM rollouts"',
    ],
)
def test_an_injection_attempt_stays_a_parameter(query: str) -> None:
    try:
        compiled = compile_query(query, COLUMNS)
    except QueryError:
        return  # not read as a query at all: nothing runs either
    for word in ("DROP", "SELECT", "DELETE", "--", ";", "1=1"):
        assert word not in compiled.where
    texts = " ".join(param for param in compiled.params if isinstance(param, str))
    assert any(word in texts for word in ("DROP", "OR 1=1", "SELECT", "DELETE"))


def test_the_injection_attempt_runs_as_a_search_for_its_text() -> None:
    """On a real DuckDB table: the text is looked for, the table is still there."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("CREATE TABLE rollouts (response VARCHAR, reward DOUBLE)")
    connection.execute("INSERT INTO rollouts VALUES ('plain', 1), ('x''); DROP TABLE rollouts', 2)")
    compiled = compile_query('response CONTAINS "x\'); DROP TABLE"', {"response": "text"})
    found = connection.execute(
        f"SELECT reward FROM rollouts WHERE {compiled.where}", list(compiled.params)
    ).fetchall()
    assert found == [(2.0,)]
    assert connection.execute("SELECT count(*) FROM rollouts").fetchall() == [(2,)]


def test_not_is_the_complement_when_a_value_is_missing() -> None:
    """A row without the component matches neither `format > 0.5` in SQL's three-valued logic
    nor its NOT; compiled, NOT is the complement, as a reader of the query expects."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("CREATE TABLE rollouts (step BIGINT, format DOUBLE)")
    connection.execute("INSERT INTO rollouts VALUES (1, 0.9), (2, 0.1), (3, NULL)")
    columns = {"step": "number", "format": "number"}

    def steps(query: str) -> list[int]:
        compiled = compile_query(query, columns)
        sql = f"SELECT step FROM rollouts WHERE {compiled.where} ORDER BY step"
        return [step for (step,) in connection.execute(sql, list(compiled.params)).fetchall()]

    assert steps("format > 0.5") == [1]
    assert steps("NOT format > 0.5") == [2, 3]
    assert steps("NOT (format > 0.5 OR step = 2)") == [3]
    assert steps("NOT format > 0.5 AND step > 1") == [2, 3]
