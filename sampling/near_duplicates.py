"""Groups of near-duplicate texts: paraphrase-level copies (case, punctuation, spacing, a changed
word or two) fall into one group, so that one review covers them all.

Texts are normalised (NFKC, case-folded, punctuation to spaces, runs of spaces to one), cut into
character shingles, and compared by the Jaccard similarity of their shingle sets. A MinHash
signature (one-permutation hashing: the smallest hash in each of 64 bins, empty bins filled from
the next full one) with LSH banding finds the pairs worth comparing, so thousands of texts cost
about linear time; the exact Jaccard then decides. Grouping is greedy in input order: a text
joins the most similar group whose first text (its representative) is at least `threshold`
similar, or starts a group. Every member is therefore close to its representative (no chains of
drifting copies), and the result depends only on the texts and their order.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Sequence

SHINGLE_CHARS = 5
MAX_CHARS = 4_000  # only the start of a long text is compared: enough to tell copies apart
_BANDS, _ROWS = 16, 4  # 64 bins; a pair with Jaccard 0.7 meets in some band ~99% of times
_BINS = _BANDS * _ROWS
_COMPARED = 8  # groups compared exactly per text, the ones sharing the most bands
_BUCKET_MAX = 64  # groups remembered per band value
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """What two copies of a text have in common: no case, punctuation or spacing differences."""
    folded = unicodedata.normalize("NFKC", text[:MAX_CHARS]).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


def shingles(normalised: str) -> frozenset[int]:
    """The text's character 5-grams, as 32-bit hashes (crc32: the same in every process)."""
    if len(normalised) <= SHINGLE_CHARS:
        return frozenset([zlib.crc32(normalised.encode("utf-8"))])
    return frozenset(
        zlib.crc32(normalised[start : start + SHINGLE_CHARS].encode("utf-8"))
        for start in range(len(normalised) - SHINGLE_CHARS + 1)
    )


def jaccard(first: frozenset[int], second: frozenset[int]) -> float:
    if not first and not second:
        return 1.0
    shared = len(first & second)
    return shared / (len(first) + len(second) - shared)


def _band_keys(hashes: frozenset[int]) -> list[tuple[int, tuple[int, ...]]]:
    signature: list[int | None] = [None] * _BINS
    for value in hashes:
        slot, rest = value % _BINS, value // _BINS
        current = signature[slot]
        if current is None or rest < current:
            signature[slot] = rest
    # An empty bin (short texts) borrows from the next full one, marked by the distance, so that
    # two short copies still agree bin by bin.
    full = [slot for slot, value in enumerate(signature) if value is not None]
    filled = list(signature)
    for slot, value in enumerate(signature):
        if value is None:
            donor = next((f for f in full if f > slot), full[0])
            filled[slot] = (signature[donor] or 0) + ((donor - slot) % _BINS) * 2**26
    return [
        (band, tuple(filled[band * _ROWS : (band + 1) * _ROWS]))  # type: ignore[misc]
        for band in range(_BANDS)
    ]


def group_near_duplicates(texts: Sequence[str], threshold: float = 0.7) -> list[list[int]]:
    """Groups of positions into `texts`, each ascending; a group's first position is its
    representative. Groups come in the order of their representatives; every position is in
    exactly one group. `threshold` is the Jaccard similarity (0 < threshold <= 1) of 5-character
    shingles of the normalised texts at which two texts are copies."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    groups: list[list[int]] = []
    by_text: dict[str, int] = {}  # exact copies after normalising: no hashing at all
    leaders: list[frozenset[int]] = []  # group -> its representative's shingles
    buckets: dict[tuple[int, tuple[int, ...]], list[int]] = {}  # LSH band key -> groups with it
    for position, text in enumerate(texts):
        key = normalise(text)
        known = by_text.get(key)
        if known is not None:
            groups[known].append(position)
            continue
        hashes = shingles(key)
        bands = _band_keys(hashes) if threshold < 1 else []
        hits: Counter[int] = Counter(g for band in bands for g in buckets.get(band, ()))
        # The groups sharing the most bands are the likeliest copies: only those are compared,
        # so that many similar-but-different texts (one prompt's answers) stay linear in cost.
        nearest = [group for group, _ in hits.most_common(_COMPARED)]  # ties: older first
        best, best_similarity = None, threshold
        for group in nearest:
            similarity = jaccard(hashes, leaders[group])
            if similarity >= best_similarity and (best is None or similarity > best_similarity):
                best, best_similarity = group, similarity
        if best is not None:
            groups[best].append(position)
            by_text[key] = best
            continue
        by_text[key] = len(groups)
        for band in bands:
            bucket = buckets.setdefault(band, [])
            if len(bucket) < _BUCKET_MAX:  # a band value shared by that many groups says little
                bucket.append(len(groups))
        groups.append([position])
        leaders.append(hashes)
    return groups
