"""What every reward sees and gives back: the batch, one component's scores, the scorer protocol.

A leaf: the registry, the function wrapper, the rules and the reward model all import it, and it
imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class RewardError(ValueError):
    """A reward could not be built, or a reward function broke its contract."""


@dataclass(frozen=True)
class RewardBatch:
    """What every reward function sees: one entry per completion, in the trainer's order."""

    prompts: list[str]  # the raw user prompts (before chat template)
    responses: list[str]  # decoded completions (special tokens stripped)
    truncated: list[bool]  # hit max_new_tokens without EOS

    def __post_init__(self) -> None:
        sizes = {len(self.prompts), len(self.responses), len(self.truncated)}
        if len(sizes) != 1:
            raise RewardError(
                f"RewardBatch columns differ in length: {len(self.prompts)} prompts, "
                f"{len(self.responses)} responses, {len(self.truncated)} truncated flags"
            )

    def __len__(self) -> int:
        return len(self.responses)


@dataclass(frozen=True)
class ComponentScores:
    """One component's output for a batch."""

    values: list[float]  # the raw score per sample; NaN where the function raised
    extras: list[dict[str, float]] | None = None  # per sample: extra name -> value
    errors: tuple[str, ...] = ()  # what went wrong, for samples scored NaN by a failure


class Scorer(Protocol):
    def __call__(self, batch: RewardBatch) -> ComponentScores: ...

    def close(self) -> None: ...


def batched(func: F) -> F:
    """Mark a reward function as taking whole columns: `func(prompts, responses, **params)`."""
    func.batched = True  # type: ignore[attr-defined]
    return func
