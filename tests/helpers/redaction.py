"""The redactor every redaction test reads with (the built-in finders, the default config: built
once for the test run), and what the tests ask of it."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import pytest

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


def found_with_kinds(text: str) -> list[tuple[str, str]]:
    """The texts the redactor would replace in `text`, each with its kind."""
    return [(text[s.start : s.end], s.kind) for s in REDACTOR.find(text)]


def found_as(text: str, *kinds: str) -> list[str]:
    """The texts the redactor would replace in `text` as one of `kinds`."""
    return [text[s.start : s.end] for s in REDACTOR.find(text) if s.kind in kinds]


def names(text: str) -> list[str]:
    """The people's names the redactor would replace in `text`."""
    return found_as(text, "PERSON_NAME")


def kinds(text: str) -> dict[str, str]:
    """Each text the redactor would replace in `text`, and its kind."""
    return {text[s.start : s.end]: s.kind for s in REDACTOR.find(text)}


def redacted(text: str) -> tuple[str, dict[str, int]]:
    """`text` as the redactor gives it back, and how many values of each kind it replaced."""
    redaction = REDACTOR.redact([text])
    return redaction.texts[0], redaction.counts


def seconds_to_find(text: str, clock: Callable[[], float] = time.perf_counter) -> float:
    """How long the redactor takes to read `text`, by `clock`."""
    started = clock()
    REDACTOR.find(text)
    return clock() - started


def grouped(groups: Mapping[str, Sequence[object]], *, name_first: bool = False) -> list[object]:
    """The cases of several named lists as one parametrization's: a case (a tuple of its
    arguments, or its one argument) keeps its list's name and its place in it as its id;
    `name_first`: the list's name is the case's first argument too."""
    return [
        pytest.param(
            *((name,) if name_first else ()),
            *(case if isinstance(case, tuple) else (case,)),
            id=f"{name}-{i}",
        )
        for name, cases in groups.items()
        for i, case in enumerate(cases)
    ]
