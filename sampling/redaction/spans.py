"""What a finder reports: where a value to redact starts and ends in a text, and its kind."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property
from typing import NamedTuple, Protocol

LONG_WORD = 20


# Possessive: each shorter word and its spaces are taken once and never retried from inside,
# so one match() call finds the next long word, or rejects the rest of the text, in one pass.
_LONG_WORD = re.compile(rf"\s*+(?:\S{{1,{LONG_WORD - 1}}}+\s++)*+(\S{{{LONG_WORD},}}+)")
# A digit, then digits and separators, ending in a digit: the regex skips to digits in C.
_DIGIT_RUN = re.compile(r"[0-9](?:[0-9 .()/+-]*[0-9])?")


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

    @cached_property
    def lower(self) -> str:
        return self.text.lower()

    @cached_property
    def long_words(self) -> list[tuple[int, int]]:
        """(start, end) of each whitespace-separated word of LONG_WORD characters or more:
        every token, key or encoded secret is one, and ordinary prose has almost none."""
        found, position, text = [], 0, self.text
        while (match := _LONG_WORD.match(text, position)) is not None:
            found.append(match.span(1))
            position = match.end()
        return found

    @cached_property
    def digit_runs(self) -> list[tuple[int, int, int]]:
        """(start, end, digits) of each run of digits and the separators numbers are written
        with (`4111 1111`, `203.0.113.42`, `(555) 123-4567`): where numbers to redact are."""
        return [
            (match.start(), match.end(), sum(map(str.isdigit, match.group())))
            for match in _DIGIT_RUN.finditer(self.text)
        ]

    def has_number(self, digits: int, dots: int = 0) -> bool:
        """A run with at least `digits` digits (and `dots` dots)."""
        text = self.text
        return any(
            count >= digits and (not dots or text.count(".", start, end) >= dots)
            for start, end, count in self.digit_runs
        )

    def has_number_after_capitals(self, digits: int) -> bool:
        """A run of at least `digits` digits right after two capitals (and maybe a space): how
        IBANs (GB82 WEST ...) and NINOs (AB 12 34 56 C) start."""
        text = self.text
        for start, _, count in self.digit_runs:
            if count >= digits and start >= 2:
                before = text[max(0, start - 3) : start]
                before = before[:-1] if before.endswith(" ") else before
                if len(before) >= 2 and before[-2:].isascii() and before[-2:].isupper():
                    return True
        return False


class Finder(Protocol):
    """Finds the values of one or more kinds in a text."""

    kinds: frozenset[str]

    def find(self, text: Text) -> Iterable[Span]: ...
