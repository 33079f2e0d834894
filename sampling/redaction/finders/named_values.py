"""Personal values that only a word before them tells apart from any other number: a date of
birth (`DOB: 03/14/1985`, `né le 14 mars 1985`, `出生日期：1985年3月14日`, a vCard's
`BDAY:19850314`), a bank account or
routing number (`account number 0012 3456 789`, `Kontonummer 1234567890`, `账号6222...`), and
the number of a driver's licence, medical record, insurance or membership (`MRN 00482913`,
`driver's license D1234-5678-9012`). A date or a run of digits alone is everywhere in text and
code, so a value is taken only in the few characters after a word that names it, and only in the
shape that word's kind has. The words come in some forty languages; a date also in the
calendars forms use (the Thai Buddhist year, the Persian solar and the Islamic lunar year, the
Japanese and Taiwanese eras: `昭和60年3月14日`, `民國84年3月15日`). A date of birth is also read
before a mark that says so (`07.09.1979 г.р.`, `1990年11月2日出生`) and after the place of birth
(`nato a Torino il 03/05/1975`, `born in Leeds on 2 March 1980`). An account, a record with a
word of an order, an invoice or a delivery between its name and itself is left. A few numbers
are read off their own names instead, as they need not hold four digits in a row: a booking
reference (`PNR: 6HQ3VK`), a frequent-flyer, loyalty, transit or library card's number
(`Skywards: EK 512883401`), a UPI id (`UPI from mehta.ritesh@okicici`), an account after a
UK sort code (`40-11-62 / 81726354`) or after a Thai or Taiwanese bank's name (`กสิกร
073-8-41592-6`, `中國信託(822) 4018-5527-3961`). Between an account's word and its number may
stand the bank's and the holder's names (`Rekening BNI a/n Siti Aminah 0123456789`); a Czech
account with its bank's code (`19-2000145399/0800`) must pass its checks.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Iterator
from datetime import date

from stdnum.cz import bankaccount as cz_bankaccount

from sampling.redaction.context import NamesBeforeNumbers, either, word_ends
from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers

BIRTH, ACCOUNT, ROUTING, RECORD = "BIRTH_DATE", "ACCOUNT_NUMBER", "ROUTING", "RECORD_NUMBER"

_TABLE = table("named_values.json")
# The words (lower case) that name a value, and what they name. ROUTING is an account number
# whose nine digits must pass the ABA check.
# Each word also as the normalised view spells it (NFKC: Thai `ำ` is two characters there).
_NAMED: dict[str, str] = {
    spelling: kind
    for kind, words in _TABLE["names"].items()
    for word in words
    for spelling in {word, unicodedata.normalize("NFKC", word)}
}
# Words that say where someone was born, the place then the date after them (`nato a Torino il
# 03/05/1975`): a date of birth as the others name one, the place's words between. Looked for
# by their first word (`born`, `nato`), rare in prose, not their last (`in`, `a`) before every
# number: {the first word: the words after it that the place follows}.
_BIRTH_PLACE: dict[str, set[str]] = {}
for _phrase in _TABLE["birth_place"]:
    for _spelling in {_phrase, unicodedata.normalize("NFKC", _phrase)}:
        _head, _, _preposition = _spelling.rpartition(" ")
        _BIRTH_PLACE.setdefault(_head, set()).add(_preposition)
# (The first words that name no date of their own, `nato`, only with a place after them.)
_ONLY_BEFORE_A_PLACE = frozenset(_BIRTH_PLACE) - set(_NAMED)
_NAMED.update(dict.fromkeys(_ONLY_BEFORE_A_PLACE, BIRTH))
_NAMES = NamesBeforeNumbers(_NAMED, reach=48)
_PLACE_WITHIN = 44  # characters between such words and the date (`Reggio nell'Emilia il `)
# A place's name: capitalised words, and between or after them only these small words.
_PLACE_GAP = re.compile(r"[ \t]+(?:[^\W\d_][\w'’.-]*,?[ \t]+){1,6}")
_PLACE_SMALL_WORDS = frozenset({"on", "the", "of", "upon", "il", "el", "em", "le", "la", "de",
                                "del", "da", "do", "di", "dei", "nel", "nell'", "en", "a", "à",
                                "au", "am", "im", "an", "der", "den", "dem", "te", "op", "w",
                                "dnia", "v", "dne", "в", "у"})  # fmt: skip
# Marks that follow a date of birth (`07.09.1979 г.р.`, `1990年11月2日出生`); one character
# alone (`生`, `생`) only right after the date and before no word of its script (`生效`).
_BIRTH_AFTER = tuple(
    sorted(
        {m for mark in _TABLE["birth_after"] for m in {mark, unicodedata.normalize("NFKC", mark)}}
    )
)
_WORD_AFTER_A_MARK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]")
_DAY_SIGNS = ("日", "일")
_DATE_BEFORE_MARK = 32  # characters: the longest date form (`12 de septiembre de 1985 `)
# Four digits after a word in lower case, alone (`built in 1871,`): a year in prose, unless
# the word is a month's name (`October 1987`, `marzo de 1985`). No value here starts or ends
# with a year alone, and prose is full of them.
_YEAR_AFTER_A_WORD = re.compile(r"(?<=[a-z] )[0-9]{4}(?![0-9A-Za-z]|[.,/ -][0-9])")
_WITHIN = 24  # characters between the word and its value (`: `, ` is `, ` (MM/DD/YYYY): `)
# Words that name other things too (`the account has 1234567 followers`, `born in Leeds on
# ...`, `DL` a download, `acc` an accuracy, `routing` a network's): their value must follow at
# once (`account 12345678`, `account #: ...`, `born 7/22/1990`, `DL: D1234567`, `acc 55779911`).
_AT_ONCE = {"account": 4, "konto": 3, "born": 2, "geboren": 2, "dl": 2, "acc": 2, "routing": 3,
            "cuenta": 4, "conta": 4, "rekening": 3, "rek.": 2, "rib": 3, "stk": 3, "akaun": 3,
            "polis": 3, "nim": 3, "nip": 3, "lahir": 3, "née": 2, "doğum": 3, "出生": 2,
            # Czech's and Slovak's `účet` is a bill too (`účet za elektřinu 125 000 Kč`)
            "účet": 4, "na účet": 4, "účtu": 4,
            # Italian's `utente` is a user: Portugal's SNS number follows at once (`utente n.º `)
            "utente": 6,
            # a bank's name before its customer's account (`transfer ke BCA 1234567890`)
            "bca": 2, "bri": 2, "bni": 2, "mandiri": 2, "maybank": 2, "cimb": 2, "bdo": 2,
            "bpi": 2, "landbank": 2,
            # a software's licence too (`License: MIT`): a driver's number follows at once
            "license": 3, "licence": 3,
            # a key's last word (`"nascimento": ...`, `dt_nasc`, `fechaNac`): its value next
            "nascimento": 3, "nascita": 3, "naissance": 3, "birth": 3, "nasc": 3,
            "nac": 3}  # fmt: skip
# Words of numbers that are no person's (an order, an invoice, a delivery, a booking): a value
# with one between its name and itself, or in a longer word its name starts (`счет-фактура`),
# is left.
_NOT_PERSONAL = re.compile("|".join(map(re.escape, _TABLE["not_personal"])), re.IGNORECASE)


# The bank's name, the holder's after `a/n`, a pronoun or a preposition, between an account's
# word and its number (`Rekening BNI a/n Siti Aminah 0123456789`, `akaun Maybank saya 1642 ...`):
# skipped, so that the number still follows the word at once. A name is capitalised words.
_BETWEEN = _TABLE["account_between"]
_BANK_AND_HOLDER = re.compile(
    rf"(?:[ \t]*(?i:{either(_BETWEEN['banks'] + _BETWEEN['words'])})(?![^\W\d_])"
    rf"|[ \t]*,?[ \t]*(?i:{either(_BETWEEN['holder'])})[ \t]+[A-Z][\w'.-]*"
    r"(?:[ \t]+[A-Z][\w'.-]*){0,3}){1,4}"
)

_MONTHS = {name: int(number) for number, names in _TABLE["months"].items() for name in names}
_MONTHS.update({unicodedata.normalize("NFKC", name): number for name, number in _MONTHS.items()})
# A day with an ordinal's ending (`4th`), between a month and a year.
_ORDINAL_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)")
_MONTH = either(_MONTHS)
_DAY_SUFFIX = r"(?:st|nd|rd|th|er|\.)?"
# The eras years are counted from on Japanese and Taiwanese forms (`昭和60年`, `民國84年`): the
# year before the era's first.
_ERAS = {"明治": 1867, "大正": 1911, "昭和": 1925, "平成": 1988, "令和": 2018, "民國": 1911,
         "民国": 1911, "中華民國": 1911}  # fmt: skip
_ERA = "|".join(sorted(_ERAS, key=len, reverse=True))
# A month and an ordinal day before a year (`july 4th 1992`): the year is the date's.
# A date in the forms people write one: 1985-03-14, 14/03/1985, 3/14/85, 14.03.1985,
# 14 March 1985, March 14, 1985, 14 de marzo de 1985, 1985年3月14日, 1996년 2월 14일.
_DATE_FORMS = {
    "iso": r"(?P<iso_y>\d{4})\s?[-/.年년]\s?(?P<iso_m>\d{1,2})\s?[-/.月월]\s?"
           r"(?P<iso_d>\d{1,2})[日일]?",
    "numbers": r"(?P<a>\d{1,2})(?:[-/]|\.\s?)(?P<b>\d{1,2})(?:[-/]|\.\s?)"
               r"(?P<num_y>\d{4}|\d{2})",
    "day_month": rf"(?P<day_d>\d{{1,2}}){_DAY_SUFFIX}\s*(?:of\s+|de\s+|ng\s+)?"
                 rf"(?P<day_m>{_MONTH})\.?,?\s+(?:de\s+|พ\.ศ\.\s?)?(?P<day_y>\d{{4}})",
    "month_day": rf"(?P<mon_m>{_MONTH})\.?\s+(?P<mon_d>\d{{1,2}}){_DAY_SUFFIX},?\s+"
                 rf"(?P<mon_y>\d{{4}})",
    # Year first, then the month's name: 1985. június 12., 1985 m. birželio 12 d.
    "year_month": rf"(?P<ym_y>\d{{4}})\.?\s+(?:m\.\s+)?(?P<ym_m>{_MONTH})\.?\s+"
                  rf"(?P<ym_d>\d{{1,2}})(?![0-9])",
    # 12 tháng 6 năm 1985
    "vietnamese": r"(?P<vn_d>\d{1,2})\s+tháng\s+(?P<vn_m>\d{1,2}),?\s+(?:năm\s+)?"
                  r"(?P<vn_y>\d{4})",
    # An era's year: 昭和60年3月14日, 民國84年3月15日
    "era": rf"(?P<era>{_ERA})\s?(?P<era_y>\d{{1,3}}|元)\s?年\s?(?P<era_m>\d{{1,2}})\s?月\s?"
           rf"(?P<era_d>\d{{1,2}})日?",
    # A vCard's and a form's compact date, 19850314: a real date and nothing longer.
    "compact": r"(?P<compact_y>(?:19|20)\d\d)(?P<compact_m>[01]\d)(?P<compact_d>[0-3]\d)",
}  # fmt: skip
_DATE = re.compile("|".join(_DATE_FORMS.values()), re.IGNORECASE)
# The same without the forms that name the month, for a window that holds no month's name: an
# alternation of some 500 names tried at each place cost a search 230 µs.
_NAMED_MONTH_FORMS = ("day_month", "month_day", "year_month")
_DATE_IN_NUMBERS = re.compile(
    "|".join(form for name, form in _DATE_FORMS.items() if name not in _NAMED_MONTH_FORMS),
    re.IGNORECASE,
)
# A window's words: Latin letters apart from what is glued to them (`是August`), and runs of
# other scripts whole (Thai's vowel signs are no \w).
_WINDOW_WORDS = re.compile(r"[a-zß-ÿā-ɏ]+|[^\s\d.,:;/()\-a-zß-ÿā-ɏ]+")
_END = re.compile(r"(?![0-9A-Za-z])")
_CURRENCY = frozenset("$€£¥₹₽")
_DECIMALS = re.compile(r"[.,]\d")
# An account: an IFSC code (4 letters, 0, 6 letters or digits), or 6 to 20 digits in groups.
# Or a Czech or Slovak one, its prefix, number and bank's code (94-9156494474/0800); or 6 to 30
# digits (an Argentine CBU has 22, a Polish account 26).
_ACCOUNT = re.compile(r"[A-Z]{4}0[A-Z0-9]{6}|(?:\d{1,6}-)?\d{6,10}/\d{4}|\d(?:[ -]?\d){5,29}")
# A licence or record number: letters, digits and a single hyphen, dot or slash between them
# (`KH-77.481.0092`, `0239871455/2024`), 5 to 24, at least 4 digits; groups of digits after it.
# A state's or an airline's letters may come first (`NSW 14829573`, `CA D1234567`, `EK
# 512883401`); a customer's number is also written in short groups (`1084 2291 77`).
_RECORD = re.compile(
    r"(?:[A-Z]{2,3} (?=[A-Z]?\d{5}))?"
    r"(?:(?=(?:[A-Za-z./-]*\d){4})[A-Za-z0-9](?:[A-Za-z0-9]|[-./](?=[A-Za-z0-9])){4,23}"
    r"(?: \d{3,4}(?![A-Za-z0-9]))*"  # digits in groups: `BCX 447 918 203`
    r"|[A-Z0-9]{2,4}(?: \d{2,4}){2,4}(?![A-Za-z0-9]))"
)


@register("named_values")
class NamedValueFinder:
    """A date of birth, an account or routing number, or a licence or record number, right
    after a word that names it (module docstring)."""

    kinds = frozenset({BIRTH, ACCOUNT, RECORD})
    priority = PERSONAL_PRIORITY
    # NamesBeforeNumbers reads them whole; a label spaced out (`Date  of  Birth  :`) by its
    # last word after two spaces.
    triggers = Triggers(
        whole_words=tuple(_NAMED),
        words=(
            *{"  " + word.rsplit(" ", 1)[-1] for word in _NAMED if " " in word},
            *_BIRTH_AFTER,
        ),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if view.has_number(4):
            # Every value here holds a run of four digits or more (a date its year or its digits,
            # an account its digits), and its name comes in the few characters before it.
            runs = [start for start, end in view.number_runs if _may_be_named(view, start, end)]
        else:  # but an era's year (`昭和60年3月14日`)
            runs = []
        if not view.text.isascii():
            if runs:
                yield from _dates_before_marks(view)
            if any(era in view.text for era in _ERAS):
                runs = sorted({*runs, *(m.start() for m in _ERA_YEAR.finditer(view.text))})
        if not runs:
            return
        lower = view.lower
        for end, word in sorted(_NAMES.find(lower, runs).items()):
            kind = _NAMED[word]
            place = _place_after(lower, end, word) if word in _BIRTH_PLACE else None
            if place is not None:
                span = _value_after(view.text, place, kind, _PLACE_WITHIN, place=True)
            elif word in _ONLY_BEFORE_A_PLACE:
                continue
            else:
                at = end
                if kind == ACCOUNT and (between := _BANK_AND_HOLDER.match(view.text, end)):
                    at = between.end()
                span = _value_after(view.text, at, kind, _AT_ONCE.get(word, _WITHIN))
            if (
                span is not None
                and kind != BIRTH
                and _NOT_PERSONAL.search(lower, end - len(word), span.start) is not None
            ):
                continue  # an order's, an invoice's number (`счет-фактура № ...`)
            if span is not None:
                yield span


# Numbers read off their own names (the table's `codes`): a booking reference holds as few as
# two digits among its capitals, a UPI id none, so no run of digits shows where to look. Only
# punctuation and a few words may stand between the name and its value (`PNR: `, `Flying Blue
# number `, `AAdvantage # `), which leaves `Booking reference will be sent` and `Flying Blue
# miles earned: 2400`.
_CODE_BETWEEN = re.compile(
    r"(?:[ \t:：#№=.\-–—(]+|(?:number|num|no|nr|n[°º]|id|is|code|ref|card|membership|member)"
    r"(?![a-z]))*"
)
_CODE_BETWEEN_MOST = 16  # characters


def _code_group(group: dict) -> tuple[str, re.Pattern[str], tuple[str, ...], bytes | None]:
    names = {s for name in group["names"] for s in {name, unicodedata.normalize("NFKC", name)}}
    value = re.compile(rf"(?:{group['value']})(?![A-Za-z0-9])")
    shape = group.get("shape")
    return group["kind"], value, tuple(sorted(names)), shape.encode() if shape else None


_CODES = tuple(_code_group(group) for group in _TABLE["codes"].values())


@register("named_codes")
class NamedCodeFinder:
    """A booking reference, a frequent-flyer, loyalty, transit or library card's number, or a
    UPI id right after its name, and an account after a UK sort code (`_CODES`)."""

    kinds = frozenset({RECORD, ACCOUNT})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        whole_words=tuple({name for _, _, names, _ in _CODES for name in names}),
        shapes=tuple(shape for _, _, _, shape in _CODES if shape),
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text, lower = view.text, view.lower
        ascii_text = text.isascii()
        found: set[tuple[int, int]] = set()
        for kind, value, names, shape in _CODES:
            if shape is not None and view.has_number(8):
                for match in value.finditer(text):
                    span = _value_span(match)
                    if span not in found:
                        found.add(span)
                        yield Span(*span, kind)
            for name in names:
                if (ascii_text and not name.isascii()) or name not in lower:
                    continue
                for end in word_ends(lower, name, whole=True):
                    between = _CODE_BETWEEN.match(lower, end)
                    at = between.end()
                    if at - end > _CODE_BETWEEN_MOST or (at == end and name.isascii()):
                        continue
                    match = value.match(text, at)
                    if match is not None and (span := _value_span(match)) not in found:
                        found.add(span)  # (`中國信託(822) 4018-...`: the bank's code is no part)
                        yield Span(*span, kind)


_ERA_YEAR = re.compile(rf"(?:{_ERA})\s?(?:\d{{1,3}}|元)\s?年")


def _may_be_named(view: Text, start: int, end: int) -> bool:
    """Not a year alone in prose (`built in 1871,`) nor a decimal (641.5; a date written with
    dots has two: 14.03.1985): prose is full of both, and no value here is one."""
    year_alone = _YEAR_AFTER_A_WORD.match(view.text, start) is not None and not _month_before(
        view.lower, start
    )
    return not year_alone and view.text.count(".", start, end) != 1


def _month_before(lower: str, start: int) -> bool:
    """A month's name right before a year (`october 1987`, `marzo de 1985`), or with an ordinal
    day between them (`july 4th 1992`); or `năm` (year), which ends a Vietnamese date (`12
    tháng 6 năm 1985`). Read off the words, not by a search for each month's name."""
    words = lower[max(0, start - 24) : start].split()
    if len(words) > 1 and words[-1] in ("de", "of"):
        words.pop()
    if len(words) > 1 and _ORDINAL_DAY.fullmatch(words[-1]):
        words.pop()
    return bool(words) and (words[-1].rstrip(".,") in _MONTHS or words[-1] == "năm")


def _dates_before_marks(view: Text) -> Iterator[Span]:
    """A date of birth before a mark that says so (`07.09.1979 г.р.`, `1988年4月5日生まれ`)."""
    text, lower = view.text, view.lower
    found = set()
    for mark in _BIRTH_AFTER:
        at = lower.find(mark)
        while at >= 0:
            end = at + len(mark)
            single = len(mark) == 1
            before = text[max(0, at - 3) : at].rstrip(" \t,(")[-1:]
            # A date ends in a digit or a day's sign (`2日`, `2일`): the rest are no dates.
            if (before.isdigit() or before in _DAY_SIGNS) and not (
                single and _WORD_AFTER_A_MARK.match(text, end)
            ):
                start = max(0, at - _DATE_BEFORE_MARK)
                date_match = _date_ending(text[start:at], at_once=single)
                if date_match is not None:
                    found.add((start + date_match.start(), start + date_match.end()))
            at = lower.find(mark, end)
    for start, end in sorted(found):
        yield Span(start, end, BIRTH)


def _date_ending(window: str, at_once: bool) -> re.Match[str] | None:
    """The real date that ends `window` (a space or a comma after it, unless `at_once`)."""
    named = any(word in _MONTHS for word in _WINDOW_WORDS.findall(window.lower()))
    last = None
    for match in (_DATE if named else _DATE_IN_NUMBERS).finditer(window):
        last = match
    if last is None or _ascii_alnum(window[last.start() - 1 : last.start()]):
        return None
    rest = window[last.end() :]
    if (rest if at_once else rest.strip(" \t,(")) or not _real_date(last):
        return None
    return last


def _place_after(lower: str, end: int, word: str) -> int | None:
    """Where the place starts after `born` and its `in` (`nato a`, `née à`), if they are."""
    parts = lower[end : end + 16].split(None, 2)
    if lower[end : end + 1] in (" ", "\t") and parts and parts[0] in _BIRTH_PLACE[word]:
        return lower.index(parts[0], end) + len(parts[0])
    return None


def _place_between(gap: str) -> bool:
    """What stands between `born in` and a date is a place's name: nothing, or capitalised
    words with only small words between or after them (`Leeds on`, `Reggio nell'Emilia il`),
    not a sentence that goes on (`Leeds, moved to York on`)."""
    if not gap.strip(" \t:,"):
        return True
    if _PLACE_GAP.fullmatch(gap) is None:
        return False
    words = [word.rstrip(",") for word in gap.split()]
    return words[0][0].isupper() and all(
        word[0].isupper()
        or word.lower() in _PLACE_SMALL_WORDS
        or word.rpartition("'")[2][:1].isupper()  # `nell'Emilia`, `d'Ampezzo`
        for word in words
    )


def _value_after(
    text: str, position: int, kind: str, within: int, place: bool = False
) -> Span | None:
    window = text[position : position + within + 40].split("\n", 1)[0]
    pattern = _RECORD if kind == RECORD else _ACCOUNT
    if kind == BIRTH:  # the months' names only where the window holds one
        named = any(word in _MONTHS for word in _WINDOW_WORDS.findall(window.lower()))
        pattern = _DATE if named else _DATE_IN_NUMBERS
    for match in pattern.finditer(window):
        if match.start() > within:
            return None
        if place and not _place_between(window[: match.start()]):
            return None
        before = window[match.start() - 1 : match.start()]
        if _ascii_alnum(before) or not _END.match(window, match.end()):
            continue  # part of a longer word or number
        if before in _CURRENCY or _DECIMALS.match(window, match.end()):
            continue  # an amount ($1234567, 1234567.50), not an account
        if kind == BIRTH and not _real_date(match):
            continue
        if kind == BIRTH and window.startswith(("'s", "’s"), match.end()):
            return None  # a day's own (`born in Leeds on 14 March 1985's eve`): no one's birth
        if kind == ROUTING and not _aba_valid(match.group()):
            continue
        if kind == ACCOUNT and "/" in match.group() and not cz_bankaccount.is_valid(match.group()):
            continue  # not a Czech account and its bank's code (`123456/7890`: a ratio)
        if kind == RECORD and _a_day(match.group()):
            continue  # `matrícula de 27/01 a 31/01`: the dates of a course, no number
        start = position + match.start()
        return Span(start, position + match.end(), ACCOUNT if kind == ROUTING else kind)
    return None


# A day and month (27/01, 31.01.), the year or not: a record's number is never one.
_DAY_AND_MONTH = re.compile(r"(\d{1,2})[/.-](\d{1,2})(?:[/.-](?:\d{2}|\d{4}))?\.?")


def _a_day(value: str) -> bool:
    match = _DAY_AND_MONTH.fullmatch(value)
    if match is None:
        return False
    first, second = int(match.group(1)), int(match.group(2))
    return (1 <= first <= 31 and 1 <= second <= 12) or (1 <= first <= 12 and 1 <= second <= 31)


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
    if groups["vn_y"]:
        return _exists(groups["vn_y"], groups["vn_m"], groups["vn_d"])
    if groups["era"]:
        year = 1 if groups["era_y"] == "元" else int(groups["era_y"])
        return _exists(str(_ERAS[groups["era"]] + year), groups["era_m"], groups["era_d"])
    for y, m, d in (
        ("day_y", "day_m", "day_d"),
        ("ym_y", "ym_m", "ym_d"),
        ("mon_y", "mon_m", "mon_d"),
    ):
        if groups.get(y):  # (not in _DATE_IN_NUMBERS's groups)
            month = _MONTHS.get(groups[m].lower())
            return month is not None and _exists(groups[y], str(month), groups[d])
    return False


# Years of the calendars forms use besides the Gregorian: the Thai Buddhist era (2533 is 1990)
# and the Persian solar and the Islamic lunar year (1370, 1410), from how far they run ahead of
# or behind it.
_BUDDHIST = 543
_HIJRI = (579, 622)  # the lunar year's lag behind the Gregorian, today and in 1900


def _exists(year: str, month: str, day: str) -> bool:
    y, m, d = int(year), int(month), int(day)
    today = date.today().year
    if not 1 <= m <= 12 or d < 1:
        return False
    if 1900 + _BUDDHIST <= y <= today + _BUDDHIST:
        y -= _BUDDHIST
    elif 1900 - _HIJRI[1] <= y <= today - _HIJRI[0]:
        return d <= (31 if m <= 6 else 30)  # a solar month; a lunar one has 29 or 30 days
    if not 1900 <= y <= today:
        return False
    return d <= calendar.monthrange(y, m)[1]


def _aba_valid(value: str) -> bool:
    """A US routing (ABA) number: nine digits whose 3-7-1 weighted sum is a multiple of 10."""
    digits = [int(char) for char in value if char.isdigit()]
    if len(digits) != 9:
        return False
    return sum(weight * digit for weight, digit in zip((3, 7, 1) * 3, digits)) % 10 == 0  # noqa: B905


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """The code a match holds: its `value` group where its pattern has one."""
    return match.span("value") if "value" in match.re.groupindex else match.span()
