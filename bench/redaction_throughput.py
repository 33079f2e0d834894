"""Redaction: what it costs the producer and what it takes out of ordinary text, in one run.

1. Records/s through the routing core (without the reward-hacking watch) and a real Producer
   into a redis-server of our own, 2 KB records (prose; every tenth carries an e-mail address,
   a phone number, a card and a key), redaction on vs off, interleaved runs, this process
   pinned to one core (goals: on/off >= 0.5, and on > 2,000 records/s);
2. what each finder costs per 2 KB record, so the expensive ones are known;
3. false positives: everything redacted in the quickstart prompts and in a few pages of prose
   (bench/redaction/prose.txt) that hold no personal data or secrets; and, by kind, in seeded
   2 KB chunks of the installed packages' own code and docs (what a coding rollout shows: most
   finds there are package authors' names and e-mail addresses and the example numbers of
   phone and ID libraries, the rest false positives).
Knobs: BENCH_RECORDS (10000), BENCH_RUNS (5), BENCH_CODE_CHUNKS (4000).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _child_run import own_redis_server
from _quick import announce, knob

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
RECORDS = knob("RECORDS", 10000, 500)
RUNS = knob("RUNS", 5, 1)
CODE_CHUNKS = knob("CODE_CHUNKS", 4000, 200)
PROSE = (REPO / "bench" / "redaction" / "prose.txt").read_text()
PERSONAL = (
    " Reach me at m.rossi@example.org or +39 06 6982 0000; card 4111 1111 1111 1111. "
    "Key: AKIAIOSFODNN7EXAMPLE."
)


def texts(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """(prompt, response) pairs of 400 + 1,600 characters from the prose; every tenth with
    personal data and a key in its response."""
    rng = random.Random(seed)
    pairs = []
    for i in range(count):
        start = rng.randrange(0, len(PROSE) - 2000)
        prompt, response = PROSE[start : start + 400], PROSE[start + 400 : start + 2000]
        if i % 10 == 0:
            response = response[: -len(PERSONAL)] + PERSONAL
        pairs.append((prompt, response))
    return pairs


def producer_rate(
    url: str, spool: Path, redact: bool, pairs: list[tuple[str, str]]
) -> tuple[float, float]:
    """Records per second of wall time, and per second of this process's CPU time (the
    caller's and the producer thread's together): the second does not count time spent waiting
    for a core on a busy machine, nor the redis-server's work."""
    from sampling.config import QueueConfig, SamplingConfig
    from sampling.routing import BatchInfo, PlainSample
    from sampling.selection.hacking.config import WatchConfig
    from sampling.transport.producer import Producer, annotation_queue
    from sampling.wiring import build_router

    queue = QueueConfig(redis_url=url, name=f"bench-redact-{redact}", batch_size=64,
                        max_latency_ms=50, spool_dir=str(spool))  # fmt: skip
    # Without the reward-hacking watch (bench/budget_selection.py measures it): its share of
    # this process grows with how long a run lasts, so it charged the slower path, redaction
    # on, up to twice as much a record as the path without.
    config = SamplingConfig(threshold=0.5, max_per_step=16, max_per_minute=10**9, redact=redact,
                            watch=WatchConfig(enabled=False))  # fmt: skip
    producer = Producer(queue, buffer_max=len(pairs) * 2)
    router = build_router(config, producer)
    samples = [PlainSample(prompt=p, response=r, reward=0.0, index=i)
               for i, (p, r) in enumerate(pairs)]  # fmt: skip
    run_id = f"bench-{time.time_ns()}"
    started, cpu = time.perf_counter(), time.process_time()
    for step, chunk in enumerate(range(0, len(samples), 16)):  # a step's worth at a time
        router.route(samples[chunk : chunk + 16], BatchInfo(run_id, step))
    while producer.stats.enqueued + producer.stats.unbuilt < len(samples):
        time.sleep(0.001)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    router.close()
    annotation_queue(queue).empty()
    return len(samples) / elapsed, len(samples) / cpu


def finder_costs(pairs: list[tuple[str, str]]) -> list[tuple[str, float]]:
    """Microseconds per record (prompt and response) for each finder, run where its triggers
    fire (as the redactor runs it), for the one trigger scan that decides that, and for the
    facts about a text that finders share (lower case, longest word, digits)."""
    from sampling.redaction.finders import builtin_finders
    from sampling.redaction.finders.tokens import TokenFinder
    from sampling.redaction.spans import Text
    from sampling.redaction.triggers import TriggerScan

    views = [Text(text) for pair in pairs for text in pair]
    started = time.process_time()
    for view in views:
        _ = view.lower, view.long_words, view.has_number(7)
    costs = [("(shared text facts)", time.process_time() - started)]
    finders = []
    for finder in builtin_finders():
        finders.append((getattr(finder, "name", type(finder).__name__), finder))
        if isinstance(finder, TokenFinder):  # each rule alone on whole texts: what the gate saves
            finders += [(f"  ({rule.id}, ungated)", _WholeText(rule)) for rule in finder.rules[:5]]
    scan = TriggerScan([finder for _, finder in finders])
    # Each finder's own scans build their databases on first use (most of a second): once
    # over a few records first, so that no finder is charged for building them.
    for view in views[:100]:
        for _, finder in finders:
            for _ in finder.find(view):
                pass
    started = time.process_time()
    fired = [scan.fired(view) for view in views]
    costs.append(("(trigger scan)", time.process_time() - started))
    for index, (name, finder) in enumerate(finders):
        started = time.process_time()
        for view, mask in zip(views, fired, strict=True):
            if mask >> index & 1:
                for _ in finder.find(view):
                    pass
        costs.append((name, time.process_time() - started))
    return [(name, 1e6 * seconds / len(pairs)) for name, seconds in costs]


class _WholeText:
    """A token rule run on the whole text, without the long-word gate."""

    def __init__(self, rule) -> None:  # type: ignore[no-untyped-def]
        self.rule = rule

    def find(self, view):  # type: ignore[no-untyped-def]
        return self.rule.scan(view.text, view.lower)


def false_positives() -> None:
    import yaml

    from sampling.redaction import Redactor
    from sampling.redaction.config import RedactConfig

    redactor = Redactor.from_config(RedactConfig())
    prompts = yaml.safe_load((REPO / "configs" / "prompts" / "quickstart.yaml").read_text())
    corpora = {
        "quickstart prompts": [str(p) for p in prompts["prompts"]],
        "prose (bench/redaction/prose.txt)": [p for p in PROSE.split("\n\n") if p.strip()],
    }
    for name, items in corpora.items():
        found: Counter[str] = Counter()
        values = []
        for text in items:
            for span in redactor.find(text):
                found[span.kind] += 1
                values.append(f"{span.kind}: {text[span.start : span.end]!r}")
        words = sum(len(text.split()) for text in items)
        touched = sum(1 for text in items if redactor.find(text))
        print(f"false positives in {name}: {sum(found.values())} finds in {touched} of "
              f"{len(items)} texts ({words:,} words){': ' if values else ''}"
              f"{', '.join(values)}")  # fmt: skip


def code_chunks(count: int, seed: int = 7) -> list[str]:
    """`count` 2 KB chunks at seeded places of the installed packages' .py, .md, .json, .txt,
    .cfg, .toml and .yaml files of 2 KB or more."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    suffixes = (".py", ".md", ".json", ".txt", ".cfg", ".toml", ".yaml")
    files = sorted(p for p in site.rglob("*") if p.suffix in suffixes and p.is_file())
    rng = random.Random(seed)
    rng.shuffle(files)
    chunks = []
    for path in files:
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError):
            continue
        if len(text) >= 2000:
            start = rng.randrange(0, len(text) - 2000 + 1)
            chunks.append(text[start : start + 2000])
            if len(chunks) == count:
                break
    return chunks


def code_finds(count: int) -> None:
    from sampling.redaction import Redactor
    from sampling.redaction.config import RedactConfig

    redactor = Redactor.from_config(RedactConfig())
    chunks = code_chunks(count)
    kinds: Counter[str] = Counter()
    touched = 0
    for chunk in chunks:
        spans = redactor.find(chunk)
        touched += bool(spans)
        kinds.update(span.kind for span in spans)
    print(f"finds in {len(chunks):,} 2 KB chunks of the installed packages' code and docs: "
          f"{touched} chunks touched ({1000 * touched / max(len(chunks), 1):.2f} per 1,000); "
          + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()))  # fmt: skip


def main() -> None:
    announce()
    pairs = texts(RECORDS)
    with own_redis_server() as url, tempfile.TemporaryDirectory() as tmp:
        # One core for this process (the producer thread and the caller share it), the
        # redis-server, started before, keeps its own.
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        rates: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for run in range(RUNS):  # interleaved
            for redact in (False, True):
                rates[redact].append(producer_rate(url, Path(tmp) / f"spool-{run}", redact, pairs))
        for index, clock in ((0, "wall"), (1, "CPU")):
            off = [rate[index] for rate in rates[False]]
            on = [rate[index] for rate in rates[True]]
            # Median of the interleaved pairs' ratios; the best run of each shows the code's
            # cost with the least interference from whatever else the machine runs.
            ratio = statistics.median(b / a for a, b in zip(off, on, strict=True))
            print(f"producer, 2 KB records, one core, per {clock} second: redaction off "
                  f"{statistics.median(off):,.0f} records/s (best {max(off):,.0f}), on "
                  f"{statistics.median(on):,.0f} (best {max(on):,.0f}); ratio {ratio:.2f} "
                  f"(best/best {max(on) / max(off):.2f}) (goal >= 0.5; on > 2,000/s)")  # fmt: skip
    print("CPU cost per 2 KB record, by finder (µs):")
    for name, micros in sorted(finder_costs(pairs[:2000]), key=lambda item: -item[1]):
        print(f"  {name:30s} {micros:8.1f}")
    false_positives()
    code_finds(CODE_CHUNKS)


if __name__ == "__main__":
    main()
