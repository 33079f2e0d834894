"""Properties of the redactor over values in the forms people's text brings them: full-width,
with invisible characters, in no-break spaces, URL-, JSON- and HTML-encoded, on the line after
their name, against punctuation of any script and CJK characters."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import html
import json
import re
import time
import unicodedata
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.redaction import REDACTOR

pytestmark = pytest.mark.unit
PLACEHOLDER = r"<[A-Z][A-Z0-9_]*_[0-9]+>"

_LOCAL = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=10)
EMAILS = st.builds(lambda a, b, n: f"{a}.{b}{n}@example.org", _LOCAL, _LOCAL, st.integers(1, 99))
PHONES = st.builds(
    lambda p, n: f"1{p}{n:09d}", st.sampled_from("3456789"), st.integers(0, 10**9 - 1)
)
CARDS = st.sampled_from(["4111 1111 1111 1111", "5500005555555559", "4012888888881881"])
KEYS = st.builds(
    lambda body: f"ghp_{body}",
    st.text("abcdefghijkmnpqrstuvwxyzABCDEFGH23456789", min_size=36, max_size=36),
)
PASSWORDS = st.builds(lambda a, n: f"{a.capitalize()}{n}x!Q", _LOCAL, st.integers(10, 999))
VALUES = st.one_of(
    st.tuples(st.just("my e-mail is "), EMAILS), st.tuples(st.just("my phone number is "), PHONES),
    st.tuples(st.just("card number "), CARDS), st.tuples(st.just("token "), KEYS),
    st.tuples(st.just("the password is "), PASSWORDS),
)  # fmt: skip
SEPARATORS = st.sampled_from([" ", "\u3000", "，", "。", "、", "：", "（", "）", "「", "」", "；",
                              "！", "？", "¿", "«", "»", "請", "です", "입니다", "\u00a0"])  # fmt: skip


def _fullwidth(value: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)


TRANSFORMS = {
    "plain": lambda v: v,
    "fullwidth": _fullwidth,
    "invisible": lambda v: "\u200b".join([v[:3], v[3:6], v[6:]]),
    "spaces": lambda v: v.replace(" ", "\u00a0"),
    "url": lambda v: quote(v, safe=""),
    "json": lambda v: json.dumps(v, ensure_ascii=True)[1:-1].replace("@", "\\u0040"),
    "html": lambda v: html.escape(v).replace("@", "&#64;").replace(".", "&period;"),
}


def _visible(char: str) -> bool:
    return not char.isspace() and unicodedata.category(char) != "Cf"


@given(VALUES, st.sampled_from(sorted(TRANSFORMS)), SEPARATORS, SEPARATORS, st.booleans())
@settings(max_examples=150, deadline=None)
def test_no_visible_character_of_a_planted_value_survives(
    named: tuple[str, str], transform: str, before: str, after: str, wrapped: bool
) -> None:
    name, value = named
    if transform == "url" and name.startswith("card"):
        value = value.replace(" ", "")  # a card in a URL is written without spaces
    shown = TRANSFORMS[transform](value)
    lead = f"今天{before}{name.rstrip()}:\n  " if wrapped else f"今天{before}{name}"
    text = f"{lead}{shown}{after}谢谢"
    start = len(lead)
    spans = REDACTOR.find(text)
    for position in range(start, start + len(shown)):
        if _visible(text[position]):
            assert any(s.start <= position < s.end for s in spans), (text, position)


@given(VALUES, st.sampled_from(sorted(TRANSFORMS)), SEPARATORS)
@settings(max_examples=100, deadline=None)
def test_redaction_is_idempotent_and_changes_only_what_it_replaces(
    named: tuple[str, str], transform: str, separator: str
) -> None:
    name, value = named
    text = f"请看{separator}{name}{TRANSFORMS[transform](value)}{separator}谢谢 and ok."
    (out,) = REDACTOR.redact([text]).texts
    assert REDACTOR.redact([out]).texts == (out,)
    kept, position = [], 0
    for span in REDACTOR.find(text):
        kept.append(re.escape(text[position : span.start]))
        position = span.end
    kept.append(re.escape(text[position:]))
    assert re.fullmatch(PLACEHOLDER.join(kept), out), (text, out)


@given(st.text(min_size=1, max_size=300), st.sampled_from(sorted(TRANSFORMS)))
@settings(max_examples=15, deadline=None)
def test_any_text_of_100_kb_finishes_in_bounded_time(chunk: str, transform: str) -> None:
    text = (TRANSFORMS[transform](chunk) * (100_000 // len(chunk) + 1))[:100_000]
    started = time.process_time()
    REDACTOR.find(text)
    assert time.process_time() - started < 2.0
