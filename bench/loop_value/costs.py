"""What a review costs a reviewer, in seconds: the bench compares methods per reviewer-minute,
not per task, because a comparison of 4 responses and a rating of one are not the same work.

A review is described by what the reviewer did (`Work`): how many responses they read (and how
many characters), whether they decided by a rating (single) or by picking the best and the worst
(compare), and whether they wrote a better answer. A cost model prices that work.

Two models, both reported, so that a conclusion which holds under one guess and not the other
is visible as such:

- `reading, deciding, writing` (the default): 20 s to read a response (the bench's answers are
  one short sentence; a reviewer still reads the prompt and checks the answer against it),
  10 s to decide a rating of one (1-5 stars and the failure's categories), 15 s to pick the
  best and the worst of a comparison (two keys, but the responses are weighed against each
  other), 60 s to write a better answer (typing one sentence and checking it). No per-character
  charge by default: the responses are at most 24 tokens, and the per-response charge already
  is the reading of one.
- `per response read`: 30 s per response read, nothing else. A comparison of 4 costs 4 ratings;
  writing is free. This is the model least kind to a comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["single", "compare"]


@dataclass(frozen=True)
class Work:
    """What one review asked of the reviewer."""

    kind: Kind
    responses: int  # read
    characters: int  # of those responses
    wrote: bool  # a better answer


@dataclass(frozen=True)
class CostModel:
    name: str
    read_s: float  # per response read
    read_s_per_char: float = 0.0
    decide_single_s: float = 0.0
    decide_compare_s: float = 0.0
    write_s: float = 0.0

    def seconds(self, work: Work) -> float:
        decide = self.decide_single_s if work.kind == "single" else self.decide_compare_s
        return (
            self.read_s * work.responses
            + self.read_s_per_char * work.characters
            + decide
            + (self.write_s if work.wrote else 0.0)
        )

    def minutes(self, works: Sequence[Work]) -> float:
        return sum(self.seconds(work) for work in works) / 60


DEFAULT = CostModel(
    "reading, deciding, writing", read_s=20.0, decide_single_s=10.0, decide_compare_s=15.0,
    write_s=60.0,
)  # fmt: skip
PER_READ = CostModel("per response read", read_s=30.0)
MODELS = (DEFAULT, PER_READ)
