"""Make prompts and responses safe to log: valid text, no control characters, bounded length."""

from __future__ import annotations

import base64
from dataclasses import dataclass

CUT_MARKER = " …[cut {omitted} chars]"
_KEEP = {"\n", "\t"}


@dataclass(frozen=True)
class SafeText:
    text: str
    cut: bool  # the original was longer than the limit
    escaped: bool  # control characters or invalid UTF-8 were replaced


def safe_text(value: str | bytes, max_length: int, *, encode: bool = False) -> SafeText:
    """Escape control characters (not newline/tab), replace invalid UTF-8, cut at `max_length`
    characters with a visible marker. With `encode`, store base64 of the UTF-8 bytes instead."""
    if isinstance(value, bytes):
        decoded = value.decode("utf-8", errors="replace")
        escaped = decoded.encode("utf-8") != value
    else:
        # Lone surrogates (from bad decoding upstream) cannot be written as UTF-8.
        decoded = value.encode("utf-8", errors="replace").decode("utf-8")
        escaped = decoded != value
    cleaned = "".join(_escape(char) for char in decoded)
    escaped = escaped or cleaned != decoded
    cut = len(cleaned) > max_length
    if cut:
        omitted = len(cleaned) - max_length
        cleaned = cleaned[:max_length] + CUT_MARKER.format(omitted=omitted)
    if encode:
        cleaned = base64.b64encode(cleaned.encode("utf-8")).decode("ascii")
    return SafeText(cleaned, cut, escaped)


def _escape(char: str) -> str:
    if char in _KEEP or char.isprintable() or char == " ":
        return char
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
