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
from stdnum.it import codicefiscale

from sampling.redaction.checks import is_uk_nino, is_us_ssn
from sampling.redaction.context import OTHER_NUMBER, NamedBefore, matches, names_another_number
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
# An Aadhaar is asked for in a sentence that goes on before its number (`Aadhaar card ki copy
# chahiye urgent, mera number ...`); its Verhoeff check turns away nine in ten other runs.
AADHAAR_NAMED_WITHIN = 72


def _named(*words: str, gap: int = NAMED_WITHIN) -> NamedBefore:
    return NamedBefore(words, gap=gap)


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
            before = text[max(0, match.start() - OTHER_NUMBER.reach) : match.start()]
            if names_another_number(before):
                # A word right before it names it as another's (`Invoice number: 2024 0001
                # 7788` passes Aadhaar's check), whatever named a document further back.
                continue
            if (
                self.bare_needs_name
                and not grouped
                and not self.named_by.before(text, match.start())
            ):
                continue  # bare, only grouped as the number is written
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
        # Three groups, not three of a longer run of them (a card's `4111 1111 1111 1111`).
        re.compile(
            rf"[2-9]{_NOT_BEFORE}(?<![0-9][ -].)\d{{3}}([ -]?)\d{{4}}\1\d{{4}}"
            rf"(?![ -][0-9]){_NOT_AFTER}",
            re.ASCII,
        ),
        aadhaar.is_valid,
        _named("aadhaa?r", "आधार", "uidai", "uid", gap=AADHAAR_NAMED_WITHIN),
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
PASSPORT_WORDS = ("passport", "护照", "護照", "pasaporte", "passeport", "reisepass",
                  "reisepassnummer", "passnummer", "passnr", "passaporte",
                  "passaporto", "paspoort", "paszport", "pasaport", "旅券", "パスポート", "여권",
                  "паспорт", "جواز السفر", "جواز سفر", "الجواز", "पासपोर्ट", "hộ chiếu",
                  "ho chieu", "paspor", "หนังสือเดินทาง", "διαβατήριο", "travel document",
                  "گذرنامه", "پاسپورت", "pasaporti", "pasoš", "паспорта", "پاسپورٹ",
                  "útlevél", "cestovní pas", "cestovný pas", "vegabréf", "paso numeris",
                  "pașaport", "pasaport", "putovnica", "пасош", "potni list", "pasaporta",
                  "passaport", "pasbort", "pasport", "pasipoti", "baasaboor", "fasfo",
                  "ipasipoti", "דרכון", "პასპორტი", "անձնագիր", "ፓስፖርት", "পাসপোর্ট",
                  "கடவுச்சீட்டு", "பாஸ்போர்ட்", "పాస్‌పోర్ట్", "પાસપોર્ટ", "ਪਾਸਪੋਰਟ", "राहदानी",
                  "ಪಾಸ್‌ಪೋರ್ಟ್", "പാസ്‌പോർട്ട്", "លិខិតឆ្លងដែន", "төлқұжат")  # fmt: skip
_PASSPORT_ASCII = tuple(word for word in PASSPORT_WORDS if word.isascii())
_PASSPORT_NAMED = _named(*PASSPORT_WORDS)
# One or two letters and 6-8 digits (China's E12345678, Japan's TK1234567), three letters and 6
# digits (Colombia's PAB123456), 8 or 9 digits (US, UK), or France's two digits, two letters and
# five digits (17AB12345).
_PASSPORT = re.compile(
    rf"[A-Z0-9]{_NOT_BEFORE}(?:(?<=[A-Z])(?:[A-Z]?\d{{6,8}}|[A-Z]{{2}}\d{{6}})"
    rf"|(?<=\d)(?:\d{{7,8}}|\d[A-Z]{{2}}\d{{5}})){_NOT_AFTER}"
    # Eight or nine letters and digits, both: Canada's P1448079N, Germany's C01X00T47.
    rf"|(?<![A-Za-z0-9])(?=[A-Z0-9]{{8,9}}{_NOT_AFTER})(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{{8,9}}{_NOT_AFTER}"
    # Russia's internal passport: a series of four digits (two pairs) and six more, a `№`
    # between them or not (`45 10 482917`, `серия 45 19 № 618203`).
    r"|(?<![0-9])[0-9]{2} ?[0-9]{2}[ \t]+(?:(?:№|No\.?)[ \t]*)?[0-9]{6}(?![0-9])"  # NFKC: № is No
    # Its passport for travel abroad (`75 4812093`); letters and digits apart (`EK 4129087`).
    r"|(?<![0-9])[0-9]{2} [0-9]{7}(?![0-9])"
    rf"|(?<![A-Za-z0-9])[A-Z]{{1,2}} [0-9]{{6,8}}{_NOT_AFTER}",
    re.ASCII,
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
    # _PAN's end, in lower case: five letters repeated (`[a-z]{5}`), which prose is full of,
    # cost the one scan 1.5 µs a 2 KB record; find() checks the capitals before them.
    triggers = Triggers(shapes=(rb"[a-z][0-9]{4}[a-z]",))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number_after_capitals(4):
            return
        yield from matches(_PAN, view.text, "IN_PAN", pan.is_valid)


# Italy's codice fiscale: six letters of the name, the birth year, a month's letter, the day
# (plus 40 for a woman), the birthplace's letter and three digits, a check letter; a digit
# replaced by a letter where two people would share one (`omocodia`).
_DIGIT = "[0-9LMNPQRSTUV]"
_CODICE_FISCALE = re.compile(
    rf"(?<![A-Za-z0-9])[A-Za-z]{{6}}{_DIGIT}{{2}}[ABCDEHLMPRSTabcdehlmprst]{_DIGIT}{{2}}"
    rf"[A-Za-z]{_DIGIT}{{3}}[A-Za-z](?![A-Za-z0-9])",
)


@register("it_codice_fiscale")
class CodiceFiscaleFinder:
    """An Italian codice fiscale wherever it stands (`C.F. RMNLCU79S04L219F`, "eccolo
    frrmrc72c15h501o"): sixteen characters in its shape whose check letter and birth date
    hold, which a word or an identifier of that shape rarely does."""

    kinds = frozenset({"NATIONAL_ID"})
    priority = PERSONAL_PRIORITY
    # The year, the month's letter and the day: two digits, a letter, two digits, a letter.
    triggers = Triggers(shapes=(rb"[0-9]{2}[a-z][0-9]{2}[a-z]",))
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        yield from matches(_CODICE_FISCALE, view.text, "NATIONAL_ID", _valid_codice_fiscale)


def _valid_codice_fiscale(code: str) -> bool:
    return codicefiscale.is_valid(code.upper())  # typed in lower case too


@register("passport")
class PassportFinder:
    """A passport number after a word that names a passport (no checksum to go on): one or two
    letters and 6-8 digits (China's E12345678, India's, Germany's), or 8-9 digits (US, UK)."""

    kinds = frozenset({"PASSPORT"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(words=PASSPORT_WORDS)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(5):  # France's 17AB12345
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
    # In capitals anywhere; typed in lower case, only after its name (`NI no: jt482291c`).
    _NINO = re.compile(
        r"[A-CEGHJ-PR-TW-Z](?<![A-Za-z0-9][A-Z])[A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]"
        r"(?![A-Za-z0-9])",
        re.ASCII | re.IGNORECASE,
    )
    _NAMED_BEFORE = re.compile(
        r"(?i:\bni[ .]*(?:no|number|num|#)|national insurance(?: number| no)?|\bnino)"
        r"\.?(?:[ \t]+is)?[ \t]*[:=-]?[ \t]*\Z"
    )

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for match in self._NINO.finditer(text):
            value = match.group()
            if is_uk_nino(value[:2].upper()) and (
                value.isupper()
                or self._NAMED_BEFORE.search(text, max(0, match.start() - 28), match.start())
            ):
                yield Span(match.start(), match.end(), "UK_NINO")


# Identity cards whose checks python-stdnum lacks: Hong Kong's (A123456(7): a letter or two, six
# digits and a check in brackets), Taiwan's (A123456789: the letter reads as two digits into the
# check), Singapore's NRIC and FIN (S1234567D: a check letter), and Vietnam's citizen card (CCCD,
# 12 digits from a province's code, with no check: after its name only).
_HKID = re.compile(
    rf"[A-Z]{_NOT_BEFORE}[A-Z]?\d{{6}}(?P<bracket>\(?)[0-9A](?(bracket)\)){_NOT_AFTER}",
    re.ASCII | re.IGNORECASE,
)
_TWID = re.compile(rf"[A-Z]{_NOT_BEFORE}[12]\d{{8}}{_NOT_AFTER}", re.ASCII | re.IGNORECASE)
_SG_NRIC = re.compile(rf"[STFGM]{_NOT_BEFORE}\d{{7}}[A-Z]{_NOT_AFTER}", re.ASCII | re.IGNORECASE)
_VN_CCCD = re.compile(rf"0{_NOT_BEFORE}\d{{2}}[0-9]\d{{2}}\d{{6}}{_NOT_AFTER}", re.ASCII)
_ID_CARD_NAMED = _named("身份證", "身分證", "身份证", "身分证", "統一編號", "统一编号", "證號",
                        "证号", "hkid", "hong kong id", "taiwan id", "identity card", "id card",
                        "id no", "id number", "national id")  # fmt: skip
_VN_WORDS = ("cccd", "căn cước", "can cuoc", "cmnd", "định danh", "dinh danh")
_VN_NAMED = _named(*_VN_WORDS)
# Vietnam's provinces by their codes (the first three digits of a CCCD).
_VN_PROVINCES = frozenset((
    "001", "002", "004", "006", "008", "010", "011", "012", "014", "015", "017", "019", "020",
    "022", "024", "025", "026", "027", "030", "031", "033", "034", "035", "036", "037", "038",
    "040", "042", "044", "045", "046", "048", "049", "051", "052", "054", "056", "058", "060",
    "062", "064", "066", "067", "068", "070", "072", "074", "075", "077", "079", "080", "082",
    "083", "084", "086", "087", "089", "091", "092", "093", "094", "095", "096",
))  # fmt: skip
_TW_LETTERS = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))


def is_hkid(value: str) -> bool:
    compact = value.upper().replace("(", "").replace(")", "")
    letters = [ord(letter) - 55 for letter in compact[:-7]]  # A is 10; no second letter, 36
    letters = [36] * (2 - len(letters)) + letters
    total = 9 * letters[0] + 8 * letters[1]
    total += sum((7 - i) * int(digit) for i, digit in enumerate(compact[-7:-1]))
    check = (11 - total % 11) % 11
    return compact[-1] == ("A" if check == 10 else str(check))


def is_twid(value: str) -> bool:
    code = _TW_LETTERS[value[0].upper()]
    total = (
        code // 10
        + (code % 10) * 9
        + sum(int(d) * w for d, w in zip(value[1:9], range(8, 0, -1), strict=True))
    )
    return (10 - total % 10) % 10 == int(value[9])


def is_sg_nric(value: str) -> bool:
    value = value.upper()
    total = sum(int(d) * w for d, w in zip(value[1:8], (2, 7, 6, 5, 4, 3, 2), strict=True))
    total += {"T": 4, "G": 4, "M": 3}.get(value[0], 0)
    letters = {"S": "JZIHGFEDCBA", "T": "JZIHGFEDCBA", "F": "XWUTRQPNMLK", "G": "XWUTRQPNMLK",
               "M": "XWUTRQPNJLK"}[value[0]]  # fmt: skip
    return value[-1] == letters[total % 11]


@register("asian_id_cards")
class AsianIdCardFinder:
    """Hong Kong and Singapore cards on their checks (a Hong Kong number without its brackets
    after a word naming it), Taiwan's after such a word (one in ten runs of its shape passes),
    Vietnam's after its own name."""

    kinds = frozenset({"NATIONAL_ID"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(rb"[a-z][0-9]{6}",), words=_VN_WORDS)
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for pattern, valid, named in (
            (_HKID, is_hkid, None),
            (_TWID, is_twid, _ID_CARD_NAMED),
            (_SG_NRIC, is_sg_nric, None),
        ):
            for match in pattern.finditer(text):
                if not valid(match.group()):
                    continue
                unbracketed = pattern is _HKID and not match.group("bracket")
                needs = _ID_CARD_NAMED if unbracketed else named
                if needs is None or needs.before(text, match.start()):
                    yield Span(match.start(), match.end(), "NATIONAL_ID")
        if any(word in view.lower for word in _VN_WORDS):
            for match in _VN_CCCD.finditer(text):
                if match.group()[:3] in _VN_PROVINCES and _VN_NAMED.before(text, match.start()):
                    yield Span(match.start(), match.end(), "NATIONAL_ID")
