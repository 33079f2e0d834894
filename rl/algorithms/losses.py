"""PPO-style losses on per-token log-probs, and the log-prob/entropy reductions of logits."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from rl.algorithms.masked import masked_mean

# Bound on |logp - old_logp| before exp (as verl does): exp(20) is finite in float32, and a token
# that far off-policy is either clipped (no gradient) or dominated by its advantage anyway.
LOG_RATIO_BOUND = 20.0
# Elements of float32 logits handled at once by the logits reductions (~256 MiB per chunk).
LOGITS_CHUNK_ELEMENTS = 1 << 26


@dataclass
class PolicyLossOutput:
    loss: Tensor  # scalar, differentiable w.r.t. logp
    clip_fraction: Tensor  # share of response tokens where the clipped branch was taken
    approx_kl: Tensor  # mean of (logp - old_logp)^2 / 2 (Schulman's k2), detached
    ratio_mean: Tensor  # mean of pi / pi_old over response tokens, detached


@dataclass
class ValueLossOutput:
    loss: Tensor  # scalar, differentiable w.r.t. values
    clip_fraction: Tensor  # share of response tokens where the clipped value had the larger loss


def _per_token(advantages: Tensor, like: Tensor) -> Tensor:
    if advantages.dim() == like.dim():
        return advantages
    if advantages.dim() == like.dim() - 1:
        return advantages.unsqueeze(-1)  # one advantage per sequence, the same for its tokens
    raise ValueError(
        f"advantages must be (B, T) or (B,), got {tuple(advantages.shape)} for {tuple(like.shape)}"
    )


def clipped_policy_loss(
    logp: Tensor,
    old_logp: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_range: float,
) -> PolicyLossOutput:
    """PPO clipped surrogate (Schulman et al. 2017, eq. 7), as a loss to minimise:

        ratio = exp(logp - old_logp)
        loss  = mean_t max(-A_t ratio_t, -A_t clip(ratio_t, 1 - eps, 1 + eps))

    logp/old_logp/mask (B, T); advantages (B, T) per token (PPO + GAE) or (B,) per sequence
    (GRPO), broadcast over the tokens.

    The mean is token-level over all response tokens of the batch (DAPO, Yu et al. 2025): each
    token weighs the same, so long responses are not down-weighted. The original GRPO averages
    per sequence first, then over sequences, which gives each token of a long response less
    weight. Padding never reaches the loss or its gradient, even if its log-probs are inf/NaN.
    """
    valid = mask.to(torch.bool)
    log_ratio = torch.where(valid, logp - old_logp, torch.zeros_like(logp))
    ratio = torch.exp(log_ratio.clamp(-LOG_RATIO_BOUND, LOG_RATIO_BOUND))
    advantages = _per_token(advantages, logp).to(logp.dtype)
    unclipped_loss = -advantages * ratio
    clipped_loss = -advantages * ratio.clamp(1.0 - clip_range, 1.0 + clip_range)
    loss = masked_mean(torch.maximum(unclipped_loss, clipped_loss), valid)
    with torch.no_grad():
        clip_fraction = masked_mean((clipped_loss > unclipped_loss).float(), valid)
        approx_kl = masked_mean(0.5 * log_ratio**2, valid)
        ratio_mean = masked_mean(ratio, valid)
    return PolicyLossOutput(loss, clip_fraction, approx_kl, ratio_mean)


def clipped_value_loss(
    values: Tensor,
    old_values: Tensor,
    returns: Tensor,
    mask: Tensor,
    *,
    clip_range: float,
) -> ValueLossOutput:
    """Clipped value loss (as in OpenAI baselines' PPO2 and TRL's PPO):

        v_clip = old + clip(v - old, -eps, eps)
        loss   = 0.5 * mean_t max((v - R)^2, (v_clip - R)^2)

    All (B, T); token-level mean over response tokens like the policy loss.
    """
    valid = mask.to(torch.bool)
    # Select padding out before squaring: an inf there would otherwise turn 0 * inf into NaN
    # gradients.
    values, old_values, returns = (
        torch.where(valid, tensor, torch.zeros_like(tensor))
        for tensor in (values, old_values, returns)
    )
    clipped_values = old_values + (values - old_values).clamp(-clip_range, clip_range)
    unclipped_loss = (values - returns) ** 2
    clipped_loss = (clipped_values - returns) ** 2
    loss = 0.5 * masked_mean(torch.maximum(unclipped_loss, clipped_loss), valid)
    with torch.no_grad():
        clip_fraction = masked_mean((clipped_loss > unclipped_loss).float(), valid)
    return ValueLossOutput(loss, clip_fraction)


def _rows_per_chunk(vocab_size: int) -> int:
    return max(1, LOGITS_CHUNK_ELEMENTS // max(1, vocab_size))


def _compute_dtype(logits: Tensor) -> torch.dtype:
    return torch.promote_types(logits.dtype, torch.float32)  # bf16/fp16 -> float32


def entropy_from_logits(logits: Tensor) -> Tensor:
    """Entropy -sum_v p_v log p_v of softmax(logits) over the last dim: (..., V) -> (...).

    log p comes from log_softmax (logsumexp-stable); vocab entries at -inf (p = 0) contribute 0
    with finite gradients. Computed in float32 chunks of rows so a bf16 (B, T, V) tensor is never
    copied whole to float32.
    """
    flat = logits.reshape(-1, logits.shape[-1])
    rows = _rows_per_chunk(flat.shape[-1])
    parts = []
    for chunk in flat.split(rows):
        log_p = torch.log_softmax(chunk.to(_compute_dtype(logits)), dim=-1)
        finite_log_p = torch.where(torch.isfinite(log_p), log_p, torch.zeros_like(log_p))
        parts.append(-(log_p.exp() * finite_log_p).sum(dim=-1))
    return torch.cat(parts).reshape(logits.shape[:-1])


def logprobs_from_logits(logits: Tensor, tokens: Tensor) -> Tensor:
    """log softmax(logits)[token] per position: (..., V), (...) int -> (...) float32.

    Computed as logits[token] - logsumexp(logits), so the (..., V) log_softmax is never
    materialised; bf16/fp16 logits are upcast to float32 one chunk of rows at a time.
    """
    flat = logits.reshape(-1, logits.shape[-1])
    flat_tokens = tokens.reshape(-1, 1).to(torch.long)
    rows = _rows_per_chunk(flat.shape[-1])
    parts = []
    for chunk, chunk_tokens in zip(flat.split(rows), flat_tokens.split(rows), strict=True):
        chunk = chunk.to(_compute_dtype(logits))
        picked = chunk.gather(-1, chunk_tokens).squeeze(-1)
        parts.append(picked - torch.logsumexp(chunk, dim=-1))
    return torch.cat(parts).reshape(tokens.shape)
