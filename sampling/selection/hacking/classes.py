"""Word classes: paid words that fill the same slots, read together as one feature.

A reward model that pays for a kind of word (numbers, warm words, hedges) is exploited through
many words of that kind at once: "two birds", "six birds", "plus four". Each word's share of the
responses then grows a little, too little for any one of them to pass the watch's growth test,
while the kind as a whole spreads through the run. So, among the words that passed the lift test
on their own (no new hypothesis about lift is made here), words whose slot contexts are alike
(the words seen just before and just after them, from the tracked two-word phrases) are joined
into a class, and the class is tested for growth as one feature: a response carries it when it
carries any of its words. Nothing here knows a task or a language: the classes come from the
run's own responses.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sampling.selection.hacking.features import MARK, Feature
from sampling.selection.hacking.lift import LiftStats

SIMILAR = 0.5  # least mean cosine between a word's slot contexts and a class's members'
SHARED_CONTEXTS = 2  # neighbours two words must share at least to be alike at all
MAX_MEMBERS = 12  # words in one class at most (the strongest)
MAX_WORDS = 200  # paid words looked at, strongest first


@dataclass(frozen=True)
class WordClass:
    members: tuple[str, ...]  # strongest lift first

    @property
    def feature(self) -> Feature:
        return Feature("class", ", ".join(self.members))

    @property
    def key(self) -> str:
        return self.feature.key


def members_of(feature: Feature) -> tuple[str, ...]:
    """The words of a class feature (its text lists them)."""
    return tuple(feature.text.split(", ")) if feature.kind == "class" else ()


def word_classes(tracked: Mapping[str, LiftStats], paid: Sequence[str]) -> list[WordClass]:
    """Classes of two or more of the `paid` features (strongest first) that are single words,
    by the likeness of their slot contexts in the `tracked` two-word phrases."""
    words = [key for key in paid if _is_word(key)][:MAX_WORDS]
    if len(words) < 2:
        return []
    contexts = _slot_contexts(tracked, set(words))
    classes: list[list[str]] = []
    for word in words:
        mine = contexts.get(word)
        if not mine:
            continue
        best, best_likeness = None, SIMILAR
        for members in classes:
            if len(members) >= MAX_MEMBERS:
                continue
            likeness = math.fsum(_cosine(mine, contexts[m]) for m in members) / len(members)
            if likeness >= best_likeness:
                best, best_likeness = members, likeness
        if best is None:
            classes.append([word])
        else:
            best.append(word)
    return [WordClass(tuple(members)) for members in classes if len(members) >= 2]


def paid_words_together(classes: Sequence[WordClass], paid: Sequence[str]) -> list[WordClass]:
    """The `paid` single words (strongest first) that grow too little on their own, as one more
    class, when it is not one already found: a kind of word used in frames too varied for its
    slots to show (their two-word phrases too rare to be tracked) spreads only as a whole."""
    words = tuple(key for key in paid if _is_word(key))[:MAX_MEMBERS]
    if len(words) < 2 or any(set(words) == set(c.members) for c in classes):
        return []
    return [WordClass(words)]


def _is_word(key: str) -> bool:
    return not key.startswith(MARK) and " " not in key


def _slot_contexts(
    tracked: Mapping[str, LiftStats], words: set[str]
) -> dict[str, dict[tuple[str, str], float]]:
    """Each word's neighbours, ("before", w) and ("after", w), weighed by the responses carrying
    the two-word phrase times how rare the neighbour is as a neighbour (tf-idf): "plus" before
    a word says more about it than "is", which comes before almost any word."""
    counts: defaultdict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    spread: Counter[tuple[str, str]] = Counter()  # distinct words each context is seen with
    seen: set[str] = set()
    for key, stats in tracked.items():  # up to max_features keys
        if key.startswith(MARK) or key.count(" ") != 1:
            continue
        first, second = key.split(" ")
        seen.update((first, second))
        spread["before", first] += 1
        spread["after", second] += 1
        if second in words:
            counts[second]["before", first] += stats.carriers
        if first in words:
            counts[first]["after", second] += stats.carriers
    vocabulary = len(seen)
    return {
        word: {c: n * math.log(1 + vocabulary / spread[c]) for c, n in contexts.items()}
        for word, contexts in counts.items()
    }


def _cosine(a: Mapping[tuple[str, str], float], b: Mapping[tuple[str, str], float]) -> float:
    """Cosine of two words' weighed contexts; 0 unless they share SHARED_CONTEXTS of them (two
    words seen only after "is" are not a kind for that alone)."""
    if len(a) > len(b):
        a, b = b, a
    shared = [weight * b[context] for context, weight in a.items() if context in b]
    if len(shared) < SHARED_CONTEXTS:
        return 0.0
    dot = math.fsum(shared)
    norms = math.sqrt(math.fsum(v * v for v in a.values()) * math.fsum(v * v for v in b.values()))
    return dot / norms
