"""What `lowtide queue ...` does, as plain functions over the RQ queue and the spool."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import redis
from rq.exceptions import DeserializationError
from rq.job import Job
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

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


def connect(config: QueueConfig) -> redis.Redis:
    return redis_client(config.redis_url.get_secret_value())


def queue_status(config: QueueConfig) -> QueueStatus:
    queue = annotation_queue(config)
    oldest = None
    first = queue.get_job_ids(0, 0)
    if first:
        job = Job.fetch(first[0], connection=queue.connection, serializer=queue.serializer)
        if job.enqueued_at is not None:
            enqueued = job.enqueued_at.replace(tzinfo=job.enqueued_at.tzinfo or timezone.utc)
            oldest = (datetime.now(timezone.utc) - enqueued).total_seconds()
    spool = Spool(config.spool_dir)
    return QueueStatus(
        name=config.name,
        depth=queue.count,
        started=StartedJobRegistry(queue=queue).count,
        scheduled=ScheduledJobRegistry(queue=queue).count,
        failed=FailedJobRegistry(queue=queue).count,
        oldest_age_s=oldest,
        spool_batches=spool.pending_batches(),
        spool_records=spool.pending_records(),
        spool_bytes=spool.size_bytes(),
        spool_quarantined=len(spool.quarantined()),
    )


def failed_jobs(config: QueueConfig, limit: int = 50) -> list[FailedJob]:
    queue = annotation_queue(config)
    registry = FailedJobRegistry(queue=queue)
    jobs = []
    for job_id in registry.get_job_ids(0, limit - 1):
        try:
            job = Job.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
        except Exception as exc:  # a job whose payload cannot even be read: say so, go on
            jobs.append(FailedJob(job_id, 0, f"unreadable job: {type(exc).__name__}", None))
            continue
        result = job.latest_result()
        error = (result.exc_string if result else job.exc_info) or ""
        last_line = error.strip().splitlines()[-1] if error.strip() else "(no error recorded)"
        try:
            records = len(job.args[0]) if job.args and isinstance(job.args[0], list) else 0
        except DeserializationError:  # junk a worker refused: its reason is the error
            records = 0
        ended = job.ended_at.isoformat() if job.ended_at else None
        jobs.append(FailedJob(job_id, records, last_line, ended))
    return jobs


class NotFailedError(ValueError):
    """A job id given to requeue is not in the failed registry."""


def requeue(config: QueueConfig, job_ids: list[str] | None = None) -> int:
    """Move failed jobs back to the queue (all of them when `job_ids` is None), each with a
    fresh set of retries."""
    queue = annotation_queue(config)
    registry = FailedJobRegistry(queue=queue)
    failed = registry.get_job_ids()
    wanted = failed if job_ids is None else job_ids
    unknown = [job_id for job_id in wanted if job_id not in failed]
    if unknown:  # checked before any is moved: a typo requeues nothing
        raise NotFailedError(
            f"not among the failed jobs of {config.name}: {', '.join(unknown)} "
            "(see `lowtide queue failed`)"
        )
    for job_id in wanted:
        queue.connection.hdel(Job.key_for(job_id), "number_of_retries")
        registry.requeue(job_id)
    return len(wanted)


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


def purge(config: QueueConfig) -> tuple[int, int]:
    """Empty the queue and the failed registry: (waiting jobs removed, failed jobs removed)."""
    queue = annotation_queue(config)
    registry = FailedJobRegistry(queue=queue)
    failed_ids = registry.get_job_ids()
    for job_id in failed_ids:
        registry.remove(job_id, delete_job=True)
    return queue.empty(), len(failed_ids)
