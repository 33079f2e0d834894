"""The finders as a plug-in family (sampling/redaction/finders/): each declares what the redactor
reads off it, a finder of your own registered by name or named by dotted path in the config runs
beside the built-in ones, and the one trigger scan per view never keeps a finder from a view it
would find something in."""

# ruff: noqa: E501  (the value lists read best a few to a line)
from __future__ import annotations

import json
import random
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sampling.redaction import Redactor, finders
from sampling.redaction import triggers as trigger_module
from sampling.redaction.config import RedactConfig
from sampling.redaction.finders import builtin_finders, finder_names
from sampling.redaction.finders.tokens import token_rules
from sampling.redaction.kinds import BUILTIN_KINDS
from sampling.redaction.spans import ALL_VIEWS, Text
from sampling.redaction.triggers import Triggers, TriggerScan
from sampling.redaction.views import views

pytestmark = pytest.mark.unit
FINDERS = builtin_finders()

# Values of every kind, the words that name them, and pieces that sit close to a trigger without
# being one (`bypass`, `using`, `monkey`): what random texts are made of.
VALUES = [
    "jane.doe@example.org", "jo (at) mail (dot) com", "j dot smith at gmail dot com",
    "+44 20 7946 0958", "(555) 123-4567", "13812345678", "4111 1111 1111 1111", "123-45-6789",
    "GB82 WEST 1234 5698 7654 32", "AB 12 34 56 C", "ABCPE1234F", "11010519491231002X",
    "2345 6789 0124", "123.456.789-09", "E12345678", "203.0.113.42", "fe80::1:2", "00:1A:2B:3C:4D:5E",
    "742 Evergreen Terrace", "Hauptstraße 5, 10115 Berlin", "Calle Mayor 5", "北京市朝阳区建国路88号",
    "東京都千代田区丸の内1-9-1", "14 rue de la Paix, 75002 Paris", "03/14/1985", "1985年3月14日",
    "0012 3456 789", "D1234-5678-9012", "130 692 544", "54362315-K", "971013-9019902",
    "postgres://app:S3cr3tPw@db.internal:5432/prod", "Password=Hunter2x;", "WIFI:S:net;P:pw12;;",
    "mysql -u r -pS3cret", "curl -u ann:pw9 x", "sshpass -p x1y2", "-----BEGIN RSA PRIVATE KEY-----",
    "PuTTY-User-Key-File-2", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "Xk3vP9qLm2Rt7Ws4Yz8A",
    "'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA'", "4829", "551203", "Tr0ub4dor&3",
    *(rule.example for rule in token_rules()[::7]),
]  # fmt: skip
NAMES = [
    "password", "passwort", "pass:", "pw", "pwd", "passcode", "mot de passe", "contraseña", "密码是",
    "api_key=", "secret:", "token ", "sid=", "my key is", "pin", "PIN code", "cvv", "otp:",
    "security code ", "验证码", "passport", "护照", "SSN", "CPF", "Aadhaar", "身份证", "SIN", "DNI",
    "BSN", "PESEL", "주민등록번호", "マイナンバー", "DOB:", "born ", "account number", "acct",
    "Kontonummer", "账号", "routing number", "MRN", "driver's license", "Führerschein",
    "my name is ", "Name: ", "Dear ", "Hi ", "Mr. ", "Best regards,\n", "我叫", "名前は", "phone",
    "电话", "call ", "mailto:", "aws secret ", "Bearer ", "Authorization: ",
]  # fmt: skip
NEAR = ["bypass", "using", "monkey", "spin", "dlx", "database", "stubborn", "a", "Z", "0", "9"]
SEPARATORS = [" ", "\n", ": ", "=", "\u3000", "，", "\u200b", "\u00a0", "%40", "\\u0040", "&#64;",
              '"', "'", ".", "-", "\t", "：", "\n  "]  # fmt: skip
PIECES = VALUES + NAMES + NEAR + SEPARATORS


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 14)))
        form = rng.random()
        texts.append(text.upper() if form < 0.1 else _fullwidth(text) if form < 0.2 else text)
    return texts


def assert_triggers_hold(text: str, scan: TriggerScan) -> None:
    """Every finder that finds something in a view of `text` was let run there."""
    for view in views(text):
        fired = scan.fired(Text(view.text))
        for index, finder in enumerate(FINDERS):
            if not fired >> index & 1:
                found = list(finder.find(Text(view.text)))
                assert found == [], (finder.name, view.text, found)


SCAN = TriggerScan(FINDERS)


def test_every_builtin_finder_declares_what_the_redactor_reads() -> None:
    names = finder_names()
    assert len(names) == len(set(names)) == len(FINDERS)
    covered: set[str] = set()
    for name, finder in zip(names, FINDERS, strict=True):
        assert finder.name == name
        assert finder.kinds and finder.kinds <= BUILTIN_KINDS.keys(), name
        assert isinstance(finder.priority, int), name
        assert isinstance(finder.triggers, Triggers), name
        assert finder.views <= ALL_VIEWS, name
        for word in (*finder.triggers.words, *finder.triggers.word_starts):
            assert word == word.lower(), (name, word)  # the scan reads the lower case
        covered |= finder.kinds
    assert covered == BUILTIN_KINDS.keys()  # every kind has a finder


def test_a_finder_runs_on_every_view_it_finds_something_in() -> None:
    for text in random_texts(3000, seed=48):
        assert_triggers_hold(text, SCAN)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=3)), min_size=1, max_size=16),
    st.sampled_from([str, str.upper, str.title, _fullwidth]),
)
def test_triggers_are_necessary_on_any_text(pieces: list[str], form) -> None:  # type: ignore[no-untyped-def]
    assert_triggers_hold(form("".join(pieces)), SCAN)


def test_the_one_scan_agrees_with_each_word_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # ~7,400 triggers, each its own regex without the scan: ~20 ms a text.
    texts = random_texts(500, seed=49)
    one_by_one = TriggerScan(FINDERS)
    for text in texts:
        lower = Text(text).lower.encode("utf-8", "surrogatepass")
        assert SCAN._scan(lower) == one_by_one.one_by_one(lower), text
    monkeypatch.setattr(trigger_module, "hyperscan", None)  # a platform without the wheel
    without = TriggerScan(FINDERS)
    assert without._database is None
    # The scans themselves were compared on every text above; here the fallback's way through
    # fired() (each trigger alone, then the facts), on a quarter of them: ~7 ms a text.
    views_of = [Text(text) for text in texts[:250]]
    assert [without.fired(view) for view in views_of] == [SCAN.fired(view) for view in views_of]


def test_a_missing_trigger_is_caught() -> None:
    """The check above fails when a finder's triggers leave out a word it needs."""
    email = next(finder for finder in FINDERS if finder.name == "email")

    class Blind:
        kinds, name, find = email.kinds, "blind", email.find
        triggers = Triggers(words=("mailto:",))  # "@" left out

    blind = TriggerScan([Blind() if finder is email else finder for finder in FINDERS])
    with pytest.raises(AssertionError):
        assert_triggers_hold("write to jane.doe@example.org", blind)


def test_the_one_scan_finds_a_trigger_that_ends_the_text() -> None:
    """Every trigger word, last in texts of many lengths (after spaces, ASCII words or CJK
    characters), runs its finder: a database of a few literals and a class after a line break
    has been seen to miss a literal that ends a buffer of 17 bytes or more (Hyperscan 0.9.1)."""
    for index, finder in enumerate(FINDERS):
        triggers = finder.triggers
        for word in (*triggers.words, *triggers.word_starts, *triggers.whole_words):
            for length in (0, 1, 15, 16, 17, 18, 31, 32, 33, 64):
                for before in (" " * length, ("ab " * length)[-length:], "密" * length):
                    data = (before + word).encode()
                    assert SCAN._scan(data) >> index & 1, (finder.name, word, length)


PLUGIN = """
    from sampling.redaction.finders import register
    from sampling.redaction.spans import PERSONAL_PRIORITY, Span
    from sampling.redaction.triggers import Triggers


    @register("{name}")
    class EmployeeIdFinder:
        kinds = frozenset({{"EMPLOYEE_ID"}})
        priority = PERSONAL_PRIORITY
        triggers = Triggers(words=("emp-",))

        def find(self, text):
            at = text.text.find("EMP-")
            while at >= 0:
                yield Span(at, at + 10, "EMPLOYEE_ID")
                at = text.text.find("EMP-", at + 1)
"""


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A module outside the tree that registers a finder when it is imported."""
    name = f"employee_ids_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(PLUGIN.format(name=name)))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_finder_from_outside_runs_when_the_config_names_its_path(plugin_module: str) -> None:
    config = RedactConfig.model_validate({"finders": [f"{plugin_module}:EmployeeIdFinder"]})
    redactor = Redactor.from_config(config)
    out = redactor.redact(["badge EMP-004211 for jane.doe@example.org"])
    assert out.texts == ("badge <EMPLOYEE_ID_1> for <EMAIL_1>",)
    # Imported, it is registered: its name and its kind now load too.
    by_name = RedactConfig.model_validate(
        {"finders": [plugin_module], "kinds": ["EMAIL", "employee_id"]}
    )
    assert by_name.kinds == ["EMAIL", "EMPLOYEE_ID"]
    assert Redactor.from_config(by_name).redact(["EMP-004211"]).texts == ("<EMPLOYEE_ID_1>",)
    off = RedactConfig.model_validate({"finders": [plugin_module], "disable": ["EMPLOYEE_ID"]})
    assert Redactor.from_config(off).redact(["EMP-004211"]).texts == ("EMP-004211",)


def test_a_misspelled_finder_fails_at_load_with_the_nearest_name() -> None:
    with pytest.raises(ValidationError, match=r"unknown finder 'emial'.*email"):
        RedactConfig.model_validate({"finders": ["emial"]})


def test_each_list_of_the_finders_tables_holds_each_entry_once() -> None:
    # A word listed twice is a sign two edits did not see each other (the second copy of a
    # label, a phrase with other options), and reads as one more word than the table has.
    tables = sorted((Path(finders.__file__).parent).glob("*.json"))
    assert tables
    repeated: list[tuple[str, str, str]] = []

    def walk(value: object, where: str, table: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{where}/{key}", table)
        elif isinstance(value, list):
            seen = Counter(json.dumps(item, ensure_ascii=False, sort_keys=True) for item in value)
            repeated.extend((table, where, entry) for entry, count in seen.items() if count > 1)

    for table in tables:
        walk(json.loads(table.read_text(encoding="utf-8")), "", table.name)
    assert repeated == []
