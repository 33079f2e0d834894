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
# A URL's last part, where a webhook's secret is.
_LAST_PART = re.compile(r"[/:]")


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
            if placeholder(text[start:end]) or placeholder(_LAST_PART.split(text[start:end])[-1]):
                continue  # `xoxb-your-token`, `hf_xxx`, `.../services/XXXX/XXXX/XXXXXXXX`:
                # what the docs write in its place
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


class RuleLookup:
    """The rules whose keywords a window holds, from one regex search of it instead of a test
    of each rule's keywords (a hundred substring searches in Python).

    The search tries each position (a lookahead) and takes the longest keyword there (a trie,
    whose letters the regex engine branches on): a keyword inside it (`sk-` in `sk-ant-`) is in
    the window too, so each keyword stands for the rules of every keyword it holds."""

    def __init__(self, rules: tuple[TokenRule, ...]) -> None:
        self.rules = rules
        keywords = {keyword for rule in rules for keyword in rule.keywords}
        self._search = re.compile(f"(?=({_trie(keywords)}))") if keywords else None
        self._always = frozenset(i for i, rule in enumerate(rules) if not rule.keywords)
        # A keyword found: the rules (their places in `rules`) of every keyword it holds.
        self._by_keyword = {
            found: frozenset(
                i for i, rule in enumerate(rules) if any(k in found for k in rule.keywords)
            )
            for found in keywords
        }

    def rules_in(self, lower: str) -> list[TokenRule]:
        """The rules, in their order, with a keyword in `lower`, and those without keywords."""
        places = set(self._always)
        if self._search is not None:
            for keyword in set(self._search.findall(lower)):
                places |= self._by_keyword[keyword]
        return [self.rules[i] for i in sorted(places)]


def _trie(words: set[str]) -> str:
    """A regex of `words` that matches the longest of them at a position: one branch a letter,
    a word's end an optional rest."""
    root: dict[str, dict] = {}
    for text in words:
        node = root
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}

    def pattern(node: dict[str, dict]) -> str:
        branches = [
            re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


@register("token_rules")
class TokenFinder:
    """Every rule, on the windows around the text's long words."""

    kinds = frozenset({"API_KEY"})
    priority = SECRET_PRIORITY
    triggers = Triggers(facts=(word(LONG_WORD),))  # the words it reads
    views = ALL_VIEWS
    CONTEXT = 64

    def __init__(self, rules: tuple[TokenRule, ...] | None = None) -> None:
        self.rules = token_rules() if rules is None else rules
        self.lookup = RuleLookup(self.rules)

    def find(self, view: Text) -> Iterator[Span]:
        text, seen = view.text, set()
        for word_start, word_end in view.long_words:
            start = max(0, word_start - self.CONTEXT)
            window = text[start : word_end + 2]
            lower = window.lower()
            for rule in self.lookup.rules_in(lower):
                for span in rule.scan(window, lower, start):
                    if span not in seen:
                        seen.add(span)
                        yield span
