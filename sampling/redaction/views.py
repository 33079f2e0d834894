"""The views finders read a text through, each mapped back to the original characters.

People type values in forms no finder's ASCII pattern expects: full-width digits and `＠` from
Chinese and Japanese input methods, zero-width and no-break characters pasted from web pages,
`%40` in a query string, `\\u0040` in a tool call's JSON, `&#64;` in HTML, a password on the line
after "The password is:". Finders never undo this themselves; they read:

- the **normalised view** of every text: compatibility forms folded (NFKC, one character at a
  time so that each view character knows where it came from: `㎏` becomes `kg`), invisible format
  characters and variation selectors dropped, every space a plain space, every decimal digit an
  ASCII digit. An ASCII text is its own normalised view (no copy, no map).
- the **decoded view**, only where the text holds something to decode: URL-encoded runs, JSON,
  Python and HTML escapes decoded, a value on the line after a naming word (`is:`, `=`) joined
  to it, and a command's line wrapped with a trailing `\\` read as one; then normalised like
  the first.
- the **fields view**, only where the text holds structured data (fields.py): each value of a
  JSON, YAML or code key, a CSV, markdown or SQL table, or a vCard on a line of its own after
  the words that name it (`date_of_birth` read "date of birth", a cell after its header).

Each view maps a run of its characters back to the original ones (`View.origin`): a span a
finder finds there is replaced in the original text, which is what a reviewer sees.
"""

from __future__ import annotations

import codecs
import functools
import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from sampling.redaction.fields import field_pieces
from sampling.redaction.spoken import spoken_pieces

# Invisible characters that are not of category Cf (which is dropped whole): variation
# selectors, the combining grapheme joiner, Mongolian selectors, Hangul fillers.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u180b\u180c\u180d\u180f\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)


# Dashes that stand for a hyphen-minus in a value (`&hyphen;` decodes to U+2010, word
# processors put en dashes and minus signs into numbers); NFKC leaves them as they are.
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58")


class View:
    """A text as finders read it, and where each of its characters came from in the original.

    A piece is a run of view characters that replaced a run of original ones (`＠` -> `@`, a
    dropped zero-width space, `%40` -> `@`); between pieces, view and original agree one to one.
    """

    __slots__ = ("_original_ends", "_original_starts", "_parent", "_view_ends", "_view_starts",
                 "escapes", "text")  # fmt: skip

    def __init__(
        self,
        text: str,
        pieces: Iterable[tuple[int, int, int, int]] = (),
        parent: View | None = None,
    ) -> None:
        self.text = text
        self._parent = parent
        # [start, end) of each escape (`%40`, `\\u0040`, `&#64;`) of the original text that this
        # view decodes, in order: what another view reads there is the escape's spelling.
        self.escapes: list[tuple[int, int]] = []
        columns = tuple(zip(*pieces, strict=True)) or ((), (), (), ())
        self._view_starts, self._view_ends, self._original_starts, self._original_ends = columns

    @property
    def identity(self) -> bool:
        """The view is the original text, character for character."""
        return not self._view_starts and self._parent is None

    def _source(self, index: int) -> tuple[int, int]:
        """[start, end) of the characters, in the text this view was built from, that view
        character `index` came from."""
        piece = bisect_right(self._view_starts, index) - 1
        if piece < 0:
            return index, index + 1
        if index < self._view_ends[piece]:
            return self._original_starts[piece], self._original_ends[piece]
        shift = self._original_ends[piece] - self._view_ends[piece]
        return index + shift, index + shift + 1

    def origin(self, start: int, end: int) -> tuple[int, int]:
        """[start, end) in the original text of the view's [start, end): from where its first
        character came from to where its last did, invisible characters between them included."""
        if self.identity or start >= end:
            return start, end
        first, last = self._source(start)[0], self._source(end - 1)[1]
        if self._parent is not None:
            return self._parent.origin(first, last)
        return first, last


# --- the normalised view ---------------------------------------------------------------------


def _folded(char: str) -> str:
    """What one character reads as in the normalised view ("" for an invisible one)."""
    category = unicodedata.category(char)
    if category == "Cf" or char in _INVISIBLE:
        return ""
    if category == "Zs":
        return " "
    if category == "Nd":
        return str(unicodedata.decimal(char))
    if char in _DASHES:
        return "-"
    return unicodedata.normalize("NFKC", char)


@functools.cache
def _changing() -> re.Pattern[str]:
    """The characters past ASCII that `_folded` changes: those of the Basic Multilingual Plane
    listed (built once, ~50 ms), any beyond it looked at one by one (they are rare)."""
    changing = []
    for code in range(0x80, 0x10000):
        char = chr(code)
        if unicodedata.category(char) not in ("Cn", "Cs") and _folded(char) != char:
            changing.append(re.escape(char))
    return re.compile(f"[{''.join(changing)}\U00010000-\U0010ffff]+")


@functools.lru_cache(maxsize=4096)
def _fold(char: str) -> str:
    return _folded(char)


def _foldings(text: str) -> list[tuple[int, int, str]]:
    """(start, end, folded) of each character of `text` that the normalised view changes."""
    if text.isascii():  # the common case: nothing to fold
        return []
    found: list[tuple[int, int, str]] = []
    for run in _changing().finditer(text):
        for position in range(run.start(), run.end()):
            char = text[position]
            folded = _fold(char)
            if folded != char:
                found.append((position, position + 1, folded))
    return found


def normalised(text: str) -> View:
    """The normalised view of `text` (see the module's doc); `text` itself, unmapped (no copy),
    where it is ASCII or has nothing to fold."""
    foldings = _foldings(text)
    return _rebuilt(text, foldings) if foldings else View(text)


def _rebuilt(
    text: str, replacements: list[tuple[int, int, str]], parent: View | None = None
) -> View:
    """`text` with each (start, end, new) of `replacements` (in order, apart) made."""
    parts: list[str] = []
    pieces: list[tuple[int, int, int, int]] = []
    position = length = 0
    for start, end, new in replacements:
        parts.append(text[position:start])
        length += start - position
        parts.append(new)
        pieces.append((length, length + len(new), start, end))
        length += len(new)
        position = end
    parts.append(text[position:])
    return View("".join(parts), pieces, parent)


# --- the decoded view ------------------------------------------------------------------------

# Encoded runs: %-escapes (UTF-8 bytes), JSON and Python string escapes, HTML character references.
_ENCODED = re.compile(
    r"(?P<url>(?:%[0-9A-Fa-f]{2})+)"
    r"|(?P<pair>\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\(?P<escape>u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[\"'\\/bfnrt])"
    r"|(?P<html>&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
)
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_SIMPLE_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n",
                   "r": "\r", "t": "\t"}  # fmt: skip
# A line that ends in a naming sign ("The password is:\n  hunter2", "密码：\nhunter2") or in a
# naming word with the value indented on the next line ("密码是\n  hunter2"): the newline and the
# indent read as one space. Hard-wrapped prose (a line ending in "is", the next not indented)
# stays as it is: a decoded view costs a second pass of every finder.
_NAMING_SIGNS = (":", "=", "：")
_NAMING_WORD = re.compile(
    r"(?:(?<![^\W\d_])(?:is|are|was|ist|est|es|è|är|er|jest)|是|为|為|は|는|이)\Z", re.IGNORECASE
)
_INDENT = re.compile(r"[^\S\n]*")
# A line that starts with a word holding a digit ("My password is\nkmH2tzT5z%1", "验证码是\n
# 842887"): a value, not the next line of hard-wrapped prose, even without an indent.
_VALUE_LIKE = re.compile(r"[^\s，。,;]*[0-9]")
_NAMING_REACH = 12  # characters before a newline where a naming word may end
# The only line breaks that can be joined (a line that ends in a naming word is joined to the
# next only where that one is indented or starts with a value-like word): those after a naming
# sign, a `\\` or a space, and those before an indent or a value-like word. One search with a
# literal first character, which the regex engine skips along to: a line break of hard-wrapped
# prose is never looked at in Python.
_JOIN_CANDIDATE = re.compile(r"\n(?:(?<=[:=：\\ \t]\n)|(?=[^\S\n]|[^\s，。,;0-9]*+[0-9]))")


def _url_pieces(run: str, offset: int) -> Iterator[tuple[int, int, str]]:
    """Each character a run of %-escapes decodes to, with the escapes it came from (a character
    of several UTF-8 bytes comes from several escapes)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    start = offset
    for index in range(0, len(run), 3):
        chars = decoder.decode(bytes([int(run[index + 1 : index + 3], 16)]))
        if chars:
            yield start, offset + index + 3, chars
            start = offset + index + 3
    rest = decoder.decode(b"", final=True)
    if rest:
        yield start, offset + len(run), rest


def _decoded(match: re.Match[str]) -> Iterator[tuple[int, int, str]]:
    start, end = match.span()
    if match.group("url") is not None:
        yield from _url_pieces(match.group(), start)
    elif match.group("pair") is not None:
        yield start, end, match.group().encode("ascii").decode("unicode_escape", "replace")
    elif (escape := match.group("escape")) is not None:
        yield start, end, chr(int(escape[1:], 16)) if escape[0] in "ux" else _SIMPLE_ESCAPES[escape]
    else:
        new = html.unescape(match.group())
        if new != match.group():
            yield start, end, new


def _joins(text: str) -> Iterator[tuple[int, int, str]]:
    """The line breaks (with the next line's indent) after a naming word, each as a space; and
    a command's line wrapped with `\\` (`mysql -p \\⏎  S3cr3t!`), the `\\` with them."""
    for candidate in _JOIN_CANDIDATE.finditer(text):
        newline = candidate.start()
        if text[newline - 1 : newline] == "\\" and text[newline - 2 : newline - 1] != "\\":
            indent = _INDENT.match(text, newline + 1)
            yield newline - 1, indent.end() if indent else newline + 1, " "
            continue
        line = text[max(0, newline - _NAMING_REACH) : newline]
        line_end = line.rstrip()
        if "\n" in line[len(line_end) :]:  # a blank line before: nothing names the next
            line_end = ""
        indent = _INDENT.match(text, newline + 1)
        end = indent.end() if indent else newline + 1
        if (
            end < len(text)
            and text[end] != "\n"
            and (
                line_end.endswith(_NAMING_SIGNS)
                or (
                    _NAMING_WORD.search(line_end) is not None
                    and (end > newline + 1 or _VALUE_LIKE.match(text, end) is not None)
                )
            )
        ):
            yield newline, end, " "


# A transcript's turn after the first: a line break, who speaks (a word or three) and a colon.
# A literal first character, which the regex engine skips along to.
# (Not an ASCII lower-case letter first: the keys of code and config, `name: value`.)
# A chat's time stamp before who speaks, its date too (`[14:02] `, `[02/09/2024, 18:43] `).
_STAMP = (r"(?:\[?(?:[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{1,4},?[ \t]+)?[0-9]{1,2}[:.][0-9]{2}"
          r"(?:[:.][0-9]{2})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?\]?[ \t]*(?:-[ \t]*)?)?")  # fmt: skip
_WHO = rf"[ \t]*{_STAMP}(?P<who>[^\W\d_a-z][^\n:：?？]{{0,24}}?)[ \t]*[:：][ \t]+"
_TURN = re.compile(rf"\n{_WHO}")
_FIRST_TURN = re.compile(_WHO)
_ANSWER_LONGEST = 80  # characters of an answer read after its question: a value, not a speech
_QUESTION_MARKS = "?？.。!！"


def _a_turn_may_start_a_line(text: str) -> bool:
    """A colon a speaker's few words after a line break: what every turn after the first
    holds, looked for in C (the turn's regex over a page of prose cost more than the rest of
    the view's tests)."""
    for colon in (":",) if text.isascii() else (":", "："):
        at = text.find(colon)
        while at >= 0:
            if text.rfind("\n", max(0, at - _SPEAKER_REACH), at) >= 0:
                return True
            at = text.find(colon, at + 1)
    return False


# Characters from a line break to a speaker's colon, at most (a time stamp's own colon is as
# near: `[14:02] You:`).
_SPEAKER_REACH = 28


def _two_speakers(asks: str, answers: str) -> bool:
    """Two people of a dialogue: not one key or level twice (`PASS:` then `PASS:`), each
    written as a name or a role is (`Agent`, `Caller`, `Q`, `Клиент`; not `address`, `INFO`)."""
    return asks != answers and all(
        not who[0].islower() and not (len(who) > 1 and who.isupper()) for who in (asks, answers)
    )


def _answers(text: str) -> Iterator[tuple[int, int, str]]:
    """A transcript's answer read after its question: `Operator: ... your date of birth?` then
    `Client: 05.06.1987` as `... your date of birth: 05.06.1987`, the question's mark, the line
    break and who answers standing as `: `, so that a value given in answer to its name is read
    after it. Only a short answer that holds a digit (a number, a date, an id), to a turn that
    holds none and does not end in a colon already (the joins' lines)."""
    if "\n" not in text or not _a_turn_may_start_a_line(text):
        return
    turns = list(_TURN.finditer(text))
    if not turns:
        return
    speakers = {turn.start(): turn for turn in turns}
    first = _FIRST_TURN.match(text)
    if first is not None:
        speakers[-1] = first
    for turn in turns:
        newline = turn.start()
        before = text.rfind("\n", 0, newline)
        asks = speakers.get(before)
        if asks is None or not _two_speakers(asks["who"], turn["who"]):
            continue  # the question is no turn of a dialogue (a list of keys, a log's levels)
        question = text[before + 1 : newline].rstrip()
        asked = text[asks.end() : newline]  # (the question without its time stamp and speaker)
        answer_end = text.find("\n", turn.end())
        answer = text[turn.end() : len(text) if answer_end < 0 else answer_end]
        if (
            not question
            or question.endswith(_NAMING_SIGNS)
            or len(answer) > _ANSWER_LONGEST
            or not any(char.isdigit() for char in answer)
            # A value given already: a form's line (`Adres: ... No: 17/5`, then `Cep Tel:
            # 0532 ...`), not a question asking for one.
            or any(char.isdigit() for char in asked)
        ):
            continue
        start = before + 1 + len(question) - (question[-1] in _QUESTION_MARKS)
        yield start, turn.end(), ": "


def _may_decode(text: str) -> bool:
    """The text holds something the decoded view decodes: cheap `in` tests first."""
    return (
        ("%" in text and _URL_ESCAPE.search(text) is not None)
        or "\\" in text
        or ("&" in text and ";" in text)
        or ("\n" in text and next(_joins(text), None) is not None)
        or ("\n" in text and next(_answers(text), None) is not None)
    )


# A Windows path written as it is, a drive's or a share's (`C:\temp\new.txt`, `\\fs\finance`):
# single backslashes between its parts, which are no escapes (`\f`, `\n`); written in JSON or a
# string literal, its backslashes are doubled, and decoded.
_WINDOWS_PATH = re.compile(
    r"(?<![\\\w])(?:[A-Za-z]:|\\\\[\w.$-]+)(?:\\(?![\\\s])[^\s\\\"'<>|]+)+\\?"
)


def _escapes(text: str) -> Iterator[re.Match[str]]:
    """What the decoded view decodes: every match of _ENCODED but a backslash's inside a
    Windows path."""
    paths = [path.span() for path in _WINDOWS_PATH.finditer(text)] if "\\" in text else []
    for match in _ENCODED.finditer(text):
        if paths and match.group()[0] == "\\":
            at = bisect_right(paths, (match.start(), len(text))) - 1
            if at >= 0 and paths[at][0] <= match.start() < paths[at][1]:
                continue
        yield match


def decoded(text: str) -> View | None:
    """The decoded view of `text`, normalised; None where there is nothing to decode."""
    if not _may_decode(text):
        return None
    replacements = [piece for match in _escapes(text) for piece in _decoded(match)]
    escapes = [(start, end) for start, end, _ in replacements]
    joins = list(_joins(text))
    replacements += joins
    joined = {start for start, _, _ in joins}
    # (an answer's replacement holds its line break: never where a join has it already)
    replacements += [answer for answer in _answers(text) if not joined & set(range(*answer[:2]))]
    if not replacements:
        return None
    replacements.sort()
    view = _rebuilt(text, replacements)
    foldings = _foldings(view.text)  # `\\uff20` decodes to a full-width `＠`
    if foldings:
        view = _rebuilt(view.text, foldings, view)
    view.escapes = escapes
    return view


def cuts_escape(escapes: list[tuple[int, int]], start: int, end: int) -> bool:
    """[start, end) of the original text holds part or all of one of `escapes` (sorted, apart):
    a value found there by a view that reads the escape as it is spelt (`%2C` before a base64
    run, `\\"` after one) is an artefact of the spelling; the view that decodes it reads the
    value itself."""
    index = bisect_right(escapes, (start, end)) - 1
    if index >= 0 and escapes[index][1] > start:
        return True
    return index + 1 < len(escapes) and escapes[index + 1][0] < end


# A URL up to its query, and each of the query's parameter names: `https://x.io/share?u=`,
# `&lang=`. Not a URL with credentials (`://user:pw@host`): those are read as they are.
# Tried at a scheme's first letter only, so that a long run of letters is read once.
_URL_TO_QUERY = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@]+(?:/[^\s?#]*)?\?(?:[\w.-]+=)?"
)
_NEXT_PARAMETER = re.compile(r"&(?:amp;)?[\w.-]+=|&")


def query_values(base: View) -> View | None:
    """A view of `base` where each URL with a query reads as its values alone: "My SIN is
    https://x.io/share?u=351%20933%20072&lang=en" as "My SIN is 351 933 072, en", so that the
    words before a URL name the value it carries. An extra view, read beside the others (which
    keep the URL and its parameters' names: `?password=...`); None where no URL has a query."""
    text = base.text
    if "://" not in text or "?" not in text:
        return None
    replacements: list[tuple[int, int, str]] = []
    urls = list(_URL_TO_QUERY.finditer(text))
    if not urls:
        return None
    for url, following in zip(urls, [*urls[1:], None], strict=True):
        # The query runs to the line's end (its values may hold spaces once decoded: `%20`), a
        # `#`, or the next URL.
        end = following.start() if following is not None else len(text)
        for stop in ("\n", "#"):
            at = text.find(stop, url.end(), end)
            end = at if at >= 0 else end
        replacements.append((url.start(), url.end(), ""))
        replacements += [(m.start(), m.end(), ", ") for m in
                         _NEXT_PARAMETER.finditer(text, url.end(), end)]  # fmt: skip
    if not replacements:
        return None
    return _rebuilt(text, replacements, None if base.identity else base)


def fields(base: View) -> View | None:
    """A view of `base` where each value of its structured data reads as a line
    `<label>: <value>` (fields.py): `{"date_of_birth": "1987-02-11"}` as "date of birth:
    1987-02-11", a CSV or markdown table's cell after its column's header, an SQL insert's
    values after their columns, a vCard's `BDAY:` as "birthday:". An extra view, read beside
    the others; None where the text holds no structured data."""
    pieces = field_pieces(base.text)
    if pieces is None:
        return None
    return _rebuilt(base.text, pieces, None if base.identity else base)


def spoken_digits(base: View) -> View | None:
    """A view of `base` where each number said digit by digit reads in digits (spoken.py):
    "call me on oh seven four oh one ..." as "call me on 07401 ..."; None where it has none."""
    pieces = spoken_pieces(base.text)
    if pieces is None:
        return None
    return _rebuilt(base.text, pieces, None if base.identity else base)


def views(text: str) -> list[View]:
    """Every view of `text` that finders read: the normalised one, the decoded one where the
    text holds something to decode, the query values of its URLs where it has any, its
    numbers said in words where it has any, and its structured data's fields where it has
    any."""
    read = [normalised(text)]
    extra = decoded(text)
    if extra is not None:
        read.append(extra)
    base = read[-1]
    values = query_values(base)
    if values is not None:
        read.append(values)
    spoken = spoken_digits(base)
    if spoken is not None:
        read.append(spoken)
    structured = fields(base)
    if structured is None and base is not read[0] and not base.escapes:
        # A decoded view that only joins a line ending in a colon to the next one: a table
        # that line introduces ("Tool output:\nid,full_name,...") is read off the text as
        # typed (where it decodes escapes, the escapes' spelling is no value to read).
        structured = fields(read[0])
    if structured is not None:
        read.append(structured)
    return read


def key(value: str) -> str:
    """A value as it reads once decoded and normalised: `ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ`,
    `ada%40example.com` and `ada@example.com` are one value (one placeholder number)."""
    if value.isascii() and not any(sign in value for sign in _DECODED_SIGNS):
        return value.strip()  # nothing to decode or fold: its own view
    extra = decoded(value)
    return (extra if extra is not None else normalised(value)).text.strip()


# What every text the decoded view changes holds one of (`_may_decode`).
_DECODED_SIGNS = ("%", "\\", "&", "\n")
