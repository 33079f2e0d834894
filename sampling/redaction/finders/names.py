"""People's names where the words before them say it is a name: "my name is Priya Raghunathan",
"Name: Jo Smith", "Dear Ms. Okafor,", "Best regards,\\nTomás García", "je m'appelle Louise",
"我叫张伟", "私の名前は田中太郎です", and a mailbox's display name (`From: "Jane Doe" <jane@...>`,
`Author: Li Wei <li@...>`). A capitalised word alone is everywhere in text, so without
such words no name is found: a name met anywhere else needs a user redactor (`redact.redactor`,
an NER model of your own).

In an ASCII text, candidates are the ends of the phrases, all found in one Hyperscan scan of
its lower case (~2 µs a 1 KB text), a capital after them; in another, the capitals after a
space, found by one regex scan that, only there, looks back for the phrases (~20 µs). People
put a colon after a phrase ("Dear: Ana", "Dr.:") and wrap a line right after it ("My name
is\nPriya ..."), the name indented or not: each line break is looked at once, for such a
phrase or for a letter's sign-off before it ("Best regards,", "Cordialement", with or without
its comma), the name on the next line. Greetings, titles and sign-offs are each language's own
(the table's), and the finder runs only on a text that holds one at a word's start. Then the
words are read in place: capitalised words (particles such as "van" or "de" between them), at
most four, none of them a word that follows these phrases without being a name ("Dear Sir",
"Name: Optional[str]"). A name ends where a comma, a line's end or a closing mark of any script
comes (`Dear Ana。`, `Ingrid Haddad」`, `Tomás Costa ! Merci`), with more text after it or not.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from sampling.redaction.context import either, speaks_in_a_chat, word_ends
from sampling.redaction.finders import register, table
from sampling.redaction.finders.cjk_names import CN_TITLE, cjk_name, said_twice
from sampling.redaction.finders.seed_phrases import WORDS
from sampling.redaction.finders.usernames import a_login
from sampling.redaction.spans import ALL_VIEWS, NORMALISED, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, WordEnds, digits, lines, number
from sampling.redaction.triggers import word as a_word

KIND = "PERSON_NAME"


@dataclass(frozen=True)
class _Intro:
    phrase: str  # lower case, as in the text's lower case (as written where `cased`)
    fewest: int = 1  # capitalised words the name needs
    then: str = ""  # characters one of which must follow the name ("" for any)
    sign_off: bool = False  # ends a letter's line: the name, on the next line, ends its own
    cased: bool = False  # a title, as written: "Dr." and not "dr.", "Ms." and not "2 ms."
    lowercase: bool = False  # the name may be typed in lower case ("my name is ana lima")
    bare: bool = False  # a sign-off that may come before the name on its line without a comma
    then_word: bool = False  # or a lower-case word after the name ("this is Jo Ng calling")
    # The name's first word in capitals and a first name of the table in its first two words
    # (`el señor HERNÁN DARÍO OSPINA`, `il signor ROSSI Giovanni`): a title word that also comes
    # before an office (`el señor Presidente`, `la señora presidenta`).
    upper: bool = False


_TABLE = table("person_names.json")
# Each is followed by a space (a sign-off by a line break) and then the name. A form's label
# needs two words at least, so that `name: Optional[str]` stays code; after a greeting the name
# ends at a comma, a colon, a mark or the line.
_PHRASES = tuple(_Intro(**intro) for intro in _TABLE["phrases"])


def _spellings(intro: _Intro) -> tuple[str, ...]:
    """The phrase as written before a name: as it is, and with a colon after it ("Dear:"); a
    form's label also with a space before its colon, as French and Indonesian forms set it
    ("Nom : ...", "Nama Lengkap : ...")."""
    phrase = intro.phrase
    if not phrase.endswith(":"):
        return (phrase, phrase + ":")
    if phrase.endswith(" :"):
        return (phrase,)
    return (phrase, phrase[:-1] + " :")


def _inline(intro: _Intro) -> tuple[str, ...]:
    """A sign-off as written before the name on its own line ("Gruß, Jonas", "Mvh Oskar"):
    with its comma, and without it where the table says so."""
    return (intro.phrase, intro.phrase.rstrip(",")) if intro.bare else (intro.phrase,)


def _before_a_space(intro: _Intro) -> tuple[str, ...]:
    """The spellings of a phrase that a space and the name follow."""
    return _inline(intro) if intro.sign_off else _spellings(intro)


def _phrase_triggers(after: str) -> tuple[str, ...]:
    """Each phrase's spellings in lower case, then `after` (a sign-off's only before a space):
    a finder's triggers, less those that end in another one after a space (`first name: `
    holds `name: ` at a word's start): fewer patterns for the scan."""
    found = {spelling.lower() + after for intro in _PHRASES if after == " " or not intro.sign_off
             for spelling in _before_a_space(intro)}  # fmt: skip
    return tuple(sorted(t for t in found if not any(
        t[at + 1 :] in found for at, char in enumerate(t) if char == " " and at + 1 < len(t)
    )))  # fmt: skip


# A name's first letter: Latin (Latin-1, the Latin Extended ranges: Vietnamese's `Trần`), Greek
# and Cyrillic capitals, a few lower-case letters of those ranges among them (reading the name
# checks).
_CAPITAL = re.compile(r"[A-Z\u00c0-\u00de\u0100-\u024f\u0386-\u03ab\u0400-\u042f\u1e00-\u1eff]")
# In an ASCII text, the ends of the phrases themselves, found in one scan.
_PHRASE_ENDS = WordEnds(_phrase_triggers(" "))
_SIGN_OFFS = tuple(intro for intro in _PHRASES if intro.sign_off)
# A sign-off's words ("regards," as "regards"), then its marks (a comma, a colon, `!`, or none)
# and the line break, and the next line's indent: where the name starts.
_SIGN_OFF_WORDS = tuple(intro.phrase.rstrip(",") for intro in _SIGN_OFFS)
_SIGN_OFF_MARKS = ",:!"
_INDENT = re.compile(r"[ \t]*")
# What may end a name with more text after it: a comma, a sentence's or a clause's mark, a
# closing bracket or quote, of any script (as the normalised view has them: `）` reads `)`).
_CLOSING = frozenset(",.;:!?)]}»”’›」』】〉》〕。、｡-")  # `-`: a dash (`Hi Ana — thanks`)


def _closes(char: str) -> bool:
    """`char` ends a name as a mark does: a closing mark, an emoji or another symbol (`Hi I'm
    Aditi 😊 Delhi wali`), or a character of a script without spaces, which a Latin name does
    not run on into (`Best regards,⏎Siobhan O'Brien입니다`)."""
    return (
        char in _CLOSING
        or (char > "\u2000" and unicodedata.category(char) in ("So", "Sk"))
        or _CJK_WORD.match(char) is not None
    )


# Words that follow those phrases without being a name (lower case), and the words of the
# greetings and sign-offs themselves ("Merci,\nCordialement", "Hi,\nThanks").
_PARTICLES = frozenset(_TABLE["particles"])
# (A particle of a phrase, `mamá de`, `vader van`, stays one inside a name: `Van der Berg`.)
_NOT_NAMES = frozenset(_TABLE["not_names"]) | {
    word.lower()
    for intro in _PHRASES
    if intro.then or intro.sign_off
    for word in re.findall(r"[^\W\d_]{2,}", intro.phrase)
    if word.lower() not in _PARTICLES
}
# Words that make a name no person's: a team, a department, a firm ("Best regards,\nFinance
# Operations", `Acme Support <help@acme.example>`).
_NOT_PERSONS = frozenset(_TABLE["not_persons"])
# A title between the phrase and the name, left out of it ("Name: Smt. Lakshmi Iyer", "Caller:
# Chief Emeka Obi"): the name may be one word less.
_TITLES = "|".join(sorted(_TABLE["titles"], key=len, reverse=True))
_TITLE = re.compile(rf"(?i:{_TITLES})\.?[ \t]{{1,3}}(?=[A-ZÀ-ÞĀ-ɏ])")
# A possessive ends no name ("Hi this is John's laptop").
_POSSESSIVE = ("'s", "’s")
# Vowel signs and other marks inside a word, which Python's `\w` leaves out (`रमेश` is a word).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963\u0981-\u0983\u09bc-\u09d7\u09e2"
    "\u09e3\u0a01-\u0a03\u0a3c-\u0a51\u0a81-\u0a83\u0abc-\u0acd\u0b01-\u0b03\u0b3c-\u0b57"
    "\u0b82\u0bbe-\u0bcd\u0c00-\u0c04\u0c3c-\u0c56\u0c81-\u0c83\u0cbc-\u0cd6\u0d00-\u0d03"
    "\u0d3b-\u0d57\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u1ab0-\u1aff\u1dc0-\u1dff"
)
_WORD = re.compile(rf"[^\W\d_](?:[^\W\d_]|[{_MARKS}]|['’-](?=[^\W\d_]))*")


def _letters(test: str) -> str:
    """The upper- or lower-case letters of Latin (its extensions and Vietnamese's included),
    Greek and Cyrillic, as a character class's ranges: two classes with no letter in both."""
    chars = [chr(code) for first, last in ((0x41, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF),
                                           (0x1E00, 0x1EFF), (0x1F00, 0x1FFF))
             for code in range(first, last + 1)]  # fmt: skip
    return "".join(re.escape(char) for char in chars if getattr(char, test)() and char.isalpha())


_UPPER, _LOWER = _letters("isupper"), _letters("islower")
UPPER = _UPPER


# A word of a script past Latin's (its marks with it).
_UNCASED_NAME_WORD = rf"(?:[^\W\d_\x00-\u024f]|[{_MARKS}])+"
_MOST_WORDS = 4  # `José Manuel Ruiz García`
# Between a name's words: a space, or the two or three a form's copy leaves (`Jana  Schröder`);
# after a label, once, the comma of a family name written first (`SMITH, JOHN A`).
# An initial's full stop and the capitalised word after it (`A. Mahmood`, not `A. The`).
_INITIAL_THEN_NAME = re.compile(r"\. (?=[A-ZÀ-ÞĀ-ɏ][a-zß-öø-ÿā-ɏ])")
_GAP = re.compile(r" {1,3}(?! )|, {1,3}(?=[A-ZÀ-ÞĀ-ɏ])")
# The end of a line in markup or data: closing tags, quotes and brackets, then the line's end.
_LINE_END = re.compile(r"(?:</[a-zA-Z][\w-]*>|[\s\"'}\],])*(?:$|\n|\\n)")

# Chinese, Japanese: the name right after the phrase, in Han characters (two to three, or four
# after a label), stopping at the first character of another kind.
_HAN = re.compile(r"[\u4e00-\u9fff]{2,4}")
# After a form's label (`氏名：山本 花子`), a Japanese name as forms write it: the family name, a
# space, the given name (in kanji or hiragana), and nothing more of either script after it.
_HAN_SPACED = re.compile(
    r"[\u4e00-\u9fff]{1,3} [\u4e00-\u9fff\u3040-\u309f]{1,3}(?![\u3040-\u30ff\u4e00-\u9fff])"
)
_HAN_PHRASES: dict[str, int] = _TABLE["han_phrases"]
# The phrases after which a name may be typed in lower case (with the space after them), and
# the words that follow them without being one ("my name is not important").
_LOWERCASE_OK = tuple(intro.phrase + " " for intro in _PHRASES if intro.lowercase)
_LOWERCASE_NOT_NAMES = frozenset(_TABLE["lowercase_not_names"])
_LOWERCASE_WORD = re.compile(r"[a-z]{2,}(?:['-][a-z]+)?")
_LOWERCASE_MOST_WORDS = 3
# Han words that follow 我叫 without being a name ("我叫什么名字", "我叫他来").
_HAN_NOT_FIRST = frozenset("什你他她它我们这那大小株有以今何")
# A title after a name, no part of it (`王丽娟先生`).
# The last character of a team's, an office's or a firm's name, never of a person's (`客服部`).
_HAN_NOT_LAST = frozenset("部科组組处處室司店局院所团團队隊")


# "Ngozi here.", "Hi, Tom Harlow here," at a text's start: the writer's name, one to three
# capitalised words (one only after a greeting or where it is no word of `here_not_names`:
# "Click here.", "Details here:").
_HERE_START = (
    rb"^[ \t\r\n]*(?:(?:hi|hey|hello|hiya)[,!]?[ \t]+)?[a-z\x80-\xff][a-z\x80-\xff'-]*"
    rb"(?:[ \t][a-z\x80-\xff][a-z\x80-\xff'-]*){0,2}[ \t]here(?:[.,!\r\n]|$)"
)
_HERE_WORD = r"[A-ZÀ-ÞĀ-ɏ][^\W\d_]*(?:['’-][^\W\d_]+)?"
_HERE = re.compile(
    r"[ \t\r\n]*(?P<greeting>(?i:hi|hey|hello|hiya)[,!]?[ \t]+)?"
    rf"(?P<name>{_HERE_WORD}(?:[ \t]{_HERE_WORD}){{0,2}})"
    r"[ \t]here(?:[.,!\r\n]|\Z)"
)
_HERE_REACH = 80
_HERE_NOT_NAMES = frozenset(_TABLE["here_not_names"])


def _here_name(text: str) -> tuple[int, int] | None:
    """(start, end) of the name in "Ngozi here." at the text's start, or None."""
    match = _HERE.match(text)
    if match is None:
        return None
    words = match["name"].split()
    if any(
        word.lower() in _NOT_PERSONS
        or word.lower() in _NOT_NAMES
        or word.lower() in _HERE_NOT_NAMES
        or (len(word) > 1 and word.isupper())
        or word.endswith(_POSSESSIVE)
        for word in words
    ):
        return None
    return match.span("name")


@register("person_names")
class NameFinder:
    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    # A phrase in the lower case at a word's start (`hi ` is not in "this "), then the space
    # before the name.
    # A text that starts with who writes it ("Ngozi here."): anchored at the text's start.
    triggers = Triggers(
        word_starts=_phrase_triggers(" "),
        words=tuple(_HAN_PHRASES),
        shapes=(_HERE_START,),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        if lower.find(" here", 0, _HERE_REACH) >= 0:
            span = _here_name(text)
            if span is not None:
                yield Span(*span, KIND)
        if text.isascii():  # the phrases' ends, each a space: bytes are characters
            for end in _PHRASE_ENDS.ends(lower.encode("ascii")):
                if (
                    "A" <= text[end : end + 1] <= "Z"
                    or text[end : end + 1] == " "
                    or _TITLE.match(text, end)  # `Dobry den pane Novaku`: a title in lower case
                ):
                    yield from _named_at(text, lower, end - 1)  # (a form's spaces: its indent)
                elif "a" <= text[end : end + 1] <= "z" and lower.endswith(_LOWERCASE_OK, 0, end):
                    span = _lowercase_name(text, end)  # what lowercase_names finds, read here
                    if span is not None:
                        yield Span(*span, KIND)
            return
        # Another script: the same scan over the UTF-8, its offsets counted back in characters
        # (a regex looking back for ~900 phrases at each space cost milliseconds a text).
        for end in _PHRASE_ENDS.char_ends(lower):
            if _CAPITAL.match(text, end) or text[end : end + 1] == " " or _TITLE.match(text, end):
                yield from _named_at(text, lower, end - 1)
        yield from lowercase_names(text, lower)
        for phrase, most in _HAN_PHRASES.items():
            at = text.find(phrase)
            while at >= 0:
                after = at + len(phrase)
                if text[after : after + 1] == ":":  # `我叫：`, folded
                    after += 1
                if text[after : after + 1] == " ":  # a no-break or ideographic space, folded
                    after += 1
                spaced = _HAN_SPACED.match(text, after) if most >= 4 else None
                found = _HAN.match(text, after)
                if spaced is not None and spaced.group()[0] not in _HAN_NOT_FIRST:
                    yield Span(after, spaced.end(), KIND)
                elif found is not None and found.group()[0] not in _HAN_NOT_FIRST:
                    end = min(found.end(), after + most)
                    title = CN_TITLE.search(text, after + 1, end + 2)  # (one past the end)
                    end = min(end, title.start()) if title else end  # `王丽娟先生`: 王丽娟
                    # `客服部`: a department; `王先生`: a surname alone, no one in particular
                    if (
                        end - after > 1
                        and text[end - 1] not in _HAN_NOT_LAST
                        and not said_twice(text[after:end])
                    ):
                        yield Span(after, end, KIND)
                at = text.find(phrase, after)


# An e-mail signature's delimiter, `-- ` or `--` on a line of its own.
_DELIMITER_LINE = rb"(?:^|\n)-- ?\r?\n"


@register("person_names_after_a_line_break")
class NameAfterLineBreakFinder:
    """The name on the line after a phrase or a letter's sign-off: its own finder, so that the
    scan runs it only on a text with a phrase or a sign-off right before a line break (a text
    that holds "Dear neighbours" and thirty line breaks of prose does not pay for them)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    # A phrase at a word's start and the line break; a sign-off's words, marks and line break.
    # One shape for each sign-off: one alternation of them all, a class after it, took the scan
    # 5 µs a record more than all its other patterns together.
    triggers = Triggers(
        word_starts=_phrase_triggers("\n"),
        shapes=(
            *(re.escape(words.encode()) + rb"[,:!]{0,2}[ \t]*\n" for words in _SIGN_OFF_WORDS),
            _DELIMITER_LINE,
        ),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        return _after_line_breaks(view.text, view.lower)


# An address in angle brackets (`<jane@example.org>`): what comes right before it on its line
# is a mailbox's display name (`From: "Jane Doe" <...>`, `Author: Li Wei <...>` in a git log,
# `Signed-off-by:`, `To: ..., Ana Souza <...>`).
_MAILBOX = re.compile(r"<[^\s<>@]+@")
_QUOTES = '"“”'
_MOST_MAILBOX_WORDS = 4
_TOKEN = re.compile(r"[^ \t]+")


# A capitalised word (`O'Brien`, `McKay`, `Jean-Luc`, `Łukasz`, `Дмитрий`): each part after the
# first starts with a capital or a sign, so that a long word is read one way only.
_CAPITALISED = CAPITALISED = (
    rf"[{_UPPER}](?:[{_LOWER}]+|(?=['’][{_UPPER}]))"
    rf"(?:['’-][{_UPPER}{_LOWER}][{_LOWER}]*|[{_UPPER}][{_LOWER}]+)*"
)
# A message's last line, a name alone there or after a dash (`- Danny`, `— Mike`), or its last
# words after a spaced dash (`Email me first at ... - Mike`) or, in a script past ASCII, a
# sentence's end (`... send me a message. Ελένη`; `... on start. Prudence` is a release note's).
_LAST_LINE_NAME = re.compile(
    r"(?:^[ \t]*(?:[-–—~][ \t]?)?|[ \t][-–—~][ \t]?|(?<=[.!?])[ \t]+(?=[^\x00-\x7f]))"
    rf"(?P<name>{_CAPITALISED}(?:[ \t]{_CAPITALISED}){{0,2}})[ \t]*[.!]?\Z",
    re.MULTILINE,
)
# A message's end signed after a dash or a slash (Nordic chats sign `/Annika`), a space before.
_SIGNED = re.compile(
    rf"[ \t](?:[-–—~][ \t]?|/)(?P<name>{_CAPITALISED}(?:[ \t]{_CAPITALISED})?)[ \t]*[.!]?\Z"
)
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•–—~+>#]|\d{1,3}[.)])")
_LAST_LINE_REACH = 64


@register("person_names_at_a_messages_end")
class NameAtTheEndFinder:
    """Who signs a message with their name alone, on its last line (`Alessandro`, `Tyler
    Brooks`) or after a dash or a slash (`- Danny`, `... at mk@example.com - Mike`, `/Annika`,
    also at the end of a message of one line): the first word a
    first name of the table, the others capitalised, the line before it no list's item (a
    list of `- Tests` / `- Docs` ends with an item, not a signature)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    # Two lines, or the signs a name signed at a line's end follows; then a few string
    # operations at the text's end, cheaper than any pattern.
    triggers = Triggers(words=(" /", " -", " –", " —", " ~"), facts=(lines(2),))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, end = view.text, len(view.text)
        while end and text[end - 1].isspace():
            end -= 1
        line_start = text.rfind("\n", 0, end) + 1
        if line_start == 0 or end - line_start > _LAST_LINE_REACH:
            # One line (a title, a label), or a long one (a sentence's end): only a name signed
            # after a dash or a slash where it ends (`... senast fredag! /Annika`).
            signed = _SIGNED.search(text, max(line_start, end - _LAST_LINE_REACH), end)
            if signed is not None and _signs(signed["name"].split()):
                yield Span(*signed.span("name"), KIND)
            return
        match = _LAST_LINE_NAME.search(text, line_start, end)
        if match is None or not _signs(match["name"].split()):
            return
        previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
        if not previous.strip() or _LIST_ITEM.match(previous):
            return  # after a blank line or a list's item: a heading's or a list's word
        yield Span(*match.span("name"), KIND)


def _signs(words: list[str]) -> bool:
    """A signature's words: a first name of the table first (not a month's: `- June`), none a
    team's or a firm's."""
    return (
        words[0] in _FIRST_NAMES
        and words[0].lower() not in _MONTHS_AND_DAYS
        and not any(word.lower() in _NOT_PERSONS for word in words)
    )


# A key or a label that names a person's name (`"name": "김민준"`, `full_name=أحمد الشمري`,
# `Name: 王芳`), then a value in a script without capitals, which the phrases' capitals miss.
_NAME_KEY_THEN_UNCASED = re.compile(
    r"(?<![^\W_])(?i:(?:full|first|last|given|family|display|contact|guest|customer|passenger"
    r"|patient|sender|recipient|owner)[ _-]?)?(?i:name|nombre|nom|nome|naam|imię|imie|isim)"
    r"[\"']?[ \t]*[:=：][ \t]*[\"']?"
    rf"(?P<value>{_UNCASED_NAME_WORD}(?:[ \t]{_UNCASED_NAME_WORD}){{0,3}})"
)


@register("person_names_in_other_scripts_after_a_key")
class UncasedNameAfterKeyFinder:
    """A name in a script without capitals after a key or label that names a name, as
    tool calls and exports write it (`"name":"김민준"`, `Name: أحمد الشمري`): a Chinese,
    Japanese or Korean one shaped as a name, or one to four words of another such script."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(word_starts=("name", "nombre", "nom", "nome", "naam", "imię", "imie",
                                     "isim"), words=("name",))  # fmt: skip
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if view.text.isascii():
            return
        for match in _NAME_KEY_THEN_UNCASED.finditer(view.text):
            words = match["value"].split()
            if not all(_uncased(word) for word in words):
                continue  # Greek or Cyrillic: capitals, which the phrases read
            if _CJK_WORD.fullmatch(words[0]) and not cjk_name("".join(words)):
                continue
            if any(word in _NOT_PERSONS for word in words):
                continue
            yield Span(*match.span("value"), KIND)


# A mail's or a message's header: who it is from, on a line of its own, and another header
# line near it (`From: Kevin Doyle⏎Subject: refill`), in the languages mail clients write.
_FROM_LABELS = tuple(_TABLE["mail_from_labels"])
# Not `To:`, which a route has too (`From: New York⏎To: Boston`).
_OTHER_HEADERS = tuple(_TABLE["mail_headers"])
_FROM_LINE = re.compile(
    rf"^[ \t]*(?i:{'|'.join(map(re.escape, _FROM_LABELS))})[ \t]*[:：][ \t]*"
    r"(?P<name>[A-ZÀ-Þ][\w'’.-]*(?:[ \t][A-ZÀ-Þ][\w'’.-]*){1,3})[ \t]*(?:[(\[][^\n]*)?$",
    re.MULTILINE,
)
_HEADER_LINE = re.compile(
    rf"^[ \t]*(?i:{'|'.join(map(re.escape, _OTHER_HEADERS))})[ \t]*[:：]", re.MULTILINE
)
_HEADER_NEAR = 3  # lines above or below `From:` where another header line is looked for


@register("person_names_in_mail_headers")
class MailHeaderNameFinder:
    """Who a mail or a message is from, written without an address (`From: Kevin Doyle`,
    `Von: Sabine Krüger`): two to four capitalised words alone on the `From:` line (a
    bracket after them: `(MRN ...)`), another header within three lines; none of the words a
    firm's or a team's (`From: Acme Billing`)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=tuple(f"{label}:" for label in _FROM_LABELS))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in _FROM_LINE.finditer(text):
            if not _a_persons(match["name"].split()):
                continue
            lines = text[: match.start()].split("\n")[-_HEADER_NEAR - 1 :]
            after = text[match.end() :].split("\n", _HEADER_NEAR + 1)[: _HEADER_NEAR + 1]
            if any(_HEADER_LINE.match(line) for line in (*lines, *after)):
                yield Span(*match.span("name"), KIND)


# A first name (of the table) where a message says how to reach its person: after a verb of
# calling or asking for someone (`call Shaz on 0402 ...`, `look for Kevin`, `bel Marieke`), or
# right before a phone number (`Paco, 654 321 987`, `Marieke: 06-48213977`).
_CONTACT_VERBS = tuple(_TABLE["contact_verbs"])
_NAME_WORDS = rf"(?P<name>{_CAPITALISED}(?:[ \t]{_CAPITALISED})?)"
# A title or a word of address before a name (`κ. Γιώργος`, `anh Tuấn`, `Mama Achieng`): the
# name after it needs no table.
_ADDRESS_WORD = r"(?:(?:Mr|Mrs|Ms|Mme|Sr|Sra|Bw|Bi|κ|κα)\.?|M\.|anh|chị|cô|chú|Mama|Baba|Ate|Kuya)"
_ADDRESSED = rf"(?P<title>{_ADDRESS_WORD})"
# Words of address that are also a family's words (`Mama Roma`, `Baba Ganoush`): the name
# after them must be a first name of the table all the same.
_FAMILY_WORDS = frozenset({"Mama", "Baba", "Ate", "Kuya"})
# After a verb of calling (where the one scan's word ends): the name, "me" or "or" before it.
_AFTER_A_VERB = re.compile(
    rf"[ \t]+(?:(?i:me|or)[ \t]+)?(?:{_ADDRESSED}[ \t]+)?{_NAME_WORDS}(?![\w'’-])"
)
# A phone number's digits (eight or more, single separators), and the name right before one.
# As people write a phone: from `+` or `0`, or in groups of digits with spaces or dashes (not
# an id's dots: `Rut: 10.000.000-8`).
_PHONE_RUN = re.compile(
    r"[+0-9](?:(?<=[+0])(?:[ .-]?[0-9]){7,}|(?<=[1-9])[0-9]{1,3}(?:[ -][0-9]{2,4}){2,})"
)
_NAME_BEFORE_A_PHONE = re.compile(
    rf"(?<![\w'’-])(?:{_ADDRESSED}[ \t]+)?{_NAME_WORDS}(?:,|:| -| on| at| no\.?)?[ \t]+\Z"
)
# Right after one: the name in brackets, after a comma, a dash or "with" (`06 71 42 88 19
# (Sébastien)`, `+380 50 318 4472, Андрій`, `55 3287 1946 con Lalo`), or after a title.
# One word, and the clause's end after it (`(Sébastien)`, `, Андрій`): not a place's or a
# firm's words (`(Paris office)`, `Darling Harbour`, `with Patience and a pen`).
_NAME_AFTER_A_PHONE = re.compile(
    rf"(?:[ \t]*[(,][ \t]*|[ \t]+(?:[-–]|con|with|avec|mit|com|na)[ \t]+"
    rf"|[ \t]+(?={_ADDRESS_WORD}[ \t]))"
    rf"(?:{_ADDRESSED}[ \t]+)?(?P<name>{_CAPITALISED})(?![\w'’-])"
)
# Where a name after a phone number must end its clause (no title before it says whose it is).
_CLAUSE_END = re.compile(r"[ \t]*(?:[)\].,;!?\n]|\Z)")
_NAME_REACH = 40  # characters before a phone number where its person's name is looked for
_CONTACT_ENDS = WordEnds(_CONTACT_VERBS)
_MONTHS_AND_DAYS = frozenset(_TABLE["months_and_days"])


@register("person_names_by_contact")
class ContactNameFinder:
    """A first name where a message says how to reach its person: after a verb of calling or
    asking (`call Shaz on ...`, `look for Kevin`, `bel Marieke`) or right before a phone
    number (`Paco, 654 321 987`); the first word a first name of the table, no month's or
    day's name (`May, 2024 ...`). Each verb and each run of digits is found in C first, and
    the name read only there."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        whole_words=tuple(verb for verb in _CONTACT_VERBS if verb.isascii()),
        words=tuple(verb for verb in _CONTACT_VERBS if not verb.isascii()),
        shapes=(digits(8),),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        ends = _CONTACT_ENDS.char_ends(view.lower)
        matches = [match for end in ends if (match := _AFTER_A_VERB.match(text, end))]
        for start, end in view.number_runs:  # runs of digits the finders share, then a phone's
            start -= text[start - 1 : start] == "+"
            phone = _PHONE_RUN.match(text, start) if end - start >= 8 else None
            if phone is not None:
                match = _NAME_BEFORE_A_PHONE.search(text, max(0, start - _NAME_REACH), start)
                if match is not None:
                    matches.append(match)
                match = _NAME_AFTER_A_PHONE.match(text, max(end, phone.end()))
                if match is not None and (match["title"] or _CLAUSE_END.match(text, match.end())):
                    matches.append(match)
        for match in matches:
            words = match["name"].split()
            if words[0].lower() in _MONTHS_AND_DAYS:
                continue
            if len(words) == 1 and words[0].lower() in _ID_LABELS | _CARD_WORDS:
                continue  # `Nas: 100-000-009`, `Karta 8600 ...`: a number's name, then it
            title = match["title"]
            if ((title and title not in _FAMILY_WORDS) or first_name(words[0])) and _a_persons(
                words
            ):
                yield Span(*match.span("name"), KIND)


# The one-word names of identity numbers (national_ids.json), some of which are first names
# too (`Nas`, `Nin`, `Cui`): before a number they name it, not a person.
_ID_TABLE = table("national_ids.json")
_ID_LABELS = frozenset(
    word
    for key in ("names", "written_without_check", "checked_forms")
    for word in _ID_TABLE[key]
    if " " not in word
)


# A card's or an account's word before its number, spelt as a first name is in some language
# (`Karta 8600 6634 ...`: Uzbek's and Polish's card).
_CARD_WORDS = frozenset({"karta", "kartu", "kart", "carte", "tarjeta", "cartão", "kaart", "karte",
                         "konto", "hesap", "rachunek", "cuenta", "conta"})  # fmt: skip


# A passenger's name as airlines write it, the family name first and a slash (`WILLIAMS/SARAH
# ANNE MRS`, `LEBLANC/CAMILLE` on a boarding pass's `M1` line): with a title after it, or after
# a boarding pass's format code.
_TITLES_AFTER = r"(?:MR|MRS|MS|MISS|MSTR|DR|PROF|CHD|INF)"
_AIRLINE_NAME = re.compile(
    r"(?:(?<![A-Za-z0-9/])|(?<=\bM[1-4]))"
    r"(?P<name>[A-Z][A-Z'-]+(?: [A-Z][A-Z'-]+)?/[A-Z][A-Z'-]+(?: [A-Z][A-Z'-]+){0,3}?)"
    rf"(?:[ ]{_TITLES_AFTER}\b|(?=[ \t]+[A-Z0-9]{{6,7}}[ \t]))",
)


@register("person_names_of_passengers")
class PassengerNameFinder:
    """A passenger's name as airlines write it: `SURNAME/GIVEN NAMES` in capitals, then a title
    (`MR`, `MRS`, `MS`, ...) or a booking's code (a boarding pass's `M1LEBLANC/CAMILLE
    EK7Q9ZA`); `TCP/IP` and `AC/DC` have neither."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[a-z]{2}/[a-z]{2}",))
    views = frozenset({NORMALISED})

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "/" not in text:
            return
        for match in _AIRLINE_NAME.finditer(text):
            yield Span(*match.span("name"), KIND)
        context: list[int] | None = None  # where a passenger's word ends: one scan, if asked
        slash = text.find("/")
        while slash >= 0:
            match = _bare_airline_name(text, slash) if slash else None
            slash = text.find("/", slash + 1)
            if match is None or not _passengers_shape(match.group()):
                continue
            if context is None:
                context = _passenger_word_ends(view.lower)
            if _a_passengers(text, context, match):
                end = match.end()
                while (more := _MORE_GIVEN.match(text, end)) and more[
                    1
                ].capitalize() in _FIRST_NAMES:
                    end = more.end()  # `GARCIA/LUIS ALBERTO`
                yield Span(match.start(), end, KIND)


# Without a title or a code after it (`KIM/SEOYEON`, `GARCIA/LUIS ALBERTO`), the same shape is
# a passenger's only where a passenger's or a flight's word is near it (`Passenger:`, `탑승객`,
# `asiento`), or right after the name it spells in another script (`김서연 (KIM/SEOYEON)`).
_BARE_AIRLINE_NAME = re.compile(
    r"(?<![A-Za-z0-9/])[A-Z][A-Z'-]+(?: [A-Z][A-Z'-]+)?/[A-Z][A-Z'-]+(?![A-Za-z0-9/])"
)
_FAMILY_REACH = 40


def _bare_airline_name(text: str, slash: int) -> re.Match[str] | None:
    """`SURNAME/GIVEN` around the slash at `slash`, read only where capitals stand on both
    sides of it (a path's or a link's slashes cost a look at two characters)."""
    if not ("A" <= text[slash - 1] <= "Z" and "A" <= text[slash + 1 : slash + 2] <= "Z"):
        return None
    match = _BARE_AIRLINE_NAME.search(text, max(0, slash - _FAMILY_REACH), slash + _FAMILY_REACH)
    while match is not None and match.end() <= slash:
        match = _BARE_AIRLINE_NAME.search(text, match.end(), slash + _FAMILY_REACH)
    return match if match is not None and match.start() < slash else None


_PASSENGER_WORDS = WordEnds(_TABLE["passenger_context"])
_PASSENGER_REACH = 60
_MORE_GIVEN = re.compile(r" ([A-Z][A-Z'-]+)(?![A-Za-z0-9/])")
_AIRPORT_CODE = re.compile(r"[A-Z]{3}")


def _passenger_word_ends(lower: str) -> list[int]:
    """Where a passenger's or a flight's word ends in the lower case, a whole word."""
    return [end for end in _PASSENGER_WORDS.char_ends(lower) if not lower[end : end + 1].isalpha()]


def _passengers_shape(name: str) -> bool:
    """`SURNAME/GIVEN` is spelt as a person's: no common word or code (`AND/OR`, `TCP/IP` read
    on), and not two codes of three letters (a route's `FRA/MUC`) unless a first name follows
    the slash."""
    family, given = name.split("/")
    if any(
        word.lower() in _COMMON_WORDS
        or word.lower() in _NOT_PERSONS
        or word.lower() in _LOWERCASE_NOT_NAMES  # `AND/OR`, `YES/NO`
        for word in (*family.split(), given)
    ):
        return False
    return not (
        _AIRPORT_CODE.fullmatch(family)
        and _AIRPORT_CODE.fullmatch(given)
        and given.capitalize() not in _FIRST_NAMES
    )


def _a_passengers(text: str, context: list[int], match: re.Match[str]) -> bool:
    """`SURNAME/GIVEN` at `match` is a passenger's name: a passenger's word near it, or a name
    of another script right before it, which it spells (`김서연 (KIM/SEOYEON)`)."""
    start, end = match.span()
    if text[start - 1 : start] == "(" and _uncased_name_before(text, start - 1):
        return True
    nearest = bisect.bisect_left(context, start - _PASSENGER_REACH)  # (the ends are sorted)
    return nearest < len(context) and context[nearest] <= end + _PASSENGER_REACH


def _uncased_name_before(text: str, bracket: int) -> bool:
    """A word of a script without capitals right before the bracket at `bracket` (`김서연 (`)."""
    end = bracket - (text[bracket - 1 : bracket] == " ")
    return end > 0 and _uncased(text[end - 1]) and text[end - 1].isalpha()


@register("person_names_in_mailboxes")
class MailboxNameFinder:
    """The display name of a mailbox, `Jane Doe <jane@example.org>` or `"Doe, Jane" <...>`: two
    to four capitalised words (particles and initials between them), none of them a team's or a
    firm's (`Acme Support <help@...>`, `GitHub <noreply@...>` stay). Written before an address
    without brackets (`Sebastian Müller (s.mueller@gmx.de)`, `Laura Pérez, laura@...`, `cc Ana
    Souza ana@...`), the name must also start with a first name of the table or be spelt in
    the address (`Müller` in `s.mueller`)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    # `<` or `@`: a shape with the address after it costs the scan more than the finder costs
    # where a text holds one (a literal search for the next one, in C).
    triggers = Triggers(words=("<", "@"))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "<" in text:
            for mailbox in _MAILBOX.finditer(text):
                span = _display_name(text, mailbox.start())
                if span is not None:
                    yield Span(*span, KIND)
        at = text.find("@")
        while at > 0:
            span = _name_before_an_address(text, at)
            if span is not None:
                yield Span(*span, KIND)
            at = text.find("@", at + 1)


# An address's local part before its `@`, and what may stand between a name and the address.
_LOCAL_PART = re.compile(r"[\w.+-]{1,64}\Z")
_DOMAIN = re.compile(r"@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_BEFORE_ADDRESS = re.compile(
    r"(?:[ \t]*[-–—:,|/][ \t]*|[ \t]*[(\[]|[ \t]+(?:(?i:at|via|on|an|à|em|en|unter)[ \t]+)?)\Z"
)


def _name_before_an_address(text: str, at: int) -> tuple[int, int] | None:
    """(start, end) of a person's name written right before the address whose `@` is at `at`,
    without a mailbox's brackets: only a name that starts with a first name of the table or
    is spelt in the address's local part."""
    local = _LOCAL_PART.search(text, max(0, at - 64), at)
    if local is None or _DOMAIN.match(text, at) is None or local.start() == 0:
        return None
    between = _BEFORE_ADDRESS.search(text, max(0, local.start() - 8), local.start())
    if between is None or between.start() == 0 or not text[between.start() - 1].isalpha():
        return None
    span = _display_name(text, between.start())
    if span is None:
        return None
    words = _WORD.findall(text, *span)
    spelt = _folded_letters(local.group())
    if words[0] in _FIRST_NAMES or any(
        len(word) > 2 and _folded_letters(word) in spelt for word in words
    ):
        return span
    return None


def _folded_letters(word: str) -> str:
    """Lower case without accents, German umlauts as their spelling: `Müller` as `mueller`,
    `Pérez` as `perez`."""
    word = word.lower().translate(_UMLAUTS)
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def _display_name(text: str, bracket: int) -> tuple[int, int] | None:
    """(start, end) of the display name before the `<` at `bracket`, or None."""
    end = bracket
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    line_start = text.rfind("\n", 0, end) + 1
    if end > line_start and text[end - 1] in _QUOTES:  # "Jane Doe" or "Doe, Jane"
        opening = max(text.rfind(quote, line_start, end - 1) for quote in _QUOTES)
        if opening < 0:
            return None
        words = list(_WORD.finditer(text, opening + 1, end - 1))
        between = re.sub(r"[^\W\d_]+|['’.-]", "", text[opening + 1 : end - 1])
        if not words or between.strip(" ,"):
            return None  # more than a name's words in the quotes
    else:
        words = []
        for token in reversed(list(_TOKEN.finditer(text, max(line_start, end - 120), end))):
            # `Chen, Wei <...>`: the family name first, a comma after it, one given name after.
            family = text[token.end() - 1] == "," and len(words) == 1
            stop = token.end() - (text[token.end() - 1] in (".,"[: 1 + family]))  # an initial
            word = _WORD.match(text, token.start(), stop)
            if word is None or word.end() != stop or len(words) > _MOST_MAILBOX_WORDS:
                break
            if word.group().lower() in _NOT_NAMES:  # "Dear", "Hi": the name starts after it
                break
            if word.group()[0].islower() and word.group() not in _PARTICLES:
                break  # `Original from Ana Souza <...>`: the name starts after the word
            words.insert(0, word)
            if family:
                break
    names = [w.group() for w in words]
    while names and names[0] in _PARTICLES:  # "von" before the capitals: not the name's start
        names, words = names[1:], words[1:]
    if names and all(_uncased(name) for name in names):
        return _uncased_display_name(words)
    capitals = sum(1 for name in names if name[0].isupper())
    if not 2 <= capitals <= _MOST_MAILBOX_WORDS or len(names) > _MOST_MAILBOX_WORDS + 2:
        return None
    if any(n.lower() in _NOT_PERSONS or n.lower() in _NOT_NAMES for n in names):
        return None
    if any(not n[0].isupper() and n not in _PARTICLES for n in names):
        return None
    return words[0].start(), words[-1].end()


# A word of Han, Kana or Hangul, which spaces no given name from its surname.
_CJK_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]+")


def _uncased(word: str) -> bool:
    """A word of a script without capitals (Han, Hangul, Kana, Arabic, Hebrew, Thai, ...)."""
    return not any(char.isupper() or char.islower() for char in word)


def _uncased_display_name(words: list[re.Match[str]]) -> tuple[int, int] | None:
    """A display name in a script without capitals (`张伟 <...>`, `أحمد الشمري <...>`): one to
    four words, none a team's or an office's (`客服部 <...>`, `마케팅팀 <...>`)."""
    names = [word.group() for word in words]
    if not 1 <= len(names) <= _MOST_MAILBOX_WORDS or any(
        name.lower() in _NOT_PERSONS or name.endswith(_HANGUL_GROUPS) for name in names
    ):
        return None
    if len(names) == 1 and not (_CJK_WORD.fullmatch(names[0]) and cjk_name(names[0])):
        return None  # one word: of Han, Kana or Hangul, shaped as a name (not `回复 <...>`,
        # `客服部 <...>`); in another script, a name takes two (`الدعم <...>` is "support")
    return words[0].start(), words[-1].end()


def _after_line_breaks(text: str, lower: str) -> Iterator[Span]:
    """The name on the line after a phrase ("My name is\n  Priya ...", "Dear:\nAna,") or after
    a sign-off ("Best regards,\nAna", "Cordialement\n  Ana"): each line break looked at once."""
    newline = lower.find("\n")
    while newline >= 0:
        if _delimiter_before(lower, newline):
            span = _signature_name(text, newline + 1)
            if span is not None:
                yield Span(*span, KIND)
            newline = lower.find("\n", newline + 1)
            continue
        start = newline - 40 if newline > 40 else 0
        head = lower[start:newline].rstrip(" \t")
        words = head.rstrip(_SIGN_OFF_MARKS)
        if len(head) - len(words) <= 2 and words.endswith(_SIGN_OFF_WORDS):
            end = start + len(words)
            for intro, sign_off in zip(_SIGN_OFFS, _SIGN_OFF_WORDS, strict=True):
                if lower.startswith(sign_off, end - len(sign_off)) and _starts_word(
                    lower, end - len(sign_off)
                ):
                    indent = _BLANK_LINE.match(text, newline + 1)  # (a blank line between)
                    span = _latin_name(text, indent.end() if indent else newline + 1, intro)
                    # A word and a colon on the next line is who speaks next in a chat, or a
                    # form's label (`...: gracias⏎Usuario: listo`), no signature.
                    if span is not None and _A_COLON.match(text, span[1]) is None:
                        yield Span(*span, KIND)
                    break
        else:  # a phrase right before the line break, a colon after it or not
            yield from _named_at(text, lower, newline)
        newline = lower.find("\n", newline + 1)


# The signature's first line: the sender's name, two to four capitalised words, alone on its
# line or before a ` | `, a comma or a dash and a title or a firm ("Tom Harlow | Harlow Bakery").
_SIGNATURE = _Intro("--", fewest=2)
_DELIMITERS = frozenset({"--", "-- ", "--\r", "-- \r"})
_DELIMITER_ENDS = frozenset("- \r")
_AFTER_SIGNATURE = re.compile(r"[ \t]*(?:\r?\n|\Z)|[ \t]*[|,•·]|[ \t]+[-–—][ \t]")
_BLANK_LINE = re.compile(r"[ \t]*(?:\r?\n[ \t]*(?=[^\s]))?")
_A_COLON = re.compile(r"[ \t]*[:：]")


def _delimiter_before(lower: str, newline: int) -> bool:
    """The line that ends at `newline` is a signature's delimiter, `--` or `-- `."""
    if lower[newline - 1 : newline] not in _DELIMITER_ENDS:
        return False
    at = lower.rfind("\n", 0, newline) + 1
    return lower[at:newline] in _DELIMITERS


def _signature_name(text: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the sender's name on a signature's first line at `start`, or None: no
    word of it spelt in capitals alone (`CREATE TABLE Users` after an SQL comment's `--`)."""
    span = _latin_name(text, start, _SIGNATURE)
    if span is None or _AFTER_SIGNATURE.match(text, span[1]) is None:
        return None
    if any(len(word) > 1 and word.isupper() for word in text[span[0] : span[1]].split()):
        return None
    return span


def _by_ending() -> dict[str, list[tuple[str, _Intro]]]:
    """Each spelling of a phrase (a sign-off's before the name on its line), by its last two
    characters in lower case: a candidate reads the two before it and tries those alone."""
    found: dict[str, list[tuple[str, _Intro]]] = {}
    for intro in _PHRASES:
        for spelling in _before_a_space(intro):
            found.setdefault(spelling[-2:].lower(), []).append((spelling, intro))
    return found


_BY_ENDING = _by_ending()


def _named_at(text: str, lower: str, before: int) -> Iterator[Span]:
    """The name after the space or line break at `before` (and the indent after it), if a
    phrase ends there, a colon after it or not."""
    phrase_end = before
    while text[before : before + 1] == " " and phrase_end > 0 and lower[phrase_end - 1] == " ":
        phrase_end -= 1  # a form's spaces between its label and the name (not a line break's)
    for spelling, intro in _BY_ENDING.get(lower[max(0, phrase_end - 2) : phrase_end], ()):
        searched = text if intro.cased else lower
        at = phrase_end - len(spelling)
        if at < 0 or not searched.startswith(spelling, at) or not _starts_word(searched, at):
            continue
        indent = _INDENT.match(text, before + 1)
        span = _latin_name(text, indent.end() if indent else before + 1, intro, intro.sign_off)
        if span is not None:
            yield Span(*span, KIND)
        return


def _starts_word(searched: str, at: int) -> bool:
    """The phrase is not the end of a longer word ("nickname:", "sushi ", "DDr.") nor of a key
    written as code (`model_name:`, `app-name:`: the fields view reads a person's, `full_name`,
    as "full name")."""
    return at == 0 or not (searched[at - 1].isalnum() or searched[at - 1] in "_-.")


def _latin_name(
    text: str, start: int, intro: _Intro, inline: bool = False
) -> tuple[int, int] | None:
    """(start, end) of the capitalised words from `start`, or None when they are no name; after
    a sign-off on the same line (`inline`), only where the text or the line ends after them
    ("Cordialement, Élodie Marchand", not "Gruß, Jonas und Lea kommen")."""
    position = first = start
    end, count, fewest = None, 0, intro.fewest
    title = _TITLE.match(text, start)
    if title is not None:
        position = first = title.end()
        fewest = max(1, fewest - 1)
    titled = title is not None or (intro.cased and intro.phrase.rstrip(".").lower() in _TITLE_WORDS)
    label = intro.phrase.endswith(":")
    comma = False  # a form's "SMITH, JOHN A": the family name, a comma, the given names
    while count < _MOST_WORDS:
        word = _WORD.match(text, position)
        if word is None:
            break
        value = word.group()
        if value.lower() in _NOT_PERSONS:
            return None
        if value.endswith(_POSSESSIVE):
            if not titled or not value[0].isupper():
                return None  # `Maria's Kitchen`: a thing's name, or unsure
            # After a title, a person's (`Mr Hussain's secretary`): the name ends before it.
            count, end = count + 1, word.end() - 2
            break
        if len(value) == 1 and value.isupper() and _INITIAL_THEN_NAME.match(text, word.end()):
            count, position = count + 1, word.end() + 2  # `Dr A. Mahmood`: `A` an initial
            continue
        if not count and value.lower() in _PARTICLES and _FAMILY_AFTER.match(text, word.end()):
            position = word.end() + 1  # `Nom : Le Bihan`, `Van Dijk`: the family name's start
            continue
        if count and text[word.end() : word.end() + 1] == ":" and value.lower() in _RECORD_LABELS:
            break  # `Name: Kowalczyk  Vorname: Anja`: the next label, not a word of the name
        if value.lower() in _NOT_NAMES and not (comma and len(value) == 1 and value.isupper()):
            break  # (`SMITH, JOHN A`: an initial after the given names)
        if _honorific(value):
            break  # `Sayın Ahmet Bey'e`: the name ends before its honorific
        after = word.end()
        if value[0].isupper():
            if len(value) == 1 and text[after : after + 2] == ". ":
                after += 1  # an initial: "J. R. Tolkien"
            count, end = count + 1, after
        elif not (count and value in _PARTICLES):
            break
        gap = _GAP.match(text, after)
        if gap is None or (label and _record_label_after(text, after)):
            break  # (`Last name: Abernathy   First name: Ruth`: the next label after it)
        if gap.group()[0] == ",":
            given = _WORD.match(text, gap.end())
            # A family name of one word, or of two in capitals (`ORTEGA VIDAL, MARTA`).
            family = count == 1 or (count == 2 and text[first:end].isupper())
            if comma or not label or not family or given is None:
                break
            if text[first:end].isupper() != given.group().isupper():
                break  # `Jo Smith, CTO`: a title after the name, not its given names
            comma = True
        position = gap.end()
    if end is None:
        return None
    if (
        count < fewest
        and not (
            # A form's label with one first name of the table as its line's whole value (`Name:
            # Priya`, a record's `"name": "Priya"` as the fields view writes it).
            label
            and count == 1
            and text[first:end] in _FIRST_NAMES
            and _LINE_END.match(text, end)
            and _label_word(text, start, intro.phrase) in _PERSONS_NAME_WORDS
        )
        and not (
            # A family name alone, the line going on with a label of a person's record (`Name:
            # Kowalczyk      Vorname: Anja`).
            label and count == 1 and _record_label_after(text, end)
        )
        and not (
            # Who introduces themselves by a first name of the table (`Soy Jorge, mi whats es`,
            # `I'm Priya.`): what must follow the name is asked below.
            intro.then and not label and count == 1 and text[first:end] in _FIRST_NAMES
        )
    ):
        return None
    if intro.upper and not _upper_first(text[first:end].split()):
        return None
    if label and _label_word(text, start, intro.phrase) in _THINGS_NAME_WORDS:
        return None  # `Project name: Phoenix Rising`, `Company name: ...`
    if label and (_FIRM_AFTER.match(text, end) or _PRODUCT_WORD.search(text, first, end)):
        return None  # `Nom : Dupont & Fils SARL`, `Name: UltraWidget ...`: a firm, a product
    if inline and not (
        _LINE_END.match(text, end)
        or (text[end : end + 1] in ".!" and _LINE_END.match(text, end + 1))
    ):
        return None
    rest = text[end : end + 1]
    if rest == " ":  # a space before the comma a greeting ends in (`Dear Ana ,`)
        rest = text[end : end + 3].lstrip(" ")[:1]
    if (
        intro.then
        and rest
        and rest not in intro.then
        and not _closes(rest)
        and not (intro.then_word and text[end : end + 1] == " " and "a" <= rest <= "z")
    ):
        return None
    if (
        intro.sign_off
        and rest not in ("", "\n", "\r")
        # A comma after one word ("Thanks,\nAlso, ...") goes on with a sentence; after two, a
        # title or a firm follows the name ("Jo Smith, CTO").
        and (not _closes(rest) or (rest == "," and count < 2))
        and not (rest == "(" and text[end : end + 1] == " ")  # "Jo Smith (Sales)"
        and not _LINE_END.match(text, end)
    ):
        return None
    following = text[end + 1 : end + 2]
    if rest in ("[", "(", ".") and following.isascii() and following.isalnum():
        return None  # `Name.attr`, `Name(...)`, `Name[...]`: code (`Ana.あ` is a sentence's end)
    return first, end


def _upper_first(words: list[str]) -> bool:
    """A name written as reports and deeds write it after a title word: its first word in
    capitals, and a first name of the table among its first two (`HERNÁN DARÍO OSPINA`, `ROSSI
    Giovanni`; not `PRESIDENTE DE LA REPÚBLICA`)."""
    return (
        len(words[0]) > 1
        and words[0].isupper()
        and any(word.capitalize() in _FIRST_NAMES for word in words[:2])
    )


# A family name's particle, capitalised at its start (`Le Bihan`), then the name's capital.
_FAMILY_AFTER = re.compile(rf" (?=[{_UPPER}][{_LOWER}])")
# After a label's value: a firm's mark (`Dupont & Fils`, `Rossi e Figli`), and a word with a
# capital inside it after four lower-case letters, a product's (`UltraWidget`; not `McKay`,
# `MacArthur`, `DeShawn`, `FitzGerald`).
_FIRM_AFTER = re.compile(
    r"[ \t]*&|[ \t]+(?:and|und|et|e|y)[ \t]+(?:Sons|Söhne|Fils|Figli|Hijos|Filhos|Co|Cie|Cía)\b"
)
_PRODUCT_WORD = re.compile(rf"[{_UPPER}][{_LOWER}]{{4,}}[{_UPPER}]")
# Labels of a person's record (`Vorname:`, `Date of birth:`), the phrases' own among them: after
# a family name alone on a form's line, they say the line is a person's.
_RECORD_LABELS = frozenset(_TABLE["person_record_labels"]) | {
    intro.phrase.rstrip(" :") for intro in _PHRASES if intro.phrase.endswith(":")
}
_NEXT_LABEL = re.compile(r"(?:[ \t]{2,}|[ \t]*[|;,][ \t]*)(?P<label>[^\W\d_][^\n:]{0,30}?)[ \t]*:")


def _record_label_after(text: str, end: int) -> bool:
    """The line goes on after `end` with a label of a person's record (`   Vorname: ...`)."""
    label = _NEXT_LABEL.match(text, end)
    return label is not None and label["label"].lower() in _RECORD_LABELS


# The words before a label's `name:` that make it a person's (`Customer name:`; with none, the
# label is the line's own), or a thing's (`Project name:`).
_PERSONS_NAME_WORDS = frozenset({"",
    "full", "first", "given", "customer", "patient", "client", "contact", "guest", "user",
    "employee", "student", "member", "display", "your", "my", "passenger", "applicant", "owner",
    "holder", "recipient", "sender", "driver", "buyer", "tenant", "caller", "child", "person",
})  # fmt: skip


_THINGS_NAME_WORDS = frozenset({
    "project", "product", "file", "app", "application", "company", "business", "team", "host",
    "server", "branch", "repo", "repository", "model", "dataset", "bucket", "database", "table",
    "column", "field", "domain", "device", "network", "event", "task", "job", "package",
    "module", "class", "function", "variable", "brand", "store", "shop", "organization",
    "organisation", "org", "group", "channel", "course", "book", "song", "album", "movie",
    "game", "street", "city", "town", "country", "school", "university", "hospital", "bank",
    "service", "cluster", "namespace", "container", "image", "pod", "queue", "topic", "region",
    "zone", "workspace", "folder", "directory", "plan", "campaign", "tag", "label", "key",
})  # fmt: skip


_LABEL_REACH = 120  # characters: the longest phrase and the word before it


def _label_word(text: str, start: int, phrase: str) -> str:
    """The word before a label's `phrase` on the line that ends at `start` ("" where the label
    stands alone, or the line does not end in it): what makes it a person's or a thing's."""
    # The line's last characters only: a line of thousands of labels is not read again for each.
    line = text[max(text.rfind("\n", 0, start) + 1, start - _LABEL_REACH) : start].rstrip()
    if not line.lower().endswith(phrase):
        return ""
    words = line[: len(line) - len(phrase)].split()
    return words[-1].lower().strip("-_\"'{,") if words else ""


# Scripts without capitals: a name is the words of the phrase's script right after it (on its
# line, up to a comma, a stop or a word that ends such a name), at most as many as the table
# says. Each script's letters with their vowel signs and marks, which Python's `\w` leaves out.
_UNCASED_LETTERS = (
    "\u0621-\u063a\u0641-\u065f\u0670-\u06d3\u06fa-\u06ff"  # Arabic
    "\u05d0-\u05ea\u05f0-\u05f2\u0591-\u05c7"  # Hebrew
    "\u0900-\u0963\u0971-\u097f"  # Devanagari
    "\u0e01-\u0e4e"  # Thai
    "\u0980-\u09e3\u09f0\u09f1"  # Bengali
)
# A name's word, no longer than a name's: a text of one script without spaces is not read to its
# end after each phrase in it.
_UNCASED_WORD = re.compile(rf"[{_UNCASED_LETTERS}]{{1,40}}(?![{_UNCASED_LETTERS}])")
_UNCASED_PHRASES: dict[str, int] = _TABLE["uncased_phrases"]
_UNCASED_AFTER = frozenset(_TABLE["uncased_after"])
# A letter's sign-off ("مع التحية", "با تشکر", "धन्यवाद"): the name after a line break or a comma,
# and nothing after it on its line. Korean signs the other way, the name before (`김민수 드림`).
_UNCASED_SIGN_OFFS: dict[str, int] = _TABLE["uncased_sign_offs"]
_UNCASED_BEFORE = tuple(_TABLE["uncased_before"])
_SIGN_OFF_GAP = re.compile(r"[ \t]*[،,:!.]?[ \t]*(?:\r?\n[ \t]*)?")
# Korean: a name is a family name's syllable and one to three more, written as one word with
# an ending after it or none (`김민수입니다`); after "저는" ("I am") only with the ending, three
# syllables (`저는 학생입니다` is "I am a student").
_HANGUL = re.compile(r"[\uac00-\ud7a3]+")
_HANGUL_SUFFIXES = tuple(sorted(_TABLE["hangul_suffixes"], key=len, reverse=True))
_HANGUL_SURNAMES = frozenset(_TABLE["hangul_surnames"])
_HANGUL_GROUPS = tuple(_TABLE["hangul_groups"])  # a team's or an office's word: `마케팅팀`
_NEEDS_SUFFIX = frozenset(_TABLE["uncased_needs_suffix"])
_NAME_LINKS = frozenset(_TABLE["uncased_name_links"])
# Titles before a name in a script without capitals (Thai `นาย`, `นางสาว`): left out of it.
_UNCASED_TITLES = frozenset(_TABLE["uncased_titles"])
# A greeting (`שלום`, `سلام`): the name after it ends in a comma, a `!` or the line, and is no
# word that follows such a greeting without naming anyone (`שלום לכולם`, `سلام وقت بخیر،`).
_UNCASED_GREETINGS: dict[str, int] = _TABLE["uncased_greetings"]
_GREETING_NOT_NAMES = frozenset(_TABLE["uncased_greeting_not_names"])
_GREETING_END = re.compile(r"[ \t]*(?:[,،!！.]|\r?\n|\Z)")
# A message that thanks on its line before last and ends with a name alone on its line
# (`ممنون از کمکتون⏎مریم`): one or two words of such a script, none a farewell's.
_UNCASED_THANKS = tuple(_TABLE["uncased_thanks"])
_LAST_LINE_NOT_NAMES = frozenset(_TABLE["uncased_last_line_not_names"])
# Words of those scripts that start no name wherever a name is read (a role, a group).
_UNCASED_NOT_NAMES = _GREETING_NOT_NAMES | _LAST_LINE_NOT_NAMES
_UNCASED_LAST_LINE = re.compile(
    rf"[ \t]*(?:[-–—~][ \t]?)?(?P<name>[{_UNCASED_LETTERS}]{{2,20}}"
    rf"(?:[ \t][{_UNCASED_LETTERS}]{{2,20}})?)"
    r"[ \t]*[.!]?[ \t]*\Z"
)


@register("person_names_in_uncased_scripts")
class UncasedNameFinder:
    """A name after the words that introduce one in a script without capitals: `الاسم: نورة
    القحطاني`, `שמי יעל כהן`, `प्रिय अनिल जी`, `เรียน คุณวิภาวรรณ ศรีสุข`."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        words=tuple(
            {phrase.rstrip(":") for phrase in _UNCASED_PHRASES}
            | set(_UNCASED_SIGN_OFFS)
            | set(_UNCASED_BEFORE)
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for phrase, most in _UNCASED_PHRASES.items():
            at = text.find(phrase)
            while at >= 0:
                after = at + len(phrase)
                span = _uncased_name(text, after, most, phrase in _NEEDS_SUFFIX)
                if (
                    span is not None
                    and _uncased_phrase_at(text, at, phrase, span[0])
                    and not (
                        phrase.endswith(":")
                        and speaks_in_a_chat(text, at, phrase[:-1])
                        and not _asked_for_a_name(text, at)
                    )
                ):  # (`العميل: كم رسوم ...` again and again: who speaks, then a message; a
                    # name only where the line before asks for one)
                    yield Span(*span, KIND)
                at = text.find(phrase, after)
        for phrase, most in _UNCASED_SIGN_OFFS.items():
            at = text.find(phrase)
            while at >= 0:
                after = at + len(phrase)
                span = _signed_name(text, after, most)
                if span is not None:
                    yield Span(*span, KIND)
                at = text.find(phrase, after)
        for word in _UNCASED_BEFORE:
            at = text.find(" " + word)
            while at >= 0:
                span = _name_before(text, at, at + 1 + len(word))
                if span is not None:
                    yield Span(*span, KIND)
                at = text.find(" " + word, at + 1)


@register("person_names_after_an_uncased_greeting")
class UncasedGreetingNameFinder:
    """A name after a greeting in a script without capitals (`שלום מיכל,`, `سلام علی،`), or
    alone on a message's last line after a line that thanks (`ممنون از کمکتون⏎مریم`): its own
    finder, as common as these words are, so that a text that holds one is not searched for
    every phrase of the table."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=(*_UNCASED_GREETINGS, *_UNCASED_THANKS))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if text.isascii():
            return
        for greeting, most in _UNCASED_GREETINGS.items():
            at = text.find(greeting + " ")
            while at >= 0:
                span = _greeted_name(text, at, at + len(greeting) + 1, most)
                if span is not None:
                    yield Span(*span, KIND)
                at = text.find(greeting + " ", at + 1)
        span = _thanked_name(text)
        if span is not None:
            yield Span(*span, KIND)


def _greeted_name(text: str, at: int, start: int, most: int) -> tuple[int, int] | None:
    """The name after the greeting at `at` (`שלום מיכל,`, `سلام علی،`): the greeting a word of
    its own, the name right after its space and before a comma, a `!` or the line's end."""
    if at and text[at - 1].isalpha():
        return None
    word = _UNCASED_WORD.match(text, start)
    if word is None or word.group() in _GREETING_NOT_NAMES:
        return None
    span = _uncased_name(text, start, most)
    if span is None or not _GREETING_END.match(text, span[1]):
        return None
    if any(word in _GREETING_NOT_NAMES for word in text[span[0] : span[1]].split()):
        return None
    return span


def _thanked_name(text: str) -> tuple[int, int] | None:
    """A name alone on a message's last line, the line before it thanking (`ممنون از
    کمکتون⏎مریم`, `תודה על הכל⏎דנה`)."""
    end = len(text.rstrip())
    line_start = text.rfind("\n", 0, end) + 1
    if line_start == 0 or end - line_start > _LAST_LINE_REACH:
        return None
    match = _UNCASED_LAST_LINE.match(text, line_start, end)
    if match is None:
        return None
    words = match["name"].split()
    if any(
        word in _LAST_LINE_NOT_NAMES or word in _UNCASED_AFTER or word in _UNCASED_SIGN_OFFS
        for word in words
    ):
        return None
    previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
    if not any(thanks in previous for thanks in _UNCASED_THANKS):
        return None
    return match.span("name")


def _uncased_phrase_at(text: str, at: int, phrase: str, name: int) -> bool:
    """The phrase at `at` introduces the name at `name`: a short one (`د.`) starts a word (not
    a word's end before a stop) and a name of two letters or more; an Arabic title (no colon)
    is followed by a name, not by a definite noun (`أستاذ الرياضيات`, "the mathematics
    teacher"; `السيد الرئيس`)."""
    if len(phrase) <= _SHORT_PHRASE and (
        (at and text[at - 1].isalpha()) or not _TWO_LETTERS.match(text, name)
    ):
        return False  # nor before one letter: `د.إ` is the dirham's sign
    return phrase.endswith(":") or not (
        "\u0600" <= phrase[0] <= "\u06ff" and text.startswith(_ARABIC_ARTICLE, name)
    )


# The words of a question asking for a name, in the scripts without capitals and a few more.
_NAME_ASKED = re.compile(
    r"اسم|نام|שם|नाम|名前|姓名|名字|이름|ชื่อ|name|nombre|nom\b|nome|имя|ім['’]я|isim|nama|tên"
)


def _asked_for_a_name(text: str, at: int) -> bool:
    """The line before the one at `at` asks for a name (`ممكن الاسم والعنوان؟`)."""
    line_start = text.rfind("\n", 0, at)
    if line_start < 0:
        return False
    before = text[text.rfind("\n", 0, line_start) + 1 : line_start]
    return _NAME_ASKED.search(before.lower()) is not None


_SHORT_PHRASE = 2
_TWO_LETTERS = re.compile(r"[^\W\d_]{2}")
_ARABIC_ARTICLE = ("ال", "لل")


def _signed_name(text: str, start: int, most: int) -> tuple[int, int] | None:
    """The name after a sign-off at `start`: past a comma or a line break, then alone on its
    line ("مع التحية،\nأحمد علي", not "با احترام به شما")."""
    gap = _SIGN_OFF_GAP.match(text, start)
    if gap is None or not any(mark in gap.group() for mark in "،,\n"):
        return None
    span = _uncased_name(text, gap.end(), most)
    if span is None or not _LINE_END.match(text, span[1]):
        return None
    return span


def _name_before(text: str, space: int, after: int) -> tuple[int, int] | None:
    """The Korean name before the space at `space` and the word that signs a letter after it
    (`김민수 드림`), that word ending its line."""
    if not _LINE_END.match(text, after + (text[after : after + 1] == ".")):
        return None
    first = space
    while first > 0 and "\uac00" <= text[first - 1] <= "\ud7a3":
        first -= 1
    if first == space or (first > 0 and text[first - 1].isalnum()):
        return None
    return _hangul_name(text, first, needs_suffix=False, whole=True)


def _hangul_name(
    text: str, start: int, needs_suffix: bool, whole: bool = False
) -> tuple[int, int] | None:
    """(start, end) of a Korean name at `start`, its ending left out, or None."""
    word = _HANGUL.match(text, start)
    if word is None:
        return None
    value = word.group()
    suffix = "" if whole else next((s for s in _HANGUL_SUFFIXES if value.endswith(s)), "")
    stem = value[: len(value) - len(suffix)]
    if needs_suffix and (not suffix or len(stem) != 3):
        return None
    if not 2 <= len(stem) <= 4 or stem[0] not in _HANGUL_SURNAMES or stem.endswith(_HANGUL_GROUPS):
        return None
    return start, start + len(stem)


def _uncased_name(
    text: str, start: int, most: int, needs_suffix: bool = False
) -> tuple[int, int] | None:
    """(start, end) of up to `most` words of one uncased script from `start` (a colon, spaces
    before them), or None where none comes."""
    position = start
    while position < len(text) and text[position] in " \t:":
        position += 1
    if "\uac00" <= text[position : position + 1] <= "\ud7a3":
        return _hangul_name(text, position, needs_suffix)
    first, end, count = None, None, 0
    while count < most:
        word = _UNCASED_WORD.match(text, position)
        if word is None or word.group() in _UNCASED_AFTER:
            break
        if first is None and word.group() in _UNCASED_TITLES:  # `นาย ณัฐวุฒิ`: from the name
            position = word.end()
            while position < len(text) and text[position] in " \t":
                position += 1
            continue
        if first is None and word.group() in _UNCASED_NOT_NAMES:
            return None  # `प्रिय अभिभावक`, dear parents; `धन्यवाद, प्रधानाचार्य`: a role, no one
        first = word.start() if first is None else first
        if word.group() not in _NAME_LINKS:  # `عبد الرحمن بن سعيد`: `عبد`, `بن` link its words
            end, count = word.end(), count + 1
        position = word.end()
        while position < len(text) and text[position] in " \t":
            position += 1
    return None if first is None or end is None else (first, end)


def lowercase_names(text: str, lower: str) -> Iterator[Span]:
    """The names typed in lower case after the phrases that allow one ("my name is ana")."""
    for phrase in _LOWERCASE_OK:
        for end in word_ends(lower, phrase):
            if "a" <= text[end : end + 1] <= "z":
                span = _lowercase_name(text, end)
                if span is not None:
                    yield Span(*span, KIND)


def _lowercase_name(text: str, start: int) -> tuple[int, int] | None:
    """(start, end) of a name typed in lower case from `start`: up to three words, each not a
    word that follows such a phrase without being a name, up to a mark, a line's end or such a
    word ("my name is priya raghunathan and i live ...")."""
    position, end, count = start, None, 0
    while count < _LOWERCASE_MOST_WORDS:
        word = _LOWERCASE_WORD.match(text, position)
        if word is None or word.group() in _LOWERCASE_NOT_NAMES or word.group() in _NOT_NAMES:
            break
        count, end = count + 1, word.end()
        if text[end : end + 1] != " ":
            break
        position = end + 1
    if end is None:
        return None
    following = text[end : end + 1]
    if following and following not in " \n\r" and following not in _CLOSING:
        return None  # `my name is ana_lima`, `my name is bob123`: a handle, not typed so
    return start, end


# A chat export's line: its time stamp (and date), then who wrote it and a colon (WhatsApp's
# `[14/03/2024, 21:04:11] Aisha Bello: ...`, `14/03/2024, 21:04 - Aisha Bello: ...`, Slack's
# and Teams' `09:02 Rahul Iyer: ...`); a calendar entry's organiser and attendees
# (`ORGANIZER;CN=Eleanor Vance:mailto:...`).
_CHAT_LINE = re.compile(
    r"[ \t]*\[?(?P<date>\d{1,4}[./-]\d{1,2}[./-]\d{2,4},?[ \t]+"
    # (or the day's name: Signal's and WhatsApp's `Tue 08:51 - Siobhán:`)
    r"|(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?,?[ \t]+)?\d{1,2}:\d{2}(?::\d{2})?"
    r"(?:[ \t]?[AaPp][Mm])?\]?[ \t]*(?:-[ \t]*)?"
    r"(?P<name>[A-Z][\w'’.-]+(?:[ \t]+[A-Z][\w'’.-]+){0,3})"
    # who they are to the chat, in brackets (`Rose (mãe da Lara):`, `Mr Haddad (Landlord):`)
    r"(?:[ \t]*\([^()\n]{1,40}\))?[ \t]*:[ \t]"
)
_STAMPED_LINE = re.compile(  # a literal first: the engine skips to each
    r"\n(?=[ \t]*\[?(?:\d|(?i:mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?,?[ \t]+\d))"
)
# A chat copied from Slack or Teams: who wrote, the time, then the message on the same line
# (`Dana 09:05  looking at it`, `Burak 14:22: canlıda ...`).
_NAME_THEN_TIME = re.compile(
    r"^[ \t]*(?P<name>[A-Z][\w'’.-]+(?:[ \t]+[A-Z][\w'’.-]+){0,2})[ \t]+[0-9]{1,2}:[0-9]{2}"
    r"(?:[ \t]?[AaPp][Mm])?(?::[ \t]|[ \t])[ \t]*(?=\S)",
    re.MULTILINE,
)
# The run after the property stops at the next property's name: a `;CN=` the first of them
# reaches, the last one before it reaches too (with the same name), and each property's own
# run no longer goes on to the line's end when it finds none (quadratic on a long line of
# `ATTENDEE;`).
_CALENDAR_NAME = re.compile(
    r"(?:ORGANIZER|ATTENDEE)(?:(?!ORGANIZER|ATTENDEE)[^\n:])*?;CN=\"?(?P<name>[^\";:\n]{2,64})"
    r"\"?[;:]"
)
# Words a log's line has where a chat's has a name (`10:42:01 Build Started: ...`).
_LOG_WORDS = frozenset(_TABLE["log_words"])
# First names of many languages (first_names.json): where only the spelling tells a name.
_FIRST_NAMES = FIRST_NAMES = frozenset(table("first_names.json")["names"])


# Endings a first name takes in a sentence (Slavic and Greek cases: `Звонить Дмитрию`,
# `Оксані`, `Της Δανάης`), and the ending of the name as the table spells it.
_CASE_ENDINGS = (("ию", "ий"), ("ію", "ій"), ("ю", "й"), ("і", "а"), ("е", "а"), ("у", "а"),
                 ("ы", "а"), ("ой", "а"), ("ей", "я"), ("у", ""), ("а", ""), ("ом", ""),
                 ("ем", "й"), ("и", "а"), ("ης", "η"), ("ου", "ος"), ("ς", ""))  # fmt: skip


def lone_first_name(word: str) -> bool:
    """`word` is a first name of the table that names no month or day, role, team or firm
    (`Kevin`; not `May`, `Support`): a name where the words around it say a person is meant
    (lone_names.py)."""
    return first_name(word) and word.lower() not in _MONTHS_AND_DAYS and _a_persons([word])


def first_name(word: str) -> bool:
    """`word` is a first name of the table, as written or, in Cyrillic and Greek, with a
    case's ending (`Дмитрию`: Дмитрий), or two of them joined by a hyphen (`Anne-Mette`)."""
    if word in _FIRST_NAMES:
        return True
    if "-" in word:
        parts = word.split("-")
        return len(parts) == 2 and all(part in _FIRST_NAMES for part in parts)
    if not ("\u0370" <= word[-1:] <= "\u04ff"):
        return False
    return any(word.endswith(ending) and word[: -len(ending)] + nominative in _FIRST_NAMES
               for ending, nominative in _CASE_ENDINGS if len(word) > len(ending) + 2)  # fmt: skip


# A dialogue's line, with or without a time stamp: who speaks (one to four words of any script,
# an emoji after them) and a colon (`Magda: kto ma kod?`, `[19:03] Bia 🌸: meu pix`,
# `2024-05-20 21:33 张磊: 明天...`).
_SPEAKER_LINE = re.compile(
    r"^[ \t]*(?P<stamp>\[?[0-9][0-9/.,: -]{3,22}(?:[ \t]?[AaPp][Mm])?\]?[ \t]*(?:-[ \t]*)?)?"
    r"(?P<name>[^\W\d_][\w'’.-]*(?:[ \t][^\W\d_][\w'’.-]*){0,3})"
    # An aside in brackets: who a role is (`Support (Aiden):`, `Soporte (Nahuel):`), whose parent
    # a name is (`Jen (Harper's mum):`, `Romina (mamá de Benja):`).
    r"(?:[ \t]*[(（](?P<aside>[^()（）\n:：]{1,40})[)）])?(?:[ \t]?[^\w\s:：]{1,4})?"
    # The colon and a space; or, on a line with a time stamp, the message glued to the colon
    # (WeChat's `2024-05-18 21:03 王梓涵：我...`, a full-width colon read as `:`).
    r"[ \t]*[:：](?:[ \t]|(?(stamp)(?=\S)|(?!)))",
    re.MULTILINE,
)
_SPEAKER_REACH = 64  # characters from a line's start to the colon after who speaks
_SECONDS = re.compile(r"[0-9]:[0-9]{2}:[0-9]{2}")  # a log's stamp; a chat's has none
# Where a line's time stamp can start (a digit or a bracket): only there may a message be glued
# to the speaker's colon, as Chinese, Japanese and Korean chats write it.
_STAMP_START = frozenset("0123456789[")
_CJK_AFTER_A_COLON = re.compile(r":[\u3040-\ud7a3]")
# Who speaks in a transcript without being anyone's name: roles and a form's labels.
_SPEAKER_ROLES = frozenset(_TABLE["speaker_roles"])


@register("person_names_in_exports")
class ExportNameFinder:
    """Who wrote each line of a chat export, and a calendar entry's organiser and attendees:
    two to four capitalised words, none of them a firm's, a team's or a log's word; a chat's
    handle on its header line."""

    kinds = frozenset({KIND, "USERNAME"})
    priority = PERSONAL_PRIORITY
    # A time stamp's two digits (a fact the text answers: a `:` in the scan cost it ~4 µs a
    # record, as common as it is), or a calendar entry's `CN=`.
    triggers = Triggers(words=("cn=",), facts=(number(2),))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if _holds_a_time(text):
            # A line's time stamp, where a line starts with a digit or `[`.
            starts = [0, *(line.start() + 1 for line in _STAMPED_LINE.finditer(text))]
            for start in starts:
                match = _CHAT_LINE.match(text, start)
                if match is not None and _a_chats_writer(
                    match["name"].split(), dated=match["date"] is not None
                ):
                    yield Span(*match.span("name"), KIND)
            yield from _chat_headers(text)
            for match in _NAME_THEN_TIME.finditer(text):
                words = match["name"].split()
                if _a_chats_writer(words, dated=True) and words[0].lower() not in _MONTHS_AND_DAYS:
                    yield Span(*match.span("name"), KIND)
        if "[" in text:  # (a time with a dot too: `[25.5.2024 klo 19.22] Jussi:`)
            yield from _bracketed_chat_writers(text)
        if "CN=" in text:
            for match in _CALENDAR_NAME.finditer(text):
                words = re.findall(r"[^\W\d_][\w'’.-]*", match["name"])
                if 2 <= len(words) <= _MOST_WORDS and _a_persons(words):
                    yield Span(*match.span("name"), KIND)


# A chat's mention of a person by a handle of two names (`Salut @omar.tazi,`, `handover from
# @marta.kowalski`): inside a line, its first part a first name of the table. (A decorator,
# `@app.route`, `@pytest.mark`, starts its line; an address has letters before its `@`.)
_MENTION = re.compile(r"(?<![\w@.])@(?P<handle>[a-z][a-z0-9]*[._-][a-z][a-z0-9]*)(?![\w.-]*[\w(])")


# A message to a handle that starts its line (`@dmitri.v the payments pod is down`): a space and
# a word, where a decorator has a line break or its arguments (`@app.route("/")`).
_ADDRESSED_AFTER = re.compile(r"[ \t]+[^\W\d_]")


# A decorator's last word after a first name (`@mark.parametrize` quoted in a sentence).
_DECORATOR_WORDS = frozenset({"parametrize", "fixture", "route", "setter", "getter",
                              "deleter", "skip", "skipif", "xfail", "usefixtures",
                              "filterwarnings", "get", "post", "put", "delete", "patch",
                              "command", "option", "argument", "group", "cache", "wraps",
                              "property", "task", "validator"})  # fmt: skip


@register("person_handles_in_mentions")
class MentionFinder:
    kinds = frozenset({"USERNAME"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=("@",))
    views = frozenset({NORMALISED})

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in _MENTION.finditer(text):
            before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
            if before.strip() == "" and not _ADDRESSED_AFTER.match(text, match.end()):
                continue  # a decorator's place, unless a message to the handle follows it
            first, *_, last = re.split(r"[._-]", match["handle"])
            if first_name(first.capitalize()) and last not in _DECORATOR_WORDS:
                yield Span(match.start("handle") - 1, match.end("handle"), "USERNAME")


@register("person_names_in_dialogues")
class DialogueNameFinder:
    """Who speaks in a dialogue (`_dialogue_speakers`), read in the text as typed only: the
    fields view writes a structure's keys as `label: value` lines, which are no speakers."""

    kinds = frozenset({KIND, "USERNAME"})
    priority = PERSONAL_PRIORITY
    # Three lines, then two counts in C on the text: cheaper than any pattern of a line's
    # start in the one scan (a speaker's shape there cost it 3 µs a record).
    triggers = Triggers(facts=(lines(3),))
    views = frozenset({NORMALISED})

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if text.count(":") < 3 and text.count("：") < 3:  # one character: counted fastest
            return iter(())
        if text.count(": ") + text.count("：") < 3 and not _CJK_AFTER_A_COLON.search(text):
            return iter(())
        return _dialogue_speakers(text)


def _dialogue_speakers(text: str) -> Iterator[Span]:
    """Who speaks in a dialogue, with or without time stamps: three lines or more that start
    with a speaker and a colon, two speakers or more, one of them again (so that a form's
    `Name: ...` / `Phone: ...` lines, each once, are no dialogue), each a person's name: its
    words capitalised (not a role's or a label's: `User:`, `Note:`), or shaped as a Chinese,
    Japanese or Korean name (`张磊:`), or of another script without capitals."""
    if text.count("\n") < 2:
        return
    starts = {}  # the start of each line with a colon near its start: the regex is tried there
    for sign in (":", "："):
        at = text.find(sign)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            # A colon and a space; a message glued to it only after a time stamp (a line that
            # starts with a digit or a bracket), where the regex takes it.
            if at - start <= _SPEAKER_REACH and (
                text[at + 1 : at + 2] in (" ", "\t") or text[start : start + 1] in _STAMP_START
            ):
                starts[start] = True
            at = text.find(sign, at + 1)
    lines = [match for start in sorted(starts) if (match := _SPEAKER_LINE.match(text, start))]
    speakers = [match["name"] for match in lines]  # a role and a handle in lower case speak too
    if len(lines) < 3 or len(set(speakers)) < 2 or len(set(speakers)) == len(speakers):
        return
    for match in lines:
        if match["aside"] is not None or match["stamp"] is None:
            yield from _labelled_speaker(text, match)
        elif (kind := _a_writer(match["name"])) and (
            kind == KIND or not _SECONDS.search(match["stamp"])
        ):  # a handle too (`[8:14 PM] brynn.exe: ...`), not a log's (`[12:00:01] sshd: ...`)
            yield Span(*match.span("name"), kind)


def _labelled_speaker(text: str, match: re.Match[str]) -> Iterator[Span]:
    """The names in a speaker's label: the label, a person's name (`_a_speaker`); a role or a
    parent before first names (`Lærer Anne-Mette`, `Far til Alma og Asger`); and its aside's
    names, the person a role is (`Soporte (Nahuel)`, `אבא של איתי (רונן)`) or the child of
    whom a parent speaks (`Jen (Harper's mum)`, `Romina (mamá de Benja)`), who speaks a name
    then too."""
    name, aside = match["name"], match["aside"]
    parent = aside is not None and _PARENT.search(aside) is not None
    if _a_speaker(name, stamped=False) or (parent and _one_name(name)):
        yield Span(*match.span("name"), KIND)
    else:
        yield from _first_names_after_a_role(text, *match.span("name"))
    if aside is None:
        return
    start = match.start("aside")
    words = list(_ASIDE_WORD.finditer(aside))
    if not parent and words and len(words) <= 3:
        if all(_uncased(word[0]) for word in words) and len(aside.strip()) > 1:
            yield Span(start + words[0].start(), start + words[-1].end(), KIND)
            return
        if _a_speaker(" ".join(word["word"] for word in words), stamped=False):
            yield Span(start + words[0].start(), start + words[-1].end(), KIND)
            return
    if parent:
        for word in words:
            if word["word"][0].isupper() and word["word"].lower() not in _NOT_NAMES:
                yield Span(start + word.start(), start + word.start() + len(word["word"]), KIND)


# A parent's word in a speaker's aside (`Harper's mum`, `mamá de Benja`, `Ava's dad, 2B`).
_PARENT = re.compile(
    r"(?i:\b(?:mum|mom|mummy|mommy|dad|daddy|mother|father|parent|mamá|mama|mam|mami|papá|papa"
    r"|papi|mãe|pai|maman|mamma|babbo|mutter|vater|moeder|vader|mor|far|pappa|matka|ojciec"
    r"|tata|majka|otac|мама|папа|baba|anne|ema)\b)"
)
# A word of an aside, a possessive's `'s` left out of it (`Harper's` reads `Harper`).
_ASIDE_WORD = re.compile(r"(?P<word>[^\W\d_][\w.-]*?)(?:['’]s)?(?![\w'’])")
# Words that join two first names in a label (`Alma og Asger`, `Anja i Mia`).
_AND = frozenset({"and", "&", "og", "och", "und", "et", "y", "e", "i", "a", "en", "és", "ja",
                  "и", "і", "ve", "na", "dan", "và"})  # fmt: skip


def _one_name(name: str) -> bool:
    """One or two capitalised words, none a role's: who speaks as a child's parent."""
    words = name.split()
    return len(words) <= 2 and all(
        word[0].isupper() and word.lower().strip(".") not in _SPEAKER_ROLES for word in words
    )


def _first_names_after_a_role(text: str, start: int, end: int) -> Iterator[Span]:
    """In a speaker's label of a role or a parent and first names (`Lærer Anne-Mette`,
    `Agent Kevin`, `Mama von Valentina`, `Far til Alma og Asger`): the label's last word, and
    the one joined to it, where each is a first name and the label's first word is none."""
    words = list(re.finditer(r"\S+", text[start:end]))
    if len(words) < 2 or _first_name(words[0][0]):
        return
    last = words[-1]
    if not _first_name(last[0]):
        return
    yield Span(start + last.start(), start + last.end(), KIND)
    if len(words) >= 4 and words[-2][0].lower() in _AND and _first_name(words[-3][0]):
        yield Span(start + words[-3].start(), start + words[-3].end(), KIND)


def _first_name(word: str) -> bool:
    return word[:1].isupper() and first_name(word)


def _a_speaker(name: str, stamped: bool) -> bool:
    """A person's name where a dialogue's speaker stands: words of a script without capitals
    (a Chinese, Japanese or Korean one shaped as a name), or capitalised words, none a role's
    or a label's, the first of them a first name (`Magda`, `Ola Kowalczyk`; not `Pros`) or,
    on a time-stamped line, two words or more, none a common one (what a chat export's line
    has: `[19:03] Bia Rocha:`; one word there may be an agenda's `09:00 Keynote:`)."""
    words = name.split()
    if any(word.lower().strip(".") in _SPEAKER_ROLES for word in words):
        return False
    if all(_uncased(word) for word in words):
        if _CJK_WORD.fullmatch(words[0]):
            return cjk_name(name.replace(" ", ""))
        return len(name) > 2  # a letter alone is a list's label (`ا: ...`), no name
    return (
        len(words) <= _MOST_WORDS
        and (words[0] in _FIRST_NAMES or (stamped and len(words) > 1 and _a_persons(words)))
        and all(word[0].isupper() and word.lower() not in _NOT_PERSONS for word in words)
    )


# A chat export's line that names who writes the lines under it, with the time: the name and
# the time alone on a line (`Ирина Соколова, 18:45`, `Nguyễn Thị Hồng 20:11`), or both in
# brackets before the message (KakaoTalk's `[김민준] [오후 3:12] ...`).
_SPEAKER_WORDS = r"(?P<name>[^\W\d_][\w'’.-]*(?:[ \t][^\W\d_][\w'’.-]*){0,3})"
_TIME = r"(?:[0-9]{1,4}[./-][0-9]{1,2}[./-][0-9]{2,4},?[ \t]+)?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?"
_NAME_AND_TIME = re.compile(
    rf"[ \t]*{_SPEAKER_WORDS}[ \t]*,?[ \t]+[\[(]?{_TIME}(?:[ \t]?[AaPp][Mm])?[\])]?[ \t]*\r?$",
    re.MULTILINE,
)
_BRACKETED_NAME = re.compile(rf"[ \t]*\[{_SPEAKER_WORDS}\][ \t]*\[[^\]\n]{{0,12}}[0-9]:[0-9]{{2}}")
# LINE's export: the time, a tab, who writes, a tab, the message (`19:02\t佐々木 美咲\t...`).
_TABBED_NAME = re.compile(r"[ \t]*[0-9]{1,2}:[0-9]{2}\t(?P<name>[^\t\n]{1,40}?)[ \t]*\t")
# Discord's line over a message: who wrote it, a dash and when (`Kevin — Today at 10:32 AM`,
# `marcus_w — 03/12/2024 9:14 PM`); an IRC log's line: the time, then who speaks in angle
# brackets (`10:42 <dkowalski> is prod down?`), a handle either way.
_DAY_WORDS = (
    r"(?i:today|yesterday|heute|gestern|hoy|ayer|aujourd['’]hui|hier|hoje|ontem|oggi|ieri"
    r"|vandaag|gisteren|dzisiaj|wczoraj|сегодня|вчера)(?:[ \t]+(?i:at|um|à|a las|às|alle|om|o|в))?"
)
_POSTED_AT = re.compile(
    r"[ \t]*(?P<name>[^\s—–-][^\n—–]{0,38}?)[ \t]+[—–-][ \t]+"
    rf"(?:{_DAY_WORDS}|[0-9]{{1,4}}[./-][0-9]{{1,2}}[./-][0-9]{{2,4}},?)[ \t]+"
    r"[0-9]{1,2}:[0-9]{2}(?:[ \t]?[AaPp]\.?[Mm]\.?)?[ \t]*\r?$",
    re.MULTILINE,
)
_IRC_LINE = re.compile(
    r"[ \t]*\[?(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T])?[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?\]?[ \t]+"
    r"<[@+%~&]?(?P<name>[A-Za-z_\[\]\\^{}|`][\w\[\]\\^{}|`-]{1,30})>[ \t]"
)


# Slack's header line, copied as markdown: who writes in bold, then the time (`**maria.g**
# 9:14 AM`, `**Tom Becker**  10:02`, Slack's own `*Ben T*  3:12 PM`).
_BOLD_NAME_AND_TIME = re.compile(
    r"[ \t]*(\*\*?)(?P<name>[^*\n]{2,40}?)\1[ \t]+[0-9]{1,2}:[0-9]{2}(?:[ \t]?[AaPp][Mm])?"
    r"[ \t]*\r?$",
    re.MULTILINE,
)


def _chat_headers(text: str) -> Iterator[Span]:
    """Who writes, on the lines of a chat export that hold a time and a name alone or in
    brackets: each line with a time looked at once."""
    seen = set()
    at = text.find(":", 1)
    while at > 0:
        if text[at - 1].isdigit() and text[at + 1 : at + 3].isdigit():
            start = text.rfind("\n", 0, at) + 1
            if start not in seen and at - start <= 64:
                seen.add(start)
                match = (
                    _BRACKETED_NAME.match(text, start)
                    or _NAME_AND_TIME.match(text, start)
                    or _TABBED_NAME.match(text, start)
                )
                if match is not None and _a_speaker(match["name"], stamped=True):
                    yield Span(*match.span("name"), KIND)
                elif match := (
                    _POSTED_AT.match(text, start)
                    or _IRC_LINE.match(text, start)
                    or _BOLD_NAME_AND_TIME.match(text, start)
                ):
                    kind = _a_writer(match["name"])
                    if kind is not None:
                        yield Span(*match.span("name"), kind)
        at = text.find(":", at + 1)


# A copied chat's line: its time in brackets, a day's word before it or none (`[9:42 PM] `,
# `[Yesterday at 11:02 PM] `, `[오후 11:20] `), a role and a bar or none (`Mod | `), who writes,
# a colon. Brackets around the time, which an agenda's `09:00 Keynote:` has not.
_BRACKETED_STAMP_LINE = re.compile(
    r"^[ \t]*\[(?:[^\]\n]{0,24}?[ \t,]|)[0-9]{1,2}[:.][0-9]{2}(?P<seconds>:[0-9]{2})?"
    r"(?:[ \t]?[AaPp]\.?[Mm]\.?|[ \t]?[^\W\d_]{1,2}|,[ \t]*[0-9./-]{6,10})?\][ \t]*"
    r"(?:[^\W\d_][\w]{0,12}[ \t]*\|[ \t]*)?"
    r"(?P<name>[^\s:|\[\]()<>]{2,32}(?:[ \t][^\s:|\[\]()<>]{1,32}){0,2}?)"
    r"(?:[ \t]+[^\w\s:]{1,4})?[ \t]*:[ \t]",  # (an emoji after the name: `Jess 🌻:`)
    re.MULTILINE,
)


def _bracketed_chat_writers(text: str) -> Iterator[Span]:
    """Who writes each line of a copied chat, two lines or more with the time in brackets, a
    date before or after it (Discord, Slack, WhatsApp: `[9:42 PM] Kaz:`, `[14/03/2024, 19:12]
    Raj:`, `[09:31, 02/06/2024] Jess 🌻:`, `[25.5.2024 klo 19.22] Jussi:`): a person's name, or a
    handle (`ghostpepper`, `KryptoNyx`, `헬창고양이`); not a role's, a bot's or a log's word
    (`Agent`, `System`, `INFO`)."""
    lines = list(_BRACKETED_STAMP_LINE.finditer(text))
    if len(lines) < 2:
        return
    for line in lines:
        name = line["name"]
        words = name.split()
        if any(word.lower().strip(".") in _SPEAKER_ROLES or word.lower() in _LOG_WORDS
               or word.lower() in _NOT_PERSONS or word.lower() in _RELATIONS
               for word in words):  # fmt: skip
            continue  # (`Yo:`, `Maman:`, `Mor:`: who writes, not their name)
        if all(word[0].isupper() and word[1:].islower() for word in words) or all(
            _uncased(word) for word in words
        ):
            yield Span(*line.span("name"), KIND)
        elif len(words) == 1 and (
            # (a plain word in lower case on a line timed to the second is a log's program; a
            # word in capitals a group's, `PTA`)
            _HANDLE.search(name)
            or (line["seconds"] is None and name.islower() and a_login(name, sentence=True))
        ):
            yield Span(*line.span("name"), "USERNAME")


def _a_writer(name: str) -> str | None:
    """The kind of who writes on a chat's header line: a person's name (`Kevin`, `Tom Becker`),
    a handle (`marcus_w`, `dkowalski`: no generic account, no word of a sentence); None for
    neither (a bot's or a team's name)."""
    if _a_speaker(name, stamped=True) or (name in _FIRST_NAMES and name[0].isupper()):
        return KIND
    if " " in name or not (_HANDLE.search(name) or name.islower()):
        return None  # a capitalised word that is no first name: `Meeting — Today at 3:00 PM`
    return "USERNAME" if a_login(name, sentence=_HANDLE.search(name) is None) else None


_HANDLE = re.compile(r"[0-9_.]|[a-z][A-Z]")


def _holds_a_time(text: str) -> bool:
    """A colon between digits (`21:04`): each colon looked at, in C, before any line is read."""
    at = text.find(":", 1)  # a colon first has no digit before it
    while at > 0:
        if text[at - 1].isdigit() and text[at + 1 : at + 3].isdigit():
            return True
        at = text.find(":", at + 1)
    return False


def _a_chats_writer(words: list[str], *, dated: bool) -> bool:
    """Who writes a chat export's line: two to four words of a person's name, or, on a line
    `dated` as an export dates it or as a copied chat times it (not a log's or an agenda's time
    alone: `10:45 Mark: ...`), one that is a first name of the table and no role's, month's or
    label's word (`Chloe`; not `Build`, `Reminder`)."""
    if len(words) == 1:
        return dated and first_name(words[0]) and not _not_a_name_word(words[0])
    return _a_persons(words)


def _a_persons(words: list[str]) -> bool:
    return all(
        word[0].isupper()
        and not (len(word) > 1 and word.isupper())
        and word.lower().strip(".,") not in _NOT_PERSONS
        and word.lower().strip(".,") not in _NOT_NAMES
        and word.lower().strip(".,") not in _LOG_WORDS
        for word in words
    )


# A full name in running text with no word before it that says so ("forwarding this from
# Hannah Schmidt", "assigned to Priya Raman"): a run of two or three capitalised words (a
# particle between them allowed), the first a first name of the table; not a place's or a
# thing's name (`Franklin Street`, `Santa Clara`), not a run of a title's words.
_PARTICLE = "|".join(sorted(_PARTICLES - {"y"}, key=len, reverse=True))  # `Trinidad y Tabago`


# At most as many words as a name has, and no capitalised word after them: a line of
# thousands of them is read a few words from each place, not to its end.
_NEXT_WORD = rf"[ \t](?:(?:{_PARTICLE})[ \t])?{_CAPITALISED}"
_CAPITALISED_RUN = re.compile(
    rf"(?<![\w'’.@/#-]){_CAPITALISED}(?:{_NEXT_WORD}){{1,{_MOST_WORDS - 1}}}"
    rf"(?![\w@/-]|['’](?![sS]\b)|{_NEXT_WORD})"
)
# A Russian, Ukrainian or Belarusian name with its patronymic (`Кузнецов Андрей Павлович`,
# `Екатерина Игоревна`), in any case (`от Кузнецова Дмитрия Александровича`, `Марии
# Петровне`): a name whatever its first word.
_PATRONYMIC = re.compile(
    r"(?:(?:ович|евич|ьич)(?:а|у|ем|е|і)?|(?:овн|евн|ичн|івн)(?:а|ы|е|у|ой|ою|и|і)|іч)\Z"
)
# Words of German prose, which capitalises its nouns (`zwei Tage Urlaub`): there two capitalised
# words after a first name are as often a noun as a family name.
_GERMAN = re.compile(
    r"(?<![^\W\d_])(?:und|der|die|das|ist|nicht|mit|für|ich|wir|sie|auf|bitte)(?![^\W\d_])"
)
_PLACE_WORDS = frozenset(_TABLE["place_words"])
_PLACE_STARTS = frozenset(_TABLE["place_starts"])
_LONG_LOWER_WORD = re.compile(rf"(?<![\w'’-])[{_LOWER}]{{4,}}")
_FAMILY_FIRST = frozenset(_TABLE["family_names_first"])


@register("person_names_in_running_text")
class FullNameFinder:
    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(facts=(a_word(2),))  # every capitalised word has two letters or more
    views = frozenset({NORMALISED})

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        german: bool | None = None  # asked once, where a run needs it
        titles = _TitleLines()
        for start in _run_starts(text):
            run = _CAPITALISED_RUN.match(text, start)
            if run is None:
                continue
            words = run.group().split()
            names = [word for word in words if word[0].isupper()]
            if not 2 <= len(names) <= _MOST_WORDS:
                continue
            if any(_honorific(name) for name in names[1:]):
                continue  # `Elif Hanım'a`: the honorific finder's, the honorific left out
            if any(_PATRONYMIC.search(name) for name in names[1:]):
                yield Span(*run.span(), KIND)
                continue
            if names[0] in _FAMILY_FIRST and (len(names) > 2 or names[1] in ("Văn", "Thị")):
                yield Span(*run.span(), KIND)
                continue
            if names[0].split("-")[0] not in _FIRST_NAMES or not (
                len(names) <= 3
                or (  # two given names, no words of a thing's name (`Crystal Rose Gold ...`)
                    names[1] in _FIRST_NAMES
                    and not any(name.lower() in _COMMON_WORDS for name in names)
                )
            ):
                continue
            if german is None:
                german = len(_GERMAN.findall(text, 0, 4096)) >= 2
            if german:
                continue
            end = run.end() - 2 if words[-1].endswith(_POSSESSIVE) else run.end()  # Eric's
            last = text[run.start() : end].split()[-1]
            if names[0].lower() in _PLACE_STARTS or last.lower() in _PLACE_WORDS:
                continue
            if any(name.lower() in _MONTHS_AND_DAYS for name in names[1:]):
                continue
            if not _a_persons([*names[:-1], last]):
                continue
            if titles.holds(text, run.start()) and not _FORM_LABEL.fullmatch(
                text, text.rfind("\n", 0, run.start()) + 1, run.start()
            ):
                continue  # a title's words, not a form's value (`Donor: Margaret Ellen ...`)
            if _label_word(text, run.start(), "name:") not in _THINGS_NAME_WORDS:
                yield Span(run.start(), end, KIND)  # (not `Project name: Phoenix Rising`)


# A form's label alone before a value on its line (`Donor: `, `Nome que vai aparecer: `).
_FORM_LABEL = re.compile(r"[ \t]*[^\W\d_][\w .'/()-]{0,30}:[ \t]*")


def _run_starts(text: str) -> list[int]:
    """Where a run of capitalised words may start a name: a word of the first names' table or
    of the family names written first, or a Cyrillic one (a patronymic may follow), with a
    capitalised word after it. An ASCII text is read through its shape (capitals "A", lower
    case "a", anything else a space), a search of bytes a few times faster than the run's."""
    if text.isascii():
        shape = text.encode("ascii").translate(_CASE_SHAPE)
        starts = [(hit.start(), hit.end(1)) for hit in _PAIR_SHAPE.finditer(shape)]
    else:
        starts = [hit.span() for hit in _PAIR_START.finditer(text)]
    return [
        start
        for start, end in starts
        if (
            text[start:end] in _FIRST_NAMES
            or text[start:end] in _FAMILY_FIRST
            or "\u0400" <= text[start] <= "\u04ff"
        )
        and not _after_a_place_start(text, start)
    ]


def _after_a_place_start(text: str, start: int) -> bool:
    """The word before `start` begins a place's name (`San Luis Potosí`)."""
    before = text[max(0, start - 12) : start]
    if not before.endswith((" ", "\t")):
        return False
    words = before.split()
    return bool(words) and words[-1].lower() in _PLACE_STARTS


_CASE_SHAPE = bytes(65 if 65 <= c <= 90 else 97 if 97 <= c <= 122 else 32 for c in range(256))
# A capitalised word, then (a particle and) another: its first word ends at group 1.
_PAIR_SHAPE = re.compile(rb"A(a+)(?= (?:a{1,5} )?A)")
_PAIR_START = re.compile(rf"[{_UPPER}][{_LOWER}]+(?=[ \t](?:(?:{_PARTICLE})[ \t])?[{_UPPER}])")


class _TitleLines:
    """Whether the line at a place is a title's (`Getting Started with Grant Management`):
    three capitalised words or more, no lower-case word of four letters or more, no comma (a
    list of names has them). Each line is read once, however many names it holds."""

    def __init__(self) -> None:
        self._lines: dict[int, bool] = {}  # a line's start -> a title's

    def holds(self, text: str, at: int) -> bool:
        start = text.rfind("\n", 0, at) + 1
        title = self._lines.get(start)
        if title is None:
            end = text.find("\n", at)
            line = text[start : end if end >= 0 else len(text)]
            title = self._lines[start] = (
                "," not in line
                and _LONG_LOWER_WORD.search(line) is None
                and sum(1 for word in line.split() if word[:1].isupper()) >= 3
            )
        return title


# --- a name found once, hidden wherever the record has it again ------------------------------

# A name's word (of a cased script: capitalised; of another: two characters or more, the
# marks with them) that stands for its person alone elsewhere (`Hannah` after `Hannah Okafor`).
_NAME_PART = re.compile(rf"(?:[^\W\d_]|[{_UNCASED_LETTERS}])(?:[\w'’-]|[{_UNCASED_LETTERS}])+")
_TITLE_WORDS = frozenset(title.lower().rstrip(".") for title in _TABLE["titles"])
_COMMON_WORDS = frozenset(WORDS)


def name_parts(value: str) -> set[str]:
    """What stands for the person `value` names elsewhere in a record: the name as written and
    each of its words that is no common word, title, particle, month or day (a cased one
    capitalised, three letters or more)."""
    parts = {value.strip()}
    if len(value) == 3 and _HAN.fullmatch(value):  # `刘小雨`: the given name alone, `小雨`
        parts.add(value[1:])
    for word in _NAME_PART.findall(value):
        lower = word.lower()
        if lower in _COMMON_WORDS or lower in _TITLE_WORDS or lower in _PARTICLES:
            continue
        if lower in _NOT_NAMES or lower in _NOT_PERSONS or lower in _MONTHS_AND_DAYS:
            continue
        cased = word.lower() != word.upper()
        if (cased and word[0].isupper() and not word.isupper() and len(word) > 2) or (
            not cased and len(word) > 1
        ):
            parts.add(word)
    return {part for part in parts if part}


# Whole names and words without spaces around them (Han, Kana, Hangul) looked for one by one:
# at most this many, so that a text of thousands of names is not read once for each.
_MOST_LOOKED_FOR = 64


def repeated(text: str, parts: set[str]) -> list[Span]:
    """Each place in `text` where one of `parts` stands as a whole word (no letter or digit
    right before or after it): a word of a script with spaces found among the text's words in
    one pass, the others looked for."""
    words = {part for part in parts if " " not in part and not _CJK_WORD.search(part)}
    found = []
    if words:
        for token in _NAME_PART.finditer(text):
            word, end = token.group(), token.end()
            if word.endswith(_POSSESSIVE):  # `Okafor's`
                word, end = word[:-2], end - 2
            if word in words:
                found.append(Span(token.start(), end, KIND))
    for part in sorted(parts - words)[:_MOST_LOOKED_FOR]:
        at = text.find(part)
        while at >= 0:
            end = at + len(part)
            before, after = text[at - 1 : at], text[end : end + 1]
            if not _joined(before) and not _joined(after):
                found.append(Span(at, end, KIND))
            at = text.find(part, at + 1)
    return found


def _joined(char: str) -> bool:
    """`char` continues a word of a script with spaces (a letter, a digit, a mark; not an
    apostrophe: `Okafor's`): the part beside it is only part of a longer word. Han, Kana and
    Hangul have no spaces: a name's word there stands next to other words."""
    if not char or not (char.isalnum() or char in "_-" or unicodedata.category(char)[0] == "M"):
        return False
    return not _CJK_WORD.fullmatch(char)


# --- a name that the words after it say is a person's ---------------------------------------

# A party of a filing: its name, a comma, its role (`KEVIN J. ORTIZ, Defendant.`, `DANA L.
# WHITMORE, Petitioner,`), or a petition's description of it (`JULIANA ALVES DUARTE,
# brasileira, casada, ...`). The role is found first, in the lower case; the name read back.
_PARTY_ROLES = frozenset(_TABLE["party_roles"])
_PARTY_DESCRIPTIONS = frozenset(_TABLE["party_descriptions"])
_PARTY_NOT_PERSONS = frozenset(_TABLE["party_not_persons"])
_PARTY_WORDS = "|".join(sorted(_PARTY_ROLES | _PARTY_DESCRIPTIONS, key=len, reverse=True))
_PARTY_ROLE_AT = re.compile(rf",[ \t]+(?P<role>{_PARTY_WORDS})(?![\w-])(?P<then>[ \t]*,)?")
# A contract's party, defined by its role in brackets and quotes (`Jonathan R. Whitfield
# ("Tenant")`, `Maria Lopez (the “Buyer”)`, `(hereinafter "Lessee")`).
_CONTRACT_ROLES = tuple(_TABLE["contract_roles"])
_CONTRACT_ROLE_AT = re.compile(
    r"[ \t]*\((?:the[ \t]+|hereinafter[ \t]+(?:referred[ \t]+to[ \t]+as[ \t]+)?(?:the[ \t]+)?)?"
    rf"[\"“”'‘’«„](?:{'|'.join(sorted(_CONTRACT_ROLES, key=len, reverse=True))})[\"“”'‘’»]"
)
# Capitalised words or words in capitals, an initial among them (`L.`), particles between them.
_PARTY_WORD = rf"(?:[{_UPPER}][{_UPPER}{_LOWER}'’-]*\.?|(?i:{_PARTICLE}))"
_PARTY_NAME = re.compile(rf"(?<![^\s:;(])(?P<name>{_PARTY_WORD}(?:[ ]{_PARTY_WORD}){{1,5}})\Z")
_PARTY_REACH = 80
_INITIAL = re.compile(rf"[{_UPPER}]\.")
# Words before a party's name on its line, no part of it (`v. TERRENCE W. BOYD`, `and ...`).
_PARTY_BEFORE = frozenset({"v", "v.", "vs", "vs.", "versus", "and", "contra", "c.", "et", "e", "y"})


@register("person_names_of_parties")
class PartyNameFinder:
    """A party of a filing named before its role: two to five words, capitalised or in
    capitals, none a firm's, a state's or a court's (`STATE OF OHIO, Plaintiff` stays), an
    initial among them or, in capitals, the first a first name of the table; or, three words
    or more, before a petition's description of a party (a nationality or a marital status,
    and another comma after it)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        words=(
            *(f", {role}" for role in _PARTY_ROLES | _PARTY_DESCRIPTIONS),
            *(f"{quote}{role}" for role in _CONTRACT_ROLES for quote in "\"“'„«"),
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        yield from self._defined(view.text, view.lower)
        text = view.text
        for role in _PARTY_ROLE_AT.finditer(view.lower):
            comma = role.start()
            line_start = text.rfind("\n", 0, comma) + 1
            match = _PARTY_NAME.search(text, max(line_start, comma - _PARTY_REACH), comma)
            if match is None:
                continue
            start = match.start()
            for token in _TOKEN.finditer(text, start, comma):  # `V. TERRENCE W. BOYD`: from T
                if token.group()[0].isupper() and token.group().lower() not in _PARTY_BEFORE:
                    break
                start = token.end() + 1
            words = [word for word in text[start:comma].split() if word[0].isupper()]
            bare = [word.rstrip(".").lower() for word in words]
            if len(words) < 2 or any(
                word in _PARTY_NOT_PERSONS or word in _NOT_PERSONS or word in _PLACE_WORDS
                for word in bare
            ):
                continue
            described = role["role"] in _PARTY_DESCRIPTIONS
            if (described and role["then"] is None) or bare[0] in _PLACE_STARTS:
                continue  # `Rio de Janeiro, brasileira.`, `SÃO PAULO, ...`: a place
            initial = any(_INITIAL.fullmatch(word) for word in words[1:])
            capitals = text[start:comma].isupper()  # (capitalised: the running text's finder)
            if (
                (described and len(words) > 2)  # a petition's party: a full name
                or initial
                or (capitals and words[0].capitalize() in _FIRST_NAMES)
            ):
                yield Span(start, comma, KIND)

    @staticmethod
    def _defined(text: str, lower: str) -> Iterator[Span]:
        """A contract's party before its role's definition: two to five capitalised words or
        words in capitals, none a firm's, a place's or a state's, the first a first name of the
        table or an initial among them."""
        for role in _CONTRACT_ROLE_AT.finditer(lower):
            end = role.start()
            line_start = text.rfind("\n", 0, end) + 1
            match = _PARTY_NAME.search(text, max(line_start, end - _PARTY_REACH), end)
            if match is None:
                continue
            words = match["name"].split()
            bare = [word.rstrip(".").lower() for word in words]
            if any(word in _PARTY_NOT_PERSONS or word in _NOT_PERSONS or word in _PLACE_WORDS
                   or word in _PARTY_BEFORE for word in bare):  # fmt: skip
                continue
            if words[0].capitalize() in _FIRST_NAMES or any(
                _INITIAL.fullmatch(word) for word in words[1:]
            ):
                yield Span(match.start("name"), end, KIND)


# A first name, then a relation or a role in brackets (`Contatto di emergenza: Paolo (cognato)`,
# `Recebido por: Cleiton (porteiro)`): the bracket found first, the name read back.
_RELATIONS = RELATIONS = frozenset(_TABLE["relations_in_brackets"])
_RELATION_AT = re.compile(rf"[ \t]?\((?:{either(_RELATIONS)})\)")
_CAPITALISED_WORD = re.compile(_CAPITALISED)
_LABEL_BEFORE = re.compile(r"[^\W\d_][\w .'/()-]{0,30}:[ \t]*\Z")


@register("person_names_before_a_relation")
class RelationNameFinder:
    """A name before a relation or a role in brackets: a first name of the table (and a
    family name after it), or after a label any capitalised word that is no common word,
    role or label (`Recebido por: Cleiton (porteiro)`; not `Contact (mother)`)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=tuple(f"({relation})" for relation in _RELATIONS))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for relation in _RELATION_AT.finditer(view.lower):
            words = _words_before(text, relation.start(), _CAPITALISED_WORD)
            if not words or _not_a_name_word(text[slice(*words[-1])]):
                continue
            (start, end), last = words[-1], text[slice(*words[-1])]
            first = text[slice(*words[0])] if len(words) == 2 else None
            if first is not None and first_name(first) and not _not_a_name_word(first):
                yield Span(words[0][0], end, KIND)
            elif first_name(last) or (
                first is None
                and last.lower() not in _COMMON_WORDS
                and _LABEL_BEFORE.search(text, max(0, start - 32), start)
            ):
                yield Span(start, end, KIND)


def _words_before(text: str, at: int, word: re.Pattern[str]) -> list[tuple[int, int]]:
    """(start, end) of the one or two words of `word`'s shape right before `at` (a space or
    none between: `Paolo (`, `Mehmet Bey`), the first of two only where a space or a tab alone
    separates them; each found by a search for the space before it, not read back."""
    end = at - (text[at - 1 : at] in (" ", "\t"))
    found: list[tuple[int, int]] = []
    while len(found) < 2 and end > 0:
        start = max(text.rfind(space, max(0, end - 40), end) for space in " \t\n") + 1
        if start == end or not word.fullmatch(text, start, end):
            break
        found.insert(0, (start, end))
        if text[start - 1 : start] not in (" ", "\t"):
            break
        end = start - 1
    return found


def _not_a_name_word(word: str) -> bool:
    """A word that names a relation, a role, a label or a group, not a person."""
    lower = word.lower()
    return (
        lower in _RELATIONS
        or lower in _NOT_NAMES
        or lower in _NOT_PERSONS
        or lower in _SPEAKER_ROLES
        or lower in _MONTHS_AND_DAYS
        or (len(word) > 1 and word.isupper())
    )


# An honorific after a first name: Turkish `Mehmet Bey'e`, `Elif Hanım`, Hindi `सुरेश जी`.
# The honorific found first; the name read back (a family name before it only after a first
# name of the table: `Ayşe Yılmaz Hanım`, but `Dün Mehmet Bey`).
_HONORIFICS_AFTER = frozenset(_TABLE["honorifics_after"])
_NOT_BEFORE_HONORIFICS = frozenset(_TABLE["not_before_honorifics"])
_HONORIFIC_AT = re.compile(
    rf"[ \t](?:{'|'.join(sorted(_HONORIFICS_AFTER, key=len, reverse=True))})"
    r"(?=['’]|[^\w\u0900-\u097f]|\Z)"
)
# The name's word: capitalised, or of Devanagari.
_HONORED_WORD = re.compile(rf"{_CAPITALISED}|[\u0900-\u097f]{{2,}}")


@register("person_names_before_an_honorific")
class HonorificNameFinder:
    """A first name before an honorific written after it (`Mehmet Bey'e`, `सुरेश जी को`): a
    capitalised word, or a word of Devanagari, none of the words that come before these
    honorifics without naming anyone (`Sayın`, `Bu`, `हाँ जी`, `माता जी`)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=tuple(f" {word.lower()}" for word in _HONORIFICS_AFTER))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for honorific in _HONORIFIC_AT.finditer(text):
            words = _words_before(text, honorific.start() + 1, _HONORED_WORD)
            if not words:
                continue
            (start, end), last = words[-1], text[slice(*words[-1])]
            if last in _NOT_BEFORE_HONORIFICS or _not_a_name_word(last):
                continue
            first = text[slice(*words[0])] if len(words) == 2 else ""
            if first in _FIRST_NAMES and first not in _NOT_BEFORE_HONORIFICS:
                start = words[0][0]  # `Ayşe Yılmaz Hanım`
            yield Span(start, end, KIND)


def _honorific(word: str) -> bool:
    """`word` is an honorific written after a name, a suffix after it or none (`Hanım'a`)."""
    if word[:1] not in _HONORIFIC_INITIALS:  # most words: one look at a set
        return False
    return word.replace("’", "'").split("'", 1)[0] in _HONORIFICS_AFTER


_HONORIFIC_INITIALS = frozenset(word[0] for word in _HONORIFICS_AFTER)


# --- a name that a sole trader's business form or a birth's word follows --------------------

# A sole trader's business is named after its person (`Ionescu Vlad-Mihai PFA`, `Jan Novák
# OSVČ`, `Maria Silva MEI`, `Ahmet Yılmaz Şahıs Şirketi`): the form found first, as written, the
# name read back from it. A firm's forms (`SRL`, `GmbH`) name no person.
_SOLE_TRADER_FORMS = tuple(_TABLE["sole_trader_forms"])
_SOLE_TRADER_NAME = re.compile(
    rf"(?<![\w'’-]){_CAPITALISED}(?:[ \t]{_CAPITALISED}){{1,{_MOST_WORDS - 1}}}[ \t]+\Z"
)
_AFTER_A_FORM = re.compile(r"(?:[ \t]*(?:[,;)|\n]|\Z)|[ \t]+(?![A-Za-z]))")
_FORM_REACH = 80


@register("person_names_before_a_sole_traders_form")
class SoleTraderNameFinder:
    """The person's name before a sole trader's business form: two to four capitalised words,
    the last two kept (the family name and the given name, either first) and a first name of
    the table before them; one of them a first name of the table, none a firm's, a place's or
    a common word (`BIANCHI SRL` stays)."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=tuple({form.lower() for form in _SOLE_TRADER_FORMS}))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for form in _SOLE_TRADER_FORMS:
            at = text.find(" " + form)
            while at >= 0:
                span = _sole_traders_name(text, at, at + 1 + len(form))
                if span is not None:
                    yield Span(*span, KIND)
                at = text.find(" " + form, at + 1)


def _sole_traders_name(text: str, space: int, after: int) -> tuple[int, int] | None:
    """(start, end) of the name before the form that ends at `after`, or None."""
    if not _AFTER_A_FORM.match(text, after):
        return None  # `MEI` inside `MEIN`, `s.p.` of `s.p.a.`
    run = _SOLE_TRADER_NAME.search(text, max(0, space - _FORM_REACH), space + 1)
    if run is None:
        return None
    words = list(_CAPITALISED_WORD.finditer(text, run.start(), space))
    if any(_not_a_name_word(word.group()) or word.group().lower() in _COMMON_WORDS
           or word.group().lower() in _PLACE_WORDS or word.group().lower() in _PLACE_STARTS
           for word in words[-2:]):  # fmt: skip
        return None
    first = len(words) - 2
    while first > 0 and words[first - 1].group() in _FIRST_NAMES:
        first -= 1  # `Ana Maria Popescu PFA`
    if not any(_first_name_part(word.group()) for word in words[first:]):
        return None
    return words[first].start(), words[-1].end()


def _first_name_part(word: str) -> bool:
    """`word`, or a part of it before a hyphen (`Vlad-Mihai`), is a first name of the table."""
    return any(part in _FIRST_NAMES for part in (word, *word.split("-")))


# A report's person, the family name in capitals before the given name or after it (`BIANCHI
# Marco, nato a Torino`, `Luca VERDI, născut la`), then a word of birth: the word found first,
# the name read back from it.
_BIRTH_WORDS = tuple(_TABLE["birth_words"])
_BIRTH_WORD_ENDS = WordEnds(_BIRTH_WORDS)
_IN_CAPITALS = rf"[{_UPPER}][{_UPPER}'’-]+"
_NAME_THEN_BIRTH = re.compile(
    rf"(?<![\w'’-])(?P<name>(?P<family>{_IN_CAPITALS}(?:[ \t]{_IN_CAPITALS})?)[ \t]"
    rf"(?P<given>{_CAPITALISED}(?:[ \t]{_CAPITALISED})?)"
    rf"|(?P<given2>{_CAPITALISED}(?:[ \t]{_CAPITALISED})?)[ \t]"
    rf"(?P<family2>{_IN_CAPITALS}(?:[ \t]{_IN_CAPITALS})?))"
    r"[ \t]*[,(]?[ \t]*\Z"
)
_BIRTH_REACH = 70
_TWO_CAPITALS = re.compile(rf"[{_UPPER}]{{2}}")


@register("person_names_before_a_birth")
class BirthNameFinder:
    """A person's name in a report or a deed, its family name in capitals, then where and when
    the person was born (`si presenta BIANCHI Marco, nato a ...`): the given name a first name
    of the table, the family name no firm's or common word's."""

    kinds = frozenset({KIND})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=_BIRTH_WORDS)  # (not `natoque`, `bornholm`)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        lower = view.lower
        for end in _BIRTH_WORD_ENDS.char_ends(lower):
            if lower[end : end + 1].isalpha():
                continue  # `natoque`, `bornholm`
            birth = min(end - len(word) for word in _BIRTH_WORDS if lower.endswith(word, 0, end))
            start = max(0, birth - _BIRTH_REACH)
            if _TWO_CAPITALS.search(text, start, birth) is None:
                continue  # no word in capitals before it (`I was born in Ohio`)
            match = _NAME_THEN_BIRTH.search(text, start, birth)
            if match is None:
                continue
            family = (match["family"] or match["family2"]).split()
            given = (match["given"] or match["given2"]).split()
            if given[0] not in _FIRST_NAMES or any(
                word.lower() in _NOT_PERSONS or word.lower() in _COMMON_WORDS for word in family
            ):
                continue
            name = match.span("name")
            yield Span(*name, KIND)
