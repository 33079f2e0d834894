"""From the engine's state to a ranked, folded list of suspects.

1. Test: every tracked feature with `min_groups` informative groups is one hypothesis; its
   per-group lifts get a one-sided t-test, and the Benjamini-Hochberg rule at `alpha` over all
   of them decides which are paid (a lift must also reach `min_effect` reward deviations).
2. Growth: a paid feature is a suspect when the share of responses carrying it rose from the
   first window to the latest by `min_growth` with a two-proportion z of `growth_z`; a paid
   feature that is not spreading is reported apart, as lift only.
3. Rank: suspects by effect x rise (a strong lift that spread widely first), lift-only by z;
   ties go to the longer phrase.
4. Fold: a feature that only comes with a stronger one is folded under it ("i", "agree" and
   "i agree with" under "i agree"; see `folding`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from statistics import NormalDist

from sampling.selection.hacking.engine import Kept, WatchEngine
from sampling.selection.hacking.features import Feature
from sampling.selection.hacking.folding import assembled_phrase, fold
from sampling.selection.hacking.lift import LiftStats, component_lift
from sampling.selection.hacking.pacing import pace
from sampling.selection.hacking.stats import benjamini_hochberg, proportion_z, t_sf
from sampling.selection.hacking.suspects import Example, Suspect, WatchReport

MAX_EFFECT = 100.0  # an effect when the reward does not vary within groups otherwise
MAX_COMPONENTS = 20
FOLD_POOL = 5  # candidates per reported suspect that folding looks at
FOLD_POOL_LEAST = 50  # ... and at least this many: a small `top` folds and spells out the same


@dataclass
class _Candidate:
    key: str
    feature: Feature
    stats: LiftStats
    t: float
    p: float
    effect: float
    then: tuple[int, int]
    now: tuple[int, int] | None
    growth_z: float
    growing: bool
    score: float
    carriers: set[int] = field(default_factory=set)  # indexes into the kept samples
    folded: list[Feature] = field(default_factory=list)
    folded_carriers: list[set[int]] = field(default_factory=list)
    cluster: set[int] = field(default_factory=set)
    parts: list[set[int]] = field(default_factory=list)


def analyze(engine: WatchEngine) -> WatchReport:
    config = engine.config
    sd = engine.spread.sd
    tested = [(key, stats) for key, stats in engine.tracked.items() if stats.n >= config.min_groups]
    gate = NormalDist().inv_cdf(1 - config.alpha)  # below it p > alpha: it cannot pass
    passing: list[tuple[float, str, LiftStats, float, float]] = []
    for key, stats in tested:
        pace()
        mean = stats.mean
        if mean <= 0:
            continue
        effect = min(MAX_EFFECT, mean / sd) if sd > 0 else MAX_EFFECT
        if effect < config.min_effect:
            continue
        t = stats.t()
        if t <= gate:
            continue
        passing.append((t_sf(t, stats.n - 1), key, stats, t, effect))
    passing.sort(key=lambda row: (row[0], -row[3]))
    passing = passing[: benjamini_hochberg([row[0] for row in passing], len(tested), config.alpha)]
    candidates = [_candidate(engine, *row) for row in passing]
    growing = sorted(
        (c for c in candidates if c.growing),
        key=lambda c: (-c.score, -c.t, -c.feature.words, c.key),
    )
    paid = sorted(
        (c for c in candidates if not c.growing),
        key=lambda c: (-c.score, -c.effect, -c.feature.words, c.key),
    )
    looked_at = max(FOLD_POOL * config.top, FOLD_POOL_LEAST)
    pool = growing[:looked_at] + paid[:looked_at]
    samples = list(engine.kept)
    _find_carriers(samples, pool)
    groups = _kept_groups(samples)
    kept = fold(
        pool,
        samples,
        list(groups.values()),
        overlap=config.fold_overlap,
        top=config.top,
        min_groups=config.min_groups,
    )
    suspects = [_suspect(engine, samples, c, groups) for c in kept if c.growing]
    lift_only = [_suspect(engine, samples, c, groups) for c in kept if not c.growing]
    return WatchReport(
        suspects=tuple(suspects[: config.top]),
        lift_only=tuple(lift_only[: config.top]),
        steps=engine.chunks,
        samples=engine.samples,
        groups=engine.groups,
        features_tracked=len(engine.tracked),
        features_tested=len(tested),
        reward_sd=sd,
        first_window=engine.first_window,
        latest_window=engine.latest_window,
    )


def _candidate(
    engine: WatchEngine, p: float, key: str, stats: LiftStats, t: float, effect: float
) -> _Candidate:
    config = engine.config
    then = engine.share_then(key)
    now = engine.share_now(key)
    rise = z = 0.0
    if now is not None and then[1]:
        rise = now[0] / now[1] - then[0] / then[1]
        z = proportion_z(then[0], then[1], now[0], now[1])
    grew = now is not None and rise >= config.min_growth and z >= config.growth_z
    score = effect * rise if grew else min(t, 1e9)
    feature = _feature(engine, key)
    return _Candidate(key, feature, stats, t, p, effect, then, now, z, grew, score)


def _feature(engine: WatchEngine, key: str) -> Feature:
    feature = Feature.from_key(key)
    threshold = engine.threshold(key)
    if threshold is None:
        return feature
    return Feature(feature.kind, f"{feature.text} (p{100 * threshold.quantile:.0f})")


def _find_carriers(samples: list[Kept], pool: list[_Candidate]) -> None:
    by_id = {c.stats.id: c for c in pool}
    wanted = set(by_id)
    for index, kept in enumerate(samples):
        for feature_id in wanted.intersection(kept.ids):
            by_id[feature_id].carriers.add(index)


def _kept_groups(kept: list[Kept]) -> dict[tuple[int, int], list[int]]:
    groups: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    for index, sample in enumerate(kept):
        groups[sample.group].append(index)
    return {group: members for group, members in groups.items() if len(members) > 1}


def _suspect(
    engine: WatchEngine,
    kept: list[Kept],
    c: _Candidate,
    groups: dict[tuple[int, int], list[int]],
) -> Suspect:
    stats = c.stats
    variance = max(0.0, (stats.sum_sq - stats.n * stats.mean**2) / max(1, stats.n - 1))
    ranked = sorted(c.carriers, key=lambda i: (-kept[i].reward, i))
    examples = tuple(
        Example(kept[i].sample_id, kept[i].step, kept[i].reward, kept[i].excerpt)
        for i in ranked[: engine.config.examples]
    )
    then_share = c.then[0] / c.then[1] if c.then[1] else 0.0
    now_share = c.now[0] / c.now[1] if c.now is not None and c.now[1] else None
    return Suspect(
        feature=c.feature,
        lift=stats.mean,
        lift_se=math.sqrt(variance / stats.n),
        z=c.t,
        p_value=c.p,
        effect=c.effect,
        groups=stats.n,
        prevalence_then=then_share,
        prevalence_now=now_share,
        growth_z=c.growth_z,
        growing=c.growing,
        component_lifts=_component_lifts(kept, c.carriers, groups),
        examples=examples,
        folded=tuple(c.folded),
        phrase=assembled_phrase(c),
        score=c.score,
    )


def _component_lifts(
    kept: list[Kept],
    carriers: set[int],
    groups: dict[tuple[int, int], list[int]],
) -> dict[str, float]:
    names: list[str] = []
    for index in carriers:
        for name in kept[index].components:
            if name not in names and len(names) < MAX_COMPONENTS:
                names.append(name)
    touched = [groups[g] for g in {kept[i].group for i in carriers} if g in groups]
    found = {}
    for name in names:
        per_group = [
            [(i in carriers, kept[i].components[name]) for i in group if name in kept[i].components]
            for group in touched
        ]
        lift = component_lift(per_group)
        if lift is not None:
            found[name] = lift
    return found
