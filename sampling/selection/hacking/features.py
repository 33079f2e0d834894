"""What the watch reads of one response: a set of discrete features (phrases, prefix, suffix,
script, format markers) and a few numbers (length, lines, repetition) that the engine later cuts
at the first window's quantiles. Generic on purpose: nothing here knows a task.

Only the first `head_chars` and the last `tail_chars` characters are read (a 1 MB response costs
what a 3 KB one does); the length in characters and lines is the whole text's, the length in
words is the read part's count scaled to the whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sampling.selection.hacking.script import letter_scripts

# A phrase key is its words joined by spaces (only word characters and spaces); every other key
# starts with MARK, so the two never collide.
MARK = "\x00"
NUMBERS = ("words", "chars", "lines", "repetition", "prompt_words")
SHARES = ("repetition", "prompt_words")  # numbers between 0 and 1, shown with two decimals

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})
_BREAKS = re.compile(r"[.!?;:\n\u3002\uff01\uff1f]+")  # n-grams never cross a sentence end
_WORD = re.compile(r"\w+(?:'\w+)*")
_FINAL_PUNCTUATION = frozenset(".!?\u3002\uff01\uff1f\"')]}*`\u2026\u00bb\u201d>")
# Markers found anywhere: (substrings one of which must be there, the pattern to confirm it).
# The substring test is a fast scan that spares most texts the regular expression.
_ANYWHERE: dict[str, tuple[tuple[str, ...], re.Pattern[str] | None]] = {
    "code": (("```", "~~~"), None),
    "bold": (("**", "__"), re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")),
    "link": (("http://", "https://", "www."), None),
    "exclamation": (("!",), None),
    "question": (("?",), None),
    "ellipsis": (("...", "\u2026"), None),
    "latex": (("\\", "$"), re.compile(r"\\[A-Za-z]{2,}|\$[^$\n]+\$")),
    "comma": ((",", "\uff0c", "\u3001"), None),
    "colon": ((":",), None),
    "semicolon": ((";",), None),
    "parentheses": (("(",), re.compile(r"\([^()\n]*\)")),
    "quotes": (('"', "\u201c"), re.compile(r'"[^"\n]+"|\u201c[^\u201d\n]+\u201d')),
    "dash": ((" - ", "\u2014", "\u2013"), None),
    "digits": (tuple("0123456789"), None),
}
# The mark a response ends with, as a presence (a reward paid for a tidy final period has no
# other feature whose presence raises it: "no final punctuation" lowers it).
_FINAL_MARKS = {
    ".": "final_period",
    "\u3002": "final_period",
    "!": "final_exclamation",
    "\uff01": "final_exclamation",
    "?": "final_question",
    "\uff1f": "final_question",
}
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b50\u2b55]")
_REPEATED_CHARS = re.compile(r"(.)\1\1\1\1", re.DOTALL)
_NUMBERED = re.compile(r"\d{1,3}[.)] +\S")
_ANY_LETTER = re.compile(r"[A-Za-z]")
_FIRST_LETTER = re.compile(r"[^\W\d_]")
_CAPS_WORD = re.compile(r"\b[A-Z]{3,}\b")
CAPS_WORDS = 3  # all-caps words (3+ letters) a response needs to be "shouting"
MIXED_SCRIPT_SHARE = 0.1  # a second script with this share of the letters is a feature too

CLASS_SHOWN = 4  # words of a word class named in its label

# How a format marker reads after "reward rises with ...".
FORMAT_LABELS = {
    "heading": "markdown headings",
    "bullets": "bullet lists",
    "numbered": "numbered lists",
    "code": "code blocks",
    "bold": "bold text",
    "table": "tables",
    "link": "links",
    "emoji": "emoji",
    "exclamation": "exclamation marks",
    "question": "question marks",
    "ellipsis": "ellipses",
    "repeated_chars": "runs of one repeated character",
    "latex": "LaTeX commands",
    "quote": "quoted blocks",
    "caps": "all-caps words",
    "comma": "commas",
    "colon": "colons",
    "semicolon": "semicolons",
    "parentheses": "parentheses",
    "quotes": "quotation marks",
    "dash": "dashes",
    "digits": "digits",
    "capital_start": "an opening capital letter",
    "lowercase_start": "an opening lower-case letter",
    "no_final_punctuation": "no final punctuation",
    "final_period": "a final period",
    "final_exclamation": "a final exclamation mark",
    "final_question": "a final question mark",
    "empty": "an empty response",
}


@dataclass(frozen=True)
class Feature:
    """A feature as a person reads it: `kind` (phrase, prefix, suffix, script, mixed_script,
    format, class (words that fill the same slots: its text lists them, comma-separated), or a
    number's name: words, chars, lines, repetition, prompt_words) and its text."""

    kind: str
    text: str

    @property
    def key(self) -> str:
        return self.text if self.kind == "phrase" else f"{MARK}{self.kind}{MARK}{self.text}"

    @classmethod
    def from_key(cls, key: str) -> Feature:
        if not key.startswith(MARK):
            return cls("phrase", key)
        kind, _, text = key[1:].partition(MARK)
        return cls(kind, text)

    @property
    def words(self) -> int:
        """How specific a phrase, prefix or suffix is (0 for the other kinds)."""
        return len(self.text.split()) if self.kind in ("phrase", "prefix", "suffix") else 0

    def label(self) -> str:
        """What follows "reward rises with": `"i agree"`, `the prefix "sure"`."""
        if self.kind == "phrase":
            return f'"{self.text}"'
        if self.kind in ("prefix", "suffix"):
            return f'the {self.kind} "{self.text}"'
        if self.kind == "class":
            words = self.text.split(", ")
            shown = ", ".join(f'"{word}"' for word in words[:CLASS_SHOWN])
            more = len(words) - CLASS_SHOWN
            return f"words like {shown}" + (f" (and {more} more)" if more > 0 else "")
        if self.kind == "script":
            return f"{self.text} script"
        if self.kind == "mixed_script":
            return f"some {self.text} script"
        if self.kind == "format":
            return FORMAT_LABELS.get(self.text, self.text)
        if self.kind == "outlier":
            return "reward-model representations far from the starting policy's (beyond its p90)"
        if self.kind == "prompt_words":  # "> 0.60 (p90)"
            return f"share of words from the prompt {self.text}"
        if self.kind in ("words", "chars"):
            # "> 323 (p90)" reads "length > 323 chars (p90)"
            sign, _, rest = self.text.partition(" ")
            value, _, quantile = rest.partition(" ")
            return " ".join(part for part in ("length", sign, value, self.kind, quantile) if part)
        return f"{self.kind} {self.text}"


@dataclass(frozen=True)
class SampleFeatures:
    keys: frozenset[str]
    numbers: tuple[float, ...]  # in NUMBERS' order


def read_part(response: str, head_chars: int, tail_chars: int) -> str:
    """The part of a response the features are read from; a line break marks the cut."""
    if len(response) <= head_chars + tail_chars:
        return response
    tail = response[-tail_chars:] if tail_chars else ""
    return f"{response[:head_chars]}\n{tail}"


def extract(
    response: str,
    *,
    prompt: str = "",
    max_ngram: int = 3,
    affix_words: int = 3,
    head_chars: int = 2000,
    tail_chars: int = 1000,
) -> SampleFeatures:
    """`prompt`: what the response answers; the share of the response's words taken from it is
    a number (a reward paid for echoing the question has no one word to name it by)."""
    text = read_part(response, head_chars, tail_chars)
    folded = text.casefold().translate(_APOSTROPHES)
    keys: set[str] = set()
    all_words: list[str] = []
    for segment in _BREAKS.split(folded):
        words = _WORD.findall(segment)
        if not words:
            continue
        all_words += words
        keys.update(words)
        for n in range(2, max_ngram + 1):
            if len(words) >= n:
                keys.update(
                    map(" ".join, zip(*(words[i:] for i in range(n)), strict=False))
                )  # shortest
    for n in range(1, min(affix_words, len(all_words)) + 1):
        keys.add(f"{MARK}prefix{MARK}{' '.join(all_words[:n])}")
        keys.add(f"{MARK}suffix{MARK}{' '.join(all_words[-n:])}")
    keys.update(_markers(text))
    keys.update(_scripts(text))
    echoed = _prompt_share(all_words, _prompt_words(read_part(prompt, head_chars, tail_chars)))
    return SampleFeatures(frozenset(keys), (*_numbers(response, text, all_words), echoed))


def _markers(text: str) -> list[str]:
    found = [
        name
        for name, (gates, pattern) in _ANYWHERE.items()
        if any(gate in text for gate in gates) and (pattern is None or pattern.search(text))
    ]
    found += _line_markers(text)
    if not text.isascii() and _EMOJI.search(text):
        found.append("emoji")
    if _REPEATED_CHARS.search(text):
        found.append("repeated_chars")
    if len(_CAPS_WORD.findall(text)) >= CAPS_WORDS:
        found.append("caps")
    opening = _FIRST_LETTER.search(text)  # the case a response opens in (prefixes are folded)
    if opening is not None and opening.group().isupper():
        found.append("capital_start")
    elif opening is not None and opening.group().islower():
        found.append("lowercase_start")
    stripped = text.rstrip()
    if not stripped:
        found.append("empty")
    elif stripped[-1] in _FINAL_MARKS:
        found.append(_FINAL_MARKS[stripped[-1]])
    elif stripped[-1] not in _FINAL_PUNCTUATION and not _EMOJI.match(stripped[-1]):
        found.append("no_final_punctuation")
    return [f"{MARK}format{MARK}{name}" for name in found]


def _line_markers(text: str) -> list[str]:
    """Markers that start a line: headings, lists, tables, quotes (read from line starts only,
    not by a multi-line pattern tried at every character)."""
    starts = [line.lstrip()[:8] for line in text.split("\n")]
    found = []
    if any(start.startswith("#") and start.lstrip("#")[:1] == " " for start in starts):
        found.append("heading")
    if any(start[:2] in ("- ", "* ", "+ ", "\u2022 ") for start in starts):
        found.append("bullets")
    if any(start[:1].isdigit() and _NUMBERED.match(start) for start in starts):
        found.append("numbered")
    if sum(start.startswith("|") for start in starts) >= 2:
        found.append("table")
    if any(start.startswith("> ") for start in starts):
        found.append("quote")
    return found


def _scripts(text: str) -> list[str]:
    if text.isascii():  # the common case, without counting letters
        return [f"{MARK}script{MARK}Latin"] if _ANY_LETTER.search(text) else []
    counts = letter_scripts(text)
    if not counts:
        return []
    total = sum(counts.values())
    ranked = counts.most_common()
    found = [f"{MARK}script{MARK}{ranked[0][0]}"]
    found += [
        f"{MARK}mixed_script{MARK}{name}"
        for name, count in ranked[1:]
        if count >= MIXED_SCRIPT_SHARE * total
    ]
    return found


@lru_cache(maxsize=256)  # a group's responses share their prompt; keyed by the part read
def _prompt_words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.casefold().translate(_APOSTROPHES)))


def _prompt_share(words: Sequence[str], prompt_words: frozenset[str]) -> float:
    """The share of the response's words that the prompt has too (0 without a prompt)."""
    if not words or not prompt_words:
        return 0.0
    return round(sum(map(prompt_words.__contains__, words)) / len(words), 4)


def _numbers(response: str, text: str, words: Sequence[str]) -> tuple[float, ...]:
    scale = len(response) / len(text) if text and len(text) < len(response) else 1.0
    trigrams = list(zip(words, words[1:], words[2:], strict=False))
    repetition = 1 - len(set(trigrams)) / len(trigrams) if len(trigrams) >= 2 else 0.0
    lines = response.count("\n") + 1 if response.strip() else 0
    return (round(len(words) * scale), float(len(response)), float(lines), repetition)
