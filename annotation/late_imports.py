"""Import requests whose outcome is unknown (a timeout, a cut connection), noted in Redis,
and the late copies they leave, which the worker's maintenance pass deletes.

An import request that timed out, or whose connection was cut after it went out, may still be
carried out by Label Studio at any time later (a slow upload, a queueing proxy, a server that
went on after its client left). The job's retry looks its samples up (importer.py) and imports
what it does not find; a request that lands after that lookup leaves a second task of each of
its samples, and no wait before the lookup can close that.

So each such request is noted in Redis, per queue (`<queue>:uncertain_imports`: a sorted set of
JSON entries `{project, samples, at}` scored by the time, trimmed to `MAX_ENTRIES`, expiring
after a week), and every worker's maintenance pass (at its start, then every 10 s) looks those
samples up in that project until `LATE_IMPORT_WINDOW_S` after the request, and once after that
(a burst worker may have exited before the request landed). A sample with more
than one task keeps its reviewed copies, or the oldest when none is reviewed; the other,
unreviewed copies are deleted and counted (`late_copies_removed`). A reviewed task is never
deleted. Label Studio out of reach during a pass: the entries stay for the next one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import redis

from annotation import ledger
from annotation.labelstudio import LabelStudioClient, LabelStudioError, LabelStudioProjectGone

# How long after an uncertain request its samples are looked up again. A request that reached
# Label Studio late is carried out within the request timeouts of the proxies and servers on the
# way (nginx's and gunicorn's are a few minutes at most); past that it was dropped, and nothing
# of it can land any more.
LATE_IMPORT_WINDOW_S = 600.0
# An entry stays until a sweep after its window went through (a burst worker may exit before the
# late request lands, and the next worker start later); one no worker swept goes after a week.
UNSWEPT_KEEP_S = 7 * 24 * 3600
MAX_ENTRIES = 1_000  # newest uncertain requests kept per queue; older ones are trimmed
SWEEP_LOCK_S = 8  # one sweep of a queue per maintenance interval (10 s), across its workers

log = logging.getLogger("annotation.worker")


def uncertain_key(queue_name: str) -> str:
    return f"{ledger.PREFIX}:{queue_name}:uncertain_imports"


def note_uncertain(
    connection: redis.Redis, queue_name: str, project_id: int, sample_ids: Iterable[str]
) -> None:
    """Remember one import request whose outcome is unknown, for the sweep."""
    now = time.time()
    entry = json.dumps({"project": int(project_id), "samples": list(sample_ids), "at": now})
    key = uncertain_key(queue_name)
    pipe = connection.pipeline(transaction=True)
    pipe.zadd(key, {entry: now})
    pipe.zremrangebyrank(key, 0, -MAX_ENTRIES - 1)
    pipe.expire(key, UNSWEPT_KEEP_S)
    pipe.execute()


@dataclass
class Sweep:
    """The worker's sweep of one queue's uncertain imports (see the module docstring)."""

    connection: redis.Redis
    queue_name: str
    _said: set[tuple[int, str]] = field(default_factory=set)  # samples with reviewed copies

    @property
    def lock_key(self) -> str:
        return f"{uncertain_key(self.queue_name)}:sweeping"

    def run(self, client: LabelStudioClient) -> tuple[int, LabelStudioError | None]:
        """Delete late copies: how many, and the first failure of Label Studio, if any (the
        entries of a project it failed on stay for the next pass; the other projects go on)."""
        key = uncertain_key(self.queue_name)
        started = time.time()
        raw_entries = self.connection.zrange(key, 0, -1, withscores=True)
        if not raw_entries:
            return 0, None
        if not self.connection.set(self.lock_key, 1, nx=True, ex=SWEEP_LOCK_S):
            return 0, None  # another worker of the queue sweeps now
        by_project: dict[int, set[str]] = {}
        entries_of: dict[int, list[tuple[bytes, float]]] = {}
        for raw, at in raw_entries:
            entry = _entry(raw)
            if entry is None:  # anyone who writes to Redis writes this set
                self.connection.zrem(key, raw)
                continue
            project_id, samples = entry
            by_project.setdefault(project_id, set()).update(samples)
            entries_of.setdefault(project_id, []).append((raw, at))
        deleted: list[int] = []
        failure = None
        for project_id, samples in by_project.items():
            window_over = started - LATE_IMPORT_WINDOW_S
            try:
                self._sweep_project(client, project_id, samples, deleted)
            except LabelStudioProjectGone:
                window_over = float("inf")  # its tasks went with it
            except LabelStudioError as error:
                failure = failure or error
                continue
            # Swept once after its window: nothing more of that request can land.
            done = [raw for raw, at in entries_of[project_id] if at <= window_over]
            if done:
                self.connection.zrem(key, *done)
        if deleted:
            ledger.add_counts(
                self.connection, self.queue_name, {"late_copies_removed": len(deleted)}
            )
        return len(deleted), failure

    def _sweep_project(
        self, client: LabelStudioClient, project_id: int, samples: set[str], deleted: list[int]
    ) -> None:
        """Delete the project's late copies of `samples`, each added to `deleted` as it goes
        (a failure part way keeps the count of what went before it)."""
        for sample_id, copies in client.tasks_by_sample_id(project_id, sorted(samples)).items():
            if len(copies) < 2:
                continue
            reviewed = [task_id for task_id, is_reviewed in copies if is_reviewed]
            keep = set(reviewed) or {copies[0][0]}
            for task_id, _ in copies:
                if task_id not in keep and client.delete_task(task_id):
                    deleted.append(task_id)
            if len(reviewed) > 1 and (project_id, sample_id) not in self._said:
                self._said.add((project_id, sample_id))
                log.warning(
                    "sample %s has %d reviewed tasks in project %d (an import that timed out "
                    "landed after its retry): all are kept",
                    sample_id, len(reviewed), project_id,
                )  # fmt: skip


def _entry(raw: bytes) -> tuple[int, list[str]] | None:
    try:
        entry = json.loads(raw)
        project_id, samples = entry["project"], entry["samples"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    if not isinstance(project_id, int) or not isinstance(samples, list):
        return None
    return project_id, [s for s in samples if isinstance(s, str)]
