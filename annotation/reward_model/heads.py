"""Fit a reward model's uncertainty heads (rl.rewards.uncertainty) after the model is trained.

The backbone is frozen: each training text is encoded once into the pooled feature the score
head reads, and K linear heads are fitted on those features, each on its own bootstrap of the
pairs and ratings, with the same losses as the model (Bradley-Terry, rating regression). Each head
starts from its own random weights and is pulled back toward them ("anchored" ensembles), so
in feature directions the data never constrained the heads keep disagreeing: that disagreement
is the uncertainty. Features are centred on the training mean first (folded into the bias), so a
component every text shares, which pairs cannot pin down, adds no spread.

Cost: one no-grad forward over the training texts, then a few hundred full-batch steps on a
(K, hidden) matrix: well under a second for the tiny model.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from annotation.reward_model.data import RMData
from rl.rewards.model import RewardModel
from rl.rewards.uncertainty import UncertaintyHeads, pooled_features


@dataclass(frozen=True)
class HeadSettings:
    count: int = 5
    steps: int = 300
    learning_rate: float = 0.05
    anchor: float = 1e-3  # weight of ||w - w_start||^2: the pull toward each head's prior
    prior_scale: float = 0.5  # std of a fresh head's score on a typical feature, reward units
    rating_weight: float = 0.5
    seed: int = 0


@torch.no_grad()
def pooled(scorer: RewardModel, prompts: list[str], responses: list[str]) -> torch.Tensor:
    """(N, hidden): the score head's input for each text, encoded as the reward model scores it."""
    assert scorer.model is not None
    hidden = scorer.model.config.get_text_config().hidden_size
    if not prompts:  # e.g. ratings without a single pair: the tokenizer refuses an empty batch
        return torch.zeros((0, hidden))
    rows = scorer.encode(prompts, responses)
    parts: list[torch.Tensor] = []
    with pooled_features(scorer.model, scorer.pad_id) as captured:
        for start in range(0, len(rows), scorer.batch_size):
            scorer.model(**scorer.pad(rows[start : start + scorer.batch_size]))
            parts.append(captured.pop().float().cpu())
    return torch.cat(parts)


def fit_heads(scorer: RewardModel, data: RMData, settings: HeadSettings) -> UncertaintyHeads:
    pairs = data.pairs
    ratings = data.ratings if settings.rating_weight > 0 else []
    chosen = pooled(scorer, [p.prompt for p in pairs], [p.chosen for p in pairs])
    rejected = pooled(scorer, [p.prompt for p in pairs], [p.rejected for p in pairs])
    rated = pooled(scorer, [r.prompt for r in ratings], [r.response for r in ratings])
    targets = torch.tensor([(r.rating - 3) / 2 for r in ratings], dtype=torch.float32)
    every = torch.cat([chosen, rejected, rated])
    mean = every.mean(0) if len(every) else torch.zeros(chosen.shape[1])
    # A fresh head scores a typical (centred) feature with std ~prior_scale.
    typical = (every - mean).norm(dim=1).mean().item() if len(every) else 1.0
    init_std = settings.prior_scale / max(typical, 1e-6)
    generator = torch.Generator().manual_seed(settings.seed)
    weights, biases = [], []
    for head in range(settings.count):
        rng = random.Random(settings.seed * 1009 + head)
        pair_pick = [rng.randrange(len(pairs)) for _ in pairs]
        rated_pick = [rng.randrange(len(ratings)) for _ in ratings]
        start = torch.randn(mean.shape[0], generator=generator) * init_std
        weight, bias = _fit_one(
            start,
            chosen[pair_pick] - mean,
            rejected[pair_pick] - mean,
            rated[rated_pick] - mean,
            targets[rated_pick],
            settings,
        )
        weights.append(weight)
        biases.append(bias - weight @ mean)  # the centring, folded into the bias
    return UncertaintyHeads(torch.stack(weights), torch.stack(biases))


def _fit_one(
    start: torch.Tensor,
    chosen: torch.Tensor,
    rejected: torch.Tensor,
    rated: torch.Tensor,
    targets: torch.Tensor,
    settings: HeadSettings,
) -> tuple[torch.Tensor, torch.Tensor]:
    weight = start.clone().requires_grad_(True)
    bias = torch.zeros((), requires_grad=True)
    optimizer = torch.optim.Adam([weight, bias], lr=settings.learning_rate)
    for _ in range(settings.steps):
        loss = settings.anchor * (weight - start).pow(2).sum()
        if len(chosen):
            loss = loss - F.logsigmoid((chosen - rejected) @ weight).mean()
        if len(rated):
            loss = loss + settings.rating_weight * F.mse_loss(rated @ weight + bias, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return weight.detach(), bias.detach()
