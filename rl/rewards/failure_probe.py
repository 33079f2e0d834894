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
from safetensors import safe_open
from safetensors.torch import save_file

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
        path = Path(directory) / PROBE_FILE
        tensors = {"weight": self.weight.detach().float().cpu().contiguous(),
                   "bias": self.bias.detach().float().cpu().contiguous()}  # fmt: skip
        save_file(tensors, str(path), metadata={"categories": json.dumps(list(self.categories))})
        return path


def load_probe(directory: str | Path) -> FailureProbe | None:
    """The probe saved beside a model, or None when it has none."""
    path = Path(directory) / PROBE_FILE
    if not path.is_file():
        return None
    with safe_open(str(path), framework="pt") as file:
        metadata = file.metadata() or {}
        weight, bias = file.get_tensor("weight").float(), file.get_tensor("bias").float()
    categories = json.loads(metadata.get("categories", "[]"))
    return FailureProbe(weight, bias, tuple(str(name) for name in categories))
