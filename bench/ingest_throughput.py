"""`lowtide ingest --once` throughput on verl-format dumps of 2 KB samples, against plain JSON
parsing of the same files in the same invocation (the ratio is what routing, the cursor and the
queue add), on a redis-server of our own.

Two configs: the defaults (threshold 0.2, at most 16 records a step: what a run routes) and
every sample routed (each one becomes a record on the queue: the worst case). The command runs as
a user runs it, in its own process, start-up included. Goal: >= 5,000 samples/s with the defaults.
Knobs: BENCH_SAMPLES (51200), BENCH_PER_STEP (256), BENCH_RUNS (3).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _child_run import own_redis_server
from _quick import announce, knob

REPO = Path(__file__).resolve().parent.parent
SAMPLES = knob("SAMPLES", 51200, 256)  # quick: still four files of PER_STEP
PER_STEP = knob("PER_STEP", 256, 64)
RUNS = knob("RUNS", 3, 1)
GOAL = 5000
CONFIGS = {
    "defaults": [],
    "every sample": ["--sampling.threshold=1e30", "--sampling.max_per_step=1000000",
                     "--sampling.max_per_minute=1000000000"],
}  # fmt: skip


def write_dumps(directory: Path) -> int:
    """verl's `{step}.jsonl` lines (as `_write_generations` writes them), ~2 KB each, dated a
    minute apart as a run writes them."""
    rng = random.Random(0)
    words = [f"w{i}" for i in range(500)]
    directory.mkdir()
    total = 0
    began = time.time() - 60 * (SAMPLES // PER_STEP + 1)
    for step in range(1, SAMPLES // PER_STEP + 1):
        path = directory / f"{step}.jsonl"
        with open(path, "w") as handle:
            for i in range(PER_STEP):
                prompt = f"Problem {step}.{i // 8}: " + " ".join(rng.choices(words, k=100))
                response = " ".join(rng.choices(words, k=330))
                row = {"input": prompt, "output": response, "gts": str(i // 8),
                       "score": rng.random(), "step": step, "acc": rng.random() < 0.5,
                       "pred": str(i)}  # fmt: skip
                handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
                total += 1
        moment = began + 60 * step  # a step a minute: the per-minute cap counts the run's time
        os.utime(path, (moment, moment))
    return total


def plain_parse(directory: Path) -> float:
    """The baseline: read every file and json.loads every line, nothing else."""
    started = time.perf_counter()
    count = 0
    for path in sorted(directory.glob("*.jsonl")):
        with open(path, "rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
    return time.perf_counter() - started


def ingest(directory: Path, url: str, flags: list[str], run: int) -> tuple[float, str]:
    cursor = directory.parent / f"cursor-{directory.name}-{run}-{len(flags)}.json"
    queue = f"bench-ingest-{run}-{len(flags)}"
    command = [sys.executable, "-m", "lowtide", "ingest", str(directory), "--once",
               "--cursor", str(cursor), f"--queue.name={queue}",
               f"--queue.spool_dir={directory.parent / 'spool'}", *flags]  # fmt: skip
    env = {**os.environ, "REDIS_URL": url, "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"lowtide ingest failed:\n{result.stderr[-3000:]}")
    _empty(url, queue)
    return elapsed, result.stdout.strip().splitlines()[0]


def _empty(url: str, queue: str) -> None:
    sys.path.insert(0, str(REPO))
    from sampling.config import QueueConfig
    from sampling.transport.producer import annotation_queue

    annotation_queue(QueueConfig(redis_url=url, name=queue)).empty()


def main() -> None:
    announce()
    with own_redis_server() as url, tempfile.TemporaryDirectory() as tmp:
        dumps = Path(tmp) / "rollout_data_dir"
        total = write_dumps(dumps)
        size_mb = sum(path.stat().st_size for path in dumps.iterdir()) / 2**20
        print(f"{total:,} verl samples in {total // PER_STEP} files, {size_mb:.0f} MB "
              f"({size_mb * 2**20 / total / 1024:.1f} KB a sample)")  # fmt: skip
        empty = Path(tmp) / "one_step"
        empty.mkdir()
        (empty / "1.jsonl").write_text((dumps / "1.jsonl").read_text().splitlines()[0] + "\n")
        startup = statistics.median(ingest(empty, url, [], run)[0] for run in range(RUNS))
        baseline: list[float] = []
        timings: dict[str, list[float]] = {name: [] for name in CONFIGS}
        summaries: dict[str, str] = {}
        for run in range(RUNS):  # interleaved
            baseline.append(plain_parse(dumps))
            for name, flags in CONFIGS.items():
                elapsed, summaries[name] = ingest(dumps, url, flags, run)
                timings[name].append(elapsed)
        parse_rate = total / statistics.median(baseline)
        print(f"plain JSON parsing: {parse_rate:,.0f} samples/s; lowtide ingest start-up and "
              f"exit on a one-line directory: {startup:.2f} s")  # fmt: skip
        for name in CONFIGS:
            elapsed = statistics.median(timings[name])
            rate, steady = total / elapsed, total / max(elapsed - startup, 1e-9)
            goal = f" (goal >= {GOAL:,} samples/s)" if name == "defaults" else ""
            print(f"lowtide ingest --once, {name}: {rate:,.0f} samples/s, "
                  f"{rate / parse_rate:.2f}x plain parsing{goal}; without start-up "
                  f"{steady:,.0f} samples/s, {steady / parse_rate:.2f}x")  # fmt: skip
            print(f"  {summaries[name]}")


if __name__ == "__main__":
    main()
