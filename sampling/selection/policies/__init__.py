"""Selection policies: which samples of a batch go to human review. Pure functions of the values.

Each policy takes the batch's values (the reward, or one reward component: `component_values`)
and returns a `Selected`. NaN and infinite values are never selected and never enter a statistic
(mean, std, quantile): a broken reward is a bug to count, not a low reward to review.

One module per policy, each registering itself by name (`registry.py`); a policy of your own
registers with `register_policy` or is named in a config by the dotted path of its function.
"""

from __future__ import annotations

from collections.abc import Sequence

from sampling.selection.policies.group_relative_policy import group_relative
from sampling.selection.policies.quantile_policy import quantile
from sampling.selection.policies.registry import (
    BUDGET,
    Policy,
    PolicyError,
    PolicySettings,
    check_policy_name,
    policy_for,
    policy_names,
    register_policy,
)
from sampling.selection.policies.selected import Selected
from sampling.selection.policies.threshold_policy import threshold
from sampling.selection.policies.values import bottom_count, component_values, mean_and_std
from sampling.selection.policies.zscore_policy import zscore

__all__ = [
    "BUDGET",
    "Policy",
    "PolicyError",
    "PolicySettings",
    "Selected",
    "bottom_count",
    "check_policy_name",
    "component_values",
    "group_relative",
    "mean_and_std",
    "policy_for",
    "policy_names",
    "quantile",
    "register_policy",
    "select",
    "threshold",
    "zscore",
]


def select(config: PolicySettings, values: Sequence[float], group_ids: Sequence[int]) -> Selected:
    """The configured policy on one batch: threshold uses `threshold`, quantile `quantile`,
    group_relative and zscore `group_k`; a policy of your own reads what it needs of `config`."""
    return policy_for(config.policy)(config, values, group_ids)
