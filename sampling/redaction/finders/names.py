"""People's names where the words before them say it is a name: "my name is Priya Raghunathan",
"Name: Jo Smith", "Dear Ms. Okafor,", "Best regards,\\nTomás García", "je m'appelle Louise",
"我叫张伟", "私の名前は田中太郎です". A capitalised word alone is everywhere in text, so without
such words no name is found: a name met anywhere else needs a user redactor (`redact.redactor`,
an NER model of your own).

Candidates are the capitals after a space: one regex scan finds them and, only there, looks
back for the phrases (20 µs a 2 KB record; searching the text for shared parts of the phrases
with `str.find` cost 29). A letter's sign-off is found at its ",\n". Then the words are read
in place: capitalised words (particles such as "van" or
"de" between them), at most three, none of them a word that follows these phrases without being
a name ("Dear Sir", "Name: Optional[str]").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

KIND = "PERSON_NAME"


@dataclass(frozen=True)
class _Intro:
    phrase: str  # lower case, as in the text's lower case (as written where `cased`)
    fewest: int = 1  # capitalised words the name needs
    then: str = ""  # characters one of which must follow the name ("" for any)
    sign_off: bool = False  # ends a letter's line: the name, on the next line, ends its own
    cased: bool = False  # a title, as written: "Dr." and not "dr.", "Ms." and not "2 ms."


_TABLE = table("person_names.json")
# Each is followed by a space (a sign-off by a line break) and then the name. A form's label
# needs two words at least, so that `name: Optional[str]` stays code; after a greeting the name
# ends at a comma, a colon, a mark or the line.
_PHRASES = tuple(_Intro(**intro) for intro in _TABLE["phrases"])


def _candidates() -> re.Pattern[str]:
    """A space, a capital after it (the lookahead turns most spaces away at once), and one of
    the phrases behind it: one look-behind per phrase length (a look-behind's alternatives
    share a width), a seventh less than one per phrase. The capitals' class holds Latin-1 and
    the Latin Extended range, lower-case letters of it included: reading the name checks."""
    by_width: dict[tuple[int, bool], list[str]] = {}
    for intro in _PHRASES:
        if not intro.sign_off:
            by_width.setdefault((len(intro.phrase), intro.cased), []).append(
                re.escape(intro.phrase)
            )
    behind = [
        rf"(?<=(?:{'|'.join(phrases)}) )" if cased else rf"(?<=(?i:{'|'.join(phrases)}) )"
        for (_, cased), phrases in sorted(by_width.items())
    ]
    return re.compile(r" (?=[A-Z\u00c0-\u00de\u0100-\u024f])(?:" + "|".join(behind) + ")")


_CANDIDATE = _candidates()
_SIGN_OFFS = tuple(intro for intro in _PHRASES if intro.sign_off)
# Words that follow those phrases without being a name (lower case).
_NOT_NAMES = frozenset(_TABLE["not_names"])
_PARTICLES = frozenset(_TABLE["particles"])
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*")
_MOST_WORDS = 3
# The end of a line in markup or data: closing tags, quotes and brackets, then the line's end.
_LINE_END = re.compile(r"(?:</[a-zA-Z][\w-]*>|[\s\"'}\],])*(?:$|\n|\\n)")

# Chinese, Japanese: the name right after the phrase, in Han characters (two to three, or four
# after a label), stopping at the first character of another kind.
_HAN = re.compile(r"[\u4e00-\u9fff]{2,4}")
_HAN_PHRASES: dict[str, int] = _TABLE["han_phrases"]
# Han words that follow 我叫 without being a name ("我叫什么名字", "我叫他来").
_HAN_NOT_FIRST = frozenset("什你他她它我们这那大小")


@register("person_names")
class NameFinder:
    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    # A phrase in the lower case, then the space before the name (a sign-off: the line break).
    triggers = Triggers(
        words=(
            *(intro.phrase.lower() + ("\n" if intro.sign_off else " ") for intro in _PHRASES),
            *_HAN_PHRASES,
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        for candidate in _CANDIDATE.finditer(text):
            yield from _named_at(text, lower, candidate.start(), _PHRASES)
        at = lower.find(",\n")  # a letter's sign-off, the name on the next line
        while at >= 0:
            yield from _named_at(text, lower, at + 1, _SIGN_OFFS)
            at = lower.find(",\n", at + 1)
        if text.isascii():
            return
        for phrase, most in _HAN_PHRASES.items():
            at = text.find(phrase)
            while at >= 0:
                after = at + len(phrase)
                if text[after : after + 1] == ":":  # `我叫：`, folded
                    after += 1
                if text[after : after + 1] == " ":  # a no-break or ideographic space, folded
                    after += 1
                found = _HAN.match(text, after)
                if found is not None and found.group()[0] not in _HAN_NOT_FIRST:
                    yield Span(after, min(found.end(), after + most), KIND)
                at = text.find(phrase, after)


def _named_at(text: str, lower: str, before: int, intros: tuple[_Intro, ...]) -> Iterator[Span]:
    """The name after the space or line break at `before`, if one of `intros` ends there."""
    for intro in intros:
        searched = text if intro.cased else lower
        at = before - len(intro.phrase)
        if at < 0 or not searched.startswith(intro.phrase, at):
            continue
        if not _starts_word(searched, at):
            continue
        span = _latin_name(text, before + 1, intro)
        if span is not None:
            yield Span(*span, KIND)
        return


def _starts_word(searched: str, at: int) -> bool:
    """The phrase is not the end of a longer word ("nickname:", "sushi ", "DDr.")."""
    return at == 0 or not searched[at - 1].isalnum()


def _latin_name(text: str, start: int, intro: _Intro) -> tuple[int, int] | None:
    """(start, end) of the capitalised words from `start`, or None when they are no name."""
    position = first = start
    end, count = None, 0
    while count < _MOST_WORDS:
        word = _WORD.match(text, position)
        if word is None:
            break
        value = word.group()
        if value.lower() in _NOT_NAMES:
            break
        after = word.end()
        if value[0].isupper():
            if len(value) == 1 and text[after : after + 2] == ". ":
                after += 1  # an initial: "J. R. Tolkien"
            count, end = count + 1, after
        elif not (count and value in _PARTICLES):
            break
        if text[after : after + 1] != " ":
            break
        position = after + 1
    if end is None or count < intro.fewest:
        return None
    rest = text[end : end + 1]
    if rest == " ":  # a space before the comma a greeting ends in (`Dear Ana ,`)
        rest = text[end : end + 3].lstrip(" ")[:1]
    if intro.then and rest and rest not in intro.then:
        return None
    if intro.sign_off and rest not in ("", "\n", "\r") and not _LINE_END.match(text, end):
        return None
    if rest in ("[", "(", ".") and text[end + 1 : end + 2].isalnum():
        return None  # `Name.attr`, `Name(...)`, `Name[...]`: code
    return first, end
