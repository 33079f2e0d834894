"""Uncertainty heads of a reward model: a few cheap linear heads beside the one-output score head.

Each head reads the same pooled hidden state as the model's score head (the input of `score` at
the last non-pad token) and was fitted on its own bootstrap of the reward model's training data
(see annotation.reward_model.heads). Where the data pinned the score down the heads agree; where
it did not (responses unlike anything reviewed), they keep their own random start and disagree.
Their population std per sample is the reward model's uncertainty, reported as the extra
`spread` (reward_details key `<component>/spread`); it never enters the reward total.

File: `lowtide_reward_heads.safetensors` in the model directory, tensors `weight` (K, hidden)
and `bias` (K,). A directory without it is a reward model without heads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from rl.rewards.model_files import load_beside, save_beside

HEADS_FILE = "lowtide_reward_heads.safetensors"
SPREAD = "spread"  # the ComponentScores extra's name


@dataclass(frozen=True)
class UncertaintyHeads:
    weight: torch.Tensor  # (K, hidden)
    bias: torch.Tensor  # (K,)

    def __post_init__(self) -> None:
        if self.weight.ndim != 2 or self.bias.shape != (self.weight.shape[0],):
            raise ValueError(
                f"uncertainty heads: weight {tuple(self.weight.shape)} and bias "
                f"{tuple(self.bias.shape)} do not make K linear heads"
            )

    @property
    def count(self) -> int:
        return int(self.weight.shape[0])

    def scores(self, features: torch.Tensor) -> torch.Tensor:
        """(N, K): every head's score of every pooled feature row."""
        weight = self.weight.to(features.device, features.dtype)
        return features @ weight.T + self.bias.to(features.device, features.dtype)

    def spread(self, features: torch.Tensor) -> torch.Tensor:
        """(N,): the heads' population std per sample (0 with a single head)."""
        return self.scores(features).std(dim=1, unbiased=False)

    def save(self, directory: Path) -> Path:
        return save_beside(directory, HEADS_FILE, {"weight": self.weight, "bias": self.bias})


def load_heads(directory: Path) -> UncertaintyHeads | None:
    """The heads saved beside a model, or None when it has none."""
    found = load_beside(directory, HEADS_FILE)
    return None if found is None else UncertaintyHeads(found[0]["weight"], found[0]["bias"])


def score_module(model: nn.Module) -> nn.Module | None:
    """The one-output head whose input the uncertainty heads read (`score` in the
    ForSequenceClassification models of decoder LMs), or None for a model without one."""
    head = getattr(model, "score", None)
    return head if isinstance(head, nn.Linear) else None


@contextmanager
def pooled_features(model: nn.Module, pad_id: int) -> Iterator[list[torch.Tensor]]:
    """While open, each forward of `model` appends (batch, hidden): the score head's input at the
    rightmost non-pad token, the position the model reads its score from."""
    head = score_module(model)
    if head is None:
        raise ValueError(
            f"{type(model).__name__} has no linear `score` head for uncertainty heads to read"
        )
    captured: list[torch.Tensor] = []
    inputs: dict[str, torch.Tensor] = {}

    def remember_ids(module: nn.Module, args: tuple, kwargs: dict) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        if ids is not None:
            inputs["input_ids"] = ids

    def capture(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
        hidden = args[0]  # (batch, time, hidden)
        ids = inputs["input_ids"]
        positions = torch.arange(ids.shape[-1], device=ids.device)
        last = (positions * (ids != pad_id)).argmax(-1)  # as the model pools its logits
        captured.append(hidden[torch.arange(hidden.shape[0], device=hidden.device), last])

    handles = [
        model.register_forward_pre_hook(remember_ids, with_kwargs=True),
        head.register_forward_hook(capture),
    ]
    try:
        yield captured
    finally:
        for handle in handles:
            handle.remove()
