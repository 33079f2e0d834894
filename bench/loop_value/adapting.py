"""`budget_adaptive`: the budget that learns, as `lowtide loop` runs it with
`sampling.budget.adaptive` (lowtide/loop/budget_shares.py).

After each round, every review of the method so far feeds the product's
`sampling.selection.budget_learning` through the loop's own `learned_from`: a rated pick is a
`Review` (why it was picked, the reward it was trained with, the oracle's rating, its round:
rewards of different rounds come from different reward models), a comparison is a `Compared`
(why its group was picked, the rewards of the orders the oracle gave). The next round's budget
is split from the configured shares, and `Shares.applied_to` makes the round's BudgetConfig, as
the loop runner does. Nothing here computes a credit: the product's functions do, so the bench
measures them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bench.loop_value.reviewing import Reviewed
from bench.loop_value.task import Verdict
from bench.loop_value.training import Rollout
from lowtide.loop.budget_shares import LearnedShares, kind_of, learned_from
from sampling.config import BudgetConfig
from sampling.selection.budget_learning import Compared, Review, Shares


@dataclass
class AdaptiveBudget:
    """One method's shares across the rounds of one seed: the configured ones until a round's
    reviews say otherwise."""

    configured: BudgetConfig = field(default_factory=lambda: BudgetConfig(adaptive=True))
    reviews: list[Review] = field(default_factory=list)
    compared: list[Compared] = field(default_factory=list)
    learned: LearnedShares | None = None

    @property
    def shares(self) -> Shares:
        """What the next selection is split by."""
        return self.learned.shares if self.learned else Shares.of(self.configured)

    def config(self) -> BudgetConfig:
        return self.shares.applied_to(self.configured)

    def learn(self, reviews: Sequence[Review], compared: Sequence[Compared] = ()) -> LearnedShares:
        """A round's evidence added to the rounds' before it: the shares of the next round."""
        self.reviews += reviews
        self.compared += compared
        self.learned = learned_from(self.configured, self.reviews, self.compared)
        return self.learned


def evidence(
    tasks: Sequence[Reviewed],
    reasons: Mapping[int, str],
    candidates: Sequence[Rollout],
    verdicts: Sequence[Verdict],
    round_key: str,
) -> tuple[list[Review], list[Compared]]:
    """A round's reviewed tasks as the product's evidence. `reasons`: why each pick (an index
    into `candidates`) was picked; a comparison's reason is that of the pick that brought its
    group in (its first picked member: groups are taken in pick order)."""
    reviews: list[Review] = []
    compared: list[Compared] = []
    for task in tasks:
        reason = next((reasons[i] for i in task.picks if i in reasons), None)
        if reason is None:
            continue
        if task.work.kind == "compare":
            orders = tuple((candidates[a].reward, candidates[b].reward) for a, b in task.orders)
            kind = kind_of(verdicts[task.worst].categories) if task.worst is not None else ()
            compared.append(Compared(reason, orders, kind))
        else:
            reviews += [Review(reason, candidates[i].reward, verdicts[i].rating, round_key,
                               kind_of(verdicts[i].categories))
                        for i in task.picks]  # fmt: skip
    return reviews, compared
