"""One pass over each view decides which finders run there.

Each finder declares its `Triggers`: lower-case words, one of which is in every text it can find
something in; shapes, character-class patterns for finders whose values have no word to look
for; and facts, what a text's own gates answer (`Text.has_number`, `Text.has_word`: "a run of
seven digits", "a word of 20 characters"). `TriggerScan` folds every finder's words and shapes
into one Hyperscan database and scans a view's lower case once, then asks the facts of the
finders that did not fire; a finder none of whose triggers the view holds is not run. Triggers
are necessary conditions, never sufficient: a finder that runs still checks everything itself,
so the scan changes what redaction costs, never what it finds.

Facts are kept out of the database on purpose: a class that matches somewhere in most texts
(a digit, a run of 12 or 20 characters without white space) drives Hyperscan to its slower
engines (those three took 1.6x the scan time of every word and other shape together), while
the text's gates answer them from translated copies (bytes.translate and `in`) that the finders
they let run read next anyway.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sampling.redaction.spans import Text

try:  # a binary wheel with no dependencies; the fallback below gives the same answers
    import hyperscan
except ImportError:  # pragma: no cover - platforms without a wheel
    hyperscan = None

# Every character Python's `\s` takes, as UTF-8 bytes (Hyperscan's `\s` is ASCII only).
SPACE = (
    rb"(?:[\t-\r\x1c-\x1f ]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80)"
)
_NOT_ASCII_LETTER = rb"(?:^|[^a-z])"
_NOT_ASCII_LETTER_AFTER = rb"(?:[^a-z]|$)"
# Words of this many characters or fewer carry their boundaries into the Hyperscan scan.
SHORT_WORD = 5


@dataclass(frozen=True)
class Fact:
    """A trigger a text's gate answers: `number`, a run of `size` digits, separators allowed
    between them (`Text.has_number`); `word`, a word of `size` characters or more without white
    space (`Text.has_word`: a token, a key, a URL); `lines`, `size` lines or more
    (`Text.has_lines`: a dialogue, a message's last line). The same gates the finders that
    declare them test first."""

    kind: str
    size: int

    def holds(self, view: Text) -> bool:
        if self.kind == "number":
            return view.has_number(self.size)
        if self.kind == "lines":
            return view.has_lines(self.size)
        return view.has_word(self.size)


def number(count: int) -> Fact:
    """A run of `count` digits, written with or without separators (`4111 1111`,
    `(555) 123-4567`)."""
    return Fact("number", count)


def lines(count: int) -> Fact:
    """`count` lines or more (a line break fewer)."""
    return Fact("lines", count)


def word(length: int) -> Fact:
    """A word of `length` characters or more without white space."""
    return Fact("word", length)


def digits(count: int) -> bytes:
    """A shape: a digit and `count - 1` more digits or separators (` ()/+.-`), held by every
    run of `count` digits with separators between them (`number(count)`). For two digits or
    more, cheaper in the scan than as a fact (Hyperscan skips to the rare places where digits
    meet); a single digit is `number(1)`."""
    return rb"[0-9]" + (rb"[0-9 ()/+.\-]{%d}" % (count - 1) if count > 1 else b"")


@dataclass(frozen=True)
class Triggers:
    """What a view must hold for a finder to find anything in it: one of these. Words are lower
    case. `word_starts` are ASCII words found only where no ASCII letter comes right before
    them (`pass` in "password" but not in "bypass"), `whole_words` also with none right after
    (`sin` but not "using"), as the finders themselves read them; a word of another script
    has no such boundary. `shapes` are byte patterns, `facts` what the text's gates answer
    (module docstring)."""

    words: tuple[str, ...] = ()
    word_starts: tuple[str, ...] = ()
    whole_words: tuple[str, ...] = ()
    shapes: tuple[bytes, ...] = ()
    facts: tuple[Fact, ...] = ()

    def patterns(self) -> list[bytes]:
        """Every trigger as one byte pattern (a word at a word's start or whole with the
        boundaries spelt out): what the scan without Hyperscan looks for."""
        return [pattern for pattern, _, _ in self.scanned()]

    def scanned(self) -> list[tuple[bytes, bytes, tuple[bytes, bool] | None]]:
        """Each trigger as (its byte pattern, what Hyperscan looks for, and where Hyperscan
        looks for the word alone, the word and whether it must be whole, for a check of its
        occurrences): a class before a word costs Hyperscan most of a second to compile for a
        few hundred words, the word alone a few milliseconds. A short word is looked for with
        its boundaries all the same (166 of them: 70 ms): common words hold it most often
        (`pin` in "spin", `hey ` in "they "), and checking each of those occurrences afterwards
        cost more than the scan itself."""
        found = [(re.escape(w.encode()),) * 2 + (None,) for w in self.words]
        for group, whole in ((self.word_starts, False), (self.whole_words, True)):
            for text in group:
                literal = re.escape(text.encode())
                if not text.isascii():  # other scripts have no word boundaries to go by
                    found.append((literal, literal, None))
                    continue
                after = _NOT_ASCII_LETTER_AFTER if whole else b""
                pattern = _NOT_ASCII_LETTER + literal + after
                if len(text) <= SHORT_WORD:
                    found.append((pattern, pattern, None))
                else:
                    found.append((pattern, literal, (text.encode(), whole)))
        return [*found, *((shape, shape, None) for shape in self.shapes)]


class TriggerScan:
    """The finders to run on a view, from one scan of its lower case. `finders` with
    `triggers = None` run on every view."""

    def __init__(self, finders: Sequence[object]) -> None:
        self.always = 0  # bit i: finder i
        patterns: list[bytes] = []
        scanned_patterns: list[bytes] = []
        owners: list[int] = []
        words: list[tuple[bytes, bool] | None] = []
        self._facts: list[tuple[int, Fact]] = []  # (owner, fact), asked after the scan
        for index, finder in enumerate(finders):
            triggers = getattr(finder, "triggers", None)
            if triggers is None:
                self.always |= 1 << index
                continue
            self._facts += [(1 << index, fact) for fact in triggers.facts]
            for pattern, scanned, boundary in triggers.scanned():
                patterns.append(pattern)
                scanned_patterns.append(scanned)
                owners.append(1 << index)
                words.append(boundary)
        self._owners = owners
        self._words = words  # a word whose boundary the scan leaves to _bounded
        self._patterns = tuple(patterns)
        self._scanned = tuple(scanned_patterns)
        self._compile()

    def _compile(self) -> None:
        self._compiled: list[re.Pattern[bytes]] | None = None  # the fallback's, on first use
        scanned = self._scanned
        self._database = _database(scanned) if hyperscan is not None and scanned else None
        self._scratch = threading.local()  # a scan's scratch space is one thread's at a time

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a redactor sent to a worker process): the database is built again."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_database", "_scratch")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compile()

    def fired(self, view: Text) -> int:
        """Bit i set: finder i may find something in `view`."""
        mask = self._scan(view.lower.encode("utf-8", "surrogatepass"))
        for owner, fact in self._facts:
            if not mask & owner and fact.holds(view):
                mask |= owner
        return mask

    def _scan(self, data: bytes) -> int:
        if self._database is None:
            return self.one_by_one(data)
        fired: set[int] = set()
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = hyperscan.Scratch(self._database)
        try:
            self._database.scan(data, match_event_handler=_collect, context=fired, scratch=scratch)
        except hyperscan.error:  # never a reason to skip a finder: test each trigger instead
            return self.one_by_one(data)
        mask = self.always
        owners, words = self._owners, self._words
        for pattern in fired:
            owner = owners[pattern]
            if mask & owner:
                continue
            word = words[pattern]
            if word is None or _bounded(data, *word):
                mask |= owner
        return mask

    def one_by_one(self, data: bytes) -> int:
        """The scan's part of `fired` (facts left out), each trigger looked for alone in `data`
        (the UTF-8 of a lower case): where there is no Hyperscan, and what the tests compare the
        scan with."""
        if self._compiled is None:
            self._compiled = [re.compile(pattern) for pattern in self._patterns]
        mask = self.always
        for owner, pattern in zip(self._owners, self._compiled, strict=True):
            if not mask & owner and pattern.search(data) is not None:
                mask |= owner
        return mask


class WordEnds:
    """Where each of `words` ends in a text's lower case, each at a word's start (no ASCII
    letter right before it): for a finder that reads the text only there, where a regex over
    the whole text would try every position (a long alternation costs ~20 µs a 1 KB text, one
    scan reporting every match ~2). Hyperscan where it is installed, `bytes.find` otherwise.
    `literal`: each word wherever it stands, its boundaries spelt in it (` one `): literals
    alone keep Hyperscan on its fastest engine (137 short words: 1.5 µs a 2 KB text, against
    3.9 with a class before each)."""

    def __init__(self, words: Sequence[str], literal: bool = False) -> None:
        self.words = tuple(sorted({word.encode() for word in words}))
        self.literal = literal
        self._database: Any = None  # built on first use: these modules load with the trainer's
        self._scratch = threading.local()  # a scan's scratch space is one thread's at a time

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a redactor sent to a worker process): the database is built again."""
        return {"words": self.words, "literal": self.literal}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.words, self.literal = state["words"], state.get("literal", False)
        self._database, self._scratch = None, threading.local()

    def ends(self, data: bytes) -> list[int]:
        """The offsets in `data` (the UTF-8 of a lower case) right after each word found,
        sorted, each once."""
        if hyperscan is None:
            return self.ends_one_by_one(data)
        database = self._database
        if database is None:
            # A short word carries its boundary into the scan; a longer one is checked after
            # it (a class before each of a thousand words took Hyperscan 1.2 s to compile, the
            # words alone and a hundred short ones with theirs 0.12 s).
            short = 0 if self.literal else SHORT_WORD
            patterns = tuple(
                _NOT_ASCII_LETTER + re.escape(word) if len(word) <= short else re.escape(word)
                for word in self.words
            )
            self._checked = tuple(
                0 if len(w) <= short or self.literal else len(w) for w in self.words
            )
            database = self._database = _database(patterns, single=False)
        found: set[int] = set()
        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = hyperscan.Scratch(database)
        context = (found, self._checked, data)
        try:
            database.scan(data, match_event_handler=_collect_end, context=context, scratch=scratch)
        except hyperscan.error:
            return self.ends_one_by_one(data)
        return sorted(found)

    def char_ends(self, lower: str, spaced: bytes | None = None) -> list[int]:
        """`ends` of a text's lower case, in characters: the scan reads UTF-8, and each byte
        up to the last end is decoded once, counted on from the end before. `spaced`: the
        bytes to scan instead, the UTF-8 with some ASCII signs made spaces (as long)."""
        data = lower.encode("utf-8", "surrogatepass")
        ends = self.ends(data if spaced is None else spaced)
        if len(data) == len(lower):  # ASCII: a byte is a character
            return ends
        found, byte_at, at = [], 0, 0
        for byte_end in ends:
            at += len(data[byte_at:byte_end].decode("utf-8", "surrogatepass"))
            byte_at = byte_end
            found.append(at)
        return found

    def ends_one_by_one(self, data: bytes) -> list[int]:
        """`ends` with each word looked for alone: without Hyperscan, and what the tests
        compare the scan with."""
        found = set()
        for word in self.words:
            at = data.find(word)
            while at >= 0:
                if self.literal or at == 0 or not 97 <= data[at - 1] <= 122:
                    found.add(at + len(word))
                at = data.find(word, at + 1)
        return sorted(found)


def _collect_end(
    pattern: int, start: int, end: int, flags: int, context: tuple[set[int], tuple[int, ...], bytes]
) -> None:
    found, checked, data = context
    length = checked[pattern]  # a word whose boundary the scan left out: no letter before it
    if length and end > length and 97 <= data[end - length - 1] <= 122:
        return
    found.add(end)


def _collect(pattern: int, start: int, end: int, flags: int, fired: set[int]) -> None:
    fired.add(pattern)


def _bounded(data: bytes, word: bytes, whole: bool) -> bool:
    """`word` occurs in `data` with no ASCII letter right before it (and, `whole`, none right
    after it)."""
    at = data.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not 97 <= data[at - 1] <= 122) and (
            not whole or end == len(data) or not 97 <= data[end] <= 122
        ):
            return True
        at = data.find(word, at + 1)
    return False


@functools.lru_cache(maxsize=8)
def _database(patterns: tuple[bytes, ...], single: bool = True) -> Any:
    """A block-mode database that reports each pattern once a scan (SINGLEMATCH), or, not
    `single`, every match. Compiling takes most of a second: redactors of the same finders
    share one (a database is read-only; each thread scans with scratch space of its own)."""
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    flag = hyperscan.HS_FLAG_ALLOWEMPTY | (hyperscan.HS_FLAG_SINGLEMATCH if single else 0)
    database.compile(
        expressions=patterns,
        ids=list(range(len(patterns))),
        elements=len(patterns),
        flags=[flag] * len(patterns),
    )
    return database
