"""What `lowtide queue ...` does, as plain functions over the RQ queue and the spool.

Jobs are read as the `job_class` the caller passes. Anyone who can write to Redis writes them,
and RQ's own Job inflates a stored payload whole (a small zlib bomb is a gigabyte), so
`lowtide queue` passes the worker side's bounded reader, annotation.rq_internals.BoundedJob
(sampling never imports annotation). A job class may say why a job must not run (`refusal`,
as BoundedJob does), and why a worker of the queue would refuse it (`rejection(queue name)`: its
function and arguments): such a job is never requeued. What a job holds may be of any shape:
a listing says what it could not read and goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import redis
from rq import Queue
from rq.exceptions import DeserializationError, InvalidJobOperation
from rq.job import Job

from sampling.config import QueueConfig
from sampling.transport.producer import annotation_queue, enqueue_batch, redis_client
from sampling.transport.spool import Spool, SpooledBatch


@dataclass(frozen=True)
class QueueStatus:
    name: str
    depth: int  # jobs waiting
    started: int  # jobs a worker is running
    scheduled: int  # jobs waiting for their retry interval
    failed: int  # jobs in the failed registry
    oldest_age_s: float | None  # of the oldest waiting job
    spool_batches: int
    spool_records: int
    spool_bytes: int
    spool_quarantined: int  # segments moved aside: part of them could not be read


@dataclass(frozen=True)
class FailedJob:
    job_id: str
    records: int
    error: str  # the last line of the exception
    ended_at: str | None


@dataclass(frozen=True)
class Requeued:
    count: int  # jobs put back on the queue
    left: dict[str, str] = field(default_factory=dict)  # job id -> why it stays failed


def connect(config: QueueConfig) -> redis.Redis:
    return redis_client(config.redis_url.get_secret_value())


def job_queue(config: QueueConfig, job_class: type[Job]) -> Queue:
    """The annotation queue, its jobs (and its registries' jobs) read as `job_class`."""
    queue = annotation_queue(config)
    return Queue(
        queue.name, connection=queue.connection, serializer=queue.serializer, job_class=job_class
    )


def queue_status(config: QueueConfig, *, job_class: type[Job]) -> QueueStatus:
    queue = job_queue(config, job_class)
    spool = Spool(config.spool_dir)
    return QueueStatus(
        name=config.name,
        depth=queue.count,
        # Without RQ's cleanup, which fails (and calls back) the jobs it finds abandoned: a
        # look at the queue acts on nothing; the workers' maintenance cleans up.
        started=queue.started_job_registry.get_job_count(cleanup=False),
        scheduled=queue.scheduled_job_registry.count,
        failed=queue.failed_job_registry.count,
        oldest_age_s=_oldest_age_s(queue),
        spool_batches=spool.pending_batches(),
        spool_records=spool.pending_records(),
        spool_bytes=spool.size_bytes(),
        spool_quarantined=len(spool.quarantined()),
    )


def _oldest_age_s(queue: Queue) -> float | None:
    first = queue.get_job_ids(0, 0)
    job = _read(queue, first[0]) if first else None
    if not isinstance(job, Job) or job.enqueued_at is None:
        return None  # none waits, or it is gone or cannot be read: its age is unknown
    enqueued = job.enqueued_at.replace(tzinfo=job.enqueued_at.tzinfo or timezone.utc)
    return (datetime.now(timezone.utc) - enqueued).total_seconds()


def _read(queue: Queue, job_id: str) -> Job | str:
    """The job, read as the queue's job class, or why it cannot be shown."""
    try:
        return queue.job_class.fetch(
            job_id, connection=queue.connection, serializer=queue.serializer
        )
    except (redis.ConnectionError, redis.TimeoutError):
        raise
    except Exception as error:  # gone, unreadable, or too large to read: say so, go on
        return f"unreadable job: {type(error).__name__}: {str(error)[:300]}"


def failed_jobs(config: QueueConfig, limit: int = 50, *, job_class: type[Job]) -> list[FailedJob]:
    queue = job_queue(config, job_class)
    job_ids = queue.failed_job_registry.get_job_ids(0, limit - 1)
    return [_failed_job(queue, job_id) for job_id in job_ids]


def _failed_job(queue: Queue, job_id: str) -> FailedJob:
    job = _read(queue, job_id)
    if isinstance(job, str):
        return FailedJob(job_id, 0, job, None)
    try:
        error = job.exc_info  # its latest failed result's error, else the reason it was refused
    except (redis.ConnectionError, redis.TimeoutError):
        raise
    except Exception:  # junk written as its result (not a stream, no type): none to show
        error = None
    # One nobody ran: what its job class holds against it, if anything.
    error = error or getattr(job, "refusal", None) or ""
    last_line = error.strip().splitlines()[-1] if error.strip() else "(no error recorded)"
    ended = job.ended_at.isoformat() if job.ended_at else None
    return FailedJob(job_id, _record_count(job), last_line, ended)


def _record_count(job: Job) -> int:
    """The records in a job's one list argument; 0 for a payload of any other shape."""
    try:
        args = job.args
    except DeserializationError:  # junk a worker refused: its reason is the error
        return 0
    if isinstance(args, list | tuple) and args and isinstance(args[0], list):
        return len(args[0])
    return 0


def _refusal(job: Job, queue_name: str) -> str | None:
    """Why the job must not run again, if its class can tell (see the module docstring)."""
    rejection = getattr(job, "rejection", None)
    return rejection(queue_name) if rejection else getattr(job, "refusal", None)


class NotFailedError(ValueError):
    """A job id given to requeue is not in the failed registry."""


def requeue(
    config: QueueConfig, job_ids: list[str] | None = None, *, job_class: type[Job]
) -> Requeued:
    """Move failed jobs back to the queue (all of them when `job_ids` is None), each with a
    fresh set of retries; a job that cannot be read, or that the job class refuses, stays in
    the failed registry (`left`, with the reason): a worker would refuse it again."""
    queue = job_queue(config, job_class)
    registry = queue.failed_job_registry
    failed = registry.get_job_ids()
    wanted = failed if job_ids is None else job_ids
    unknown = [job_id for job_id in wanted if job_id not in failed]
    if unknown:  # checked before any is moved: a typo requeues nothing
        raise NotFailedError(
            f"not among the failed jobs of {config.name}: {', '.join(unknown)} "
            "(see `lowtide queue failed`)"
        )
    count, left = 0, {}
    for job_id in wanted:
        job = _read(queue, job_id)
        reason = job if isinstance(job, str) else _refusal(job, queue.name)
        if reason:
            left[job_id] = reason
            continue
        queue.connection.hdel(job.key, "number_of_retries")
        job.number_of_retries = None  # RQ saves the job it requeues: not the count it read
        registry.requeue(job)
        count += 1
    return Requeued(count, left)


def replay_spool(config: QueueConfig) -> int:
    """Enqueue everything spooled while Redis was down; returns the number of records."""
    queue = annotation_queue(config)
    records = 0

    def send(batch: SpooledBatch) -> None:
        nonlocal records
        enqueue_batch(queue, batch.records)
        records += len(batch.records)

    Spool(config.spool_dir).replay(send)
    return records


def purge(config: QueueConfig, *, job_class: type[Job]) -> tuple[int, int]:
    """Empty the queue and the failed registry: (waiting jobs removed, failed jobs removed)."""
    queue = job_queue(config, job_class)
    registry = queue.failed_job_registry
    failed_ids = registry.get_job_ids()
    for job_id in failed_ids:
        # Deleted by its id, never read (RQ's remove of an id reads the job whole first).
        try:
            job = job_class(job_id, connection=queue.connection, serializer=queue.serializer)
            job.origin = queue.name
            registry.remove(job, delete_job=True)
        # An id RQ never makes, no hash, a junk status, a key that is not a hash (WRONGTYPE).
        except (InvalidJobOperation, ValueError, redis.ResponseError):
            registry.remove(job_id)
            queue.connection.delete(Job.key_for(job_id))
    return queue.empty(), len(failed_ids)
