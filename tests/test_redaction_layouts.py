"""Values in the layouts people type them in, whatever the value and the words around it: a
command's password after spaces of any kind, a colon or a wrapped line; a name after a greeting
with a colon or a line break, or ended by a closing mark of any script with more text after it;
a letters-only password in a line of fields; a code glued to Japanese or Korean words."""

# ruff: noqa: E501  (a case reads best on one line)
from __future__ import annotations

import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sampling.redaction.context import NO_VALUE, placeholder
from sampling.redaction.finders.names import _NOT_NAMES, _NOT_PERSONS
from sampling.redaction.finders.stated_secrets import PasswordPhraseFinder
from sampling.redaction.views import decoded
from tests.helpers.redaction import REDACTOR

pytestmark = pytest.mark.unit

# Text of scripts written without spaces, and of Latin ones, to set a value among.
KANA = st.text(
    "あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんです",
    min_size=1,
    max_size=8,
)
HANGUL = st.text("가나다라마바사아자차카타파하입니다감사합니요", min_size=1, max_size=8)
HAN = st.text("今天我们的这是请问谢谢确认时间号码", min_size=1, max_size=8)
LATIN = st.lists(
    st.text(string.ascii_lowercase, min_size=2, max_size=8), min_size=1, max_size=5
).map(" ".join)
CJK_WORDS = st.one_of(KANA, HANGUL, HAN)
# What follows a value: words of a script written without spaces (glued), Latin words after a
# space, or nothing.
MORE_TEXT = st.one_of(CJK_WORDS, LATIN.map(" ".__add__), st.just(""))
# Spaces as people paste them: plain, no-break, narrow, figure, ideographic.
SPACE = st.sampled_from([" ", "\u00a0", "\u202f", "\u2007", "\u3000"])
INDENT = st.sampled_from(["", " ", "  ", "    ", "\t", "\u3000"])
# Closing and sentence marks of several scripts (ASCII and full-width).
CLOSING = st.sampled_from(
    [".", ";", "!", "?", ")", "）", "。", "」", "』", "»", "”", "；", "！", "、", " —", " –"]
)


def _hidden(text: str, start: int, end: int) -> bool:
    """Every visible character of text[start:end] lies inside a span the redactor replaces."""
    spans = REDACTOR.find(text)
    return all(
        any(s.start <= position < s.end for s in spans)
        for position in range(start, end)
        if not text[position].isspace()
    )


def _redacted(text: str) -> str:
    return REDACTOR.redact([text]).texts[0]


# --- a command's password ----------------------------------------------------------------------

SYMBOLS = "!@#$%&*^~+?"
# A password as people choose one for a command: it holds a symbol, or a digit and both cases.
COMMAND_PASSWORDS = st.one_of(
    st.builds(lambda a, s, b: a + s + b, st.text(string.ascii_letters + string.digits, min_size=3, max_size=10),
              st.sampled_from(SYMBOLS), st.text(string.ascii_letters + string.digits, max_size=4)),
    st.builds(lambda a, n, b: a.capitalize() + str(n) + b, st.text(string.ascii_lowercase, min_size=3, max_size=8),
              st.integers(0, 9999), st.text(string.ascii_lowercase, min_size=1, max_size=4)),
)  # fmt: skip
# What people put between `-p` and the password: spaces of any kind, a colon, a quote, the
# command's line wrapped with `\` or the value on the line after `-p:`.
GAPS = st.one_of(
    SPACE, st.builds(lambda i: f":\n{i}", INDENT), st.builds(lambda i: f" \\\n{i}", INDENT),
    st.builds(lambda s: f":{s}", SPACE), st.just("="),
)  # fmt: skip


@given(
    st.sampled_from(["mysql -u {user}", "mariadb -h db.local -u {user}", "mysqldump -u {user}"]),
    st.text(string.ascii_lowercase, min_size=2, max_size=8),
    GAPS,
    COMMAND_PASSWORDS,
    st.sampled_from([" prod", " app_db", "", " -e 'select 1'"]),
    st.sampled_from(
        [
            "Run `{}` to connect.",
            "用 {} 连接数据库。",
            "{}",
            "Try:\n  {}\nand tell me.",
            "すみません、{}です",
        ]
    ),
)
@settings(max_examples=150, deadline=None)
def test_a_database_commands_password_after_any_gap_is_hidden(
    command: str, user: str, gap: str, password: str, rest: str, sentence: str
) -> None:
    line = f"{command.format(user=user)} -p{gap}{password}{rest}"
    text = sentence.format(line)
    start = text.index(f"-p{gap}{password}") + len(f"-p{gap}")
    assert _hidden(text, start, start + len(password)), (text, _redacted(text))


@given(
    GAPS,
    st.sampled_from(["", "'", '"']),
    COMMAND_PASSWORDS,
    st.sampled_from(SYMBOLS + string.ascii_lowercase),
)
@settings(max_examples=100, deadline=None)
def test_sshpass_takes_the_next_word_after_any_gap(
    gap: str, quote: str, password: str, extra: str
) -> None:
    value = password + extra
    text = f"I log in with sshpass -p{gap}{quote}{value}{quote} ssh deploy@host every day."
    start = text.index(f"{quote}{value}{quote} ssh") + len(quote)
    assert _hidden(text, start, start + len(value)), (text, _redacted(text))


@given(st.text(string.ascii_lowercase + "_", min_size=2, max_size=12), SPACE)
@settings(max_examples=60, deadline=None)
def test_after_a_space_a_database_name_is_not_a_password(database: str, space: str) -> None:
    # `mysql -p prod`: -p asks for the password, `prod` is the database.
    assume(database.strip("_"))
    text = f"Run `mysql -u root -p{space}{database}` and type the password when asked."
    assert _redacted(text) == text


def test_a_wrapped_command_line_reads_as_one_and_maps_back() -> None:
    text = "mysql -u app -p \\\n    S3cr3t!x prod"
    view = decoded(text)
    assert view is not None and view.text == "mysql -u app -p  S3cr3t!x prod"
    start = view.text.index("S3cr3t!x")
    first, last = view.origin(start, start + len("S3cr3t!x"))
    assert text[first:last] == "S3cr3t!x"
    assert _redacted(text) == "mysql -u app -p \\\n    <PASSWORD_1> prod"
    escaped = decoded("a \\\\\nb")  # an escaped backslash at a line's end wraps nothing
    assert escaped is not None and escaped.text == "a \\\nb"


# --- a person's name ---------------------------------------------------------------------------

NAME_WORD = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from("ABCDEFGHIJKLMNOPRSTUVWZÁÉÖÅŁ"),
    st.text("abcdefghijklmnoprstuvwyzáéíóñüçø", min_size=2, max_size=9),
).filter(lambda word: word.lower() not in _NOT_NAMES | _NOT_PERSONS)  # a firm's word: no name
NAMES = st.lists(NAME_WORD, min_size=2, max_size=3).map(" ".join)
INTROS = st.sampled_from(
    [
        "Dear",
        "My name is",
        "Name:",
        "Dr.",
        "Ms.",
        "Hello",
        "je m'appelle",
        "Mi nombre es",
        "Hola",
        "Liebe",
        "Sehr geehrte Frau",
        "Bonjour",
        "Chère",
        "Estimado Sr.",
        "Geachte",
        "Dr",
        "Herr",
        "Hey",
    ]
)
# After the phrase: a space, a colon, a line break with an indent or not (a wrapped line).
AFTER_INTRO = st.one_of(SPACE, st.builds(lambda i: f"\n{i}", INDENT), st.builds(lambda i: f":\n{i}", INDENT),
                        st.builds(lambda s: f":{s}", SPACE))  # fmt: skip


@given(
    st.one_of(LATIN, CJK_WORDS),
    INTROS,
    AFTER_INTRO,
    NAMES,
    st.one_of(CLOSING, st.just(",")),
    MORE_TEXT,
)
@settings(max_examples=200, deadline=None)
def test_a_name_after_a_greeting_or_an_introduction_is_hidden(
    before: str, intro: str, after_intro: str, name: str, closing: str, more: str
) -> None:
    assume(not (intro.endswith(":") and after_intro.startswith(":")))
    lead = f"{before}, {intro}{after_intro}"
    text = f"{lead}{name}{closing}{more}"
    assert _hidden(text, len(lead), len(lead) + len(name)), (text, _redacted(text))


SIGN_OFFS = st.sampled_from(
    [
        "Best regards",
        "Kind regards",
        "Regards",
        "Sincerely",
        "Yours sincerely",
        "Cheers",
        "Thanks",
        "Many thanks",
        "All the best",
        "Best wishes",
        "Yours truly",
        "Mit freundlichen Grüßen",
        "Viele Grüße",
        "Cordialement",
        "Bien à vous",
        "Atentamente",
        "Un saludo",
        "Cordiali saluti",
        "Met vriendelijke groet",
        "Atenciosamente",
    ]
)


@given(
    st.one_of(LATIN, CJK_WORDS),
    SIGN_OFFS,
    st.sampled_from([",", "", "!", ",:", ":"]),
    INDENT,
    st.one_of(NAMES, NAME_WORD),
    st.one_of(
        st.just(""),
        st.builds(lambda c, m: c + m, CLOSING, MORE_TEXT),
        st.builds(lambda m: f" (Sales){m}", MORE_TEXT),  # an affiliation after the name
        st.builds(lambda s, c, m: s + c + m, SPACE, CLOSING, MORE_TEXT),
    ),
)
@settings(max_examples=200, deadline=None)
def test_a_name_under_a_sign_off_is_hidden_with_more_text_after_it_or_not(
    before: str, sign_off: str, mark: str, indent: str, name: str, after: str
) -> None:
    lead = f"{before}\n\n{sign_off}{mark}\n{indent}"
    text = f"{lead}{name}{after}"
    assert _hidden(text, len(lead), len(lead) + len(name)), (text, _redacted(text))


@given(SIGN_OFFS, NAME_WORD, LATIN)
@settings(max_examples=60, deadline=None)
def test_one_capitalised_word_and_a_comma_under_a_sign_off_is_a_sentence(
    sign_off: str, word: str, more: str
) -> None:
    # "Thanks,\nAlso, could you ...": the line after a sign-off that goes on is no name.
    text = f"{sign_off},\n{word}, {more}"
    assert _redacted(text) == text


# --- a letters-only password in a line of fields -----------------------------------------------

# Letters that name no state (`false`, `hidden`: a field's type or status, not its value).
# Not a word that stands in a password's place (`example`, `changeme`): left on purpose.
LETTERS = st.text(string.ascii_lowercase, min_size=5, max_size=14).filter(
    lambda v: (
        len(set(v)) > 2
        and v not in PasswordPhraseFinder._NOT_A_VALUE | NO_VALUE
        and not placeholder(v)
    )
)
FIELD_SEPARATORS = st.sampled_from([" / ", " | ", ", ", "，", "、", "; ", "；"])
PASSWORD_LABELS = st.sampled_from(
    [
        "password",
        "Password",
        "passwort",
        "mot de passe",
        "密码",
        "パスワード",
        "비밀번호",
        "Wi-Fi password",
    ]
)
VALUE_ENDS = st.sampled_from([";", ")", "）", "。", "」", "!", " !", "입니다", "です", "；"])


@given(
    st.one_of(LATIN, CJK_WORDS),
    LATIN,
    LATIN,
    FIELD_SEPARATORS,
    PASSWORD_LABELS,
    st.sampled_from([": ", "：", ":"]),
    LETTERS,
    VALUE_ENDS,
    MORE_TEXT,
)
@settings(max_examples=200, deadline=None)
def test_a_letters_only_password_in_a_line_of_fields_is_hidden(
    greeting: str,
    field: str,
    field_value: str,
    separator: str,
    label: str,
    colon: str,
    value: str,
    end: str,
    more: str,
) -> None:
    lead = f"{greeting}、{field}: {field_value}{separator}{label}{colon}"
    text = f"{lead}{value}{end}{more}"
    assert _hidden(text, len(lead), len(lead) + len(value)), (text, _redacted(text))


@given(
    st.sampled_from(["Password", "password", "Your password"]),
    st.sampled_from(["incorrect", "expired", "wrong", "invalid", "accepted"]),
    LATIN,
)
@settings(max_examples=40, deadline=None)
def test_a_password_word_in_a_sentence_is_no_value(label: str, state: str, more: str) -> None:
    # Letters that go on with a sentence (a comma, more words) say what the password is like.
    for text in (f"{label}: {state}, {more}", f"The {label.lower()} is {state} {more}"):
        assert _redacted(text) == text


# --- a code glued to words of a script written without spaces ----------------------------------

CODE_NAMES = st.sampled_from(
    [
        "OTP: ",
        "PIN ",
        "my PIN is ",
        "verification code: ",
        "The door code is ",
        "验证码是",
        "您的验证码",
        "인증번호 ",
        "暗証番号は",
        "code de vérification : ",
        "Tu código de verificación es ",
        "Bestätigungscode: ",
        "codice di verifica ",
        "Kod weryfikacyjny: ",
    ]
)


@given(
    st.one_of(LATIN, CJK_WORDS),
    CODE_NAMES,
    st.integers(4, 8).flatmap(lambda n: st.text(string.digits, min_size=n, max_size=n)),
    CJK_WORDS,
    st.sampled_from(["", "#", "，", " ", "。"]),
)
@settings(max_examples=200, deadline=None)
def test_a_code_glued_to_cjk_words_is_hidden(
    before: str, name: str, code: str, glued: str, after: str
) -> None:
    lead = f"{before}、{name}"
    text = f"{lead}{code}{glued}{after}"
    assert _hidden(text, len(lead), len(lead) + len(code)), (text, _redacted(text))


@given(
    CODE_NAMES,
    st.text(string.digits, min_size=4, max_size=6),
    st.text(string.ascii_lowercase, min_size=1, max_size=4),
)
@settings(max_examples=60, deadline=None)
def test_digits_glued_to_latin_letters_are_not_a_code(name: str, digits: str, letters: str) -> None:
    text = f"{name}{digits}{letters} and more"
    assert not any(span.kind == "SECRET" for span in REDACTOR.find(text)), _redacted(text)
