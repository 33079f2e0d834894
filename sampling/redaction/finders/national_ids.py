"""Personal identity, tax, social security and health numbers of every country python-stdnum
checks (about 95 kinds of number: Canada's SIN, Korea's RRN, Japan's My Number, Spain's DNI and
NIE, France's NIR, Germany's Steuer-ID, the Dutch BSN, Poland's PESEL, Mexico's CURP, the Nordic
personal numbers, ...), after a word that names them. The words come from `identity_numbers.json`,
generated from stdnum's module descriptions and the names kept by hand in `national_ids.json`
(`python bench/redaction/identity_table.py` writes it again). A number alone is too often a
random one that passes a check digit (one in ten for a Luhn check), so only a number that a
word names within a few characters is tried, and only against the checks of the countries that
word belongs to: as written (`1 85 05 78 006 084 91`, `x-1234567-l`, `11.222.333/0001-81`) and
without its separators. Numbers without a check digit (Argentina's DNI, Colombia's cédula) are
taken only in their written form (`12.345.678`) right after their own name (Pakistan's CNIC
`35202-1234567-1`, the Philippines' TIN `123-456-789-000`, Bangladesh's NID likewise); numbers
with a check that an abbreviation of two or three letters names (`NAS`, `NN`, `RČ`) also only
in their written form (`checked_forms` of `national_ids.json`). A few
checks python-stdnum lacks (Mexico's NSS, Saudi Arabia's national number, the UAE's Emirates
ID, Iran's national code) are kept here as `local.*` modules, which `national_ids.json` names.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Callable, Iterator
from datetime import date
from types import ModuleType

from sampling.redaction.context import OTHER_NUMBER, NamesBeforeNumbers, names_another_number
from sampling.redaction.finders import register, table
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers


# The words (lower case) that name a number, and the checks of the numbers they name.
def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _check(name: str, test: Callable[[str], bool]) -> ModuleType:
    """A check python-stdnum lacks, as a module of its own: `is_valid` on the bare digits."""
    module = ModuleType(f"local.{name}")

    def is_valid(number: str) -> bool:
        return number.isascii() and number.isdigit() and test(number)

    module.is_valid = is_valid  # type: ignore[attr-defined]
    return module


def _iran_national_code(digits: str) -> bool:
    rest = sum(int(digits[i]) * (10 - i) for i in range(9)) % 11
    return len(set(digits)) > 1 and int(digits[9]) == (rest if rest < 2 else 11 - rest)


def _singapore_nric(number: str) -> bool:
    """Singapore's NRIC or FIN: S, T, F or G, seven digits, a check letter (`S1234567D`)."""
    number = number.upper()
    if len(number) != 9 or number[0] not in "STFG" or not number[1:8].isdigit():
        return False
    weights = (2, 7, 6, 5, 4, 3, 2)
    total = sum(int(digit) * weight for digit, weight in zip(number[1:8], weights, strict=True))
    total += 4 if number[0] in "TG" else 0
    letters = "JZIHGFEDCBA" if number[0] in "ST" else "XWUTRQPNMLK"
    return number[8] == letters[total % 11]


def _russian_snils(digits: str) -> bool:
    """Russia's SNILS: nine digits, then two: their weighted sum (9 down to 1) mod 101, where
    100 reads 00."""
    if len(digits) != 11 or len(set(digits[:9])) == 1:
        return False
    total = sum(int(digit) * (9 - index) for index, digit in enumerate(digits[:9]))
    return int(digits[9:]) == total % 101 % 100


# Egypt's governorates by their codes (digits 8 and 9 of a national ID; 88 born abroad).
_EG_GOVERNORATES = frozenset(
    ("01", "02", "03", "04", *(str(code) for code in range(11, 20)),
     *(str(code) for code in (*range(21, 30), *range(31, 36))), "88")
)  # fmt: skip


def _egypt_national_id(digits: str) -> bool:
    """Egypt's national ID: the century (2 for 1900, 3 for 2000), the birth date (YYMMDD), the
    governorate's code, a serial and a check digit whose rule is not published: the date and
    the governorate are what tell it from 14 random digits."""
    if len(digits) != 14 or digits[0] not in "23" or digits[7:9] not in _EG_GOVERNORATES:
        return False
    try:
        born = date(1700 + 100 * int(digits[0]) + int(digits[1:3]), int(digits[3:5]),
                    int(digits[5:7]))  # fmt: skip
    except ValueError:
        return False
    return born <= date.today()


def _letters_check(name: str, test: Callable[[str], bool]) -> ModuleType:
    """`_check` for a number with letters: `is_valid` on the number as written, ASCII."""
    module = ModuleType(f"local.{name}")
    module.is_valid = lambda number: number.isascii() and test(number)  # type: ignore[attr-defined]
    return module


# Mexico's NSS (11 digits, Luhn), Saudi Arabia's national and residence number (10 digits from
# 1 or 2, Luhn), the UAE's Emirates ID (15 digits from 784, Luhn), Iran's national code (10
# digits, mod 11), Singapore's NRIC and FIN (a check letter), Russia's SNILS, Egypt's national
# ID (a birth date and a governorate).
_LOCAL = {
    "local.sg_nric": _letters_check("sg_nric", _singapore_nric),
    "local.mx_nss": _check("mx_nss", lambda d: len(d) == 11 and _luhn(d)),
    "local.sa_nid": _check("sa_nid", lambda d: len(d) == 10 and d[0] in "12" and _luhn(d)),
    "local.ae_eid": _check("ae_eid", lambda d: len(d) == 15 and d.startswith("784") and _luhn(d)),
    "local.ir_melli": _check("ir_melli", lambda d: len(d) == 10 and _iran_national_code(d)),
    "local.ru_snils": _check("ru_snils", _russian_snils),
    "local.eg_nid": _check("eg_nid", _egypt_national_id),
}


def _module(name: str) -> ModuleType | None:
    """A stdnum module of the table (or a check of `_LOCAL`); None where the installed
    python-stdnum predates it (the table is generated from the newest one the pin allows)."""
    if name in _LOCAL:
        return _LOCAL[name]
    try:
        return importlib.import_module(f"stdnum.{name}")
    except ImportError:
        return None


_TABLE = table("identity_numbers.json")
_MODULES = {name: _module(name) for name in _TABLE["modules"]}
# Each word also as the normalised view spells it (NFKC: Thai `ำ` is two characters there).
_NAMED: dict[str, tuple[ModuleType, ...]] = {
    spelling: found
    for word, modules in _TABLE["names"].items()
    if (found := tuple(m for name in modules if (m := _MODULES.get(name) or _module(name))))
    for spelling in {word, unicodedata.normalize("NFKC", word)}
}
# Numbers without a check digit (Argentina's DNI, Colombia's cédula): only in the form people
# write them in (`12.345.678`), right after their own name; the same digits bare are left.
_WRITTEN_FORMS = {
    spelling: re.compile(form, re.ASCII)
    for word, form in _TABLE["written_without_check"].items()
    for spelling in {word, unicodedata.normalize("NFKC", word)}
}
_FORM_WITHIN = 12  # characters between such a name and its number, at most (`DNI N° `)
# Checked numbers after an abbreviation that also stands for other things (`NAS 192.168.1.20`, a
# network's storage): only in their written form.
_CHECKED_FORMS = {
    spelling: re.compile(form, re.ASCII)
    for word, form in table("national_ids.json")["checked_forms"].items()
    for spelling in {word, unicodedata.normalize("NFKC", word)}
}
# An amount, not a cédula: `CC: $1.200.000`, `CC 1.200.000 COP`.
_CURRENCY = frozenset("$€£¥₹₽")
_CURRENCY_AFTER = re.compile(r"[ \t]*(?:[$€£¥₹₽]|(?i:cop|usd|eur|pesos?|mil|millones)(?![a-z]))")
# (A word may end a label on a line of its own, the number on the next: `_value_line`.)
_NAMES = NamesBeforeNumbers({**_NAMED, **_WRITTEN_FORMS}, reach=64)
# Numbers that have a kind of their own (found bare by identity.py): named, they keep it.
_OWN_KINDS = {"stdnum.us.ssn": "US_SSN", "stdnum.cn.ric": "CN_ID", "stdnum.br.cpf": "BR_CPF",
              "stdnum.in_.aadhaar": "IN_AADHAAR", "stdnum.in_.pan": "IN_PAN"}  # fmt: skip
# Numbers whose digits come in twos and threes between letters (RSSMRA85T10A562S): the names
# that name them are looked for before any two digits, not only before runs of six.
_FEW_DIGITS_IN_A_ROW = {"it.codicefiscale"}
_FEW_DIGIT_NAMES = tuple(
    word for word, modules in _TABLE["names"].items() if _FEW_DIGITS_IN_A_ROW.intersection(modules)
)
_TWO_DIGITS = re.compile(r"[0-9]{2}")
# The longer names that end in a name (`identification number`, `citizen identification
# number`), longest first: the word found at a place may be the end of a longer one there.
_LONGER = {
    word: sorted(
        (longer for longer in _NAMED if longer.endswith(f" {word}")), key=len, reverse=True
    )
    for word in _NAMED
}


def _modules_named(lower: str, end: int, word: str) -> tuple[ModuleType, ...]:
    """The checks of the longest name that ends where `word` ends: the most precise one."""
    for longer in _LONGER.get(word, ()):
        start = end - len(longer)
        if (
            start >= 0
            and lower.startswith(longer, start)
            and not lower[start - 1 : start].isalpha()
        ):
            return _NAMED[longer]
    return _NAMED.get(word, ())


# The rest of a label's line, where its number is on the next one (`Rijksregisternummer (voor
# toegangsbadge):` then the number): no digit, a colon at its end; or nothing but a word for
# "number", its full stop the label's end (`AHV-Nr.`, `AVS n°`, `Rodné číslo`).
_LABEL_LINE_END = re.compile(
    r"(?:[^\d\n:：]{0,40}[:：]|[ \t.-]*(?:(?i:nr|no|n°|num|č)\.?)?)[ \t\r]*\n"
)


# Letters of the scripts that put spaces between words (Latin, Greek, Cyrillic, Armenian): a name
# in them starts and ends a word (`rč`, not the `rč` of `určitě`). Hebrew and Arabic glue their
# articles and prepositions to a word; CJK and Thai have no spaces.
def _spaced_letter(char: str) -> bool:
    return char.isalpha() and char < "\u0590"


def _inside_a_word(lower: str, end: int, word: str) -> bool:
    start = end - len(word)
    return (_spaced_letter(word[0]) and _spaced_letter(lower[start - 1 : start])) or (
        _spaced_letter(word[-1]) and _spaced_letter(lower[end : end + 1])
    )


def _value_line(text: str, end: int) -> int:
    """Where the number named by a word that ends at `end` is looked for: right after it, or
    at the next line's start where the word ends a label on a line of its own."""
    label_end = _LABEL_LINE_END.match(text, end)
    return end if label_end is None else label_end.end()


# A chat's turn: its time in brackets or none, who writes, a colon (`[03/09/24, 12:14] Eu: `,
# `Cliente: `); in a reply, a word saying yes before what is asked for (`da, `, `ναι `).
_TURN_START = r"[ \t]*(?:\[[^\]\n]{1,30}\][ \t]*)?[^\W\d][^\n:：]{0,29}[:：][ \t]*"
_A_TURN = re.compile(_TURN_START)
_REPLY = re.compile(
    rf"\n{_TURN_START}(?:(?i:yes|yeah|yep|sure|here|si|sí|sim|da|ja|jo|oui|ναι|так|да|evet|igen"
    r"|kyllä|joo|ano|tak|claro|ok|okay|iya|ya|ndiyo|כן|نعم|بله)[ \t]*[,.!]?[ \t]+)?"
)


def _reply_after(text: str, end: int) -> int | None:
    """Where the reply to a chat's turn that names a number at `end` starts, past who writes it
    and a yes (`[22.06.2024, 09:12] Mama: ... CNP-ul bunicului, tu îl ai?` then `[22.06.2024,
    09:20] Eu: da, 1790109082617`): the number asked for is looked for there too, against the
    same checks. Both lines must be turns of a chat."""
    line = text.rfind("\n", 0, end) + 1
    newline = text.find("\n", end)
    if newline < 0 or not _A_TURN.match(text, line):
        return None
    reply = _REPLY.match(text, newline)
    return None if reply is None else reply.end()


# After the word: a few characters (`:`, `number is`, `Nr.`), then the number's groups of
# letters and digits joined by one separator each (`1 85 05 78 006 084 36`, `X-1234567-L`,
# `11.222.333/0001-81`).
_WITHIN = 24
_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ ./-][A-Za-z0-9]+){0,11}")  # `n.o 1 62 03 47 364 790 83`
_LONGEST = 32  # characters of a number as written, at most (France's NIR takes 21)
_GROUP = re.compile(r"[A-Za-z0-9]+")
_SEPARATORS = re.compile(r"[ ./-]")
_JOINERS = frozenset("./-")  # within a number; a space may also end one


@register("national_ids_more_countries")
class NationalIdFinder:
    """A number a word names (`SIN 130 692 544`, `DNI: 54362315-K`, `주민등록번호 971013-9019902`)
    that passes that country's check, in any case and written with or without its separators.
    The groups after the word are tried from the first one, longest first, so that a number
    written in parts is found whole and the words before it are left."""

    kinds = frozenset({"NATIONAL_ID", *_OWN_KINDS.values()})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(whole_words=(*_NAMED, *_WRITTEN_FORMS))  # NamesBeforeNumbers: whole
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        few_digits = self._few_digit_name(view)
        if not view.has_number(6) and not few_digits:
            return
        text = view.text
        runs = [start for start, end in view.number_runs if _digits(text[start:end]) >= 6]
        if few_digits:
            runs = sorted({*runs, *(match.start() for match in _TWO_DIGITS.finditer(text))})
        lower = view.lower
        for end, word in sorted(_NAMES.find(lower, runs).items()):
            if not word.isascii() and _inside_a_word(lower, end, word):
                continue
            at = _value_line(text, end)
            modules = _modules_named(lower, end, word)
            found = list(self._number_after(text, at, modules, _CHECKED_FORMS.get(word)))
            if not found and (reply := _reply_after(text, end)) is not None:
                found = list(self._number_after(text, reply, modules, _CHECKED_FORMS.get(word)))
            yield from found
            if word in _WRITTEN_FORMS:
                yield from self._written_form_after(text, at, _WRITTEN_FORMS[word])

    @staticmethod
    def _few_digit_name(view: Text) -> bool:
        return any(word in view.lower for word in _FEW_DIGIT_NAMES)

    def _number_after(
        self,
        text: str,
        position: int,
        modules: tuple[ModuleType, ...],
        form: re.Pattern[str] | None = None,
    ) -> Iterator[Span]:
        if not modules:
            return
        window = text[position : position + _WITHIN + 48].split("\n", 1)[0]
        for match in _GROUPS.finditer(window):
            if match.start() > _WITHIN:
                return
            groups = [group.span() for group in _GROUP.finditer(window, *match.span())]
            for first in range(len(groups)):
                # Words may come before the number (`es`, `n.o`), not a part of another one.
                if first and _digits(window[slice(*groups[first - 1])]):
                    break
                for last in range(len(groups), first, -1):  # longest first
                    start, end = groups[first][0], groups[last - 1][1]
                    if last < len(groups) and window[end] in _JOINERS:  # `20.123.456.789.1`
                        continue
                    candidate = window[start:end]
                    if _digits(candidate) < 6:
                        break
                    if end - start > _LONGEST or (form and not form.fullmatch(candidate)):
                        continue
                    valid = next((m for m in modules if _valid_written(m, candidate)), None)
                    if valid is not None:
                        if names_another_number(
                            text[max(0, position + start - OTHER_NUMBER.reach) : position + start]
                        ):
                            return  # `Aadhaar ...; invoice number 4991...`: an invoice's
                        kind = _OWN_KINDS.get(valid.__name__, "NATIONAL_ID")
                        yield Span(position + start, position + end, kind)
                        return

    @staticmethod
    def _written_form_after(text: str, position: int, form: re.Pattern[str]) -> Iterator[Span]:
        """The first number after the name, whole (its groups of digits), in `form`."""
        window = text[position : position + _FORM_WITHIN + 24].split("\n", 1)[0]
        match = _DIGIT_GROUPS.search(window)
        if (
            match is not None
            and match.start() <= _FORM_WITHIN
            and form.fullmatch(match.group())
            and window[: match.start()].rstrip()[-1:] not in _CURRENCY
            and not _CURRENCY_AFTER.match(window, match.end())
        ):
            yield Span(position + match.start(), position + match.end(), "NATIONAL_ID")


# Groups of digits joined by one separator each, not part of a longer token; a check `X`
# may end them (Brazil's RG `12345678-X`).
_DIGIT_GROUPS = re.compile(
    r"(?<![A-Za-z0-9])(?<![A-Za-z0-9][./-])[0-9]+(?:[ ./-][0-9]+)*(?:-[Xx])?"
    r"(?![A-Za-z0-9])(?![./-][A-Za-z0-9])"
)


def _valid_written(module: ModuleType, candidate: str) -> bool:
    """As written, then without its separators: a module's own compact() takes out those its
    country uses (spaces and dashes for Spain's DNI), not the dots or slashes people also put
    in (`29.141.777-H`). The sign between a Finnish or Swedish birth date and the rest is part
    of the number, hence the written form first."""
    if _valid(module, candidate):
        return True
    bare = _SEPARATORS.sub("", candidate)
    return bare != candidate and _valid(module, bare)


def _valid(module: ModuleType, candidate: str) -> bool:
    try:
        return bool(module.is_valid(candidate))
    except Exception:  # a few checks raise on numbers their tables lack (cn.ric's places)
        return False


def _digits(run: str) -> int:
    return sum(char.isdigit() for char in run)


# Numbers whose shape and check say what they are with no word before them: Mexico's CURP (four
# letters, a birth date, the sex, the state, three consonants, two check characters), France's
# NIR in its printed groups (`2 84 07 75 114 909 18`, a key mod 97), Switzerland's AHV number
# as printed (`756.1234.5678.97`, an EAN-13 check), the Czech and Slovak birth number with its
# slash (`710319/2745`: a birth date, divisible by 11), and Pakistan's CNIC in its dashed
# groups (`42101-8311210-7`: no check, but no other number is written 5-7-1). Each checked as
# its country checks it: a run of the shape passes by chance one time in 10 to 97. None of the
# last three is in 15,600 texts of the bench's benign corpus, nor in 300 MB of installed Python
# packages but for python-stdnum's own examples of them.
_CURP = re.compile(
    r"(?<![A-Za-z0-9])[A-Z][AEIOUX][A-Z]{2}[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    r"[HMX][A-Z]{2}[B-DF-HJ-NP-TV-Z]{3}[0-9A-Z][0-9](?![A-Za-z0-9])"
)
_NIR_PRINTED = re.compile(
    r"(?<![0-9])[12] [0-9]{2} (?:0[1-9]|1[0-2]|[2-9][0-9]) (?:[0-9]{2}|2[AB]) [0-9]{3} [0-9]{3}"
    r" [0-9]{2}(?![0-9])"
)
_AHV_PRINTED = re.compile(r"(?<![0-9.])756\.[0-9]{4}\.[0-9]{4}\.[0-9]{2}(?![0-9]|\.[0-9])")
# Not a path's or a Czech account's part (`19-123457/0710`, `/srv/710319/2745`).
_BIRTH_NUMBER = re.compile(r"(?<![0-9A-Za-z/.-])[0-9]{6}/[0-9]{4}(?![0-9A-Za-z]|[/.-][0-9A-Za-z])")
_CNIC_DASHED = re.compile(
    r"(?<![0-9A-Za-z-])[1-7][0-9]{4}-[0-9]{7}-[0-9](?![0-9A-Za-z]|-[0-9A-Za-z])"
)
# (Each with its check, found once: a module the installed python-stdnum lacks is left out; and
# a character every number of the shape holds, looked for before the regex.)
_BY_SHAPE = tuple(
    (shape, module, holds)
    for shape, name, holds in (
        (_CURP, "mx.curp", ""),
        (_NIR_PRINTED, "fr.nir", " "),
        (_AHV_PRINTED, "ch.ssn", "756."),
        (_BIRTH_NUMBER, "cz.rc", "/"),
        (_CNIC_DASHED, "pk.cnic", "-"),
    )
    if (module := _module(name)) is not None
)


@register("national_ids_by_shape")
class NationalIdShapeFinder:
    kinds = frozenset({"NATIONAL_ID"})
    priority = PERSONAL_PRIORITY
    triggers = Triggers(
        shapes=(
            rb"[a-z]{4}[0-9]{6}[hmx][a-z]{5}",
            rb"[12] [0-9]{2} [0-9]{2} [0-9ab]{2} [0-9]{3}",
            rb"756\.[0-9]{4}\.[0-9]{4}\.[0-9]{2}",
            rb"[0-9]{6}/[0-9]{4}",
            rb"[1-7][0-9]{4}-[0-9]{7}-[0-9]",
        )
    )
    views = ALL_VIEWS

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for shape, module, holds in _BY_SHAPE:
            if holds not in text:
                continue
            for match in shape.finditer(text):
                if not _valid_written(module, match.group()):
                    continue
                if names_another_number(
                    text[max(0, match.start() - OTHER_NUMBER.reach) : match.start()]
                ):
                    continue  # `Order 31533-6369016-4`: an order's number of the same shape
                yield Span(match.start(), match.end(), "NATIONAL_ID")
