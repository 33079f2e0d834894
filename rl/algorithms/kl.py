"""Per-token estimators of KL(pi || ref) from sampled tokens' log-probs.

J. Schulman, "Approximating KL Divergence" (2020), with x ~ pi and r = ref(x) / pi(x):
  k1 = -log r                 unbiased, high variance, can be negative per token
  k2 = (log r)^2 / 2          biased, low variance, >= 0
  k3 = (r - 1) - log r        unbiased, low variance, >= 0 (the GRPO loss term, DeepSeekMath)
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

KLEstimator = Literal["k1", "k2", "k3"]

# exp(20) ~ 4.9e8 is finite in float32 (overflow is at ~88); beyond that a token is so far
# off-reference that the exact size no longer matters, and the clamp stops inf/NaN gradients.
K3_LOG_RATIO_BOUND = 20.0


def kl_per_token(logp: Tensor, ref_logp: Tensor, estimator: KLEstimator) -> Tensor:
    """KL(pi || ref) estimate per token; logp = log pi(x_t), ref_logp = log ref(x_t), same shape.

    k3 clamps log r to [-20, 20] (no gradient through clamped tokens) and is clamped at 0 to
    absorb rounding; it uses expm1 so that tiny ratios do not cancel to negative noise.
    """
    log_ratio = logp - ref_logp  # log pi/ref = -log r
    if estimator == "k1":
        return log_ratio
    if estimator == "k2":
        return 0.5 * log_ratio**2
    if estimator == "k3":
        log_r = (-log_ratio).clamp(-K3_LOG_RATIO_BOUND, K3_LOG_RATIO_BOUND)
        return (torch.expm1(log_r) - log_r).clamp_min(0.0)
    raise ValueError(f"unknown KL estimator {estimator!r}: expected 'k1', 'k2' or 'k3'")
