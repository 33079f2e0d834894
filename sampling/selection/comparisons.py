"""Comparison tasks: each selected sample shown beside others of its prompt group.

With `sampling.compare_size` set (`annotation.review_mode: compare`), a selector's decisions
become groups: the selected sample and up to `size - 1` other responses to the same prompt of
the same batch (its GRPO group), one task however many it holds. The others span the group's
rewards, the highest always among them, since a reviewer learns most from seeing the selected
response beside what the reward model liked best. Two selected samples of one group make one
task. Responses that are copies of one another are shown once. Labels (A, B, ...) go to the
responses in an order drawn from the group's id, so the selected one is not always A (a
reviewer's position bias would otherwise line up with the selection).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sampling.records import ScoredSample
from sampling.selection.decision import Decision, Metrics, Offered, RouteObserver


@dataclass
class Grouping:
    """What grouping did to a selector's decisions."""

    decisions: list[Decision]
    alone: int = 0  # selected samples with no other response to compare with: not sent


class Comparisons(RouteObserver):
    """The router's observer for `sampling.compare_size`: each selected sample becomes a
    comparison task with others of its prompt group (the budget selector groups its own picks:
    its offers carry no decisions)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.alone = 0  # selected samples with nothing of their group to compare with

    def on_selected(self, offered: Offered, samples: Sequence[ScoredSample]) -> Offered:
        if not offered.decisions:
            return offered
        by_group: dict[int, list[ScoredSample]] = {}
        for sample in samples:
            by_group.setdefault(sample.group_id, []).append(sample)
        grouping = compared(offered.decisions, lambda d: by_group[d.sample.group_id], self.size)
        self.alone += grouping.alone
        counts = replace(offered.counts, submitted=len(grouping.decisions))
        return Offered(counts, grouping.decisions)

    def metrics(self) -> Metrics:
        return {"sampling/compare_alone": (self.alone, "sum")}


def compared(
    decisions: Sequence[Decision],
    group_of: Callable[[Decision], Sequence[ScoredSample]],
    size: int,
) -> Grouping:
    """Each decision as a comparison task of at most `size` responses. `group_of(decision)`:
    the samples of its prompt group that may be shown (the decision's own sample among them)."""
    result = Grouping([])
    shown: set[tuple[str, int, int, int]] = set()  # (run, step, rank, group) of made tasks
    for decision in decisions:
        key = (decision.info.run_id, decision.info.step, decision.info.rank,
               decision.sample.group_id)  # fmt: skip
        if key in shown:  # a second pick of a group: shown in the first one's task
            continue
        members = _members(decision.sample, group_of(decision), size)
        if len(members) < 2:
            result.alone += 1
            continue
        shown.add(key)
        order = list(members)
        random.Random(f"lowtide-compare:{key}").shuffle(order)
        result.decisions.append(replace(decision, compared=tuple(order)))
    return result


def _members(
    selected: ScoredSample, group: Sequence[ScoredSample], size: int
) -> list[ScoredSample]:
    """The selected sample and up to size - 1 others with distinct responses and finite
    rewards: the highest reward first, then evenly spread over the rest of the range."""
    texts = {selected.response.strip()}
    others: list[ScoredSample] = []
    for sample in sorted(group, key=lambda s: -s.reward if math.isfinite(s.reward) else 0):
        text = sample.response.strip()
        if sample is selected or text in texts or not math.isfinite(sample.reward):
            continue
        texts.add(text)
        others.append(sample)  # highest reward first
    return [selected, *_spread(others, size - 1)]


def _spread(ranked: list[ScoredSample], count: int) -> list[ScoredSample]:
    """`count` of `ranked` (best first): the best, then evenly spaced down the ranking."""
    if len(ranked) <= count:
        return ranked
    if count == 1:
        return ranked[:1]
    step = (len(ranked) - 1) / (count - 1)
    return [ranked[round(i * step)] for i in range(count)]
