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

from annotation.reward_model.data import RMData, RMDataError, distinct, texts_of
from annotation.reward_model.heads import HeadSettings, fit_linear
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
    pair_weights: torch.Tensor | None = None,
    rated_weights: torch.Tensor | None = None,
) -> float:
    """Fit `scorer`'s score head in place (heads.fit_linear, one head, no bias); the final loss.
    Optional per-pair and per-rating loss weights (training's agreement weights)."""
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
    parent = head.weight.detach().float().cpu()  # (1, hidden)
    fit = HeadSettings(
        count=1,
        steps=settings.steps,
        learning_rate=parent.abs().mean().clamp_min(1e-4).item(),
        anchor=settings.anchor / parent.pow(2).sum().clamp_min(1e-12).item(),
        rating_weight=settings.rating_weight,
    )
    weight, _, loss = fit_linear(
        parent, margins.unsqueeze(0), rated.unsqueeze(0), targets.unsqueeze(0), fit,
        pair_weights=pair_weights, rated_weights=rated_weights, bias=False,
    )  # fmt: skip
    with torch.no_grad():
        head.weight.copy_(weight.to(head.weight.dtype))
    return loss
