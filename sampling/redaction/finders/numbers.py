"""Runs of digits told apart by their shape and checks: payment cards (Luhn), US Social Security
numbers (3-2-4) and phone numbers of any country (phones.py); and the phone numbers of the text's
own country that no configured region reads (`Llamo al 612 48 93 07`, a Hindi note's `96500
71842`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Self

from sampling.redaction.checks import is_card_number, is_ipv4, is_us_ssn
from sampling.redaction.context import OTHER_HINT, OTHER_NUMBER, names_another_number
from sampling.redaction.finders import register
from sampling.redaction.phones import (
    DEFAULT_REGIONS,
    PHONE_NAMED,
    PHONE_SAID,
    PHONE_WORD_NEAR,
    PhoneReader,
    called_after,
    regions_of_text,
)
from sampling.redaction.spans import ALL_VIEWS, PERSONAL_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, digits

if TYPE_CHECKING:
    from sampling.redaction.config import RedactConfig


# A URL path's segment that is a number of one of those shapes, and the segment before a card's.
_PATH_NUMBER = re.compile(r"/(\+\d{8,15}|\d{3}-\d{2}-\d{4}|\d{13,19})(?=[/?#\s\"'<>)]|$)")
_CARDS_SEGMENT = re.compile(r"/(?:cards?|credit[_-]?cards?|payment[_-]?methods?|pans?)/$", re.I)


class _DigitRunFinder:
    """What both finders of runs of digits share: their trigger, the candidates they read and
    the phone regions of the config they are built from."""

    priority = PERSONAL_PRIORITY
    triggers = Triggers(shapes=(digits(7),))  # every candidate has seven digits
    views = ALL_VIEWS
    # The first character comes before the look-behind (which then spans it), so that the
    # regex engine can skip to the next digit, `+` or `(` instead of trying every position.
    # ASCII classes: a CJK character is `\w` otherwise, and `号码13812345678` has no boundary.
    _CANDIDATE = re.compile(
        r"[+(0-9](?<![\w.+/-][+(0-9])(?:(?<=\+) ?\(?\d|(?<=\()\d|(?<=[0-9]))"
        r"(?:[ .()-]{0,2}\d){6,18}(?![\w/]|[.-]\d)",
        re.ASCII,
    )
    _GROUPS = re.compile(r"\d+")
    _BEFORE = 32  # characters before a number where a word naming it is looked for

    @classmethod
    def from_config(cls, config: RedactConfig | None) -> Self:
        return cls(DEFAULT_REGIONS if config is None else config.phone_regions)

    @classmethod
    def _candidates(cls, text: str) -> Iterator[tuple[str, int, int]]:
        """Each candidate, where it starts and ends: a closing bracket without its opening one
        is the text's, not the number's."""
        for match in cls._CANDIDATE.finditer(text):
            candidate = match.group()
            start, end = match.span()
            if candidate.endswith(")") and "(" not in candidate:
                candidate, end = candidate[:-1], end - 1
            yield candidate, start, end


@register("card_ssn_phone")
class NumberFinder(_DigitRunFinder):
    """Runs of digits with separators, told apart by their shape: a payment card (Luhn), a US
    SSN (3-2-4), a phone number (+CC..., a number of one of `phone_regions` (phones.py), or the
    shapes of North American and UK numbers, valid or made up: 555-0134, 07700 900123). A bare
    run of digits is a phone number only when it is a valid mobile number or a phone is named
    before it: too many ids and amounts look like the rest."""

    kinds = frozenset({"CARD", "US_SSN", "PHONE"})

    def __init__(self, phone_regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        self.phones = PhoneReader(phone_regions)

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(7):
            return
        text = view.text
        for candidate, start, end in self._candidates(text):
            before = text[max(0, start - self._BEFORE) : start]
            if _CLOCK_AFTER.match(text, end) and not PHONE_NAMED.ends(before):
                continue  # `2016-05-25 13`:30, `20130228 23`:00: a timestamp up to its hour
            kind = None
            if ". " in candidate:
                # `ring 07700 900418. 27 Fennel Close`: a sentence ended after the number.
                head = candidate[: candidate.index(". ")]
                if len(head) > 6 and (kind := self._kind(head, before, text, start + len(head))):
                    end = start + len(head)
            kind = kind or self._kind(candidate, before, text, end)
            if kind:
                if text[start] == "(" and ")" not in text[start:end]:
                    start += 1  # `(00000.00000@...)`: the bracket is the text's, not an area code's
                yield Span(start, end, kind)
        if any(sign in text for sign in _WIDE_SIGNS):
            yield from self._widely_separated_phones(text)
        if "://" in text:
            yield from self._in_url_paths(text)

    def _kind(self, candidate: str, before: str, text: str, end: int) -> str | None:
        kind = self.classify(candidate, before)
        if kind is None and _said_phone(candidate, before, text, end):
            kind = "PHONE"
        return kind

    def _in_url_paths(self, text: str) -> Iterator[Span]:
        """A whole segment of a URL's path (`/contacts/+447843219604/edit`): an international
        phone number, an SSN's 3-2-4, or a card's digits under a segment that names cards; an
        id of another shape stays (the candidates above never start after a `/`)."""
        for match in _PATH_NUMBER.finditer(text):
            value = match.group(1)
            if value.startswith("+"):
                kind = "PHONE" if self.phones.international(value) else None
            elif "-" in value:
                area, group, serial = value.split("-")
                kind = "US_SSN" if is_us_ssn(area, group, serial) else None
            else:
                named = _CARDS_SEGMENT.search(text, max(0, match.start() - 24), match.start(1))
                kind = "CARD" if named and is_card_number(value, grouped=False) else None
            if kind is not None:
                yield Span(match.start(1), match.end(1), kind)

    def _widely_separated_phones(self, text: str) -> Iterator[Span]:
        """`Handynummer: 0151/234 567 89`, `Tel. 089 / 12 34 56 78`, `phone: 020 - 7946 - 0958`:
        a number in groups with a slash or a spaced dash is a phone only after a word that
        names one (a date, a path or a range has them too)."""
        for match in _WIDELY_SEPARATED.finditer(text):
            start, end = match.span()
            before = text[max(0, start - self._BEFORE) : start]
            if _said_phone(match.group(), before, text, end):
                yield Span(start, end, "PHONE")

    def classify(self, candidate: str, before: str = "") -> str | None:
        kind = self._shape_kind(candidate, before)
        if kind not in ("CARD", "PHONE"):
            return kind
        # `订单号：4713396096739471`, `order #7199657182`: named as something else; `16.04.2019`:
        # a date. The cheap tests first (the word alone, the date's shape), then the words' places.
        other = OTHER_HINT.search(before[-OTHER_NUMBER.reach :].lower()) is not None
        if kind == "PHONE" and _is_date(candidate):
            return None  # a date even after a phone's name ("Telefon seit 16.04.2019")
        date = kind == "PHONE" and _decimals(candidate, before)
        if (
            (other or date)
            and not PHONE_WORD_NEAR.ends(before)
            and (date or OTHER_NUMBER.ends(before))
        ):
            return None
        return kind

    def _shape_kind(self, candidate: str, before: str) -> str | None:
        groups = [len(group) for group in self._GROUPS.findall(candidate)]
        digits = "".join(self._GROUPS.findall(candidate))
        if candidate.startswith("+ "):
            return None  # `a + 959418625`: a sum, not a country code
        if candidate.startswith("+"):
            return "PHONE" if self.phones.international(candidate) else None
        if len(groups) == 2 and candidate.count(".") == 1 and _DECIMAL.fullmatch(candidate):
            return None  # a decimal number: `e = 2.718281828459045`
        if len(groups) == 4 and candidate.count(".") == 3 and is_ipv4(candidate):
            return None  # an IP address (ip.py's): `from 95.165.44.201 port 22`
        if groups == [3, 2, 4] and "." not in candidate:
            area, group, serial = digits[:3], digits[3:5], digits[5:]
            return "US_SSN" if is_us_ssn(area, group, serial) else None
        if is_card_number(digits, grouped=len(groups) > 1):
            return "CARD"
        if (
            len(groups) == 1
            and not PHONE_NAMED.ends(before)
            and (
                (_RESULT.search(before) and not _QUERY_PARAMETER.search(before)) or _amount(digits)
            )
        ):
            return None  # `2^34 = 17179869184`, 15000000000: what an expression comes to
        if groups in ([3, 3, 4], [1, 3, 3, 4]) and digits[-10] not in "01":
            return "PHONE"  # North American: the area code never starts with 0 or 1
        if (
            len(groups) >= 2
            and digits[0] == "0"
            and len(digits) in (10, 11)
            # a lone check digit at the end (`0-201-63361-2`, an ISBN): no phone's grouping
            and not (groups[-1] == 1 and len(set(groups)) > 1)
        ):
            return "PHONE"  # UK and much of Europe: a national number from 0, written in groups
        if groups in ([11], [3, 4, 4]) and _CN_MOBILE.fullmatch(digits):
            return "PHONE"  # a Chinese mobile number's shape, in ranges yet to be allocated too
        if len(digits) <= 15 and self.phones.national(
            candidate, grouped=len(groups) >= 2, before=before
        ):
            return "PHONE"
        return None


_CN_MOBILE = re.compile(r"1[3-9]\d{9}")
# A date in numbers: day, month and year (either order) or year, month and day, one separator.
_DATE = re.compile(
    r"(?:(?:0?[1-9]|[12]\d|3[01])([./-])(?:0?[1-9]|[12]\d|3[01])\1(?:19|20)\d\d"
    r"|(?:19|20)\d\d([./-])(?:0?[1-9]|1[0-2])\2(?:0?[1-9]|[12]\d|3[01])"
    r"|\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))"  # ISO 8601, of any year
    r"(?: (?:[01]?\d|2[0-3]))?"  # and the hour of a timestamp (`2026-12-06 14:30:00`)
    # A day written whole, then a build's or a batch's number (`20240514-03`, `20240422.1.0`).
    r"|(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])(?:[.-]\d{1,3}){1,2}"
)


_RESULT = re.compile(r"[=×*/^÷]\s*$")
_QUERY_PARAMETER = re.compile(r"[?&][\w.-]+=$")  # `?u=16107146355`: a value, not a result


def _is_date(candidate: str) -> bool:
    return _DATE.fullmatch(candidate) is not None


# What follows the hour of a timestamp: its minutes.
_CLOCK_AFTER = re.compile(r":[0-5]\d")
# A decimal number (`0.0001953125`, `180.79155222`): a phone number is not written with one dot
# after a whole number; `1970-01-01T00:00:00.000000001`: the fraction of a clock's seconds.
_DECIMAL = re.compile(r"\(?(?:0|[1-9]\d*)\.\d+\)?")
_SECONDS_BEFORE = re.compile(r"\d:$")


def _decimals(candidate: str, before: str) -> bool:
    """A number with a decimal point, or several in a row (`0  0.333333  0.4`, a table's
    line), or the fraction of a time's seconds: numbers, not a phone."""
    if _SECONDS_BEFORE.search(before):
        return True
    return any(_DECIMAL.fullmatch(piece) for piece in candidate.split())


# A number in groups with a wide separator between two of them, which the candidates above
# never have: a slash, a spaced hyphen or an en or em dash (`089 / 12 34 56`, `020 - 7946`).
_WIDE = r"(?: ?[/\u2013\u2014] ?| - )"
_WIDELY_SEPARATED = re.compile(
    r"[+(0-9](?<![\w.+/-][+(0-9])(?:(?<=\+) ?\(?\d|(?<=\()\d|(?<=[0-9]))"
    rf"(?:[ .()-]{{0,2}}\d)*(?:{_WIDE}\d)(?:(?:[ .()-]{{0,2}}|{_WIDE})\d){{0,16}}(?![\w/]|[.-]\d)",
    re.ASCII,
)
# Looked for with `in`: a regex of them tried every position of a text (30 µs a 2 KB one).
_WIDE_SIGNS = ("/", " - ", "\u2013", "\u2014")
# After a number: a currency or a unit, so an amount (`телефон за 12 990 000 ₽`).
_AMOUNT_AFTER = re.compile(
    r"\s?(?:[$€£¥₽₹₩元円원%]|(?:eur|usd|gbp|rub|руб|zł|pln|kr|ft|€|mah|mb|gb|kb|ms|km)\b)",
    re.IGNORECASE,
)


def _said_phone(candidate: str, before: str, text: str, end: int) -> bool:
    """A run of 7 to 15 digits right after a word that names a phone ("Meu celular é",
    "телефон:", "هاتفي"), in any country's way of writing it: a phone, unless it is a date, a
    decimal, an amount or a number named as something else nearer to it."""
    count = sum(char.isdigit() for char in candidate)
    if not 7 <= count <= 15 or not PHONE_SAID.ends(before):
        return False
    if _is_date(candidate) or _decimals(candidate, before) or _AMOUNT_AFTER.match(text, end):
        return False
    return not names_another_number(before)


def _amount(digits: str) -> bool:
    """Zeros at the end, or one digit repeated (15000000000, 5555555555): an amount or a
    placeholder, not a phone (16166666662 is one: a mobile's shape, its last digit another)."""
    return digits[-7:] == "0000000" or len(set(digits[-7:])) == 1


# Words that name a run of digits as something other than a phone, a little before it on its
# line, in the languages whose numbers are read from the text (`Pedido nº 612 48 93 07`, `SKU
# 4006 381 333`): it stays, unless a phone is named nearer.
_ANOTHER_NUMBER = frozenset((
    "sku", "item", "art", "artikel", "article", "artículo", "artigo", "articolo", "model",
    "modelo", "serial", "serie", "série", "lote", "lot", "batch", "charge", "ref", "referencia",
    "referência", "référence", "riferimento", "código", "codigo", "code", "codice", "kode", "cod",
    "pedido", "factura", "fatura", "recibo", "cuenta", "conta", "compte", "conto",
    "konto", "account", "iban", "cliente", "client", "kunde", "kunden", "kundennummer", "klant",
    "vertrag", "contrato", "contrat", "expediente", "protocolo", "reserva", "réservation",
    "prenotazione", "buchung", "ticket", "case", "dossier", "rechnung", "bestellung",
    "auftrag", "commande", "facture", "ordine", "fattura", "bestelling", "factuur",
    "zamówienie", "zamówienia", "faktura", "sipariş", "siparis", "hesap", "pesanan", "faktur",
    "resi", "invoice", "order", "tracking", "policy", "claim", "nip", "nif", "cpf", "cnpj", "dni",
    "rfc", "curp", "pesel", "aadhaar", "pan", "gst", "заказ", "заказа", "счёт", "счет",
    "договор", "договора", "طلب", "الطلب", "فاتورة", "حساب", "ऑर्डर", "खाता", "הזמנה",
))  # fmt: skip
# Words of scripts whose vowel signs are no `\w` (`ऑर्डर`): looked for as they are written.
_ANOTHER_NUMBER_MARKED = tuple(word for word in _ANOTHER_NUMBER if not word.isascii())
_WORD = re.compile(r"[^\W\d_]+")
_ANOTHER_REACH = 24  # characters before a number where such a word is looked for
# A currency before the number: an amount (`R$ 912 345 678`, `₹ 98 76 543 210`).
_CURRENCY_BEFORE = re.compile(r"(?:[$€£¥₽₹₩₺₫]|\b(?:rs|inr|eur|usd|rp|rm|r\$|tl))\.?\s?$", re.I)


@register("phones_of_the_texts_country")
class TextCountryPhoneFinder(_DigitRunFinder):
    """A phone number of the text's own country that none of `phone_regions` has (numbers.py
    reads theirs): `Llamo al 612 48 93 07`, `Linha: (21) 99134-5820`, a Hindi note's `(96500
    71842)`. The country is read from the text (phones.regions_of_text: a country's code or
    name, the script, the language of its words), only for a number the configured regions do
    not read; the number must be valid there, written as the country writes it, and named as a
    phone (before it or after it) or a mobile number written in groups."""

    kinds = frozenset({"PHONE"})

    def __init__(self, phone_regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        self.regions = tuple(phone_regions)

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(7):
            return
        text = view.text
        regions: tuple[str, ...] | None = None  # read once, when a number may be one of theirs
        # A number repeated (a log's, a table's) is parsed once.
        read = functools.lru_cache(maxsize=64)(PhoneReader.of_the_text)
        for candidate, start, end in self._candidates(text):
            if candidate.startswith("+"):
                continue  # numbers.py reads every country's code
            groups = [len(group) for group in self._GROUPS.findall(candidate)]
            if not 7 <= sum(groups) <= 13 or _read_by_shape(groups, candidate):
                continue
            before = text[max(0, start - self._BEFORE) : start]
            if self._not_a_phone(candidate, before, text, end):
                continue
            if regions is None:
                regions = regions_of_text(text, view.lower, self.regions, start)
            if not regions:
                return  # no country of its own: the configured regions' text
            if self._another_number(before):
                continue
            # A mobile number in groups needs no name: the words before and after it are read
            # only for the others (a bare run, a landline, a number grouped as thousands).
            grouped = len(groups) >= 2
            if (grouped and read(candidate, regions, grouped=True, named=False)) or (
                (PHONE_NAMED.ends(before) or called_after(text, end))
                and read(candidate, regions, grouped=grouped, named=True)
            ):
                yield Span(start, end, "PHONE")

    @staticmethod
    def _not_a_phone(candidate: str, before: str, text: str, end: int) -> bool:
        """A date, a decimal, an amount or a time's hour."""
        return bool(
            _is_date(candidate)
            or _decimals(candidate, before)
            or _AMOUNT_AFTER.match(text, end)
            or _CURRENCY_BEFORE.search(before)
            or _CLOCK_AFTER.match(text, end)
        )

    @staticmethod
    def _another_number(before: str) -> bool:
        """A number named as something else on its line (an order's, an article's)."""
        line = before[before.rfind("\n") + 1 :]
        if names_another_number(line):
            return True
        window = line[-_ANOTHER_REACH:].lower()
        named_else = any(word in _ANOTHER_NUMBER for word in _WORD.findall(window)) or (
            not window.isascii() and any(word in window for word in _ANOTHER_NUMBER_MARKED)
        )
        return named_else and not PHONE_WORD_NEAR.ends(line)


def _read_by_shape(groups: list[int], candidate: str) -> bool:
    """What numbers.py reads as a phone by its shape alone, with no region's parse: a North
    American number in groups, a national number from 0 in groups (the UK's, much of Europe's),
    an SSN's 3-2-4."""
    digits = [char for char in candidate if char.isdigit()]
    if groups in ([3, 3, 4], [1, 3, 3, 4]) and digits[-10] not in "01":
        return True
    if len(groups) >= 2 and digits[0] == "0" and len(digits) in (10, 11):
        return not (groups[-1] == 1 and len(set(groups)) > 1)
    return groups == [3, 2, 4]
