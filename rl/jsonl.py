"""The one JSONL reader: one JSON object per line, blank lines skipped, a bad line handled by
the caller (an error naming `file:line`, or skipped where a killed writer may have cut it).

Lines of files someone else wrote are bounded: nesting deeper than MAX_DEPTH is a bad line
(the json module recurses, and a deep enough line would end the reading with RecursionError),
and a reader of such files passes `max_line_bytes` (a longer line is a bad line, skipped whole
without being held in memory). `whole_lines` is how a reader that follows growing files reads
them: whole lines only, an over-long one skipped once its end is written.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

# Called with (line number, what is wrong); raise to stop, return to skip the line.
OnBadLine = Callable[[int, str], None]

# Far deeper than any row we read (a few levels), far shallower than the interpreter's
# recursion limit, which json's decoder would otherwise run into.
MAX_DEPTH = 100
# A line of a file someone else wrote; read per call (`jsonl.MAX_LINE_BYTES`) so a test can
# make it small.
MAX_LINE_BYTES = 64 * 2**20
HEAD_BYTES = 64 * 2**10  # what `LineBlock.head` keeps of the first line
SCAN_BYTES = 2**20  # looking for the end of an over-long line, this much at a time

_STRING_BYTES = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STRING_TEXT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET_BYTES = re.compile(rb"[^\[\]{}]+")
_NOT_BRACKET_TEXT = re.compile(r"[^\[\]{}]+")


class BadLine(ValueError):
    """A line that is not one JSON object; the message says what is wrong."""


def parse_value(text: str | bytes) -> Any:
    """Any JSON value, nested at most MAX_DEPTH deep; BadLine for anything else."""
    if nesting_depth(text) > MAX_DEPTH:
        raise BadLine(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:  # a caller already deep in its own stack
        raise BadLine(f"nested too deeply to read (limit {MAX_DEPTH} levels)") from None
    except ValueError as error:  # invalid UTF-8 and over-long integers are ValueErrors too
        raise BadLine(f"not valid JSON ({_short(error)})") from None


def parse_line(line: str | bytes) -> dict[str, Any]:
    """One line's object; BadLine when it is not JSON or not an object."""
    row = parse_value(line)
    if not isinstance(row, dict):
        raise BadLine("expected a JSON object per line")
    return row


def nesting_depth(text: str | bytes) -> int:
    """How deep JSON's arrays and objects nest in `text`, brackets inside strings not counted;
    linear, no recursion. An upper bound for text that is not JSON."""
    opened = text.count(b"[" if isinstance(text, bytes) else "[")
    opened += text.count(b"{" if isinstance(text, bytes) else "{")
    if opened <= MAX_DEPTH:  # the common case: no line is deeper than its brackets
        return opened
    if isinstance(text, bytes):
        brackets = _NOT_BRACKET_BYTES.sub(b"", _STRING_BYTES.sub(b"", text))
        steps = (1 if byte in b"[{" else -1 for byte in brackets)
    else:
        brackets_text = _NOT_BRACKET_TEXT.sub("", _STRING_TEXT.sub("", text))
        steps = (1 if char in "[{" else -1 for char in brackets_text)
    return max(itertools.accumulate(steps, initial=0))


def read_jsonl(
    path: Path, on_bad_line: OnBadLine, *, max_line_bytes: int | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of `path`. With `max_line_bytes` (files
    someone else wrote), a longer line is a bad line, never held in memory whole; without it
    (our own files, whose lines we wrote) lines are read as long as they are."""
    with path.open("rb") as handle:
        for number in itertools.count(1):
            line = _next_line(handle, max_line_bytes)
            if line is None:
                return
            if isinstance(line, _OverLong):
                on_bad_line(number, over_long(line.limit))
                continue
            if not line.strip():
                continue
            try:
                yield number, parse_line(line)
            except BadLine as problem:
                on_bad_line(number, str(problem))


def valid_text(text: str) -> str:
    """`text` with each lone surrogate (a JSON `\\ud800` escape) as U+FFFD: what cannot be
    written as UTF-8 would fail every reader after this one (the search table, a record, a
    pandas frame)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def valid_texts(value: Any) -> Any:
    """A parsed value with valid_text applied to every text in it, keys too (at most
    MAX_DEPTH deep, as parse_value reads)."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list):
        return [valid_texts(item) for item in value]
    if isinstance(value, dict):
        return {valid_texts(key): valid_texts(item) for key, item in value.items()}
    return value


def skip_bad_line(number: int, problem: str) -> None:
    """For files a killed process may have left with a cut last line: the rest still counts."""


def over_long(limit: int) -> str:
    return f"longer than {limit} bytes"


@dataclass(frozen=True)
class LineBlock:
    """Whole lines read from `start`: each line's bytes without its newline, or None for a line
    longer than the limit (skipped, one line all the same); `end` is past the last newline."""

    lines: list[bytes | None]
    end: int
    head: bytes  # the first line's first HEAD_BYTES (an over-long one's too)


def whole_lines(
    handle: BinaryIO, start: int, size: int, piece_bytes: int, max_line_bytes: int | None = None
) -> LineBlock | None:
    """The whole lines of a file from byte `start`, about `piece_bytes` of them (more when one
    line is longer), reading no further than `size`. None while there is no whole line there
    yet: the last line is still being written. A line longer than `max_line_bytes` (default
    MAX_LINE_BYTES) is None in the block once its newline is written."""
    limit = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    handle.seek(start)
    data = handle.read(min(size - start, max(piece_bytes, limit + 1)))
    last = data.rfind(b"\n")
    if last >= 0:
        lines = data[:last].split(b"\n")
        kept = [line if len(line) <= limit else None for line in lines]
        return LineBlock(kept, start + last + 1, lines[0][:HEAD_BYTES])
    if len(data) <= limit:
        return None  # a line still being written, not yet too long
    newline = _find_newline(handle, start + len(data), size)
    if newline is None:
        return None  # too long already; skipped once it ends
    return LineBlock([None], newline + 1, data[:HEAD_BYTES])


# ---- reading a whole file ------------------------------------------------------------------------


@dataclass(frozen=True)
class _OverLong:
    limit: int


def _next_line(handle: BinaryIO, limit: int | None) -> bytes | _OverLong | None:
    """The next line without its newline (as the follower reads lines), an over-long one
    skipped through its end, or None at the end of the file."""
    line = handle.readline() if limit is None else handle.readline(limit + 1)
    if not line:
        return None
    if line.endswith(b"\n"):
        line = line[:-1]
    elif limit is not None and len(line) > limit:
        while True:  # the rest of the over-long line, a piece at a time
            rest = handle.readline(SCAN_BYTES)
            if not rest or rest.endswith(b"\n"):
                break
    return _OverLong(limit) if limit is not None and len(line) > limit else line


def _find_newline(handle: BinaryIO, start: int, size: int) -> int | None:
    at = start
    handle.seek(at)
    while at < size:
        data = handle.read(min(SCAN_BYTES, size - at))
        if not data:
            return None
        found = data.find(b"\n")
        if found >= 0:
            return at + found
        at += len(data)
    return None


def _short(error: ValueError) -> str:
    text = str(error)
    return text if len(text) <= 200 else text[:200] + "…"
