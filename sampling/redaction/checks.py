"""Checks that tell a real identifier from a string that only looks like one: they are what keeps
ordinary numbers (order ids, dates, versions) out of the redacted text."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable

from stdnum import iban, luhn
from stdnum.iso7064 import mod_97_10

# Cards of national networks whose first digit no global network uses, written grouped or not:
# Uzbekistan's Uzcard and Humo, Turkey's Troy, India's RuPay (81, 82).
_NATIONAL = re.compile(r"8600\d{12}|9860\d{12}|9792\d{12}|8[12]\d{14}")
# Issuer prefixes of the card networks: a Luhn-valid number with another first digit is not a card.
CARD_FIRST_DIGITS = frozenset("2345689")
# A number written without spaces is a card only with a network's prefix and length (Visa,
# Mastercard, Amex, Discover, UnionPay, JCB, Diners, Mir, Maestro, RuPay's 6x; those of the
# national networks above, `_NATIONAL`): one long number in ten passes Luhn.
_CARD_NETWORKS = re.compile(
    r"4(?:\d{12}|\d{15}|\d{18})|5[1-5]\d{14}|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)\d{12}"
    r"|3[47]\d{13}|6(?:011|4[4-9]\d|5\d\d)\d{12,15}|62\d{14,17}|35(?:2[89]|[3-8]\d)\d{12,15}"
    r"|3(?:0[0-5]|[689]\d)\d{11,16}|220[0-4]\d{12,15}|5[06-8]\d{14}|6\d{15}"
)
# Two-letter NINO prefixes that are never issued.
NINO_UNUSED_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})


def is_card_number(digits: str, *, grouped: bool = True) -> bool:
    """`grouped`: written in groups (`4111 1111 ...`), which only cards are; bare digits must
    also have a card network's prefix and length."""
    if not (13 <= len(digits) <= 19 and digits[0] in CARD_FIRST_DIGITS and luhn.is_valid(digits)):
        return False
    if digits[0] in "89":  # (a national network's only)
        return _NATIONAL.fullmatch(digits) is not None
    return grouped or _CARD_NETWORKS.fullmatch(digits) is not None


def is_iban(compact: str) -> bool:
    """`compact`: upper-case letters and digits, no spaces. The country's format and mod 97;
    for the countries whose banks print IBANs outside python-stdnum's registry (SWIFT's partial
    list: Angola, Morocco, Senegal, ...), the country's length and mod 97."""
    if iban.is_valid(compact):
        return True
    length = _IBAN_LENGTHS_OUTSIDE_THE_REGISTRY.get(compact[:2])
    return (
        length == len(compact)
        and compact[2:4].isdigit()
        and mod_97_10.is_valid(compact[4:] + compact[:4])
    )


_IBAN_LENGTHS_OUTSIDE_THE_REGISTRY = {
    "AO": 25, "BF": 28, "BJ": 28, "CF": 27, "CG": 27, "CI": 28, "CM": 27, "CV": 25, "DZ": 26,
    "GA": 27, "GQ": 27, "GW": 25, "IR": 26, "KM": 27, "MA": 28, "MG": 27, "ML": 28, "MZ": 25,
    "NE": 28, "SN": 28, "TD": 27, "TG": 28,
}  # fmt: skip


def is_us_ssn(area: str, group: str, serial: str) -> bool:
    """Never issued: area 000, 666 or 900-999; group 00; serial 0000."""
    return area != "000" and area != "666" and area[0] != "9" and group != "00" and serial != "0000"


def is_uk_nino(compact: str) -> bool:
    return compact[:2] not in NINO_UNUSED_PREFIXES


def is_ipv4(text: str) -> bool:
    return _parses(ipaddress.IPv4Address, text)


def is_ipv6(text: str) -> bool:
    # At least three hex digits: `::` alone or `a::b` in code is not worth a placeholder.
    return sum(char not in ":." for char in text) >= 3 and _parses(ipaddress.IPv6Address, text)


def _parses(address: Callable[[str], object], text: str) -> bool:
    """The standard library reads `text` as an address of that version."""
    try:
        address(text)
    except ValueError:
        return False
    return True


def ascii_word_char(char: str) -> bool:
    """A letter, digit or `_` of ASCII: what a value's neighbour must not be (a CJK character
    next to a number does not make it part of a word)."""
    return char.isascii() and (char.isalnum() or char == "_")


# "-----BEGIN " in base64: how a PEM block starts once encoded (a kubeconfig's `*-data`).
PEM_IN_BASE64 = "LS0tLS1CRUdJTi"


def pem_header_in_base64(value: str) -> str:
    """What the start of a base64 run that encodes a PEM block says (`-----BEGIN CERTIFICATE`,
    `-----BEGIN RSA PRIVATE KEY`), or "" where it does not decode."""
    if not value.startswith(PEM_IN_BASE64):
        return ""
    try:
        return base64.b64decode(value[: len(value) // 4 * 4][:64]).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return ""
