"""Text someone else wrote (dump lines, parquet rows, queries, `when:` conditions) read on
arbitrary input: each reader gives a value or one error of its own kind, never another exception
(RecursionError, OverflowError), never a hang. A dump with a line nested 100,000 deep and a line
over the size limit between good lines is read past both by `logs search`, `logs bias` and
`logs report`, each skipped line told once with its file:line; and model text printed by those
commands shows escape sequences, bidi overrides and zero-width characters as visible marks."""

from __future__ import annotations

import contextlib
import json
import tempfile
import unicodedata
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rl import jsonl
from rl.hooks.conditions import ConditionError, MissingMetric, compile_condition
from sampling.sources.ingest.dump_rows import read_dump
from sampling.sources.ingest.formats import FORMATS, list_files, locate
from sampling.sources.ingest.rows import BadRow, DumpRow
from sampling.sources.search import reader
from sampling.sources.search.query import QueryError
from sampling.sources.search.sql import Compiled, compile_query
from sampling.sources.trl import dumps as trl
from tests.conftest import invoke
from tests.helpers.dumps import write_verl_step
from tests.helpers.hacking_runs import Trait, prefix, run

pytestmark = pytest.mark.unit


# Modest and bounded: a slow example fails instead of hanging; nothing written in the tree.
PROPERTY = settings(
    max_examples=120,
    deadline=timedelta(seconds=2),
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
DEEP = '{"input": "q", "output": ' + "[" * 100_000 + "]" * 100_000 + ', "score": 1}'
# Deeper than the interpreter's recursion limit, shorter than LINE_LIMIT.
DEEP_LINE = '{"input": "q", "output": ' + "[" * 1_500 + "]" * 1_500 + ', "score": 1}'
HOSTILE = (
    "copy \x1b]52;c;aGFja2Vk\x07 then \x1b[31mred\x1b[0m \u202eevil\u202c zero\u200bwidth "
    "\x9b2J end"
)
# What a terminal acts on or a reader cannot see: none may reach the output.
ACTING = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\u200b")
JSONL_FORMATS = [f for f in FORMATS.values() if f.kind == "jsonl"]
LINE_LIMIT = 4096  # the line limit the tests read with, instead of 64 MiB
GOOD_LINE = b'{"input": "q", "output": "a", "score": 1}'


def valid_utf8(text: str) -> str:
    return text.encode("utf-8", "replace").decode()


def one_line(line: bytes) -> bytes:
    return line.replace(b"\n", b" ")


def acting_chars(text: str) -> list[str]:
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs")]


# ---- generated input -----------------------------------------------------------------------------

JSON_PIECES = st.sampled_from([
    b"{", b"}", b"[", b"]", b'"', b"\\", b":", b",", b" ", b"\r", b"NaN", b"Infinity",
    b"-Infinity", b"1e999", b"-0", b"9" * 400, b"9" * 5000, b"\xff", b"\xed\xa0\x80", b"\x1b",
    b'"\\ud800"', b'"\\u202e"', b"null", b"true", b'"input"', b'"output"', b'"score"', b'"step"',
    b'"prompt"', b'"response"', b'"reward"', b'"reward_details"', b'"acc"',
])  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(10**300, 10**400).map(lambda n: -n)
    | st.integers(10**300, 10**400) | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)  # fmt: skip
FIELDS = st.sampled_from(
    ["input", "output", "score", "step", "prompt", "response", "reward", "reward_details", "x"]
)
ROWS = st.dictionaries(FIELDS, JSON_VALUES | JSON_VALUES.map(json.dumps), max_size=7)
LINES = st.one_of(
    st.binary(max_size=120),
    st.text(max_size=120).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.lists(JSON_PIECES, max_size=30).map(b"".join),
    ROWS.map(lambda row: json.dumps(row).encode()),
).map(one_line)
NEAR_THE_LIMIT = st.builds(
    lambda fill, size: (fill * size)[:size],
    st.sampled_from([b"x", b" ", b"[", b'{"input": "', b"\xff"]),
    st.integers(LINE_LIMIT - 2, LINE_LIMIT + 2),
)
QUERY_WORDS = st.sampled_from([
    "(", ")", "<", "<=", ">", ">=", "=", "==", "!=", "<>", "!", " ", "\t", '"', "'", "`", "\\",
    "AND ", "OR ", "NOT ", "CONTAINS ", "MATCHES ", "CASE ", "TRUE", "FALSE", "inf", "-inf",
    "reward", "step", "prompt", "response", "truncated", "reward_details", "`a b`", "1.5",
    "1e999", "-2", "9" * 400, ".5", "1.2.3", "\u0661", "\u00b2", "\x1b", "\u202e", "[(?i)x+",
])  # fmt: skip
CONDITION_WORDS = st.sampled_from([
    "(", ")", "<", "<=", ">", ">=", "==", "!=", "=", "+", "-", "*", "/", "%", " ", ".", "'",
    "and ", "or ", "not ", "true", "false", "True", "if", "reward/mean", "kl", "step", "1",
    "0", "1e999", "9" * 400, "\u0661", "\x1b",
])  # fmt: skip
COLUMNS = {"step": "number", "reward": "number", "prompt": "text", "response": "text",
           "truncated": "bool", "reward_details": "other", "a b": "number"}  # fmt: skip
METRICS = st.dictionaries(
    st.sampled_from(["reward/mean", "kl", "step"]),
    st.integers() | st.integers(10**300, 10**400) | st.floats() | st.text(max_size=5) | st.none(),
)


# ---- (a) dump readers ---------------------------------------------------------------------------


@PROPERTY
@example(DEEP.encode())
@example(b'{"input": "q", "output": "a", "score": 1' + b"0" * 400 + b"}")
@example(b'{"prompt": "q", "response": "a", "reward": 1, "reward_details": "' + b"[" * 5000 + b'"}')
@example(b'{"prompt": "q", "response": "a", "reward": 1, "reward_details": {"x": -1e999}}')
@example(b'{"input": "q", "output": "a", "score": 1, "acc": -1' + b"0" * 400 + b"}")
@example(b'{"input": "\\ud800", "output": "a", "score": NaN, "step": ' + b"9" * 4000 + b"}")
@example(b'{"input": "q", "output": "a", "score": 1, "\\udc00": 2}')
@given(LINES)
def test_a_dump_line_is_a_row_or_one_error_of_the_readers(line: bytes) -> None:
    for dump_format in JSONL_FORMATS:
        assert dump_format.parse is not None
        try:
            row = dump_format.parse(jsonl.parse_line(line), 0, 1)
        except (jsonl.BadLine, BadRow) as problem:
            assert str(problem) and "\n" not in str(problem)
            continue
        assert isinstance(row, DumpRow) and 0 <= row.step < 2**63
        texts = [row.prompt, row.response, *row.reward_details]
        assert all(text.encode("utf-8") is not None for text in texts)  # as the table stores them


@PROPERTY
@example([GOOD_LINE, DEEP_LINE.encode(), b"x" * (LINE_LIMIT + 1), GOOD_LINE])
@example([b" " * (LINE_LIMIT + 1), b" " * LINE_LIMIT, b"\r"])
@given(st.lists(LINES | NEAR_THE_LIMIT, max_size=8))
def test_each_line_of_a_dump_file_is_a_row_or_a_problem_in_both_readers(
    lines: list[bytes],
) -> None:
    """`logs bias`/`logs report` (dump_rows) and `logs search` (search.reader) read the same file:
    every non-blank line is one row or one problem line, in each, and they agree."""
    blank = sum(1 for line in lines if not line.strip() and len(line) <= LINE_LIMIT)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "MAX_LINE_BYTES", LINE_LIMIT)
        (Path(folder) / "1.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
        location = locate(Path(folder), "verl")
        assert location is not None
        problems: list[str] = []
        rows = list(read_dump(location, problems.append))
        assert len(rows) + len(problems) == len(lines) - blank
        pieces = list(reader.read_jsonl(location.format, list_files(location)[0], reader.Mark()))
        searched = [row for piece in pieces for row in piece.rows]
        found = [problem for piece in pieces for problem in piece.problems]
        assert searched == rows and found == problems


@settings(PROPERTY, max_examples=25)
@given(
    st.lists(st.text().map(valid_utf8), min_size=1, max_size=4),
    st.lists(st.floats() | st.none(), min_size=4, max_size=4),
    st.sampled_from(["text", "float", "list"]),
)
def test_a_trl_completions_file_is_rows_or_one_unreadable_file(
    texts: list[str], rewards: list[float | None], advantage: str
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(texts)
    advantages = {"text": ["high"] * n, "float": [0.5] * n, "list": [[1.0, 2.0]] * n}[advantage]
    table = pa.table({"step": [3] * n, "prompt": texts, "completion": texts[::-1],
                      "reward_fn": rewards[:n], "advantage": advantages})  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "completions_00003.parquet"
        pq.write_table(table, path)
        try:
            rows = trl.read_rows(path, 3, None)
        except trl.UnreadableFile:
            return
    assert len(rows) == n and all(isinstance(row, DumpRow | BadRow) for row in rows)


def test_a_trl_file_past_the_bounds_is_one_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.dumps import write_trl_completions

    folder = tmp_path / "completions"
    write_trl_completions(folder, 1, ["p"] * 3, ["c"] * 3, {"fn": [0.1, 0.2, 0.3]})
    write_trl_completions(folder, 2, ["q"] * 2, ["d"] * 2, {"fn": [0.4, 0.5]})
    monkeypatch.setattr(trl, "MAX_ROWS", 2)
    location = locate(tmp_path, "trl")
    assert location is not None
    problems: list[str] = []
    rows = list(read_dump(location, problems.append))
    assert [row.prompt for row in rows] == ["user: q"] * 2
    assert len(problems) == 1 and "completions_00001.parquet: 3 rows; at most 2" in problems[0]
    monkeypatch.setattr(trl, "MAX_ROWS", 10**6)
    monkeypatch.setattr(trl, "MAX_DATA_BYTES", 10)
    with pytest.raises(trl.UnreadableFile, match="bytes of data to read; at most 10"):
        trl.read_rows(folder / "completions_00002.parquet", 2, None)


# ---- (b) the search query language, (c) hook conditions -----------------------------------------


@PROPERTY
@example("(" * 100_000)
@example("not " * 100_000 + "truncated")
@example("(" * 5_000 + "reward > 1" + ")" * 5_000)
@example("NOT (" * 3_000 + "truncated" + ")" * 3_000)
@given(st.text(max_size=80) | st.lists(QUERY_WORDS, max_size=40).map("".join))
def test_a_query_compiles_or_is_one_query_error(query: str) -> None:
    try:
        compiled = compile_query(query, COLUMNS)
    except QueryError as error:
        assert str(error).startswith("at position ")
        return
    assert isinstance(compiled, Compiled) and compiled.where


@PROPERTY
@example("(" * 100_000, {})
@example("not " * 100_000 + "kl", {})
@example("reward/mean > 1", {"reward/mean": 10**400})
@example("-kl < 0", {"kl": -(10**400)})
@given(st.text(max_size=80) | st.lists(CONDITION_WORDS, max_size=40).map("".join), METRICS)
def test_a_condition_compiles_and_evaluates_or_is_one_condition_error(
    source: str, metrics: dict[str, object]
) -> None:
    try:
        condition = compile_condition(source)
    except ConditionError as error:
        assert str(error).startswith("when: ")
        return
    with contextlib.suppress(ConditionError, MissingMetric):  # its own errors
        assert condition.evaluate(metrics) in (True, False)  # type: ignore[arg-type]


# ---- what is printed ----------------------------------------------------------------------------


@settings(PROPERTY, max_examples=200)
@example(HOSTILE)
@example("a lone \ud800 surrogate, a \u3164 filler, a \u2028 separator")
@given(st.text())
def test_every_character_a_terminal_acts_on_is_shown_as_a_mark(text: str) -> None:
    from annotation.review_display import visible_response
    from rl.visible_text import escaped_json, visible_line, visible_text

    for shown in (visible_text(text), visible_line(text), visible_response(text)):
        assert acting_chars(shown) == []
        shown.encode("utf-8")  # lone surrogates too
    assert "\n" not in visible_line(text)
    written = escaped_json({"text": text})
    assert acting_chars(written) == [] and json.loads(written) == {"text": text}


def verl_dump_with_bad_lines(folder: Path) -> Path:
    """Step 1: a good line with hostile text, a line nested 1,500 deep, a line over LINE_LIMIT,
    a good line."""
    path = write_verl_step(folder, 1, ["q1", "q2"], [HOSTILE, "plain"], [0.1, 0.9])
    good = path.read_text().splitlines()
    long_line = json.dumps({"input": "x" * LINE_LIMIT, "output": "y", "score": 1.0, "step": 1})
    path.write_text("\n".join([good[0], DEEP_LINE, long_line, good[1]]) + "\n")
    return path


def assert_marked(printed: str) -> None:
    assert not [char for char in ACTING if char in printed], ascii(printed)
    assert "⟨ESC⟩]52;c;aGFja2Vk⟨BEL⟩" in printed and "⟨U+202E⟩evil" in printed
    assert "zero⟨U+200B⟩width" in printed and "⟨U+009B⟩2J" in printed


def test_logs_search_reads_past_deep_and_long_lines_and_marks_control_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", LINE_LIMIT)
    path = verl_dump_with_bad_lines(tmp_path / "dumps")
    code, out, err = invoke(capsys, "logs", "search", str(tmp_path / "dumps"), "reward < 1")
    assert code == 0, err
    assert "2 matches in 2 rollouts" in out and "plain" in out
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert [line.split(": ")[1] for line in warnings] == [f"{path}:2", f"{path}:3"], warnings
    assert f"nested deeper than {jsonl.MAX_DEPTH} levels" in warnings[0]
    assert f"longer than {LINE_LIMIT} bytes" in warnings[1]
    assert_marked(out)


def test_logs_report_renders_past_deep_and_long_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", LINE_LIMIT)
    path = verl_dump_with_bad_lines(tmp_path / "dumps")
    page = tmp_path / "report.html"
    code, _, err = invoke(
        capsys, "logs", "report", str(tmp_path / "dumps"), "--out", str(page), "--no-redact"
    )
    assert code == 0, err
    assert page.is_file() and "plain" in page.read_text(encoding="utf-8")
    assert f"warning: {path}:2: nested deeper" in err and f"warning: {path}:3: longer than" in err
    assert "2 scored rollouts" in err and not acting_chars(err)


def test_logs_bias_marks_control_characters_in_what_it_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The responses the reward pays for open with an OSC 52 clipboard write, colours, a bidi
    override and a zero-width space: the suspect and its example show them as marks."""
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", LINE_LIMIT)
    rows = run([Trait(prefix(HOSTILE), 1.5, 0.02, 0.6)], steps=24, prompts=8, group=4)
    dumps = tmp_path / "dumps"
    for step in range(24):
        batch = [row for row in rows if row.step == step]
        path = write_verl_step(dumps, step + 1, [r.prompt for r in batch],
                               [r.response for r in batch], [r.reward for r in batch])  # fmt: skip
        with path.open("a") as handle:
            handle.write(DEEP_LINE + "\n")  # read past, as by logs search
    code, out, err = invoke(capsys, "logs", "bias", str(dumps))
    assert code == 0, err
    assert "1. reward rises with" in out and f"{dumps / '1.jsonl'}:33: nested deeper" in err
    assert_marked(out)
    assert not acting_chars(out + err)


# ---- the loop's own files, as a damaged or planted copy leaves them -----------------------------


def test_a_loop_state_nested_past_the_limit_is_one_error_naming_it(tmp_path: Path) -> None:
    from lowtide.errors import UsageError
    from lowtide.loop.state import read_json

    path = tmp_path / "state.json"
    path.write_text(DEEP)
    with pytest.raises(UsageError, match=f"^{path}: cannot read it .*move the loop directory"):
        read_json(path)


def test_the_loops_step_metrics_skip_rows_whose_step_is_not_a_whole_number(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from lowtide.loop.runner import _every_step

    (tmp_path / "run").mkdir()
    rows = [{"step": 1, "reward/mean": 0.1}, {"step": [2]}, {"step": "2"}, {"step": 1, "x": 2}]
    (tmp_path / "run" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = SimpleNamespace(logger=SimpleNamespace(save_dir=str(tmp_path), name_run="run"))
    assert _every_step(config, SimpleNamespace(run_id="run", history=[])) == [rows[3]]
