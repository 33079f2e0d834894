"""The producer: batches records on a background worker and enqueues one RQ job per batch.

The trainer thread only appends to the worker's bounded queue (`rl.background`). The worker
sends a batch when `batch_size` records are waiting or the oldest has waited `max_latency_ms`,
and with nothing to send it looks at Redis and the spool every `IDLE_CHECK_S`. Jobs use RQ's JSON
serializer, a job id derived from the batch's sample ids (`unique`: a replayed batch is not
queued twice) and explicit result/failure TTLs. Redis unreachable: the batch goes to the disk
spool at once, Redis is asked again after a backoff (never waited for), and the spool is
replayed, in order, once Redis answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError
from rq.serializers import JSONSerializer

from rl.background import Triggers, Worker
from rl.masking import mask_text, mask_url
from rl.visible_text import cut_line, visible_line
from sampling.config import QueueConfig
from sampling.once import first_time
from sampling.records import JOB_FUNCTION, RecordError
from sampling.transport.spool import Spool, SpooledBatch, SpoolError

log = logging.getLogger("sampling.transport.producer")
RESULT_TTL_S = 3600
FAILURE_TTL_S = 7 * 24 * 3600  # failed batches wait a week for `lowtide queue requeue`
JOB_TIMEOUT_S = 300
BACKOFF_S = (0.2, 0.5, 1.0, 2.0, 5.0)
DEPTH_EVERY_S = 1.0  # how often the producer thread reads the queue's length
SHOWN_ERROR_CHARS = 200  # of what a refusing Redis answered
IDLE_CHECK_S = 1.0  # with nothing to send, how often it retries Redis and replays the spool


@dataclass
class ProducerStats:
    enqueued: int = 0  # records now on the queue
    spooled: int = 0  # records written to the spool
    replayed: int = 0  # spooled records later enqueued
    dropped: int = 0  # records lost: only when the spool itself cannot be written
    unbuilt: int = 0  # records never made: invalid, or a redactor failed (so never sent)
    enqueue_latency_ms: float = 0.0  # of the last batch
    redis_up: bool = True
    queue_depth: int = 0  # jobs waiting, as last seen by the producer thread
    errors: list[str] = field(default_factory=list)


class Unbuilt(Protocol):
    """A record still to be built on the producer thread (`record_builder.PendingRecord`, whose
    `prepare() -> int` redacts its texts ahead: see `_built`)."""

    def build(self) -> dict[str, Any]: ...


RecordSource = dict[str, Any] | Unbuilt
# Texts whose records are prepared, then built, together: half of what the redactor keeps
# (redaction.redactor.FIND_CACHE_SIZE), so that none is searched twice.
PREPARED_TEXTS = 128


def _built(sources: Sequence[RecordSource], stats: ProducerStats) -> list[dict[str, Any]]:
    """The records, built where a source is still to be built. A source that cannot make its
    record (RecordError: invalid, or not redacted) is left out and counted; its one-line reason
    is logged once. The reason never holds the text as it was: a record is redacted first.
    A run of sources at a time, their texts are redacted first (a source's `prepare`, where it
    has one, says how many texts it searched), then their records made: each step runs with its
    code and tables warm in the CPU's caches (a sixth less time a record on one core)."""
    built: list[dict[str, Any]] = []
    start = 0
    while start < len(sources):
        end, texts = start, 0
        while end < len(sources) and texts < PREPARED_TEXTS:
            prepare = getattr(sources[end], "prepare", None)
            texts += prepare() if prepare is not None else 0
            end += 1
        for source in sources[start:end]:
            if isinstance(source, dict):
                built.append(source)
                continue
            try:
                built.append(source.build())
            except RecordError as error:
                stats.unbuilt += 1
                if first_time(stats.errors, str(error)):
                    log.error("a record was not queued: %s", error)
        start = end
    return built


def batch_job_id(records: Sequence[dict[str, Any]], queue_name: str) -> str:
    """Deterministic: the same records on the same queue always make the same job id (letters,
    digits, `-`). The queue is part of it because RQ's job ids are global to a Redis: the same
    records sent to a second queue would otherwise be taken for a copy and dropped."""
    names = [queue_name, *sorted(r["sample_id"] for r in records)]
    digest = hashlib.sha256("\n".join(names).encode())
    return f"batch-{digest.hexdigest()[:40]}"


def redis_client(url: str) -> redis.Redis:
    # Short timeouts, no retries: a hung server costs the producer 0.5 s, never the trainer.
    return redis.Redis.from_url(
        url, socket_timeout=0.5, socket_connect_timeout=0.5, retry_on_timeout=False
    )


def annotation_queue(config: QueueConfig, client: redis.Redis | None = None) -> Queue:
    """The RQ queue, always with the JSON serializer (a pickle payload runs code in a worker)."""
    connection = client or redis_client(config.redis_url.get_secret_value())
    return Queue(config.name, connection=connection, serializer=JSONSerializer)


def enqueue_batch(
    queue: Queue, batch: Sequence[dict[str, Any]], job_function: str = JOB_FUNCTION
) -> None:
    """One RQ job for the batch; a batch already queued (same records, same id) is left alone."""
    with contextlib.suppress(DuplicateJobError):
        queue.enqueue(
            job_function,
            list(batch),
            job_id=batch_job_id(batch, queue.name),
            unique=True,
            result_ttl=RESULT_TTL_S,
            failure_ttl=FAILURE_TTL_S,
            job_timeout=JOB_TIMEOUT_S,
            description=f"{len(batch)} rollout records",
        )


class Producer:
    def __init__(
        self,
        config: QueueConfig,
        *,
        buffer_max: int = 10_000,
        job_function: str = JOB_FUNCTION,
    ) -> None:
        self.config = config
        self.url = config.redis_url.get_secret_value()
        self.spool = Spool(config.spool_dir)
        self.job_function = job_function
        self.buffer_max = buffer_max
        self.stats = ProducerStats()
        self._spool_may_hold = True  # an earlier run may have left batches: look once
        self._depth_checked = 0.0
        self._backoff = 0
        self._retry_at = 0.0  # while Redis is down, when to ask it again (monotonic)
        self._outage = False  # said once, over when Redis takes a write again
        self._asked_at_close = False
        self._client = redis_client(self.url)
        self._queue = annotation_queue(config, self._client)
        triggers = Triggers(
            size=config.batch_size, age_s=config.max_latency_ms / 1000, idle_s=IDLE_CHECK_S
        )
        # Past buffer_max the oldest come back to submit(), which spools them (never dropped).
        self._worker: Worker[RecordSource] = Worker(
            "lowtide-producer", self._send_batch, triggers,
            capacity=buffer_max, when_full="drop_oldest", log=log,
            final=lambda: self._send_batch([]),  # closing: Redis back? the spool goes now
        )  # fmt: skip

    # ---- trainer thread ----------------------------------------------------------------------

    def submit(self, records: Sequence[RecordSource]) -> None:
        """Hand records over; returns at once. A record may be a zero-argument callable that
        builds it, so that building runs on the producer thread. Past `buffer_max` the oldest
        spill to disk (never dropped); after `close`, all of them do (a late budget pick)."""
        spill = self._worker.put_many(records)
        built = _built(spill, self.stats) if spill else []
        if built:
            self._to_spool(built)

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Send what is waiting now, without waiting for a full batch or the latency, and wait
        until each record is on the queue or in the spool; False if that took over
        `timeout_s`."""
        return self._worker.flush(timeout_s)

    def close(self, deadline_s: float = 10.0) -> None:
        """Flush within the deadline; what is left goes to the spool for the next replay. A second
        close does nothing more."""
        left = self._worker.close(deadline_s).left  # from now on submit() spools
        built = _built(left, self.stats) if left else []
        if built:
            self._to_spool(built)
        self._client.close()

    # ---- producer thread ---------------------------------------------------------------------

    def _send_batch(self, sources: list[RecordSource]) -> None:
        """One batch ([] when idle: a chance to reconnect and replay the spool)."""
        batch = _built(sources, self.stats)
        if not self.stats.redis_up and batch and self._worker.closing:
            # On disk before any wait on Redis: a run that ends at close()'s deadline, while a
            # hung Redis holds the question, keeps it. If Redis answers, the replay sends it.
            self._to_spool(batch)
            batch = []
        if not self.stats.redis_up and not self._reconnect():
            if batch:
                self._to_spool(batch)
            return
        try:
            self._replay_spool()
        except Exception as exc:  # a spooled batch refused for another reason: it stays spooled
            self._refused("replaying the spool", exc)
        if batch and not self.stats.redis_up:  # the replay was refused: behind it, in order
            self._to_spool(batch)
        elif batch:
            self._send_or_spool(batch)
        if time.monotonic() - self._depth_checked > DEPTH_EVERY_S:
            self._update_depth()

    def _send_or_spool(self, batch: list[dict[str, Any]]) -> None:
        try:
            self._enqueue(batch)
            self.stats.enqueued += len(batch)
        except redis.RedisError as exc:
            self._mark_down(exc)
            self._to_spool(batch)
        except Exception as exc:  # not an outage, but the records must not be lost with it
            self._refused("enqueueing a batch", exc)
            self._to_spool(batch)

    def _refused(self, doing: str, exc: Exception) -> None:
        message = (
            f"{doing} failed ({type(exc).__name__}: {exc}); the records stay in the spool "
            f"{self.spool.directory}, replayed with the next batch"
        )
        if first_time(self.stats.errors, message):
            log.error(message)

    def _enqueue(self, batch: list[dict[str, Any]]) -> None:
        started = time.perf_counter()
        enqueue_batch(self._queue, batch, self.job_function)
        self.stats.enqueue_latency_ms = 1000 * (time.perf_counter() - started)
        if self._outage:  # a write acknowledged: the outage is over (a PING is not enough)
            log.info("Redis at %s takes records again: replaying the spool", mask_url(self.url))
            self._outage = False
        self._backoff = 0

    def _update_depth(self) -> None:
        self._depth_checked = time.monotonic()
        try:
            self.stats.queue_depth = self._queue.count
        except redis.RedisError as exc:
            self._mark_down(exc)

    def _replay_spool(self) -> None:
        # Reading the spool directory for every batch would cost more than the enqueue:
        # look only when this producer spooled something, or once at start (an earlier run's).
        if not self._spool_may_hold or self.spool.pending_batches() == 0:
            self._spool_may_hold = False
            return

        def send(batch: SpooledBatch) -> None:
            self._enqueue(batch.records)
            self.stats.replayed += len(batch.records)
            self.stats.enqueued += len(batch.records)

        try:
            self.spool.replay(send)
            self._spool_may_hold = False
        except redis.RedisError as exc:
            self._mark_down(exc)

    def _reconnect(self) -> bool:
        """Asks Redis at most once per backoff interval, and never sleeps: while it is down each
        batch goes straight to the spool. A thread that slept between batches would spool one
        batch per interval, and a trainer routing faster would fill the buffer, whose overflow
        submit() spools on the trainer's thread. Closing, it asks once more whatever the
        backoff (what is left is spooled first): the spool goes now if Redis is back."""
        now = time.monotonic()
        last_try = self._worker.closing and not self._asked_at_close
        if now < self._retry_at and not last_try:
            return False
        self._asked_at_close = self._worker.closing
        try:
            self._client.ping()
        except redis.RedisError:
            self._retry_later(now)
            return False
        self.stats.redis_up = True  # until a write is refused: a full Redis answers PING
        return True

    def _retry_later(self, now: float) -> None:
        self._retry_at = now + BACKOFF_S[min(self._backoff, len(BACKOFF_S) - 1)]
        self._backoff += 1

    def _mark_down(self, exc: Exception) -> None:
        """One warning an outage, however often a Redis that answers PING refuses the writes
        (full, read-only, an ACL): each refusal waits for the next backoff before a new try."""
        if not self._outage:
            why = type(exc).__name__
            if isinstance(exc, redis.ResponseError):
                answered = cut_line(visible_line(mask_text(str(exc))), SHOWN_ERROR_CHARS)
                what = f"refuses the records ({why}: {answered})"
            else:
                what = f"unreachable ({why})"
            log.warning(
                "Redis at %s %s: spooling records to %s",
                mask_url(self.url), what, self.spool.directory,
            )  # fmt: skip
            self._outage = True
        self.stats.redis_up = False
        self._retry_later(time.monotonic())

    def _to_spool(self, records: list[dict[str, Any]]) -> None:
        try:
            self.spool.append(SpooledBatch(batch_job_id(records, self.config.name), records))
            self.stats.spooled += len(records)
            self._spool_may_hold = True
        except SpoolError as exc:
            self.stats.dropped += len(records)  # the only way a record is lost: say it loudly
            message = f"{exc}: {len(records)} records lost"
            if first_time(self.stats.errors, message):
                log.error(message)
