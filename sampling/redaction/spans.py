"""What a finder reports: where a value to redact starts and ends in a text, and its kind."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from functools import cached_property
from typing import NamedTuple, Protocol

LONG_WORD = 20


_CAPITAL_DIGITS = re.compile(r"[A-Z] ?[0-9][0-9]")


@functools.cache
def _digits(count: int) -> re.Pattern[str]:
    # Stops at the count-th digit: ordinary text with a few numbers answers early.
    return re.compile(rf"[0-9](?:[^0-9]*+[0-9]){{{count - 1}}}")


@functools.cache
def _word_of(length: int) -> re.Pattern[str]:
    # Possessive: each shorter word and its spaces are taken once, never retried from inside,
    # so a text without such a word is rejected in one pass (`\S{20}` tries every position).
    return re.compile(rf"\s*+(?:\S{{1,{length - 1}}}+\s++)*+\S{{{length}}}")


class Span(NamedTuple):
    start: int
    end: int  # exclusive, as in text[start:end]
    kind: str


class Text:
    """A text and the facts about it that let finders skip their regexes, each computed once
    per text: most texts have no long word, few digits, no `@`, and finders that need one cost
    next to nothing there."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._words: dict[int, bool] = {}

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def has_capital_digits(self) -> bool:
        """A capital letter, maybe a space, then two digits: how IBANs and NINOs start."""
        return _CAPITAL_DIGITS.search(self.text) is not None

    def has_digits(self, count: int) -> bool:
        """Whether the text holds at least `count` digits (anywhere)."""
        key = -count  # shares the cache with has_word (positive keys)
        found = self._words.get(key)
        if found is None:
            found = self._words[key] = _digits(count).search(self.text) is not None
        return found

    @cached_property
    def has_long_word(self) -> bool:
        """Whether a whitespace-separated word has LONG_WORD characters or more: every token,
        key or encoded secret does, and ordinary prose almost never."""
        return self.has_word(LONG_WORD)

    def has_word(self, length: int) -> bool:
        """Whether a whitespace-separated word has `length` characters or more."""
        found = self._words.get(length)
        if found is None:
            found = self._words[length] = _word_of(length).match(self.text) is not None
        return found


class Finder(Protocol):
    """Finds the values of one or more kinds in a text."""

    kinds: frozenset[str]

    def find(self, text: Text) -> Iterable[Span]: ...
