"""National identity numbers, checked with python-stdnum: the Chinese resident ID (18
characters, birth date and check digit), the Indian Aadhaar (Verhoeff) and PAN, the Brazilian
CPF (two check digits), a US SSN written without dashes, UK National Insurance numbers, and
passport numbers (those of more countries, after their names: national_ids.py).

A number in its usual written form (`123.456.789-09`, `2345 6789 0124`) is redacted on its
check digits; the same digits bare, where one in ten or a hundred random numbers would pass, only
after a word that names the document (`Aadhaar`, `CPF`, `护照`). Boundaries are ASCII, so that a
number between two CJK characters is found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from stdnum.br import cpf
from stdnum.cn import ric
from stdnum.in_ import aadhaar, pan

from sampling.redaction.checks import is_uk_nino, is_us_ssn
from sampling.redaction.context import NamedBefore
from sampling.redaction.finders import register
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, digits

# Not part of a longer token: no ASCII letter or digit beside it, nor a separator joining it to
# one (the last group of a UUID, `v2-2345...`). The first character is matched before the
# look-behinds (which then span it), so that the regex engine skips along to the next digit
# instead of trying both look-behinds at every position of the text.
_NOT_BEFORE = r"(?<![0-9A-Za-z_].)(?<![0-9A-Za-z][./_-].)"
_NOT_AFTER = r"(?![0-9A-Za-z_])(?![./_-][0-9A-Za-z])"
NAMED_WITHIN = 40  # characters between the word naming a document and its number, at most


def _named(*words: str) -> NamedBefore:
    return NamedBefore(words, gap=NAMED_WITHIN)


@dataclass(frozen=True)
class IdRule:
    kind: str
    pattern: re.Pattern[str]
    valid: Callable[[str], bool]
    named_by: NamedBefore
    bare_needs_name: bool  # without its separators, only after a word naming it
    # Runs of digits ("0") as Text.number_class writes them, one of which every match holds:
    # looked for first, with `in` on bytes, so that most texts skip the regex.
    shapes: tuple[bytes, ...]

    def scan(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in self.pattern.finditer(text):
            value = match.group()
            if not self.valid(value):
                continue
            grouped = not value.isalnum()
            if (
                self.bare_needs_name
                and not grouped
                and not self.named_by.before(text, match.start())
            ):
                continue
            yield Span(match.start(), match.end(), self.kind)


def _cn_id(value: str) -> bool:
    """The check digit and a real birth date. stdnum's is_valid also wants the birthplace code
    in its table of districts, which misses renamed and new ones: a person's number all the
    same, so the place is not checked."""
    value = value.upper()
    if value[-1] != ric.calc_check_digit(value):
        return False
    try:
        ric.get_birth_date(value)
    except ValueError:  # stdnum's InvalidComponent is one
        return False
    return True


def _ssn_digits(value: str) -> bool:
    return is_us_ssn(value[:3], value[3:5], value[5:])


ID_RULES = (
    IdRule(
        "CN_ID",
        re.compile(rf"[1-9]{_NOT_BEFORE}\d{{5}}(?:18|19|20)\d{{9}}[0-9Xx]{_NOT_AFTER}", re.ASCII),
        _cn_id,
        _named("身份证", "居民身份", "resident id", "id card", "identity"),
        bare_needs_name=False,  # a birth date and a check digit: random digits rarely pass
        shapes=(b"0" * 17,),
    ),
    IdRule(
        "IN_AADHAAR",
        re.compile(rf"[2-9]{_NOT_BEFORE}\d{{3}}([ -]?)\d{{4}}\1\d{{4}}{_NOT_AFTER}", re.ASCII),
        aadhaar.is_valid,
        _named("aadhaa?r", "आधार", "uidai", "uid"),
        bare_needs_name=True,
        shapes=(b"0" * 12, b"0000 0000 0000"),
    ),
    IdRule(
        "BR_CPF",
        re.compile(rf"\d{_NOT_BEFORE}\d{{2}}(\.?)\d{{3}}\1\d{{3}}-?\d{{2}}{_NOT_AFTER}", re.ASCII),
        cpf.is_valid,
        _named("cpf", "cadastro de pessoas", "tax id", "税号"),
        bare_needs_name=True,
        shapes=(b"0" * 11, b"000.000.000"),
    ),
    IdRule(
        "US_SSN",
        re.compile(rf"\d{_NOT_BEFORE}\d{{8}}{_NOT_AFTER}", re.ASCII),
        _ssn_digits,
        _named("ssn", "social security", "社会安全号", "社保号"),
        bare_needs_name=True,
        shapes=(b"0" * 9,),
    ),
)
_PAN = re.compile(
    rf"[A-Z]{_NOT_BEFORE}[A-Z]{{2}}[ABCFGHJLPT][A-Z]\d{{4}}[A-Z]{_NOT_AFTER}", re.ASCII
)
PASSPORT_WORDS = ("passport", "护照", "護照", "pasaporte", "passeport", "reisepass", "passaporte",
                  "パスポート", "여권", "паспорт")  # fmt: skip
_PASSPORT_ASCII = tuple(word for word in PASSPORT_WORDS if word.isascii())
_PASSPORT_NAMED = _named(*PASSPORT_WORDS)
_PASSPORT = re.compile(
    rf"[A-Z0-9]{_NOT_BEFORE}(?:(?<=[A-Z])[A-Z]?\d{{6,8}}|(?<=\d)\d{{7,8}}){_NOT_AFTER}", re.ASCII
)


@register("national_ids")
class IdFinder:
    kinds = frozenset(rule.kind for rule in ID_RULES)
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(digits(9),))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(9):
            return
        shape = view.number_class
        for rule in ID_RULES:
            if any(run in shape for run in rule.shapes):
                yield from rule.scan(view)


@register("in_pan")
class PanFinder:
    """Indian PAN: five letters (the fourth says what holds it), four digits, a letter."""

    kinds = frozenset({"IN_PAN"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[a-z]{5}[0-9]{4}[a-z]",))  # _PAN, in lower case
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number_after_capitals(4):
            return
        for match in _PAN.finditer(view.text):
            if pan.is_valid(match.group()):
                yield Span(match.start(), match.end(), "IN_PAN")


@register("passport")
class PassportFinder:
    """A passport number after a word that names a passport (no checksum to go on): one or two
    letters and 6-8 digits (China's E12345678, India's, Germany's), or 8-9 digits (US, UK)."""

    kinds = frozenset({"PASSPORT"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=PASSPORT_WORDS)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(6):
            return
        words = _PASSPORT_ASCII if view.text.isascii() else PASSPORT_WORDS
        if not any(word in view.lower for word in words):
            return
        text = view.text
        for match in _PASSPORT.finditer(text):
            if _PASSPORT_NAMED.before(text, match.start()):
                yield Span(match.start(), match.end(), "PASSPORT")


@register("uk_nino")
class NinoFinder:
    kinds = frozenset({"UK_NINO"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[a-z]{2} ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[a-d]",))
    views = ALL_VIEWS
    _NINO = re.compile(
        r"[A-CEGHJ-PR-TW-Z](?<![A-Za-z0-9][A-Z])[A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
        r"(?![A-Za-z0-9])",
        re.ASCII,
    )

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number_after_capitals(6):
            return
        for match in self._NINO.finditer(view.text):
            if is_uk_nino(match.group()[:2]):
                yield Span(match.start(), match.end(), "UK_NINO")
