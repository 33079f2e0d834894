"""The redactor every redaction test reads with (the built-in finders, the default config: built
once for the test run), and what the tests ask of it."""

from __future__ import annotations

from sampling.redaction import Redactor
from sampling.redaction.config import RedactConfig

REDACTOR = Redactor.from_config(RedactConfig())


def hidden(text: str, value: str, start: int | None = None, *, spaces: bool = True) -> bool:
    """Every character of `value` (at `start`, or where it first stands in `text`) is redacted;
    `spaces=False`: its white space aside (a span may end before a space inside it)."""
    start = text.index(value) if start is None else start
    spans = REDACTOR.find(text)
    return all(
        any(s.start <= position < s.end for s in spans)
        for position in range(start, start + len(value))
        if spaces or not text[position].isspace()
    )


def found(text: str) -> list[str]:
    """The texts the redactor would replace in `text`."""
    return [text[s.start : s.end] for s in REDACTOR.find(text)]
