"""One generation batch of one process, as the TRL adapter routes it: the batch scored, and its
samples in the shape the routing core reads, whose texts are made only when read."""

from __future__ import annotations

import array
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sampling.sources import group_id_of


def as_text(value: Any) -> str:
    """A prompt or completion as text: plain strings as they are; conversational ones (lists of
    messages) as `role: content` blocks, a lone assistant message as its content."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        if len(value) == 1 and value[0].get("role") == "assistant":
            return _content_text(value[0].get("content"))
        return "\n\n".join(f"{m.get('role', '')}: {_content_text(m.get('content'))}" for m in value)
    return str(value)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


@dataclass(eq=False)
class ScoredBatch:
    """One generation batch of one process, scored; `TrlSample`s read from it lazily."""

    prompts: list[Any]
    completions: list[Any]
    completion_ids: list[Any] | None
    totals: list[float]
    columns: list[array.array]  # float32, per function, in the trainer's order
    names: list[str]
    group_ids: list[int]
    max_completion_length: int | None
    eos_token_id: int | None
    _prompt_texts: dict[int, str] = field(default_factory=dict)

    def prompt_text(self, index: int) -> str:
        prompt = self.prompts[index]
        if isinstance(prompt, str):
            return prompt
        text = self._prompt_texts.get(index)
        if text is None:
            text = self._prompt_texts[index] = as_text(self.prompts[index])
        return text

    def truncated(self, index: int) -> bool:
        if self.completion_ids is None or not self.max_completion_length:
            return False
        ids = self.completion_ids[index]
        if len(ids) < self.max_completion_length:
            return False
        return not ids or self.eos_token_id is None or int(ids[-1]) != self.eos_token_id


class TrlSample:
    """One scored completion in the shape the routing core reads (`ScoredSample`). The core reads
    every sample's reward and group but the texts only of the samples it selects."""

    __slots__ = ("_batch", "_row", "group_id", "index", "reward")

    def __init__(
        self, batch: ScoredBatch, row: int, index: int, reward: float, group_id: int
    ) -> None:
        self._batch = batch
        self._row = row  # in the batch; `index` (part of the id) may count on from a batch before
        self.index = index
        self.reward = reward  # plain attributes: read for every sample
        self.group_id = group_id

    @property
    def prompt(self) -> str:
        return self._batch.prompt_text(self._row)

    @property
    def response(self) -> str:
        return as_text(self._batch.completions[self._row])

    @property
    def reward_details(self) -> dict[str, float]:
        batch = self._batch
        return {
            name: column[self._row] for name, column in zip(batch.names, batch.columns, strict=True)
        }

    @property
    def advantage(self) -> float:
        return math.nan  # TRL computes advantages after the reward functions

    @property
    def truncated(self) -> bool:
        return self._batch.truncated(self._row)


def prompt_groups(batch: ScoredBatch) -> list[int]:
    """Samples of one prompt share a group: TRL repeats each prompt `num_generations` times in a
    row. The id hashes the prompt's text, so a group split across processes keeps one id."""
    ids: list[int] = []
    previous: Any = object()
    group = 0
    for index, prompt in enumerate(batch.prompts):
        if prompt is not previous and prompt != previous:
            group = group_id_of(batch.prompt_text(index))
            previous = prompt
        ids.append(group)
    return ids
