"""Annotation import speed against a local Label Studio and a redis-server of our own:

1. tasks/s our worker imports from a filled queue (full RQ jobs of queue.batch_size records, as
   the producer makes them) vs the raw bulk import of the same tasks through the SDK (its
   `import_tasks`, 1,000 tasks per call, as a hand-written script would) and vs
   creating them one by one through the SDK (goals: ours >= 0.7x bulk, >= 100x one by one);
2. end-to-end latency from `Producer.submit` to the task being visible in Label Studio, records
   arriving at 100/s with a worker running (goal: p95 <= 2 s).
Uses the Label Studio at LABEL_STUDIO_URL with LABEL_STUDIO_API_KEY if it answers, else starts one
(20-80 s). Knobs: BENCH_TASKS (4000), BENCH_RUNS (3), BENCH_ONE_BY_ONE (40), BENCH_RATE (100),
BENCH_SECONDS (20).
"""

from __future__ import annotations

import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType

from _child_run import own_redis_server, percentile
from _quick import announce, knob

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
TASKS = knob("TASKS", 4000, 600)  # quick: still more than one job of queue.batch_size
RUNS = knob("RUNS", 3, 1)
ONE_BY_ONE = knob("ONE_BY_ONE", 40, 5)
RATE = knob("RATE", 100.0, 100.0)
SECONDS = knob("SECONDS", 20.0, 2.0)
REVIEW_XML = REPO / "configs" / "label_studio" / "review.xml"


def records(count: int, tag: str) -> list[dict]:
    """Realistic records (~1.5 KB of JSON each), unique per call."""
    from rl.samples import Sample
    from sampling.records import RolloutRecord, Selection

    made = []
    for i in range(count):
        sample = Sample(
            index=i, group_id=i // 4, prompt=f"[{tag}] Write one sentence about tides. ({i})",
            response="The tide comes in twice a day, pulled by the moon. " * 8,
            prompt_ids=(1,), response_ids=(2,), truncated=False, reward=0.05,
            reward_details=MappingProxyType({"keyword": 0.0, "format": 0.05}), advantage=-0.4,
        )  # fmt: skip
        record = RolloutRecord.from_sample(
            sample, run_id=f"bench-{tag}", step=i // 32, rank=0, model_name_or_path="tiny",
            checkpoint_step=None, generation={"temperature": 1.0},
            selection=Selection(policy="threshold", parameter={"threshold": 0.2}, value=0.05),
        )  # fmt: skip
        made.append(record.model_dump(mode="json"))
    return made


def raw_bulk(url: str, key: str, client, tasks: list[dict], per_call: int) -> float:
    """What a hand-written script does: the SDK's import_tasks, `per_call` tasks per call."""
    from label_studio_sdk import LabelStudio

    sdk = LabelStudio(base_url=url, api_key=key)
    project = client.ensure_project(f"bench raw {secrets.token_hex(3)}", REVIEW_XML.read_text())
    started = time.perf_counter()
    for chunk in range(0, len(tasks), per_call):
        sdk.projects.import_tasks(project, request=tasks[chunk : chunk + per_call],
                                  return_task_ids=True)  # fmt: skip
    return len(tasks) / (time.perf_counter() - started)


def one_by_one(url: str, key: str, client, tasks: list[dict]) -> float:
    from label_studio_sdk import LabelStudio

    sdk = LabelStudio(base_url=url, api_key=key)
    project = client.ensure_project(f"bench single {secrets.token_hex(3)}", REVIEW_XML.read_text())
    started = time.perf_counter()
    for task in tasks:
        sdk.tasks.create(project=project, data=task["data"])
    return len(tasks) / (time.perf_counter() - started)


def ours(redis_url: str, url: str, key: str, batch: list[dict]) -> float:
    import redis
    from rq.job import Job

    from annotation import jobs
    from annotation.config import AnnotationConfig
    from annotation.importer import ImportContext
    from annotation.worker import AnnotationWorker
    from sampling.config import QueueConfig
    from sampling.transport.producer import annotation_queue, enqueue_batch

    tag = secrets.token_hex(3)
    queue = annotation_queue(QueueConfig(redis_url=redis_url, name=f"bench-{tag}"),
                             redis.Redis.from_url(redis_url))  # fmt: skip
    size = QueueConfig().batch_size  # full jobs, as the producer makes them from a busy run
    for start in range(0, len(batch), size):
        enqueue_batch(queue, batch[start : start + size])
    job_ids = queue.get_job_ids()
    config = AnnotationConfig(label_studio_url=url, api_key=key, project=f"bench ours {tag}",
                              labeling_config=str(REVIEW_XML))  # fmt: skip
    context = ImportContext.create(config, queue.connection, queue.name)
    context.project_id()  # created before the clock starts, as a running worker has it
    jobs.bind(context)
    AnnotationWorker(queue).work(burst=True, logging_level="ERROR")
    imported = context.client.count_tasks(context.project_id())
    assert imported == len(batch), f"imported {imported} of {len(batch)}"
    context.client.close()
    # The span from the first job's start to the last one's end: a running worker's rate, without
    # the ~1 s a burst worker spends starting and stopping (registration, pub/sub thread).
    ran = Job.fetch_many(job_ids, connection=queue.connection, serializer=queue.serializer)
    span = max(job.ended_at for job in ran) - min(job.started_at for job in ran)
    return len(batch) / span.total_seconds()


def latency(redis_url: str, url: str, key: str, spool: Path) -> list[float]:
    """Submit RATE records/s for SECONDS with a worker running; per record, submit -> visible."""
    from annotation.labelstudio import LabelStudioClient
    from sampling.config import QueueConfig
    from sampling.transport.producer import Producer

    tag = secrets.token_hex(3)
    project = f"bench latency {tag}"
    env = {**os.environ, "REDIS_URL": redis_url, "LABEL_STUDIO_URL": url,
           "LABEL_STUDIO_API_KEY": key}  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "worker", f"--queue.name=bench-{tag}",
         f"--annotation.project={project}", f"--annotation.labeling_config={REVIEW_XML}"],
        env=env, cwd=REPO, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = LabelStudioClient(url, key)
    try:
        while (project_id := client.find_project(project)) is None:
            time.sleep(0.2)
        time.sleep(1.0)  # the worker is waiting on the queue
        producer = Producer(QueueConfig(redis_url=redis_url, name=f"bench-{tag}",
                                        spool_dir=str(spool)))  # fmt: skip
        batch = records(int(RATE * SECONDS), tag)
        submitted: list[float] = []
        visible: list[float] = []
        started = time.perf_counter()
        for i, record in enumerate(batch):
            while time.perf_counter() < started + i / RATE:
                _poll(client, project_id, visible)
            submitted.append(time.perf_counter())
            producer.submit([record])
        while len(visible) < len(batch) and time.perf_counter() < started + SECONDS + 30:
            _poll(client, project_id, visible)
        producer.close()
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        client.close()
    return [seen - sent for sent, seen in zip(submitted, visible, strict=False)]


_last_poll = [0.0]


def _poll(client, project_id: int, visible: list[float]) -> None:
    """Record when the task count grows: with one worker, tasks appear in submit order."""
    now = time.perf_counter()
    if now - _last_poll[0] < 0.05:
        time.sleep(0.002)
        return
    _last_poll[0] = now
    count = client.count_tasks(project_id)
    visible.extend([time.perf_counter()] * (count - len(visible)))


def label_studio(tmp: Path) -> tuple[str, str, object]:
    """(url, key, stop) for the Label Studio to measure."""
    from lowtide.services.credentials import Credentials
    from lowtide.services.labelstudio import (
        ensure_installed,
        ensure_label_studio,
        health,
        stop_label_studio,
    )
    from lowtide.services.process import free_port
    from lowtide.services.state import ServiceRegistry

    url, key = os.environ.get("LABEL_STUDIO_URL"), os.environ.get("LABEL_STUDIO_API_KEY")
    if url and key:
        if health(url, timeout_s=10):  # a dev server under load can take seconds to answer
            print(f"using the Label Studio at {url} (LABEL_STUDIO_URL)", flush=True)
            return url, key, lambda: None
        print(f"LABEL_STUDIO_URL={url} does not answer: starting one", flush=True)
    os.environ.pop("LABEL_STUDIO_URL", None)
    credentials = Credentials("admin@lowtide.local", secrets.token_urlsafe(12),
                              secrets.token_hex(20), tmp / ".env")  # fmt: skip
    registry = ServiceRegistry(tmp / "state")
    ensure_installed(REPO)
    print("starting a Label Studio for the benchmark (20-80 s)...", flush=True)
    record, _ = ensure_label_studio(registry, credentials, free_port())
    return record.url, credentials.api_key, lambda: stop_label_studio(registry)


def main() -> None:
    from annotation.config import AnnotationConfig
    from annotation.labelstudio import LabelStudioClient, task_from_record
    from sampling.config import QueueConfig

    announce()
    with own_redis_server() as redis_url, tempfile.TemporaryDirectory() as tmp:
        url, key, stop_ls = label_studio(Path(tmp))
        try:
            client = LabelStudioClient(url, key)
            per_request = min(QueueConfig().batch_size, AnnotationConfig().import_batch_max)
            raw_rates, raw_1000_rates, our_rates = [], [], []
            for run in range(RUNS):  # interleaved
                tasks = [task_from_record(r) for r in records(TASKS, f"r{run}")]
                raw_rates.append(raw_bulk(url, key, client, tasks, per_request))
                tasks = [task_from_record(r) for r in records(TASKS, f"k{run}")]
                raw_1000_rates.append(raw_bulk(url, key, client, tasks, 1000))
                our_rates.append(ours(redis_url, url, key, records(TASKS, f"o{run}")))
            singles = [task_from_record(r) for r in records(ONE_BY_ONE, "single")]
            single = one_by_one(url, key, client, singles)
            raw_rate, our_rate = statistics.median(raw_rates), statistics.median(our_rates)
            raw_1000 = statistics.median(raw_1000_rates)
            print(f"{TASKS} tasks: SDK bulk import {raw_rate:,.0f} tasks/s at {per_request} per "
                  f"call ({raw_1000:,.0f} at 1,000); our worker from a filled queue "
                  f"{our_rate:,.0f} tasks/s; SDK one by one {single:,.1f} tasks/s")  # fmt: skip
            print(f"ours / bulk at the same request size: {our_rate / raw_rate:.2f} (goal >= 0.7); "
                  f"ours / bulk at 1,000 per call: {our_rate / raw_1000:.2f}; "
                  f"ours / one by one: {our_rate / single:,.0f}x (goal >= 100x)")  # fmt: skip
            delays = sorted(latency(redis_url, url, key, Path(tmp) / "spool"))
            p50, p95 = percentile(delays, 0.5), percentile(delays, 0.95)
            print(
                f"enqueue -> visible at {RATE:g} records/s, {len(delays)} records: "
                f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {delays[-1]:.2f} s (goal: p95 <= 2 s)"
            )
            client.close()
        finally:
            stop_ls()


if __name__ == "__main__":
    main()
