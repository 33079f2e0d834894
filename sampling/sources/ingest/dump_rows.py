"""Every row of a dump directory, read once in step order: what `lowtide logs bias` analyses
(the follower reads the same files incrementally, with a cursor, to route them).

A line or row that is not a sample, or a file that cannot be read, is told to `on_problem` in
one line and skipped. TRL writes the latest generation batch at every logging step, so a file
holding the same batch as the file before it is skipped too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence

from rl import jsonl
from sampling.sources.ingest.formats import DumpFile, DumpLocation, list_files
from sampling.sources.ingest.rows import BadRow, DumpRow
from sampling.sources.trl import dumps as trl

OnProblem = Callable[[str], None]


def read_dump(
    location: DumpLocation,
    on_problem: OnProblem,
    *,
    reward_weights: Sequence[float] | None = None,
    files: list[DumpFile] | None = None,
) -> Iterator[DumpRow]:
    """The rows of `files` (default: all of the location's, in step order)."""
    previous_batch = None
    for file in list_files(location) if files is None else files:
        if location.format.kind == "jsonl":
            yield from _jsonl_rows(location, file, on_problem)
            continue
        rows = _parquet_rows(file, reward_weights, on_problem)
        digest = _batch_digest(rows)
        if rows and digest == previous_batch:
            continue  # the batch of the file before
        previous_batch = digest
        yield from rows


def _jsonl_rows(location: DumpLocation, file: DumpFile, on_problem: OnProblem) -> Iterator[DumpRow]:
    parse = location.format.parse
    assert parse is not None

    def bad_line(number: int, problem: str) -> None:
        on_problem(f"{file.path}:{number}: {problem}; skipped")

    try:
        for number, row in jsonl.read_jsonl(
            file.path, bad_line, max_line_bytes=jsonl.MAX_LINE_BYTES
        ):
            try:
                yield parse(row, number - 1, file.step)
            except BadRow as problem:
                bad_line(number, str(problem))
    except (OSError, UnicodeDecodeError) as error:
        on_problem(f"{file.path}: cannot read it ({error}); the rest of it skipped")


def _parquet_rows(
    file: DumpFile, reward_weights: Sequence[float] | None, on_problem: OnProblem
) -> list[DumpRow]:
    try:
        rows = trl.read_rows(file.path, file.step, reward_weights)
    except trl.UnreadableFile as problem:
        on_problem(f"{file.path}: {problem}; skipped")
        return []
    good = []
    for number, row in enumerate(rows, 1):
        if isinstance(row, BadRow):
            on_problem(f"{file.path}:row {number}: {row}; skipped")
        else:
            good.append(row)
    return good


def _batch_digest(rows: list[DumpRow]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        for part in (row.prompt, row.response, repr(row.reward)):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
    return digest.hexdigest()
