"""From the engine's state to a ranked, folded list of suspects.

1. Test: every tracked feature with `min_groups` informative groups is one hypothesis; its
   per-group lifts get a one-sided t-test, and the Benjamini-Hochberg rule at `alpha` over all
   of them decides which are paid (a lift must also reach `min_effect` reward deviations).
2. Growth: a paid feature is a suspect when the share of responses carrying it rose from the
   first window to the latest by `min_growth` with a two-proportion z of `growth_z`; a paid
   feature that is not spreading is reported apart, as lift only.
3. Classes: paid words that fill the same slots ("two birds", "six birds") are also tested
   for growth together, as one feature (see `classes`): a reward paid for a kind of word
   spreads through many words, each of which may grow too little on its own.
4. Rank: suspects by effect x rise (a strong lift that spread widely first), lift-only by z;
   ties go to the longer phrase.
5. Fold: a feature that only comes with a stronger one is folded under it ("i", "agree" and
   "i agree with" under "i agree"; see `folding`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from statistics import NormalDist

from sampling.selection.hacking.classes import WordClass, paid_words_together, word_classes
from sampling.selection.hacking.engine import Kept, WatchEngine
from sampling.selection.hacking.features import Feature
from sampling.selection.hacking.folding import assembled_phrase, fold, jaccard
from sampling.selection.hacking.lift import LiftStats, component_lift, group_lifts
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
        judged = _paid_lift(stats, sd, config.min_effect, gate)
        if judged is not None:
            passing.append((judged[0], key, stats, *judged[1:]))
    passing.sort(key=lambda row: (row[0], -row[3]))
    passing = passing[: benjamini_hochberg([row[0] for row in passing], len(tested), config.alpha)]
    candidates = [_candidate(engine, *row) for row in passing]
    samples = list(engine.kept)
    groups = _kept_groups(samples)
    if config.word_classes:
        classes = word_classes(engine.tracked, [key for _, key, *_ in passing])
        classes += paid_words_together(classes, [c.key for c in candidates if not c.growing])
        candidates += _class_candidates(engine, classes, samples, groups, gate)
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
    _find_carriers(samples, pool)
    pool = _without_by_products(pool, config.fold_overlap)
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


def _paid_lift(
    stats: LiftStats, sd: float, min_effect: float, gate: float
) -> tuple[float, float, float] | None:
    """(p, t, effect) of a lift that may be paid: positive, at least `min_effect` reward
    deviations, t above the gate; None otherwise."""
    if stats.mean <= 0:
        return None
    effect = min(MAX_EFFECT, stats.mean / sd) if sd > 0 else MAX_EFFECT
    if effect < min_effect:
        return None
    t = stats.t()
    if t <= gate:
        return None
    return t_sf(t, stats.n - 1), t, effect


def _candidate(
    engine: WatchEngine, p: float, key: str, stats: LiftStats, t: float, effect: float
) -> _Candidate:
    feature = _feature(engine, key)
    then, now = engine.share_then(key), engine.share_now(key)
    return _judged(engine, key, feature, stats, p, t, effect, then, now)


def _judged(
    engine: WatchEngine,
    key: str,
    feature: Feature,
    stats: LiftStats,
    p: float,
    t: float,
    effect: float,
    then: tuple[int, int],
    now: tuple[int, int] | None,
) -> _Candidate:
    """A paid feature with its growth from the first window to the latest, and its score."""
    config = engine.config
    rise = z = 0.0
    if now is not None and then[1]:
        rise = now[0] / now[1] - then[0] / then[1]
        z = proportion_z(then[0], then[1], now[0], now[1])
    grew = now is not None and rise >= config.min_growth and z >= config.growth_z
    score = effect * rise if grew else min(t, 1e9)
    return _Candidate(key, feature, stats, t, p, effect, then, now, z, grew, score)


def _class_candidates(
    engine: WatchEngine,
    classes: list[WordClass],
    samples: list[Kept],
    groups: dict[tuple[int, int], list[int]],
    gate: float,
) -> list[_Candidate]:
    """Each class as a candidate, its lift and shares read from the kept samples: a response
    carries it when it carries any of its words, which are folded under it from the start."""
    config, sd = engine.config, engine.spread.sd
    words = {word for word_class in classes for word in word_class.members}
    ids = {engine.id_of[word]: word for word in words if word in engine.id_of}
    carrying: dict[str, set[int]] = {word: set() for word in words}
    for index, kept in enumerate(samples):  # one pass for every class's words
        for feature_id in ids.keys() & set(kept.ids):
            carrying[ids[feature_id]].add(index)
    found = []
    for number, word_class in enumerate(classes):
        per_word = {word: carrying[word] for word in word_class.members}
        carriers = set().union(*per_word.values())
        stats = LiftStats(-1 - number)  # never a tracked feature's id
        for members in groups.values():
            carrying_it = [(word_class.key,) if i in carriers else () for i in members]
            for _, lift in group_lifts([samples[i].reward for i in members], carrying_it):
                stats.add(lift)
        judged = _paid_lift(stats, sd, config.min_effect, gate)
        if stats.n < config.min_groups or judged is None:
            continue
        then, now = _class_shares(engine, samples, carriers, word_class.members)
        candidate = _judged(engine, word_class.key, word_class.feature, stats, *judged, then, now)
        candidate.carriers = carriers
        for word, word_carriers in per_word.items():
            candidate.folded.append(Feature("phrase", word))
            candidate.folded_carriers.append(word_carriers)
        found.append(candidate)
    return found


def _without_by_products(pool: list[_Candidate], overlap: float) -> list[_Candidate]:
    """The pool less each class whose carriers one other feature of it nearly shares (the
    words of a Cyrillic answer beside `Cyrillic script`): that feature says it better. Only the
    pool's carriers are looked up, so a run with thousands of paid features stays cheap."""
    singles = [c for c in pool if c.feature.kind != "class"]
    return [
        c
        for c in pool
        if c.feature.kind != "class"
        or not any(jaccard(c.carriers, single.carriers) >= overlap for single in singles)
    ]


def _class_shares(
    engine: WatchEngine, samples: list[Kept], carriers: set[int], members: tuple[str, ...]
) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """A class's (carrying, responses) in the first window and the latest: counted exactly
    where the kept samples still hold the window, else bounded from its words' counts so that
    the rise is never overstated (then: the sum of its words', now: the largest of them)."""
    then_steps = set(engine.first_steps)
    in_then = [i for i, kept in enumerate(samples) if kept.step in then_steps]
    if len(in_then) == engine.first_responses:
        then = (sum(i in carriers for i in in_then), engine.first_responses)
    else:
        bound = sum(engine.share_then(word)[0] for word in members)
        then = (min(bound, engine.first_responses), engine.first_responses)
    if not engine.latest:
        return then, None
    now_steps = {entry.step for entry in engine.latest}
    in_now = [i for i, kept in enumerate(samples) if kept.step in now_steps]
    if len(in_now) == engine.latest_responses:
        return then, (sum(i in carriers for i in in_now), engine.latest_responses)
    counts = [engine.share_now(word) for word in members]
    return then, (max((c[0] for c in counts if c), default=0), engine.latest_responses)


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
