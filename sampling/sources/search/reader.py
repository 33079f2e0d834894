"""Reading dump files for the search table with the readers `lowtide ingest` has (the formats of
sampling/sources/ingest/), from the start or from where the table last stopped: a jsonl file
that grew is read from its last whole line on, as the follower reads it.

A malformed line or row is skipped with a one-line reason (file:line), as is a line longer
than `rl.jsonl.MAX_LINE_BYTES` or nested deeper than `rl.jsonl.MAX_DEPTH` once its newline is
written; a parquet file that is not complete yet, or cannot be read, is skipped whole and read
on a later search.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rl import jsonl
from sampling.sources.ingest.formats import DumpFile, DumpFormat
from sampling.sources.ingest.rows import BadRow, DumpRow
from sampling.sources.trl import dumps as trl

PIECE_BYTES = 64 * 2**20  # a bigger file is read (and stored) in pieces of about this size
HEAD_BYTES = jsonl.HEAD_BYTES  # the first line, up to this: a rewritten file or one that grew
TAIL_BYTES = 4096  # the bytes before where reading stopped: the same test at the other end


@dataclass(frozen=True)
class Mark:
    """How far a jsonl file was read, and what its first line and the bytes before that point
    were: a file that still shows both has only grown since."""

    offset: int = 0  # bytes read: whole lines only
    lines: int = 0
    head: str = ""
    tail: str = ""


@dataclass
class Piece:
    """Rows read from one file (or part of a big one), and where the reading stopped."""

    file: DumpFile
    rows: list[DumpRow]
    mark: Mark
    problems: list[str] = field(default_factory=list)  # one line per skipped line or row


class Unreadable(Exception):
    """The file cannot be read now (gone, cut, not parquet); the message is one line."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def head_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return digest(handle.read(HEAD_BYTES).split(b"\n", 1)[0])


def tail_before(path: Path, offset: int) -> str:
    start = max(0, offset - TAIL_BYTES)
    with open(path, "rb") as handle:
        handle.seek(start)
        return digest(handle.read(offset - start))


def only_grew(file: DumpFile, mark: Mark) -> bool:
    """Whether `file` is what was read up to `mark`, with more after it."""
    if file.size < mark.offset:
        return False
    try:
        return head_of(file.path) == mark.head and tail_before(file.path, mark.offset) == mark.tail
    except OSError:
        return False


def read_jsonl(dump_format: DumpFormat, file: DumpFile, since: Mark) -> Iterator[Piece]:
    """The whole lines after `since`, in pieces of about PIECE_BYTES; a last line still being
    written (no newline yet) waits for a later search."""
    parse = dump_format.parse
    assert parse is not None
    mark = since
    try:
        with open(file.path, "rb") as handle:
            while mark.offset < file.size:
                block = jsonl.whole_lines(handle, mark.offset, file.size, PIECE_BYTES)
                if block is None:
                    return  # no whole line yet
                rows: list[DumpRow] = []
                problems: list[str] = []
                for number, raw in enumerate(block.lines, mark.lines + 1):
                    if raw is not None and not raw.strip():
                        continue
                    try:
                        rows.append(parse(_parsed(raw), number - 1, file.step))
                    except (jsonl.BadLine, BadRow) as problem:
                        problems.append(f"{file.path}:{number}: {problem}; skipped")
                head = mark.head if mark.offset else digest(block.head[:HEAD_BYTES])
                lines = mark.lines + len(block.lines)
                mark = Mark(block.end, lines, head, tail_before(file.path, block.end))
                yield Piece(file, rows, mark, problems)
    except OSError as error:
        raise Unreadable(f"cannot read it ({error.strerror or error})") from None


def _parsed(raw: bytes | None) -> dict[str, Any]:
    if raw is None:  # longer than the limit: skipped unread
        raise jsonl.BadLine(jsonl.over_long(jsonl.MAX_LINE_BYTES))
    return jsonl.parse_line(raw)


def read_parquet(file: DumpFile, reward_weights: Sequence[float] | None) -> Piece:
    """Every row of a TRL completions file; Unreadable while it is not complete."""
    if not trl.looks_complete(file.path):
        raise Unreadable("not complete (still being written?)")
    try:
        found = trl.read_rows(file.path, file.step, reward_weights)
    except trl.UnreadableFile as problem:
        raise Unreadable(str(problem)) from None
    rows = [row for row in found if isinstance(row, DumpRow)]
    problems = [
        f"{file.path}:row {number}: {row}; skipped"
        for number, row in enumerate(found, 1)
        if isinstance(row, BadRow)
    ]
    return Piece(file, rows, Mark(), problems)
