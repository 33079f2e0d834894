"""`RMTrainSettings`: how the next reward model is trained, declared once for `lowtide rm train`
(its options are generated from these fields), the loop (which surfaces some of them as
`rm_*` settings) and the benches. No torch here: `--help` and config checks stay fast."""

from __future__ import annotations

import typing
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from rl.config_base import ConfigSection

LRSchedule = Literal["constant", "linear"]
TrainedPart = Literal["model", "head"]
LR_SCHEDULES: tuple[str, ...] = typing.get_args(LRSchedule)
TRAINED_PARTS: tuple[str, ...] = typing.get_args(TrainedPart)


class RMTrainSettings(ConfigSection, frozen=True):
    epochs: int = Field(3, ge=1, description="passes over the training pairs and ratings")
    learning_rate: float = Field(1e-4, gt=0, description="AdamW learning rate")
    # "constant": the same rate to the end; "linear": it falls to 0 by the last step (TRL's
    # RewardTrainer default). Constant learnt more from a loop round's few reviews (the loop
    # bench, docs/loop.md), so it stays the default.
    lr_schedule: LRSchedule = Field(
        "constant", description="linear: the rate falls to 0 by the last step"
    )
    batch_size: int = Field(8, ge=1, description="pairs and rated responses a step")
    rating_weight: float = Field(
        0.5, ge=0, description="weight of the regression on ratings; 0: pairs only"
    )
    holdout: float = Field(
        0.2, ge=0, le=0.9, description="share of the samples held out for the before/after check"
    )
    seed: int = Field(0, description="the shuffle, the holdout split and the heads")
    max_grad_norm: float = Field(1.0, gt=0, description="gradients clipped to this total norm")
    weight_by_agreement: bool = Field(
        False,
        description="weight each sample's loss by how much its reviewers agree (1 - rating "
        "spread / 4)",
    )
    written_weight: float = Field(
        1.0,
        ge=0,
        le=1,
        description="loss weight of a pair whose chosen side a reviewer wrote (a better "
        "response, not the policy's text); 0 leaves those pairs out",
    )
    uncertainty_heads: int = Field(
        5, ge=0, description="cheap heads fitted for the spread signal; 0: none"
    )
    # "model": fine-tune every weight (epochs, learning_rate, batches); "head": refit only the
    # score head on the frozen backbone's features, anchored to the parent's (head_refit.py).
    train: TrainedPart = Field("model", description="model: every weight; head: the score head")

    @field_validator("lr_schedule", "train", mode="before")
    @classmethod
    def _one_of(cls, value: Any, info: ValidationInfo) -> Any:
        """The choices named, as a library caller reads them (`lr_schedule: 'cosine'; one of
        constant, linear`)."""
        name = info.field_name or ""
        choices = typing.get_args(cls.model_fields[name].annotation)
        if value not in choices:
            raise ValueError(f"{name}: {value!r}; one of {', '.join(choices)}")
        return value

    @field_validator("written_weight", mode="before")
    @classmethod
    def _a_share(cls, value: Any) -> Any:
        if isinstance(value, int | float) and not 0.0 <= value <= 1.0:
            raise ValueError(f"written_weight: {value}; from 0 to 1")
        return value
