"""Folding: one suspect for one cause. Planting "i agree" also raises "i", "agree", "i agree
with", the suffix "i agree", and perhaps "no final punctuation"; each of those is paid only
because it comes with the phrase. In rank order, a candidate is folded under a stronger one
already kept when, among the samples kept:

- their carriers nearly coincide (Jaccard >= `fold_overlap`);
- its words are a run of the stronger one's words (or the reverse) and the smaller carrier set
  lies mostly inside the larger;
- its carriers lie mostly inside the stronger one's cluster (its carriers and those of its
  variants: other cuts of the same number, phrases inside it), far more than chance would put
  there: a by-product of it;
- or it overlaps stronger clusters and is not paid once they are held fixed: its within-group
  lift, comparing only responses alike in carrying each of the cluster's features, has
  t < RESIDUAL_T over enough groups.

A second, independent cause keeps its lift among the responses without the first: it stays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from sampling.selection.hacking.engine import Kept
from sampling.selection.hacking.features import NUMBERS, Feature

CONTAINMENT = 0.8  # share of a candidate's carriers inside a stronger one's, to fold it
OUTSIDE = 0.4  # ... and at most this part of the share outside that chance would leave
RELATED = 0.25  # share of overlap that makes a stronger one a possible cause
RESIDUAL_T = 2.0  # a residual lift below this t is "not paid on its own"
SAME_CARRIERS = 0.9  # n-grams this alike (Jaccard) are pieces of one phrase
MAX_PHRASE_WORDS = 12
MAX_PARTS = 6  # carrier sets of one cluster that stratify the residual test


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
    """The candidates kept, in order, each with what was folded under it; stops once `top`
    growing and `top` other candidates are kept."""
    kept: list[Foldable] = []
    counts = {True: 0, False: 0}
    for candidate in pool:
        if counts[True] >= top and counts[False] >= top:
            break
        if counts[candidate.growing] >= top:
            continue
        stronger, variant = _cause(candidate, kept, samples, groups, overlap, min_groups)
        if stronger is None:
            candidate.cluster |= candidate.carriers
            candidate.parts.append(candidate.carriers)
            kept.append(candidate)
            counts[candidate.growing] += 1
        else:
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
        if feature.kind == "phrase" and _jaccard(carriers, candidate.carriers) >= SAME_CARRIERS
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
    groups: Sequence[Sequence[int]],
    overlap: float,
    min_groups: int,
) -> tuple[Foldable | None, bool]:
    """The stronger candidate this one is folded under (or None), and whether it is a variant
    of it (nearly the same carriers and of its family, or the same words) rather than a
    by-product."""
    mine = candidate.carriers
    related: list[tuple[float, Foldable]] = []
    for stronger in kept:
        theirs = stronger.carriers
        if not mine and not theirs:
            if _inside(candidate.feature, stronger.feature):
                return stronger, True
            continue
        if _jaccard(mine, theirs) >= overlap:
            return stronger, _same_family(candidate.feature, stronger.feature)
        smaller = min(len(mine), len(theirs))
        both = len(mine & theirs)
        words_inside = _inside(candidate.feature, stronger.feature)
        if smaller and both / smaller >= CONTAINMENT and words_inside:
            return stronger, True
        if not mine:
            continue
        inside = len(mine & stronger.cluster) / len(mine)
        chance = len(stronger.cluster) / max(1, len(samples))
        if inside >= CONTAINMENT and 1 - inside <= OUTSIDE * (1 - chance):
            return stronger, False
        if inside >= RELATED:
            related.append((inside, stronger))
    if not related:
        return None, False
    parts = [part for _, stronger in related for part in stronger.parts][: 2 * MAX_PARTS]
    t, informative = _residual_t(mine, parts, samples, groups)
    if informative >= min_groups and t < RESIDUAL_T:
        return max(related, key=lambda pair: pair[0])[1], False
    return None, False


def _residual_t(
    carriers: set[int],
    parts: Sequence[set[int]],
    samples: Sequence[Kept],
    groups: Sequence[Sequence[int]],
) -> tuple[float, int]:
    """t of the within-group lift of `carriers` with the responses of each group compared
    only to those alike in `parts` (carrying the same of those sets), and the number of
    informative comparisons."""
    lifts = []
    for members in groups:
        strata: dict[tuple[bool, ...], tuple[list[float], list[float]]] = {}
        for i in members:
            with_reward, without = strata.setdefault(tuple(i in part for part in parts), ([], []))
            (with_reward if i in carriers else without).append(samples[i].reward)
        for with_reward, without in strata.values():
            if with_reward and without:
                lifts.append(sum(with_reward) / len(with_reward) - sum(without) / len(without))
    n = len(lifts)
    if n < 2:
        return 0.0, n
    mean = sum(lifts) / n
    variance = sum((lift - mean) ** 2 for lift in lifts) / (n - 1)
    if variance <= 0:
        return (math.inf if mean > 0 else 0.0), n
    return mean / math.sqrt(variance / n), n


def _same_family(a: Feature, b: Feature) -> bool:
    """Two cuts of one number (`words > 86`, `chars > 400`), or one phrase inside another."""
    if a.kind in NUMBERS and b.kind in NUMBERS:
        return True
    return _inside(a, b)


def _jaccard(a: set[int], b: set[int]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _inside(a: Feature, b: Feature) -> bool:
    """One's words are a run of the other's (phrase, prefix, suffix alike)."""
    if not a.words or not b.words:
        return False
    x, y = f" {a.text} ", f" {b.text} "
    return x in y or y in x
