"""The reward model between batches: an ensemble of linear heads refit on frozen features.

What makes many seeds affordable. The starting reward model's backbone is frozen; every text
(pool, evaluation set, a reviewer's better answer) is encoded once into the score head's input.
After each batch of reviews, K heads are fitted on everything reviewed so far with the reward
model's own losses (Bradley-Terry on pairs, rating regression toward (rating - 3) / 2), each on
its own bootstrap of the reviews and pulled back toward its own start: the starting score head
plus a random draw (the objective of annotation.reward_model.heads.fit_linear, which `rm train`
fits its uncertainty heads with; the pull measured in the starting head's size, as
annotation/reward_model/head_refit.py measures it). The objective is convex, and here it is
solved to its optimum by Newton's method (`solve`: a dozen steps, milliseconds) rather than by
a few hundred Adam steps (a third of a second each refit, which 20 seeds cannot afford). The
ensemble's mean is the reward model a selection sees and is judged by; its spread is the
epistemic uncertainty (where the reviews never pinned a direction down, the heads keep their
own starts and disagree).

`bench/selection_value.py --check-retrain` checks the conclusions against `rm train` fine-tuning
every weight at three budget points.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from annotation.reward_model.data import Pair, Rated

Features = Callable[[Sequence[tuple[str, str]]], torch.Tensor]  # (prompt, response) -> (N, H)


@dataclass(frozen=True)
class EnsembleSettings:
    count: int = 5
    steps: int = 25  # Newton steps at most (it stops once a step changes the loss no more)
    # Weight of ||w - w_start||^2 / ||w_start||^2: chosen so that the refit learns from random
    # reviews about as fast as `rm train` does (--check-retrain on cool_and_short, 3 seeds:
    # random's final accuracy 0.760 here, 0.764 by rm train; 0.688 with 0.01, 0.586 with 1).
    anchor: float = 1e-3
    prior_scale: float = 0.5  # std of a fresh head's score shift on a typical feature
    rating_weight: float = 0.5
    # Loss weight of the pairs that prefer a reviewer's written better answer (rm train's
    # --written-weight; 0 leaves them out): see the bench's docstring for why it is 0 here.
    written_weight: float = 0.0


@dataclass(frozen=True)
class Ensemble:
    weight: torch.Tensor  # (K, hidden)
    centre: torch.Tensor | None = None  # (hidden,): the pool's mean feature

    def scores(self, features: torch.Tensor) -> torch.Tensor:
        """(N,): the ensemble's mean score."""
        return features @ self.weight.mean(0)

    def spread(self, features: torch.Tensor) -> torch.Tensor:
        """(N,): the heads' population std, on features centred on the pool's mean (as
        annotation.reward_model.heads centres them): a component every text shares, where the
        heads' draws differ by a constant, adds no spread."""
        centred = features if self.centre is None else features - self.centre
        return (centred @ self.weight.T).std(dim=1, unbiased=False)


def starting(head: torch.Tensor) -> Ensemble:
    """Before any review: the starting score head alone (no spread yet)."""
    return Ensemble(head.unsqueeze(0))


def refit(
    head: torch.Tensor,
    pairs: Sequence[Pair],
    ratings: Sequence[Rated],
    features: Features,
    settings: EnsembleSettings,
    seed: int,
    centre: torch.Tensor,
) -> Ensemble:
    """K heads on bootstraps of the reviews so far, each anchored at the starting head plus its
    own draw. `centre`: the pool's mean feature; the distance of a typical feature from it
    scales the draws."""
    if settings.written_weight == 0:
        pairs = [pair for pair in pairs if not pair.written]
    if not pairs and not ratings:
        return starting(head)
    texts = [(p.prompt, p.chosen) for p in pairs] + [(p.prompt, p.rejected) for p in pairs]
    encoded = features([*texts, *((r.prompt, r.response) for r in ratings)])
    margins = encoded[: len(pairs)] - encoded[len(pairs) : 2 * len(pairs)]
    rated = encoded[2 * len(pairs) :]
    targets = torch.tensor([(r.rating - 3) / 2 for r in ratings], dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed)
    draws = torch.randn(settings.count, head.shape[0], generator=generator)
    typical = float((encoded - centre).norm(dim=1).mean()) if len(encoded) else 1.0
    starts = head + draws * (settings.prior_scale / max(typical, 1e-6))
    rng = random.Random(seed)
    pair_picks = [[rng.randrange(len(pairs)) for _ in pairs] for _ in range(settings.count)]
    rated_picks = [[rng.randrange(len(ratings)) for _ in ratings] for _ in range(settings.count)]
    by_pair = torch.tensor(pair_picks, dtype=torch.long)  # (K, pairs), (K, 0) without any
    by_rating = torch.tensor(rated_picks, dtype=torch.long)
    anchor = settings.anchor / head.pow(2).sum().clamp_min(1e-12).item()
    written = torch.tensor([settings.written_weight if p.written else 1.0 for p in pairs])
    weight = solve(starts, margins[by_pair], rated[by_rating], targets[by_rating], anchor,
                   settings.rating_weight, settings.steps, written[by_pair])  # fmt: skip
    return Ensemble(weight.float(), centre)


def objective(
    weight: torch.Tensor, start: torch.Tensor, margins: torch.Tensor, rated: torch.Tensor,
    targets: torch.Tensor, anchor: float, rating_weight: float,
    pair_weights: torch.Tensor | None = None,
) -> torch.Tensor:  # fmt: skip
    """(K,): each head's loss, as fit_linear sums it (no bias); `pair_weights` (K, N)."""
    loss = anchor * (weight - start).pow(2).sum(1)
    if margins.shape[1]:
        pair_losses = -torch.nn.functional.logsigmoid(torch.einsum("knh,kh->kn", margins, weight))
        if pair_weights is not None:
            pair_losses = pair_weights * pair_losses
        loss = loss + pair_losses.mean(1)
    if rated.shape[1]:
        predicted = torch.einsum("kmh,kh->km", rated, weight)
        loss = loss + rating_weight * (predicted - targets).pow(2).mean(1)
    return loss


def solve(
    start: torch.Tensor, margins: torch.Tensor, rated: torch.Tensor, targets: torch.Tensor,
    anchor: float, rating_weight: float, steps: int, pair_weights: torch.Tensor | None = None,
) -> torch.Tensor:  # fmt: skip
    """Each head's minimum of `objective` by damped Newton steps, in float64."""
    start, margins, rated, targets = (t.double() for t in (start, margins, rated, targets))
    count, hidden = start.shape
    weights = (torch.ones(margins.shape[:2]) if pair_weights is None else pair_weights).double()

    def loss_at(point: torch.Tensor) -> torch.Tensor:
        return objective(point, start, margins, rated, targets, anchor, rating_weight, weights)

    weight = start.clone()
    eye = torch.eye(hidden, dtype=torch.float64)
    loss = loss_at(weight)
    for _ in range(steps):
        gradient = 2 * anchor * (weight - start)
        hessian = (2 * anchor * eye).expand(count, hidden, hidden).clone()
        if margins.shape[1]:
            p = torch.sigmoid(torch.einsum("knh,kh->kn", margins, weight))
            gradient -= torch.einsum("kn,knh->kh", weights * (1 - p), margins) / margins.shape[1]
            curvature = weights * p * (1 - p) / margins.shape[1]
            hessian += torch.einsum("kn,kni,knj->kij", curvature, margins, margins)
        if rated.shape[1]:
            residual = torch.einsum("kmh,kh->km", rated, weight) - targets
            scale = 2 * rating_weight / rated.shape[1]
            gradient += scale * torch.einsum("km,kmh->kh", residual, rated)
            hessian += scale * torch.einsum("kmi,kmj->kij", rated, rated)
        step = torch.linalg.solve(hessian, gradient.unsqueeze(-1)).squeeze(-1)
        size = torch.ones(count, 1, dtype=torch.float64)
        for _ in range(20):  # halve a head's step until its loss does not rise
            trial = weight - size * step
            new = loss_at(trial)
            worse = new > loss + 1e-12
            if not worse.any():
                break
            size[worse] /= 2
        moved = (loss - new).abs().max().item()
        weight, loss = torch.where(worse.unsqueeze(1), weight, trial), torch.minimum(loss, new)
        if moved < 1e-10:
            break
    return weight


def correct_by_prompt(
    scores: torch.Tensor, first: torch.Tensor, second: torch.Tensor, prompt_of: torch.Tensor,
    prompts: int,
) -> torch.Tensor:  # fmt: skip
    """(prompts,): per held-out prompt, the pairs the scores order as the oracle does (a tie
    counts 1/2): with the pairs' count per prompt, what a bootstrap over prompts reweighs."""
    difference = scores[first] - scores[second]
    right = (difference > 0).double() + 0.5 * (difference == 0).double()
    return torch.zeros(prompts, dtype=torch.float64).index_add_(0, prompt_of, right)
