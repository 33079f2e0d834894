"""The selections the pool bench compares, each through the code a run uses.

A round offers candidates (pool rollouts scored by the current reward model, each with the
reward_details a run's reward-model reward writes: its spread, and where the selection reads
them the learned failure detector's score and the novelty in the reward model's feature space).
A selection returns which of them a reviewer sees (at most the round's batch), each with why:

- `random`: uniform.
- `threshold`: sampling.selection.policies.threshold at the task's bar, capped to the batch by a
  uniform subsample (as the router caps a step).
- `budget`: sampling.selection.budget.choose with the default BudgetConfig (random 0.1; the
  audit share, 0.2: the watch's suspects first, then the high rewards the failure detector
  calls likely failures, then the highest rewards; uncertain 0.3; the rest, 0.4, to the lowest
  rewards); from the second round the reward model also scores with the starting one
  (`reward_model/previous`), as `lowtide loop` does, and the uncertain share reads where the
  two disagree.
- `budget_random`: the budget mostly uniform (random 0.6, audit 0.2, no uncertain share, the
  rest to the lowest rewards).
- `uncertain`: the whole batch to the uncertain share, reading the ensemble's spread (epistemic
  uncertainty, as BAL-PM and ActiveUltraFeedback read it).
- `novel`: the whole batch to the `novel` share: the candidates farthest, in the reward model's
  feature space, from everything reviewed so far (diversity: what no review has covered).
- `failure`: the whole batch to the `failure` share: what the failure detector learned from the
  reviews so far (the categories reviewers ticked) scores highest; before any review it has
  nothing to go on and the share's picks go to the lowest rewards.
- `budget_learned`: the default budget with a `failure` (0.2) and a `novel` (0.1) share.
- `compare:<selection>`: comparison review of the GRPO groups of that selection's picks.
- `oracle` (a test-only cheat, never in a report's default set): the failures the current
  reward model scores highest, read off the oracle.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from bench.loop_value.task import Verdict
from bench.loop_value.training import Rollout
from sampling.config import BudgetConfig
from sampling.selection.budget import Candidate, Flag, choose
from sampling.selection.policies import threshold

MODEL = "reward_model"  # the component name a run's reward-model reward writes
SPREAD_KEY, PREVIOUS_KEY = f"{MODEL}/spread", f"{MODEL}/previous"
FAILURE_KEY, NOVELTY_KEY = f"{MODEL}/failure", f"{MODEL}/novelty"
COMPARE_PREFIX = "compare:"


@dataclass(frozen=True)
class Offer:
    """One round's candidates as a selection sees them."""

    rollouts: Sequence[Rollout]  # reward: the current reward model's; reward_details as a run
    flags: Sequence[Flag]  # the watch's suspects, carriers as indices into rollouts
    reviewed: Sequence[str]  # responses reviewed so far (their near-duplicates are not picked)
    batch: int
    bar: float  # the task's threshold
    seed: int
    verdicts: Sequence[Verdict] = ()  # only the test-only cheat reads them


@dataclass(frozen=True)
class Selection:
    name: str
    pick: Callable[[Offer], dict[int, str]]  # indices into offer.rollouts -> reason
    reads: frozenset[str] = field(default_factory=frozenset)  # reward_details it needs
    previous_from_round: int | None = None  # score beside the starting model from this round


def _random(offer: Offer) -> dict[int, str]:
    count = min(offer.batch, len(offer.rollouts))
    return dict.fromkeys(random.Random(offer.seed).sample(range(len(offer.rollouts)), count),
                         "random")  # fmt: skip


def _threshold(offer: Offer) -> dict[int, str]:
    below = threshold([r.reward for r in offer.rollouts], offer.bar).indices
    if len(below) > offer.batch:
        below = random.Random(offer.seed).sample(below, offer.batch)
    return dict.fromkeys(below, "threshold")


def budgeted(config: BudgetConfig, watched: bool = True) -> Callable[[Offer], dict[int, str]]:
    def pick(offer: Offer) -> dict[int, str]:
        pool = [
            Candidate(r.prompt, r.response, r.reward, dict(r.reward_details), r.group_id, r.step, i)
            for i, r in enumerate(offer.rollouts)
        ]
        flags = offer.flags if watched else ()
        picks = choose(pool, offer.batch, config, offer.seed, reviewed=offer.reviewed, flags=flags)
        return {p.index: p.reason for p in picks}

    return pick


def _oracle(offer: Offer) -> dict[int, str]:
    failing = [i for i, verdict in enumerate(offer.verdicts) if verdict.failure]
    failing.sort(key=lambda i: -offer.rollouts[i].reward)
    return dict.fromkeys(failing[: offer.batch], "oracle")


ONLY = {"random_share": 0.0, "audit_share": 0.0, "uncertainty_share": 0.0}
SELECTIONS: dict[str, Selection] = {
    s.name: s
    for s in (
        Selection("random", _random),
        Selection("threshold", _threshold),
        Selection("budget", budgeted(BudgetConfig()), frozenset({SPREAD_KEY, FAILURE_KEY}), 1),
        Selection(
            "budget_random",
            budgeted(BudgetConfig(random_share=0.6, audit_share=0.2, uncertainty_share=0.0)),
            frozenset({FAILURE_KEY}),
        ),
        Selection(
            "uncertain",
            budgeted(BudgetConfig(**{**ONLY, "uncertainty_share": 1.0}), False),
            frozenset({SPREAD_KEY}),
        ),
        Selection(
            "novel",
            budgeted(BudgetConfig(**ONLY, shares={"novel": 1.0}), False),
            frozenset({NOVELTY_KEY}),
        ),
        Selection(
            "failure",
            budgeted(BudgetConfig(**ONLY, shares={"failure": 1.0}), False),
            frozenset({FAILURE_KEY}),
        ),
        Selection(
            "budget_learned",
            budgeted(BudgetConfig(shares={"failure": 0.2, "novel": 0.1})),
            frozenset({SPREAD_KEY, FAILURE_KEY, NOVELTY_KEY}),
            1,
        ),
        Selection("oracle", _oracle),
    )
}
SINGLE = tuple(name for name in SELECTIONS if name != "oracle")
DEFAULT = (*SINGLE, "compare:threshold", "compare:random")
TEST_ONLY = ("oracle",)


def selection(name: str) -> Selection:
    """A single selection by name, or the one a `compare:<selection>` reviews the groups of."""
    base = name.removeprefix(COMPARE_PREFIX)
    if base not in SELECTIONS:
        shown = [n for n in SELECTIONS if n not in TEST_ONLY]
        known = ", ".join([*shown, *(f"{COMPARE_PREFIX}{n}" for n in SINGLE)])
        raise SystemExit(f"no selection {name!r}; the selections: {known}")
    return SELECTIONS[base]


def details(score: float, extra: Mapping[str, float], reads: frozenset[str]) -> dict[str, float]:
    """A candidate's reward_details as a run's reward-model reward writes them, limited to what
    the selection reads (the others cost the bench time and change nothing)."""
    return {MODEL: score, **{key: value for key, value in extra.items() if key in reads}}
