"""Budget shares: how the `budget` policy splits its reviews. One module per share, each
registering itself (`registry.py`); a share of your own registers with `register_share`, or is
named by the dotted path of its picker, and gets its part in `sampling.budget.shares`."""

from sampling.selection.shares import (  # registers
    audit_share,
    model_extra_shares,
    random_share,
    uncertain_share,
)
from sampling.selection.shares.base import (
    Candidate,
    Flag,
    Group,
    Picker,
    Pool,
    Share,
    ShareSettings,
    Take,
    spread,
)
from sampling.selection.shares.registry import (
    LOW_REWARD,
    ShareError,
    check_share_name,
    register_share,
    share_names,
    shares_for,
)

__all__ = [
    "LOW_REWARD",
    "Candidate",
    "Flag",
    "Group",
    "Picker",
    "Pool",
    "Share",
    "ShareError",
    "ShareSettings",
    "Take",
    "audit_share",
    "check_share_name",
    "model_extra_shares",
    "random_share",
    "register_share",
    "share_names",
    "shares_for",
    "spread",
    "uncertain_share",
]
