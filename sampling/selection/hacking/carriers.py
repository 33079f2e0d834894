"""Which responses carry a suspect's feature: what the budget policy's audit share needs to give
each suspect a reviewer. Reads a response's features as the watch does (`features.extract`), so
a phrase, prefix, format marker or script matches exactly when the watch would count it; a
number feature (`words > 87`) is tested against its cut; a word class by any of its words."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sampling.selection.hacking.classes import members_of
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.features import NUMBERS, Feature, SampleFeatures, extract
from sampling.selection.hacking.suspects import Suspect

_CUT = re.compile(r"^([<>]) (-?[0-9.]+)")  # "> 87 (p90)": the side and the value


@dataclass(frozen=True)
class Carried:
    """A suspect and the positions (into the responses given) of the responses carrying it."""

    suspect: Suspect
    positions: frozenset[int]


def carriers(
    suspects: Sequence[Suspect],
    responses: Sequence[str],
    config: WatchConfig,
    prompts: Sequence[str] | None = None,
) -> list[Carried]:
    """For each suspect, in order, the responses that carry its feature (each read once, with
    its prompt where `prompts` gives them: the share of words from the prompt needs it)."""
    if not suspects:
        return []
    tests = [_test(suspect.feature) for suspect in suspects]
    found: list[set[int]] = [set() for _ in suspects]
    for position, response in enumerate(responses):
        features = extract(
            response,
            prompt=prompts[position] if prompts is not None else "",
            max_ngram=config.max_ngram,
            affix_words=config.affix_words,
            head_chars=config.head_chars,
            tail_chars=config.tail_chars,
        )
        for number, test in enumerate(tests):
            if test(features):
                found[number].add(position)
    return [Carried(s, frozenset(p)) for s, p in zip(suspects, found, strict=True)]


def _test(feature: Feature) -> Callable[[SampleFeatures], bool]:
    if feature.kind in NUMBERS:
        cut = _CUT.match(feature.text)
        if cut is None:
            return lambda features: False
        index, value, above = NUMBERS.index(feature.kind), float(cut.group(2)), cut.group(1) == ">"

        def holds(features: SampleFeatures) -> bool:
            number = features.numbers[index]
            return number > value if above else number < value

        return holds
    if feature.kind == "class":  # any of its words
        words = frozenset(members_of(feature))
        return lambda features: not words.isdisjoint(features.keys)
    key = feature.key
    return lambda features: key in features.keys
