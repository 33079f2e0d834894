"""The writing systems of a text's letters, from Unicode block ranges: a table and a bisect, no
`unicodedata` name lookups (those cost microseconds a character)."""

from __future__ import annotations

import bisect
import re
from collections import Counter

# (first code point, script) in order; a range runs to the next start. "" is not a letter script.
_STARTS: tuple[tuple[int, str], ...] = (
    (0x0000, ""),
    (0x0041, "Latin"),  # A-Z, a-z and the Latin supplements (isalpha() filters the rest)
    (0x0250, "Latin"),  # IPA extensions
    (0x02B0, ""),
    (0x0370, "Greek"),
    (0x0400, "Cyrillic"),
    (0x0530, "Armenian"),
    (0x0590, "Hebrew"),
    (0x0600, "Arabic"),
    (0x0700, "Syriac"),
    (0x0750, "Arabic"),
    (0x0780, "Thaana"),
    (0x07C0, ""),
    (0x0900, "Devanagari"),
    (0x0980, "Bengali"),
    (0x0A00, "Gurmukhi"),
    (0x0A80, "Gujarati"),
    (0x0B00, "Oriya"),
    (0x0B80, "Tamil"),
    (0x0C00, "Telugu"),
    (0x0C80, "Kannada"),
    (0x0D00, "Malayalam"),
    (0x0D80, "Sinhala"),
    (0x0E00, "Thai"),
    (0x0E80, "Lao"),
    (0x0F00, "Tibetan"),
    (0x1000, "Myanmar"),
    (0x10A0, "Georgian"),
    (0x1100, "Hangul"),
    (0x1200, "Ethiopic"),
    (0x13A0, ""),
    (0x1780, "Khmer"),
    (0x1800, ""),
    (0x1E00, "Latin"),  # Latin extended additional
    (0x1F00, "Greek"),
    (0x2000, ""),
    (0x2C00, ""),
    (0x2D00, "Georgian"),
    (0x2D30, ""),
    (0x2E80, "Han"),
    (0x3040, "Hiragana"),
    (0x30A0, "Katakana"),
    (0x3100, ""),
    (0x3130, "Hangul"),
    (0x3190, ""),
    (0x3400, "Han"),
    (0xA000, ""),
    (0xAC00, "Hangul"),
    (0xD7B0, ""),
    (0xF900, "Han"),
    (0xFB00, ""),
    (0xFB50, "Arabic"),
    (0xFE00, ""),
    (0xFE70, "Arabic"),
    (0xFF00, ""),
    (0xFF21, "Latin"),  # fullwidth Latin
    (0xFF5B, ""),
    (0x20000, "Han"),
    (0x30000, ""),
)
_POINTS = [start for start, _ in _STARTS]
_NAMES = [name for _, name in _STARTS]
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_LETTERS = re.compile(r"[A-Za-z]")
MAX_CLASSIFIED = 400  # non-ASCII characters looked up at most: an even sample of a long text


def script_of(char: str) -> str:
    return _NAMES[bisect.bisect_right(_POINTS, ord(char)) - 1]


def letter_scripts(text: str) -> Counter[str]:
    """Letters by script. Non-ASCII letters are counted on an even sample of at most
    MAX_CLASSIFIED characters, scaled to their number."""
    counts: Counter[str] = Counter()
    latin = len(_ASCII_LETTERS.findall(text))
    if latin:
        counts["Latin"] = latin
    if text.isascii():
        return counts
    others = _NON_ASCII.findall(text)
    stride = max(1, len(others) // MAX_CLASSIFIED)
    for char in others[::stride]:
        if char.isalpha():
            name = script_of(char)
            if name:
                counts[name] += stride
    return counts
