"""`lowtide logs search` on a run of 1,000,000 rollouts of ~2 KB (verl `{step}.jsonl` dumps,
2 GB), cached: the issue's query `reward > 2.0 AND response CONTAINS "I agree"`, against the
same query over the same files without the cache in the same invocation (DuckDB's own
`read_json` on the raw files; and a plain Python scan, json.loads per line, on a share of the
files, scaled up).

The search table is built once (its time is printed), then each repeat is what a search does
once cached: the files listed and checked against the table, the query compiled and run, the
match count and the first 20 matches read. One more step file is then added and searched
(read on the way). Also timed: the whole command as a user runs it, in its own process
(Python's start-up and imports included). The match count is checked against what was
written. Goal: <= 1 s cached. Knobs: BENCH_ROLLOUTS (1000000), BENCH_PER_STEP (1024),
BENCH_RUNS (5), BENCH_SCAN_SHARE (0.1: the share of files the Python scan reads).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _quick import announce, knob

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

ROLLOUTS = knob("ROLLOUTS", 1_000_000, 20_000)
PER_STEP = knob("PER_STEP", 1024, 1024)
RUNS = knob("RUNS", 5, 2)
SCAN_SHARE = knob("SCAN_SHARE", 0.1, 0.5)
QUERY = 'reward > 2.0 AND response CONTAINS "I agree"'
PHRASE = "I agree"
AGREE_SHARE = 0.05  # responses that carry the phrase (at a random place)
PROMPT_CHARS, RESPONSE_CHARS = 400, 1600
WORDS, ZIPF = 20_000, 1.1
LIMIT = 20
GOAL_S = 1.0


class Writer:
    """verl's dump lines (`_write_generations`: input, output, gts, score, step, one extra-info
    column), each prompt and response a different slice of a long random text (no two
    responses alike, as in a run), the phrase planted in AGREE_SHARE of them. The text: made-up
    words of 2 to 12 letters drawn as words occur in prose (Zipf's law over a vocabulary of
    WORDS, the shorter words the more frequent)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
        lengths = np.sort(self.rng.integers(2, 13, size=WORDS))
        vocabulary = [bytes(self.rng.choice(letters, size=int(n))).decode() for n in lengths]
        weights = 1.0 / np.arange(1, WORDS + 1) ** ZIPF
        picks = self.rng.choice(WORDS, size=2_000_000, p=weights / weights.sum())
        self.text = " ".join(vocabulary[i] for i in picks)  # ~12 MB
        self.expected = 0  # rows the query matches

    def step(self, path: Path, step: int) -> None:
        rng, text, n = self.rng, self.text, PER_STEP
        prompt_at = rng.integers(0, len(text) - PROMPT_CHARS, size=n)
        response_at = rng.integers(0, len(text) - RESPONSE_CHARS, size=n)
        planted = rng.random(n) < AGREE_SHARE
        plant_at = rng.integers(0, RESPONSE_CHARS, size=n)
        scores = np.round(rng.random(n) * 3.0, 6).tolist()
        self.expected += int(np.sum(planted & (np.array(scores) > 2.0)))
        lines = []
        for i in range(n):
            prompt = f"Problem {step}.{i // 8}: " + text[prompt_at[i] : prompt_at[i] + PROMPT_CHARS]
            response = text[response_at[i] : response_at[i] + RESPONSE_CHARS]
            if planted[i]:
                at = int(plant_at[i])
                response = f"{response[:at]} {PHRASE}, {response[at:]}"
            # The texts need no JSON escaping (letters and spaces): written as json.dumps would.
            lines.append(
                f'{{"input": "{prompt}", "output": "{response}", "gts": "{i // 8}", '
                f'"score": {scores[i]!r}, "step": {step}, "acc": {str(bool(i % 2)).lower()}}}\n'
            )
        path.write_text("".join(lines))


def build_cache(dumps: Path) -> tuple[float, int]:
    from sampling.sources.ingest.formats import locate
    from sampling.sources.search.table import SearchTable, TableKey

    location = locate(dumps, "auto")
    assert location is not None
    table = SearchTable(location, TableKey(location.format.name, dumps.name))
    started = time.perf_counter()
    refresh = table.refresh()
    elapsed = time.perf_counter() - started
    if refresh.problems or refresh.unreadable:
        raise SystemExit(f"the dumps did not read: {(refresh.problems + refresh.unreadable)[0]}")
    return elapsed, refresh.rows


def cached_search(dumps: Path) -> tuple[float, int, int]:
    """What `lowtide logs search DIR QUERY` does once cached: (seconds, matches, rows read)."""
    from sampling.sources.ingest.formats import locate
    from sampling.sources.search import engine
    from sampling.sources.search.table import SearchTable, TableKey, columns_of

    started = time.perf_counter()
    location = locate(dumps, "auto")
    assert location is not None
    table = SearchTable(location, TableKey(location.format.name, dumps.name))
    with table.opened() as (connection, refresh):
        columns = columns_of(connection)
        compiled = engine.compile_checked(connection, QUERY, columns)
        shown = ["step", "sample_id", "reward", "prompt", "response"]
        found = engine.find(connection, compiled, [], shown, LIMIT)
    return time.perf_counter() - started, found.total, refresh.read


def duckdb_raw(dumps: Path) -> tuple[float, int]:
    """The baseline: DuckDB's read_json over the dump files, no table, the same condition."""
    import duckdb

    connection = duckdb.connect()
    started = time.perf_counter()
    found = connection.execute(
        "SELECT count(*) FROM read_json(?, format = 'newline_delimited', "
        "columns = {'input': 'VARCHAR', 'output': 'VARCHAR', 'score': 'DOUBLE', "
        "'step': 'BIGINT'}) WHERE score > 2.0 AND output ILIKE ?",
        [str(dumps / "*.jsonl"), f"%{PHRASE}%"],
    ).fetchall()
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, int(found[0][0])


def python_scan(dumps: Path) -> tuple[float, int, float]:
    """The plain way: json.loads every line of a share of the files and test the condition;
    (seconds scaled to all files, matches in the share, share of rows read)."""
    files = sorted(dumps.glob("*.jsonl"), key=lambda path: int(path.stem))
    every = max(1, round(1 / SCAN_SHARE))
    chosen = files[::every]
    needle = PHRASE.lower()
    started = time.perf_counter()
    matches = rows = 0
    for path in chosen:
        with open(path, "rb") as handle:
            for line in handle:
                row = json.loads(line)
                rows += 1
                if row["score"] > 2.0 and needle in row["output"].lower():
                    matches += 1
    elapsed = time.perf_counter() - started
    share = rows / ROLLOUTS
    return elapsed / share, matches, share


def command_line(dumps: Path) -> float:
    command = [sys.executable, "-m", "lowtide", "logs", "search", str(dumps), QUERY]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"lowtide logs search failed:\n{result.stderr[-3000:]}")
    return elapsed


def spread(times: list[float]) -> str:
    return f"median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"


def main() -> None:
    announce()
    steps = ROLLOUTS // PER_STEP
    with tempfile.TemporaryDirectory() as tmp:
        dumps = Path(tmp) / "rollout_data_dir"
        dumps.mkdir()
        writer = Writer()
        started = time.perf_counter()
        for step in range(1, steps + 1):
            writer.step(dumps / f"{step}.jsonl", step)
        written_s = time.perf_counter() - started
        size = sum(path.stat().st_size for path in dumps.glob("*.jsonl"))
        total = steps * PER_STEP
        print(f"{total:,} verl rollouts in {steps} files, {size / 2**30:.2f} GB "
              f"({size / total / 1024:.2f} KB a rollout), written in {written_s:.1f} s; "
              f"DuckDB threads: {os.cpu_count()} cores")  # fmt: skip

        build_s, rows = build_cache(dumps)
        cache = sum(path.stat().st_size for path in (dumps / ".lowtide-search").iterdir())
        print(f"search table built once: {build_s:.1f} s ({rows / build_s:,.0f} rollouts/s), "
              f"{cache / 2**30:.2f} GB on disk ({cache / size:.2f}x the dumps)")  # fmt: skip
        if rows != total:
            raise SystemExit(f"the table holds {rows:,} rollouts, {total:,} were written")

        cached, raw, counts = [], [], set()
        for _ in range(RUNS):  # interleaved
            elapsed, matches, read = cached_search(dumps)
            cached.append(elapsed)
            counts.add(matches)
            if read:
                raise SystemExit(f"a cached search read {read} files again")
            elapsed, matches = duckdb_raw(dumps)
            raw.append(elapsed)
            counts.add(matches)
        if counts != {writer.expected}:
            raise SystemExit(f"matches {sorted(counts)}, expected {writer.expected:,}")
        cached_s, raw_s = statistics.median(cached), statistics.median(raw)
        met = "met" if cached_s <= GOAL_S else "NOT met"
        print(f"{QUERY}: {writer.expected:,} matches")
        print(f"  cached search (files checked, count, first {LIMIT} rows): {spread(cached)}; "
              f"goal <= {GOAL_S:.0f} s: {met}")  # fmt: skip
        print(f"  baseline, DuckDB read_json on the raw files: {spread(raw)}; "
              f"speed-up of the cache {raw_s / cached_s:.1f}x")  # fmt: skip
        scan_s, _, share = python_scan(dumps)
        print(f"  baseline, Python json.loads scan ({share:.0%} of the rows, scaled): "
              f"{scan_s:.1f} s; speed-up of the cache {scan_s / cached_s:.0f}x")  # fmt: skip

        cli = [command_line(dumps) for _ in range(max(1, RUNS // 2))]
        print(f"  the whole command in its own process (start-up and imports included): "
              f"{spread(cli)}")  # fmt: skip

        writer.step(dumps / f"{steps + 1}.jsonl", steps + 1)
        grown, matches, read = cached_search(dumps)
        if read != 1 or matches != writer.expected:
            raise SystemExit(f"after a new step: read {read} files, {matches} matches")
        print(f"  a new step file ({PER_STEP} rollouts) read and searched: {grown:.3f} s")


if __name__ == "__main__":
    main()
