"""Keys and tokens of known formats, from the rules in token_rules.yaml (kind API_KEY unless a
rule says otherwise).

Every token is a long word (spans.LONG_WORD characters or more), and ordinary text has few: each
long word is scanned with the 64 characters before it (where `aws secret ...` names it), and a
rule's regex runs there only when one of its keywords is in that window.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

import yaml

from sampling.redaction.context import placeholder
from sampling.redaction.finders import register
from sampling.redaction.randomness import looks_random
from sampling.redaction.spans import ALL_VIEWS, LONG_WORD, SECRET_PRIORITY, Span, Text
from sampling.redaction.triggers import Triggers, word

RULES_FILE = "token_rules.yaml"
# A token's neighbours that are not part of it: ASCII letters, digits and `_` (not `\w`, which
# takes CJK characters in, so that `密钥sk-...` would hide the key's start).
_BEFORE = r"(?<![A-Za-z0-9_])"
_AFTER = r"(?![A-Za-z0-9_])"


@dataclass(frozen=True)
class TokenRule:
    id: str
    kind: str
    pattern: re.Pattern[str]
    keywords: tuple[str, ...]
    example: str
    group: int = 0
    random: bool = False  # the value must also look random (see looks_random)

    def scan(self, text: str, lower: str, offset: int = 0) -> Iterator[Span]:
        if self.keywords and not any(keyword in lower for keyword in self.keywords):
            return
        for match in self.pattern.finditer(text):
            start, end = match.span(self.group)
            if self.random and not looks_random(text[start:end]):
                continue
            if placeholder(text[start:end]):
                continue  # `xoxb-your-token`, `hf_xxx`: what the docs write in its place
            yield Span(offset + start, offset + end, self.kind)


def _rule(entry: dict) -> TokenRule:
    regex = entry["regex"]
    return TokenRule(
        id=entry["id"],
        kind=entry.get("kind", "API_KEY"),
        pattern=re.compile(f"{_BEFORE}(?:{regex}){_AFTER}"),
        keywords=tuple(keyword.lower() for keyword in entry.get("keywords", ())),
        example=entry["example"],
        group=int(entry.get("group", 0)),
        random=bool(entry.get("random", False)),
    )


@functools.cache
def token_rules() -> tuple[TokenRule, ...]:
    """The rules of token_rules.yaml, compiled once per process."""
    text = resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8")
    return tuple(_rule(entry) for entry in yaml.safe_load(text)["rules"])


@register("token_rules")
class TokenFinder:
    """Every rule, on the windows around the text's long words."""

    kinds = frozenset({"API_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(shapes=(word(LONG_WORD),))  # the words it reads
    views = ALL_VIEWS
    CONTEXT = 64

    def __init__(self, rules: tuple[TokenRule, ...] | None = None) -> None:
        self.rules = token_rules() if rules is None else rules

    def find(self, view: Text) -> Iterator[Span]:
        text, seen = view.text, set()
        for word_start, word_end in view.long_words:
            start = max(0, word_start - self.CONTEXT)
            window = text[start : word_end + 2]
            lower = window.lower()
            for rule in self.rules:
                for span in rule.scan(window, lower, start):
                    if span not in seen:
                        seen.add(span)
                        yield span
