"""What the run report shows, read from a run's files in one pass: the metric history
(`metrics.jsonl`), the reward distributions (`histograms.jsonl`, else the rollouts), per-step
response lengths, the reward-hacking analysis over the rollouts (`analyze_rows`, as
`lowtide logs bias`), the suspects the trainer's watch logged, and the lowest- and highest-reward
samples. Rollouts come through `lowtide ingest`'s readers, so a verl `rollout_data_dir` or TRL's
`completions/` gives the same report, less what only our trainer logs (KL, token lengths)."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rl import jsonl
from rl.numbers import finite_or_none
from rl.samples import make_sample_id
from rl.tracking.backends.local_files import (
    HISTOGRAMS_FILE,
    METRICS_FILE,
    TABLES_DIR,
    table_file_prefix,
)
from sampling.selection.hacking import WatchConfig, WatchReport, analyze_rows
from sampling.selection.hacking.table import SUSPECTS_TABLE, shown_report
from sampling.sources.ingest.dump_rows import read_dump
from sampling.sources.ingest.formats import FormatError, expected_files, list_files, locate
from sampling.sources.ingest.rows import MAX_STEP, DumpRow

# The texts as they may be shown (the run's redaction); one call per sample, numbered together.
Redact = Callable[[Sequence[str]], Sequence[str]]
REWARD_HISTOGRAM = "reward/distribution"
SOURCES = {"lowtide": "lowtide run", "verl": "verl rollout dump", "trl": "TRL completions"}


class ReportError(ValueError):
    """Nothing to report from this directory; the message is one line saying why."""


class NothingYet(ReportError):
    """The directory is one a run or a trainer writes, but nothing is in it yet."""


@dataclass(frozen=True)
class ShownSample:
    step: int
    reward: float
    prompt: str
    response: str
    components: Mapping[str, float]
    sample_id: str
    truncated: bool


@dataclass
class StepStats:
    """One step's rollouts: finite rewards and response lengths (characters)."""

    rewards: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class LoggedSuspects:
    """The latest suspects table the trainer's watch logged (tables/hacking_suspects-step-N)."""

    step: int
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class ReportData:
    name: str
    directory: Path
    source: str  # SOURCES' words
    metrics: Mapping[str, list[tuple[int, float]]]  # name -> (step, value), from metrics.jsonl
    reward_histograms: list[tuple[int, list[float]]]  # (step, rewards) in step order
    histograms_from: str  # "histograms.jsonl" or "rollouts"
    steps: Mapping[int, StepStats]  # from the rollouts, in step order
    watch: WatchReport | None  # None: no rollouts to analyse
    logged_suspects: LoggedSuspects | None
    lowest: tuple[ShownSample, ...]
    highest: tuple[ShownSample, ...]
    samples: int  # rollouts read with a finite reward
    problems: tuple[str, ...]  # lines and files skipped
    redacted: bool
    redacted_with: str  # whose sampling.redact settings, said on the page


def collect(
    directory: Path,
    dump_format: str = "auto",
    *,
    top: int = 10,
    shown: int = 5,
    redact: Redact | None = None,
    redacted_with: str = "the defaults",
) -> ReportData:
    """Everything the report shows. `directory` is `<save_dir>/<run>` or a dump directory;
    ReportError when it holds neither metrics nor rollouts."""
    metrics_file = directory / METRICS_FILE
    is_run = metrics_file.is_file()
    if is_run and dump_format == "auto":
        dump_format = "lowtide"
    try:
        location = locate(directory, dump_format)
        files = list_files(location) if location is not None else []
    except FormatError as error:
        raise ReportError(str(error)) from None
    if not is_run and not files:
        raise NothingYet(
            f"{directory}: no run logs (no {METRICS_FILE}) and no dump files "
            f"(expected {expected_files()})"
        )
    problems: list[str] = []
    metrics = _metrics(metrics_file, problems.append) if is_run else {}
    histograms = _histograms(directory / HISTOGRAMS_FILE, problems.append) if is_run else []
    steps: dict[int, StepStats] = defaultdict(StepStats)
    picker = _Extremes(shown)
    watch = None
    if location is not None and files:
        run_id = location.run_dir.resolve().name
        rows = _observed(read_dump(location, problems.append, files=files), steps, picker)
        config = WatchConfig.for_run(len({file.step for file in files}), top=top)
        watch = analyze_rows(rows, config, run_id=run_id)
        lowest, highest = picker.result(run_id)
    else:
        lowest, highest = (), ()
    samples = sum(len(stats.rewards) for stats in steps.values())
    if not metrics and not samples:
        raise NothingYet(
            f"{directory}: nothing to report yet: no metrics and no scored rollouts logged"
        )
    histograms_from = "histograms.jsonl"
    if not histograms:
        histograms_from = "rollouts"
        histograms = [(step, s.rewards) for step, s in sorted(steps.items()) if s.rewards]
    logged = _logged_suspects(directory / TABLES_DIR, problems.append) if is_run else None
    if redact is not None:
        lowest = tuple(_redacted_sample(s, redact) for s in lowest)
        highest = tuple(_redacted_sample(s, redact) for s in highest)
        if watch is not None:
            watch = shown_report(watch, redact)
        if logged is not None:
            logged = _redacted_logged(logged, redact)
    fmt = location.format.name if location is not None and files else "lowtide"
    return ReportData(
        name=(location.run_dir if location is not None else directory).resolve().name,
        directory=directory,
        source=SOURCES.get(fmt, fmt),
        metrics=metrics,
        reward_histograms=histograms,
        histograms_from=histograms_from,
        steps=dict(sorted(steps.items())),
        watch=watch if samples else None,
        logged_suspects=logged,
        lowest=lowest,
        highest=highest,
        samples=samples,
        problems=tuple(problems),
        redacted=redact is not None,
        redacted_with=redacted_with,
    )


def _observed(
    rows: Iterator[DumpRow], steps: dict[int, StepStats], picker: _Extremes
) -> Iterator[DumpRow]:
    """The rows on to the analysis, counted on the way (the run is read once)."""
    for row in rows:
        if math.isfinite(row.reward):
            stats = steps[row.step]
            stats.rewards.append(row.reward)
            stats.lengths.append(len(row.response))
            picker.add(row)
        yield row


class _Extremes:
    """The `n` lowest- and `n` highest-reward rows seen, keeping nothing else."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._low: list[tuple[float, int, DumpRow]] = []  # max-heap on reward (negated)
        self._high: list[tuple[float, int, DumpRow]] = []  # min-heap on reward
        self._seen = 0

    def add(self, row: DumpRow) -> None:
        self._seen += 1
        if self.n <= 0:
            return
        low, high = (-row.reward, -self._seen, row), (row.reward, -self._seen, row)
        if len(self._low) < self.n:
            heapq.heappush(self._low, low)
            heapq.heappush(self._high, high)
            return
        if low[:2] > self._low[0][:2]:
            heapq.heapreplace(self._low, low)
        if high[:2] > self._high[0][:2]:
            heapq.heapreplace(self._high, high)

    def result(self, run_id: str) -> tuple[tuple[ShownSample, ...], tuple[ShownSample, ...]]:
        lowest = [item[2] for item in sorted(self._low, key=lambda item: item[:2], reverse=True)]
        highest = [item[2] for item in sorted(self._high, key=lambda item: item[:2], reverse=True)]
        return (
            tuple(_shown(row, run_id) for row in lowest),
            tuple(_shown(row, run_id) for row in highest),
        )


def _shown(row: DumpRow, run_id: str) -> ShownSample:
    # The id `lowtide logs search` and `logs bias` give the row (and our tracker, for its own).
    sample_id = make_sample_id(run_id, row.step, 0, row.index, row.prompt, row.response)
    return ShownSample(
        row.step, row.reward, row.prompt, row.response, dict(row.reward_details), sample_id,
        row.truncated,
    )  # fmt: skip


def _metrics(path: Path, on_problem: Callable[[str], None]) -> dict[str, list[tuple[int, float]]]:
    """Per metric, (step, value) in step order; a step logged at several stages (or again after
    a resume) keeps its first value of each metric, as `read_run` does."""
    per_step: dict[int, dict[str, float]] = defaultdict(dict)
    for step, row in _stepped_rows(path, on_problem):
        values = per_step[step]
        for name, value in row.items():
            number = finite_or_none(value)
            if number is not None and name != "step":
                values.setdefault(name, number)
    series: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for step in sorted(per_step):
        for name, value in per_step[step].items():
            series[name].append((step, value))
    return dict(series)


def _histograms(path: Path, on_problem: Callable[[str], None]) -> list[tuple[int, list[float]]]:
    if not path.is_file():
        return []
    found: dict[int, list[float]] = {}
    for step, row in _stepped_rows(path, on_problem):
        values = row.get("values")
        if row.get("name") != REWARD_HISTOGRAM:
            continue
        if isinstance(values, list):
            found[step] = [number for v in values if (number := finite_or_none(v)) is not None]
    return sorted(found.items())


def _logged_suspects(folder: Path, on_problem: Callable[[str], None]) -> LoggedSuspects | None:
    prefix = table_file_prefix(SUSPECTS_TABLE)
    files = sorted(folder.glob(f"{prefix}*.jsonl")) if folder.is_dir() else []
    if not files:
        return None
    latest = files[-1]  # the step is zero-padded: the name sorts by it
    try:
        step = int(latest.stem.removeprefix(prefix))
    except ValueError:
        return None
    rows = tuple(_rows(latest, on_problem))
    return LoggedSuspects(step, rows)


def _redacted_sample(sample: ShownSample, redact: Redact) -> ShownSample:
    prompt, response = redact([sample.prompt, sample.response])
    return replace(sample, prompt=prompt, response=response)


def _redacted_logged(logged: LoggedSuspects, redact: Redact) -> LoggedSuspects:
    rows = []
    for row in logged.rows:
        texts = [str(row.get(name, "")) for name in ("feature", "example", "description")]
        feature, example, description = redact(texts)
        rows.append({**row, "feature": feature, "example": example, "description": description})
    return replace(logged, rows=tuple(rows))


def _rows(path: Path, on_problem: Callable[[str], None]) -> list[dict[str, Any]]:
    """The file's objects; a bad line (a killed run may cut its last one) or a file that cannot
    be read is one problem line, and skipped."""
    return [row for _, row in _numbered_rows(path, on_problem)]


def _stepped_rows(path: Path, on_problem: Callable[[str], None]) -> list[tuple[int, dict]]:
    """(step, object) of the file's rows; a row without a step a chart can place is a problem
    line too, and skipped."""
    found = []
    for number, row in _numbered_rows(path, on_problem):
        step = _step(row)
        if step is None:
            on_problem(f"{path}:{number}: 'step' is not a whole number; skipped")
        else:
            found.append((step, row))
    return found


def _numbered_rows(path: Path, on_problem: Callable[[str], None]) -> list[tuple[int, dict]]:
    def bad_line(number: int, problem: str) -> None:
        on_problem(f"{path}:{number}: {problem}; skipped")

    try:
        # Anyone's run: its lines are bounded (size, nesting).
        return list(jsonl.read_jsonl(path, bad_line, max_line_bytes=jsonl.MAX_LINE_BYTES))
    except (OSError, UnicodeDecodeError) as error:
        on_problem(f"{path}: cannot read it ({error}); skipped")
        return []


def _step(row: Mapping[str, Any]) -> int | None:
    """The row's step: a whole number a chart can place (a float holds it)."""
    step = row.get("step")
    if not isinstance(step, int) or isinstance(step, bool) or abs(step) > MAX_STEP:
        return None
    return step
