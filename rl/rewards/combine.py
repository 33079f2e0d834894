"""The configured rewards as one weighted sum, with per-component details and NaN accounting."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rl.config import RewardSpec
from rl.rewards.registry import build_scorer, check_spec
from rl.rewards.types import RewardBatch, RewardError, Scorer

NO_REWARDS = "rewards: configure at least one reward"


@dataclass(frozen=True)
class RewardResult:
    total: list[float]  # weighted sum per sample; NaN where any component was non-finite
    details: list[dict[str, float]]  # per sample: component name -> raw (unweighted) value
    nonfinite: list[bool]  # True where the total is not finite (excluded from the update)
    nonfinite_count: int
    errors: list[str] = field(default_factory=list)  # reward functions that raised, and where


@dataclass(frozen=True)
class Component:
    name: str
    weight: float
    scorer: Scorer


class RewardSet:
    """Scores a batch with every component: `total = sum(weight * value)`.

    A component that gives NaN or inf for a sample (or raised on it) makes that sample's total
    NaN and marks it non-finite; scoring itself never raises for bad values.
    """

    def __init__(self, components: list[Component]) -> None:
        if not components:
            raise RewardError(NO_REWARDS)
        names = [component.name for component in components]
        if len(set(names)) != len(names):
            raise RewardError(f"reward component names must be unique, got {names}")
        self.components = components
        self.component_names: list[str] = names

    @classmethod
    def from_specs(cls, specs: list[RewardSpec], *, device: str = "cpu") -> RewardSet:
        components: list[Component] = []
        try:
            for spec in specs:
                default_name, scorer = build_scorer(spec, device=device)
                taken = {component.name for component in components}
                name = unique_name(spec.name or default_name, taken)
                components.append(Component(name, float(spec.weight), scorer))
            return cls(components)
        except BaseException:
            for component in components:  # e.g. a reward model loaded before a later typo
                component.scorer.close()
            raise

    def score(self, batch: RewardBatch) -> RewardResult:
        size = len(batch)
        totals = [0.0] * size
        broken = [False] * size
        details: list[dict[str, float]] = [{} for _ in range(size)]
        errors: list[str] = []
        for component in self.components:
            scores = component.scorer(batch)
            if len(scores.values) != size:
                raise RewardError(
                    f"reward {component.name!r} gave {len(scores.values)} scores for {size} samples"
                )
            errors.extend(scores.errors)
            weight, name = component.weight, component.name
            for index, value in enumerate(scores.values):
                details[index][name] = value
                if math.isfinite(value):
                    totals[index] += weight * value
                else:
                    broken[index] = True
            if scores.extras is not None:
                for index, extras in enumerate(scores.extras):
                    for key, value in extras.items():
                        details[index][f"{name}/{key}"] = value
        nonfinite = [
            bad or not math.isfinite(total) for bad, total in zip(broken, totals, strict=True)
        ]
        total = [math.nan if bad else value for bad, value in zip(nonfinite, totals, strict=True)]
        return RewardResult(total, details, nonfinite, sum(nonfinite), errors)

    def close(self) -> None:
        for component in self.components:
            component.scorer.close()

    def __enter__(self) -> RewardSet:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def check_reward_specs(specs: list[RewardSpec]) -> list[tuple[int | None, str]]:
    """Every mistake `RewardSet.from_specs` would raise, as (entry index or None, message), found
    by the same checks but without loading a reward model."""
    if not specs:
        return [(None, NO_REWARDS)]
    problems: list[tuple[int | None, str]] = []
    for index, spec in enumerate(specs):
        try:
            check_spec(spec)
        except RewardError as error:
            problems.append((index, str(error)))
    return problems


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, or `name_2`, `name_3`, ... for the second and later components of that name."""
    if name not in taken:
        return name
    suffix = 2
    while f"{name}_{suffix}" in taken:
        suffix += 1
    return f"{name}_{suffix}"
