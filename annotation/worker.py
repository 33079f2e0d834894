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
- An import request that timed out may land after its retry imported the same samples again;
  the maintenance pass deletes such late, unreviewed copies for 10 minutes after the request,
  and once after that (annotation/late_imports.py).
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

from rq import Queue

from annotation import jobs, ledger
from annotation.config import AnnotationConfig
from annotation.errors import LoggedFailure
from annotation.late_imports import Sweep
from annotation.rq_internals import (
    GuardedWorker,
    fail_in_place,
    recover_orphans,
    release_dead_scheduler_lock,
    shown_job_id,
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


class AnnotationWorker(GuardedWorker):
    """See the module docstring. `queue` is the annotation queue (its jobs are read as
    BoundedJob); `orphan_requeues` defaults to the worker's config (annotation.orphan_requeues).
    RQ's own methods are overridden in rq_internals.GuardedWorker; this says what to do."""

    idle_wake_s = IDLE_WAKE_S

    def __init__(self, queue: Queue, orphan_requeues: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("name", worker_name())
        kwargs.setdefault("maintenance_interval", MAINTENANCE_INTERVAL_S)
        super().__init__(queue, **kwargs)
        self.annotation_queue = self.guarded_queue
        self.orphan_requeues = (
            configured_orphan_requeues() if orphan_requeues is None else orphan_requeues
        )
        self.late_copies = Sweep(self.annotation_queue.connection, self.annotation_queue.name)
        self._sweep_failing = False  # said once until a sweep goes through again

    def already_said(self, error: BaseException | None) -> bool:
        return isinstance(error, LoggedFailure)  # said in one line where it happened

    def stored_failure(self, text: str) -> str:
        # What RQ keeps of the failure in Redis (`lowtide queue failed` shows it): a traceback
        # whose messages may hold a URL with its password.
        return mask_text(text)

    def recover(self) -> None:
        recovered = recover_orphans(self.annotation_queue, self.orphan_requeues, self.reject)
        if recovered:
            log.warning("put %d batch(es) of dead workers back on the queue", recovered)
        if release_dead_scheduler_lock(self.annotation_queue):
            log.warning("released the scheduler lock of a dead worker")
        self.sweep_late_copies()

    def sweep_late_copies(self) -> None:
        """Delete the late copies that imports which timed out left (annotation/late_imports.py).
        Label Studio out of reach: one line, the entries wait for the next pass; nothing is
        raised into the worker's loop."""
        try:
            context = jobs.bound_context()
        except RuntimeError:
            return  # a worker outside `lowtide worker` (a test's) has no Label Studio bound
        removed, failure = self.late_copies.run(context.client)
        if failure is not None and not self._sweep_failing:
            log.warning("cannot look for late copies of imports that timed out (tried again at "
                        "each maintenance pass): %s", failure)  # fmt: skip
        self._sweep_failing = failure is not None
        if removed:
            log.warning("deleted %d unreviewed second task(s) of samples: an import that timed "
                        "out landed after its retry", removed)  # fmt: skip

    def reject(self, job_id: str, reason: str) -> None:
        queue = self.annotation_queue
        connection = queue.connection
        # The reason first: whoever sees the job failed finds why in the ledger already.
        ledger.quarantine(connection, queue.name, [{"reason": reason, "job_id": job_id}])
        ledger.add_counts(connection, queue.name, {"rejected_jobs": 1})
        fail_in_place(queue, job_id, reason, REJECTED_TTL_S)
        log.warning("job %s rejected: %s", shown_job_id(job_id), reason)
