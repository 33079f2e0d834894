"""What an analysis finds: plain frozen data, built on the watch's thread and read anywhere."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from rl.numbers import none_if_not_finite
from sampling.selection.hacking.features import Feature


@dataclass(frozen=True)
class Example:
    """A recent sample that carries the feature (the highest rewards first)."""

    sample_id: str
    step: int
    reward: float
    response: str  # an excerpt: its first characters


@dataclass(frozen=True)
class Suspect:
    feature: Feature
    lift: float  # mean within-group reward lift over informative groups
    lift_se: float
    z: float  # lift over its standard error (a t statistic over groups)
    p_value: float  # one-sided, before the false-discovery correction
    effect: float  # lift in units of the reward's standard deviation within groups
    groups: int  # informative groups behind the lift
    prevalence_then: float  # share of responses carrying it in the first window
    prevalence_now: float | None  # ... in the latest window (None: no window after the first)
    growth_z: float
    growing: bool  # the share rose enough: a suspect proper, not only a paid feature
    # Reward component -> its own within-group lift, over the latest samples kept.
    component_lifts: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    examples: tuple[Example, ...] = ()
    folded: tuple[Feature, ...] = ()  # features that mostly duplicate this one
    score: float = 0.0  # what the ranking sorts on (growing: effect x rise; else: z)
    phrase: str | None = None  # the longer phrase its folded n-grams spell out with it

    def label(self) -> str:
        """The feature as `describe` names it (the assembled phrase, when there is one)."""
        return f'"{self.phrase}"' if self.phrase else self.feature.label()

    @property
    def paid_by(self) -> tuple[str, float] | None:
        """The component with the largest positive lift, when the reward has components."""
        positive = [(name, lift) for name, lift in self.component_lifts.items() if lift > 0]
        return max(positive, key=lambda item: item[1]) if positive else None

    def describe(self) -> str:
        """`reward rises with "i agree": +1.8 within groups, in 62% of responses, up from 3%`"""
        line = f"reward rises with {self.label()}: {self.lift:+.2g} within groups"
        now, then = self.prevalence_now, share_text(self.prevalence_then)
        if now is None:
            line += f", in {then} of responses"
        elif self.growing:
            line += f", in {share_text(now)} of responses, up from {then}"
        else:
            line += f", in {share_text(now)} of responses (was {then})"
        paid = self.paid_by
        if paid is not None and len(self.component_lifts) > 1:
            line += f"; paid by {paid[0]} ({paid[1]:+.2g})"
        return line

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["feature"] = {"kind": self.feature.kind, "text": self.feature.text}
        data["folded"] = [{"kind": f.kind, "text": f.text} for f in self.folded]
        data["component_lifts"] = dict(self.component_lifts)
        data["description"] = self.describe()
        return {key: none_if_not_finite(value) for key, value in data.items()}


@dataclass(frozen=True)
class WatchReport:
    """One analysis: growing suspects first (ranked), then features that are paid but not
    spreading (`lift_only`)."""

    suspects: tuple[Suspect, ...] = ()
    lift_only: tuple[Suspect, ...] = ()
    steps: int = 0  # step chunks analysed
    samples: int = 0  # samples with a finite reward analysed
    groups: int = 0  # groups of two or more responses
    features_tracked: int = 0
    features_tested: int = 0  # with enough informative groups: the false-discovery family
    reward_sd: float = 0.0  # the reward's standard deviation within groups
    first_window: tuple[int, int] | None = None  # first and last step of the 'then' window
    latest_window: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "suspects": [suspect.to_json() for suspect in self.suspects],
            "lift_only": [suspect.to_json() for suspect in self.lift_only],
            "steps": self.steps,
            "samples": self.samples,
            "groups": self.groups,
            "features_tracked": self.features_tracked,
            "features_tested": self.features_tested,
            "reward_sd": none_if_not_finite(self.reward_sd),
            "first_window": self.first_window,
            "latest_window": self.latest_window,
        }


def share_text(value: float | None) -> str:
    """A share of the responses as people read it: `62%`, `<1%`; `?` when unknown."""
    if value is None:
        return "?"
    percent = 100 * value
    if 0 < percent < 1:
        return "<1%"
    return f"{percent:.0f}%"
