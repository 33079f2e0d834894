"""A budget that learns: credit each selection reason with what its reviews taught, and share
the next budget by that credit.

**The credit.** A review teaches the reward model most where the reviewer's verdict contradicts
the reward the sample was given. Rewards and ratings are on different scales, so the credit is
read from orders: for one reviewed pick, take every other review of the same round that the
reviewer rated differently, and count the share of those pairs that the reward put in the other
order (a reward tie counts half: the reward did not tell apart what the reviewer did). That is
the pick's *contradiction*, in [0, 1]; a reason's credit is the mean contradiction of its picks.
It needs nothing but what the export writes of a rating (reward, rating, round) and why the
sample was picked, it is about the pairwise order that the reward model's held-out accuracy
measures, and it counts a low rating on a high reward (reward hacking found by the audit) and a
high rating on a low reward (a good answer the reward punished) alike. Rewards of different
rounds come from different reward models, so pairs are only made within a round. A pick with
no differently rated partner is no evidence either way and is left out.

**Repeats teach less.** A pick's contradiction is weighted by how often its lesson was already
taught: its *kind* is the failure categories the reviewer named (none, for a response they did
not fault), and each of the `n` reviewed picks of one kind weighs `n ** -repeat_discount`. So a
kind's total credit grows as `n ** (1 - repeat_discount)`, not as `n`: twenty high rewards
rated "verbose" earn less than twenty times one, and a reason that keeps finding the one failure the
reward model was already shown does not take the budget from reasons that find others. With
`repeat_discount: 0` every contradiction counts alike. The weight needs only the counts, so the
order of the reviews still changes nothing.

**The shares.** Reasons are counted in four buckets: random, audit (the watch's suspects and
the highest rewards share the audit share), uncertain, and the lowest rewards (their fallback
picks too: they are the lowest rewards). Each bucket's credit is smoothed toward the mean of all
reviewed picks with `prior_reviews` pseudo-reviews, so a bucket with little feedback moves
little. The next share of a bucket is its configured share times its smoothed credit over that
mean, renormalised to sum to 1 (what the three named shares leave goes to the lowest rewards,
as always). A bucket configured at 0 stays at 0: it is switched off, and it earns no evidence.
`random_share` never goes below `random_floor` (default: the configured random share), so that
accuracy measured on the random picks stays unbiased; the others give way in proportion. With
no evidence at all, or no contradiction anywhere, the configured shares come back unchanged.
Pure and deterministic: the same reviews and config give the same shares.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from sampling.config import BudgetConfig

Bucket = Literal["random", "audit", "uncertain", "low_reward"]
BUCKETS: tuple[Bucket, ...] = ("random", "audit", "uncertain", "low_reward")
# sampling.selection.budget.Reason -> the share it is picked from. Other reasons (a searched
# sample, another policy's pick) are not the budget's and teach the split nothing.
BUCKET_OF: Mapping[str, Bucket] = {
    "random": "random",
    "suspect": "audit",
    "audit_high_reward": "audit",
    "uncertain": "uncertain",
    "low_reward": "low_reward",
    "fallback": "low_reward",
}


@dataclass(frozen=True)
class Review:
    """One reviewed pick: why it was picked, the reward it was given, the reviewer's rating, and
    the round (run) it belongs to: rewards are compared only within one."""

    reason: str
    reward: float
    rating: float
    round: str = ""
    kind: tuple[str, ...] = ()  # the failure categories named (sorted); () for no fault


@dataclass(frozen=True)
class Credit:
    """A bucket's evidence: its reviews that had a differently rated partner, the sum of their
    contradictions, and that sum with repeats discounted (None: no discount), which the split
    goes by."""

    reviews: int = 0
    contradiction: float = 0.0
    discounted: float | None = None

    @property
    def rate(self) -> float | None:
        """The share of orders its reviews contradicted, as a person reads it."""
        return self.contradiction / self.reviews if self.reviews else None

    @property
    def earned(self) -> float:
        return self.contradiction if self.discounted is None else self.discounted


@dataclass(frozen=True)
class Shares:
    """How a budget is split; `low_reward` is what the other three leave."""

    random: float
    audit: float
    uncertain: float

    @property
    def low_reward(self) -> float:
        return max(0.0, 1.0 - (self.random + self.audit + self.uncertain))

    @classmethod
    def of(cls, config: BudgetConfig) -> Shares:
        return cls(config.random_share, config.audit_share, config.uncertainty_share)

    def applied_to(self, config: BudgetConfig) -> BudgetConfig:
        """`config` with these shares (validated: they fit), its random floor pinned to the one
        they were learned under."""
        return BudgetConfig.model_validate(
            {
                **config.model_dump(),
                "random_share": self.random,
                "audit_share": self.audit,
                "uncertainty_share": self.uncertain,
                "random_floor": min(random_floor(config), self.random),
            }
        )

    def as_dict(self) -> dict[str, float]:
        return {bucket: self.share(bucket) for bucket in BUCKETS}

    def share(self, bucket: Bucket) -> float:
        return self.low_reward if bucket == "low_reward" else getattr(self, bucket)

    def line(self) -> str:
        """`random 0.10, audit 0.20, uncertain 0.30, lowest 0.40`: for a console line."""
        names = {"low_reward": "lowest"}
        return ", ".join(f"{names.get(b, b)} {self.share(b):.2f}" for b in BUCKETS)


def contradictions(reviews: Iterable[Review]) -> list[tuple[Review, float]]:
    """Each review with a differently rated partner in its round, and its contradiction: the
    share of those partners the reward put in the other order (a reward tie counts half)."""
    by_round: dict[str, list[Review]] = defaultdict(list)
    for review in reviews:
        if math.isfinite(review.reward) and math.isfinite(review.rating):
            by_round[review.round].append(review)
    found: list[tuple[Review, float]] = []
    for round_key in sorted(by_round):
        members = by_round[round_key]
        for review in members:
            pairs, against = 0, 0.0
            for other in members:
                if other.rating == review.rating:
                    continue  # the reviewer did not order them: no verdict to contradict
                pairs += 1
                agree = (review.reward - other.reward) * (review.rating - other.rating)
                against += 1.0 if agree < 0 else 0.5 if agree == 0 else 0.0
            if pairs:
                found.append((review, against / pairs))
    return found


@dataclass(frozen=True)
class Compared:
    """One reviewed comparison pick: why its group was picked, the rewards of each order its
    reviewers gave, (the preferred one's reward, the other's), and the failure categories named
    for the worst (its kind)."""

    reason: str
    orders: tuple[tuple[float, float], ...]
    kind: tuple[str, ...] = ()

    @property
    def contradiction(self) -> float | None:
        """The share of its orders the reward put the other way (a tie counts half); None
        without an order between finite rewards."""
        finite = [(a, b) for a, b in self.orders if math.isfinite(a) and math.isfinite(b)]
        if not finite:
            return None
        return math.fsum(1.0 if a < b else 0.5 if a == b else 0.0 for a, b in finite) / len(finite)


def credits(
    reviews: Iterable[Review], compared: Iterable[Compared] = (), repeat_discount: float = 0.0
) -> dict[Bucket, Credit]:
    """Each bucket's evidence from reviewed picks, rated ones and comparisons (a comparison's
    verdict orders its own group, so it needs no partner), each contradiction weighted down by
    the repeats of its kind (module docstring). A reason outside the budget counts nowhere.
    Summed exactly (fsum), so the order the reviews come in never changes a share."""
    found: list[tuple[Bucket, tuple[str, ...], float]] = []
    for review, contradiction in contradictions(reviews):
        bucket = BUCKET_OF.get(review.reason)
        if bucket is not None:
            found.append((bucket, review.kind, contradiction))
    for pick in compared:
        bucket, rate = BUCKET_OF.get(pick.reason), pick.contradiction
        if bucket is not None and rate is not None:
            found.append((bucket, pick.kind, rate))
    repeats = Counter(kind for _, kind, _ in found)
    evidence: dict[Bucket, Credit] = {}
    for bucket in BUCKETS:
        mine = [(kind, contradiction) for b, kind, contradiction in found if b == bucket]
        raw = math.fsum(contradiction for _, contradiction in mine)
        discounted = math.fsum(c * repeats[kind] ** -repeat_discount for kind, c in mine)
        evidence[bucket] = Credit(len(mine), raw, discounted)
    return evidence


def next_shares(config: BudgetConfig, evidence: Mapping[Bucket, Credit]) -> Shares:
    """The split for the next budget: the configured shares weighted by each bucket's smoothed
    credit, the random floor kept. No evidence (or no contradiction anywhere): the configured
    shares, unchanged."""
    configured = Shares.of(config)
    reviewed = sum(evidence.get(bucket, Credit()).reviews for bucket in BUCKETS)
    contradicted = math.fsum(evidence.get(bucket, Credit()).earned for bucket in BUCKETS)
    mean = contradicted / reviewed if reviewed else None
    if not mean:  # nothing reviewed, or every verdict agreed with the reward: no direction
        return configured
    prior = config.prior_reviews
    weights: dict[Bucket, float] = {}
    for bucket in BUCKETS:
        credit = evidence.get(bucket, Credit())
        smoothed = (credit.earned + prior * mean) / (credit.reviews + prior)
        # A bucket without evidence keeps its weight exactly: no float drift from 1.0.
        ratio = smoothed / mean if credit.reviews else 1.0
        weights[bucket] = configured.share(bucket) * ratio
    scale = math.fsum(weights.values())
    if scale <= 0:
        return configured
    shares = {bucket: weight / scale for bucket, weight in weights.items()}
    return _with_random_floor(shares, config)


def random_floor(config: BudgetConfig) -> float:
    """The least random share the adaptive split may give (the configured one by default)."""
    return config.random_share if config.random_floor is None else config.random_floor


def _with_random_floor(shares: dict[Bucket, float], config: BudgetConfig) -> Shares:
    floor = random_floor(config)
    if shares["random"] < floor:
        rest = 1.0 - shares["random"]  # > 0: random is below a floor of at most 1
        keep = (1.0 - floor) / rest
        shares = {b: floor if b == "random" else share * keep for b, share in shares.items()}
    return Shares(shares["random"], shares["audit"], shares["uncertain"])
