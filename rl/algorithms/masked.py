"""Reductions over the response tokens of a padded (B, T) batch.

`mask` is bool or float, 1 on response tokens (up to and including EOS), 0 on padding. A float
mask acts as per-token weights. Values under a zero mask never reach the result, even when they
are NaN or inf (e.g. log-probs of padding), because they are selected out with `torch.where`
rather than multiplied by 0 (NaN * 0 is NaN).
"""

from __future__ import annotations

import torch
from torch import Tensor

Dim = int | tuple[int, ...] | None

WHITEN_EPS = 1e-8


def _weights(mask: Tensor, like: Tensor) -> Tensor:
    return mask.to(dtype=like.dtype, device=like.device)


def masked_sum(x: Tensor, mask: Tensor, dim: Dim = None) -> Tensor:
    """sum(x * mask) over `dim` (all entries when None); padding values are never read."""
    weights = _weights(mask, x)
    weighted = torch.where(weights != 0, x * weights, torch.zeros_like(x))
    return weighted.sum() if dim is None else weighted.sum(dim=dim)


def masked_mean(x: Tensor, mask: Tensor, dim: Dim = None) -> Tensor:
    """sum(x * mask) / sum(mask); 0 (not NaN) where the mask sums to 0."""
    total = masked_sum(x, mask, dim)
    count = masked_sum(torch.ones_like(x), mask, dim)
    # The numerator is exactly 0 where the count is 0, so any positive floor gives 0 there.
    return total / count.clamp_min(torch.finfo(count.dtype).tiny)


def masked_var(x: Tensor, mask: Tensor, unbiased: bool = True) -> Tensor:
    """Variance of the masked entries of x (all of them together, a scalar).

    unbiased=True applies Bessel's correction n / (n - 1), n = sum(mask). With n <= 1 that is
    undefined; the biased value is returned instead (0 for a single entry, 0 for none), never NaN.
    """
    mean = masked_mean(x, mask)
    variance = masked_mean((x - mean) ** 2, mask)
    if not unbiased:
        return variance
    count = masked_sum(torch.ones_like(x), mask)
    correction = torch.where(count > 1, count / (count - 1).clamp_min(1.0), torch.ones_like(count))
    return variance * correction


def masked_whiten(x: Tensor, mask: Tensor, shift_mean: bool = True) -> Tensor:
    """(x - mean) / sqrt(var + 1e-8) with mean and (unbiased) var over the masked entries.

    shift_mean=False adds the mean back (only rescales), as TRL's masked_whiten does for PPO
    advantages. Padding positions are set to 0 so they cannot leak into later sums.
    """
    mean = masked_mean(x, mask)
    variance = masked_var(x, mask, unbiased=True)
    whitened = (x - mean) * torch.rsqrt(variance + WHITEN_EPS)
    if not shift_mean:
        whitened = whitened + mean
    return torch.where(_weights(mask, x) != 0, whitened, torch.zeros_like(whitened))
