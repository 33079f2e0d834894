"""Fit a reward model's uncertainty heads (rl.rewards.uncertainty) after the model is trained.

The backbone is frozen: each training text is encoded once into the pooled feature the score
head reads, and K linear heads are fitted on those features, each on its own bootstrap of the
pairs and ratings, with the same losses as the model (Bradley-Terry, rating regression). Each head
starts from its own random weights and is pulled back toward them ("anchored" ensembles), so
in feature directions the data never constrained the heads keep disagreeing: that disagreement
is the uncertainty. Features are centred on the training mean first (folded into the bias), so a
component every text shares, which pairs cannot pin down, adds no spread.

Cost: one no-grad forward over the distinct training texts, then a few hundred full-batch steps on
one (K, hidden) matrix for all K heads: well under a second for the tiny model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F

from annotation.reward_model.data import RMData, distinct, texts_of
from rl.rewards.uncertainty import UncertaintyHeads


class FeatureSource(Protocol):
    """What the heads read texts through: a RewardModel, or features already computed for them
    (annotation.reward_model.extras)."""

    def features(self, prompts: list[str], responses: list[str]) -> torch.Tensor: ...


@dataclass(frozen=True)
class HeadSettings:
    count: int = 5
    steps: int = 300
    learning_rate: float = 0.05
    anchor: float = 1e-3  # weight of ||w - w_start||^2: the pull toward each head's prior
    prior_scale: float = 0.5  # std of a fresh head's score on a typical feature, reward units
    rating_weight: float = 0.5
    seed: int = 0


def fit_heads(scorer: FeatureSource, data: RMData, settings: HeadSettings) -> UncertaintyHeads:
    pairs = data.pairs
    ratings = data.ratings if settings.rating_weight > 0 else []
    slots, unique = distinct(texts_of(pairs, ratings))
    encoded = scorer.features([p for p, _ in unique], [r for _, r in unique])
    every = encoded[torch.tensor(slots, dtype=torch.long)]
    chosen, rejected = every[: len(pairs)], every[len(pairs) : 2 * len(pairs)]
    rated = every[2 * len(pairs) :]
    targets = torch.tensor([(r.rating - 3) / 2 for r in ratings], dtype=torch.float32)
    mean = every.mean(0) if len(every) else torch.zeros(every.shape[1])
    # A fresh head scores a typical (centred) feature with std ~prior_scale.
    typical = (every - mean).norm(dim=1).mean().item() if len(every) else 1.0
    init_std = settings.prior_scale / max(typical, 1e-6)
    generator = torch.Generator().manual_seed(settings.seed)
    starts, pair_picks, rated_picks = [], [], []
    for head in range(settings.count):
        rng = random.Random(settings.seed * 1009 + head)
        pair_picks.append([rng.randrange(len(pairs)) for _ in pairs])
        rated_picks.append([rng.randrange(len(ratings)) for _ in ratings])
        starts.append(torch.randn(mean.shape[0], generator=generator) * init_std)
    # Each head on its own bootstrap, all heads fitted as one (K, hidden) matrix.
    margins = (chosen - rejected)[torch.tensor(pair_picks, dtype=torch.long)]  # (K, N, hidden)
    picked = torch.tensor(rated_picks, dtype=torch.long)
    weights, biases, _ = fit_linear(
        torch.stack(starts), margins, rated[picked] - mean, targets[picked], settings
    )
    return UncertaintyHeads(weights, biases - weights @ mean)  # the centring, in the bias


def fit_linear(
    start: torch.Tensor,
    margins: torch.Tensor,
    rated: torch.Tensor,
    targets: torch.Tensor,
    settings: HeadSettings,
    *,
    pair_weights: torch.Tensor | None = None,
    rated_weights: torch.Tensor | None = None,
    bias: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """K linear heads at once, each pulled toward its start: `start` (K, hidden), the pairs'
    feature differences (K, N, hidden) and the rated features (K, M, hidden) with their targets
    (K, M), each head's own data. The loss is the sum of the heads' losses, so no head's gradient
    depends on another's, and Adam updates each element alone: the same fit as K separate ones.
    Optional per-item loss weights, (N,) and (M,); without `bias` the rating regression reads
    the score as it is. The heads, their biases (zeros without `bias`) and the last loss."""
    weight = start.clone().requires_grad_(True)
    offset = torch.zeros(start.shape[0], requires_grad=bias)
    optimizer = torch.optim.Adam([weight, offset] if bias else [weight], lr=settings.learning_rate)
    loss = torch.zeros(())
    for _ in range(settings.steps):
        loss = settings.anchor * (weight - start).pow(2).sum()
        if margins.shape[1]:
            pair_losses = -F.logsigmoid(torch.einsum("knh,kh->kn", margins, weight))
            if pair_weights is not None:
                pair_losses = pair_weights * pair_losses
            loss = loss + pair_losses.mean(1).sum()
        if rated.shape[1]:
            predicted = torch.einsum("kmh,kh->km", rated, weight) + offset.unsqueeze(1)
            squared = (predicted - targets).pow(2)
            if rated_weights is not None:
                squared = rated_weights * squared
            loss = loss + settings.rating_weight * squared.mean(1).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return weight.detach(), offset.detach(), float(loss.item())
