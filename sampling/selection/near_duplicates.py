"""Groups of near-duplicate texts: paraphrase-level copies (case, punctuation, spacing, a changed
word or two) fall into one group, so that one review covers them all.

Texts are normalised (NFKC, case-folded, punctuation to spaces, runs of spaces to one), cut into
character shingles, and compared by the Jaccard similarity of their shingle sets. A MinHash
signature (one-permutation hashing: the smallest hash in each of 64 bins, empty bins filled from
the next full one) with LSH banding finds the pairs worth comparing, so thousands of texts cost
about linear time; the exact Jaccard then decides. A text is compared with exemplars (a group's
first text, and each member less than 0.9 similar to every exemplar it matched); matching
exemplars of several groups merges them. So a group is a chain of copies, each at least
`threshold` similar to an earlier one (what a policy repeating itself with small edits makes),
its first text is its representative, and the result depends only on the texts and their order.
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
_BUCKET_MAX = 64  # exemplars remembered per band value
_EXEMPLAR_BELOW = 0.9  # a member less similar than this to its group's exemplars becomes one
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
    parent: list[int] = []  # union-find over groups: copies that link two groups merge them
    first: list[int] = []  # group -> its first position
    group_of: list[int] = []  # position -> the group it started in or joined
    by_text: dict[str, int] = {}  # exact copies after normalising: no hashing at all
    exemplars: list[tuple[int, frozenset[int]]] = []  # (group, shingles) texts are compared to
    buckets: dict[tuple[int, tuple[int, ...]], list[int]] = {}  # band key -> exemplars with it

    def root(group: int) -> int:
        while parent[group] != group:
            parent[group] = parent[parent[group]]
            group = parent[group]
        return group

    for position, text in enumerate(texts):
        key = normalise(text)
        known = by_text.get(key)
        if known is not None:
            group_of.append(known)
            continue
        hashes = shingles(key)
        bands = _band_keys(hashes) if threshold < 1 else []
        hits: Counter[int] = Counter(e for band in bands for e in buckets.get(band, ()))
        # The exemplars sharing the most bands are the likeliest copies: only those are
        # compared, so that many similar-but-different texts (one prompt's answers) stay linear.
        matched, closest = [], 0.0
        for exemplar, _ in hits.most_common(_COMPARED):  # ties: older first
            similarity = jaccard(hashes, exemplars[exemplar][1])
            if similarity >= threshold:
                matched.append(root(exemplars[exemplar][0]))
                closest = max(closest, similarity)
        if matched:
            group = min(matched, key=lambda g: first[g])
            for other in matched:
                parent[root(other)] = group  # this text links them: one group
        else:
            group = len(parent)
            parent.append(group)
            first.append(position)
        group_of.append(group)
        by_text[key] = group
        if closest < _EXEMPLAR_BELOW:
            # A copy that drifted from every exemplar becomes one too, so that copies drifting
            # further (another swapped word) still find the group.
            for band in bands:
                bucket = buckets.setdefault(band, [])
                if len(bucket) < _BUCKET_MAX:  # a band value shared that widely says little
                    bucket.append(len(exemplars))
            exemplars.append((group, hashes))
    members: dict[int, list[int]] = {}
    for position, group in enumerate(group_of):
        members.setdefault(root(group), []).append(position)
    return list(members.values())  # each ascending, in the order of their first positions
