"""The scripted reviewer's work on a round's picks, as reward-model data and reviewer work.

Single mode: each pick is one task; the oracle rates it (a rating row) and, for a failure,
writes a better answer (a preference pair: better over the response).

Compare mode (`compare_tasks`): each pick's GRPO group is one task (a group once, however many
of its members were picked), showing up to `size` of its responses labelled A, B, ... in the
order they were generated. The oracle picks the best and the worst as lowtide loop's scripted
reviewer does (its highest rating, the first of a tie; its lowest, the last of a tie; when all
are rated alike the form still asks for two different ones: the first and the last), and
`annotation.comparison.comparison_pairs` turns that into preference pairs, as the export does.
Orders among responses the oracle rates alike are kept: the form asks for a best and a worst
only, so they are what the product would export too. When even the best is a failure the
reviewer writes a better answer, and the export's row for it is the better answer over the best
(the form asks for one better than the best); single mode writes one for every failure it sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from annotation.comparison import Verdict as Comparison
from annotation.comparison import comparison_pairs, labels_for
from annotation.reward_model.data import Pair, Rated
from bench.loop_value.costs import Work
from bench.loop_value.task import Verdict
from bench.loop_value.training import Rollout

COMPARE_SIZE = 4  # responses a comparison task shows (annotation's compare.size default)


@dataclass
class Reviewed:
    """One task's outcome: what it trains and what it cost the reviewer."""

    work: Work
    pairs: list[Pair] = field(default_factory=list)
    ratings: list[Rated] = field(default_factory=list)
    picks: list[int] = field(default_factory=list)  # candidates shown
    # A comparison's orders (preferred, other) as candidate indices: the adaptive budget's
    # evidence. The better answer's pair is not among them: it has no reward to contradict.
    orders: list[tuple[int, int]] = field(default_factory=list)
    worst: int | None = None  # a comparison's worst pick (candidate index)


def single_tasks(
    candidates: Sequence[Rollout], verdicts: Sequence[Verdict], picks: Sequence[int], prefix: str
) -> list[Reviewed]:
    tasks = []
    for index in picks:
        candidate, verdict = candidates[index], verdicts[index]
        sample_id = f"{prefix}-{candidate.sample_id}"
        wrote = bool(verdict.better) and verdict.better.strip() != candidate.response.strip()
        task = Reviewed(
            Work("single", 1, len(candidate.response), wrote),
            ratings=[Rated(candidate.prompt, candidate.response, verdict.rating, sample_id)],
            picks=[index],
        )
        if wrote:
            assert verdict.better is not None
            task.pairs.append(
                Pair(candidate.prompt, verdict.better, candidate.response, sample_id, written=True)
            )
        tasks.append(task)
    return tasks


def groups_of(
    candidates: Sequence[Rollout], picks: Sequence[int], size: int = COMPARE_SIZE
) -> list[list[int]]:
    """Each pick's group (its members in generation order, at most `size`, the pick among
    them), once per group, in the picks' order; a group of one is no comparison and is left
    out."""
    members: dict[int, list[int]] = {}
    for index, candidate in enumerate(candidates):
        members.setdefault(candidate.group_id, []).append(index)
    groups, seen = [], set()
    for pick in picks:
        group_id = candidates[pick].group_id
        if group_id in seen:
            continue
        seen.add(group_id)
        group = members[group_id]
        if len(group) > size:  # keep the pick: its group's first members beside it
            group = sorted([pick, *[i for i in group if i != pick][: size - 1]])
        if len(group) >= 2:
            groups.append(group)
    return groups


def compare_tasks(
    candidates: Sequence[Rollout],
    verdicts: Sequence[Verdict],
    groups: Sequence[Sequence[int]],
    prefix: str,
) -> list[Reviewed]:
    tasks = []
    for group in groups:
        shown = [candidates[i] for i in group]
        ratings = [verdicts[i].rating for i in group]
        best = ratings.index(max(ratings))
        worst = len(ratings) - 1 - ratings[::-1].index(min(ratings))
        if best == worst:  # all alike
            worst = len(ratings) - 1 if best == 0 else 0
        characters = sum(len(c.response) for c in shown)
        better = verdicts[group[best]].better if verdicts[group[best]].failure else None
        wrote = bool(better) and better.strip() != shown[best].response.strip()  # type: ignore[union-attr]
        task = Reviewed(Work("compare", len(group), characters, wrote), picks=list(group),
                        worst=group[worst])  # fmt: skip
        labels = labels_for(len(group))
        ids = [f"{prefix}-{c.sample_id}" for c in shown]
        texts = dict(zip(ids, (c.response for c in shown), strict=True))
        prompt = shown[0].prompt
        verdict = Comparison(labels[best], labels[worst])
        index_of = dict(zip(ids, group, strict=True))
        for chosen, rejected in comparison_pairs(ids, verdict):
            pair_id = f"{chosen}>{rejected}"
            task.pairs.append(Pair(prompt, texts[chosen], texts[rejected], pair_id))
            task.orders.append((index_of[chosen], index_of[rejected]))
        if wrote:
            assert better is not None
            task.pairs.append(
                Pair(prompt, better, shown[best].response, f"{ids[best]}-better", written=True)
            )
        tasks.append(task)
    return tasks
