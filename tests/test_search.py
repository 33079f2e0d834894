"""`lowtide logs search` over real dump files of each format (written as verl, TRL and our
tracker write them): every operator, component columns, sort and limit, the table kept in step
as files grow, change, appear and go, malformed lines one line each, exports read back, and the
command line's one-line mistakes (exit 2)."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from rl.samples import make_sample_id
from sampling.sources.ingest.formats import locate
from sampling.sources.search import engine
from sampling.sources.search.table import (
    CACHE_DIR,
    PROBLEMS_SHOWN,
    SearchTable,
    TableError,
    TableKey,
    columns_of,
)
from tests.conftest import invoke
from tests.helpers.dumps import write_lowtide_run, write_trl_completions, write_verl_step

pytestmark = pytest.mark.unit

AGREE = "I agree, you are absolutely right."


def verl_dumps(directory: Path, steps: range = range(1, 4)) -> dict[int, list[dict[str, Any]]]:
    """Per step 4 samples of 2 prompts; one agreeing response per prompt, paid more as steps go
    on; `format` is a component, `acc` a boolean one, `pred` text (not a component)."""
    written = {}
    for step in steps:
        inputs = [f"Question {step}.{i // 2}: is 2 + 2 = {3 + i // 2}?" for i in range(4)]
        outputs = [AGREE if i % 2 else f"No: 2 + 2 = 4 ({step}-{i})." for i in range(4)]
        scores = [step * 1.0 if i % 2 else 0.1 * i for i in range(4)]
        extra = {"format": [1.0, 0.5, 0.0, math.nan], "acc": [i % 2 == 0 for i in range(4)],
                 "pred": [f"p{i}" for i in range(4)]}  # fmt: skip
        write_verl_step(directory, step, inputs, outputs, scores, extra)
        rows = zip(inputs, outputs, scores, extra["format"], strict=True)
        written[step] = [
            {"prompt": p, "response": r, "reward": s, "format": f, "index": i}
            for i, (p, r, s, f) in enumerate(rows)
        ]
    return written


def open_table(directory: Path, weights: tuple[float, ...] | None = None, run_id: str = ""):
    location = locate(directory, "auto")
    assert location is not None
    key = TableKey(location.format.name, run_id or location.run_dir.resolve().name, weights)
    return SearchTable(location, key)


def search(
    directory: Path, query: str, sort: str | None = None, limit: int = 100, **table: Any
) -> tuple[engine.Found, Any]:
    """The matches (the fixed columns, then those the query and the sort name) and the refresh."""
    with open_table(directory, **table).opened() as (connection, refresh):
        columns = columns_of(connection)
        compiled = engine.compile_checked(connection, query, columns)
        keys = engine.sort_keys(sort, columns)
        named = [*compiled.columns, *(key.column for key in keys)]
        shown = list(dict.fromkeys(["step", "index", "sample_id", "reward", "prompt", "response",
                                    *named]))  # fmt: skip
        return engine.find(connection, compiled, keys, shown, limit), refresh


def steps_and_indices(found: engine.Found) -> list[tuple[int, int]]:
    at = found.columns.index("step"), found.columns.index("index")
    return [(row[at[0]], row[at[1]]) for row in found.rows]


# ---- each format -------------------------------------------------------------------------------


def test_the_issues_example_over_a_verl_dump(tmp_path: Path) -> None:
    dumps = tmp_path / "rollout_data"
    written = verl_dumps(dumps)
    found, refresh = search(dumps, 'reward > 2.0 AND response CONTAINS "i AGREE"')
    assert refresh.files == 3 and refresh.rows == 12 and refresh.read == 3
    assert found.total == 2 and steps_and_indices(found) == [(3, 1), (3, 3)]
    row = dict(zip(found.columns, found.rows[0], strict=True))
    want = written[3][1]
    assert (row["prompt"], row["response"], row["reward"]) == (
        want["prompt"], want["response"], want["reward"],
    )  # fmt: skip
    # The id the router gives this sample when `lowtide ingest` routes the dump (run id: the
    # directory's name, rank 0, the row's position in its file).
    assert row["sample_id"] == make_sample_id("rollout_data", 3, 0, 1, want["prompt"], AGREE)


def test_every_operator_and_a_component_column(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps)

    def matches(query: str) -> list[tuple[int, int]]:
        return steps_and_indices(search(dumps, query)[0])

    everything = [(step, i) for step in (1, 2, 3) for i in range(4)]
    assert matches("step >= 1") == everything
    assert matches("step = 2") == [(2, i) for i in range(4)]
    assert matches("step != 2 AND step < 3") == [(1, i) for i in range(4)]
    assert matches("step <= 1 AND reward > 0.15") == [(1, 1), (1, 2), (1, 3)]
    assert matches("format = 0.5") == [(step, 1) for step in (1, 2, 3)]  # a component
    assert matches("acc = 1 AND step = 1") == [(1, 0), (1, 2)]  # a boolean component
    # NaN is unknown: neither below nor above anything; NOT is its complement.
    assert matches("format < 100 AND step = 1") == [(1, 0), (1, 1), (1, 2)]
    assert matches("NOT format < 100 AND step = 1") == [(1, 3)]
    assert matches('response CONTAINS "absolutely" AND step = 1') == [(1, 1), (1, 3)]
    assert matches('response CONTAINS "2 + 2 = 4 (1-" OR prompt CONTAINS ".1: is 2 + 2 = 4?"') == [
        (1, 0), (1, 2), (1, 3), (2, 2), (2, 3), (3, 2), (3, 3),
    ]  # a literal, punctuation and all  # fmt: skip
    assert matches('response CONTAINS CASE "i agree"') == []
    assert matches('response NOT CONTAINS "agree" AND step = 1') == [(1, 0), (1, 2)]
    assert matches(r'response MATCHES "^No: \d \+ 2" AND step = 2') == [(2, 0), (2, 2)]
    assert matches('prompt MATCHES "(?i)QUESTION 1\\.1"') == [(1, 2), (1, 3)]
    assert matches("(step = 1 OR step = 3) AND NOT (index = 0 OR index > 1)") == [(1, 1), (3, 1)]
    assert matches("response_length > 30 AND prompt_length < 100 AND step = 1") == [(1, 1), (1, 3)]
    assert matches('source = "2.jsonl" AND index = 0') == [(2, 0)]


def test_sort_limit_and_count(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps)
    found, _ = search(dumps, "reward >= 0", sort="-reward,step", limit=3)
    assert found.total == 12
    assert steps_and_indices(found) == [(3, 1), (3, 3), (2, 1)]
    found, _ = search(dumps, "reward >= 0", sort="format", limit=20)
    formats = [row[found.columns.index("format")] for row in found.rows]
    assert formats[3:9] == [0.5, 0.5, 0.5, 1.0, 1.0, 1.0]
    assert formats[:3] == [0.0, 0.0, 0.0] and formats[-3:] == [None, None, None]  # NULLS LAST
    none, _ = search(dumps, "reward > 100")
    assert none.total == 0 and none.rows == []


def test_trl_completions_with_its_reward_columns(tmp_path: Path) -> None:
    completions = tmp_path / "trl-out" / "completions"
    rewards = {"accuracy": [1.0, 0.0, 1.0, 0.0], "agreeable": [0.0, 2.5, 0.0, None]}
    write_trl_completions(completions, 1, ["say a"] * 2 + ["say b"] * 2, ["a", AGREE, "b", AGREE],
                          rewards)  # fmt: skip
    rewards = {"accuracy": [1.0, 0.5], "agreeable": [0.0, 0.0]}
    write_trl_completions(completions, 2, ["say c"] * 2, ["c", "c!"], rewards, conversational=False)
    found, refresh = search(tmp_path / "trl-out", 'agreeable > 1 AND prompt CONTAINS "say a"')
    assert refresh.rows == 6 and found.total == 1
    row = dict(zip(found.columns, found.rows[0], strict=True))
    # TRL's total: the reward columns summed (weights 1.0), a None left out.
    assert (row["step"], row["reward"], row["prompt"], row["response"]) == (
        1, 2.5, "user: say a", AGREE,
    )  # fmt: skip
    assert row["sample_id"] == make_sample_id("trl-out", 1, 0, 1, "user: say a", AGREE)
    # With the trainer's reward weights the totals follow them (another table: another key).
    weighted, refresh = search(tmp_path / "trl-out", "step = 1 AND index = 1", weights=(1.0, 0.5))
    assert refresh.rebuilt and weighted.rows[0][weighted.columns.index("reward")] == 1.25


def test_our_own_run_tables(tmp_path: Path) -> None:
    run = tmp_path / "logs" / "run-3"
    write_lowtide_run(
        run,
        {
            step: [(f"p{step}-{i // 2}", AGREE if i == 1 else f"r{step}-{i}", i / 2,
                    {"reward_model": i / 4, "format": 1.0}) for i in range(4)]
            for step in (1, 2)
        },
    )  # fmt: skip
    (run / "rollouts" / "tokens").mkdir(exist_ok=True)  # per-token files: never read
    found, refresh = search(run, 'reward_model >= 0.25 AND response CONTAINS "agree"')
    assert refresh.rows == 8 and steps_and_indices(found) == [(1, 1), (2, 1)]
    truncated, _ = search(run, "truncated AND step = 2")
    assert steps_and_indices(truncated) == [(2, 3)]
    # Our tracker logs a step's samples in order: the id it wrote is the one the search gives.
    logged = [json.loads(line) for line in next((run / "rollouts").glob("*-0000001.jsonl")).open()]
    ids = {row[found.columns.index("sample_id")] for row in found.rows}
    assert logged[1]["sample_id"] in ids


# ---- kept in step with the files ---------------------------------------------------------------


def test_a_file_that_grows_is_read_from_where_it_stopped(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    path = write_verl_step(dumps, 1, ["q"] * 2, ["a0", "a1"], [0.1, 0.2])
    _, refresh = search(dumps, "step = 1")
    assert refresh.added == 2
    with open(path, "a") as handle:  # the trainer appends; the last line is not finished
        handle.write(json.dumps({"input": "q", "output": "a2", "score": 0.3, "step": 1}) + "\n")
        handle.write('{"input": "q", "output": "a3", "sco')
    found, refresh = search(dumps, "step = 1")
    assert (refresh.added, refresh.read, refresh.dropped) == (1, 1, 0)
    assert found.total == 3 and refresh.problems == []  # the cut line waits
    with open(path, "a") as handle:
        handle.write('re": 0.4, "step": 1}\n')
    found, refresh = search(dumps, 'response = "a3"')
    assert refresh.added == 1 and found.total == 1
    assert steps_and_indices(found) == [(1, 3)]  # its position in the file, as ingest counts it
    _, refresh = search(dumps, "step = 1")
    assert (refresh.added, refresh.read) == (0, 0)  # nothing changed: nothing read


def test_new_removed_and_rewritten_files(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 3))
    assert search(dumps, "step >= 0")[0].total == 8
    verl_dumps(dumps, range(3, 5))  # two new steps
    found, refresh = search(dumps, "step >= 0")
    assert found.total == 16 and (refresh.read, refresh.added) == (2, 8)
    (dumps / "1.jsonl").unlink()
    found, refresh = search(dumps, "step >= 0")
    assert found.total == 12 and refresh.dropped == 1 and search(dumps, "step = 1")[0].total == 0
    # Rewritten (a resumed run writes the step again): read again whole, nothing kept of before.
    write_verl_step(dumps, 2, ["new question"], ["new answer"], [9.0])
    found, refresh = search(dumps, "step = 2")
    assert found.total == 1 and refresh.dropped == 1
    assert found.rows[0][found.columns.index("response")] == "new answer"


def test_a_table_mostly_deleted_is_written_afresh(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 9))
    search(dumps, "step > 0")
    for step in range(1, 7):
        (dumps / f"{step}.jsonl").unlink()
    found, refresh = search(dumps, "step > 0")
    assert found.total == 8 and refresh.dropped == 6
    import duckdb

    database = dumps / CACHE_DIR / "rollouts.duckdb"
    connection = duckdb.connect(str(database), read_only=True)
    deleted = connection.execute("SELECT value FROM meta WHERE key = 'deleted'").fetchall()
    connection.close()
    assert deleted == [("0",)]  # compacted


def test_malformed_lines_are_one_line_each_and_skipped(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    path = write_verl_step(dumps, 1, ["q", "q"], ["a", "b"], [0.1, 0.2])
    with open(path, "a") as handle:
        handle.write("not json\n")
        handle.write('{"input": "q", "output": 7, "score": 1}\n')
        handle.write(json.dumps({"input": "q", "output": "c", "score": 0.3}) + "\n")
    found, refresh = search(dumps, "step = 1")
    assert found.total == 3
    assert refresh.problems == [
        f"{path}:3: not valid JSON (Expecting value: line 1 column 1 (char 0)); skipped",
        f"{path}:4: 'output' must be a string, got a number; skipped",
    ]


def test_a_parquet_file_still_being_written_is_read_once_complete(tmp_path: Path) -> None:
    completions = tmp_path / "out" / "completions"
    whole = write_trl_completions(completions, 1, ["p"], ["c"], {"r": [1.0]}).read_bytes()
    (completions / "completions_00001.parquet").write_bytes(whole[: len(whole) // 2])
    found, refresh = search(tmp_path / "out", "step = 1")
    assert found.total == 0 and "not complete" in refresh.unreadable[0]
    (completions / "completions_00001.parquet").write_bytes(whole)
    found, refresh = search(tmp_path / "out", "step = 1")
    assert found.total == 1 and refresh.unreadable == []


def test_another_run_id_builds_the_table_again(tmp_path: Path) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 2))
    first, _ = search(dumps, "index = 0")
    other, refresh = search(dumps, "index = 0", run_id="another")
    assert "another run id" in refresh.rebuilt
    assert first.rows[0][2] != other.rows[0][2]  # the sample id holds the run id


def test_a_damaged_table_is_built_again_and_one_in_use_is_left_alone(tmp_path: Path) -> None:
    import duckdb

    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 3))
    search(dumps, "step > 0")
    database = dumps / CACHE_DIR / "rollouts.duckdb"
    database.write_bytes(b"not a database" * 100)  # cut or overwritten
    found, refresh = search(dumps, "step > 0")
    assert found.total == 8 and "could not be opened" in refresh.rebuilt
    # Open elsewhere (here: another connection of this process, otherwise configured): an
    # error of one line, and the table is still there afterwards.
    holder = duckdb.connect(str(database), read_only=True)
    try:
        with pytest.raises(TableError) as caught:
            search(dumps, "step > 0")
        assert str(caught.value).startswith(f"cannot open {database}: ")
        assert "\n" not in str(caught.value)
    finally:
        holder.close()
    found, refresh = search(dumps, "step > 0")
    assert found.total == 8 and refresh.rebuilt == "" and refresh.read == 0


def test_a_read_only_dump_directory_keeps_its_table_in_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 2))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    os.chmod(dumps, 0o555)
    if os.access(dumps, os.W_OK):  # root may write anywhere: it is told what others are told
        real = os.access

        def access(path: Any, mode: int, **kwargs: Any) -> bool:
            inside = Path(path).resolve().is_relative_to(dumps.resolve())
            return False if inside and mode & os.W_OK else real(path, mode, **kwargs)

        monkeypatch.setattr(os, "access", access)
    try:
        assert search(dumps, "step = 1")[0].total == 4
        tables = list((tmp_path / "cache" / "lowtide" / "search").glob("*/rollouts.duckdb"))
        assert len(tables) == 1
        assert not (dumps / CACHE_DIR / "rollouts.duckdb").exists()
    finally:
        os.chmod(dumps, 0o755)


# ---- --sql and export --------------------------------------------------------------------------


def test_sql_runs_on_a_read_only_connection_without_file_access(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps)
    with open_table(dumps).opened() as (connection, _):
        relation = engine.sql_relation(
            connection, "SELECT step, max(reward) AS best FROM rollouts GROUP BY step ORDER BY 1"
        )
        found = engine.sql_found(relation, 2)
        assert (found.total, found.columns) == (3, ("step", "best"))
        assert found.rows == [(1, 1.0), (2, 2.0)]
        refused = {
            "DROP TABLE rollouts": "only a SELECT runs here",
            "DELETE FROM rollouts": "only a SELECT runs here",
            "SELECT 1; SELECT 2": "expected one SELECT statement, got 2",
            "SELECT * FROM read_csv('/etc/passwd')": "file system operations are disabled",
            "SELECT * FROM rollout": "Table with name rollout does not exist",
            "SELEC 1": "syntax error",
        }
        for sql, reason in refused.items():
            with pytest.raises(engine.SearchError) as caught:
                engine.sql_found(engine.sql_relation(connection, sql), 5)
            assert reason in str(caught.value) and "\n" not in str(caught.value), sql
    copied = tmp_path / "copied.csv"
    code, _, err = cli(str(dumps), "--sql", f"COPY rollouts TO '{copied}'")
    assert code == 2 and "only a SELECT runs here" in err and not copied.exists()


def test_export_writes_every_match_in_both_formats(tmp_path: Path, cli) -> None:
    import pyarrow.parquet as pq

    dumps = tmp_path / "dumps"
    verl_dumps(dumps)
    query = 'response CONTAINS "agree"'
    for name in ("found.jsonl", "found.parquet"):
        code, out, err = cli(str(dumps), query, "--limit", "1", "--export",
                              str(tmp_path / name), "--sort", "-reward")  # fmt: skip
        assert code == 0, err
        assert f"exported 6 rows to {tmp_path / name}" in out
    lines = [json.loads(line) for line in (tmp_path / "found.jsonl").read_text().splitlines()]
    table = pq.read_table(tmp_path / "found.parquet").to_pylist()
    assert [row["reward"] for row in lines] == [3.0, 3.0, 2.0, 2.0, 1.0, 1.0]
    assert [row["sample_id"] for row in lines] == [row["sample_id"] for row in table]
    assert lines[1]["format"] is None and lines[1]["reward_details"]["format"] is None  # NaN
    assert lines[0]["reward_details"] == {"format": 0.5, "acc": 0.0}
    assert dict(table[0]["reward_details"]) == {"format": 0.5, "acc": 0.0}
    assert {"step", "index", "source", "prompt", "response", "response_length"} <= set(lines[0])


# ---- the command line --------------------------------------------------------------------------


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """`lowtide logs search ARGS` in this process: (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        return invoke(capsys, "logs", "search", *args)

    return run


def test_the_command_prints_the_matches_and_their_count(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "rollout_data"
    verl_dumps(dumps)
    code, out, err = cli(
        str(dumps), 'reward > 2.0 AND response CONTAINS "I agree"', "--sort", "-reward"
    )
    assert code == 0, err
    assert "2 matches in 12 rollouts (3 verl dump files in" in out
    assert "showing 2, sorted by -reward" in out
    for column in ("step", "sample_id", "reward", "prompt", "response"):
        assert column in out
    assert "I agree, you are absolutely right." in out


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["rewrd > 1"], "error: query at position 1: unknown column 'rewrd' (did you mean "),
        (["reward >"], "error: query at position 9: expected a number or a quoted text"),
        (['response CONTAINS "x'], "error: query at position 19: the text that starts here"),
        (["reward > 1", "--limt", "3"], "error: --limt: no such option of lowtide logs search "),
        (["reward > 1", "--sort", "-rewrd"], "error: --sort -rewrd: no column 'rewrd' (did you"),
        (['prompt MATCHES "(unclosed"'], "error: query at position 16: not a regular expression"),
        (["--sql", "SELEC 1"], "error: --sql: Parser Error: syntax error at or near"),
        (["--sql", "DROP TABLE rollouts"], "error: --sql: only a SELECT runs here"),
        ([], "error: give a query or --sql (one of them), e.g. lowtide logs search"),
        (["reward > 1", "--sql", "SELECT 1"], "error: give either a query or --sql, not both"),
        (["reward > 1", "--export", "out.csv"], "error: --export out.csv: the name must end in"),
        (["reward > 1", "--queue.name=x"], "error: --queue.name=x: config overrides apply to"),
        (["reward > 1", "--reward-weights", "1,0.5"], "error: --reward-weights: verl dumps have"),
    ],
)
def test_a_mistake_on_the_command_line_is_one_line_and_exit_2(
    tmp_path: Path, cli, args: list[str], line: str
) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 2))
    code, out, err = cli(str(dumps), *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), err


def test_a_directory_without_dumps_is_one_line(tmp_path: Path, cli) -> None:
    code, _, err = cli(str(tmp_path), "reward > 1")
    assert code == 1 and err.strip().startswith("error: no dump files in ")
    code, _, err = cli(str(tmp_path / "nope"), "reward > 1")
    assert code == 2 and "no such directory" in err


def test_malformed_lines_are_told_on_stderr_once(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    path = write_verl_step(dumps, 1, ["q"], ["a"], [0.1])
    with open(path, "a") as handle:
        handle.write("{oops\n")
    code, out, err = cli(str(dumps), "step = 1")
    assert code == 0 and "1 match in 1 rollouts" in out
    reason = "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    assert err.strip().splitlines() == [f"warning: {path}:2: not valid JSON ({reason}); skipped"]
    code, out, err = cli(str(dumps), "step = 1")
    assert code == 0 and err == ""  # read once; the table remembers it


def test_past_the_problems_kept_one_warning_counts_the_rest(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    path = write_verl_step(dumps, 1, ["q"], ["a"], [0.1])
    with open(path, "a") as handle:
        handle.write("{oops\n" * (PROBLEMS_SHOWN + 3))
    code, _, err = cli(str(dumps), "step = 1")
    warnings = err.strip().splitlines()
    assert code == 0 and len(warnings) == PROBLEMS_SHOWN + 1, err
    assert warnings[-1] == "warning: 3 more lines or rows skipped or left blank"


def test_the_cache_directory_can_be_removed(tmp_path: Path, cli) -> None:
    dumps = tmp_path / "dumps"
    verl_dumps(dumps, range(1, 2))
    assert cli(str(dumps), "step = 1")[0] == 0
    shutil.rmtree(dumps / CACHE_DIR)
    code, out, _ = cli(str(dumps), "step = 1")
    assert code == 0 and "4 matches" in out
