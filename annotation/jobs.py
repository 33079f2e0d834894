"""The RQ job the sampler enqueues (by name): `annotation.jobs.import_batch(records)`.

A worker process binds an ImportContext once (`bind`); the job then imports its batch and
returns a small summary. When Label Studio fails it returns RQ's `Retry` with the configured
intervals until `retry.max` attempts are spent, then raises, so the job lands in the failed
registry with a readable reason (`lowtide queue failed`, `lowtide queue requeue`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from rq import Retry, get_current_job

from annotation import ledger
from annotation.coalesce import take_queued_jobs
from annotation.errors import LoggedFailure
from annotation.importer import (
    META_VALIDATED,
    ImportContext,
    JobMemo,
    LabelingConfigError,
    import_records,
)
from annotation.labelstudio import LabelStudioError

log = logging.getLogger("annotation.worker")
_context: ImportContext | None = None


class ImportFailed(LoggedFailure):
    """A batch gave up after its retries; the message is what `lowtide queue failed` shows."""


def bind(context: ImportContext | None) -> None:
    global _context
    _context = context


def bound_context() -> ImportContext:
    if _context is None:
        raise RuntimeError(
            "annotation.jobs.import_batch runs inside `lowtide worker` (it needs the Label "
            "Studio and Redis settings the worker binds); a plain `rq worker` cannot run it"
        )
    return _context


def import_batch(records: list[Any]) -> dict[str, int] | Retry:
    context = bound_context()
    job = get_current_job()
    job_id = job.id if job else "-"
    memo = JobMemo(job_id, job.meta, job.save_meta) if job else JobMemo(job_id, {})
    attempt = (job.number_of_retries or 0) + 1 if job else 1
    retry = context.config.retry
    started = time.perf_counter()
    if job is not None and _paced_first_attempt(context, memo, attempt):
        records, taken = take_queued_jobs(job, records, context.config.import_batch_max)
        if taken:
            ledger.add_counts(context.connection, context.queue_name, {"coalesced_jobs": taken})
    try:
        outcome = import_records(records, context, memo)
    except (LabelStudioError, LabelingConfigError) as error:
        if attempt <= retry.max:
            # One interval per retry: past the end of the list the last one repeats (RQ would
            # go back to the first).
            last = len(retry.intervals_s) - 1
            intervals = [retry.intervals_s[min(i, last)] for i in range(retry.max)]
            interval = intervals[attempt - 1]
            ledger.add_counts(context.connection, context.queue_name, {"retries": 1})
            log.warning(
                "batch %s: attempt %d of %d failed, retrying in %g s: %s",
                job_id, attempt, retry.max + 1, interval, error,
            )  # fmt: skip
            return Retry(max=retry.max, interval=intervals)
        ledger.add_counts(context.connection, context.queue_name, {"failures": 1})
        log.error("batch %s: giving up after %d attempts: %s", job_id, attempt, error)
        raise ImportFailed(f"gave up after {attempt} attempt(s): {error}") from None
    counts = outcome.counts()
    ledger.add_counts(
        context.connection, context.queue_name, {**counts, "batches": 1}, outcome.import_seconds
    )
    log.info(
        "batch %s: %d records -> %d imported, %d duplicate, %d reconciled, %d quarantined "
        "in %.2f s (project %s)",
        job_id, outcome.received, outcome.imported, outcome.duplicates, outcome.reconciled,
        outcome.quarantined, time.perf_counter() - started, context.known_project_id or "-",
    )  # fmt: skip
    return counts


def _paced_first_attempt(context: ImportContext, memo: JobMemo, attempt: int) -> bool:
    """Paced imports take queued jobs (annotation/coalesce.py), on a job's first attempt only:
    a retry's records are what its reconcile knows of."""
    return (
        context.config.import_interval_s > 0 and attempt == 1 and not memo.meta.get(META_VALIDATED)
    )
