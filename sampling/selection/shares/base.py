"""What a budget share is and what it picks from.

A share is a named part of a review budget and a picker: given the round's near-duplicate
groups (`Pool`) and how many reviews it may ask for, the picker says which groups it takes and
why (`Take`). Shares pick in their order, each from the groups the earlier ones left; what
they all leave goes to the lowest rewards (`sampling.selection.budget.choose`).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol


class ShareSettings(Protocol):
    """What the built-in shares read of the `budget` section (`BudgetConfig`, given whole; not
    imported here, as the config checks its share names against this folder's registry)."""

    @property
    def random_share(self) -> float: ...
    @property
    def audit_share(self) -> float: ...
    @property
    def uncertainty_share(self) -> float: ...
    @property
    def shares(self) -> Mapping[str, float]: ...
    @property
    def model_component(self) -> str: ...


@dataclass(frozen=True)
class Candidate:
    """One scored sample that may be picked. `position` is the caller's own handle (an index in
    its pool, say); `choose` ignores it and refers to candidates by their index in its input."""

    prompt: str
    response: str
    reward: float
    reward_details: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    group_id: int = 0
    step: int = 0
    position: int = 0


@dataclass(frozen=True)
class Flag:
    """A suspect feature (`about`: how a reviewer reads it) and the candidates carrying it
    (indices into the candidates given to `choose`), strongest suspect first."""

    about: str
    carriers: frozenset[int]


@dataclass(frozen=True)
class Group:
    """Near-duplicate candidates, reviewed once through their representative."""

    representative: int  # index into the candidates
    members: tuple[int, ...]  # itself first
    reward: float  # the members' mean
    uncertainty: float | None  # the members' mean, where known
    prompt: str
    low_mode: str  # the component it is worst at: its failure mode
    high_mode: str  # the component it is best at: what a high reward came from


@dataclass(frozen=True)
class Take:
    """A group a share picks (its number in `Pool.groups`), why, and what about (a suspect)."""

    group: int
    reason: str
    about: str | None = None


@dataclass
class Pool:
    """What shares pick from in one round."""

    candidates: Sequence[Candidate]
    groups: list[Group]
    group_of: dict[int, int]  # candidate index -> its group's number (candidates not covered)
    finite: list[int]  # the candidates with a finite reward, in order
    flags: Sequence[Flag]  # the watch's suspects, strongest first
    config: ShareSettings
    seed: int
    taken: set[int] = field(default_factory=set)  # group numbers the earlier shares took

    def open_groups(self) -> list[int]:
        return [number for number in range(len(self.groups)) if number not in self.taken]


Picker = Callable[[Pool, int], list[Take]]


@dataclass(frozen=True)
class Share:
    """A registered share: its name (the key of `sampling.budget.shares` for one of your own),
    the reason its count is reported under, its part of the budget, and its picker."""

    name: str
    count_reason: str
    fraction: Callable[[ShareSettings], float]
    pick: Picker


def spread(
    groups: list[Group],
    open_groups: list[int],
    count: int,
    rank: Callable[[Group], float],
    mode: Literal["low_mode", "high_mode"] = "low_mode",
) -> list[int]:
    """`count` groups, best `rank` first, each time among those whose prompt and failure mode
    have been picked least (a lazy heap: a group's times-picked only ever grow)."""
    prompt_uses: Counter[str] = Counter()
    mode_uses: Counter[str] = Counter()

    def used(number: int) -> int:
        group = groups[number]
        return prompt_uses[group.prompt] + mode_uses[getattr(group, mode)]

    heap = [(0, rank(groups[n]), n) for n in open_groups]
    heapq.heapify(heap)
    chosen: list[int] = []
    while heap and len(chosen) < count:
        uses, value, number = heapq.heappop(heap)
        now = used(number)
        if now > uses:
            heapq.heappush(heap, (now, value, number))
            continue
        chosen.append(number)
        prompt_uses[groups[number].prompt] += 1
        mode_uses[getattr(groups[number], mode)] += 1
    return chosen
