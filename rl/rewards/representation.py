"""How far a response's reward-model representation lies from the starting policy's responses:
a Mahalanobis outlier score, as in the InfoRM line of work (reward hacking shows as responses
whose representation leaves the region the reward model saw at the start).

The representation is the score head's input at the last real token (what the uncertainty
heads read, `rl.rewards.uncertainty.pooled_features`). The first `reference` samples a run
scores are the starting policy's responses: their mean and covariance (shrunk toward its
diagonal scale, so that a few hundred samples of a wide hidden state give an invertible matrix)
are the reference. Every later sample is reported as the extra `outlier`: its Mahalanobis
distance over the 90th percentile of the reference samples' own distances, so above 1 is
farther out than 90% of the starting responses. Samples scored while the reference fills get
no `outlier`.
"""

from __future__ import annotations

import torch

OUTLIER = "outlier"  # the ComponentScores extra's name
SHRINKAGE = 0.1  # share of the covariance replaced by its mean variance times the identity
REFERENCE_QUANTILE = 0.9


class OutlierScore:
    def __init__(self, reference: int) -> None:
        if reference < 2:
            raise ValueError("an outlier reference needs at least 2 samples")
        self.reference = reference
        self._collected: list[torch.Tensor] = []
        self._mean: torch.Tensor | None = None
        self._precision: torch.Tensor | None = None
        self._scale = 1.0

    @property
    def fitted(self) -> bool:
        return self._mean is not None

    def __call__(self, features: torch.Tensor) -> list[float | None]:
        """Per row of (N, hidden): its outlier ratio, or None while the reference fills."""
        features = features.detach().double().cpu()
        if self.fitted:
            return self._ratios(features).tolist()
        room = self.reference - sum(len(part) for part in self._collected)
        self._collected.append(features[:room])
        found: list[float | None] = [None] * min(room, len(features))
        if sum(len(part) for part in self._collected) >= self.reference:
            self._fit(torch.cat(self._collected))
            self._collected = []
            found += self._ratios(features[room:]).tolist()
        return found

    def _fit(self, reference: torch.Tensor) -> None:
        mean = reference.mean(dim=0)
        centred = reference - mean
        covariance = centred.T @ centred / max(1, len(reference) - 1)
        scale = float(covariance.diagonal().mean()) or 1.0
        identity = torch.eye(covariance.shape[0], dtype=covariance.dtype)
        shrunk = (1 - SHRINKAGE) * covariance + SHRINKAGE * scale * identity
        self._mean, self._precision = mean, torch.linalg.inv(shrunk)
        distances = self._distances(reference)
        self._scale = float(torch.quantile(distances, REFERENCE_QUANTILE)) or 1.0

    def _distances(self, features: torch.Tensor) -> torch.Tensor:
        assert self._mean is not None and self._precision is not None
        centred = features - self._mean
        squared = ((centred @ self._precision) * centred).sum(dim=1)
        return squared.clamp_min(0).sqrt()

    def _ratios(self, features: torch.Tensor) -> torch.Tensor:
        if not len(features):
            return torch.empty(0, dtype=torch.float64)
        return self._distances(features) / self._scale
