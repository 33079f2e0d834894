"""Personal data: e-mail addresses, phone numbers, payment cards, IBANs, IP addresses and national
ID numbers. Each pattern finds candidates; a check (checks.py) keeps only real ones, so that
order numbers, dates and version strings stay readable."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from sampling.redaction.addresses import AddressFinder
from sampling.redaction.checks import (
    is_card_number,
    is_iban,
    is_ipv4,
    is_ipv6,
    is_uk_nino,
    is_us_ssn,
)
from sampling.redaction.identity import identity_finders
from sampling.redaction.named_values import NamedValueFinder
from sampling.redaction.names import NameFinder
from sampling.redaction.phones import DEFAULT_REGIONS, PHONE_NAMED, PhoneReader
from sampling.redaction.spans import Span, Text


class EmailFinder:
    kinds = frozenset({"EMAIL"})
    name = "email"
    _EMAIL = re.compile(
        r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)+"
        r"[A-Za-z]{2,24}(?![\w-])",
        re.ASCII,
    )

    _LOCAL_PART = 64  # the most characters an address has before its `@`

    def find(self, view: Text) -> Iterator[Span]:
        """What finditer over the whole text finds, searched from each `@`: every address holds
        one, at most 64 characters after where it starts, so the regex need not try each word
        of the text."""
        text, position = view.text, 0
        at = text.find("@")
        while at >= 0:
            match = self._EMAIL.search(text, max(position, at - self._LOCAL_PART))
            if match is None:
                return
            start, position = match.span()
            at = text.find("@", position)
            # `scheme://user:password@host` is a URL's credentials, not an address.
            if start and text[start - 1] == ":" and not view.lower[:start].endswith("mailto:"):
                continue
            yield Span(start, position, "EMAIL")


class WrittenEmailFinder:
    """E-mail addresses written out so that scrapers miss them, which people still can read:
    `jane.doe (at) example (dot) org`, `john[at]mail.com`, `j dot smith at gmail dot com`. The
    `@` is an "at" in brackets, or a bare " at " when the domain's dots are written out too
    ("look at it" alone stays as it is), and the domain ends in letters like a real one."""

    kinds = frozenset({"EMAIL"})
    name = "written-out email"
    _AT = r"\s*[(\[{<]\s*at\s*[)\]}>]\s*"
    _DOT = r"\s*[(\[{<]\s*dot\s*[)\]}>]\s*"
    _LABEL = r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
    # Repeats are bounded (an address has a few dotted parts) so that a hostile text of
    # "a dot a dot ..." costs each start a few steps, not the rest of the text.
    _BRACKETED_AT = re.compile(
        rf"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{{0,63}}{_AT}"
        rf"{_LABEL}(?:(?:{_DOT}|\s*\.\s*){_LABEL}){{0,8}}(?:{_DOT}|\s*\.\s*)[a-z]{{2,24}}(?![\w-])",
        re.ASCII,
    )
    _SPOKEN = re.compile(
        rf"(?<![\w.%+-])[a-z0-9][a-z0-9._%+-]{{0,63}}(?:(?:\s+dot\s+|{_DOT})[a-z0-9_%+-]+){{0,4}}"
        rf"\s+at\s+{_LABEL}(?:(?:\s+dot\s+|{_DOT}|\.){_LABEL}){{0,8}}(?:\s+dot\s+|{_DOT})"
        rf"[a-z]{{2,24}}(?![\w-])(?!\s+at\s)",  # "me at jo dot smith at ...": not "me at jo"
        re.ASCII,
    )
    # Gates that turn away almost every text: a regex with a literal start is one fast scan,
    # where testing each bracket's form with `in` took a scan each.
    _AT_CLOSED = re.compile(r"at\s*[)\]}>]")
    _DOT_WORD = re.compile(r"dot(?:\s|\s*[)\]}>])")

    def find(self, view: Text) -> Iterator[Span]:
        lower = view.lower
        if self._AT_CLOSED.search(lower):
            for match in self._BRACKETED_AT.finditer(lower):
                yield Span(match.start(), match.end(), "EMAIL")
        if self._DOT_WORD.search(lower):
            for match in self._SPOKEN.finditer(lower):
                yield Span(match.start(), match.end(), "EMAIL")


class NumberFinder:
    """Runs of digits with separators, told apart by their shape: a payment card (Luhn), a US
    SSN (3-2-4), a phone number (+CC..., a number of one of `phone_regions` (phones.py), or the
    shapes of North American and UK numbers, valid or made up: 555-0134, 07700 900123). A bare
    run of digits is a phone number only when it is a valid mobile number or a phone is named
    before it: too many ids and amounts look like the rest."""

    kinds = frozenset({"CARD", "US_SSN", "PHONE"})
    name = "card/ssn/phone"
    # The first character comes before the look-behind (which then spans it), so that the
    # regex engine can skip to the next digit, `+` or `(` instead of trying every position.
    # ASCII classes: a CJK character is `\w` otherwise, and `号码13812345678` has no boundary.
    _CANDIDATE = re.compile(
        r"[+(0-9](?<![\w.+/-][+(0-9])(?:(?<=\+) ?\(?\d|(?<=\()\d|(?<=[0-9]))"
        r"(?:[ .()-]{0,2}\d){6,18}(?![\w/]|[.-]\d)",
        re.ASCII,
    )
    _GROUPS = re.compile(r"\d+")
    _BEFORE = 32  # characters before a number where a word naming a phone is looked for

    def __init__(self, phone_regions: Sequence[str] = DEFAULT_REGIONS) -> None:
        self.phones = PhoneReader(phone_regions)

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number(7):
            return
        text = view.text
        for match in self._CANDIDATE.finditer(text):
            candidate = match.group()
            start, end = match.span()
            if candidate.endswith(")") and "(" not in candidate:
                candidate, end = candidate[:-1], end - 1
            kind = self.classify(candidate, text[max(0, start - self._BEFORE) : start])
            if kind:
                yield Span(start, end, kind)

    def classify(self, candidate: str, before: str = "") -> str | None:
        groups = [len(group) for group in self._GROUPS.findall(candidate)]
        digits = "".join(self._GROUPS.findall(candidate))
        if candidate.startswith("+ "):
            return None  # `a + 959418625`: a sum, not a country code
        if candidate.startswith("+"):
            return "PHONE" if self.phones.international(candidate) else None
        if groups == [3, 2, 4] and "." not in candidate:
            area, group, serial = digits[:3], digits[3:5], digits[5:]
            return "US_SSN" if is_us_ssn(area, group, serial) else None
        if is_card_number(digits, grouped=len(groups) > 1):
            return "CARD"
        if (
            len(groups) == 1
            and not PHONE_NAMED.ends(before)
            and (_RESULT.search(before) or _amount(digits))
        ):
            return None  # `2^34 = 17179869184`, 15000000000: what an expression comes to
        if groups in ([3, 3, 4], [1, 3, 3, 4]) and digits[-10] not in "01":
            return "PHONE"  # North American: the area code never starts with 0 or 1
        if len(groups) >= 2 and digits[0] == "0" and len(digits) in (10, 11):
            return "PHONE"  # UK and much of Europe: a national number from 0, written in groups
        if groups in ([11], [3, 4, 4]) and _CN_MOBILE.fullmatch(digits):
            return "PHONE"  # a Chinese mobile number's shape, in ranges yet to be allocated too
        if len(digits) <= 15 and self.phones.national(
            candidate, grouped=len(groups) >= 2, before=before
        ):
            return "PHONE"
        return None


class IbanFinder:
    kinds = frozenset({"IBAN"})
    name = "iban"
    _CANDIDATE = re.compile(
        r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?",
        re.ASCII,
    )

    def find(self, view: Text) -> Iterator[Span]:
        if not view.has_number_after_capitals(2):
            return
        text = view.text
        for match in self._CANDIDATE.finditer(text):
            # The pattern may take in a word that follows: try the longest prefix first.
            value = match.group()
            pieces = value.split(" ") if " " in value else [value]
            for count in range(len(pieces), 0, -1):
                kept = " ".join(pieces[:count])
                end = match.start() + len(kept)
                if end < len(text) and _ascii_word(text[end]):
                    continue
                if is_iban(kept.replace(" ", "")):
                    yield Span(match.start(), end, "IBAN")
                    break


class IpFinder:
    kinds = frozenset({"IP_ADDRESS"})
    name = "ip"
    _V4 = re.compile(
        r"[0-9](?<![\w.][0-9])\d{0,2}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\w]|\.\d)", re.ASCII
    )
    # IPv6: found from its `x:y:` core, then widened to the whole run of hex digits, `:` and `.`.
    _V6_CORE = re.compile(r":[0-9A-Fa-f]{0,4}:")
    _V6_CHARS = frozenset("0123456789abcdefABCDEF:.")

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if view.has_dotted_number():
            for match in self._V4.finditer(text):
                if is_ipv4(match.group()):
                    yield Span(match.start(), match.end(), "IP_ADDRESS")
        first = text.find(":")  # two colons at least: two memchr, not a count of the text
        if first >= 0 and text.find(":", first + 1) >= 0:
            yield from self._v6(text)

    def _v6(self, text: str) -> Iterator[Span]:
        chars, done = self._V6_CHARS, -1
        for match in self._V6_CORE.finditer(text):
            if match.start() < done:
                continue
            start, end = match.start(), match.end()
            while start > 0 and text[start - 1] in chars:
                start -= 1
            while end < len(text) and text[end] in chars:
                end += 1
            done = end
            value = text[start:end].strip(".")
            start = text.index(value, start) if value else start
            end = start + len(value)
            before = text[start - 1] if start else " "
            after = text[end] if end < len(text) else " "
            if _ascii_word(before) or _ascii_word(after):
                continue
            if is_ipv6(value):
                yield Span(start, end, "IP_ADDRESS")


class NinoFinder:
    kinds = frozenset({"UK_NINO"})
    name = "uk_nino"
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


class MacFinder:
    """Hardware (MAC) addresses, a device's lasting identifier: six pairs of hex digits joined
    by one separator, `:` or `-` (`00:1A:2B:3C:4D:5E`), not inside a longer run of them."""

    kinds = frozenset({"MAC_ADDRESS"})
    name = "mac"
    _MAC = re.compile(
        r"(?<![0-9A-Fa-f:-])[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}"
        r"(?![0-9A-Fa-f]|[:-][0-9A-Fa-f])"
    )

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if text.count(":") < 5 and text.count("-") < 5:  # five separators in every one
            return
        for match in self._MAC.finditer(text):
            yield Span(match.start(), match.end(), "MAC_ADDRESS")


def personal_finders(phone_regions: Sequence[str] = DEFAULT_REGIONS) -> list[object]:
    return [EmailFinder(), WrittenEmailFinder(), *identity_finders(), NamedValueFinder(),
            IbanFinder(), NumberFinder(phone_regions), NinoFinder(), MacFinder(), IpFinder(),
            AddressFinder(), NameFinder()]  # fmt: skip


_CN_MOBILE = re.compile(r"1[3-9]\d{9}")
_RESULT = re.compile(r"[=×*/^÷]\s*$")


def _amount(digits: str) -> bool:
    """Mostly one repeated digit (15000000000): an amount or a placeholder, not a phone."""
    return len(set(digits[-7:])) <= 2


def _ascii_word(char: str) -> bool:
    """A letter, digit or `_` of ASCII: what a value's neighbour must not be (a CJK character
    next to a number does not make it part of a word)."""
    return char.isascii() and (char.isalnum() or char == "_")
