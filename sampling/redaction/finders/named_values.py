"""Personal values that only a word before them tells apart from any other number: a date of
birth (`DOB: 03/14/1985`, `né le 14 mars 1985`, `出生日期：1985年3月14日`, a vCard's
`BDAY:19850314`), a bank account or
routing number (`account number 0012 3456 789`, `Kontonummer 1234567890`, `账号6222...`), and
the number of a driver's licence, medical record, insurance or membership (`MRN 00482913`,
`driver's license D1234-5678-9012`). A date or a run of digits alone is everywhere in text and
code, so a value is taken only in the few characters after a word that names it, and only in the
shape that word's kind has.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import date

from sampling.redaction.context import NamesBeforeNumbers
from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

BIRTH, ACCOUNT, ROUTING, RECORD = "BIRTH_DATE", "ACCOUNT_NUMBER", "ROUTING", "RECORD_NUMBER"

_TABLE = table("named_values.json")
# The words (lower case) that name a value, and what they name. ROUTING is an account number
# whose nine digits must pass the ABA check.
_NAMED: dict[str, str] = {word: kind for kind, words in _TABLE["names"].items() for word in words}
_NAMES = NamesBeforeNumbers(_NAMED, reach=48)
# Four digits after a word in lower case, alone (`built in 1871,`): a year in prose, unless
# the word is a month's name (`October 1987`, `marzo de 1985`). No value here starts or ends
# with a year alone, and prose is full of them.
_YEAR_AFTER_A_WORD = re.compile(r"(?<=[a-z] )[0-9]{4}(?![0-9A-Za-z]|[.,/ -][0-9])")
_WITHIN = 24  # characters between the word and its value (`: `, ` is `, ` (MM/DD/YYYY): `)
# Words that name other things too (`the account has 1234567 followers`, `born in Leeds on
# ...`, `DL` a download, `acc` an accuracy, `routing` a network's): their value must follow at
# once (`account 12345678`, `account #: ...`, `born 7/22/1990`, `DL: D1234567`, `acc 55779911`).
_AT_ONCE = {"account": 4, "konto": 3, "born": 2, "geboren": 2, "dl": 2, "acc": 2, "routing": 3}

_MONTHS = {name: int(number) for number, names in _TABLE["months"].items() for name in names}
_MONTH_BEFORE_YEAR = tuple(f"{month}{joint} " for month in _MONTHS for joint in ("", " de", " of"))
_MONTH = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_DAY_SUFFIX = r"(?:st|nd|rd|th|er|\.)?"
# A month and an ordinal day before a year (`july 4th 1992`): the year is the date's.
_MONTH_AND_DAY = re.compile(rf"(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)\s$")
# A date in the forms people write one: 1985-03-14, 14/03/1985, 3/14/85, 14.03.1985,
# 14 March 1985, March 14, 1985, 14 de marzo de 1985, 1985年3月14日, 1996년 2월 14일.
_DATE = re.compile(
    rf"(?P<iso_y>\d{{4}})\s?[-/.年년]\s?(?P<iso_m>\d{{1,2}})\s?[-/.月월]\s?(?P<iso_d>\d{{1,2}})[日일]?"
    rf"|(?P<a>\d{{1,2}})[-/.](?P<b>\d{{1,2}})[-/.](?P<num_y>\d{{4}}|\d{{2}})"
    rf"|(?P<day_d>\d{{1,2}}){_DAY_SUFFIX}\s*(?:of\s+|de\s+)?(?P<day_m>{_MONTH})\.?,?\s+"
    rf"(?:de\s+)?(?P<day_y>\d{{4}})"
    rf"|(?P<mon_m>{_MONTH})\.?\s+(?P<mon_d>\d{{1,2}}){_DAY_SUFFIX},?\s+(?P<mon_y>\d{{4}})"
    # A vCard's and a form's compact date, 19850314: a real date and nothing longer.
    rf"|(?P<compact_y>(?:19|20)\d\d)(?P<compact_m>[01]\d)(?P<compact_d>[0-3]\d)",
    re.IGNORECASE,
)
_END = re.compile(r"(?![0-9A-Za-z])")
_CURRENCY = frozenset("$€£¥₹₽")
_DECIMALS = re.compile(r"[.,]\d")
# An account: an IFSC code (4 letters, 0, 6 letters or digits), or 6 to 20 digits in groups.
_ACCOUNT = re.compile(r"[A-Z]{4}0[A-Z0-9]{6}|\d(?:[ -]?\d){5,19}")
# A licence or record number: letters, digits and single hyphens, 5 to 20, at least 4 digits.
_RECORD = re.compile(r"(?=(?:[A-Za-z-]*\d){4})[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){4,19}")


@register("named_values")
class NamedValueFinder:
    """A date of birth, an account or routing number, or a licence or record number, right
    after a word that names it (module docstring)."""

    kinds = frozenset({BIRTH, ACCOUNT, RECORD})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=tuple(_NAMED))  # NamesBeforeNumbers reads them whole
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(4):
            return
        # Every value here holds a run of four digits or more (a date its year or its digits, an
        # account its digits), and its name comes in the few characters before it.
        runs = (start for start, end in view.number_runs if _may_be_named(view, start, end))
        for end, word in sorted(_NAMES.find(view.lower, runs).items()):
            span = _value_after(view.text, end, _NAMED[word], _AT_ONCE.get(word, _WITHIN))
            if span is not None:
                yield span


def _may_be_named(view: Text, start: int, end: int) -> bool:
    """Not a year alone in prose (`built in 1871,`) nor a decimal (641.5; a date written with
    dots has two: 14.03.1985): prose is full of both, and no value here is one."""
    year_alone = _YEAR_AFTER_A_WORD.match(view.text, start) is not None and not (
        view.lower.endswith(_MONTH_BEFORE_YEAR, 0, start)
        or _MONTH_AND_DAY.search(view.lower, max(0, start - 24), start) is not None
    )
    return not year_alone and view.text.count(".", start, end) != 1


def _value_after(text: str, position: int, kind: str, within: int) -> Span | None:
    window = text[position : position + within + 40].split("\n", 1)[0]
    pattern = _DATE if kind == BIRTH else _RECORD if kind == RECORD else _ACCOUNT
    for match in pattern.finditer(window):
        if match.start() > within:
            return None
        before = window[match.start() - 1 : match.start()]
        if _ascii_alnum(before) or not _END.match(window, match.end()):
            continue  # part of a longer word or number
        if before in _CURRENCY or _DECIMALS.match(window, match.end()):
            continue  # an amount ($1234567, 1234567.50), not an account
        if kind == BIRTH and not _real_date(match):
            continue
        if kind == ROUTING and not _aba_valid(match.group()):
            continue
        start = position + match.start()
        return Span(start, position + match.end(), ACCOUNT if kind == ROUTING else kind)
    return None


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _real_date(match: re.Match[str]) -> bool:
    """A day that exists, in a year someone alive was born (either order for 03/04/1985)."""
    groups = match.groupdict()
    if groups["iso_y"]:
        return _exists(groups["iso_y"], groups["iso_m"], groups["iso_d"])
    if groups["num_y"]:
        year = groups["num_y"] if len(groups["num_y"]) == 4 else f"19{groups['num_y']}"
        return _exists(year, groups["b"], groups["a"]) or _exists(year, groups["a"], groups["b"])
    if groups["compact_y"]:
        return _exists(groups["compact_y"], groups["compact_m"], groups["compact_d"])
    if groups["day_y"]:
        month = str(_MONTHS[groups["day_m"].lower()])
        return _exists(groups["day_y"], month, groups["day_d"])
    month = str(_MONTHS[groups["mon_m"].lower()])
    return _exists(groups["mon_y"], month, groups["mon_d"])


def _exists(year: str, month: str, day: str) -> bool:
    y, m, d = int(year), int(month), int(day)
    if not 1900 <= y <= date.today().year or not 1 <= m <= 12:
        return False
    return 1 <= d <= calendar.monthrange(y, m)[1]


def _aba_valid(value: str) -> bool:
    """A US routing (ABA) number: nine digits whose 3-7-1 weighted sum is a multiple of 10."""
    digits = [int(char) for char in value if char.isdigit()]
    if len(digits) != 9:
        return False
    return sum(weight * digit for weight, digit in zip((3, 7, 1) * 3, digits)) % 10 == 0  # noqa: B905
