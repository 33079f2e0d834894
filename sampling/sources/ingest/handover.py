"""Handing routed records to the producer so that a kill at any moment queues each exactly once.

Records go to the cursor's journal first, then the state that counts their dump lines as read
and says which of them form the next submission is saved; only then does the producer get the
submission, whole (it cuts it into the same batches every time), and the hand-over flushes the
producer until it has each record durably: on the queue, or in its disk spool. Then the state
drops them. Whole batches are handed over at once, a partial one after FLUSH_AFTER_S (the
background block's `Triggers`, the producer's own rule). A restart hands an interrupted
submission over again, the same records in the same batches, and the producer's job ids (a
digest of a batch's sample ids) make RQ refuse the copy of any batch that did reach Redis.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

from rl.background import Triggers
from rl.rate_limit import TokenBucket
from sampling.sources.ingest.cursor import Cursor, CursorState
from sampling.transport.producer import Producer

SAVE_EVERY_S = 2.0  # read positions with no new records are saved at most this often
FLUSH_AFTER_S = 1.0  # a partial batch waits this long for more records, then goes as it is
HAND_OVER_TIMEOUT_S = 120.0
# Tests only: "<point>:<n>" kills this process (SIGKILL) the n-th time it reaches <point>, to
# prove that a crash between routing, handing over and saving the cursor loses and repeats nothing.
FAILPOINT_VAR = "LOWTIDE_INGEST_FAILPOINT"
_passed: dict[str, int] = {}


class IngestError(RuntimeError):
    """The follower cannot go on; the message says why and what to do."""


def fail_point(point: str) -> None:
    wanted = os.environ.get(FAILPOINT_VAR)
    if not wanted or wanted.partition(":")[0] != point:
        return
    _passed[point] = _passed.get(point, 0) + 1
    if _passed[point] == int(wanted.partition(":")[2] or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def handed_over(stats: Any) -> int:
    """Records the producer has put on the queue or in the spool (or lost: `dropped`). Spooled
    records that it replays later are counted once: replaying adds to `enqueued` and `replayed`."""
    return stats.enqueued - stats.replayed + stats.spooled + stats.dropped


class HandOver:
    def __init__(
        self,
        producer: Producer,
        cursor: Cursor,
        state: CursorState,
        bucket: TokenBucket,
        say: Callable[[str], None],
    ) -> None:
        self.producer = producer
        self.cursor = cursor
        self.state = state
        self.bucket = bucket
        self.say = say
        self.triggers = Triggers(size=producer.config.batch_size, age_s=FLUSH_AFTER_S)
        self.journaled: list[tuple[dict[str, Any], int]] = []  # journal [start, end), sizes
        self.fresh: list[dict[str, Any]] = []  # routed, not yet in the journal
        self.handing = False  # a submission is with the producer, not yet all durable
        self.closed = False  # the producer was closed to send the last partial batch
        self.dirty = False  # read positions changed since the last save
        self._pending_since = time.monotonic()
        self._saved_at = time.monotonic()

    @property
    def pending(self) -> int:
        """Records routed and not yet known to be on the queue or in the spool."""
        return len(self.journaled) + len(self.fresh)

    def add(self, record: dict[str, Any]) -> None:
        if not self.pending:
            self._pending_since = time.monotonic()
        self.fresh.append(record)

    def flush_due(self) -> bool:
        """The partial batch has waited long enough (whole ones go at every commit)."""
        partial = self.pending % self.triggers.size
        return self.triggers.due(partial, time.monotonic() - self._pending_since)

    def commit(self, flush: bool, last: bool = False) -> None:
        """Hand the producer whole batches (all records with `flush`) and save the cursor.
        `last`: the producer is closed to send a partial batch at once."""
        size = self.producer.config.batch_size
        count = self.pending if flush else self.pending // size * size
        if count == 0:
            if self.dirty and (flush or time.monotonic() - self._saved_at >= SAVE_EVERY_S):
                self.save()
            return
        self._journal_fresh()
        state = self.state
        handing = self.journaled[:count]
        state.submitted = state.start + sum(size for _, size in handing)
        state.batch_size = size
        self.save()
        fail_point("submitting")
        self._hand_over([record for record, _ in handing], last=last)
        fail_point("handed")
        self._handed(count)
        self.save()

    def save(self) -> None:
        self._journal_fresh()  # a state never counts lines whose records are not on disk
        self.state.bucket = (self.bucket.tokens, self.bucket.updated)
        self.cursor.save(self.state)
        self._saved_at = time.monotonic()
        self.dirty = False

    def resume(self, saved: CursorState) -> int:
        """Carry on from a saved state: hand over again what an interrupted run was handing
        over; returns how many records that was."""
        self.state = saved
        if saved.bucket is not None:
            self.bucket.tokens, self.bucket.updated = saved.bucket
        self.cursor.cut(saved.end)
        self.journaled = self.cursor.read(saved.start, saved.end)
        count, offset = 0, saved.start
        while offset < saved.submitted:
            offset += self.journaled[count][1]
            count += 1
        if count:
            size = self.producer.config.batch_size
            if saved.batch_size != size:
                self.say(
                    f"warning: queue.batch_size changed from {saved.batch_size} to {size} since "
                    "an interrupted run: a batch it queued may be queued again (the worker "
                    "still imports each sample once)"
                )
            self.say(f"ingest: handing over {count} records an interrupted run routed")
            self._hand_over([record for record, _ in self.journaled[:count]])
            self._handed(count)
            self.save()
        self._pending_since = time.monotonic()
        return count

    def _handed(self, count: int) -> None:
        del self.journaled[:count]
        state = self.state
        state.start = state.submitted
        if not self.journaled:  # the journal starts over (cut at the next append)
            state.start = state.submitted = state.end = 0
        self._pending_since = time.monotonic()

    def _journal_fresh(self) -> None:
        if self.fresh:
            sizes = self.cursor.append(self.state.end, self.fresh)
            self.journaled += zip(self.fresh, sizes, strict=True)
            self.state.end += sum(sizes)
            self.fresh = []

    def _hand_over(self, records: list[dict[str, Any]], last: bool = False) -> None:
        """Submit in one piece and flush the producer until it has every record on the queue or
        in its spool. `last`: close the producer instead."""
        self.handing = True
        size = self.producer.config.batch_size
        piece = max(size, self.producer.buffer_max // size * size)
        for start in range(0, len(records), piece):  # within its buffer: no spill, same cuts
            part = records[start : start + piece]
            stats = self.producer.stats
            dropped, target = stats.dropped, handed_over(stats) + len(part)
            self.producer.submit(part)
            if last and start + piece >= len(records):
                self.producer.close(deadline_s=HAND_OVER_TIMEOUT_S)
                self.closed = True
            else:
                self.producer.flush(timeout_s=HAND_OVER_TIMEOUT_S)
            if handed_over(stats) < target:
                raise IngestError(
                    f"the producer took no {len(part)} records in {HAND_OVER_TIMEOUT_S:.0f} s;"
                    f" they stay in the cursor {self.cursor.path} for the next run"
                )
            if stats.dropped > dropped:
                errors = "; ".join(stats.errors) or "the spool cannot be written"
                raise IngestError(
                    f"{errors}. Nothing is lost: the records stay in the cursor "
                    f"{self.cursor.path} and the next run hands them over again"
                )
        self.handing = False
