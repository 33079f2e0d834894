"""Paced imports take the jobs queued behind them (`annotation.import_interval_s` > 0).

Pacing lets one import request into a project through per interval. Without this, a turn
carries one job's records: with many routing processes each job holds one process's few
records, and a queue fed more jobs than one an interval grows without end. So a paced job, on
its first attempt, takes the jobs waiting at the head of its queue into its own payload, up to
`import_batch_max` records (one request's worth), and each turn's request is as full as a
request may be.

Exactly once: only a job that waits on the queue and has never run (no attempt, no meta: no
import of its own to reconcile) is taken, and in one Redis script that removes it from the
queue, writes its records into the taking job's stored payload and marks it finished
(`rq_internals.take_queued`). From then on its records are the taking job's: a worker killed
after the take reruns them with the rest (and importer.py's reconcile), a batch that gives up
keeps them in the failed registry, and the same batch sent again is still refused by its id.
"""

from __future__ import annotations

import logging
from typing import Any

from rq import Queue
from rq.job import Job, JobStatus

from annotation.rq_internals import MAX_JOB_BYTES, BoundedJob, rejection_reason, take_queued

LOOK_AHEAD = 50  # queued jobs looked at from the head, at most
log = logging.getLogger("annotation.worker")


def take_queued_jobs(job: Job, records: list[Any], limit: int) -> tuple[list[Any], int]:
    """`records` and those of the jobs taken from the head of `job`'s queue while the total
    stays within `limit` records and its payload within MAX_JOB_BYTES (a retry reads it back,
    and refuses a larger one); and how many jobs were taken."""
    queue = Queue(job.origin, connection=job.connection, serializer=job.serializer,
                  job_class=BoundedJob)  # fmt: skip
    merged, taken, size = list(records), 0, len(job.data)
    for other_id in queue.get_job_ids(0, LOOK_AHEAD - 1):
        if len(merged) >= limit:
            break
        if other_id == job.id:
            continue
        other = _takeable(queue, other_id)
        if other is None:
            continue  # left for a worker to run (and say why it does not, if it does not)
        if len(merged) + len(other.args[0]) > limit or size + len(other.data) > MAX_JOB_BYTES:
            break  # the head of the queue, in order: a later small job waits its turn
        if take_queued(queue, job, other, [merged + other.args[0]]):
            merged += other.args[0]
            taken += 1
            size += len(other.data)  # over by a few bytes a job: the function's name
    if taken:
        log.info("batch %s: took %d queued job(s) into its paced import", job.id, taken)
    return merged, taken


def _takeable(queue: Queue, job_id: str) -> Job | None:
    """The queued job, if it is one that was never tried and carries only records."""
    try:
        other = BoundedJob.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
    except Exception:  # gone, unreadable or too large: the worker that dequeues it says why
        return None
    if rejection_reason(other, queue.name) is not None:
        return None
    never_tried = other.started_at is None and not other.meta and not other.number_of_retries
    return other if never_tried and other.get_status(refresh=False) == JobStatus.QUEUED else None
