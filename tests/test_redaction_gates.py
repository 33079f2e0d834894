"""The shortcuts that make redaction cheap never change what it finds: each gate (digits,
capitals, dotted numbers, long words, a character every match needs) only turns away texts its
finder would find nothing in, and the e-mail search from each `@` finds what a scan of the whole
text finds. Checked on seeded random texts dense in the characters the finders look for."""

from __future__ import annotations

import random
import re
import time

import pytest

from sampling.redaction import Redactor
from sampling.redaction import triggers as trigger_module
from sampling.redaction.config import RedactConfig
from sampling.redaction.finders import names as names_module
from sampling.redaction.finders.contact import EmailFinder, WrittenEmailFinder
from sampling.redaction.finders.identity import NinoFinder
from sampling.redaction.finders.names import NameFinder
from sampling.redaction.finders.network import IpFinder
from sampling.redaction.finders.numbers import NumberFinder
from sampling.redaction.finders.payment import IbanFinder
from sampling.redaction.finders.secrets import SECRET_NAMES, KeywordFinder, password_finders
from sampling.redaction.finders.stated_secrets import CodeFinder
from sampling.redaction.finders.tokens import RuleLookup, token_rules
from sampling.redaction.spans import LONG_WORD, Span, Text
from sampling.redaction.triggers import WordEnds

pytestmark = pytest.mark.unit

PIECES = [
    "jane.doe@example.org", "mailto:", "://admin:pw@db.io", "@", ":", "=", ".", "-", " ", "\n",
    "4111 1111 1111 1111", "+44 20 7946 0958", "(555) 123-4567", "123-45-6789", "203.0.113.42",
    "1.2.3", "fe80::1:2", "::", "GB82 WEST 1234 5698 7654 32", "GB82WEST12345698765432",
    "AB 12 34 56 C", "AB", "12", "7", "password", "Password=", "api_key", "token: ", "'",
    "x" * (LONG_WORD - 1), "y" * LONG_WORD, "é", "\u3000", "İ", "word", "Key",
    "mysql -u r -pS3cret", "curl -u ann:pw9 ", "sshpass -p x1", "WIFI:S:n;P:pw;;", "PIN ", "1234",
    "cvv", "otp:", "security code ", "验证码",
]  # fmt: skip


def random_texts(count: int, seed: int) -> list[str]:
    """Dense texts (many pieces, so finders meet each other's values) and sparse ones (one
    piece in a few random characters, so that a gate cannot pass on another piece's account)."""
    rng = random.Random(seed)
    alphabet = "aZ09 .:-@=()+/'\"\té"
    texts = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(3)))
        + piece
        + "".join(rng.choice(alphabet) for _ in range(rng.randrange(3)))
        for piece in PIECES
        for _ in range(20)
    ]
    for _ in range(count):
        parts = [
            rng.choice(PIECES) if rng.random() < 0.6 else rng.choice(alphabet)
            for _ in range(rng.randrange(1, 40))
        ]
        texts.append("".join(parts))
    return texts


TEXTS = random_texts(4000, seed=15)


class OpenText(Text):
    """Every gate open: what the finders find with their regexes and checks alone."""

    __slots__ = ()

    def has_number(self, digits: int) -> bool:
        return True

    def has_dotted_number(self) -> bool:
        return True

    def has_number_after_capitals(self, digits: int) -> bool:
        return True


@pytest.mark.parametrize(
    "finder", [NumberFinder(), IbanFinder(), NinoFinder(), IpFinder(), CodeFinder()]
)
def test_number_gates_turn_away_only_texts_without_a_find(finder) -> None:
    found_somewhere = False
    for text in TEXTS:
        expected = list(finder.find(OpenText(text)))
        assert list(finder.find(Text(text))) == expected, text
        found_somewhere |= bool(expected)
    assert found_somewhere  # the corpus exercises the finder


def test_email_search_from_each_at_finds_what_a_whole_scan_finds() -> None:
    finder, found = EmailFinder(), 0
    for text in TEXTS:
        view = Text(text)
        expected = [
            Span(m.start(), m.end(), "EMAIL")
            for m in finder._EMAIL.finditer(text)
            if not (
                m.start() and text[m.start() - 1] == ":" and finder._in_url(text, m.start() - 1)
            )
        ]
        assert list(finder.find(view)) == expected, text
        found += len(expected)
    assert found > 100


def test_long_words_are_the_words_of_twenty_characters_or_more() -> None:
    long_word = re.compile(rf"\S{{{LONG_WORD},}}")
    for text in TEXTS + [t.replace("é", "e").replace("\u3000", " ") for t in TEXTS]:
        expected = [m.span() for m in long_word.finditer(text)]
        assert Text(text).long_words == expected, text


def test_a_number_of_so_many_digits_is_found_with_or_without_separators() -> None:
    """`has_number(n)`: `n` digits with separators (` ()/+-.`) between them, digits in a row
    (answered at once) or not; `has_number_after_capitals(n)`: two capitals, then `n` digits,
    with separators between any of them."""
    for text in [*TEXTS, "a 1.2 3", "12", "1", "x9 9", "4111 1111 1111 1111", "GB 8.2", "G B82"]:
        expected = [re.search(rf"[0-9](?:[ ()/+.-]*[0-9]){{{n - 1}}}", text) is not None
                    for n in range(1, 12)]  # fmt: skip
        assert [Text(text).has_number(n) for n in range(1, 12)] == expected, text
        capitals = [re.search(rf"[A-Z][ ()/+.-]*[A-Z](?:[ ()/+.-]*[0-9]){{{n}}}", text) is not None
                    for n in (2, 4, 6)]  # fmt: skip
        assert [Text(text).has_number_after_capitals(n) for n in (2, 4, 6)] == capitals, text


def test_character_gates_of_password_finders_lose_nothing() -> None:
    for finder in password_finders():
        assert finder.needs
        ungated = type(finder)(**{**finder.__dict__, "needs": ""})
        found = 0
        for text in TEXTS:
            view = Text(text)
            assert list(finder.find(view)) == list(ungated.find(view)), text
            found += bool(list(ungated.find(view)))
        assert found, finder.name  # the corpus exercises the finder


def test_keyword_names_matched_per_operator_or_after_a_trigger_search_agree(monkeypatch) -> None:
    finder = KeywordFinder()
    few = [list(finder.find(Text(text))) for text in TEXTS]
    monkeypatch.setattr(KeywordFinder, "_FEW_OPERATORS", -1)  # always the trigger search
    assert [list(finder.find(Text(text))) for text in TEXTS] == few
    assert sum(map(len, few)) > 50


def test_every_secret_name_holds_a_trigger() -> None:
    # A text with many operators is searched for a trigger first: a name without one is missed.
    for name in SECRET_NAMES:
        example = re.sub(r"\(\?<?[!=][^)]*\)", "", name).replace("_?", "_").replace("s?", "s")
        assert any(trigger in example for trigger in KeywordFinder._TRIGGERS), name


def test_a_written_out_email_costs_each_start_a_few_steps() -> None:
    # "a dot a dot ..." with no domain after it: a bounded search, not the rest of the text.
    finder, started = WrittenEmailFinder(), time.process_time()
    for text in ("a dot " * 5000 + " at b", "a at " + "b dot " * 5000, "x(at)" + "b(dot)" * 5000):
        assert list(finder.find(Text(text))) == []
    assert time.process_time() - started < 0.5


def test_names_cost_each_candidate_a_few_words() -> None:
    # Hostile runs of phrases and capitals: each candidate reads at most three words.
    finder, started = NameFinder(), time.process_time()
    for text in ("hi A " * 20000, "Name: " + "Aa " * 20000, "Mr. " * 20000, ",\n" * 20000):
        list(finder.find(Text(text)))
    assert time.process_time() - started < 2.0


def _name_texts(count: int, seed: int, script: str = "ascii") -> list[str]:
    """Texts of the names finder's phrases (lower, upper, title case, a colon after),
    capitalised words, words that end in a phrase, and the marks around them: ASCII ones, or
    (`script="other"`) with the phrases and names of other scripts too."""
    rng = random.Random(seed)
    ascii_only = script == "ascii"
    phrases = [
        p.strip() for p in names_module._phrase_triggers(" ") if p.isascii() or not ascii_only
    ]
    names = ["Ana", "Priya Raghunathan", "O'Neil", "Sir"] + (
        [] if ascii_only else ["Дмитрий Козлов", "Élodie", "Trần Văn", "Ολγα", "é"]
    )
    pieces = [*phrases, *(p.title() for p in phrases), *(p.upper() for p in phrases), *names,
              " ", "  ", ":", ": ", "\n", ",", ".", "sushi", "nickname:", "model_name:", "DDr.",
              "2 ms.", "x", "Z"]  # fmt: skip
    texts = ["".join(rng.choice(pieces) + rng.choice(("", " "))
                     for _ in range(rng.randrange(1, 30))) for _ in range(count)]  # fmt: skip
    return texts if ascii_only else [text + " é" for text in texts]  # never all ASCII


_PHRASES_THEN_A_SPACE = names_module._phrase_triggers(" ")


def _read_at_every_phrase(text: str) -> list:
    """What the finder should find, by the slow way: every phrase looked for alone at each
    place in the text (at a word's start), read where a capital, a space or a title follows
    it."""
    lower, spans = text.lower(), []
    for phrase in _PHRASES_THEN_A_SPACE:
        at = lower.find(phrase)
        while at >= 0:
            end = at + len(phrase)
            starts_a_word = not (phrase.isascii() and "a" <= lower[at - 1 : at] <= "z")
            if starts_a_word and (
                names_module._CAPITAL.match(text, end)
                or text[end : end + 1] == " "
                or names_module._TITLE.match(text, end)
            ):
                spans += names_module._named_at(text, lower, end - 1)
            at = lower.find(phrase, at + 1)
    return spans + list(names_module.lowercase_names(text, lower))


@pytest.mark.parametrize("script", ["ascii", "other"])
def test_names_read_at_the_phrases_ends_are_those_each_phrase_alone_finds(script: str) -> None:
    """A text is read only where one scan finds a phrase's end (in another script, its offsets
    counted back from the UTF-8): what it finds there is what looking for each phrase alone
    finds (and the names typed in lower case, which both read alike)."""
    finder, found = NameFinder(), 0
    for text in _name_texts(1500, seed=16, script=script):
        expected, got = set(_read_at_every_phrase(text)), set(finder.find(Text(text)))
        # Besides: a Chinese or Japanese name right after its phrase (`我叫`, `氏名：`).
        after_han = {s for s in got - expected
                     if any(text[: s.start].rstrip(": ").endswith(p.rstrip(":"))
                            for p in names_module._HAN_PHRASES)}  # fmt: skip
        assert got - after_han == expected, text
        found += len(expected)
    assert found > 300


def test_word_ends_from_one_scan_are_those_each_word_alone_finds(monkeypatch) -> None:
    """Every end, at a word's start only, a word last in buffers of many lengths included (a
    literal ending a buffer has been missed by one Hyperscan version)."""
    # Short words carry their boundary into the scan, longer ones are checked after it.
    ends = WordEnds(["dear ", "hi ", "name: ", "ms. ", "olá ", "x", "first name: ", "sincerely "])
    texts = [*(t.lower() for t in _name_texts(1000, seed=17)),
             *(" " * n + "dear " for n in range(40)), *("ab " * n + "olá " for n in range(12)),
             "hi hi hi ", "chi ", "xx", "dear dear ", "4hi ", "_name: ", "xfirst name: ",
             "insincerely ", "(sincerely ", "sincerely "]  # fmt: skip
    for text in texts:
        data = text.encode()
        assert ends.ends(data) == ends.ends_one_by_one(data), text
    assert ends.ends(b"hi dear ") == [3, 8] and ends.ends(b"chi x") == [5]
    monkeypatch.setattr(trigger_module, "hyperscan", None)  # a platform without the wheel
    assert WordEnds(["hi "]).ends(b"hi chi hi ") == [3, 10]


def test_word_ends_in_characters_are_the_byte_ends_counted_back() -> None:
    """`char_ends` of a text with letters of several bytes: each end where the text itself
    has it, in time that grows with the text (each byte decoded once)."""
    ends = WordEnds(["olá ", "call ", "dear "])
    for text in ("olá é call ana", "日本 call 李 dear x olá ", "call olá " * 50, "dear x"):
        data = text.encode()
        expected = [len(data[:end].decode()) for end in ends.ends(data)]
        assert ends.char_ends(text) == expected, text
        assert all(text[:end].endswith(("olá ", "call ", "dear ")) for end in expected)
    long = "é call ana " * 40_000
    started = time.process_time()
    ends.char_ends(long)
    assert time.process_time() - started < 0.5  # decoded from the start at each end: ~4 s


def test_a_cached_text_gets_its_own_numbers_in_each_record() -> None:
    redactor = Redactor.from_config(RedactConfig())
    prompt = "mail a@example.org or b@example.org"
    first = redactor.redact([prompt, "and b@example.org"]).texts
    second = redactor.redact(["c@example.org", prompt]).texts  # the prompt's spans come cached
    assert first == ("mail <EMAIL_1> or <EMAIL_2>", "and <EMAIL_2>")
    assert second == ("<EMAIL_1>", "mail <EMAIL_2> or <EMAIL_3>")
    finds = redactor.find(prompt)
    finds.clear()  # a caller's copy: the cache keeps its own
    assert len(redactor.find(prompt)) == 2


def test_token_rules_found_by_one_search_are_those_whose_keywords_the_window_holds() -> None:
    # Keywords overlap (`sk` and `k_live_` in `sk_live_`, `sk-` inside `sk-ant-`): each rule
    # whose keyword is anywhere in the window runs, as a test of every rule's keywords decides.
    rules = token_rules()
    lookup = RuleLookup(rules)
    keywords = sorted({keyword for rule in rules for keyword in rule.keywords})
    rng = random.Random(3)
    windows = [rule.example.lower() for rule in rules] + ["sk_live_x", "xsk-ant-api", "glc_"]
    for _ in range(3000):
        parts = [rng.choice(keywords)[rng.randrange(2) :] for _ in range(rng.randrange(1, 6))]
        windows.append("".join(parts))
    for lower in windows:
        expected = [rule for rule in rules if any(k in lower for k in rule.keywords)]
        assert lookup.rules_in(lower) == expected, lower
