"""A failure detector learned from the reviews: how much a response resembles the failures
reviewers already named.

Reviewers tick failure categories (sycophancy, verbose, off-topic, ...). `rm train` fits one
logistic head per category on the reward model's pooled features of the reviewed texts
(annotation.reward_model.probe) and saves them beside the model. A run's `reward_model` reward
then reports, per sample, the highest of the categories' probabilities as the extra `failure`
(reward_details `<name>/failure`, never part of the total), and the budget policy's `failure`
share spends reviews on the highest: the next reviews go to what looks like a failure people
already found, high reward or not. The reward model's own score cannot do this: a failure it
pays for is exactly one it does not score low.

File: `lowtide_failure_probe.safetensors` in the model directory, tensors `weight` (C, hidden)
and `bias` (C,), the category names in its metadata (`categories`, a JSON list in the heads'
order). A directory without it is a reward model without a probe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from rl.rewards.model_files import load_beside, save_beside
from rl.rewards.model_spec import FAILURE as FAILURE  # the ComponentScores extra's name

PROBE_FILE = "lowtide_failure_probe.safetensors"


@dataclass(frozen=True)
class FailureProbe:
    weight: torch.Tensor  # (C, hidden): one logistic head per category, on raw pooled features
    bias: torch.Tensor  # (C,)
    categories: tuple[str, ...]  # the heads' categories, in order

    def __post_init__(self) -> None:
        count = len(self.categories)
        if self.weight.ndim != 2 or self.weight.shape[0] != count or self.bias.shape != (count,):
            raise ValueError(
                f"failure probe: weight {tuple(self.weight.shape)}, bias "
                f"{tuple(self.bias.shape)} and {count} categories do not make one head each"
            )
        if not count:
            raise ValueError("failure probe: no categories (no probe is None, not an empty one)")

    def probabilities(self, features: torch.Tensor) -> torch.Tensor:
        """(N, C): each category's probability for each pooled feature row."""
        weight = self.weight.to(features.device, features.dtype)
        bias = self.bias.to(features.device, features.dtype)
        return torch.sigmoid(features @ weight.T + bias)

    def scores(self, features: torch.Tensor) -> torch.Tensor:
        """(N,) in [0, 1]: the highest category probability, "resembles a failure reviewers
        already named" whichever it is."""
        return self.probabilities(features).max(dim=1).values

    def save(self, directory: str | Path) -> Path:
        metadata = {"categories": json.dumps(list(self.categories))}
        return save_beside(directory, PROBE_FILE, {"weight": self.weight, "bias": self.bias},
                           metadata)  # fmt: skip


def load_probe(directory: str | Path) -> FailureProbe | None:
    """The probe saved beside a model, or None when it has none."""
    found = load_beside(directory, PROBE_FILE)
    if found is None:
        return None
    tensors, metadata = found
    categories = json.loads(metadata.get("categories", "[]"))
    return FailureProbe(tensors["weight"], tensors["bias"], tuple(str(n) for n in categories))
