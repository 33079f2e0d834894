"""Whether a run of characters was drawn at random (a key, a token) or means something (a
word, an identifier, a hash, base64 of text): the tests the token finders share."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

_CLASSES = (str.islower, str.isupper, str.isdigit)
_HEX = re.compile(r"[0-9a-fA-F]+")
_LETTER_RUNS = re.compile(r"[a-z]{3,}|[A-Z]{3,}")


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character frequencies."""
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in Counter(value).values())


def character_classes(value: str) -> int:
    """How many of lower-case letters, capitals and digits `value` holds (0 to 3)."""
    return sum(any(test(char) for char in value) for test in _CLASSES)


def looks_random(value: str, *, hex_allowed: bool = True) -> bool:
    """A run of characters drawn at random, not a word, a number or an identifier: two classes
    of character at least (lower, upper, digit), and close to the entropy a random string of its
    length and alphabet has. Hex (a hash) counts only when `hex_allowed`."""
    if len(value) < 8 or value.isdigit() or character_classes(value) < 2:
        return False
    # Hex with dashes between its groups is hex too: a UUID, a hash written in parts.
    is_hex = _HEX.fullmatch(value.replace("-", "")) is not None
    if is_hex and not hex_allowed:
        return False
    # Random strings of n characters from an alphabet of a reach close to log2(min(n, a)) bits;
    # the margins keep 999 in 1,000 of them (measured: 64 random base64url characters have 4.88
    # bits or more in 99.9% of draws, against log2(64) = 6).
    alphabet = 16 if is_hex else 64
    expected = math.log2(min(len(value), alphabet))
    return shannon_entropy(value) >= expected - (0.9 if is_hex else 1.3)


def made_of_words(value: str) -> bool:
    """Most of `value` in runs of three letters or more of one case (`getUserAccountById2`,
    `EXAMPLEKEY`): an identifier or a name. A random string of letters and digits has few."""
    return sum(len(run) for run in _LETTER_RUNS.findall(value)) * 2 > len(value)


def encodes_text(value: str) -> bool:
    """`value` is base64 of readable text (`SGVsbG8sIFdvcmxkIQ`, a JSON object): encoded data in
    a code answer. A random key decodes to bytes that are not text."""
    if len(value) < 16:
        return False
    try:
        decoded = base64.b64decode(
            value + "=" * (-len(value) % 4),
            altchars=b"-_" if ("-" in value or "_" in value) else None,
            validate=True,
        ).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return False
    return all(char.isprintable() or char in "\n\t" for char in decoded)


def unnamed_secret(value: str) -> bool:
    """A token that is a secret with no word naming it: random, not hex (a hash, a UUID, a git
    SHA), not made of words, and not base64 of text. `=` padding aside."""
    value = value.rstrip("=")
    return looks_random(value, hex_allowed=False) and not (
        made_of_words(value) or encodes_text(value)
    )
