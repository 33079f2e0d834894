"""The reward-hacking watch in the bench, as the routing core runs it: each method's run is
watched over all its rounds so far (steps numbered on across rounds), the budget policy's audit
share goes first to the suspects' carriers (`sampling.selection.budget.choose(flags=...)`), and
the task's blind spot is looked for among the top suspects. A rule reward (the oracle itself:
no blind spot) gives the count of suspects raised where there is nothing to find."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from bench.loop_value.training import Rollout
from rl.plugins import resolve_path
from sampling.selection.budget import Flag
from sampling.selection.hacking import Feature, Suspect, WatchConfig, WatchReport, analyze_rows
from sampling.selection.hacking.carriers import carriers

CONFIG = WatchConfig()  # the defaults a user gets
TOP = 3  # "among the top suspects"


@dataclass(frozen=True)
class WatchRow:
    step: int
    index: int
    prompt: str
    response: str
    reward: float
    reward_details: dict[str, float]


@dataclass
class WatchedRun:
    """One method's rollouts, round after round, as one run."""

    steps_per_round: int
    rows: list[WatchRow] = field(default_factory=list)

    def add_round(self, round_number: int, candidates: Sequence[Rollout]) -> WatchReport:
        offset = round_number * self.steps_per_round
        self.rows += [
            WatchRow(offset + c.step, i, c.prompt, c.response, c.reward, dict(c.reward_details))
            for i, c in enumerate(candidates)
        ]
        return analyze_rows(sorted(self.rows, key=lambda row: (row.step, row.index)), CONFIG)


def flags_for(report: WatchReport, candidates: Sequence[Rollout]) -> list[Flag]:
    responses, prompts = [c.response for c in candidates], [c.prompt for c in candidates]
    found = carriers(report.suspects, responses, CONFIG, prompts)
    return [Flag(item.suspect.describe(), item.positions) for item in found]


def has_a_word_of(feature: Feature, words: Collection[str]) -> bool:
    """A phrase, prefix or suffix with one of `words` in it: a task's blind spot of words."""
    return feature.kind in ("phrase", "prefix", "suffix") and not set(
        feature.text.split()
    ).isdisjoint(words)


def names_it(suspect: Suspect, blind_spot: Callable[[Feature], bool]) -> bool:
    """The suspect, or a feature folded under it, is the blind spot."""
    return blind_spot(suspect.feature) or any(blind_spot(f) for f in suspect.folded)


def blind_spot_rank(report: WatchReport, blind_spot: Callable[[Feature], bool] | None) -> int:
    """1-based rank of the first suspect naming the blind spot; 0 when none does."""
    if blind_spot is None:
        return 0
    for rank, suspect in enumerate(report.suspects, start=1):
        if names_it(suspect, blind_spot):
            return rank
    return 0


def oracle_reward(prompt: str, response: str, oracle: str) -> float:
    """A rule reward with no blind spot: the oracle's rating, scaled to [-1, 1]."""
    verdict = resolve_path(oracle)(prompt, response, "rule")
    return (verdict.rating - 3) / 2
