"""What the bench measures, as pure functions of scores and verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.config import ScoreBand
from annotation.suggestions import Rollout as JudgedRollout
from annotation.suggestions import ScoreBands
from bench.loop_value.task import Verdict

# The reward model's score mapped back to the rating it was trained toward: target (rating-3)/2.
SUGGESTION_BANDS = ScoreBands(
    [ScoreBand(below=bound, rating=stars) for stars, bound in
     enumerate((-0.75, -0.25, 0.25, 0.75, None), 1)]
)  # fmt: skip


def oracle_score(verdicts: Sequence[Verdict]) -> float:
    """The oracle's mean rating, scaled to [0, 1]."""
    return sum((v.rating - 1) / 4 for v in verdicts) / len(verdicts) if verdicts else math.nan


@dataclass(frozen=True)
class PairAccuracy:
    overall: float  # share of same-prompt pairs the oracle orders that the RM orders alike
    high: float  # the same over pairs with a member the starting RM scored in its top third
    pairs: int


def pairwise_accuracy(
    prompts: Sequence[str],
    scores: Sequence[float],
    ratings: Sequence[int],
    high: Sequence[bool],
) -> PairAccuracy:
    """Over pairs of samples of one prompt that the oracle rates differently; an RM tie is 1/2."""
    right = total = high_right = high_total = 0.0
    by_prompt: dict[str, list[int]] = {}
    for index, prompt in enumerate(prompts):
        by_prompt.setdefault(prompt, []).append(index)
    for members in by_prompt.values():
        for position, a in enumerate(members):
            for b in members[position + 1 :]:
                if ratings[a] == ratings[b]:
                    continue
                agree = (scores[a] - scores[b]) * (ratings[a] - ratings[b])
                value = 1.0 if agree > 0 else 0.5 if scores[a] == scores[b] else 0.0
                right, total = right + value, total + 1
                if high[a] or high[b]:
                    high_right, high_total = high_right + value, high_total + 1
    return PairAccuracy(
        right / total if total else math.nan,
        high_right / high_total if high_total else math.nan,
        int(total),
    )


def top_share(scores: Sequence[float], share: float) -> list[bool]:
    """Whether each score is among the highest `share` of them (at least one)."""
    count = max(1, math.ceil(share * len(scores)))
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    chosen = set(order[:count])
    return [i in chosen for i in range(len(scores))]


@dataclass(frozen=True)
class SuggestionOutcome:
    accepted: bool  # the reviewer kept the suggested rating and categories
    rating_kept: bool  # the reviewer kept the suggested rating
    edits: int  # fields the reviewer changed: rating, categories (0-2)


def suggestion_outcome(score: float, verdict: Verdict) -> SuggestionOutcome:
    """A suggestion from the reward model's score (bands of its rating scale) against what the
    scripted reviewer decided."""
    judged = JudgedRollout("", "", 0, "", "", score, {}, "", score)
    suggested = SUGGESTION_BANDS(judged)
    assert suggested is not None
    rating_kept = suggested.rating == verdict.rating
    edits = int(not rating_kept) + int(set(suggested.categories) != set(verdict.categories))
    return SuggestionOutcome(edits == 0, rating_kept, edits)
