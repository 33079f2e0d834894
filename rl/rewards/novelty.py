"""How far a response lies, in the reward model's feature space, from everything reviewers
already judged: the novelty the budget policy's `novel` share spends reviews on.

A reward model knows what its reviews showed it; a response unlike any of them is one it has
no evidence about, whatever it scores. `rm train` keeps the pooled features (the score head's
input, rl.rewards.uncertainty.pooled_features) of its distinct training texts, and a run's
`reward_model` reward reports per sample the extra `novelty` (reward_details `<name>/novelty`,
never part of the total): the Euclidean distance to the nearest kept row over `scale`, the
median distance from a kept row to its nearest other kept row. So about 1 is "as far as the
reviewed texts are from each other", and well above 1 is a region no review covered.

At most `limit` rows are kept, a seeded uniform subsample (not k-means centres): kept rows are
real reviewed texts, so a reviewed text that was dropped is about as far from its nearest kept
row as the kept ones are from each other, and `scale` means the same for both; centres, being
means, sit closer to their members than to each other and would read every reviewed text as
less than 1 and bend the scale. The subsample keeps the reviews' density too: a kind reviewed
often keeps many rows.

File: `lowtide_reviewed_features.safetensors` in the model directory, tensor `rows` (M, hidden)
and the scale in its metadata. A directory without it reports no novelty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from rl.rewards.model_files import load_beside, save_beside
from rl.rewards.model_spec import NOVELTY as NOVELTY  # the ComponentScores extra's name

REVIEWED_FILE = "lowtide_reviewed_features.safetensors"
CHUNK_ROWS = 1024  # distances are taken this many query rows at a time (memory: chunk x M)
# |a|^2 + |b|^2 - 2ab in float64: a matrix product (one GEMM a chunk, on the reward step's path)
# that keeps small distances between the large-norm pooled features of a decoder, where
# float32 would round them away; the exact pairwise differences cost 50x more at hidden 4096.


@dataclass(frozen=True)
class ReviewedFeatures:
    rows: torch.Tensor  # (M, hidden): pooled features of reviewed texts
    scale: float  # median nearest-neighbour distance among `rows`

    def __post_init__(self) -> None:
        if self.rows.ndim != 2 or not len(self.rows):
            shape = tuple(self.rows.shape)
            raise ValueError(f"reviewed features: need (M >= 1, hidden) rows, got {shape}")
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"reviewed features: scale must be finite and > 0, got {self.scale}")

    @classmethod
    def of(cls, features: torch.Tensor, limit: int = 512, seed: int = 0) -> ReviewedFeatures:
        """At most `limit` of `features`' rows (a seeded uniform subsample when there are more)
        and their scale. A single row, or rows all alike, have no neighbour distance to read:
        the scale is then the rows' mean norm (1 if that is 0 too)."""
        if limit < 1:
            raise ValueError(f"reviewed features: limit must be >= 1, got {limit}")
        rows = features.detach().float().cpu()
        if len(rows) > limit:
            generator = torch.Generator().manual_seed(seed)
            rows = rows[torch.randperm(len(rows), generator=generator)[:limit].sort().values]
        return cls(rows.contiguous(), _scale(rows))

    def distances(self, features: torch.Tensor) -> torch.Tensor:
        """(N,): each row's Euclidean distance to its nearest reviewed row."""
        rows = self.rows.to(features.device)
        found = [
            _distances(part, rows).min(dim=1).values.float() for part in features.split(CHUNK_ROWS)
        ]
        return torch.cat(found) if found else features.new_zeros(0, dtype=torch.float32)

    def novelty(self, features: torch.Tensor) -> torch.Tensor:
        """(N,): distance to the nearest reviewed row over `scale` (about 1: as far as
        reviewed texts are from each other)."""
        return self.distances(features) / self.scale

    def save(self, directory: str | Path) -> Path:
        return save_beside(directory, REVIEWED_FILE, {"rows": self.rows},
                           {"scale": repr(self.scale)})  # fmt: skip


def load_reviewed(directory: str | Path) -> ReviewedFeatures | None:
    """The reviewed features saved beside a model, or None when it has none."""
    found = load_beside(directory, REVIEWED_FILE)
    if found is None:
        return None
    tensors, metadata = found
    return ReviewedFeatures(tensors["rows"], float(metadata.get("scale", "nan")))


def _distances(queries: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """(Q, M) Euclidean distances, in float64 (see the comment above)."""
    queries, rows = queries.double(), rows.double()
    squared = (
        queries.pow(2).sum(dim=1, keepdim=True) + rows.pow(2).sum(dim=1) - 2 * queries @ rows.T
    )
    return squared.clamp_min(0).sqrt()


def _scale(rows: torch.Tensor) -> float:
    if len(rows) >= 2:
        distances = _distances(rows, rows)
        distances.fill_diagonal_(math.inf)
        nearest = distances.min(dim=1).values
        median = float(nearest.median())
        if median > 0:
            return median
    norm = float(rows.norm(dim=1).mean())
    return norm if norm > 0 else 1.0
