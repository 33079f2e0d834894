"""What a finder reports: where a value to redact starts and ends in a text, and its kind."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property
from typing import NamedTuple, Protocol

_DIGIT = re.compile(r"[0-9]")


class Span(NamedTuple):
    start: int
    end: int  # exclusive, as in text[start:end]
    kind: str


class Text:
    """A text and the facts about it that let finders skip their regexes, each computed once
    per text: most texts have no digit, no long word, no `@`, and finders that need one cost
    nothing there."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def has_digit(self) -> bool:
        return _DIGIT.search(self.text) is not None

    @cached_property
    def longest_word(self) -> int:
        """Characters of the longest whitespace-separated word: a token or key is one long word."""
        return max(map(len, self.text.split()), default=0)


class Finder(Protocol):
    """Finds the values of one or more kinds in a text."""

    kinds: frozenset[str]

    def find(self, text: Text) -> Iterable[Span]: ...
