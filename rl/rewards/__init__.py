"""Rewards: built-in rules, a reward model, or any Python function, combined by weight.

    rewards = RewardSet.from_specs(config.rewards, device="cpu")
    result = rewards.score(RewardBatch(prompts, responses, truncated))
    result.total, result.details, result.nonfinite_count

See `registry` for how a `RewardSpec.type` resolves, `function` for what a reward function may
return, and `types` for the batch and score types every reward shares.
"""

from rl.rewards.combine import RewardResult, RewardSet, check_reward_specs
from rl.rewards.registry import reward_types
from rl.rewards.types import RewardBatch, RewardError, batched

__all__ = [
    "RewardBatch",
    "RewardError",
    "RewardResult",
    "RewardSet",
    "batched",
    "check_reward_specs",
    "reward_types",
]
