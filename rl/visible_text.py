"""Untrusted text (prompts, responses, dump lines, queue payloads) as a person may be shown it:
every character that does something instead of showing something becomes a visible mark.

A terminal acts on ESC and C1 controls (colours, titles, hidden text, hyperlinks, clipboard
writes through OSC 52); bidi overrides reorder what is read; zero-width and other format
characters hide text. Control characters are shown by name (⟨ESC⟩, ⟨NUL⟩), the others by code
point (⟨U+202E⟩). Line breaks and tabs stay: callers that print one line flatten them first.
The reviewer's view (annotation/review_display.py) and every command that prints such text use
this one mapping.
"""

from __future__ import annotations

import json
import unicodedata

# The C0 controls by their ASCII names, in brackets: Unicode's control pictures (␀, ␛) are
# missing from many fonts and would show as the very boxes this replaces.
_C0_NAMES = (
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
    "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC",
    "FS", "GS", "RS", "US",
)  # fmt: skip
KEPT = frozenset("\n\t")
# Controls, format characters (zero-width, bidi, BOM, tags), line and paragraph separators,
# and lone surrogates (which no terminal or file encoding takes).
_MARKED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Letters that draw nothing (Hangul fillers), the combining grapheme joiner and the no-break
# space, which reads as an ordinary one.
_INVISIBLE = frozenset("\u00a0\u034f\u115f\u1160\u3164\uffa0")


def visible_char(char: str) -> str:
    """`char` itself, or its visible mark."""
    if char in KEPT:
        return char
    code = ord(char)
    if code < 0x20:
        return f"⟨{_C0_NAMES[code]}⟩"
    if code == 0x7F:
        return "⟨DEL⟩"
    if code < 0x7F:
        return char
    if char in _INVISIBLE or unicodedata.category(char) in _MARKED_CATEGORIES:
        return f"⟨U+{code:04X}⟩"
    return char


def visible_text(text: str) -> str:
    """`text` with every control, format and invisible character as its visible mark; line
    breaks and tabs as they are."""
    if text.isascii() and text.isprintable():
        return text  # the common case, at C speed
    return "".join(visible_char(char) for char in text)


def visible_line(text: str) -> str:
    """`text` on one line: runs of whitespace (line breaks included) as one space, then marked."""
    return visible_text(" ".join(text.split()))


def cut_line(line: str, limit: int) -> str:
    """`line` as it is, or past `limit` characters its first `limit` and how long it was."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}...({len(line):,} characters)"


def escaped_json(value: object) -> str:
    """`value` as one line of JSON whose marked characters are `\\u` escapes: the same data
    for a program that reads it, nothing a terminal acts on for a person who sees it."""
    text = json.dumps(value, ensure_ascii=False)
    if text.isascii() and text.isprintable():
        return text  # the common case: json.dumps escaped every ASCII control but DEL
    return "".join(char if visible_char(char) == char else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP: JSON writes a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
