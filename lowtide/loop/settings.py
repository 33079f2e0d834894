"""What `lowtide loop` is asked to do, beside the run config, and which of it a loop directory
is bound to."""

from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import Field

from annotation.reward_model.settings import RMTrainSettings
from lowtide.config import RunConfig, dump_run_config
from rl.config_base import ConfigSection, field_of

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


class LoopSettings(ConfigSection):
    rounds: int = Field(3, ge=1, description="rounds in all (a rerun may add more)")
    steps: int | None = Field(
        None, ge=1, description="training steps a round (default: the config's)"
    )
    start: Literal["previous", "initial"] = Field(
        "previous",
        description="each round starts from the 'previous' round's policy or the 'initial' one",
    )
    reviewer: str | None = Field(
        None, description="reviewer function, package.module:name (default: people review)"
    )
    reviewer_email: str = Field(
        SCRIPTED_REVIEWER_EMAIL, description="the reviewer function's own Label Studio account"
    )
    min_reviews: int | None = Field(
        None, ge=1, description="people: reviews to wait for a round (default: all)"
    )
    review_timeout_s: float = Field(
        24 * 3600, ge=1, description="people: seconds to wait, then go on"
    )
    poll_s: float = Field(5.0, ge=0.1, description="people: seconds between checks")
    eval_prompts: str | None = Field(
        None, description="held-out prompts file: the reviewer scores the policy on them"
    )
    # The reward model of each round is trained as `lowtide rm train` trains one
    # (annotation.reward_model.settings), with these of its settings exposed as rm_*.
    rm_epochs: int = field_of(RMTrainSettings, "epochs")
    # The loop has retrained at 3e-4 since it was written (so does the demo), on the few
    # reviews of its rounds so far, where `rm train`'s 1e-4 serves a whole export. It is part
    # of what a loop directory is bound to: another default would refuse every directory made
    # before it.
    rm_learning_rate: float = field_of(RMTrainSettings, "learning_rate", default=3e-4)
    rm_written_weight: float = field_of(RMTrainSettings, "written_weight")
    # From round 2, score with the loop's first reward model too (`previous`): the budget's
    # uncertain share goes where the retrained one disagrees with it.
    rm_disagreement: bool = Field(
        True,
        description="budget policy, from round 2: also score with the first reward model; the "
        "uncertain share reviews where the retrained one disagrees with it",
    )

    def rm_training(self) -> RMTrainSettings:
        """How this loop's rounds train their reward model."""
        return RMTrainSettings(
            epochs=self.rm_epochs,
            learning_rate=self.rm_learning_rate,
            written_weight=self.rm_written_weight,
        )


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
