"""Secrets: private key blocks, JWTs, passwords in URLs, connection strings and command lines,
values given to a secret-sounding name, and random tokens, quoted or not (tokens of known
formats are tokens.py's, sentences that state a secret stated_secrets.py's).

Every finder declares the triggers each of its finds needs (a long word, a `://`, a name), so
that the views without them never run it (bench/redaction_throughput.py measures each).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sampling.redaction.context import NO_VALUE, NamedBefore, code_not_a_secret
from sampling.redaction.finders import register
from sampling.redaction.randomness import (
    character_classes,
    looks_random,
    reads_as_words,
    unnamed_secret,
)
from sampling.redaction.spans import (
    ALL_VIEWS,
    SECRET_PRIORITY,
    TOKEN_WORD,
    USER_PRIORITY,
    Span,
    Text,
)
from sampling.redaction.triggers import Triggers, word

# Names of secrets in assignments (`db_pass = ...`, `API_KEY: ...`), as regex fragments.
SECRET_NAMES = (
    "api_?key", "auth_?key", "service_?key", "account_?key", "db_?key", "database_?key",
    "priv_?key", "private_?key", "client_?key", "secret_?key", "access_?key", "db_?pass",
    "database_?pass", "key_?pass", "password", "passwd", "passphrase", "pwd", "secret",
    "credentials?", "access_?token", "auth_?token", "token", "contraseña", "contrasena",
    "passwort", "mot_?de_?passe", "密码", "密钥", "秘钥", "令牌", "口令", "passcode",
    # Short names only as a word or a name's last part (`"pw": ...`, `SMTP_PASS=`), so that
    # "bypass" and "compass" stay names; a session's id is a login too (`sessionid=`, `sid=`).
    r"(?<![a-z])pass(?![a-z])", r"(?<![a-z])pw(?![a-z])", "session_?id", r"(?<![a-z])sess_?id",
    r"(?<![a-z])sid(?![a-z])",
)  # fmt: skip
# Words that name a secret in prose: a random-looking token right after one is a secret
# ("my key is ...", "secret wJalr...", "令牌：...").
SECRET_NAMED = NamedBefore(
    ("secret", "token", "key", "password", "passwd", "pwd", "passphrase", "passcode", "credential",
     "api key", "api_key", "apikey", "auth", "bearer", "contraseña", "clave", "passwort",
     "mot de passe", "senha", "密钥", "秘钥", "令牌", "密码", "口令", "凭证", "凭据", "私钥",
     "访问码", "授权码", "パスワード", "トークン", "비밀번호"),
    gap=24,
)  # fmt: skip
# A token-shaped run: what a key, a password or an encoded secret is written with.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/=_.~-]{12,}")
_DIGIT = re.compile(r"[0-9]")


@dataclass(frozen=True)
class PatternFinder:
    """One kind from compiled patterns, run only when the text holds one of `triggers` (lower
    case: looked for in the lower-cased text; else as written). The whole match is redacted, or
    with `value_group` its first group (the password of a URL, so that the user and host stay
    readable); with `is_value`, only what it says is a value."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    words: tuple[str, ...]  # one of them is in every match (any case); () for none known
    name: str = ""  # its registry name, and the benchmark's
    value_group: bool = False
    needs: str = ""  # a character every match has: looked for first (one memchr)
    is_value: Callable[[str], bool] | None = None
    priority: int = USER_PRIORITY
    views = ALL_VIEWS

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset({self.kind})

    @property
    def triggers(self) -> Triggers | None:
        return Triggers(words=tuple(w.lower() for w in self.words)) if self.words else None

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if self.needs and self.needs not in text:
            return
        for pattern in self.patterns:
            for match in pattern.finditer(text):
                group = 1 if self.value_group and match.group(1) else 0
                start, end = match.span(group)
                if end > start and (self.is_value is None or self.is_value(text[start:end])):
                    yield Span(start, end, self.kind)


# Any run up to the `@` is the password (people do not percent-encode `&`, `!`, `$`), and the
# user may be empty (`redis://:PASSWORD@host`).
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@]*:([^\s@/]+)@")


def _connection_string_value(value: str) -> bool:
    """Four characters or more, and not code (`password=getpass()`, `password=password`)."""
    return len(value) >= 4 and not code_not_a_secret(value, "password")


# A value never starts with `&`: in a query string (`?password=&page=2`) it ends an empty one.
_CONNECTION_STRING = re.compile(
    r"[Pp](?<![\w-][Pp])(?i:assword|wd)\s*=(?!=)\s*([^\s;'\"&][^\s;'\"]*)"
)
_WIFI = re.compile(r"WIFI:[^\n]*?[:;]P:((?:\\.|[^;\\\n])+)")  # upper case, as the format has it
# A command, then its options on the same line (a pipe, `;` or `&` ends the command; a line
# wrapped with `\\` reads as one in the decoded view).
_OPTIONS = r"\b[^\n|;&]*?[ \t]"
# What stands between a flag and its value when people type it: spaces (any kind, as the
# normalised view has them), a quote, a colon or `=`, a line break after one (the decoded view
# joins the lines): `-p 'S3cr3t!'`, `-p: S3cr3t!`, `-p=S3cr3t!`.
_GAP = r"[ \t]*[\"']?[ \t]*[:=]?[ \t]*[\"']?[ \t]*"
# A flag's value: not a colon or `=` (the gap's), a quote or a backtick around it, nor the `\\`
# that wraps the command's line.
_VALUE = r"([^\s'\"`:=\\][^\s'\"`]*)"
# After `mysql -p` and a space the next word is a database, unless it cannot be one: it holds
# a symbol, or a digit and letters of both cases (`-p Tr0ub4dor`, `-p s3cr3t!`); a variable or
# another option (`$DB_PASS`, `-h`) is neither.
_NOT_A_DATABASE = (
    r"(?![$<{%-])(?=[^\s'\"`]*[^\w\s'\"`.,;()\[\]-]"
    r"|(?=[^\s'\"`]*[0-9])(?=[^\s'\"`]*[A-Z])[^\s'\"`]*[a-z])"
)
_MYSQL = re.compile(
    rf"(?:mysql|mysqldump|mysqladmin|mariadb){_OPTIONS}-p"
    rf"(?:[\"']?|(?=[ \t\"':=]){_GAP}{_NOT_A_DATABASE}){_VALUE}"
)
_USER = re.compile(
    rf"(?:curl|wget){_OPTIONS}(?:-u|--user)[ \t=]+[\"']?[^\s:'\"]*:[ \t]?([^\s'\"]+)"
)
_SSHPASS = re.compile(rf"sshpass[ \t]+-p{_GAP}{_VALUE}")


# The passwords of a URL (`scheme://user:PASSWORD@`), of a key=value connection string
# (`Server=db;User Id=sa;Password=PASSWORD;`), of a Wi-Fi QR code (`WIFI:S:net;P:PASSWORD;;`),
# and of the command lines that take one: `mysql -pPASSWORD` (with a space, `-p` asks for it and
# the next word is a database), `curl -u user:PASSWORD`, `sshpass -p PASSWORD`.
@register("url_credentials")
def url_credentials(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_URL_CREDENTIALS,), ("://",), "url_credentials",
                         value_group=True, needs="@", priority=SECRET_PRIORITY)  # fmt: skip


@register("connection_string")
def connection_string(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_CONNECTION_STRING,), ("password", "pwd"),
                         "connection_string", value_group=True, needs="=",
                         is_value=_connection_string_value, priority=SECRET_PRIORITY)  # fmt: skip


@register("wifi_qr_code")
def wifi_qr_code(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_WIFI,), ("wifi:",), "wifi_qr_code", value_group=True,
                         needs="W", priority=SECRET_PRIORITY)  # fmt: skip


@register("command_line_password")
def command_line_password(config: object = None) -> PatternFinder:
    return PatternFinder("PASSWORD", (_MYSQL, _USER, _SSHPASS),
                         ("mysql", "mariadb", "curl", "wget", "sshpass"), "command_line_password",
                         value_group=True, needs="-", priority=SECRET_PRIORITY)  # fmt: skip


def password_finders() -> list[PatternFinder]:
    return [url_credentials(), connection_string(), wifi_qr_code(), command_line_password()]


@register("jwt")
class JwtFinder:
    """Three base64url parts whose header and payload decode to JSON."""

    kinds = frozenset({"JWT"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("eyj",))
    views = ALL_VIEWS
    _JWT = re.compile(r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+(?:\.[A-Za-z0-9_.+/=-]*)?")

    def find(self, view: Text) -> Iterator[Span]:
        if not view.long_words or "eyJ" not in view.text:
            return
        for match in self._JWT.finditer(view.text):
            if _is_jwt(match.group()):
                yield Span(match.start(), match.end(), "JWT")


def _is_jwt(token: str) -> bool:
    for part in token.split(".")[:2]:
        try:
            padded = part.encode("ascii") + b"=" * (-len(part) % 4)
            json.loads(base64.urlsafe_b64decode(padded).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, binascii.Error, RecursionError):
            return False  # RecursionError: JSON nested past the interpreter's limit
    return True


@register("private_key")
class PrivateKeyFinder:
    """A whole key block, header to footer (or to the end of a text cut inside the key)."""

    kinds = frozenset({"PRIVATE_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(words=("private key", "putty-user-key"))
    views = ALL_VIEWS
    _BLOCK = re.compile(
        r"(?:-----)?BEGIN ([A-Z0-9 ]*)PRIVATE KEY((?: BLOCK)?)(?:-----)?"
        r".*?(?:-----END \1PRIVATE KEY\2-----|END \1PRIVATE KEY\2|\Z)",
        re.DOTALL,
    )
    _PUTTY = re.compile(r"PuTTY-User-Key-File-\d.*?(?:Private-MAC: *[0-9a-fA-F]+|\Z)", re.DOTALL)

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        # Both markers hold a "Y": one memchr turns most texts away before two substring searches.
        if "Y" not in text or ("PRIVATE KEY" not in text and "PuTTY-User-Key" not in text):
            return
        for pattern in (self._BLOCK, self._PUTTY):
            for match in pattern.finditer(text):
                yield Span(match.start(), match.end(), "PRIVATE_KEY")


@register("keyword")
class KeywordFinder:
    """A value assigned to a secret-sounding name (`password=hunter2`, `API key: sk-123...`,
    `"client_secret": "..."`). After a colon without quotes the value must hold a digit or a
    symbol, so that "Secret: the plan" stays as it is.

    Assignments are rarer than names ("key" is in "monkey"): each `=` or `:` is found first,
    then the name before it and the value after it are matched there."""

    kinds = frozenset({"SECRET"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    _NAME = re.compile(rf"(?:{'|'.join(SECRET_NAMES)})[\w.-]{{0,20}}$")
    _VALUE = re.compile(r"[=>]?\s*(?:([\"'`])(.{4,200}?)\1|([^\s\"'`,;&<>。]{4,200}))")
    _TRIGGERS = ("key", "pass", "pw", "sid", "sess", "secret", "token", "contrase",
                 "credential", "passwort", "passe", "密码", "密钥", "秘钥", "令牌",
                 "口令")  # fmt: skip

    # Every name in SECRET_NAMES holds one of them.
    triggers = Triggers(words=_TRIGGERS)

    # With more operators than this, the whole text is searched for a trigger first; with fewer,
    # the name before each is matched directly: every name in the list holds a trigger.
    _FEW_OPERATORS = 8

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if "=" not in text and ":" not in text:
            return
        operators = _positions(text, "=:")
        lower = view.lower
        if len(operators) > self._FEW_OPERATORS and not any(
            trigger in lower for trigger in self._TRIGGERS
        ):
            return
        for at in operators:
            # The word just before the operator, without quotes or a closing bracket.
            before = lower[max(0, at - 48) : at].rstrip(" \t\"']").rsplit(None, 1)
            if not before or not self._NAME.search(before[-1][-32:]):
                continue
            if len(before) == 1 and at > 48 and not lower[at - 49].isspace():
                continue  # inside a run of 48 characters or more (base64 data), not a name
            if text[at] == "=" and (text[at + 1 : at + 2] == "=" or text[at - 1 : at] in "!<>="):
                continue  # a comparison: `==`, `!=`, `<=`
            value = self._VALUE.match(text, at + 1)
            if value is None:
                continue
            quoted = value.group(2) is not None
            group = 2 if quoted else 3
            found = value.group(group) if quoted else value.group(group).rstrip(")]}")
            if len(found) < 4:
                continue  # `password: str)`: a parameter's type
            if len(set(found)) < 2 or found.startswith(("<", "${", "{{", "%(")):
                continue  # `****`, a placeholder or a template, not a secret
            if found.lower() in NO_VALUE:
                continue  # `"pass": "true"`: a flag, not a secret
            if not quoted and text[at] != "=" and found.isalpha():
                continue
            if not quoted and code_not_a_secret(found, before[-1].rsplit(".", 1)[-1]):
                continue
            yield Span(value.start(group), value.start(group) + len(found), "SECRET")


def _positions(text: str, chars: str) -> list[int]:
    """Where each of `chars` is in `text`, in order: str.find skips in C at a fraction of what a
    regex character class costs a character."""
    found = []
    for char in chars:
        at = text.find(char)
        while at >= 0:
            found.append(at)
            at = text.find(char, at + 1)
    return sorted(found)


_DIGIT_RUNS = re.compile(r"[0-9]+")


def _short_token(value: str) -> bool:
    """A run under 20 characters that can be a token when a secret's name precedes it: letters
    and a digit (not a word, a number or a date), in one piece (not a dotted name, a version or
    `gpt-4o-2024-08-06`), and not an identifier of words (`UserProfileCardV2`)."""
    letters = sum(char.isalpha() for char in value)
    if letters < 2 or not any(char.isdigit() for char in value):
        return False
    if sum(value.count(separator) for separator in "._-=/+~") > 1:
        return False
    # Three digits or more spread through it: a token that happens to hold syllables
    # (`9pfi2Cn61IMyos4`), where an identifier of words has a version number at most.
    digit_runs = len(_DIGIT_RUNS.findall(value))
    return digit_runs >= 3 or not reads_as_words(value)


@register("random_tokens")
class RandomTokenFinder:
    """Random-looking tokens that no format rule knows, in the text's words of 12 characters or
    more:
    - right after a word that names a secret ("my key is ...", "secret wJalr...", "密钥是..."):
      a secret (SECRET) when it looks random, hex included, from 12 characters;
    - anywhere else (HIGH_ENTROPY): 20 to 128 characters of letters and digits in both cases,
      near the entropy of a random string of its length. Hex alone is a hash, a UUID or a git
      SHA, not a secret; longer runs are encoded data (images, archives) in code answers, and
      a run inside a path, a URL or an expression (`a/b/c`, `x.y.z`) is left alone too."""

    kinds = frozenset({"SECRET", "HIGH_ENTROPY"})
    priority = SECRET_PRIORITY
    views = ALL_VIEWS
    BARE_LENGTH = (20, 128)
    triggers = Triggers(shapes=(word(TOKEN_WORD),))  # the words it reads
    _DATA_URI = re.compile(r"base64,\s*$|data:[\w/+.-]*;?$")

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        for word_start, word_end in view.token_words:
            if word_end - word_start < self.BARE_LENGTH[0] and not _DIGIT.search(
                text, word_start, word_end
            ):
                continue  # a short run needs a digit (most words of prose end here)
            for match in _TOKEN_RUN.finditer(text, word_start, word_end):
                start, end = match.span()
                # Trailing sentence punctuation is not part of a token; `=` padding is.
                while end > start and text[end - 1] in ".-_~":
                    end -= 1
                value = text[start:end]
                if len(value) < 12:
                    continue
                if len(value) < self.BARE_LENGTH[0] and not _short_token(value):
                    continue
                if SECRET_NAMED.before(text, start) and looks_random(value):
                    yield Span(start, end, "SECRET")
                elif self._bare_secret(text, start, end, value):
                    yield Span(start, end, "HIGH_ENTROPY")

    def _bare_secret(self, text: str, start: int, end: int, value: str) -> bool:
        low, high = self.BARE_LENGTH
        if not low <= len(value) <= high or character_classes(value) < 3:
            return False
        # Part of a path, a URL or a dotted name: `/`, `\` or `.` right outside the run.
        outside = text[start - 1 : start] + text[end : end + 1]
        if any(char in "/\\.:" for char in outside) or value.count("/") > 2:
            return False
        if self._DATA_URI.search(text, max(0, start - 40), start):
            return False
        return unnamed_secret(value)


@register("quoted_entropy")
class QuotedEntropyFinder:
    """Quoted strings of high entropy (`"Zm9vYmFy..."`): what code carries a secret in. Hex in
    quotes is a hash as often as a key: only named hex (KeywordFinder) is a secret."""

    kinds = frozenset({"HIGH_ENTROPY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(shapes=(rb"[\"'][a-z0-9+/\\_=\-]{20}",))  # _QUOTED, in lower case
    views = ALL_VIEWS
    _QUOTED = re.compile(r"(['\"])([A-Za-z0-9+/\\_=-]{20,})\1")
    MAX_LENGTH = 128  # longer: encoded data in a code answer

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if ('"' not in text and "'" not in text) or not view.long_words:
            return
        for match in self._QUOTED.finditer(text):
            if len(match.group(2)) <= self.MAX_LENGTH and unnamed_secret(match.group(2)):
                yield Span(match.start(2), match.end(2), "HIGH_ENTROPY")
