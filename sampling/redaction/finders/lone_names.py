"""A first name alone, where the words around it say a person is meant: addressed (`Thanks
Ravi,`, `Hi Claire & Ravi`), after a verb or a role that takes a person (`ask Priya`, `kurier
Bartek`, `my colleague Jun`), before a verb of saying (`Maria said`, `Sandra ha detto`), in a
possessive (`Noah's filling`), before an age in brackets (`Kayden (8)`, `(Nour, 6 años)`),
beside another first name (`Lena and Micah`, `Jasmine / Pete`), signing a message's end after
a comma or an emoji (`... pls 🙏 xx Megan`); and the names of a list, one a line (`- Kayla R.:
quick feet`) or several on one (`Sam, Leo, Kai, Tomasz`).

The name is a word of the first names' table that names no month, role or team
(`names.lone_first_name`), with no capitalised word right after it (a full name's or a place's,
which names.py reads). Except after a thanks or a greeting and before an age, a name that is as
often a word, a place or a product (`Grace`, `Paris`, `Ruby`) is passed over, and so is one
right after a capitalised word (`Trader Joe's`, `Today Maria said`); an assistant's (`Claude`)
always. The tables are lone_names.json."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator

from sampling.redaction.context import either
from sampling.redaction.finders import register, table
from sampling.redaction.finders.names import (
    CAPITALISED,
    FIRST_NAMES,
    KIND,
    RELATIONS,
    UPPER,
    lone_first_name,
)
from sampling.redaction.spans import NORMALISED, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, WordEnds
from sampling.redaction.triggers import word as a_word

_TABLE = table("lone_names.json")
_NOT_ALONE = frozenset(_TABLE["not_alone"])
_POSSESSED = frozenset(_TABLE["possessed"])
_ASSISTANTS = frozenset(_TABLE["assistants"])
_JOINING_WORDS = [word for word in _TABLE["joined_by"] if word.isalpha()]  # (and `+`, `&`, `/`)


# Each first name of the table, found capitalised in one scan of the text: only there are the
# words around it read (a pattern tried at every capital of a page cost ~65 µs a 2 KB record).
# As written, capitalised as a name is; a Cyrillic or Greek one also without its last letter or
# two, which its cases change (`Дмитрию`, `Марии`: names.first_name reads them).
_FIRST_NAME_WORDS = WordEnds(
    sorted(
        FIRST_NAMES
        | {
            name[:-cut]
            for name in FIRST_NAMES
            if "\u0370" <= name[-1] <= "\u04ff"
            for cut in (1, 2)
            if len(name) - cut >= 3
        }
    ),
    literal=True,  # (a class before each short name cost a second and a half to compile)
)
_WORD = re.compile(CAPITALISED)
# Not glued to a handle, an address, a path or a word (`@Maria`, `x.Maria`, `/Maria`).
_GLUED_BEFORE = frozenset("'’.@#/&-_")
# Not the first of several capitalised words (`Thanks Maria Lopez`: a full name, read whole by
# names.py), nor glued to a handle, an address or a path.
_ALONE = rf"(?![\w@/-]|['’](?![sS](?![\w])))(?![ \t]+[{UPPER}])"
# What ends a name addressed (`Thanks Ravi, ...`, `Danke Jonas!`, `Merci Camille 🙏`): a mark,
# a symbol, a line's or the text's end; not a colon or `=`, which end a label (`Hola, Nas:
# 100-000-009`: Chile's identity number), nor a sign joining another name (`Hi Claire & Ravi`).
_ADDRESS_ENDS = re.compile(rf"{_ALONE}(?=[ \t]*(?:[^\w\s'’:：=&+/-]|$))", re.M)
_TAKEN_ENDS = re.compile(_ALONE)
_ADDRESSED = frozenset(_TABLE["addressed"])
_TAKERS = frozenset(_TABLE["before"]) | RELATIONS
_MOST_CUE_WORDS = max(len(cue.split()) for cue in _ADDRESSED | _TAKERS)
# After the name, what says it is a person's: a verb of saying, or another verb; a possessive;
# `and I`; an age in brackets (a space before it: `Pauli(1)` is a call); or another first name
# after `and` (and its words in other languages, `+`, `&`, `/`).
_AFTER_NAME = re.compile(
    rf"[ \t]+(?:(?P<verb>{either(_TABLE['after_saying'])})"
    rf"|(?P<doing>{either(_TABLE['after_doing'])}))(?![\w'’-])"
    rf"|['’]s[ \t]+(?P<noun>[^\W\d_][\w'’-]*)"
    r"|[ \t]+(?:and|&|und|et|y|e)[ \t]+(?P<me>I|me|ich|moi|yo|eu|io)(?![\w'’-])"
    rf"|(?P<aged>[ \t]+\([ \t]*\d{{1,2}}[ \t]*(?i:{either(_TABLE['ages'])})?[ \t]*\))"
    rf"|(?:[ \t]+(?:{either(_JOINING_WORDS)})[ \t]+|[ \t]*[+&/][ \t]*)"
    rf"(?P<other>{CAPITALISED}){_ALONE}"
)
# A name in brackets before its age (`acompañada de su hija (Nour, 6 años)`).
_AGE_IN_BRACKETS = re.compile(rf",?[ \t]+\d{{1,2}}[ \t]*(?i:{either(_TABLE['ages'])})\.?\)")
# A message signed at its end after a comma, `!` or an emoji, `xx` between them or none.
_SYMBOL = r"[^\w\s.,;:'\"()\[\]{}<>=/\\`*#|-]"
_SIGNED_BEFORE = re.compile(rf"(?:[,!]|{_SYMBOL})[ \t]*(?:(?i:xx?|xo|xoxo)[ \t]+)?\Z")
_SIGNED_AFTER = re.compile(rf"[ \t]*[.!]*[ \t]*(?:{_SYMBOL}[ \t]*){{0,3}}\Z")
# What may stand before a sentence's first word on its line: a comment's or a list's marks.
_LINE_START = re.compile(r"[ \t]*(?:#+|//|\*|-|>)?[ \t]*")
_CAPITALISED_BEFORE = re.compile(rf"[{UPPER}][\w'’.-]*[ \t]+\Z")
_REACH = 32  # characters before a name where the words that take it are read
# A list's item on a line of its own: its mark or none, a first name (an initial or a family name
# after it), then a colon or a dash and what is said of the person (`- Kayla R.: quick feet`,
# `Oliwer – po kontuzji`).
_LIST_MARK = re.compile(r"[ \t]*(?:(?:[-*•·‣–]|\d{1,2}[.)])[ \t]+)?")
_ITEM_END = re.compile(
    rf"(?P<more>(?:[ \t]+(?:[{UPPER}]\.|{CAPITALISED}))?)[ \t]*(?::|[ \t][–—-][ \t])"
)
_ITEM_LINE = re.compile(
    rf"^[ \t]*(?:(?:[-*•·‣–]|\d{{1,2}}[.)])[ \t]+)?(?P<first>{CAPITALISED})"
    rf"(?:[ \t]+(?:[{UPPER}]\.|{CAPITALISED}))?[ \t]*(?::|[ \t][–—-][ \t])",
    re.M,
)
# A list of names on a line: three or more, split by commas (`and` before the last or none;
# `Jaylen, Sofia R. and Noah`: one comma, then `and`).
_ITEM = re.compile(rf"{CAPITALISED}(?:[ \t][{UPPER}](?![\w])\.?)?")
_LAST_ITEM = rf"[ \t]*,?[ \t]+(?:{either(_JOINING_WORDS)}|&)[ \t]+{_ITEM.pattern}"
_NAME_LIST = re.compile(
    rf"(?<![\w'’.-]){_ITEM.pattern}(?:[ \t]*,[ \t]*{_ITEM.pattern})+(?:{_LAST_ITEM})?(?![\w'’-])"
)
_FEWEST_LISTED = 3  # (two are a pair: `_AFTER_NAME`'s `other`)


def _a_name(word: str, *, ambiguous: bool = False) -> bool:
    """A first name alone; `ambiguous`: also one of those that are as often something else.
    Never an assistant's (`Thanks Claude!`)."""
    lower = word.lower()
    return (
        lone_first_name(word)
        and lower not in _ASSISTANTS
        and (ambiguous or lower not in _NOT_ALONE)
    )


def _cue_before(lower: str, start: int) -> str:
    """The words right before `start` that take a name, if any (`thanks`, `ask`, `talked to`):
    the last one to three words there, a comma after them or none."""
    words = lower[max(0, start - _REACH) : start].rstrip(" \t,").split()
    for count in range(min(_MOST_CUE_WORDS, len(words)), 0, -1):
        cue = " ".join(words[-count:])
        if cue in _ADDRESSED or cue in _TAKERS:
            return cue
    return ""


def _starts_a_sentence(text: str, start: int) -> bool:
    """The word at `start` is a sentence's first: at its line's start, or after a full stop."""
    line = text.rfind("\n", 0, start) + 1
    if _LINE_START.fullmatch(text, line, start):
        return True
    before = text[line:start].rstrip()
    return before.endswith((".", "!", "?", ":"))


def _in_brackets(text: str, start: int) -> bool:
    """A bracket opened on the line before `start` is still open (`Dict[str, Cal`: code)."""
    line = text[text.rfind("\n", 0, start) + 1 : start]
    return any(line.count(opening) > line.count(closing) for opening, closing in ("()", "[]", "{}"))


@register("person_first_names_in_context")
class FirstNameInContextFinder:
    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(facts=(a_word(2),))  # every capitalised word has two letters or more
    views = frozenset({NORMALISED})  # (a structured view's lines are no sentences)

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        page = _Page(text, view.lower)
        done = -1
        for end in _FIRST_NAME_WORDS.char_ends(text):
            start, limit = end, max(0, end - _LONGEST_NAME)
            while start > limit and text[start - 1].isalpha():
                start -= 1
            if start == limit and start and text[start - 1].isalpha():
                continue  # inside a word longer than any name (read back from each hit: minutes)
            word = _WORD.match(text, start, start + 2 * _LONGEST_NAME)
            if (
                start <= done
                or word is None
                or (start and (text[start - 1] in _GLUED_BEFORE or text[start - 1].isdigit()))
            ):
                continue
            done = end = word.end()
            if text.endswith(_POSSESSIVES, start, end):
                end -= 2  # (`Dana's`: the name, then its possessive)
            yield from _in_context(page, start, end)


_POSSESSIVES = ("'s", "’s", "'S", "’S")
_LONGEST_NAME = 24  # letters of a first name of the table, and more


class _Page:
    """A text as the finder reads it: what it learns of the whole text once (its lists of names
    and whether its list items name people), kept only while the text is read."""

    def __init__(self, text: str, lower: str) -> None:
        self.text, self.lower = text, lower
        self.lists: dict[int, list[_List]] = {}  # a line's start -> the lists of names on it

    @functools.cached_property
    def a_list_of_people(self) -> bool:
        """Its items of the shape `- Word: ...` or `Word – ...` are half of them or more a first
        name of the table, two at least (a coach's notes on players; not a club's age groups,
        `Benjamín: lunes...`, `Alevín: martes...`)."""
        items = [item["first"] for item in _ITEM_LINE.finditer(self.text)]
        named = sum(_a_name(first) for first in items)
        return named >= 2 and 2 * named >= len(items)


def _in_context(page: _Page, start: int, end: int) -> Iterator[Span]:
    """The name at text[start:end] (and a second one beside it), where the words around it say
    it is a person's."""
    text, lower = page.text, page.lower
    name = text[start:end]
    if not _a_name(name, ambiguous=True):
        return
    cue = _cue_before(lower, start)
    if cue in _ADDRESSED and _ADDRESS_ENDS.match(text, end):
        yield Span(start, end, KIND)
        return
    if text[start - 1 : start] == "(" and _AGE_IN_BRACKETS.match(text, end):
        yield Span(start, end, KIND)
        return
    after = _AFTER_NAME.match(text, end)
    aged = after is not None and after["aged"] is not None
    if not aged and not _a_name(name):
        return  # `Paris`, `Grace`: a name only after a thanks or before an age
    line = text.rfind("\n", 0, start) + 1
    if (
        _LIST_MARK.fullmatch(text, line, start)
        and (item := _ITEM_END.match(text, end))
        and page.a_list_of_people
    ):
        yield Span(start, item.end("more"), KIND)  # `- Kayla R.: quick feet`, `Oliwer – po ...`
        return
    if text.startswith(",", end) or text.endswith(",", max(line, start - 3), start):
        listed = _list_of(page, line, start)
        if listed is not None and listed.names:
            if not listed.told:  # (each list's names once, whichever of them is read first)
                listed.told = True
                yield from listed.names
            return
    if cue in _TAKERS and _TAKEN_ENDS.match(text, end):
        yield Span(start, end, KIND)
        return
    if after is not None:
        yield from _named_before(text, start, end, after, addressed=cue in _ADDRESSED)
        return
    if (
        _SIGNED_AFTER.match(text, end)
        and _SIGNED_BEFORE.search(text, max(0, start - 12), start)
        and not _in_brackets(text, start)
    ):
        yield Span(start, end, KIND)


@dataclasses.dataclass
class _List:
    """A list of names on a line: where it starts and ends, its names (none where too few of
    its items are first names), whether they were given already."""

    start: int
    end: int
    names: list[Span]
    told: bool = False


def _list_of(page: _Page, line: int, start: int) -> _List | None:
    """The list of names on the line at `line` that the name at `start` is one of (`Sam, Leo,
    Kai, Tomasz, Ben H`): three items or more, two thirds of them first names of the table that
    are no word's, place's or product's (not `Rose, Lily, Daisy`; not `Paris, London, Rome`).
    A line's lists are read once, whichever name of it comes first."""
    text = page.text
    found = page.lists.get(line)
    if found is None:
        stop = text.find("\n", line)
        found = page.lists[line] = [
            _List(run.start(), run.end(), _names_listed(text, run))
            for run in _NAME_LIST.finditer(text, line, len(text) if stop < 0 else stop)
        ]
    return next((listed for listed in found if listed.start <= start < listed.end), None)


def _names_listed(text: str, run: re.Match[str]) -> list[Span]:
    items = list(_ITEM.finditer(text, run.start(), run.end()))
    if len(items) < _FEWEST_LISTED:
        return []
    named = sum(_a_name(item.group().split()[0]) for item in items)
    return [Span(*item.span(), KIND) for item in items] if 3 * named >= 2 * len(items) else []


def _named_before(
    text: str, start: int, end: int, after: re.Match[str], *, addressed: bool = False
) -> Iterator[Span]:
    """The name at text[start:end], `after` saying it is a person's (_AFTER_NAME); `addressed`:
    a thanks or a greeting before it (`Hi Claire & Ravi,`), capitalised or not."""
    noun, other = after["noun"], after["other"]
    if after["doing"] is not None and _starts_a_sentence(text, start):
        return  # `# Ties will be broken`: a sentence's first word is capitalised anyway
    if (
        after["aged"] is None
        and not addressed
        and _CAPITALISED_BEFORE.search(text, max(0, start - 24), start)
    ):
        return  # `Trader Joe's`, `Today Maria said`: a longer name's word, or unsure
    if noun is not None and (
        noun.lower() in _POSSESSED or (noun[0].isupper() and not noun.isupper())
    ):
        return  # `Bertrand's postulate`, `Maria's Kitchen`: a thing's name
    if other is not None:
        if not _a_name(other):
            return
        yield Span(*after.span("other"), KIND)
    yield Span(start, end, KIND)
