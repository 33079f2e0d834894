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


def growth(text_of: Callable[[int], str], count: int) -> float:
    """How many times longer the redactor takes to read `text_of(4 * count)` than
    `text_of(count)`, in CPU time, the faster of two reads each: about 4 where the time grows with
    a text's length, towards 16 where it grows with its square. A ratio, so that a slower or a
    busier machine moves both reads alike."""

    def seconds(size: int) -> float:
        text = text_of(size)
        return min(seconds_to_find(text, time.process_time) for _ in range(2))

    seconds(1)  # (what the finders build on first use is no part of either read)
    return seconds(4 * count) / seconds(count)


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


# The tests many modules repeat, built once: a module keeps its case tables and binds each test
# to its own name (`test_x = hides_each(CASES)`), so the ids and the module's marks are those of
# a test written out in it. pytest does not rewrite the asserts of this module: each says what
# the redactor found.
Cases = Sequence[object] | Mapping[str, Sequence[object]]


def _params(cases: Cases) -> Sequence[object]:
    """A flat list as it is (pytest makes each id from the case's values); named lists as
    `grouped` gives them."""
    return grouped(cases) if isinstance(cases, Mapping) else cases


def hides_each(cases: Cases, *, spaces: bool = True) -> Callable[[str, str], None]:
    """A test of each (text, value) of `cases`: the value is hidden in the text (`hidden`, with
    `spaces`)."""

    @pytest.mark.parametrize(("text", "value"), _params(cases))
    def test(text: str, value: str) -> None:
        assert hidden(text, value, spaces=spaces), found(text)

    return test


def leaves_each(cases: Cases, *, of: Sequence[str] = ()) -> Callable[[str], None]:
    """A test of each text of `cases`: the redactor finds nothing in it (nothing of the kinds
    `of`, where they are given)."""

    @pytest.mark.parametrize("text", _params(cases))
    def test(text: str) -> None:
        assert (found_as(text, *of) if of else found(text)) == [], found(text)

    return test


def leaves_each_by_kinds(groups: Mapping[str, Sequence[str]]) -> Callable[[str, str], None]:
    """A test of each text of `groups`, whose lists are named by the kinds (comma-separated)
    the redactor must find none of in their texts."""

    @pytest.mark.parametrize(("kinds", "text"), grouped(groups, name_first=True))
    def test(kinds: str, text: str) -> None:
        assert found_as(text, *kinds.split(",")) == [], found(text)

    return test


def finds_one_name_in_each(cases: Cases) -> Callable[[str, str], None]:
    """A test of each (text, name) of `cases`: the name is the one person's name found."""

    @pytest.mark.parametrize(("text", "name"), _params(cases))
    def test(text: str, name: str) -> None:
        assert names(text) == [name], names(text)

    return test


def finds_each_as_its_kind(groups: Mapping[str, Sequence[tuple[str, str]]]) -> Callable[..., None]:
    """A test of each (text, value) of `groups`, whose lists are named by their values' kind:
    the value is among what the redactor finds as that kind."""

    @pytest.mark.parametrize(("kind", "text", "value"), grouped(groups, name_first=True))
    def test(kind: str, text: str, value: str) -> None:
        assert value in found_as(text, kind), found_with_kinds(text)

    return test


def finds_alone_in_each(cases: Cases, *, replaced: bool = False) -> Callable[..., None]:
    """A test of each (text, value, kind) of `cases`: the value, as its kind, is the one thing
    the redactor finds; `replaced`: and the text comes back with that value's placeholder in its
    place, the rest as it was."""

    @pytest.mark.parametrize(("text", "value", "kind"), _params(cases))
    def test(text: str, value: str, kind: str) -> None:
        assert found_with_kinds(text) == [(value, kind)], REDACTOR.find(text)
        if replaced:
            assert REDACTOR.redact([text]).texts[0] == text.replace(value, f"<{kind}_1>")

    return test
