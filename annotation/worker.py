"""The RQ worker that imports batches: JSON only, one function only, and quick to recover.

- Only `annotation.jobs.import_batch` with one list argument runs. Anything else on the queue (a
  pickle payload, unreadable data, another function) is moved to the failed registry with the
  reason, counted as a rejected job, and never imported or executed.
- A SimpleWorker (no fork per job: the Label Studio SDK is imported once), with RQ's scheduler,
  which puts retried batches back on the queue when their interval is up.
- Jobs left "started" by a worker that died (SIGKILL, OOM) wait for RQ's heartbeat expiry, 1.5
  min or more, and then fail. A starting worker, and every maintenance pass (10 s), puts such
  orphans back on the queue at once when their worker is certainly gone: its registration has
  expired, or it ran on this host and its process no longer exists. A job taken but not yet
  started when its worker died is put back after 10 s (RQ would fail it after a minute). The
  job's next attempt reconciles with Label Studio before importing (see importer.py), so
  nothing is imported twice.
- An idle worker wakes every few seconds for that maintenance: RQ's own idle wait is the worker
  TTL less 15 s (405 s), which left a dead worker's job stranded that long, and then failed it.
- A dead worker's scheduler keeps the queue's scheduler lock for a minute, and retried batches
  wait for whoever holds it; the lock of a scheduler that ran on this host and is gone is
  released, so a live worker's scheduler takes over at once.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from typing import Any

import psutil
import redis
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.utils import now
from rq.worker import Worker

from annotation import ledger
from sampling.records import JOB_FUNCTION

REJECTED_TTL_S = 7 * 24 * 3600  # as long as a failed batch waits for `lowtide queue requeue`
MAINTENANCE_INTERVAL_S = 10
IDLE_WAKE_S = 5  # how long an idle worker blocks on the queue before its maintenance check
STUCK_AFTER_S = 10
log = logging.getLogger("annotation.worker")


def worker_name() -> str:
    return f"lowtide-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def rejection_reason(job: Job) -> str | None:
    """Why this job must not run, or None. Reading func_name and args deserializes the payload,
    with the queue's JSON serializer: nothing in it is executed."""
    try:
        func_name, args, kwargs = job.func_name, job.args, job.kwargs
    except Exception as error:  # DeserializationError, or worse: the payload is not ours
        return (
            f"payload is not readable as JSON ({type(error).__name__}): not run. A pickle "
            "payload, or data written by something other than lowtide's producer"
        )
    if func_name != JOB_FUNCTION:
        return f"refusing to run {str(func_name)[:200]!r}: this worker runs only {JOB_FUNCTION}"
    if kwargs or len(args) != 1 or not isinstance(args[0], list):
        return f"{JOB_FUNCTION} takes one argument, a list of records: not run"
    return None


class AnnotationWorker(SimpleWorker):
    """See the module docstring. `queue_name` is the annotation queue (for the counters)."""

    def __init__(self, queue: Queue, **kwargs: Any) -> None:
        kwargs.setdefault("name", worker_name())
        kwargs.setdefault("maintenance_interval", MAINTENANCE_INTERVAL_S)
        connection, serializer = queue.connection, queue.serializer
        super().__init__([queue], connection=connection, serializer=serializer, **kwargs)
        self.annotation_queue = queue

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        super().bootstrap(*args, **kwargs)
        self._recover()

    @property
    def dequeue_timeout(self) -> int:
        return IDLE_WAKE_S

    def run_maintenance_tasks(self) -> None:
        # Ours first: RQ's pass fails a job stuck in the intermediate list for over a minute,
        # and it (re)starts the scheduler, which needs the lock a dead one may still hold.
        self._recover()
        super().run_maintenance_tasks()

    def _recover(self) -> None:
        recovered = recover_orphans(self.annotation_queue)
        if recovered:
            log.warning("put %d batch(es) of dead workers back on the queue", recovered)
        if release_dead_scheduler_lock(self.annotation_queue):
            log.warning("released the scheduler lock of a dead worker")

    def dequeue_job_and_maintain_ttl(self, timeout: int | None, max_idle_time: int | None = None):
        while True:
            try:
                return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
            except redis.RedisError:
                raise
            except Exception as error:
                job_id = getattr(error, "job_id", None)
                if job_id is None:
                    raise
                # The job's hash itself could not be read: reject it by id and go on.
                reason = f"job data is unreadable ({type(error).__name__}): not run"
                self._reject(job_id, reason)

    def execute_job(self, job: Job, queue: Queue) -> None:
        reason = rejection_reason(job)
        if reason is None:
            super().execute_job(job, queue)
            return
        self._reject(job.id, reason)

    def _reject(self, job_id: str, reason: str) -> None:
        queue = self.annotation_queue
        connection = queue.connection
        with connection.pipeline() as pipe:
            pipe.hset(
                Job.key_for(job_id),
                mapping={"status": JobStatus.FAILED.value, "exc_info": reason},
            )
            pipe.expire(Job.key_for(job_id), REJECTED_TTL_S)
            pipe.zadd(FailedJobRegistry(queue=queue).key, {job_id: time.time() + REJECTED_TTL_S})
            pipe.lrem(queue.intermediate_queue_key, 1, job_id)
            pipe.execute()
        ledger.add_counts(connection, queue.name, {"rejected_jobs": 1})
        ledger.quarantine(connection, queue.name, [{"reason": reason, "job_id": job_id}])
        log.warning("job %s rejected: %s", job_id, reason)


def recover_orphans(queue: Queue) -> int:
    """Put back on the queue the started jobs whose worker is certainly dead; how many."""
    registry = StartedJobRegistry(queue=queue)
    connection = queue.connection
    recovered = 0
    for job_id, execution_id in registry.get_job_and_execution_ids(cleanup=False):
        try:
            execution = Execution.fetch(execution_id, job_id, connection)
            owner = execution.worker_name
        except Exception:  # the execution record expired: its worker stopped heartbeating
            owner = ""
        if owner and _worker_alive(connection, owner):
            continue
        composite = f"{job_id}:{execution_id}"
        if not connection.zrem(registry.key, composite):
            continue  # another worker recovered it first
        try:
            job = Job.fetch(job_id, connection=connection, serializer=queue.serializer)
        except Exception:
            continue  # expired or unreadable: nothing to rerun
        queue.enqueue_job(job, at_front=True)
        recovered += 1
    return recovered + _recover_stuck_in_intermediate(queue, registry)


def _recover_stuck_in_intermediate(queue: Queue, started: StartedJobRegistry) -> int:
    """A worker killed between taking a job and registering it as started leaves the id only in
    RQ's intermediate list. RQ fails such a job after a minute; put it back instead, once it has
    been seen there, not started, for STUCK_AFTER_S (a live worker takes milliseconds)."""
    intermediate = IntermediateQueue(queue.key, connection=queue.connection)
    recovered = 0
    for job_id in intermediate.get_job_ids():
        if job_id in started or intermediate.set_first_seen(job_id):
            continue  # running, or seen for the first time now
        first_seen = intermediate.get_first_seen(job_id)
        if first_seen is None or (now() - first_seen).total_seconds() < STUCK_AFTER_S:
            continue
        if not queue.connection.lrem(intermediate.key, 1, job_id):
            continue  # another worker got there first
        job = queue.fetch_job(job_id)
        if job is not None:
            queue.enqueue_job(job, at_front=True)
            recovered += 1
    return recovered


def release_dead_scheduler_lock(queue: Queue) -> bool:
    """Free the queue's scheduler lock when the scheduler holding it ran on this host and its
    process is gone (RQ keeps it for a minute after the last refresh). True if released."""
    connection = queue.connection
    lock_key = RQScheduler.get_locking_key(queue.name)
    holder = connection.get(lock_key)
    if holder is None:
        return False
    owner = holder.decode()
    info = connection.hmget(SCHEDULER_KEY_TEMPLATE % owner, ["hostname", "pid"])
    hostname, pid = (value.decode() if value else "" for value in info)
    if not _gone_from_this_host(hostname, int(pid) if pid.isdigit() else 0):
        return False  # alive, another machine's, or not registered yet: leave it to its TTL
    return release_lock(connection, lock_key, owner)


def _worker_alive(connection: redis.Redis, name: str) -> bool:
    worker = Worker.find_by_key(Worker.redis_worker_namespace_prefix + name, connection=connection)
    if worker is None:
        return False  # its registration expired or it said goodbye
    return not _gone_from_this_host(worker.hostname or "", worker.pid or 0)


def _gone_from_this_host(hostname: str, pid: int) -> bool:
    """Certainly dead: it ran on this host and its process no longer exists. Another machine's
    process, or one with no pid, is trusted until its registration expires."""
    return hostname == socket.gethostname() and pid > 0 and not _process_exists(pid)


def _process_exists(pid: int) -> bool:
    try:
        # A zombie (killed, not yet reaped by its parent) is dead too.
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # another user's process, alive
