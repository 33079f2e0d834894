"""Secrets found with detect-secrets' plugins, used as span finders.

detect-secrets scans code line by line and reports values; a redactor needs where each value is
in free text. Its regex plugins expose their compiled patterns (`denylist`), so each pattern is
run with `finditer` and the secret is the pattern's first group when it has one (the value of an
assignment), else the whole match. Every plugin gets a cheap substring test first (`triggers`,
checked on the lower-cased text): without it, the token plugins cost more than the rest of the
record path put together (bench/redaction_throughput.py measures each).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.cloudant import CloudantDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
    HighEntropyStringsPlugin,
)
from detect_secrets.plugins.ibm_cloud_iam import IbmCloudIamDetector
from detect_secrets.plugins.ibm_cos_hmac import IbmCosHmacDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST as SECRET_NAMES
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.softlayer import SoftlayerDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from sampling.redaction.spans import Span, Text

# The API_KEY plugins, and the substrings without which none of their patterns match (lower
# case: looked for in the lower-cased text; else as written). All of them behind one gate: a
# token is a word of at least 20 characters; some need a longer one (their secret's length).
TOKEN_PLUGINS: dict[type[RegexBasedDetector], tuple[str, ...]] = {
    AWSKeyDetector: ("a3t", "abia", "acca", "akia", "asia", "aws"),
    AzureStorageKeyDetector: ("accountkey=",),
    ArtifactoryDetector: ("AKC", "AP"),
    CloudantDetector: ("cl",),
    DiscordBotTokenDetector: (".",),
    GitHubTokenDetector: ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    GitLabTokenDetector: ("gl", "gr1348941"),
    IbmCloudIamDetector: ("key", "pw", "pass", "token"),
    IbmCosHmacDetector: ("secret",),
    MailchimpDetector: ("-us",),
    NpmDetector: ("_authtoken",),
    OpenAIDetector: ("t3blbkfj",),
    PypiTokenDetector: ("pypi-",),
    SendGridDetector: ("sg.",),
    SlackDetector: ("xox", "hooks.slack.com"),
    SoftlayerDetector: ("softlayer", "sl"),
    SquareOAuthDetector: ("sq0csp-",),
    StripeDetector: ("k_live_",),
    TelegramBotTokenDetector: (":",),
    TwilioKeyDetector: ("ac", "sk"),
}
# Artifactory's patterns take the space or quote around the token into the match.
_EDGE = " \t\r\n\"'=:"
# Plugins whose secret is longer than the gate's 20 characters: a cheap test before their
# patterns (Cloudant's and IBM's assignment patterns cost ~100 µs on a 2 KB text).
WORD_AT_LEAST: dict[type[RegexBasedDetector], int] = {
    CloudantDetector: 24, DiscordBotTokenDetector: 59, IbmCloudIamDetector: 44,
    IbmCosHmacDetector: 48, SoftlayerDetector: 64, TelegramBotTokenDetector: 44,
    TwilioKeyDetector: 34, GitHubTokenDetector: 40, StripeDetector: 32, SendGridDetector: 69,
}  # fmt: skip


@dataclass(frozen=True)
class PatternFinder:
    """One kind from compiled patterns, run only when the text holds one of `triggers`. The
    whole match is redacted, or with `value_group` its first group (the password of a URL, so
    that the user and host stay readable). Plugins' own groups are not always the secret
    (GitHub's is the token's prefix), so the token plugins redact the whole match."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    triggers: tuple[str, ...]
    name: str = ""  # the plugin's, for the benchmark's per-plugin costs
    value_group: bool = False
    min_word: int = 0
    needs: str = ""  # a character every match has: looked for first (one memchr)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset({self.kind})

    def find(self, view: Text) -> Iterator[Span]:
        return self.scan(view.text, view.lower)

    def scan(self, text: str, lower: str, offset: int = 0) -> Iterator[Span]:
        """The spans in `text` (which starts at `offset` of the whole text)."""
        if self.needs and self.needs not in text:
            return
        if self.triggers:
            # Lower-case triggers are looked for in the lower-cased text, others as written.
            haystack = lower if self.triggers[0].islower() else text
            if not any(trigger in haystack for trigger in self.triggers):
                return
        for pattern in self.patterns:
            for match in pattern.finditer(text):
                group = 1 if self.value_group and match.group(1) else 0
                start, end = match.span(group)
                while start < end and text[start] in _EDGE:
                    start += 1
                while end > start and text[end - 1] in _EDGE:
                    end -= 1
                if end > start:
                    yield Span(offset + start, offset + end, self.kind)


class TokenFinders:
    """The token plugins, run only around the text's long words: every token is a word of at
    least 20 characters (an AWS key id, the shortest, has 20), and ordinary text has few. Each
    long word is scanned with the 64 characters before it (where an assignment's name is, for
    the plugins that look for `aws_secret_key = '...'`): twenty plugins on a few short windows
    instead of twenty scans of the whole text."""

    kinds = frozenset({"API_KEY"})
    name = "token plugins"
    CONTEXT = 64

    def __init__(self, finders: list[PatternFinder]) -> None:
        self.finders = finders

    def find(self, view: Text) -> Iterator[Span]:
        text, seen = view.text, set()
        for word_start, word_end in view.long_words:
            start = max(0, word_start - self.CONTEXT)
            window = text[start : word_end + 2]
            lower = window.lower()
            for finder in self.finders:
                if finder.min_word and word_end - word_start < finder.min_word:
                    continue
                for span in finder.scan(window, lower, start):
                    if span not in seen:
                        seen.add(span)
                        yield span


def token_finders() -> list[PatternFinder]:
    """One finder per token plugin (kind API_KEY), so each plugin's cost can be measured."""
    return [
        PatternFinder(
            "API_KEY",
            tuple(plugin.denylist),
            triggers,
            plugin.__name__,
            min_word=WORD_AT_LEAST.get(plugin, 0),
        )
        for plugin, triggers in TOKEN_PLUGINS.items()
    ]


# detect-secrets leaves out passwords with `&`, `!`, `$` ... (characters RFC 3986 wants
# percent-encoded, which people do not): any run up to the `@` is the password.
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@]+:([^\s@/]+)@")


def password_finders() -> list[PatternFinder]:
    """detect-secrets' basic-auth pattern (`scheme://user:PASSWORD@`), and the password of a
    key=value connection string (`Server=db;User Id=sa;Password=PASSWORD;`)."""
    connection_string = re.compile(r"[Pp](?<![\w-][Pp])(?i:assword|wd)\s*=\s*([^\s;'\"]+)")
    return [
        PatternFinder("PASSWORD", (*BasicAuthDetector.denylist, _URL_CREDENTIALS), ("://",),
                      BasicAuthDetector.__name__, value_group=True, needs="@"),
        PatternFinder("PASSWORD", (connection_string,), ("password", "pwd"), "connection string",
                      value_group=True, needs="="),
    ]  # fmt: skip


class JwtFinder:
    """detect-secrets' JWT pattern and its check that the header and payload decode to JSON."""

    kinds = frozenset({"JWT"})
    name = JwtTokenDetector.__name__
    # The plugin's pattern ends lazily, before the signature: the span runs over it.
    _SIGNATURE = re.compile(r"[A-Za-z0-9_\-+/=]*")

    def find(self, view: Text) -> Iterator[Span]:
        if not view.long_words or "eyJ" not in view.text:
            return
        text = view.text
        for pattern in JwtTokenDetector.denylist:
            for match in pattern.finditer(text):
                if JwtTokenDetector.is_formally_valid(match.group()):
                    end = self._SIGNATURE.match(text, match.end()).end()  # type: ignore[union-attr]
                    yield Span(match.start(), end, "JWT")


class PrivateKeyFinder:
    """A whole key block: detect-secrets' plugin knows the headers, the block runs to its
    footer (or to the end of a text that was cut inside the key)."""

    kinds = frozenset({"PRIVATE_KEY"})
    name = PrivateKeyDetector.__name__
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
        if not any(pattern.search(text) for pattern in PrivateKeyDetector.denylist):
            return
        for pattern in (self._BLOCK, self._PUTTY):
            for match in pattern.finditer(text):
                yield Span(match.start(), match.end(), "PRIVATE_KEY")


class HighEntropyFinder:
    """Quoted strings of high entropy, with detect-secrets' own limits (base64 4.5, hex 3.0)."""

    kinds = frozenset({"HIGH_ENTROPY"})

    def __init__(self, plugin: HighEntropyStringsPlugin, min_length: int = 20) -> None:
        self.plugin = plugin
        self.min_length = min_length
        self.name = type(plugin).__name__

    def find(self, view: Text) -> Iterator[Span]:
        text = view.text
        if ('"' not in text and "'" not in text) or not view.long_words:
            return
        for match in self.plugin.regex.finditer(text):
            value = match.group(2)
            if len(value) >= self.min_length and (
                self.plugin.calculate_shannon_entropy(value) > self.plugin.entropy_limit
            ):
                yield Span(match.start(2), match.end(2), "HIGH_ENTROPY")


class KeywordFinder:
    """A value assigned to a secret-sounding name: detect-secrets' keyword list (password,
    api_key, secret, ...) plus `token`. Its own plugin wants code (quotes, one file type); free
    text also has `password=hunter2` and `API key: sk-123...`. After a colon without quotes the
    value must hold a digit or a symbol, so that "Secret: the plan" stays as it is.

    Assignments are rarer than names ("key" is in "monkey"): each `=` or `:` is found first,
    then the name before it and the value after it are matched there."""

    kinds = frozenset({"SECRET"})
    name = "KeywordDetector"
    _NAME = re.compile(
        rf"(?:{'|'.join((*SECRET_NAMES, 'access_?token', 'auth_?token', 'token'))})[\w.-]{{0,20}}$"
    )
    _VALUE = re.compile(r"[=>]?\s*(?:([\"'`])(.{4,200}?)\1|([^\s\"'`,;&<>]{4,200}))")
    _TRIGGERS = ("key", "pass", "pwd", "secret", "token", "contrase")

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
            value = self._VALUE.match(text, at + 1)
            if value is None:
                continue
            quoted = value.group(2) is not None
            group = 2 if quoted else 3
            found = value.group(group)
            if len(set(found)) < 2 or found.startswith(("<", "${", "{{", "%(")):
                continue  # `****`, a placeholder or a template, not a secret
            if not quoted and text[at] == ":" and found.isalpha():
                continue
            yield Span(value.start(group), value.end(group), "SECRET")


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


def high_entropy_finders() -> list[HighEntropyFinder]:
    return [HighEntropyFinder(Base64HighEntropyString()), HighEntropyFinder(HexHighEntropyString())]


def secret_finders() -> Iterable[object]:
    """Every secret finder, in the order of SECRET_KINDS."""
    return [PrivateKeyFinder(), JwtFinder(), *password_finders(), TokenFinders(token_finders()),
            KeywordFinder(), *high_entropy_finders()]  # fmt: skip
