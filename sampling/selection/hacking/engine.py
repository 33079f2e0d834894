"""The watch's state, updated one step at a time: each sample's features are read once, a
step's groups add their within-group lifts to each tracked feature, and two windows count how
many responses carry each feature (the first steps: 'then'; the latest: 'now').

Memory stays bounded over a long run: at most `max_features` features are tracked (the least
seen are pruned), the first window counts at most `max_first_window_keys` distinct features, the
latest window keeps only its steps' counts, and `keep_samples` recent samples are kept (their
tracked features as ids, reward, components, an excerpt) for examples, per-component lifts and
folding. Not thread-safe: one thread owns it (the watch's, or the offline caller).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rl.numbers import finite_or_none
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.features import MARK, NUMBERS, SHARES, SampleFeatures, extract
from sampling.selection.hacking.lift import LiftStats, Spread, group_lifts

# A reward model's outlier score (rl.rewards.representation): above 1, the response's
# representation lies farther from the starting policy's than 90% of those did.
OUTLIER_SUFFIX = "/outlier"
OUTLIER_KEY = f"{MARK}outlier{MARK}beyond p90"

EXCERPT_CHARS = 200


@dataclass(frozen=True)
class Scored:
    """One scored sample as the engine reads it."""

    step: int
    prompt: str
    response: str
    reward: float
    components: Mapping[str, float]
    sample_id: str


@dataclass(frozen=True)
class Threshold:
    """A number cut at a quantile of the first window: `words > 87` (its p90)."""

    key: str
    number: int  # index into NUMBERS
    above: bool
    value: float
    quantile: float

    def holds(self, numbers: tuple[float, ...]) -> bool:
        value = numbers[self.number]
        return value > self.value if self.above else value < self.value


@dataclass(frozen=True)
class Kept:
    """A recent sample, kept for examples, per-component lifts and folding."""

    sample_id: str
    step: int
    group: tuple[int, int]  # (step chunk, prompt hash)
    reward: float
    components: Mapping[str, float]
    ids: array  # ids of the tracked features it carries
    numbers: tuple[float, ...]
    excerpt: str


@dataclass(frozen=True)
class StepCounts:
    step: int
    responses: int
    counts: dict[str, int]  # tracked feature -> responses carrying it


@dataclass(frozen=True)
class _Pending:
    group: int
    reward: float
    components: Mapping[str, float]
    features: SampleFeatures
    sample_id: str
    excerpt: str


class WatchEngine:
    def __init__(self, config: WatchConfig | None = None) -> None:
        self.config = config or WatchConfig()
        self.tracked: dict[str, LiftStats] = {}
        self.key_of: dict[int, str] = {}  # id -> key, for the tracked features
        self.id_of: dict[str, int] = {}  # key -> id, the same
        self.spread = Spread()
        self.samples = 0  # with a finite reward, flushed
        self.skipped = 0  # without a finite reward: never counted
        self.groups = 0  # of two or more responses
        self.chunks = 0  # step chunks flushed (a step's samples, or part of them)
        self.first_counts: Counter[str] = Counter()
        self.first_responses = 0
        self.first_steps: list[int] = []
        self.first_floor = 0  # counts at or below it may have been dropped (bounded memory)
        self.thresholds: list[Threshold] | None = None  # set when the first window is complete
        self.latest: deque[StepCounts] = deque()
        self.latest_responses = 0
        self.kept: deque[Kept] = deque(maxlen=self.config.keep_samples)
        self._first_samples: list[tuple[tuple[int, int], float, tuple[float, ...]]] = []
        self._step: int | None = None
        self._buffer: list[_Pending] = []
        self._next_id = 0

    # ---- input -------------------------------------------------------------------------------

    def add(self, sample: Scored) -> None:
        """Read one sample; a new step number flushes the step before it. A sample without a
        finite reward (None, NaN, not a number) is counted as skipped."""
        reward = finite_or_none(sample.reward)
        if reward is None:
            self.skipped += 1
            return
        if sample.step != self._step:
            self.flush()
            self._step = sample.step
        config = self.config
        features = extract(
            sample.response,
            prompt=sample.prompt,
            max_ngram=config.max_ngram,
            affix_words=config.affix_words,
            head_chars=config.head_chars,
            tail_chars=config.tail_chars,
        )
        values = {
            name: float(value)
            for name, value in (sample.components or {}).items()
            if isinstance(value, int | float) and math.isfinite(value)
        }
        # "name/key" entries are a component's extras (its spread, its outlier score), not
        # components; an outlier score above 1 is a feature like a phrase.
        components = {name: value for name, value in values.items() if "/" not in name}
        if any(name.endswith(OUTLIER_SUFFIX) and value > 1 for name, value in values.items()):
            features = SampleFeatures(features.keys | {OUTLIER_KEY}, features.numbers)
        self._buffer.append(
            _Pending(
                hash(sample.prompt),
                reward,
                components,
                features,
                sample.sample_id,
                sample.response[:EXCERPT_CHARS],
            )
        )

    def flush(self) -> None:
        """Add the buffered step's groups and counts."""
        pending, self._buffer = self._buffer, []
        if not pending:
            return
        assert self._step is not None
        step, config = self._step, self.config
        self.chunks += 1
        chunk = self.chunks
        keysets = [self._keys_of(item.features) for item in pending]
        carrying: Counter[str] = Counter()
        for keys in keysets:
            carrying.update(keys)
        in_first = self.thresholds is None
        if in_first:
            self._count_first(carrying, len(pending), step)
            self._first_samples += [
                ((chunk, item.group), item.reward, item.features.numbers) for item in pending
            ]
        tracked, least = self.tracked, config.min_step_df
        candidates = {key for key, n in carrying.items() if n >= least or key in tracked}
        for key in candidates:
            stats = tracked.get(key) or self._admit(key)
            stats.carriers += carrying[key]
            stats.last_serial = chunk
        if not in_first:
            self._count_latest(StepCounts(step, len(pending), {k: carrying[k] for k in candidates}))
        present = [keys & candidates for keys in keysets]
        self._add_groups(pending, present, chunk)
        for item, keys in zip(pending, present, strict=True):
            ids = array("I", map(self.id_of.__getitem__, keys))
            self.kept.append(
                Kept(
                    item.sample_id, step, (chunk, item.group), item.reward, item.components,
                    ids, item.features.numbers, item.excerpt,
                )
            )  # fmt: skip
        self.samples += len(pending)
        if in_first and self._first_window_done():
            self._close_first_window()
        if len(tracked) > config.max_features:
            self._prune()

    # ---- reading the state -------------------------------------------------------------------

    def share_then(self, key: str) -> tuple[int, int]:
        """(responses carrying it, responses) in the first window."""
        return self.first_counts.get(key, 0), self.first_responses

    def share_now(self, key: str) -> tuple[int, int] | None:
        """(responses carrying it, responses) in the latest window; None before there is one."""
        if not self.latest:
            return None
        return sum(entry.counts.get(key, 0) for entry in self.latest), self.latest_responses

    def threshold(self, key: str) -> Threshold | None:
        for threshold in self.thresholds or ():
            if threshold.key == key:
                return threshold
        return None

    @property
    def first_window(self) -> tuple[int, int] | None:
        return (self.first_steps[0], self.first_steps[-1]) if self.first_steps else None

    @property
    def latest_window(self) -> tuple[int, int] | None:
        return (self.latest[0].step, self.latest[-1].step) if self.latest else None

    # ---- inside ------------------------------------------------------------------------------

    def _keys_of(self, features: SampleFeatures) -> frozenset[str]:
        if not self.thresholds:
            return features.keys
        cut = [t.key for t in self.thresholds if t.holds(features.numbers)]
        return features.keys.union(cut) if cut else features.keys

    def _admit(self, key: str) -> LiftStats:
        stats = LiftStats(self._next_id)
        self._next_id += 1
        self.tracked[key] = stats
        self.key_of[stats.id] = key
        self.id_of[key] = stats.id
        return stats

    def _add_groups(self, pending: list[_Pending], present: list[set[str]], chunk: int) -> None:
        by_prompt: defaultdict[int, list[int]] = defaultdict(list)
        for index, item in enumerate(pending):
            by_prompt[item.group].append(index)
        tracked = self.tracked
        for members in by_prompt.values():
            if len(members) < 2:
                continue
            rewards = [pending[i].reward for i in members]
            self.spread.add(rewards)
            self.groups += 1
            for key, lift in group_lifts(rewards, [present[i] for i in members]):
                stats = tracked[key]  # LiftStats.add, inline: once per feature and group
                stats.n += 1
                stats.sum += lift
                stats.sum_sq += lift * lift

    def _count_first(self, carrying: Counter[str], responses: int, step: int) -> None:
        self.first_counts.update(carrying)
        self.first_responses += responses
        self.first_steps.append(step)
        cap = self.config.max_first_window_keys
        while len(self.first_counts) > cap:  # the rarest go first: their share is near zero
            self.first_floor += 1
            floor = self.first_floor
            self.first_counts = Counter({k: n for k, n in self.first_counts.items() if n > floor})

    def _first_window_done(self) -> bool:
        config = self.config
        return (
            len(self.first_steps) >= config.window_steps
            and self.first_responses >= config.min_window_responses
        )

    def _close_first_window(self) -> None:
        """Cut the numbers at the first window's quantiles, and give those cuts the first
        window's counts and group lifts they would have had from the start."""
        samples, self._first_samples = self._first_samples, []
        self.thresholds = cuts = _thresholds(
            [numbers for _, _, numbers in samples], self.config.quantiles
        )
        groups: defaultdict[tuple[int, int], list[tuple[float, list[str]]]] = defaultdict(list)
        for group, reward, numbers in samples:
            keys = [t.key for t in cuts if t.holds(numbers)]
            self.first_counts.update(keys)
            groups[group].append((reward, keys))
        for cut in cuts:
            stats = self.tracked.get(cut.key) or self._admit(cut.key)
            stats.carriers += self.first_counts.get(cut.key, 0)
            stats.last_serial = self.chunks
        for members in groups.values():
            rewards = [reward for reward, _ in members]
            for key, lift in group_lifts(rewards, [keys for _, keys in members]):
                self.tracked[key].add(lift)
        ids = {cut.key: self.tracked[cut.key].id for cut in cuts}
        for kept in self.kept:  # all from the first window so far
            kept.ids.extend(ids[cut.key] for cut in cuts if cut.holds(kept.numbers))

    def _count_latest(self, counts: StepCounts) -> None:
        self.latest.append(counts)
        self.latest_responses += counts.responses
        config = self.config
        while len(self.latest) > config.window_steps:
            oldest = self.latest[0].responses
            if self.latest_responses - oldest < config.min_window_responses:
                break
            self.latest.popleft()
            self.latest_responses -= oldest

    def _prune(self) -> None:
        """Keep the three quarters most seen lately, then most seen in all."""
        keep = int(self.config.max_features * 0.75)
        recent = self.chunks - len(self.latest)
        ranked = sorted(
            self.tracked.items(),
            key=lambda item: (item[1].last_serial > recent, item[1].carriers),
            reverse=True,
        )
        for key, stats in ranked[keep:]:
            del self.tracked[key]
            del self.key_of[stats.id]
            del self.id_of[key]


def _thresholds(rows: list[tuple[float, ...]], quantiles: Iterable[float]) -> list[Threshold]:
    found: dict[str, Threshold] = {}
    for index, name in enumerate(NUMBERS):
        values = sorted(row[index] for row in rows)
        if not values:
            continue
        for q in sorted(quantiles, key=lambda q: abs(q - 0.5), reverse=True):  # outer first
            value = _quantile(values, q)
            above = q >= 0.5
            shown = f"{value:.2f}" if name in SHARES else f"{value:.0f}"
            key = f"{MARK}{name}{MARK}{'>' if above else '<'} {shown}"
            if key not in found:
                found[key] = Threshold(key, index, above, float(shown), q)
    return list(found.values())


def _quantile(values: list[float], q: float) -> float:
    position = q * (len(values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)
