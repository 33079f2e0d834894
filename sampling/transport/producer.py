"""The producer: batches records on a background thread and enqueues one RQ job per batch.

The trainer thread only appends to an in-memory buffer. The producer thread flushes a batch when
`batch_size` records are waiting or the oldest has waited `max_latency_ms`. Jobs use RQ's JSON
serializer, a job id derived from the batch's sample ids (`unique`: a replayed batch is not
queued twice) and explicit result/failure TTLs. Redis unreachable: the batch goes to the disk
spool, and a reconnect loop with backoff replays the spool, in order, once Redis answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis
from rq import Queue
from rq.exceptions import DuplicateJobError
from rq.serializers import JSONSerializer

from rl.masking import mask_url
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
    """A record still to be built on the producer thread (`record_builder.PendingRecord`)."""

    def build(self) -> dict[str, Any]: ...


RecordSource = dict[str, Any] | Unbuilt


def _built(sources: Sequence[RecordSource], stats: ProducerStats) -> list[dict[str, Any]]:
    """The records, built where a source is still to be built. A source that cannot make its
    record (RecordError: invalid, or not redacted) is left out and counted; its one-line reason
    is logged once. The reason never holds the text as it was: a record is redacted first."""
    built = []
    for source in sources:
        if isinstance(source, dict):
            built.append(source)
            continue
        try:
            built.append(source.build())
        except RecordError as error:
            stats.unbuilt += 1
            if first_time(stats.errors, str(error)):
                log.error("a record was not queued: %s", error)
    return built


def batch_job_id(records: Sequence[dict[str, Any]]) -> str:
    """Deterministic: the same records always make the same job id (letters, digits, `-`)."""
    digest = hashlib.sha256("\n".join(sorted(r["sample_id"] for r in records)).encode())
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
            job_id=batch_job_id(batch),
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
        self._buffer: deque[tuple[float, dict[str, Any]]] = deque()
        self._lock = threading.Condition()
        self._closing = False
        self._closed = False
        self._spool_may_hold = True  # an earlier run may have left batches: look once
        self._depth_checked = 0.0
        self._client = redis_client(self.url)
        self._queue = annotation_queue(config, self._client)
        self._thread = threading.Thread(target=self._run, name="lowtide-producer", daemon=True)
        self._thread.start()

    # ---- trainer thread ----------------------------------------------------------------------

    def submit(self, records: Sequence[RecordSource]) -> None:
        """Hand records over; returns at once. A record may be a zero-argument callable that
        builds it, so that building runs on the producer thread. Past `buffer_max` the oldest
        spill to disk (never dropped); after `close`, all of them do (a late budget pick)."""
        now = time.monotonic()
        with self._lock:
            if self._closed:
                spill = list(records)
            else:
                self._buffer.extend((now, record) for record in records)
                overflow = len(self._buffer) - self.buffer_max
                spill = [self._buffer.popleft()[1] for _ in range(max(0, overflow))]
                self._lock.notify()
        built = _built(spill, self.stats) if spill else []
        if built:
            self._to_spool(built)

    def close(self, deadline_s: float = 10.0) -> None:
        """Flush within the deadline; what is left goes to the spool for the next replay. A second
        close does nothing more."""
        with self._lock:
            self._closing = True
            self._lock.notify()
        self._thread.join(timeout=deadline_s)
        with self._lock:
            left = [record for _, record in self._buffer]
            self._buffer.clear()
            self._closed = True  # from now on submit() spools: no thread is left to send
        built = _built(left, self.stats) if left else []
        if built:
            self._to_spool(built)
        self._client.close()

    # ---- producer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            if not self.stats.redis_up and not self._reconnect():
                if batch:
                    self._to_spool(batch)
                if not self._closing:
                    time.sleep(BACKOFF_S[min(backoff, len(BACKOFF_S) - 1)])
                backoff += 1
                continue
            backoff = 0
            self._replay_spool()
            if batch:
                self._send_or_spool(batch)
            if time.monotonic() - self._depth_checked > DEPTH_EVERY_S:
                self._update_depth()

    def _next_batch(self) -> list[dict[str, Any]] | None:
        """Wait for a full batch, a latency deadline, or shutdown. [] means "just check"."""
        latency = self.config.max_latency_ms / 1000
        with self._lock:
            while True:
                if self._buffer:
                    oldest = self._buffer[0][0]
                    full = len(self._buffer) >= self.config.batch_size
                    if full or self._closing or time.monotonic() - oldest >= latency:
                        count = min(self.config.batch_size, len(self._buffer))
                        taken = [self._buffer.popleft()[1] for _ in range(count)]
                        break
                elif self._closing:
                    return None
                else:
                    self._lock.wait(timeout=1.0)
                    if not self._buffer:
                        return []  # nothing new: a chance to replay the spool
                    continue
                self._lock.wait(timeout=max(0.0, latency - (time.monotonic() - oldest)))
        # Outside the lock: submit() never waits on record building.
        return _built(taken, self.stats)

    def _send_or_spool(self, batch: list[dict[str, Any]]) -> None:
        try:
            self._enqueue(batch)
            self.stats.enqueued += len(batch)
        except redis.RedisError as exc:
            self._mark_down(exc)
            self._to_spool(batch)

    def _enqueue(self, batch: list[dict[str, Any]]) -> None:
        started = time.perf_counter()
        enqueue_batch(self._queue, batch, self.job_function)
        self.stats.enqueue_latency_ms = 1000 * (time.perf_counter() - started)

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
        try:
            self._client.ping()
        except redis.RedisError:
            return False
        log.info("Redis at %s answers again: replaying the spool", mask_url(self.url))
        self.stats.redis_up = True
        return True

    def _mark_down(self, exc: Exception) -> None:
        if self.stats.redis_up:
            log.warning(
                "Redis at %s unreachable (%s): spooling records to %s",
                mask_url(self.url), type(exc).__name__, self.spool.directory,
            )  # fmt: skip
        self.stats.redis_up = False

    def _to_spool(self, records: list[dict[str, Any]]) -> None:
        try:
            self.spool.append(SpooledBatch(batch_job_id(records), records))
            self.stats.spooled += len(records)
            self._spool_may_hold = True
        except SpoolError as exc:
            self.stats.dropped += len(records)  # the only way a record is lost: say it loudly
            message = f"{exc}: {len(records)} records lost"
            if first_time(self.stats.errors, message):
                log.error(message)
