"""Fit the failure probe (rl.rewards.failure_probe) on the reward model's frozen features of the
reviewed texts and the failure categories their reviewers ticked.

One logistic head per category that some review ticked and some review did not: a category
every row has, or none has, separates nothing. The rows that do not tick a category are its
negatives. All heads are fitted at once, one (C, hidden) matrix, full batch (as the uncertainty
heads are, annotation.reward_model.heads), on features centred and scaled per dimension (a
decoder's pooled features have a few huge dimensions that would otherwise take every step); the
centring and scaling are folded into the saved weight and bias, so the probe reads raw features.
Each head's loss is class-balanced (positives and negatives weigh half each): a category ticked
on 3 of 200 reviews still has to be found, not predicted absent everywhere. An L2 pull on the
weights keeps the heads finite where a few rows in a wide feature space separate perfectly.

Cost: a few hundred full-batch steps on one (C, hidden) matrix, well under a second for the
tiny model; the features come from the forward `rm train` already makes for the heads.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from rl.rewards.failure_probe import FailureProbe

LEARNING_RATE = 0.05
START_STD = 0.01  # the heads' seeded random start, on standardized features


def qualifying_categories(categories: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The categories ticked on at least one row and missing from at least one, sorted."""
    ticked = [{name.strip() for name in row if name.strip()} for row in categories]
    seen = sorted(set().union(*ticked)) if ticked else []
    return tuple(name for name in seen if any(name not in row for row in ticked))


def fit_failure_probe(
    features: torch.Tensor,
    categories: Sequence[Sequence[str]],
    *,
    steps: int = 300,
    l2: float = 1e-2,
    seed: int = 0,
) -> FailureProbe | None:
    """A probe of one head per qualifying category (module docstring) on `features` (N, hidden),
    row i's review having ticked `categories[i]`; None when no category qualifies."""
    if len(categories) != len(features):
        raise ValueError(
            f"failure probe: {len(features)} feature rows but {len(categories)} category lists"
        )
    names = qualifying_categories(categories)
    if not names:
        return None
    rows = features.detach().float().cpu()
    ticked = [{name.strip() for name in row} for row in categories]
    labels = torch.tensor([[float(name in row) for row in ticked] for name in names])  # (C, N)
    positives = labels.sum(1, keepdim=True)
    # Half the weight to each side of every head, averaged over the rows.
    weights = torch.where(labels > 0, 0.5 / positives, 0.5 / (len(rows) - positives))
    mean, std = rows.mean(0), rows.std(0, unbiased=False).clamp_min(1e-6)
    standard = (rows - mean) / std
    generator = torch.Generator().manual_seed(seed)
    start = torch.randn(len(names), rows.shape[1], generator=generator) * START_STD
    weight = start.requires_grad_(True)
    bias = torch.zeros(len(names), requires_grad=True)
    optimizer = torch.optim.Adam([weight, bias], lr=LEARNING_RATE)
    for _ in range(steps):
        logits = weight @ standard.T + bias.unsqueeze(1)  # (C, N)
        losses = F.binary_cross_entropy_with_logits(logits, labels, reduction="none")
        loss = (weights * losses).sum() + l2 * weight.pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    fitted = weight.detach() / std  # w.((x - mean) / std) + b = (w / std).x + b - (w / std).mean
    return FailureProbe(fitted, bias.detach() - fitted @ mean, names)
