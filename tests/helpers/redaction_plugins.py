"""User redactors for the redaction tests, named by dotted path as a config names them."""

from __future__ import annotations

import re
from collections.abc import Iterator

_CODENAME = re.compile(r"Project [A-Z][a-z]+")


def codenames(text: str) -> Iterator[tuple[int, int, str]]:
    for match in _CODENAME.finditer(text):
        yield match.start(), match.end(), "CODENAME"


def broken(text: str) -> list[tuple[int, int, str]]:
    raise ValueError(f"cannot read {text!r}")  # quotes the text: the message must not travel


def out_of_range(text: str) -> list[tuple[int, int, str]]:
    return [(0, len(text) + 5, "CODENAME")]


NOT_CALLABLE = 3
