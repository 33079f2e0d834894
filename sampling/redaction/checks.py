"""Checks that tell a real identifier from a string that only looks like one: they are what keeps
ordinary numbers (order ids, dates, versions) out of the redacted text."""

from __future__ import annotations

import ipaddress

# Lengths of the IBANs of the countries that issue them (ISO 13616 registry).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
# Issuer prefixes of the card networks: a Luhn-valid number with another first digit is not a card.
CARD_FIRST_DIGITS = frozenset("23456")
# Two-letter NINO prefixes that are never issued.
NINO_UNUSED_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies (one in ten random numbers does)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if position % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def is_card_number(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and digits[0] in CARD_FIRST_DIGITS and luhn_valid(digits)


def is_iban(compact: str) -> bool:
    """`compact`: upper-case letters and digits, no spaces. The country's length and mod 97 == 1."""
    country = compact[:2]
    if IBAN_LENGTHS.get(country) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def is_us_ssn(area: str, group: str, serial: str) -> bool:
    """Never issued: area 000, 666 or 900-999; group 00; serial 0000."""
    return area != "000" and area != "666" and area[0] != "9" and group != "00" and serial != "0000"


def is_uk_nino(compact: str) -> bool:
    return compact[:2] not in NINO_UNUSED_PREFIXES


def is_ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def is_ipv6(text: str) -> bool:
    # At least three hex digits: `::` alone or `a::b` in code is not worth a placeholder.
    if sum(char not in ":." for char in text) < 3:
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
