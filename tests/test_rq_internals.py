"""What annotation/rq_internals.py relies on in RQ beyond its public API, checked against the
RQ installed: a new RQ that changes any of it fails here, before the worker's exactly-once
recovery silently stops working (the worker's SIGKILL tests would catch it later, slower)."""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Iterator

import pytest
import redis
import rq
from rq import Queue
from rq.command import send_command
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.serializers import JSONSerializer

from annotation.rq_internals import (
    PromptSimpleWorker,
    fail_in_place,
    release_dead_scheduler_lock,
    take_queued,
)
from annotation.worker import AnnotationWorker
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
