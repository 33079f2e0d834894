"""Advantage estimators: GRPO group-relative (sequence level) and GAE (token level) for PPO."""

from __future__ import annotations

import torch
from torch import Tensor


def grpo_advantages(
    rewards: Tensor,
    group_ids: Tensor,
    valid: Tensor,
    *,
    scale_by_std: bool = True,
    eps: float = 1e-6,
) -> Tensor:
    """Group-relative advantages (DeepSeekMath, Shao et al. 2024, §4.1.2 outcome supervision).

    A_i = (r_i - mean(r_group)) / (std(r_group) + eps), or r_i - mean(r_group) without scaling
    (Dr. GRPO, Liu et al. 2025). Mean and std are over the *valid* samples of the group only.

    std is the Bessel-corrected std (divide by n - 1), as TRL's GRPOTrainer and verl compute it
    (torch's default), so that advantages match theirs for the same rewards. The paper writes
    std(r) without saying which.

    rewards (N,), group_ids (N,) any integer labels, valid (N,) bool. Non-finite rewards are
    treated as invalid too. Invalid samples get 0 and do not move their group's statistics; a
    group with fewer than two valid samples, or whose valid rewards are all equal, gets 0.
    Returns (N,) float32, detached (advantages are constants of the policy-gradient loss).
    """
    rewards = rewards.detach().to(torch.float32)
    valid = valid.to(torch.bool) & torch.isfinite(rewards)
    labels, group = torch.unique(group_ids, return_inverse=True)  # dense 0..G-1 per sample
    num_groups = labels.numel()

    def per_group_sum(values: Tensor) -> Tensor:
        return torch.zeros(num_groups, dtype=values.dtype, device=values.device).index_add_(
            0, group, values
        )

    zeros = torch.zeros_like(rewards)
    count = per_group_sum(valid.to(torch.float32))
    # Shift each group by one of its own valid rewards (its max) before averaging: the statistics
    # are shift-invariant, and an all-equal group then centres to exactly 0, not rounding noise.
    shift = torch.full((num_groups,), -torch.inf, device=rewards.device).scatter_reduce(
        0, group, torch.where(valid, rewards, -torch.inf), reduce="amax", include_self=True
    )
    shift = torch.where(torch.isfinite(shift), shift, 0.0)
    shifted = torch.where(valid, rewards - shift[group], zeros)
    mean = per_group_sum(shifted) / count.clamp_min(1.0)
    centred = torch.where(valid, shifted - mean[group], zeros)
    advantages = centred
    if scale_by_std:
        variance = per_group_sum(centred**2) / (count - 1.0).clamp_min(1.0)
        advantages = centred / (variance.sqrt()[group] + eps)
    keep = valid & (count[group] >= 2)
    return torch.where(keep, advantages, zeros)


def gae_advantages(
    token_rewards: Tensor,
    values: Tensor,
    mask: Tensor,
    *,
    gamma: float,
    lam: float,
) -> tuple[Tensor, Tensor]:
    """Generalised advantage estimation (Schulman et al. 2016, "High-Dimensional Continuous
    Control Using GAE"): delta_t = r_t + gamma V_{t+1} - V_t, A_t = delta_t + gamma lam A_{t+1}.

    (B, T) inputs with left-aligned responses: each row's tokens are a contiguous run from column
    0 and the padding follows, so "t + 1 is masked out" means the episode ended at t (EOS or
    truncation) and V_{t+1} = A_{t+1} = 0 there. Returns (advantages, returns), returns =
    advantages + values (the value-function targets), both 0 on padding and detached.
    """
    valid = mask.to(torch.bool)
    zeros = torch.zeros_like(token_rewards, dtype=torch.float32)
    rewards = torch.where(valid, token_rewards.detach().float(), zeros)
    values = torch.where(valid, values.detach().float(), zeros)
    continues = torch.zeros_like(zeros)
    continues[:, :-1] = valid[:, 1:].float()  # 1 where the next position is still the response
    next_values = torch.zeros_like(zeros)
    next_values[:, :-1] = values[:, 1:]
    deltas = rewards + gamma * continues * next_values - values  # TD residuals, all t at once

    advantages = torch.zeros_like(zeros)
    running = torch.zeros_like(zeros[:, 0])
    # The recursion runs backward in time, vectorised over the batch.
    for t in reversed(range(deltas.shape[1])):
        running = deltas[:, t] + gamma * lam * continues[:, t] * running
        advantages[:, t] = running
    advantages = torch.where(valid, advantages, zeros)
    returns = torch.where(valid, advantages + values, zeros)
    return advantages, returns


def token_rewards_from_sequence(
    seq_rewards: Tensor,
    mask: Tensor,
    kl_per_token: Tensor | None = None,
    kl_coef: float = 0.0,
) -> Tensor:
    """Per-token rewards for PPO with the KL penalty in the reward (Ziegler et al. 2019,
    Ouyang et al. 2022): r_t = -kl_coef * KL_t on response tokens, plus the sequence reward at
    the last response token of each row.

    seq_rewards (B,), mask (B, T), kl_per_token (B, T) or None. A row with no response token gets
    no reward (there is nowhere to put it). Rows with a non-finite reward must be masked out by
    the caller. Returns (B, T) float32, 0 on padding, detached.
    """
    valid = mask.to(torch.bool)
    rewards = torch.zeros(valid.shape, dtype=torch.float32, device=valid.device)
    if kl_per_token is not None and kl_coef != 0.0:
        rewards = torch.where(valid, -kl_coef * kl_per_token.detach().float(), rewards)
    positions = torch.arange(valid.shape[1], device=valid.device).expand_as(valid)
    last = torch.where(valid, positions, -1).amax(dim=1)  # last valid column, -1 if none
    has_response = last >= 0
    rows = torch.arange(valid.shape[0], device=valid.device)[has_response]
    rewards[rows, last[has_response]] += seq_rewards.detach().float()[has_response]
    return rewards
