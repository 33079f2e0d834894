"""A comparison review: one prompt, k responses of its group labelled A, B, C, ...; the reviewer
picks the best and the worst. What that says about the k responses is a set of pairwise orders:
the best beats every other response, and every response but the best beats the worst, so
best-and-worst of k gives 2k - 3 of the k(k-1)/2 orders (5 of 6 for k = 4, all of them for 3).

Pure functions of labels and ids: the export, the loop's scripted reviewer and the bench all
read a verdict through `comparison_pairs`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

MIN_RESPONSES, MAX_RESPONSES = 2, 8
LABELS = string.ascii_uppercase[:MAX_RESPONSES]  # the letters a reviewer sees: A, B, ...


class ComparisonError(ValueError):
    """A verdict that names no response of the task, or the same one as best and worst."""


@dataclass(frozen=True)
class Verdict:
    """A comparison reviewer's answer, by label: the best and the worst response."""

    best: str
    worst: str


def labels_for(count: int) -> tuple[str, ...]:
    """The labels of a task with `count` responses: ("A", "B", "C", "D") for 4."""
    if not MIN_RESPONSES <= count <= MAX_RESPONSES:
        raise ComparisonError(
            f"a comparison shows {MIN_RESPONSES} to {MAX_RESPONSES} responses, not {count}"
        )
    return tuple(LABELS[:count])


def comparison_pairs(members: Sequence[str], verdict: Verdict) -> list[tuple[str, str]]:
    """The (preferred, other) orders a verdict gives over `members` (their ids, in label order:
    members[0] is A): the best over each other one, then each other one over the worst. The
    best-over-worst order is given once."""
    labels = labels_for(len(members))
    for name, label in (("best", verdict.best), ("worst", verdict.worst)):
        if label not in labels:
            raise ComparisonError(f"{name} {label!r} is none of {', '.join(labels)}")
    if verdict.best == verdict.worst:
        raise ComparisonError(f"{verdict.best} cannot be both the best and the worst")
    by_label = dict(zip(labels, members, strict=True))
    best, worst = by_label[verdict.best], by_label[verdict.worst]
    over_rest = [(best, other) for label, other in by_label.items() if label != verdict.best]
    middle = [
        (other, worst)
        for label, other in by_label.items()
        if label not in (verdict.best, verdict.worst)
    ]
    return over_rest + middle
