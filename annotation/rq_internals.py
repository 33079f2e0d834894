"""Where lowtide reaches past RQ's public API, all in one place (rq pinned to 2.12 in
pyproject.toml; tests/test_rq_internals.py fails when a new RQ changes what these rely on).

- A job's hash fields (`status`, `exc_info`) and the failed registry's scores, written directly
  to fail a job whose payload must not be loaded.
- The started registry's members, `job_id:execution_id`, removed one at a time so that exactly
  one worker recovers an orphan; an execution's worker name, and a worker's registration.
- The intermediate list a job sits in between being taken and being started, and its
  first-seen marks (`rq.intermediate_queue`).
- The scheduler's lock key and its registration hash (`rq:scheduler:<name>`: hostname, pid),
  and RQ's own release script.
- A job's stored payload (the hash's `data` field: the serializer's `(func, instance, args,
  kwargs)`, zlib-compressed, as `Job.to_dict` writes it) rewritten in place, and a queued job
  marked finished by its `status` field, to take one job's records into another
  (`take_queued`, for paced imports: annotation/coalesce.py).
- The worker's command channel (`pubsub_channel_name`, `handle_payload`,
  `_pubsub_exception_handler`), subscribed as RQ's `Worker.subscribe` does but with a short
  read (`PromptSimpleWorker`).
The worker (annotation/worker.py) uses these; nothing else does (tests run their burst workers
as PromptSimpleWorker too).
"""

from __future__ import annotations

import socket
import time
import zlib

import psutil
import redis
from rq import Queue, SimpleWorker
from rq.defaults import DEFAULT_RESULT_TTL
from rq.executions import Execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.utils import now
from rq.worker import Worker

STUCK_AFTER_S = 10
# How long the worker's command-channel thread blocks on one read. RQ reads for 60 s, and since
# redis-py 8.2 `PubSubWorkerThread.stop()` joins the thread: a worker asked to stop waited up to
# a minute for that read to end before it exited.
COMMAND_READ_S = 1.0
# KEYS: the queue's list, the taking job's hash, the taken job's hash. ARGV: the taken job's
# id, the taking job's new payload, how long the taken job's hash stays (its result_ttl).
_TAKE = """
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'data', ARGV[2])
redis.call('HSET', KEYS[3], 'status', ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return 1
"""


def fail_in_place(queue: Queue, job_id: str, reason: str, ttl_s: int) -> None:
    """Mark a job failed without loading it (its payload may be unreadable or hostile): its
    hash's status and reason, the failed registry, and out of the intermediate list."""
    key = Job.key_for(job_id)
    with queue.connection.pipeline() as pipe:
        pipe.hset(key, mapping={"status": JobStatus.FAILED.value, "exc_info": reason})
        pipe.expire(key, ttl_s)
        pipe.zadd(FailedJobRegistry(queue=queue).key, {job_id: time.time() + ttl_s})
        pipe.lrem(queue.intermediate_queue_key, 1, job_id)
        pipe.execute()


def take_queued(queue: Queue, taker: Job, taken: Job, args: list) -> bool:
    """In one step: remove `taken` from the queue, store `args` as `taker`'s payload (in Redis
    and in `taker`), and mark `taken` finished (its hash stays for its result_ttl, so that the
    same batch sent again is still refused as a duplicate). False, and nothing changed, when
    `taken` is no longer on the queue (a worker took it first)."""
    before = taker.args
    # Set before the script runs: should its answer be lost (Redis gone mid-call), the job RQ
    # saves on failure still holds the records the script may have moved into it.
    taker.args = args
    payload = zlib.compress(taker.data)
    ttl = taken.result_ttl if taken.result_ttl and taken.result_ttl > 0 else DEFAULT_RESULT_TTL
    keys = [queue.key, taker.key, taken.key]
    done = queue.connection.eval(_TAKE, 3, *keys, taken.id, payload, ttl, JobStatus.FINISHED.value)
    if not done:
        taker.args = before
    return bool(done)


class PromptSimpleWorker(SimpleWorker):
    """RQ's SimpleWorker whose command-channel thread (commands such as
    `rq.command.send_shutdown_command` arrive there) reads COMMAND_READ_S at a time, so that
    stopping it, which RQ's teardown does on every exit, burst runs included, takes about that
    long at most. `subscribe` is RQ's own with that one number changed."""

    def subscribe(self) -> None:
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=COMMAND_READ_S,
            daemon=True,
            exception_handler=self._pubsub_exception_handler,
        )


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
