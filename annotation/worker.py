"""The RQ worker that imports batches: JSON only, one function only, and quick to recover.

- Only `annotation.jobs.import_batch` with one list argument runs. Anything else on the queue (a
  pickle payload, unreadable data, another function) is moved to the failed registry with the
  reason, counted as a rejected job, quarantined, and never imported or executed.
- Jobs are read within bounds (rq_internals.BoundedJob): a stored hash too large is refused
  before Redis sends it, a payload is inflated at most to 64 MiB (RQ inflates a zlib bomb
  whole), and a hash naming anything RQ would import, call, request or rerun by itself
  (callbacks, webhooks, dependencies, RQ's own retries and repeats) is refused the same way.
- A SimpleWorker (no fork per job: the Label Studio SDK is imported once), with RQ's scheduler,
  which puts retried batches back on the queue when their interval is up.
- Jobs left "started" by a worker that died (SIGKILL, OOM) wait for RQ's heartbeat expiry, 1.5
  min or more, and then fail. A starting worker, and every maintenance pass (10 s), puts such
  orphans back on the queue at once when their worker is certainly gone: its registration has
  expired, or it ran on this host and its process no longer exists. A job taken but not yet
  started when its worker died is put back after 10 s (RQ would fail it after a minute). The
  job's next attempt reconciles with Label Studio before importing (see importer.py), so
  nothing is imported twice. A job whose workers died on it more than
  `annotation.orphan_requeues` times is refused instead: one that kills its worker (too large a
  batch for its memory) would otherwise cycle through the workers for ever.
- An idle worker wakes every few seconds for that maintenance: RQ's own idle wait is the worker
  TTL less 15 s (405 s), which left a dead worker's job stranded that long, and then failed it.
- A dead worker's scheduler keeps the queue's scheduler lock for a minute, and retried batches
  wait for whoever holds it; the lock of a scheduler that ran on this host and is gone is
  released, so a live worker's scheduler takes over at once.
- Its command-channel thread reads a second at a time (RQ's: a minute), so that a worker asked
  to stop exits in about a second: RQ's teardown waits for that thread.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from typing import Any

import redis
from rq import Queue
from rq.job import Job

from annotation import jobs, ledger
from annotation.config import AnnotationConfig
from annotation.errors import LoggedFailure
from annotation.rq_internals import (
    BoundedJob,
    PromptSimpleWorker,
    bounded_queue,
    fail_in_place,
    recover_orphans,
    rejection_reason,
    release_dead_scheduler_lock,
    unreadable_reason,
)
from rl.masking import mask_text

REJECTED_TTL_S = 7 * 24 * 3600  # as long as a failed batch waits for `lowtide queue requeue`
MAINTENANCE_INTERVAL_S = 10
IDLE_WAKE_S = 5  # how long an idle worker blocks on the queue before its maintenance check
log = logging.getLogger("annotation.worker")


def worker_name() -> str:
    return f"lowtide-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def configured_orphan_requeues() -> int:
    """`annotation.orphan_requeues` of the `lowtide worker` this runs in; outside one (a test's
    worker), its default. `lowtide worker` binds its context before it makes a worker."""
    try:
        return jobs.bound_context().config.orphan_requeues
    except RuntimeError:
        return AnnotationConfig.model_fields["orphan_requeues"].default


class AnnotationWorker(PromptSimpleWorker):
    """See the module docstring. `queue` is the annotation queue (its jobs are read as
    BoundedJob); `orphan_requeues` defaults to the worker's config (annotation.orphan_requeues)."""

    def __init__(self, queue: Queue, orphan_requeues: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("name", worker_name())
        kwargs.setdefault("maintenance_interval", MAINTENANCE_INTERVAL_S)
        queue = bounded_queue(queue)
        connection, serializer = queue.connection, queue.serializer
        super().__init__(
            [queue], connection=connection, serializer=serializer, job_class=BoundedJob, **kwargs
        )
        self.annotation_queue = queue
        self.orphan_requeues = (
            configured_orphan_requeues() if orphan_requeues is None else orphan_requeues
        )
        self.stop_asked = False  # SIGINT or SIGTERM: a burst does not start another round

    def request_stop(self, signum: Any, frame: Any) -> None:
        self.stop_asked = True
        super().request_stop(signum, frame)

    def handle_exception(self, job: Any, *exc_info: Any) -> None:
        if isinstance(exc_info[1], LoggedFailure):
            return  # said in one line where it happened; RQ would log it again with a traceback
        super().handle_exception(job, *exc_info)

    def handle_job_failure(
        self, job: Job, queue: Queue, started_job_registry: Any = None, exc_string: str = ""
    ) -> None:
        # What RQ keeps of the failure in Redis (`lowtide queue failed` shows it): a traceback
        # whose messages may hold a URL with its password.
        super().handle_job_failure(job, queue, started_job_registry, mask_text(exc_string))

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
        recovered = recover_orphans(self.annotation_queue, self.orphan_requeues, self._reject)
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
                # The job's hash itself could not be read, or is too large to: reject it by id
                # and go on (RQ names the job whose fetch failed, in its dequeue or its cleanup).
                self._reject(job_id, unreadable_reason(error))

    def execute_job(self, job: Job, queue: Queue) -> None:
        reason = rejection_reason(job, self.annotation_queue.name)
        if reason is None:
            super().execute_job(job, queue)
            return
        self._reject(job.id, reason)

    def _reject(self, job_id: str, reason: str) -> None:
        queue = self.annotation_queue
        connection = queue.connection
        fail_in_place(queue, job_id, reason, REJECTED_TTL_S)
        ledger.add_counts(connection, queue.name, {"rejected_jobs": 1})
        ledger.quarantine(connection, queue.name, [{"reason": reason, "job_id": job_id}])
        log.warning("job %s rejected: %s", job_id, reason)
