"""What annotation/rq_internals.py relies on in RQ beyond its public API, checked against the
RQ installed: a new RQ that changes any of it fails here, before the worker's exactly-once
recovery silently stops working (the worker's SIGKILL tests would catch it later, slower)."""

from __future__ import annotations

import os
import re
import socket
import time
import tracemalloc
import uuid
import zlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
import redis
import rq
from rq import Callback, Queue, Repeat, Retry
from rq.command import send_command
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.serializers import JSONSerializer
from rq.webhook import Webhook

from annotation.rq_internals import (
    ACTED_ON_FIELDS,
    MAX_JOB_BYTES,
    BoundedJob,
    BoundedScheduler,
    JobRefused,
    PromptSimpleWorker,
    fail_in_place,
    release_dead_scheduler_lock,
    take_queued,
)
from annotation.worker import AnnotationWorker
from sampling.records import JOB_FUNCTION
from sampling.transport.producer import enqueue_batch
from tests.conftest import REPO
from tests.helpers.pipeline import REDIS_URL
from tests.helpers.records import rollout_records

pytestmark = pytest.mark.integration


@pytest.fixture
def queue() -> Iterator[Queue]:
    connection = redis.Redis.from_url(REDIS_URL)
    name = f"test-rq-internals-{uuid.uuid4().hex[:8]}"
    queue = Queue(name, connection=connection, serializer=JSONSerializer)
    yield queue
    queue.delete(delete_jobs=True)
    for key in connection.scan_iter(f"*{name}*"):
        connection.delete(key)


def test_the_rq_checked_here_is_the_one_pyproject_pins() -> None:
    pin = re.search(r'"rq>=(\d+\.\d+),<(\d+\.\d+)"', (REPO / "pyproject.toml").read_text())
    assert pin is not None
    assert rq.__version__.startswith(pin.group(1) + "."), (rq.__version__, pin.group(0))


def test_a_started_job_is_registered_as_job_id_and_execution_id(queue: Queue) -> None:
    job = queue.enqueue("tests.helpers.rq_probe.started_members")
    worker = PromptSimpleWorker(
        [queue], connection=queue.connection, serializer=JSONSerializer, name="probe-worker"
    )
    worker.work(burst=True)
    job.refresh()
    assert job.get_status() == JobStatus.FINISHED, job.latest_result()
    seen = job.return_value()
    (pair,) = seen["pairs"]
    assert pair[0] == job.id
    assert seen["members"] == [f"{job.id}:{pair[1]}"]  # what recover_orphans removes
    assert seen["worker"] == "probe-worker"


def test_a_taken_job_waits_in_the_intermediate_list_with_a_first_seen_mark(queue: Queue) -> None:
    job = queue.enqueue("tests.helpers.rq_probe.started_members")
    Queue.lmove(queue.connection, queue.key, timeout=None)  # how a worker takes a job
    assert queue.connection.lrange(queue.intermediate_queue_key, 0, -1) == [job.id.encode()]
    intermediate = IntermediateQueue(queue.key, connection=queue.connection)
    assert intermediate.key == queue.intermediate_queue_key
    assert intermediate.get_job_ids() == [job.id]
    assert intermediate.set_first_seen(job.id) is True
    assert intermediate.set_first_seen(job.id) is False
    assert intermediate.get_first_seen(job.id) is not None


def test_a_job_failed_in_place_reads_as_failed_through_rqs_own_api(queue: Queue) -> None:
    job = queue.enqueue("tests.helpers.rq_probe.started_members")
    Queue.lmove(queue.connection, queue.key, timeout=None)
    fail_in_place(queue, job.id, "not ours: not run", ttl_s=60)
    job = Job.fetch(job.id, connection=queue.connection, serializer=JSONSerializer)
    assert job.get_status() == JobStatus.FAILED
    assert job.exc_info == "not ours: not run"
    assert job.id in FailedJobRegistry(queue=queue).get_job_ids()
    assert queue.connection.llen(queue.intermediate_queue_key) == 0


class _HeardWorker(AnnotationWorker):
    """An AnnotationWorker that keeps the commands its channel delivers instead of acting."""

    heard: list

    def handle_payload(self, message) -> None:
        self.heard.append(message)


def test_the_command_channel_hears_rqs_commands_and_stops_within_seconds(queue: Queue) -> None:
    """RQ's teardown stops this thread on every exit, and redis-py >= 8.2 waits for its read to
    end: with RQ's 60 s read a SIGTERM'd worker took up to a minute to exit."""
    worker = _HeardWorker(queue)
    worker.heard = []
    worker.subscribe()
    try:
        deadline = time.monotonic() + 10
        while not worker.heard and time.monotonic() < deadline:
            send_command(queue.connection, worker.name, "probe")  # RQ's own sender
            time.sleep(0.2)
        assert worker.heard, "the channel RQ's commands go to is not the one subscribed"
        assert b'"probe"' in worker.heard[0]["data"]
        time.sleep(0.3)  # the thread is back in its blocking read
        started = time.monotonic()
        worker.pubsub_thread.stop()
        assert time.monotonic() - started < 5
    finally:
        worker.unsubscribe()


def test_a_dead_schedulers_lock_names_its_registration_with_host_and_pid(queue: Queue) -> None:
    scheduler = RQScheduler([queue.name], connection=queue.connection)
    assert scheduler.acquire_locks() == {queue.name}
    lock = RQScheduler.get_locking_key(queue.name)
    assert queue.connection.get(lock).decode() == scheduler.name
    scheduler.pid = os.getpid()  # set by RQ in the scheduler's own process when it starts
    scheduler.heartbeat()  # as a running scheduler does
    scheduler.save()
    registered = queue.connection.hgetall(SCHEDULER_KEY_TEMPLATE % scheduler.name)
    assert registered[b"hostname"].decode() == socket.gethostname()
    assert registered[b"pid"].decode() == str(os.getpid())
    assert not release_dead_scheduler_lock(queue)  # this process is alive: the lock stays
    queue.connection.hset(SCHEDULER_KEY_TEMPLATE % scheduler.name, "pid", "999999999")
    assert release_dead_scheduler_lock(queue)  # gone from this host: released
    assert queue.connection.get(lock) is None
    queue.connection.delete(SCHEDULER_KEY_TEMPLATE % scheduler.name)


def test_take_queued_rewrites_the_payload_in_rqs_form_only_while_the_job_is_queued(
    queue: Queue,
) -> None:
    """What RQ reads back of the rewritten payload (its own API) is the merged list; a job
    already dequeued by another worker is not taken and nothing changes."""
    for i in range(3):
        enqueue_batch(queue, rollout_records(10 * i, 2, run_id=queue.name))
    taker, queued, gone = (Job.fetch(i, connection=queue.connection, serializer=JSONSerializer)
                           for i in queue.get_job_ids())  # fmt: skip
    queue.remove(taker)  # as a worker dequeues it
    queue.remove(gone)  # dequeued by another worker meanwhile
    merged = taker.args[0] + queued.args[0]
    assert take_queued(queue, taker, queued, [merged])
    stored = Job.fetch(taker.id, connection=queue.connection, serializer=JSONSerializer)
    assert stored.args == [merged] and stored.func_name == taker.func_name
    assert queued.get_status(refresh=True) == JobStatus.FINISHED and queue.count == 0
    assert not take_queued(queue, taker, gone, [merged + gone.args[0]])
    assert taker.args == [merged] and gone.get_status(refresh=True) == JobStatus.QUEUED
    stored = Job.fetch(taker.id, connection=queue.connection, serializer=JSONSerializer)
    assert stored.args == [merged]


# --- reading jobs within bounds (BoundedJob, BoundedScheduler) ---

BOMB_INFLATED = 200_000_000  # '[' repeated: ~0.9 MB stored, 200 MB once inflated


def _bomb() -> bytes:
    return zlib.compress(b"[" * BOMB_INFLATED, 1)


def _peak_mib(action) -> float:
    """The most memory Python held while `action` ran, in MiB."""
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_bounded_job_holds_none_of_what_rq_acts_on_by_itself(queue: Queue) -> None:
    """Each way RQ 2.12 lets a job's hash make it import and call code, send a request or run a
    job again is a field the reader refuses, and the job it reads holds none of them: a new RQ
    that adds one, or renames one, fails here."""
    enqueue_batch(queue, rollout_records(0, 2, run_id=queue.name))  # as the producer does
    (ours,) = queue.get_job_ids()
    plain = Job.fetch(ours, connection=queue.connection, serializer=JSONSerializer)
    read = BoundedJob.fetch(ours, connection=queue.connection, serializer=JSONSerializer)
    assert read.refusal is None
    assert (read.func_name, read.args, read.timeout) == (plain.func_name, plain.args, plain.timeout)

    parent = queue.enqueue("os.getcwd")
    hook = Callback("os.getcwd")
    hostile = {
        "success_callback_name": {"on_success": hook},
        "failure_callback_name": {"on_failure": hook},
        "stopped_callback_name": {"on_stopped": hook},
        "webhooks": {"webhooks": [Webhook("http://127.0.0.1:9/hook", "finished")]},
        "dependency_ids": {"depends_on": parent},
        "retries_left": {"retry": Retry(max=3)},
        "repeats_left": {"repeat": Repeat(times=3)},
    }
    made = [parent]
    try:
        for field, options in hostile.items():
            made.append(queue.enqueue(JOB_FUNCTION, [], **options))
            _check_refused(queue, made[-1], field)
    finally:
        for job in made:  # a dependency's keys are not named after the queue: the fixture
            job.delete()  # would leave them


def _check_refused(queue: Queue, job: Job, field: str) -> None:
    stored = {name.decode() for name, value in queue.connection.hgetall(job.key).items() if value}
    assert set(ACTED_ON_FIELDS) & stored, (field, stored)  # what RQ wrote is one we refuse
    read = BoundedJob.fetch(job.id, connection=queue.connection, serializer=JSONSerializer)
    assert read.refusal is not None and field in read.refusal, (field, read.refusal)
    assert read.success_callback is None and read.failure_callback is None
    assert read.stopped_callback is None and read.webhooks == []
    assert read.dependency is None and read.retries_left is None
    assert read.repeats_left is None and read.func_name == JOB_FUNCTION


def test_a_zlib_bomb_is_read_within_the_bound_and_refused(queue: Queue) -> None:
    connection = queue.connection
    connection.hset(
        Job.key_for("bomb"),
        mapping={"data": _bomb(), "status": "queued", "origin": queue.name},
    )
    read: list[BoundedJob] = []
    peak = _peak_mib(lambda: read.append(BoundedJob.fetch("bomb", connection, JSONSerializer)))
    assert peak < MAX_JOB_BYTES / 2**20 + 20, peak  # RQ's Job.fetch: 200 MB at least
    assert read[0].refusal is not None and "payload over" in read[0].refusal

    # Too large a hash is refused before Redis sends it; a key that is no hash, by its id too.
    connection.hset(Job.key_for("huge"), mapping={"data": b"x" * (MAX_JOB_BYTES + 2**21)})
    connection.set(Job.key_for("plain-string"), "not a job")
    for job_id in ("huge", "plain-string"):
        with pytest.raises(JobRefused) as refused:
            BoundedJob.fetch(job_id, connection, JSONSerializer)
        assert refused.value.job_id == job_id and "not read" in str(refused.value)
    connection.delete(*(Job.key_for(i) for i in ("bomb", "huge", "plain-string")))


def test_the_scheduler_moves_due_jobs_reading_them_within_bounds(queue: Queue) -> None:
    """RQ's scheduler reads due jobs with RQ's Job (a bomb inflated whole, in the scheduler's
    process); the worker's reads them as BoundedJob and leaves a refused one on the queue, as
    stored, for the worker to refuse and say why."""
    connection = queue.connection
    due = datetime.now(timezone.utc) - timedelta(seconds=1)
    good = queue.enqueue_at(due, JOB_FUNCTION, rollout_records(0, 1, run_id=queue.name))
    bomb = _bomb()
    stored = {"data": bomb, "status": "scheduled", "origin": queue.name}
    connection.hset(Job.key_for("bomb"), mapping=stored)
    connection.zadd(ScheduledJobRegistry(queue=queue).key, {"bomb": due.timestamp()})
    scheduler = BoundedScheduler([queue], connection=connection, serializer=JSONSerializer)
    assert scheduler.acquire_locks() == {queue.name}
    try:
        peak = _peak_mib(scheduler.enqueue_scheduled_jobs)
    finally:
        scheduler.release_locks()
    assert peak < MAX_JOB_BYTES / 2**20 + 20, peak
    assert queue.get_job_ids() == [good.id, "bomb"]
    assert connection.hget(Job.key_for("bomb"), "data") == bomb  # never saved back
    assert ScheduledJobRegistry(queue=queue).count == 0
    connection.delete(Job.key_for("bomb"))
