"""The views finders read a text through (sampling/redaction/views.py): what each folds, drops
or decodes, and that a span found in a view maps back to exactly the original characters."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sampling.redaction.views import _JOIN_CANDIDATE, View, decoded, key, normalised, views
from tests.helpers.redaction import REDACTOR, finds_alone_in_each, found_with_kinds, leaves_each

pytestmark = pytest.mark.unit


def _origin_of(view: View, original: str, found: str) -> str:
    start = view.text.index(found)
    first, last = view.origin(start, start + len(found))
    return original[first:last]


def test_an_ascii_text_is_its_own_view_without_a_copy() -> None:
    text = "write to ada@example.com today"
    (view,) = views(text)
    assert view.text is text and view.identity
    assert view.origin(9, 24) == (9, 24)


@pytest.mark.parametrize(
    ("original", "folded", "found", "source"),
    [
        ("mail ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ。", "mail ada@example.com。", "ada@example.com",
         "ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ"),
        ("weight 3㎏ of ﬁsh", "weight 3kg of fish", "kg of fi", "㎏ of ﬁ"),
        ("x 3㎏ y", "x 3kg y", "g", "㎏"),
        ("a\u200bda@exa\u00admple.com!", "ada@example.com!", "ada@example.com",
         "a\u200bda@exa\u00admple.com"),
        ("call 138\u00a01234\u30005678", "call 138 1234 5678", "1234 5678", "1234\u30005678"),
        ("رقم ١٢٣٤ ok", "رقم 1234 ok", "1234", "١٢٣٤"),
        ("e\ufe0fmoji \u2066x\u2069", "emoji x", "moji x", "moji \u2066x"),
    ],
)  # fmt: skip
def test_the_normalised_view_maps_back_to_the_original_characters(
    original: str, folded: str, found: str, source: str
) -> None:
    view = normalised(original)
    assert view.text == folded
    assert _origin_of(view, original, found) == source


@pytest.mark.parametrize(
    ("original", "found", "source"),
    [
        ("/share?u=ada%40example.com&x=1", "ada@example.com", "ada%40example.com"),
        ("q=%E4%BD%A0%E5%A5%BD ok", "好", "%E5%A5%BD"),
        ('{"out": "ada\\u0040example.com"}', "ada@example.com", "ada\\u0040example.com"),
        ('{"out": "\\uff21\\uff22 \\ud83d\\ude00"}', "AB", "\\uff21\\uff22"),
        ("<p>ada&#64;example&period;com &amp; co</p>", "ada@example.com", "ada&#64;example&period;com"),
        ("<p>ada&commat;x&#x2e;org</p>", "ada@x.org", "ada&commat;x&#x2e;org"),
        ("The root password is:\n  hunter2 ok", "is: hunter2", "is:\n  hunter2"),
        ("密码是：\n\thunter2", "密码是: hunter2", "密码是：\n\thunter2"),
    ],
)  # fmt: skip
def test_the_decoded_view_maps_back_to_the_encoded_characters(
    original: str, found: str, source: str
) -> None:
    view = decoded(original)
    assert view is not None
    assert _origin_of(view, original, found) == source


@pytest.mark.parametrize(
    "text",
    ["plain prose, 50% off", "a line:\n\nthen a paragraph", "if x:\n", "R&D; done", "def f():"],
)
def test_no_decoded_view_where_there_is_nothing_to_decode(text: str) -> None:
    assert decoded(text) is None


def test_a_value_in_any_form_is_one_value() -> None:
    assert key("ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ") == key("ada%40example.com") == "ada@example.com"
    assert key("a\u200bda&#64;example.com") == "ada@example.com"


def test_the_reviewer_sees_the_original_text_with_the_value_gone() -> None:
    text = (
        "我的邮箱是ａｄａ＠ｅｘａｍｐｌｅ．ｃｏｍ，也可以写 ada@example.com 或 ada%40example.com。"
    )
    (out,) = REDACTOR.redact([text]).texts
    assert out == "我的邮箱是<EMAIL_1>，也可以写 <EMAIL_1> 或 <EMAIL_1>。"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call me: １３８－１２３４－５６７８ tonight", "call me: <PHONE_1> tonight"),
        ("mail a\u200bda@exam\u200cple.com now", "mail <EMAIL_1> now"),
        ('{"out": "mail ada\\u0040example.com"}', '{"out": "mail <EMAIL_1>"}'),
        ("The root password is:\n  Hunter2-Blue", "The root password is:\n  <SECRET_1>"),
    ],
)
def test_values_in_each_form_are_redacted_in_place(text: str, expected: str) -> None:
    assert REDACTOR.redact([text]).texts == (expected,)


# Pieces of text around line breaks and escapes: naming signs and words, indents of every kind
# of white space, words with and without digits, the marks that end a value-like word.
_PIECES = ("\n", "\n", "\n\n", ":", "=", "：", "\\", " ", "\t", "\u3000", "\xa0", "\u2028", "\x0b",
           "is", "Password is", "密码是", "是", "pw", "abc1", "7", "x9y", "，", "。", ",", ";",
           "word", "Word", "ｗ", "ß", "é", "%40", "&amp;", "\\u0040")  # fmt: skip


def _random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randrange(1, 10))) for _ in range(count)]


def test_the_line_breaks_to_join_are_those_the_plain_search_finds() -> None:
    """`_JOIN_CANDIDATE` reads a word after a line break once (no backtracking into it): the
    same line breaks as the plain pattern, which tries each shorter prefix of the word."""
    plain = re.compile(r"\n(?:(?<=[:=：\\ \t]\n)|(?=[^\S\n]|[^\s，。,;]*[0-9]))")
    found = 0
    for text in _random_texts(5000, seed=61):
        expected = [m.start() for m in plain.finditer(text)]
        assert [m.start() for m in _JOIN_CANDIDATE.finditer(text)] == expected, repr(text)
        found += len(expected)
    assert found > 500  # not vacuous


def test_a_value_with_nothing_to_decode_is_its_own_key() -> None:
    """`key` skips the views for an ASCII value without an escape or a line break: the same
    key as through them."""
    for text in _random_texts(5000, seed=62):
        extra = decoded(text)
        assert key(text) == (extra if extra is not None else normalised(text)).text.strip()


# Numbers said digit by digit (spoken.py): (the transcript, the value as said, its kind).
SPOKEN = [
    ("Agent: and the long number?\nCaller: four two five nine zero one one two 0 2 5 0 double zero four four",
     "four two five nine zero one one two 0 2 5 0 double zero four four", "CARD"),
    ("le numéro de carte c'est cinq un sept trois quatre neuf deux quatre 9312 9943, voilà",
     "cinq un sept trois quatre neuf deux quatre 9312 9943", "CARD"),
    ("can you call me back at nine one seven, three zero five, six six one three, thanks",
     "nine one seven, three zero five, six six one three", "PHONE"),
    ("mon numéro c'est zéro six cinquante 41 27 83 merci", "zéro six cinquante 41 27 83", "PHONE"),
    ("meu CPF é cinco dois quatro seis três meia zero três um oito seis", "cinco dois quatro seis três meia zero três um oito seis", "BR_CPF"),
    ("電話は０９０の４４１７の２２８０です", "０９０の４４１７の２２８０", "PHONE"),
]  # fmt: skip


test_a_number_said_digit_by_digit_is_hidden_whole = finds_alone_in_each(SPOKEN)


test_counting_in_words_is_no_number = leaves_each(
    [
        "one or two of them, three or four maybe",
        "Testing, one two three, can you hear me",
        "We have one, two, three, four options and a phone",
        "un deux trois quatre, on y va !",
        "for (int i = 0; i < 10; i++) { x = null; }",
        "someone, phone, tone, done",
        "[null, null, null, null, null, null, null, null, null, null]",
    ]
)


_SAID = {
    "en": ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"],
    "es": ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve"],
    "de": ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"],
    "tr": ["sıfır", "bir", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz"],
}


@given(
    # (Three digits or more: `null null null null` is a list, not a number.)
    digits=st.text("0123456789", min_size=4, max_size=16).filter(lambda d: len(set(d)) >= 3),
    language=st.sampled_from(sorted(_SAID)),
    between=st.sampled_from([" ", "  ", ", ", " - "]),
    before=st.sampled_from(["my number is ", "es el ", "Nummer: ", ""]),
    after=st.sampled_from([" thanks", ".", "", " ok"]),
)
def test_the_spoken_view_reads_the_digits_and_maps_them_back(
    digits: str, language: str, between: str, before: str, after: str
) -> None:
    said = between.join(_SAID[language][int(digit)] for digit in digits)
    text = before + said + after
    spoken = [view for view in views(text)[1:] if digits in view.text.replace(" ", "")]
    assert spoken, [view.text for view in views(text)]
    view = spoken[0]  # the text around the number is as it was
    assert view.text.startswith(before) and view.text.endswith(after)
    first, last = view.origin(len(before), len(view.text) - len(after))
    assert text[first:last] == said


@pytest.mark.parametrize(
    "text",
    ["Run `mysql -u aa -p 000%09 prod` to connect.", "Run `mysql -u aa -p:\n000%09 prod` now."],
)
def test_a_password_that_holds_an_escapes_spelling_is_hidden_whole(text: str) -> None:
    # A shell does not decode `%09`: the value is as typed, though its decoded form (`000`
    # and a tab) reads as a database's name or stops at the tab. (The client's user is found
    # as a login.)
    assert found_with_kinds(text) == [("aa", "USERNAME"), ("000%09", "PASSWORD")]


# A value given in a transcript's next turn, in answer to the question that names it.
ANSWERS = [
    ("Agent: Can I have your date of birth please?\nCaller: 14/03/1985", "14/03/1985", "BIRTH_DATE"),
    ("Agent: and your account number?\nCaller: it is 40817810099910004312", "40817810099910004312", "ACCOUNT_NUMBER"),
    ("Agent: and your passport number?\nCaller: K4829371", "K4829371", "PASSPORT"),
    ("Agente: ¿me confirma su DNI?\nCliente: 48273916K", "48273916K", "NATIONAL_ID"),
    ("Q: What is your date of birth?\nA: 02/11/1990", "02/11/1990", "BIRTH_DATE"),
    ("Operator: Hello, thanks for calling.\nOperator: What is your passport number?\nCaller: L7720418", "L7720418", "PASSPORT"),
]  # fmt: skip


# The view replaced the question's mark, the line break and who answers: they stay.
test_a_value_given_in_answer_to_its_name_is_hidden = finds_alone_in_each(ANSWERS, replaced=True)


test_turns_that_give_no_named_value_stay = leaves_each(
    [
        "address: The peripheral address.\ncode: ATT error code (0 = success)",
        "PASS: tests/test_login.py::test_ok\nPASS: build_cache (0.2s)",
        "User: what is 2+2?\nAssistant: 4",
        "Agent: What is your order number?\nCaller: 12345678",
        "INFO: starting up the server now.\nWARN: port 8080 in use",
        "Agent: How long have you had the card?\nCaller: about 3 years, since 2021",
    ]
)
