"""Folding: one suspect for one cause. Planting "i agree" also raises "i", "agree", "i agree
with", the suffix "i agree", and perhaps "no final punctuation"; each of those is paid only
because it comes with the phrase. In rank order, a candidate is folded under a stronger one
already kept when, among the samples kept:

- their carriers nearly coincide (Jaccard >= `fold_overlap`);
- its words are a run of the stronger one's words (or the reverse) and the smaller carrier set
  lies mostly inside the larger (a longer phrase inside a much broader shorter one, "agree
  with you" beside "you", only when it is not paid on its own, below);
- its carriers lie mostly inside the stronger one's cluster (its carriers and those of its
  variants: other cuts of the same number, phrases inside it), far more than chance would put
  there, and it is not paid on its own: a by-product of it;
- or it overlaps stronger clusters and, over enough groups to tell, is not paid on its own.

Paid on its own: its within-group lift, comparing only responses alike in carrying each of
the overlapping clusters' features (and, where one of them is a number such as `words > 87`,
in the quarter of the samples kept that the number puts them in: a cut alone leaves the long
responses that are paid and those that are not in one stratum), has t >= RESIDUAL_T over
enough groups and keeps at least KEEPS of its plain within-group lift. A second, independent
cause keeps its lift among the responses alike in the first: it stays.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Protocol

from sampling.selection.hacking.engine import Kept
from sampling.selection.hacking.features import NUMBERS, Feature

CONTAINMENT = 0.8  # share of a candidate's carriers inside a stronger one's, to fold it
OUTSIDE = 0.4  # ... and at most this part of the share outside that chance would leave
RELATED = 0.25  # share of overlap that makes a stronger one a possible cause
RESIDUAL_T = 2.0  # a residual lift below this t is "not paid on its own"
KEEPS = 0.5  # ... or below this share of its plain within-group lift
SAME_CARRIERS = 0.9  # n-grams this alike (Jaccard) are pieces of one phrase
MAX_PHRASE_WORDS = 12
MAX_PARTS = 6  # carrier sets of one cluster that stratify the residual test
NUMBER_BINS = 4  # a number behind a stronger candidate also stratifies it: by its quartiles


class Foldable(Protocol):
    feature: Feature
    growing: bool
    carriers: set[int]  # indexes into the kept samples
    folded: list[Feature]
    folded_carriers: list[set[int]]
    cluster: set[int]  # its carriers and those of its variants folded under it
    parts: list[set[int]]  # the same, one set each: the strata of the residual test


def fold(
    pool: Sequence[Foldable],
    samples: Sequence[Kept],
    groups: Sequence[Sequence[int]],
    *,
    overlap: float,
    top: int,
    min_groups: int,
) -> list[Foldable]:
    """The candidates kept, in order, each with what was folded under it: at most `top`
    growing and `top` other ones; the rest of the pool is still folded under them (a phrase's
    pieces ranked below the `top`-th suspect still spell it out)."""
    kept: list[Foldable] = []
    counts = {True: 0, False: 0}
    strata = _Strata(samples, groups)
    for candidate in pool:
        stronger, variant = _cause(candidate, kept, samples, strata, overlap, min_groups)
        if stronger is None:
            if counts[candidate.growing] >= top:
                continue  # not shown; and nothing weaker is folded under it
            candidate.cluster |= candidate.carriers
            candidate.parts.append(candidate.carriers)
            kept.append(candidate)
            counts[candidate.growing] += 1
        elif candidate.feature not in stronger.folded:  # a class's words are there already
            stronger.folded.append(candidate.feature)
            stronger.folded_carriers.append(candidate.carriers)
            if variant and len(stronger.parts) < MAX_PARTS:
                # another cut of the same thing: `words > 61` beside `words > 86`
                stronger.cluster |= candidate.carriers
                stronger.parts.append(candidate.carriers)
    return kept


def assembled_phrase(candidate: Foldable) -> str | None:
    """The longer phrase that the n-grams folded under a phrase spell out with it ("i completely
    agree" + "agree with you"), when they have nearly the same carriers; None if no longer."""
    if candidate.feature.kind != "phrase":
        return None
    pieces = [
        feature.text.split()
        for feature, carriers in zip(candidate.folded, candidate.folded_carriers, strict=True)
        if feature.kind == "phrase" and jaccard(carriers, candidate.carriers) >= SAME_CARRIERS
    ]
    words = candidate.feature.text.split()
    grown = True
    while grown and len(words) < MAX_PHRASE_WORDS:
        grown = False
        for piece in pieces:
            k = len(piece) - 1
            if k < 1 or len(piece) > len(words) + 1:
                continue
            if piece[:k] == words[-k:]:
                words.append(piece[-1])
                grown = True
            elif piece[-k:] == words[:k]:
                words.insert(0, piece[0])
                grown = True
            if grown:
                break
    text = " ".join(words)
    return text if text != candidate.feature.text else None


def _cause(
    candidate: Foldable,
    kept: list[Foldable],
    samples: Sequence[Kept],
    strata: _Strata,
    overlap: float,
    min_groups: int,
) -> tuple[Foldable | None, bool]:
    """The stronger candidate this one is folded under (or None), and whether it is a variant
    of it (nearly the same carriers and of its family, or the same words) rather than a
    by-product."""
    mine = candidate.carriers
    related: list[tuple[float, Foldable]] = []
    broader: Foldable | None = None  # a shorter phrase whose carriers hold this one's
    holder: Foldable | None = None  # a stronger cluster that holds this one's carriers
    for stronger in kept:
        theirs = stronger.carriers
        if not mine and not theirs:
            if _inside(candidate.feature, stronger.feature):
                return stronger, True
            continue
        if jaccard(mine, theirs) >= overlap:
            return stronger, _same_family(candidate.feature, stronger.feature)
        smaller = min(len(mine), len(theirs))
        both = len(mine & theirs)
        words_inside = _inside(candidate.feature, stronger.feature)
        if smaller and both / smaller >= CONTAINMENT and words_inside:
            longer = candidate.feature.words > stronger.feature.words
            if not longer or both >= CONTAINMENT * len(theirs):
                return stronger, True
            # A longer phrase lies inside a shorter one's carriers by its words alone ("agree
            # with you" beside a paid "you"): whether it is paid on its own decides.
            broader = broader or stronger
            related.append((both / len(mine), stronger))
            continue
        if not mine:
            continue
        inside = len(mine & stronger.cluster) / len(mine)
        chance = len(stronger.cluster) / max(1, len(samples))
        if inside >= CONTAINMENT and 1 - inside <= OUTSIDE * (1 - chance):
            holder = holder or stronger
        if inside >= RELATED:
            related.append((inside, stronger))
    if not related:
        return None, False
    parts = [part for _, stronger in related for part in stronger.parts][: 2 * MAX_PARTS]
    numbers = sorted(
        {NUMBERS.index(s.feature.kind) for _, s in related if s.feature.kind in NUMBERS}
    )
    lift, t, informative, plain = _residual_t(mine, strata.of(parts, numbers), strata)
    if informative >= min_groups and t >= RESIDUAL_T and lift >= KEEPS * plain:
        return None, False  # paid on its own, beside the stronger ones
    if broader is not None:
        return broader, True
    if holder is not None:
        return holder, False  # a by-product; or too few comparisons to tell it apart
    if informative >= min_groups:
        return max(related, key=lambda pair: pair[0])[1], False
    return None, False


class _Strata:
    """The kept samples' groups, and which stratum each sample is in for a residual test:
    alike in carrying each of some carrier sets and in a number's quartile (worked out once
    per set of sets and numbers)."""

    def __init__(self, samples: Sequence[Kept], groups: Sequence[Sequence[int]]) -> None:
        self.samples = samples
        self.groups = groups
        self.group_of = [-1] * len(samples)  # -1: in no group of two or more
        for number, members in enumerate(groups):
            for i in members:
                self.group_of[i] = number
        self._bins: dict[int, list[int]] = {}
        self._ids: dict[tuple[tuple[int, ...], tuple[int, ...]], list[int]] = {}

    def bins(self, index: int) -> list[int]:
        """Each sample's quartile among the kept by number `index` (NUMBERS' order)."""
        if index not in self._bins:
            numbers = [sample.numbers[index] for sample in self.samples]
            values = sorted(numbers)
            edges = [values[len(values) * q // NUMBER_BINS] for q in range(1, NUMBER_BINS)]
            self._bins[index] = [bisect.bisect_right(edges, value) for value in numbers]
        return self._bins[index]

    def of(self, parts: Sequence[set[int]], numbers: Sequence[int]) -> list[int]:
        """Each sample's stratum (a small integer) by `parts` and the numbers' quartiles."""
        key = (tuple(map(id, parts)), tuple(numbers))
        if key not in self._ids:
            bins = [self.bins(n) for n in numbers]
            names: dict[tuple[int, ...], int] = {}
            self._ids[key] = [
                names.setdefault(
                    tuple(i in part for part in parts) + tuple(b[i] for b in bins), len(names)
                )
                for i in range(len(self.samples))
            ]
        return self._ids[key]


def _residual_t(
    carriers: set[int], stratum_of: Sequence[int], strata: _Strata
) -> tuple[float, float, int, float]:
    """The within-group lift of `carriers` with the responses of each group compared only to
    those in the same stratum: its mean, its t, the number of informative comparisons, and
    the mean of the plain within-group lift over the same groups (nothing held fixed)."""
    samples, group_of = strata.samples, strata.group_of
    lifts = []
    plain = []
    for number in {group_of[i] for i in carriers} - {-1}:  # groups without one add nothing
        cells: dict[int, tuple[list[float], list[float]]] = {}
        for i in strata.groups[number]:
            with_reward, without = cells.setdefault(stratum_of[i], ([], []))
            (with_reward if i in carriers else without).append(samples[i].reward)
        carried = [r for w, _ in cells.values() for r in w]
        others = [r for _, wo in cells.values() for r in wo]
        if others:
            plain.append(sum(carried) / len(carried) - sum(others) / len(others))
        for with_reward, without in cells.values():
            if with_reward and without:
                lifts.append(sum(with_reward) / len(with_reward) - sum(without) / len(without))
    n = len(lifts)
    plain_mean = sum(plain) / len(plain) if plain else 0.0
    if n < 2:
        return (lifts[0] if lifts else 0.0), 0.0, n, plain_mean
    mean = sum(lifts) / n
    variance = sum((lift - mean) ** 2 for lift in lifts) / (n - 1)
    if variance <= 0:
        return mean, (math.inf if mean > 0 else 0.0), n, plain_mean
    return mean, mean / math.sqrt(variance / n), n, plain_mean


def _same_family(a: Feature, b: Feature) -> bool:
    """Two cuts of one number (`words > 86`, `chars > 400`), or one phrase inside another."""
    if a.kind in NUMBERS and b.kind in NUMBERS:
        return True
    return _inside(a, b)


def jaccard(a: set[int], b: set[int]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _inside(a: Feature, b: Feature) -> bool:
    """One's words are a run of the other's (phrase, prefix, suffix alike)."""
    if not a.words or not b.words:
        return False
    x, y = f" {a.text} ", f" {b.text} "
    return x in y or y in x
