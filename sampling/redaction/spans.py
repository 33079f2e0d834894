"""What a finder reports: where a value to redact starts and ends in a text, and its kind."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import NamedTuple, Protocol

LONG_WORD = 20
# A named token ("my key is Xk3vP9qLm2Rt7") may be shorter: the words a secret's name can precede.
TOKEN_WORD = 12


# Possessive: each shorter word and its spaces are taken once and never retried from inside,
# so one match() call finds the next long word, or rejects the rest of the text, in one pass.
# Used for texts with non-ASCII characters; ASCII texts take the faster path in Text._words.
@functools.cache
def _word_pattern(length: int) -> re.Pattern[str]:
    return re.compile(rf"\s*+(?:\S{{1,{length - 1}}}+\s++)*+(\S{{{length},}}+)")


# Translation tables: a regex walks a text at ~10 ns a character, bytes.translate and `in` at
# well under one, so the facts finders are gated on are read from translated copies of the text.
# Words (of ASCII texts, where a byte is a character): whitespace as `\s` has it to " ",
# every other character to "x".
_WORD_SHAPE = bytes(32 if re.fullmatch(r"\s", chr(code)) else 120 for code in range(256))
# Numbers, from the UTF-8 bytes of any text (every byte of a character past ASCII is >= 128,
# and `[0-9]` is ASCII): digits to "0", capitals to "A", dots kept, the other separators numbers
# are written with to " ", anything else to "a".
_CLASS_SHAPE = bytes(
    48 if 48 <= code <= 57
    else 65 if 65 <= code <= 90
    else 46 if code == 46
    else 32 if chr(code) in " ()/+-"
    else 97
    for code in range(256)
)  # fmt: skip
_NUMBER_RUN = re.compile(rb"0(?:[ .]?0){3,}")  # a literal first byte: the engine skips along
_NUMBER_RUN_IN_TEXT = re.compile(r"[0-9](?:[ ()/+.-]?[0-9]){3,}")  # the same, in characters
# The middle of an IPv4 address: a dot, one to three digits, a dot, digits on both sides (a
# regex on the shape: a literal start, so it skips along in C).
_IPV4_MIDDLE = re.compile(rb"0\.0{1,3}\.0")


@functools.cache
def _separated(shape: bytes) -> re.Pattern[bytes]:
    """`shape` in number_class with separators between its bytes (` `, which ` ()/+-` read as,
    and `.`): `0[ .]*0[ .]*0`. A regex with a literal first byte skips along in C; deleting the
    separators from the class first cost twice as much a text."""
    return re.compile(b"[ .]*".join(re.escape(bytes([byte])) for byte in shape))


class Span(NamedTuple):
    start: int
    end: int  # exclusive, as in text[start:end]
    kind: str


class Text:
    """A text and the facts about it that let finders skip their regexes, each computed once
    per text: most texts have no long word, few digits, no `@`, and finders that need one cost
    next to nothing there."""

    # Plain attributes filled on first use: functools.cached_property takes a lock on each first
    # access, which costs as much as computing most of these facts.
    __slots__ = ("_capitals", "_line_breaks", "_long_words", "_lower", "_number_class",
                 "_number_runs", "_token_words", "_word_shape", "text")  # fmt: skip

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None
        self._long_words: list[tuple[int, int]] | None = None
        self._token_words: list[tuple[int, int]] | None = None
        self._word_shape: bytes | None = None  # of an ASCII text: spaces, and "x" for the rest
        self._number_class: bytes | None = None
        self._number_runs: list[tuple[int, int]] | None = None
        self._capitals: bool | None = None
        self._line_breaks: int | None = None

    @property
    def lower(self) -> str:
        """The text in lower case, each character where it was: finders read positions off it
        and cut the text there (`İ`, whose lower case is two characters, keeps its first)."""
        if self._lower is None:
            lower = self.text.lower()
            if len(lower) != len(self.text):
                lower = "".join(char.lower()[:1] for char in self.text)
            self._lower = lower
        return self._lower

    @property
    def long_words(self) -> list[tuple[int, int]]:
        """(start, end) of each whitespace-separated word of LONG_WORD characters or more:
        every token, key or encoded secret is one, and ordinary prose has almost none."""
        if self._long_words is None:
            if self._token_words is not None:  # the longer of the words already found
                self._long_words = [w for w in self._token_words if w[1] - w[0] >= LONG_WORD]
            else:
                self._long_words = self._words(LONG_WORD)
        return self._long_words

    @property
    def token_words(self) -> list[tuple[int, int]]:
        """(start, end) of each word of TOKEN_WORD characters or more: where a named token,
        shorter than a bare one, can be."""
        if self._token_words is None:
            self._token_words = self._words(TOKEN_WORD)
        return self._token_words

    def has_word(self, length: int) -> bool:
        """A word of `length` characters or more (what the finders that read `long_words` or
        `token_words` need one of)."""
        if length == LONG_WORD:
            return bool(self.long_words)
        if length == TOKEN_WORD:
            return bool(self.token_words)
        if not self.text.isascii():
            return _word_pattern(length).match(self.text) is not None
        return b"x" * length in self._ascii_word_shape()  # the first is enough: no list of them

    def _ascii_word_shape(self) -> bytes:
        """An ASCII text with white space as " " and anything else as "x", made once."""
        if self._word_shape is None:
            self._word_shape = self.text.encode("ascii").translate(_WORD_SHAPE)
        return self._word_shape

    def _words(self, length: int) -> list[tuple[int, int]]:
        text, found = self.text, []
        if not text.isascii():  # Unicode whitespace: the regex knows it
            pattern, position = _word_pattern(length), 0
            while (match := pattern.match(text, position)) is not None:
                found.append(match.span(1))
                position = match.end()
            return found
        shape, run = self._ascii_word_shape(), b"x" * length
        position = shape.find(run)
        while position >= 0:  # the first `length` x's of a word are where it starts
            end = shape.find(b" ", position)
            end = len(shape) if end < 0 else end
            found.append((position, end))
            position = shape.find(run, end)
        return found

    @property
    def number_class(self) -> bytes:
        """The text with digits as "0", capitals as "A", dots as ".", other number separators
        as " ", anything else as "a"."""
        if self._number_class is None:
            self._number_class = self.text.encode("utf-8", "surrogatepass").translate(_CLASS_SHAPE)
        return self._number_class

    @property
    def number_runs(self) -> list[tuple[int, int]]:
        """(start, end) of each run of four digits or more, one separator at most between two
        (`1985-03-14`, `0012 3456`), in characters. Shared by the finders that look for a word
        naming a number before it."""
        if self._number_runs is None:
            if self.text.isascii():  # number_class's bytes are characters: the faster search
                runs = _NUMBER_RUN.finditer(self.number_class)
            else:
                runs = _NUMBER_RUN_IN_TEXT.finditer(self.text)
            self._number_runs = [run.span() for run in runs]
        return self._number_runs

    def has_number(self, digits: int) -> bool:
        """A run of at least `digits` digits, written with or without separators (`4111 1111`,
        `(555) 123-4567`)."""
        run = b"0" * digits
        if run in self.number_class:  # digits in a row: the common answer, at once
            return True
        return digits > 1 and _separated(run).search(self.number_class) is not None

    def has_lines(self, count: int) -> bool:
        """`count` lines or more: `count - 1` line breaks."""
        if self._line_breaks is None:
            self._line_breaks = self.text.count("\n")
        return self._line_breaks >= count - 1

    def has_dotted_number(self) -> bool:
        """Three dots or more in the text, and two of them around one to three digits with a
        digit on each side (`0.113.4`): the middle of an IPv4 address."""
        return _IPV4_MIDDLE.search(self.number_class) is not None and self.text.count(".") >= 3

    def has_number_after_capitals(self, digits: int) -> bool:
        """Two capitals, then a run of at least `digits` digits (separators and spaces between
        them allowed): how IBANs (GB82 WEST ...) and NINOs (AB 12 34 56 C) start."""
        if self._capitals is None:  # shared by the IBAN and the NINO gates
            self._capitals = _separated(b"AA00").search(self.number_class) is not None
        return (
            self._capitals
            and _separated(b"AA" + b"0" * digits).search(self.number_class) is not None
        )


# The views a finder reads (views.py): every text's normalised view, and its decoded view where
# it has one.
NORMALISED, DECODED = "normalised", "decoded"
ALL_VIEWS = frozenset({NORMALISED, DECODED})
# Where two finds overlap, the kind of the finder of the lower priority names the span (then the
# kinds' order in kinds.py): secrets before personal data, both before the kinds of a config.
SECRET_PRIORITY, PERSONAL_PRIORITY, USER_PRIORITY = 10, 20, 100


class Finder(Protocol):
    """Finds the values of one or more kinds in a text. Besides `kinds` and `find`, a finder may
    declare (finders/__init__.py reads them with these defaults): `name` (its registry name),
    `priority` (USER_PRIORITY), `triggers` (triggers.Triggers; None: it runs on every view) and
    `views` (ALL_VIEWS)."""

    kinds: frozenset[str]

    def find(self, text: Text) -> Iterable[Span]: ...
