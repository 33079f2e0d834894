"""Config sections owned by sampling: which rollouts are routed (`sampling`) and where (`queue`)."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    Field,
    SecretStr,
    field_serializer,
    field_validator,
    model_validator,
)

from rl.config_base import ConfigSection
from rl.masking import mask_url
from sampling.redaction.config import RedactConfig
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.policies.registry import check_policy_name
from sampling.selection.shares.registry import check_share_name

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


class ReviewBudget(ConfigSection):
    """How many reviews the `budget` policy may ask for: per round (a run of the trainer, or one
    round of `lowtide loop`: spent when the round ends) or per hour (spent as the hour goes)."""

    reviews: int = Field(ge=0, description="reviews per `per`, for all processes together")
    per: Literal["round", "hour"] = Field(
        "round", description="round: spent when the round ends; hour: spent as the hour goes"
    )
    processes: int | None = Field(
        None,
        ge=1,
        description="processes that share the budget, each spending its part (default: the "
        "launcher's WORLD_SIZE, else 1)",
    )


class BudgetConfig(ConfigSection):
    """How the `budget` policy shares its reviews; what the shares leave goes to the lowest
    rewards. Shares are of the budget (0.2 of 50 reviews: 10)."""

    audit_share: float = Field(0.2, ge=0, le=1, description="highest rewards: reward hacking")
    random_share: float = Field(0.1, ge=0, le=1, description="uniform: keeps accuracy unbiased")
    uncertainty_share: float = Field(0.3, ge=0, le=1, description="least certain reward model")
    shares: dict[
        Annotated[str, AfterValidator(check_share_name)], Annotated[float, Field(ge=0, le=1)]
    ] = Field(
        default_factory=dict,
        description="shares of your own, picked after those above: a name registered with "
        "sampling.selection.shares.register_share, or the dotted path of a share function "
        "(package.module:pick), to its part of the budget",
    )
    uncertainty_key: str = Field(
        "reward_model/spread", description="reward_details key with the reward model's spread"
    )
    model_component: str = Field(
        "reward_model",
        description="the reward model component: its rank disagreement with `<it>/previous`, "
        "else (no spread) with the rule components, is the uncertainty",
    )
    near_duplicate_threshold: float = Field(
        0.7, gt=0, le=1, description="Jaccard of 5-character shingles at which responses are copies"
    )
    window_steps: int | None = Field(
        None, ge=1, description="pick among candidates of the last N steps (None: all pooled)"
    )
    # Each selection regroups the pool (~0.5 ms a candidate): 5,000 is seconds, off the trainer.
    pool_max: int = Field(5_000, ge=1, description="candidates held at most (oldest dropped)")
    select_every_s: float = Field(60.0, gt=0, description="per hour: how often to spend")
    # Off by default: the shares above stay what they say; only `lowtide loop` has the reviews
    # to learn from (sampling/selection/budget_learning.py says how).
    adaptive: bool = Field(
        False,
        description="lowtide loop: share each round's budget by what the earlier rounds' "
        "reviews of each reason contradicted; the shares above are the start",
    )
    random_floor: float | None = Field(
        None,
        ge=0,
        le=1,
        description="adaptive: random_share never goes below this (None: random_share), so "
        "accuracy measured on random picks stays unbiased",
    )
    prior_reviews: float = Field(
        10.0,
        gt=0,
        description="adaptive: pseudo-reviews at the mean credit each share starts with; a "
        "share with fewer real reviews than this moves little",
    )
    repeat_discount: float = Field(
        0.5,
        ge=0,
        le=1,
        description="adaptive: n reviews that name the same failure categories each count "
        "n ** -repeat_discount, so a lesson taught again earns less (0: all count alike)",
    )

    @model_validator(mode="after")
    def _shares_fit(self) -> BudgetConfig:
        total = self.audit_share + self.random_share + self.uncertainty_share
        total += sum(self.shares.values())
        if total > 1 + 1e-9:
            yours = " + shares" if self.shares else ""
            raise ValueError(
                f"audit_share + random_share + uncertainty_share{yours} is {total:g}; at most 1"
            )
        if self.adaptive and self.shares:
            raise ValueError("adaptive learns the built-in shares only: leave `shares` empty")
        if self.random_floor is not None and self.random_floor > self.random_share + 1e-9:
            raise ValueError(
                f"random_floor {self.random_floor:g} is above random_share "
                f"{self.random_share:g}: the floor is how far the random share may shrink"
            )
        return self


class SamplingConfig(ConfigSection):
    policy: Annotated[str, AfterValidator(check_policy_name)] = Field(
        "threshold",
        description="how samples are picked: threshold, quantile, group_relative, zscore, "
        "budget, a name registered with sampling.selection.policies.register_policy, or the "
        "dotted path of a policy function of your own (package.module:select); the keys that "
        "name a policy set it",
    )
    threshold: float = Field(0.2, description="threshold policy: reward < threshold")
    quantile: float = Field(0.1, gt=0, lt=1, description="quantile policy: bottom share of a batch")
    group_k: float = Field(
        1.0, ge=0, description="group_relative: below group mean - k * std; zscore: z below -k"
    )
    component: str | None = Field(None, description="select on one reward component, not the total")
    max_per_step: int = Field(
        16, ge=0, description="records a step sends at most (per process), lowest first; not budget"
    )
    # 20 a minute is 1,200 reviews an hour: what a team of ten reviewers does (docs/review.md).
    max_per_minute: int = Field(
        20,
        ge=0,
        description="records a minute at most (per process; bursts up to a minute's); not budget",
    )
    sample_fraction: float = Field(
        1.0, gt=0, le=1, description="seeded share of the capped selection that is sent"
    )
    dedup: bool = Field(True, description="never send a sample_id this process sent before")
    compare_size: int | None = Field(
        None,
        ge=2,
        le=8,
        description="responses of a prompt's group one task shows (a comparison); None: one "
        "response a task. A run config sets it from annotation.review_mode and compare.size",
    )
    review_budget: ReviewBudget | None = Field(None, description="budget policy: reviews to spend")
    budget: BudgetConfig = Field(
        default_factory=BudgetConfig, description="budget policy: how its reviews are shared"
    )
    redact: RedactConfig = Field(
        default_factory=RedactConfig,
        description="secrets and personal data out of records (false: off)",
    )
    watch: WatchConfig = Field(
        default_factory=WatchConfig,
        description="the reward-hacking watch over every routed batch (off the trainer's thread)",
    )

    @model_validator(mode="after")
    def _budget_policy_has_a_budget(self) -> SamplingConfig:
        if self.policy == "budget" and self.review_budget is None:
            raise ValueError(
                "policy 'budget' needs review_budget, e.g. review_budget: {reviews: 50, per: round}"
            )
        return self


class QueueConfig(ConfigSection):
    redis_url: SecretStr = Field(
        SecretStr(DEFAULT_REDIS_URL),
        description="Redis of the queue, for the trainer's producer and the workers",
        # The URL may come from a file or a flag; its password only from the environment.
        json_schema_extra={"env": "REDIS_URL", "password_env_only": True},
    )
    name: str = Field("lowtide-annotate", description="RQ queue name; workers read the same")
    # Each job becomes one Label Studio import request, whose fixed cost dominates small ones
    # (~870 tasks/s at 64 per request, ~4,200/s at 500): a busy queue carries full jobs.
    batch_size: int = Field(500, ge=1, description="records per RQ job (at most)")
    max_latency_ms: int = Field(500, ge=1, description="flush a partial batch after this long")
    spool_dir: str = Field(
        "./logs/spool", description="batches wait here while Redis is down, replayed in order"
    )

    @field_validator("redis_url")
    @classmethod
    def _is_redis_url(cls, value: SecretStr) -> SecretStr:
        scheme = urlsplit(value.get_secret_value()).scheme
        if scheme not in ("redis", "rediss", "unix"):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @field_serializer("redis_url", when_used="json")
    def _show_without_password(self, value: SecretStr) -> str:
        return mask_url(value.get_secret_value())
