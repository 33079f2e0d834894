"""Retrain only a reward model's score head, on the frozen backbone's features
(`RMTrainSettings(train="head")`; the loop bench's `--rm-train head`).

A round of review brings a few dozen judgements. Fine-tuning every weight on so few, warm-started,
can unlearn what the parent knew about the policy's own responses (the loop bench saw a first
round take its reward model below chance: docs/loop.md). Here the backbone cannot move: each
distinct training text is encoded once, and the linear score head is fitted on those features with
the model's own losses (Bradley-Terry on pairs, rating regression), starting from the parent's
head and pulled back toward it. The pull is measured in the head's own size,
`anchor * ||w - w_parent||^2 / ||w_parent||^2`, so that with anchor 1 moving the head by its
whole length costs about what a pair at chance costs (log 2); Adam's step is the parent head's
typical coordinate. The rating regression reads the score as it is, with no bias to absorb an
offset (a decoder's score head has none).

Cost: one no-grad forward over the distinct texts and a few hundred full-batch steps on one
vector: a second or two for the tiny model, where fine-tuning the model takes minutes.

Measured on the loop bench against fine-tuning every weight, and not offered by `rm train`: it
keeps a first round's accuracy, but then learns far less from the reviews than fine-tuning does
(docs/loop.md). It stays as that diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from annotation.reward_model.data import RMData, RMDataError, distinct, texts_of
from rl.rewards.model import RewardModel
from rl.rewards.uncertainty import score_module


@dataclass(frozen=True)
class HeadRefitSettings:
    steps: int = 300
    anchor: float = 1.0  # weight of ||w - w_parent||^2 / ||w_parent||^2
    rating_weight: float = 0.5


def refit_score_head(
    scorer: RewardModel,
    data: RMData,
    settings: HeadRefitSettings,
    weight_scale: float | None = None,
) -> float:
    """Fit `scorer`'s score head in place; the final loss. With `weight_scale` (training's
    `agreement_scale`), each pair's and rating's loss is weighted by its agreement times it."""
    head = score_module(scorer.model)
    if head is None or head.weight.shape[0] != 1:
        raise RMDataError(
            f"{type(scorer.model).__name__} has no one-output linear `score` head: "
            'train the whole model instead (train="model")'
        )
    pairs = data.pairs
    ratings = data.ratings if settings.rating_weight > 0 else []
    slots, unique = distinct(texts_of(pairs, ratings))
    every = scorer.features([p for p, _ in unique], [r for _, r in unique])
    every = every[torch.tensor(slots, dtype=torch.long)].float()
    margins = every[: len(pairs)] - every[len(pairs) : 2 * len(pairs)]
    rated = every[2 * len(pairs) :]
    targets = torch.tensor([(r.rating - 3) / 2 for r in ratings], dtype=torch.float32)
    pair_weights, rated_weights = _weights(pairs, weight_scale), _weights(ratings, weight_scale)
    parent = head.weight.detach()[0].float().cpu()
    size = parent.pow(2).sum().clamp_min(1e-12)
    weight = parent.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([weight], lr=parent.abs().mean().clamp_min(1e-4).item())
    loss = torch.zeros(())
    for _ in range(settings.steps):
        loss = settings.anchor * (weight - parent).pow(2).sum() / size
        if len(margins):
            loss = loss - (pair_weights * F.logsigmoid(margins @ weight)).mean()
        if len(rated):
            squared = (rated @ weight - targets).pow(2)
            loss = loss + settings.rating_weight * (rated_weights * squared).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        head.weight.copy_(weight.detach().to(head.weight.dtype).unsqueeze(0))
    return float(loss.item())


def _weights(items: list, scale: float | None) -> torch.Tensor:
    if scale is None:
        return torch.ones(len(items))
    return torch.tensor([item.agreement * scale for item in items], dtype=torch.float32)
