"""The maths of the RL update: pure torch functions on per-token tensors, no model code."""

from rl.algorithms.advantages import gae_advantages, grpo_advantages, token_rewards_from_sequence
from rl.algorithms.kl import KLEstimator, kl_per_token
from rl.algorithms.losses import (
    PolicyLossOutput,
    ValueLossOutput,
    clipped_policy_loss,
    clipped_value_loss,
    entropy_from_logits,
    logprobs_from_logits,
)
from rl.algorithms.masked import masked_mean, masked_sum, masked_var, masked_whiten

__all__ = [
    "KLEstimator",
    "PolicyLossOutput",
    "ValueLossOutput",
    "clipped_policy_loss",
    "clipped_value_loss",
    "entropy_from_logits",
    "gae_advantages",
    "grpo_advantages",
    "kl_per_token",
    "logprobs_from_logits",
    "masked_mean",
    "masked_sum",
    "masked_var",
    "masked_whiten",
    "token_rewards_from_sequence",
]
