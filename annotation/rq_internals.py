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
- How RQ reads a job (`Job.refresh`, `Job.restore`: every hash field it reads, the ones that make
  it import and call code, and its zlib fallback; a result stream's entry, `Result.restore`),
  and the scheduler's pass over due jobs (`RQScheduler.enqueue_scheduled_jobs`), redone within
  bounds (`BoundedJob`, `BoundedScheduler`): anyone who can write to Redis writes these hashes.
  With it, which jobs may run at all (`rejection_reason`: the stored hash, then the function
  and its arguments), which the worker, coalescing and `lowtide queue requeue` ask before a
  job runs, is taken or is put back. Junk of any shape is refused by its id, never fatal: ids
  RQ's own check refuses, keys that are no hash, hashes without a payload, wherever RQ reads
  them (the queue, the scheduled registry, the intermediate list).
- Every RQ worker method the annotation worker overrides (`GuardedWorker`): annotation/worker.py
  says only what to do, in methods of its own.
- The scheduled registry's first member and its time, for `lowtide worker --burst`
  (`waiting_for_retry`).
The worker (annotation/worker.py) uses these, and `lowtide queue` reads jobs as BoundedJob;
nothing else does (tests run their burst workers as PromptSimpleWorker too).
"""

from __future__ import annotations

import socket
import time
import zlib
from base64 import b64decode
from collections.abc import Callable, Iterable
from typing import Any

import psutil
import redis
from redis.client import Pipeline
from rq import Queue, SimpleWorker
from rq.defaults import (
    DEFAULT_LOGGING_DATE_FORMAT,
    DEFAULT_LOGGING_FORMAT,
    DEFAULT_RESULT_TTL,
)
from rq.exceptions import NoSuchJobError
from rq.executions import Execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry
from rq.results import Result
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.scripts import release_lock
from rq.utils import as_text, current_timestamp, now
from rq.worker import Worker

from rl.visible_text import cut_line, visible_line
from sampling.records import JOB_FUNCTION

STUCK_AFTER_S = 10
# What a job read as BoundedJob may hold. A producer's batch of 500 records of 20,000-character
# texts is ~21 MB of JSON; the worker's pod has 1 GiB, and a payload costs several times its size
# while it is parsed and validated.
MAX_JOB_BYTES = 64 * 2**20  # the payload (the records' JSON), inflated
MAX_STORED_JOB_BYTES = MAX_JOB_BYTES + 2**20  # the job's hash as stored, every field and name
MAX_STORED_FIELDS = 64  # RQ 2.12 writes 30 at most
MAX_ERROR_BYTES = 2**20  # a stored error text (exc_info, a result's exc_string), inflated
MAX_JOB_TIMEOUT_S = 3600  # lowtide's producer sets 300
MAX_TTL_S = 30 * 24 * 3600  # result_ttl, failure_ttl: lowtide's producer sets an hour, a week
INFLATE_CHUNK = 2**20
SHOWN_ID_CHARS = 120  # of a job id in a log line: RQ's own ids are 40 characters
# Hash fields RQ acts on by itself: it imports and calls the callbacks (`import_attribute`),
# sends the webhooks' HTTP requests, holds or releases a job on its dependencies, and reruns a
# job on its own retries and repeats. lowtide sets none of them: a job with one is refused, and
# a BoundedJob never holds them.
ACTED_ON_FIELDS = (
    "success_callback_name",
    "failure_callback_name",
    "stopped_callback_name",
    "webhooks",
    "dependency_id",
    "dependency_ids",
    "retries_left",
    "retry_intervals",
    "repeats_left",
    "repeat_intervals",
)
# How many times the workers running a job died on it (a hash field of ours; RQ leaves it).
ORPHANED_FIELD = "lowtide_orphaned"
# KEYS: a job's hash. ARGV: the most fields, the most bytes. The hash, after {1}, or {0, what,
# how many} when it is over a bound; nothing when there is no such key.
_READ_JOB = """
local fields = redis.call('HLEN', KEYS[1])
if fields == 0 then return false end
if fields > tonumber(ARGV[1]) then return {0, 'fields', fields} end
local size = 0
for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
  size = size + #name + redis.call('HSTRLEN', KEYS[1], name)
end
if size > tonumber(ARGV[2]) then return {0, 'bytes', size} end
local found = redis.call('HGETALL', KEYS[1])
table.insert(found, 1, 1)
return found
"""
# KEYS: a job's result stream. ARGV: the most bytes. Its latest entry, or only its id when the
# entry is larger; nothing when there is none.
_LATEST_RESULT = """
local entry = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if not entry then return false end
local size = 0
for _, part in ipairs(entry[2]) do size = size + #part end
if size > tonumber(ARGV[1]) then return {entry[1]} end
return entry
"""
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


GiveUp = Callable[[str, str], None]  # (job id, reason): fail the job in place and say why


class JobRefused(Exception):
    """A job too large to read at all, or whose key is not a job's hash; `job_id` names it (as
    RQ's dequeue names a job whose fetch failed), the message is the reason."""

    def __init__(self, job_id: str, reason: str) -> None:
        super().__init__(reason)
        self.job_id = job_id


class PayloadTooLarge(ValueError):
    """Stored data that inflates past its bound."""


def inflate_within(stored: bytes, limit: int) -> bytes:
    """`stored` inflated as RQ's `zlib.decompress` would, but never past `limit` bytes
    (PayloadTooLarge): a 1 MB zlib bomb inflates to 1 GB. What is not a whole zlib stream is
    taken as stored uncompressed, as RQ takes it."""
    inflater = zlib.decompressobj()
    chunks, size, pending = [], 0, stored
    try:
        while True:
            chunk = inflater.decompress(pending, INFLATE_CHUNK)
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"over {limit:,} bytes once inflated")
            chunks.append(chunk)
            pending = inflater.unconsumed_tail
            if inflater.eof or not (pending or chunk):
                break
    except zlib.error:
        return stored
    return b"".join(chunks) if inflater.eof else stored


def _error_text(stored: bytes | None) -> str | None:
    if not stored:
        return None
    try:
        text = inflate_within(stored, MAX_ERROR_BYTES)
    except PayloadTooLarge:
        text = b""
    if not text or len(text) > MAX_ERROR_BYTES:  # a bomb, or as much stored uncompressed
        return f"(the error stored for this job is over {MAX_ERROR_BYTES:,} bytes: not read)"
    return text.decode("utf-8", "replace")


class BoundedJob(Job):
    """RQ's Job, read within bounds and without what makes RQ act on its own.

    - `refresh` (so `fetch`) checks the stored hash's size in Redis before it is sent, and
      raises JobRefused past MAX_STORED_FIELDS fields or MAX_STORED_JOB_BYTES bytes;
    - `restore` inflates the payload at most to MAX_JOB_BYTES and an error text to
      MAX_ERROR_BYTES (RQ inflates both whole), and never sets ACTED_ON_FIELDS;
    - `refusal` says why the job must not run (None: nothing against it): a payload too large,
      any of ACTED_ON_FIELDS set, a timeout or result lifetime lowtide never sets, a meta that
      is not a JSON object. Its function and arguments are the worker's to check.
    """

    refusal: str | None = None

    @classmethod
    def fetch_many(
        cls, job_ids: Iterable[str], connection: redis.Redis, serializer: Any = None
    ) -> list[Job | None]:
        """One bounded read each (RQ's reads every hash whole); a job too large to read reads
        as missing, None, as a job that is gone does. RQ uses this for a job's dependents."""
        jobs: list[Job | None] = []
        for job_id in job_ids:
            try:
                jobs.append(cls.fetch(job_id, connection=connection, serializer=serializer))
            except (NoSuchJobError, JobRefused):
                jobs.append(None)
        return jobs

    def refresh(self) -> None:
        try:
            found = self.connection.eval(
                _READ_JOB, 1, self.key, MAX_STORED_FIELDS, MAX_STORED_JOB_BYTES
            )
        except redis.ResponseError:  # WRONGTYPE: RQ's HGETALL would fail the same way
            raise JobRefused(self.id, "its key in Redis is not a job's hash: not read") from None
        if not found:
            raise NoSuchJobError(f"No such job: {self.key}")
        if not found[0]:
            what, amount = as_text(found[1]), int(found[2])
            bound = MAX_STORED_FIELDS if what == "fields" else MAX_STORED_JOB_BYTES
            raise JobRefused(
                self.id,
                f"stored job of {amount:,} {what}, over the {bound:,} a worker reads: not read",
            )
        flat = found[1:]
        self.restore(dict(zip(flat[::2], flat[1::2], strict=True)))

    def restore(self, raw_data: Any) -> None:
        fields = {as_text(name): value for name, value in raw_data.items()}
        if "data" not in fields:
            # RQ's own error quotes the whole hash, whatever was written into it.
            raise JobRefused(self.id, "stored job has no payload (no `data` field): not read")
        acted = [name for name in ACTED_ON_FIELDS if fields.get(name)]
        kept = {
            name: value
            for name, value in fields.items()
            if name not in ACTED_ON_FIELDS and name != "exc_info"
        }
        # RQ would inflate these whole: an empty payload it takes as stored, the rest below.
        super().restore({**kept, "data": b""})
        self._exc_info = _error_text(fields.get("exc_info"))
        self.refusal = None
        try:
            self.data = inflate_within(fields["data"], MAX_JOB_BYTES)
        except PayloadTooLarge as error:
            self.refusal = f"payload {error} (a zlib bomb, or too large a batch): not run"
            return
        if acted:
            self.refusal = (
                f"sets {', '.join(acted)}: RQ would import and call, request or rerun what it "
                "names, and lowtide's jobs set none of them: not run"
            )
            return
        self.refusal = self._settings_refusal()

    def _settings_refusal(self) -> str | None:
        if self.timeout is not None and not 0 < self.timeout <= MAX_JOB_TIMEOUT_S:
            return f"timeout {self.timeout} s, not 1 to {MAX_JOB_TIMEOUT_S} s: not run"
        for name in ("result_ttl", "failure_ttl"):
            ttl = getattr(self, name)
            if ttl is not None and not 0 <= ttl <= MAX_TTL_S:
                return f"{name} {ttl} s, not 0 to {MAX_TTL_S} s: not run"
        if not isinstance(self.meta, dict) or "unserialized" in self.meta:
            return "meta is not a JSON object: not run"
        return None

    def rejection(self, origin: str | None = None) -> str | None:
        """Why a worker of the queue `origin` would refuse this job (`rejection_reason`), so
        that `lowtide queue requeue` leaves it failed."""
        return rejection_reason(self, origin)

    def latest_result(self, timeout: int = 0) -> Result | None:
        """The latest result, as RQ's (without waiting: `timeout` is ignored), its entry's size
        checked in Redis first and its error text inflated within MAX_ERROR_BYTES."""
        found = self.connection.eval(_LATEST_RESULT, 1, Result.get_key(self.id), MAX_ERROR_BYTES)
        if not found:
            return None
        result_id = as_text(found[0])
        if len(found) == 1:
            note = f"(the result stored for this job is over {MAX_ERROR_BYTES:,} bytes: not read)"
            return Result(self.id, Result.Type.FAILED, self.connection, id=result_id,
                          exc_string=note, serializer=self.serializer)  # fmt: skip
        payload = dict(zip(found[1][::2], found[1][1::2], strict=True))
        stored_error = payload.pop(b"exc_string", None)
        result = Result.restore(
            self.id, result_id, payload, connection=self.connection, serializer=self.serializer
        )
        result.exc_string = _error_text(b64decode(stored_error)) if stored_error else None
        return result


def bounded_queue(queue: Queue) -> Queue:
    """The same queue, its jobs (and its registries' jobs) read as BoundedJob."""
    return Queue(
        queue.name, connection=queue.connection, serializer=queue.serializer, job_class=BoundedJob
    )


def shown_job_id(job_id: str) -> str:
    """A job id as a log line may hold it: anyone who writes to Redis names the ids on the
    queue, and one with a line break or an escape would forge or hide log lines."""
    return cut_line(visible_line(job_id), SHOWN_ID_CHARS)


def unreadable_reason(error: Exception) -> str:
    """Why a job that could not even be read is not run, for the quarantine."""
    if isinstance(error, JobRefused):
        return str(error)
    return f"job data is unreadable ({type(error).__name__}): not run"


def rejection_reason(job: Job, origin: str | None = None) -> str | None:
    """Why this job must not run, or None. A job read as BoundedJob first answers for its
    stored hash (`refusal`); `origin`, when given, is the queue it must have been made for.
    Reading func_name and args deserializes the payload, with the queue's JSON serializer:
    nothing in it is executed. Junk of a shape no check foresaw is refused too: the worker,
    coalescing and `lowtide queue requeue` ask this, and none of them may stop on it."""
    try:
        return _rejection_reason(job, origin)
    except redis.RedisError:
        raise
    except Exception as error:
        return unreadable_reason(error)


def _rejection_reason(job: Job, origin: str | None) -> str | None:
    if isinstance(job, BoundedJob) and job.refusal:
        return job.refusal
    if origin is not None and job.origin != origin:
        return f"made for the queue {job.origin[:200]!r}, found on {origin!r}: not run"
    try:
        func_name, instance, args, kwargs = job.func_name, job.instance, job.args, job.kwargs
    except Exception as error:  # DeserializationError, or worse: the payload is not ours
        return (
            f"payload is not readable as JSON ({type(error).__name__}): not run. A pickle "
            "payload, or data written by something other than lowtide's producer"
        )
    if func_name != JOB_FUNCTION:
        return f"refusing to run {str(func_name)[:200]!r}: this worker runs only {JOB_FUNCTION}"
    # JSON of any shape may stand where RQ's own payload has a list and a dict.
    if instance is not None or kwargs or not _one_list(args):
        return f"{JOB_FUNCTION} takes one argument, a list of records: not run"
    return None


def _one_list(args: Any) -> bool:
    return isinstance(args, list | tuple) and len(args) == 1 and isinstance(args[0], list)


def fail_in_place(queue: Queue, job_id: str, reason: str, ttl_s: int) -> None:
    """Mark a job failed without loading it (its payload may be unreadable or hostile): its
    hash's status and reason, the failed registry, and out of the intermediate list and the
    started registry (RQ's own cleanup of either would read it again)."""
    key = Job.key_for(job_id)
    started = StartedJobRegistry(queue=queue).key
    prefix = f"{job_id}:".encode()
    executions = [m for m in queue.connection.zrange(started, 0, -1) if m.startswith(prefix)]
    # A key that is not a hash (a string written under a job's name) takes no hash fields:
    # HSET on it fails, and that failure stopped the worker.
    is_hash = queue.connection.type(key) == b"hash"
    with queue.connection.pipeline() as pipe:
        if is_hash:
            pipe.hset(key, mapping={"status": JobStatus.FAILED.value, "exc_info": reason})
            pipe.expire(key, ttl_s)
        pipe.zadd(FailedJobRegistry(queue=queue).key, {job_id: time.time() + ttl_s})
        pipe.lrem(queue.intermediate_queue_key, 1, job_id)
        if executions:
            pipe.zrem(started, *executions)
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


class BoundedScheduler(RQScheduler):
    """RQ's scheduler, which reads the jobs that are due with its own Job class (a stored bomb
    would be inflated whole in the scheduler's process), reading them as BoundedJob. A job too
    large to read, or refused, is put on the queue by its id as it is stored, where the worker
    refuses it and says why.
    `enqueue_scheduled_jobs` is RQ's own with that changed."""

    def enqueue_scheduled_jobs(self) -> None:
        self._status = self.Status.WORKING
        if not self._scheduled_job_registries and self._acquired_locks:
            self.prepare_registries()
        for registry in self._scheduled_job_registries:
            job_ids = registry.get_jobs_to_schedule(current_timestamp())
            if not job_ids:
                continue
            queue = Queue(registry.name, connection=self.connection, serializer=self.serializer,
                          job_class=BoundedJob)  # fmt: skip
            with self.connection.pipeline() as pipeline:
                for job_id in job_ids:
                    self._enqueue_due(queue, job_id, pipeline)
                    registry.remove(job_id, pipeline=pipeline)
                pipeline.execute()
        self._status = self.Status.STARTED

    def _enqueue_due(self, queue: Queue, job_id: str, pipeline: Pipeline) -> None:
        try:
            job = BoundedJob.fetch(job_id, self.connection, self.serializer)
        except NoSuchJobError:
            return
        except (redis.ConnectionError, redis.TimeoutError):
            raise
        except Exception:  # too large, an id RQ never makes, a junk field: the worker says which
            pipeline.rpush(queue.key, job_id)
            return
        if job.refusal:
            pipeline.rpush(queue.key, job_id)  # never saved back from what was read of it
            return
        queue._enqueue_job(job, pipeline=pipeline, at_front=job.should_enqueue_at_front())


class PromptSimpleWorker(SimpleWorker):
    """RQ's SimpleWorker whose command-channel thread (commands such as
    `rq.command.send_shutdown_command` arrive there) reads COMMAND_READ_S at a time, so that
    stopping it, which RQ's teardown does on every exit, burst runs included, takes about that
    long at most. `subscribe` is RQ's own with that one number changed; `_start_scheduler` is
    RQ's own with a BoundedScheduler."""

    def subscribe(self) -> None:
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=COMMAND_READ_S,
            daemon=True,
            exception_handler=self._pubsub_exception_handler,
        )

    def _start_scheduler(
        self,
        burst: bool = False,
        logging_level: str | None = "INFO",
        date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
        log_format: str = DEFAULT_LOGGING_FORMAT,
    ) -> None:
        self.scheduler = BoundedScheduler(
            self.queues,
            connection=self.connection,
            logging_level=logging_level if logging_level is not None else self.log.level,
            date_format=date_format,
            log_format=log_format,
            serializer=self.serializer,
        )
        self.scheduler.acquire_locks()
        if not self.scheduler.acquired_locks:
            return
        if not burst:
            self.scheduler.start()
            return
        try:
            self.scheduler.register_birth()
            self.scheduler.enqueue_scheduled_jobs()
        finally:
            self.scheduler.release_locks()
            self.scheduler.register_death()


def recover_orphans(queue: Queue, max_requeues: int, give_up: GiveUp) -> int:
    """Put back on the queue the started jobs whose worker is certainly dead; how many. A job
    whose workers died on it more than `max_requeues` times, or that cannot be read within
    bounds, is handed to `give_up` instead (a job that kills its worker would cycle through the
    workers for ever)."""
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
        recovered += _put_back(queue, job_id, max_requeues, give_up)
    return recovered + _recover_stuck_in_intermediate(queue, registry, max_requeues, give_up)


def _recover_stuck_in_intermediate(
    queue: Queue, started: StartedJobRegistry, max_requeues: int, give_up: GiveUp
) -> int:
    """A worker killed between taking a job and registering it as started leaves the id only in
    RQ's intermediate list. RQ fails such a job after a minute; put it back instead, once it has
    been seen there, not started, for STUCK_AFTER_S (a live worker takes milliseconds)."""
    intermediate = IntermediateQueue(queue.key, connection=queue.connection)
    recovered = 0
    for job_id in intermediate.get_job_ids():
        if job_id in started:
            continue
        unreadable = _unreadable(queue, job_id)
        if unreadable is not None:
            # Given up at first sight: RQ's own cleanup of this list, which runs next, reads
            # every job in it and stops the worker on one it cannot read.
            if queue.connection.lrem(intermediate.key, 1, job_id):
                give_up(job_id, unreadable)
            continue
        if intermediate.set_first_seen(job_id):
            continue  # seen for the first time now
        first_seen = intermediate.get_first_seen(job_id)
        if first_seen is None or (now() - first_seen).total_seconds() < STUCK_AFTER_S:
            continue
        if not queue.connection.lrem(intermediate.key, 1, job_id):
            continue  # another worker got there first
        recovered += _put_back(queue, job_id, max_requeues, give_up)
    return recovered


def _unreadable(queue: Queue, job_id: str) -> str | None:
    """Why the job cannot be read at all (None: it can, or it is gone)."""
    try:
        BoundedJob.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
    except NoSuchJobError:
        return None
    except (redis.ConnectionError, redis.TimeoutError):
        raise
    except Exception as error:
        return unreadable_reason(error)
    return None


def _put_back(queue: Queue, job_id: str, max_requeues: int, give_up: GiveUp) -> int:
    """1 when the dead worker's job went back to the front of the queue, 0 when it is gone or
    was given up (counted in its hash: ORPHANED_FIELD)."""
    try:
        job = BoundedJob.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
    except NoSuchJobError:
        return 0  # expired: nothing to rerun
    except (redis.ConnectionError, redis.TimeoutError):
        raise
    except Exception as error:
        give_up(job_id, unreadable_reason(error))
        return 0
    deaths = int(queue.connection.hincrby(job.key, ORPHANED_FIELD, 1))
    reason = job.refusal
    if reason is None and deaths > max_requeues:
        reason = (
            f"its workers died {deaths} times running it (annotation.orphan_requeues: "
            f"{max_requeues}): not run again"
        )
    if reason is not None:
        give_up(job_id, reason)
        return 0
    queue.enqueue_job(job, at_front=True)
    return 1


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


class GuardedWorker(PromptSimpleWorker):
    """A PromptSimpleWorker of one queue whose jobs it reads as BoundedJob and runs only when
    `rejection_reason` finds nothing against them; every RQ method the annotation worker
    overrides is overridden here. What to do is the subclass's, in its own methods:
    `recover` (when the worker starts, and before each of RQ's maintenance passes), `reject`
    (a job refused, or too large or unreadable to be read at all: RQ's dequeue names the job
    whose fetch failed), `already_said` (an error logged where it happened, which RQ would log
    again with its traceback) and `stored_failure` (the failure text RQ keeps in Redis)."""

    idle_wake_s = 5  # how long an idle worker blocks on the queue before its maintenance

    def __init__(self, queue: Queue, **kwargs: Any) -> None:
        queue = bounded_queue(queue)
        connection, serializer = queue.connection, queue.serializer
        super().__init__(
            [queue], connection=connection, serializer=serializer, job_class=BoundedJob, **kwargs
        )
        self.guarded_queue = queue
        self.stop_asked = False  # SIGINT or SIGTERM: a burst does not start another round

    def recover(self) -> None:
        """Put back what dead workers left; nothing by default."""

    def reject(self, job_id: str, reason: str) -> None:
        raise NotImplementedError

    def already_said(self, error: BaseException | None) -> bool:
        return False

    def stored_failure(self, text: str) -> str:
        return text

    def request_stop(self, signum: Any, frame: Any) -> None:
        self.stop_asked = True
        super().request_stop(signum, frame)

    def handle_exception(self, job: Any, *exc_info: Any) -> None:
        if self.already_said(exc_info[1]):
            return
        super().handle_exception(job, *exc_info)

    def handle_job_failure(
        self, job: Job, queue: Queue, started_job_registry: Any = None, exc_string: str = ""
    ) -> None:
        super().handle_job_failure(
            job, queue, started_job_registry, self.stored_failure(exc_string)
        )

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        super().bootstrap(*args, **kwargs)
        self.recover()

    @property
    def dequeue_timeout(self) -> int:
        return self.idle_wake_s

    def run_maintenance_tasks(self) -> None:
        # Ours first: RQ's pass fails a job stuck in the intermediate list for over a minute,
        # and it (re)starts the scheduler, which needs the lock a dead one may still hold.
        self.recover()
        super().run_maintenance_tasks()

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
                # The job's hash itself could not be read, or is too large to: reject it by id
                # and go on (RQ names the job whose fetch failed, in its dequeue or its cleanup).
                self.reject(job_id, unreadable_reason(error))

    def execute_job(self, job: Job, queue: Queue) -> None:
        reason = rejection_reason(job, self.guarded_queue.name)
        if reason is None:
            super().execute_job(job, queue)
            return
        self.reject(job.id, reason)


def waiting_for_retry(queue: Queue) -> tuple[int, float]:
    """Batches of `queue` waiting for a retry, and the seconds until the first is due (0 when
    it was moved back to the queue while we looked)."""
    registry = ScheduledJobRegistry(queue=queue)
    first = registry.get_job_ids(0, 0, cleanup=False)
    if not first:
        return 0, 0.0
    try:
        due = registry.get_scheduled_time(first[0]).timestamp()
    except NoSuchJobError:
        due = time.time()
    return registry.count, due - time.time()
