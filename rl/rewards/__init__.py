"""Rewards: built-in rules, a reward model, or any Python function, combined by weight.

    rewards = RewardSet.from_specs(config.rewards, device="cpu")
    result = rewards.score(RewardBatch(prompts, responses, truncated))
    result.total, result.details, result.nonfinite_count

See `registry` for how a `RewardSpec.type` resolves and what a reward function may return.
"""

from rl.rewards.combine import RewardResult, RewardSet
from rl.rewards.registry import RewardBatch, RewardError, batched, reward_types

__all__ = ["RewardBatch", "RewardError", "RewardResult", "RewardSet", "batched", "reward_types"]
