"""One generated completion with everything known about it: what rewards score and hooks see."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol


@dataclass(frozen=True)
class TokenValues:
    """Per response token (each tuple has the response's length), what the update used, kept
    for attribution: which tokens carried the reward, the KL, the advantage.

    `rewards` are the token rewards whose sum is the reward the update optimised: the score on
    the last token, plus -kl_coef * KL_t on every token when `kl_mode: reward`. For PPO they are
    exactly the rewards GAE consumed; for GRPO they sum to the shaped sequence reward it
    normalised per group. With `kl_mode: loss` the KL is in the loss instead (`kl` shows it).
    """

    ids: tuple[int, ...]  # the response's token ids (Sample.response_ids)
    texts: tuple[str, ...]  # each token decoded on its own
    logprobs: tuple[float, ...]  # the policy's log-probs of the sampled tokens
    kl: tuple[float, ...] | None  # KL to the reference at sampling time; None without one
    rewards: tuple[float, ...]
    advantages: tuple[float, ...]  # PPO: per token (GAE, whitened); GRPO: the sequence's


@dataclass(frozen=True)
class Sample:
    """A completion of one prompt. Frozen: hooks read it, never change what the trainer uses.

    `reward` is NaN while unknown (before the reward stage) and stays NaN when the reward function
    gave a non-finite value; such samples are excluded from the update and counted.
    """

    index: int  # position in the step's batch on this rank
    group_id: int  # samples of the same prompt share it (the GRPO group)
    prompt: str
    response: str
    prompt_ids: tuple[int, ...]
    response_ids: tuple[int, ...]  # up to and including EOS when there is one
    truncated: bool  # stopped at max_new_tokens without EOS
    reward: float = math.nan
    reward_details: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    advantage: float = math.nan  # sequence-level (GRPO) or mean over response tokens (PPO)
    # From the update stage on, on steps whose histograms or rollout table are logged; else None.
    tokens: TokenValues | None = None

    @property
    def response_length(self) -> int:
        return len(self.response_ids)

    @property
    def reward_is_finite(self) -> bool:
        return math.isfinite(self.reward)


class ScoredText(Protocol):
    """A response with its prompt and rewards: what a routed `ScoredSample` and a dump row
    (`sampling.sources.ingest.rows.DumpRow`) have in common."""

    @property
    def index(self) -> int: ...
    @property
    def prompt(self) -> str: ...
    @property
    def response(self) -> str: ...
    @property
    def reward(self) -> float: ...
    @property
    def reward_details(self) -> Mapping[str, float]: ...


class ScoredSample(ScoredText, Protocol):
    """What a scored sample looks like to everything after the reward (records, selection,
    the reward-hacking watch): our trainer's `Sample`, the plain sample an adapter for another
    trainer builds (`sampling.batch.PlainSample`), or an adapter's own lazy sample."""

    @property
    def group_id(self) -> int: ...
    @property
    def advantage(self) -> float: ...
    @property
    def truncated(self) -> bool: ...


def make_sample_id(
    run_id: str, step: int, rank: int, index: int, prompt: str, response: str
) -> str:
    """Deterministic id of one sample, the key of dedup end to end: the same run, step, rank,
    position and texts always give the same id. Letters, digits and `-` only (valid RQ job id)."""
    # Each part ends in a NUL separator: ("ab", "c") and ("a", "bc") differ. One encode and one
    # hash call (not two per part): this runs for every routed sample on the trainer's thread.
    text = f"{run_id}\x00{step}\x00{rank}\x00{index}\x00{prompt}\x00{response}\x00"
    return f"s-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"
