"""Config sections owned by annotation: the Label Studio side (`annotation`) and `export`."""

from __future__ import annotations

from importlib.resources import files
from itertools import pairwise
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_serializer, model_validator

from annotation.comparison import MAX_RESPONSES, MIN_RESPONSES
from rl.config_base import ConfigSection
from rl.masking import mask_url
from rl.plugins import is_dotted_path

DEFAULT_LABELING_CONFIG = "configs/label_studio/review.xml"  # as in a checkout


def labeling_config_file(path: str) -> Path:
    """`path` (relative to where lowtide runs); for the default path where no such file is here
    (a worker installed with pip, run from another directory), the copy installed with lowtide."""
    if path == DEFAULT_LABELING_CONFIG and not Path(path).exists():
        return Path(str(files("annotation") / "forms" / "review.xml"))
    return Path(path)


class RetryConfig(ConfigSection):
    max: int = Field(
        5, ge=0, description="retries after the first attempt; 0: a failure goes to the failed jobs"
    )
    intervals_s: list[float] = Field(
        default_factory=lambda: [2, 10, 30, 60, 120],
        description="seconds before each retry; the last one repeats",
    )

    @model_validator(mode="after")
    def _enough_intervals(self) -> RetryConfig:
        if self.max and not self.intervals_s:
            raise ValueError("intervals_s needs at least one interval when max > 0")
        return self


SUGGESTIONS_OFF, SCORE_BANDS = "off", "score_bands"


class ScoreBand(ConfigSection):
    """Scores under `below` (and at or above the previous band's bound) get this suggestion."""

    below: float | None = Field(None, description="upper bound; None: the last, open band")
    rating: int = Field(ge=1, le=5, description="stars suggested")
    categories: list[str] = Field(
        default_factory=list, description="failure categories suggested with this rating"
    )


def _default_bands() -> list[ScoreBand]:
    # Rewards in [0, 1] (the built-in rules): a fifth of the range per star.
    bounds = (0.2, 0.4, 0.6, 0.8, None)
    return [ScoreBand(below=bound, rating=stars) for stars, bound in enumerate(bounds, 1)]


class SuggestionsConfig(ConfigSection):
    """A machine suggestion (a Label Studio prediction) on each imported task; see
    annotation/suggestions.py. Off by default: a suggestion anchors reviewers on the reward
    model's view, which is what the reviews are meant to correct."""

    judge: str = Field(
        SUGGESTIONS_OFF,
        description=f"'{SUGGESTIONS_OFF}', '{SCORE_BANDS}' (the score mapped by `bands`), or a "
        "dotted path to a function (package.module:function)",
    )
    score: str = Field(
        "reward", description="'reward' (the total) or a reward_details component name"
    )
    bands: list[ScoreBand] = Field(
        default_factory=_default_bands,
        description="score_bands: ascending, the last without `below` (default: a fifth of [0, 1] "
        "a star)",
    )
    model_version: str | None = Field(
        None, description="names the suggestions in Label Studio; default: judge and score"
    )

    @model_validator(mode="after")
    def _judge_and_bands(self) -> SuggestionsConfig:
        if self.judge not in (SUGGESTIONS_OFF, SCORE_BANDS) and not is_dotted_path(self.judge):
            raise ValueError(
                f"judge {self.judge!r}: use '{SUGGESTIONS_OFF}', '{SCORE_BANDS}' or a dotted "
                "path such as mypackage.judges:rate"
            )
        bounds = [band.below for band in self.bands]
        if not bounds or bounds[-1] is not None or None in bounds[:-1]:
            raise ValueError("bands: the last band, and only it, has no `below` bound")
        if any(a >= b for a, b in pairwise(bounds[:-1])):
            raise ValueError(f"bands: `below` bounds must increase, got {bounds[:-1]}")
        return self


ReviewMode = Literal["single", "compare"]


class CompareConfig(ConfigSection):
    """`review_mode: compare`: one task shows one prompt with `size` responses of its group (A,
    B, C, ...); the reviewer picks the best and the worst (annotation/comparison.py)."""

    size: int = Field(
        4, ge=MIN_RESPONSES, le=MAX_RESPONSES, description="responses a comparison task shows"
    )
    labeling_config: str | None = Field(
        None,
        description="the comparison form's XML file; None: the built-in form for `size` "
        "(annotation/compare_form.py)",
    )


class AnnotationConfig(ConfigSection):
    label_studio_url: str = Field(
        "http://127.0.0.1:8080",
        description="Label Studio's base URL",
        json_schema_extra={"env": "LABEL_STUDIO_URL", "password_env_only": True},
    )
    api_key: SecretStr | None = Field(
        None,
        description="Label Studio API token",
        json_schema_extra={"env": "LABEL_STUDIO_API_KEY", "env_only": True},
    )
    task_key: SecretStr | None = Field(
        None,
        description="key of the seal that ties a task's text to its record "
        "(annotation/task_seal.py); unset: derived from the API token",
        json_schema_extra={"env": "LOWTIDE_TASK_KEY", "env_only": True},
    )
    project: str = Field(
        "lowtide review",
        description="title of the review project (made if none), a template: {run_id} (the "
        "record's run), {date} (UTC day), {n} (its number in the series; without it the next "
        "projects add ' #2', ' #3')",
    )
    max_tasks_per_project: int = Field(
        100_000, ge=1, description="a project this full rolls over to the next of its series"
    )
    retired_ids_keep_s: float = Field(
        86_400,
        gt=0,
        description="after a project rolls over, seconds its exact imported-id set stays in "
        "Redis (its compact filter stays for good)",
    )
    labeling_config: str = Field(
        DEFAULT_LABELING_CONFIG,
        description="the review form's XML file, relative to where lowtide runs (the default, "
        "where no such file is there: the form installed with lowtide)",
    )
    import_batch_max: int = Field(500, ge=1, description="tasks per Label Studio import request")
    import_interval_s: float = Field(
        0,
        ge=0,
        description="at most one import request into a project per this many seconds, across "
        "workers (0: no pacing); imports wait their turn, each filled with the jobs queued "
        "behind it up to import_batch_max records, so reviewers' task loads stay fast while "
        "records arrive faster than about 1,000/s (docs/review.md)",
    )
    retry: RetryConfig = Field(
        default_factory=RetryConfig, description="how a job whose import failed is retried"
    )
    request_timeout_s: float = Field(30, gt=0, description="seconds a Label Studio request waits")
    orphan_requeues: int = Field(
        3,
        ge=0,
        description="times a job whose worker died (SIGKILL, out of memory) is put back on the "
        "queue; the next death fails it and quarantines it with the reason, so a batch that kills "
        "its worker does not cycle through the workers for ever",
    )
    max_text_chars: int = Field(
        100_000, ge=1, description="longer prompts or responses are quarantined, not imported"
    )
    suggestions: SuggestionsConfig = Field(
        default_factory=SuggestionsConfig, description="a machine suggestion on each task"
    )
    reviews_per_task: int = Field(
        1, ge=1, description="how many reviewers review each task (Label Studio's overlap)"
    )
    review_mode: ReviewMode = Field(
        "single",
        description="'single': rate one response a task; 'compare': pick the best and the worst "
        "of a group's responses (`compare`)",
    )
    compare: CompareConfig = Field(
        default_factory=CompareConfig, description="review_mode compare: the comparison task"
    )
    blind_review: bool = Field(
        True,
        description="before deciding, the reviewer sees no reward and no reason for the pick "
        "that reveals it; the reward is one click away once the rating (a comparison: the best) "
        "is chosen, and on the submitted review. false: the reward beside the response and the "
        "reason in the trace line, for reviews about how the reward is computed "
        "(docs/review.md)",
    )

    @field_serializer("label_studio_url", when_used="json")
    def _show_without_password(self, value: str) -> str:
        return mask_url(value)

    @property
    def compare_size(self) -> int | None:
        """Responses a task shows when tasks are comparisons; None: one response a task."""
        return self.compare.size if self.review_mode == "compare" else None


class AgreementConfig(ConfigSection):
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
    alpha_metric: Literal["ordinal", "interval", "nominal"] = Field(
        "ordinal", description="distance between ratings in Krippendorff's alpha"
    )
    disputed_shown: int = Field(10, ge=0, description="most disputed samples `export` lists")


class ExportConfig(ConfigSection):
    out: str = Field(
        "data/reward_model/annotations.jsonl",
        description="the ratings JSONL; preferences, dataset and cursor are written beside it",
    )
    since: str = Field("last", description="'last' (stored cursor), 'all', or an ISO timestamp")
    agreement: AgreementConfig = Field(
        default_factory=AgreementConfig, description="when a sample's reviewers agree"
    )
