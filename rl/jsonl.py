"""The one JSONL reader: one JSON object per line, blank lines skipped, a bad line handled by
the caller (an error naming `file:line`, or skipped where a killed writer may have cut it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# Called with (line number, what is wrong); raise to stop, return to skip the line.
OnBadLine = Callable[[int, str], None]


class BadLine(ValueError):
    """A line that is not one JSON object; the message says what is wrong."""


def parse_line(line: str | bytes) -> dict[str, Any]:
    """One line's object; BadLine when it is not JSON or not an object."""
    try:
        row = json.loads(line)
    except ValueError as error:
        raise BadLine(f"not valid JSON ({error})") from None
    if not isinstance(row, dict):
        raise BadLine("expected a JSON object per line")
    return row


def read_jsonl(path: Path, on_bad_line: OnBadLine) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of `path`."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield number, parse_line(line)
            except BadLine as problem:
                on_bad_line(number, str(problem))


def skip_bad_line(number: int, problem: str) -> None:
    """For files a killed process may have left with a cut last line: the rest still counts."""
