"""What `lowtide loop` is asked to do, beside the run config, and which of it a loop directory
is bound to."""

from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from lowtide.config import RunConfig, dump_run_config

SCRIPTED_REVIEWER_EMAIL = "scripted-reviewer@lowtide.local"
# Settings that may change between runs of one loop: more rounds, a longer wait for people.
_FREE = {"rounds", "min_reviews", "review_timeout_s", "poll_s"}
# Settings added after loop directories were first made: bound only when not at their default,
# so a directory made before one existed still resumes.
_ADDED_LATER = {"rm_written_weight", "rm_disagreement"}
# Run-config keys the loop sets itself, or that say where things are rather than what is
# computed (a Label Studio on another port is the same project).
_PLACES = {
    ("run_id",), ("logger",), ("export",), ("trainer", "output_dir"), ("trainer", "resume"),
    ("annotation", "api_key"), ("annotation", "label_studio_url"), ("queue", "redis_url"),
    ("queue", "spool_dir"),
}  # fmt: skip


class LoopSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rounds: int = Field(3, ge=1)
    steps: int | None = Field(None, ge=1, description="training steps a round (default: config)")
    start: Literal["previous", "initial"] = "previous"  # each round's starting policy
    reviewer: str | None = None  # dotted path of a reviewer function; None: people review
    reviewer_email: str = SCRIPTED_REVIEWER_EMAIL
    min_reviews: int | None = Field(None, ge=1)  # people: reviews to wait for (default: all)
    review_timeout_s: float = Field(24 * 3600, gt=0)
    poll_s: float = Field(5.0, gt=0)
    eval_prompts: str | None = None  # held-out prompts the reviewer scores the policy on
    rm_epochs: int = Field(3, ge=1)
    rm_learning_rate: float = Field(3e-4, gt=0)
    rm_written_weight: float = Field(1.0, ge=0, le=1)  # rm train's --written-weight
    # From round 2, score with the loop's first reward model too (`previous`): the budget's
    # uncertain share goes where the retrained one disagrees with it.
    rm_disagreement: bool = True


def bound_settings(settings: LoopSettings, run_config: RunConfig) -> dict[str, Any]:
    """What a loop directory is bound to: a rerun with any of it changed would mix rounds made
    one way with rounds made another."""
    config = yaml.safe_load(dump_run_config(run_config))
    for path in _PLACES:
        section = config
        for key in path[:-1]:
            section = section.get(key) or {}
        section.pop(path[-1], None)
    fields = LoopSettings.model_fields
    at_default = {n for n in _ADDED_LATER if getattr(settings, n) == fields[n].default}
    loop = settings.model_dump(exclude=_FREE | at_default)
    return {"run_config": config, "loop": loop}
