"""Config sections owned by annotation: the Label Studio side (`annotation`) and `export`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True, validate_default=True)


class RetryConfig(Section):
    max: int = Field(5, ge=0)
    intervals_s: list[float] = Field(default_factory=lambda: [2, 10, 30, 60, 120])

    @model_validator(mode="after")
    def _enough_intervals(self) -> RetryConfig:
        if self.max and not self.intervals_s:
            raise ValueError("intervals_s needs at least one interval when max > 0")
        return self


class AnnotationConfig(Section):
    label_studio_url: str = Field(
        "http://127.0.0.1:8080", json_schema_extra={"env": "LABEL_STUDIO_URL"}
    )
    api_key: SecretStr | None = Field(
        None, json_schema_extra={"env": "LABEL_STUDIO_API_KEY", "env_only": True}
    )
    project: str = "lowtide review"
    labeling_config: str = "configs/label_studio/review.xml"
    import_batch_max: int = Field(500, ge=1)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    request_timeout_s: float = Field(30, gt=0)
    max_text_chars: int = Field(
        100_000, ge=1, description="longer prompts or responses are quarantined, not imported"
    )
    reviews_per_task: int = Field(
        1, ge=1, description="how many reviewers review each task (Label Studio's overlap)"
    )


class AgreementConfig(Section):
    """When the reviewers of one sample count as agreeing (see annotation/agreement.py)."""

    max_rating_spread: int = Field(
        1, ge=0, le=4, description="highest minus lowest rating that still counts as agreeing"
    )
    min_category_share: float = Field(
        0.6, gt=0.5, le=1.0,
        description="share of reviewers that must take the same side on each failure category",
    )  # fmt: skip
    preferences: Literal["agreed", "all"] = Field(
        "agreed", description="preference rows from agreeing samples only, or from all"
    )
    min_reviewers: int = Field(1, ge=1, description="fewer reviewers: no preference rows")
    alpha_metric: Literal["ordinal", "interval", "nominal"] = "ordinal"
    disputed_shown: int = Field(10, ge=0, description="most disputed samples `export` lists")


class ExportConfig(Section):
    out: str = "data/reward_model/annotations.jsonl"
    since: str = Field("last", description="'last' (stored cursor), 'all', or an ISO timestamp")
    agreement: AgreementConfig = Field(default_factory=AgreementConfig)
