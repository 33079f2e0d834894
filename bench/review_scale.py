"""Review at production scale (issue 23), on a Label Studio on PostgreSQL and one on SQLite, a
redis-server of our own and `lowtide worker` processes:

1. import throughput, 4 workers from a filled queue (records/s; goal: PostgreSQL >= SQLite, the
   baseline measured in the same invocation);
2. what reviewers wait for on a project holding --tasks tasks: 3 scripted reviewers at once do
   what the label stream does (`GET /api/projects/ID/next`, `GET /api/tasks/ID`, `POST
   /api/tasks/ID/annotations/`), each call timed; p50/p95 with no import, then while 4 workers
   import records enqueued at ~100/s and at ~1,000/s as one producer makes jobs, and at
   ~1,000/s in the small jobs of 50 routing processes (jobs of 10); the last two again with
   imports paced (annotation.import_interval_s: a paced job takes the jobs queued behind it),
   each with the import rate it reached (goal: p95 <= 1 s; the no-import phase is the baseline);
3. rollover at scale (PostgreSQL): --records records into a series of projects of
   --max-tasks-per-project each, 4 workers of which 3 are SIGKILLed on the way (a replacement
   started each time); lost and duplicated tasks counted in the database (goal: 0 and 0), and
   the Redis bytes of the imported-id state (`lowtide:annotation:imported:*`, exact sets and
   Bloom filters, MEMORY USAGE) once the retired sets expired, against the exact sets' bytes a
   sample measured in the same run and the ~60 bytes a sample of exact sets for ever.

Full scale: `python bench/review_scale.py` (--tasks 100000 --records 1000000, 100,000 a
project). PostgreSQL comes from PGHOST/PGPORT (else 127.0.0.1:5432), a database and role of the
bench's own, dropped at the end; without it the PostgreSQL parts are skipped, saying so.
`--quick` (or BENCH_QUICK=1) is a smoke run (every kind of phase on one Label Studio, SQLite:
unpaced imports in large and in small jobs, paced imports in small jobs). Knobs:
BENCH_TASKS, BENCH_RECORDS, BENCH_SECONDS (20, each latency phase), BENCH_THROUGHPUT (8000
records), BENCH_REVIEWERS (3), BENCH_WORKERS (4), BENCH_PACE_S (1: the
annotation.import_interval_s of the paced phases).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _child_run import own_redis_server, percentile  # noqa: E402
from _quick import QUICK, announce, knob, sized  # noqa: E402

TASKS = knob("TASKS", 100_000, 300)
RECORDS = knob("RECORDS", 1_000_000, 600)
SECONDS = knob("SECONDS", 20.0, 1.0)  # quick: ~20 review cycles a phase, enough to run each path
THROUGHPUT = knob("THROUGHPUT", 8000, 400)
REVIEWERS = knob("REVIEWERS", 3, 2)
PACE_S = knob("PACE_S", 1.0, 0.5)  # annotation.import_interval_s of the paced phase
WORKERS = knob("WORKERS", 4, 1)  # quick: each worker process is ~1 s of CPU to start
KILLS = 3
# (records/s, records a job): a job as one producer makes it (a flush every 0.5 s), or the
# small jobs of many routing processes (50 of them at 20 records/s each: jobs of 10).
FEEDS = ((100.0, 50), (1000.0, 500), (1000.0, 10))
PACED_FEEDS = FEEDS[1:]
# Quick: one phase of each kind (large jobs, small jobs, small jobs paced: the coalescing), the
# same code as the full run's five, each phase ~4 s of a smoke run.
FEEDS, PACED_FEEDS = sized((FEEDS, PACED_FEEDS), (FEEDS[1:], FEEDS[2:]))
REVIEW_XML = REPO / "configs" / "label_studio" / "review.xml"
OPERATIONS = ("next", "open", "submit")
EXACT_BYTES_A_SAMPLE = 60  # the figure for the exact sets kept for ever


def records(start: int, count: int, run_id: str) -> list[dict]:
    from tests.helpers.records import rollout_records

    return rollout_records(start, count, run_id=run_id)


class Side:
    """One Label Studio (SQLite or PostgreSQL), the queue names and flags its workers use."""

    def __init__(self, name: str, server, redis_url: str, root: Path) -> None:
        self.name, self.server, self.redis_url, self.root = name, server, redis_url, root
        self.workers: list[subprocess.Popen] = []

    def env(self) -> dict[str, str]:
        return {**os.environ, **self.server.env(), "REDIS_URL": self.redis_url,
                "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}  # fmt: skip

    def start_worker(self, queue: str, project: str, *extra: str) -> subprocess.Popen:
        log = self.root / f"worker-{queue}-{len(self.workers)}.log"
        worker = subprocess.Popen(
            [sys.executable, "-m", "lowtide", "worker", f"--queue.name={queue}",
             f"--annotation.project={project}", f"--annotation.labeling_config={REVIEW_XML}",
             *extra],
            cwd=self.root, env=self.env(), stdin=subprocess.DEVNULL, stdout=log.open("w"),
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.workers.append(worker)
        return worker

    def stop_workers(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        self.workers = []


def queue_of(redis_url: str, name: str):
    import redis
    from rq import Queue
    from rq.serializers import JSONSerializer

    return Queue(name, connection=redis.Redis.from_url(redis_url), serializer=JSONSerializer)


def enqueue(queue, batch: list[dict], size: int = 500) -> list[str]:
    from sampling.transport.producer import enqueue_batch

    for start in range(0, len(batch), size):
        enqueue_batch(queue, batch[start : start + size])
    return queue.get_job_ids()


def wait_until(done, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.5)


# 1. import throughput ---------------------------------------------------------------------------


def throughput(side: Side) -> float:
    """records/s of 4 workers emptying a filled queue: from the first job's start to the last
    one's end (a running worker's rate, not its start-up)."""
    from rq.job import Job

    tag = secrets.token_hex(3)
    queue = queue_of(side.redis_url, f"bench-tp-{tag}")
    project = f"bench throughput {tag}"
    with side.server.client() as client:  # made before the clock starts, as a running worker has it
        client.ensure_project(project, REVIEW_XML.read_text())
    job_ids = enqueue(queue, records(0, THROUGHPUT, f"tp-{tag}"))
    for _ in range(WORKERS):
        side.start_worker(queue.name, project, "--burst")
    for worker in side.workers:
        worker.wait(timeout=3600)
    side.workers = []
    with side.server.client() as client:
        imported = client.count_tasks(client.find_project(project))
    assert imported == THROUGHPUT, f"{side.name}: imported {imported} of {THROUGHPUT}"
    ran = Job.fetch_many(job_ids, connection=queue.connection, serializer=queue.serializer)
    span = max(job.ended_at for job in ran) - min(job.started_at for job in ran)
    return THROUGHPUT / span.total_seconds()


# 2. reviewer latency ----------------------------------------------------------------------------


def fill(side: Side, project: str, count: int) -> int:
    """A project of `count` tasks, imported 1,000 a request (not what is measured)."""
    from annotation.labelstudio import task_from_record

    with side.server.client() as client:
        project_id = client.ensure_project(project, REVIEW_XML.read_text())
        started = time.perf_counter()
        for start in range(0, count, 1000):
            batch = records(start, min(1000, count - start), f"fill-{project}")
            client.import_tasks(project_id, [task_from_record(r) for r in batch])
        assert client.count_tasks(project_id) == count
    print(f"  {side.name}: {count:,} tasks in project {project_id} "
          f"({time.perf_counter() - started:.0f} s to fill)", flush=True)  # fmt: skip
    return project_id


def reviewer(side: Side, project_id: int, until: float, timings: dict[str, list[float]]) -> None:
    """What the label stream does, again and again: next task, open it, submit a review. A
    call Label Studio answers with a server error (SQLite's "database is locked" under import)
    is counted in timings["errors"], and the reviewer goes on."""
    import httpx

    headers = {"Authorization": f"Token {side.server.api_key}"}
    with httpx.Client(base_url=side.server.url, headers=headers, timeout=120) as http:
        while time.monotonic() < until:
            try:
                review_once(http, project_id, timings)
            except httpx.HTTPStatusError as error:
                if error.response.status_code < 500:
                    raise
                timings["errors"].append(1.0)


def review_once(http, project_id: int, timings: dict[str, list[float]]) -> None:
    """One task: next, open, submit, each timed."""
    from lowtide.demo.scripted_reviewer import review_task
    from lowtide.loop.reviewer import result_of

    started = time.perf_counter()
    task = http.get(f"/api/projects/{project_id}/next")
    timings["next"].append(time.perf_counter() - started)
    task.raise_for_status()
    task_id = task.json()["id"]
    started = time.perf_counter()
    opened = http.get(f"/api/tasks/{task_id}")
    timings["open"].append(time.perf_counter() - started)
    opened.raise_for_status()
    result = result_of(review_task(opened.json()["data"]))
    started = time.perf_counter()
    http.post(f"/api/tasks/{task_id}/annotations/",
              json={"result": result}).raise_for_status()  # fmt: skip
    timings["submit"].append(time.perf_counter() - started)


def review_phase(side: Side, project_id: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {op: [] for op in (*OPERATIONS, "errors")}
    until = time.monotonic() + SECONDS
    threads = [threading.Thread(target=reviewer, args=(side, project_id, until, timings))
               for _ in range(REVIEWERS)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return timings


def feed(queue, rate: float, per_job: int, until: float, tag: str, stop: threading.Event) -> None:
    """Records at `rate`/s, in jobs of `per_job`."""
    started, sent = time.monotonic(), 0
    while time.monotonic() < until and not stop.is_set():
        wait = started + sent / rate - time.monotonic()  # read the clock once: it moves
        if wait > 0:
            time.sleep(min(0.05, wait))
            continue
        enqueue(queue, records(sent, per_job, tag), per_job)
        sent += per_job


def latency(side: Side, tasks: int) -> dict[str, dict[str, list[float]]]:
    """Phases: no import; import at each of FEEDS; PACED_FEEDS again with imports paced
    (annotation.import_interval_s = PACE_S)."""
    from rq import Worker

    tag = secrets.token_hex(3)
    project = f"bench review {tag}"
    project_id = fill(side, project, tasks)
    phases = {"no import": review_phase(side, project_id)}
    for interval, feeds in ((0.0, FEEDS), (PACE_S, PACED_FEEDS)):
        queue = queue_of(side.redis_url, f"bench-rev-{tag}-{interval:g}")
        for _ in range(WORKERS):  # far from a rollover: the reviewers' project stays the one
            side.start_worker(queue.name, project, "--annotation.max_tasks_per_project=100000000",
                              f"--annotation.import_interval_s={interval:g}")  # fmt: skip
        try:
            wait_until(lambda q=queue: Worker.count(queue=q) >= WORKERS, 300, "the workers")
            time.sleep(sized(1, 0.2))  # each is waiting on the queue
            with side.server.client() as client:
                for rate, per_job in feeds:
                    name = f"import {rate:g}/s in jobs of {per_job}" + (
                        f", paced {interval:g} s" if interval else "")  # fmt: skip
                    before, started = client.count_tasks(project_id), time.monotonic()
                    stop = threading.Event()
                    until = started + SECONDS
                    feeder = threading.Thread(
                        target=feed,
                        args=(queue, rate, per_job, until, f"{tag}-{rate:g}-{per_job}-{interval:g}",
                              stop),
                    )  # fmt: skip
                    feeder.start()
                    phases[name] = review_phase(side, project_id)
                    stop.set()
                    feeder.join()
                    done = client.count_tasks(project_id) - before
                    phases[name]["rate"] = [done / (time.monotonic() - started)]
                    phases[name]["left"] = [queue.count * per_job]
                    queue.empty()  # what the workers did not take in time is not imported later
                    wait_until(lambda q=queue: q.started_job_registry.count == 0, 600, "imports")
        finally:
            side.stop_workers()
    return phases


# 3. rollover with SIGKILLs ----------------------------------------------------------------------


def rollover(side: Side, count: int, cap: int) -> dict:
    from annotation import ledger
    from annotation.series import series_projects

    tag = secrets.token_hex(3)
    series = f"bench rollover {tag}"
    queue = queue_of(side.redis_url, f"bench-roll-{tag}")
    connection = queue.connection
    flags = (f"--annotation.max_tasks_per_project={cap}", "--annotation.retired_ids_keep_s=5")
    for _ in range(WORKERS):
        side.start_worker(queue.name, series, *flags)
    stop = threading.Event()

    def feeder() -> None:  # the queue holds a few jobs, not a million records at once
        for start in range(0, count, 500):
            while queue.count > 4 * WORKERS and not stop.is_set():
                time.sleep(0.05)
            if stop.is_set():
                return
            enqueue(queue, records(start, min(500, count - start), f"roll-{tag}"))

    feeding = threading.Thread(target=feeder)
    feeding.start()
    imported = lambda: ledger.read_stats(connection, queue.name).counters.get("imported", 0)  # noqa: E731
    started = time.monotonic()
    try:
        for kill in range(KILLS):
            wait_until(lambda k=kill: imported() >= count * (k + 1) // (KILLS + 1), 7200,
                       f"imports before kill {kill + 1}")  # fmt: skip
            victim = next(w for w in side.workers if w.poll() is None)
            os.killpg(victim.pid, signal.SIGKILL)
            victim.wait()
            side.start_worker(queue.name, series, *flags)
            print(f"  SIGKILL {kill + 1} at {imported():,} imported", flush=True)
        feeding.join()
        # Every record counted imported; or every job done, seen twice (a record whose worker
        # was killed after its task was made and before it was counted is counted reconciled or
        # a duplicate on the retry, never imported: the count alone waited out the 2 minutes
        # below); or nothing moving for 2 minutes with the queue empty (what is missing then is
        # lost, and counted so below).
        last, still_since, done = -1, time.monotonic(), 0
        while imported() < count and done < 2:
            now, seen = time.monotonic(), imported()
            if seen != last or queue.count:
                last, still_since = seen, now
            elif now - still_since > 120:
                break
            done = done + 1 if every_job_done(queue) else 0
            time.sleep(0.5)
        elapsed = time.monotonic() - started
        time.sleep(sized(2, 0.5))  # a late duplicate would land by now
    finally:
        stop.set()
        feeding.join()
        side.stop_workers()
    with side.server.client() as client:
        projects = series_projects(client.projects_titled, series)
        sizes = [client.count_tasks(pid) for pid, _ in projects]
        # This series' keys only (the other parts' projects share the redis-server).
        mine = [ledger.ImportedSet(connection, ledger.imported_key(
                    side.server.url, pid, client.project_created_at(pid)), cap)
                for pid, _ in projects]  # fmt: skip
    total, distinct = task_counts(side, [pid for pid, _ in projects])
    keys = imported_state(connection, mine)
    deadline = time.monotonic() + 60
    while sum(kind == "set" for kind, _, _ in keys.values()) > 1 and time.monotonic() < deadline:
        time.sleep(1)  # the retired sets expire (retired_ids_keep_s=5)
        keys = imported_state(connection, mine)
    return {
        "records": count, "projects": sizes, "tasks": total, "lost": count - distinct,
        "duplicated": total - distinct, "seconds": elapsed, "keys": keys,
    }  # fmt: skip


def every_job_done(queue) -> bool:
    """None queued, taken (RQ's intermediate list), started or waiting for a retry."""
    registries = (queue.started_job_registry, queue.scheduled_job_registry)
    taken = queue.intermediate_queue.get_job_ids()
    return not (queue.count or taken or any(registry.count for registry in registries))


def task_counts(side: Side, project_ids: list[int]) -> tuple[int, int]:
    """(tasks, distinct sample ids) over the projects, asked of the database itself: listing a
    100,000-task project through the API takes minutes (FACTS, LS #8738)."""
    database = side.server.database
    if database is not None:
        ids = ",".join(str(pid) for pid in project_ids)
        query = (f"SELECT count(*), count(DISTINCT data->>'sample_id') FROM task "
                 f"WHERE project_id IN ({ids})")  # fmt: skip
        out = subprocess.run(
            ["psql", "-h", database.host, "-p", str(database.port), "-U", database.role, "-d",
             database.name, "-At", "-F", " ", "-c", query],
            env={**os.environ, "PGPASSWORD": database.password}, capture_output=True,
            text=True, check=True,
        ).stdout.split()  # fmt: skip
        return int(out[0]), int(out[1])
    from label_studio_sdk import LabelStudio

    sdk = LabelStudio(base_url=side.server.url, api_key=side.server.api_key)
    ids = [task.data["sample_id"] for pid in project_ids
           for task in sdk.tasks.list(project=pid, fields="task_only", page_size=1000)]  # fmt: skip
    return len(ids), len(set(ids))


def imported_state(connection, sets: list) -> dict[str, tuple[str, int, int]]:
    """{key: (type, members or bits, bytes)} of the projects' imported-id state: each one's
    exact set (while it lives), its Bloom filter and its retired mark (ledger.ImportedSet)."""
    found = {}
    for key in [k for held in sets for k in (held.key, held.filter.key, held.retired_key)]:
        kind = connection.type(key).decode()
        if kind == "none":
            continue
        # A set's members; a filter's bits (and the retired mark's few bytes, as bits).
        size = connection.scard(key) if kind == "set" else connection.strlen(key) * 8
        found[key] = (kind, size, connection.memory_usage(key, samples=0) or 0)
    return found


# the run ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def label_studio(name: str, root: Path) -> Iterator[object | None]:
    """A Label Studio of our own on SQLite or PostgreSQL (None: PostgreSQL is not reachable).
    In quick mode the SQLite side is the one at LABEL_STUDIO_URL when it answers (the tests')."""
    from lowtide.services.credentials import Credentials
    from lowtide.services.labelstudio import health, python
    from lowtide.services.postgres import PostgresDatabase, drop_database, unreachable
    from tests.helpers.labelstudio import LabelStudioServer

    url, key = os.environ.get("LABEL_STUDIO_URL"), os.environ.get("LABEL_STUDIO_API_KEY")
    if name == "SQLite" and QUICK and url and key and health(url, timeout_s=10):
        given = LabelStudioServer(root / name)
        given.url, given.credentials = url.rstrip("/"), Credentials("", "", key, root / ".env")
        yield given
        return
    database = None
    if name == "PostgreSQL":
        database = PostgresDatabase.named(f"lowtide_bench_{secrets.token_hex(5)}")
        if (reason := unreachable(database.host, database.port)) is not None:
            print(f"PostgreSQL not reachable at {database.where} ({reason}): its parts are "
                  "skipped", flush=True)  # fmt: skip
            yield None
            return
    server = LabelStudioServer(root / name, database=database)
    print(f"starting a Label Studio on {name} (a minute or more)...", flush=True)
    try:
        server.start()
        yield server
    finally:
        if server.url:
            server.stop()
        if database is not None:
            drop_database(database, python())


def summary(values: list[float]) -> str:
    return f"p50 {percentile(values, 0.5):.3f} s, p95 {percentile(values, 0.95):.3f} s"


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=TASKS, help="tasks in the reviewers' project")
    parser.add_argument("--records", type=int, default=RECORDS, help="records for the rollover")
    parser.add_argument("--max-tasks-per-project", type=int, default=None,
                        help="the rollover's cap (default: 100,000, or a quarter of --records "
                        "when that is less)")  # fmt: skip
    parser.add_argument("--skip", action="append", default=[],
                        choices=["throughput", "latency", "rollover"])  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="a smoke run (BENCH_QUICK=1)")
    args = parser.parse_args()
    cap = args.max_tasks_per_project or min(100_000, max(1, args.records // 4))
    announce()
    print(f"scale: {args.tasks:,} tasks a reviewers' project, {REVIEWERS} reviewers, "
          f"{SECONDS:g} s a phase, {THROUGHPUT:,} records for throughput, {args.records:,} "
          f"records into projects of {cap:,} with {KILLS} SIGKILLs", flush=True)  # fmt: skip
    rates: dict[str, float] = {}
    latencies: dict[str, dict] = {}
    with own_redis_server() as redis_url, tempfile.TemporaryDirectory() as tmp:
        # Quick: one Label Studio, the session's, every phase's code on it (a second one, on
        # PostgreSQL, takes a minute or more to start on a busy machine).
        if QUICK:
            print("quick mode: no Label Studio on PostgreSQL; the rollover runs on SQLite",
                  flush=True)  # fmt: skip
        for name in ("SQLite",) if QUICK else ("SQLite", "PostgreSQL"):
            if name == "SQLite" and not QUICK and {"throughput", "latency"} <= set(args.skip):
                continue  # the rollover runs on PostgreSQL only
            with label_studio(name, Path(tmp)) as server:
                if server is None:
                    continue
                side = Side(name, server, redis_url, Path(tmp) / name)
                side.root.mkdir(parents=True, exist_ok=True)
                if "throughput" not in args.skip:
                    rates[name] = throughput(side)
                    print(f"{name}: import throughput, {WORKERS} workers: "
                          f"{rates[name]:,.0f} records/s", flush=True)  # fmt: skip
                # Quick: the phases run on one database (the same code against another).
                if "latency" not in args.skip and not (QUICK and name == "PostgreSQL"):
                    latencies[name] = latency(side, args.tasks)
                    for phase, timings in latencies[name].items():
                        achieved, left = timings.pop("rate", None), timings.pop("left", None)
                        errors = len(timings["errors"])
                        head = f"{name}, {phase}" + (
                            f" (imported {achieved[0]:,.0f}/s, {left[0]:,} records still "
                            "queued at its end)" if achieved else "")  # fmt: skip
                        if errors:
                            head += f" ({errors} calls answered with a server error)"
                        print(head + ": " + "; ".join(
                            f"{op} {summary(timings[op])} (n={len(timings[op])})"
                            for op in OPERATIONS), flush=True)  # fmt: skip
                if (name == "PostgreSQL" or QUICK) and "rollover" not in args.skip:
                    report_rollover(name, rollover(side, args.records, cap))
    print("\ngoals:")
    if len(rates) == 2:
        ratio = rates["PostgreSQL"] / rates["SQLite"]
        print(f"  import throughput PostgreSQL / SQLite: {ratio:.2f} (goal >= 1): "
              f"{met(ratio >= 1)}")  # fmt: skip
    for name, phases in latencies.items():
        base = max(percentile(phases["no import"][op], 0.95) for op in OPERATIONS)
        for phase, timings in phases.items():
            worst = max(percentile(timings[op], 0.95) for op in OPERATIONS)
            errors = len(timings["errors"])
            said = f", {errors} server errors" if errors else ""
            print(f"  {name}, {phase}: slowest operation's p95 {worst:.3f} s ({worst / base:.2f}x "
                  f"no import's {base:.3f} s{said}) (goal <= 1 s, no error): "
                  f"{met(worst <= 1.0 and not errors)}")  # fmt: skip


def report_rollover(name: str, result: dict) -> None:
    count = result["records"]
    print(f"{name} rollover: {count:,} records in {result['seconds']:.0f} s "
          f"({count / result['seconds']:,.0f}/s) into {len(result['projects'])} projects "
          f"{result['projects']}: {result['tasks']:,} tasks, lost {result['lost']}, duplicated "
          f"{result['duplicated']} (goal 0 and 0): "
          f"{met(result['lost'] == 0 and result['duplicated'] == 0)}")  # fmt: skip
    total = sum(nbytes for _, _, nbytes in result["keys"].values())
    for key, (kind, size, nbytes) in result["keys"].items():
        what = (f"exact set of {size:,} ids" if kind == "set" else "retired mark"
                if key.endswith(":retired") else f"filter of {size:,} bits")  # fmt: skip
        print(f"  project {key.split(':')[4]}: {what}, {nbytes:,} bytes")
    sets = [(size, nbytes) for kind, size, nbytes in result["keys"].values() if kind == "set"]
    per_sample = sum(b for _, b in sets) / max(1, sum(s for s, _ in sets)) if sets else 0.0
    print(f"  imported-id state after the retired sets expired: {total:,} bytes "
          f"({total / count:.1f} a sample); exact sets for all {count:,} would be "
          f"{per_sample * count:,.0f} bytes at the {per_sample:.1f} bytes a sample measured here "
          f"(~{EXACT_BYTES_A_SAMPLE * count:,} at the issue's 60); ratio "
          f"{total / max(1.0, per_sample * count):.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
