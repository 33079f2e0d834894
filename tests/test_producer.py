"""The producer against a real redis-server that the tests stop and start: records reach the
queue as JSON jobs, exactly once, through outages; the spool is empty afterwards."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
import redis
from rq import Queue

from sampling.config import QueueConfig
from sampling.transport.producer import Producer
from tests.helpers.queued import queued_sample_ids
from tests.helpers.redis_server import OwnRedis

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]


def sample_ids(count: int, start: int = 0) -> list[str]:
    return [f"s-{i:06d}" for i in range(start, start + count)]


def records(start: int, count: int) -> list[dict]:
    return [
        {"sample_id": sample_id, "response": "r" * 100} for sample_id in sample_ids(count, start)
    ]


def queued(url: str, name: str = "test-annotate") -> list[str]:
    """The sample ids on queue `name`, sorted."""
    return sorted(queued_sample_ids(url, name))


def wait_for(condition, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def config(url: str, tmp_path: Path, **overrides) -> QueueConfig:
    settings = {"redis_url": url, "name": "test-annotate", "batch_size": 64, "max_latency_ms": 100,
                "spool_dir": str(tmp_path / "spool")}  # fmt: skip
    return QueueConfig(**{**settings, **overrides})


def assert_the_next_run_replays(own_redis: OwnRedis, tmp_path: Path, count: int) -> None:
    """Redis back, the next run's producer on the same spool replays the `count` records spooled
    (`records(0, count)`), and the queue holds exactly them."""
    own_redis.start()
    next_run = Producer(config(own_redis.url, tmp_path))
    wait_for(lambda: next_run.stats.replayed == count)
    next_run.close()
    assert queued(own_redis.url) == sample_ids(count)


def test_batches_arrive_as_json_jobs(own_redis: OwnRedis, tmp_path: Path) -> None:
    producer = Producer(config(own_redis.url, tmp_path))
    started = time.perf_counter()
    producer.submit(records(0, 130))
    # The trainer thread does not wait on Redis: that would cost a round trip per batch or a
    # socket timeout (0.5 s); a garbage collection on a busy machine can take tens of ms.
    assert time.perf_counter() - started < 0.1
    wait_for(lambda: producer.stats.enqueued == 130)
    producer.close()
    assert queued(own_redis.url) == sample_ids(130)
    assert len(Queue("test-annotate", connection=redis.Redis.from_url(own_redis.url)).job_ids) == 3
    assert producer.stats.spooled == 0 and producer.stats.dropped == 0


def test_the_same_records_sent_to_two_queues_reach_both(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    # RQ's job ids are global to a Redis; the same batch on another queue is not a copy.
    for name in ("review", "experts"):
        producer = Producer(config(own_redis.url, tmp_path / name, name=name))
        producer.submit(records(0, 3))
        producer.close()
        assert producer.stats.enqueued == 3
    for name in ("review", "experts"):
        assert queued(own_redis.url, name) == ["s-000000", "s-000001", "s-000002"]


def test_a_redis_outage_loses_nothing_and_duplicates_nothing(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    producer = Producer(config(own_redis.url, tmp_path))
    producer.submit(records(0, 100))
    wait_for(lambda: producer.stats.enqueued == 100)
    own_redis.kill()
    for start in range(100, 300, 20):  # the trainer keeps going
        began = time.perf_counter()
        producer.submit(records(start, 20))
        # Waiting on Redis would cost at least the first backoff (0.2 s) or a socket timeout
        # (0.5 s); a garbage collection on a busy machine can take tens of milliseconds.
        assert time.perf_counter() - began < 0.1
        time.sleep(0.05)
    wait_for(lambda: producer.stats.spooled == 200)
    assert not producer.stats.redis_up and producer.spool.pending_records() == 200
    own_redis.start()
    producer.submit(records(300, 50))
    wait_for(lambda: producer.stats.enqueued == 350)
    producer.close()
    ids = queued_sample_ids(own_redis.url, "test-annotate")
    assert len(ids) == len(set(ids)) == 350
    # Records that come before the next reconnect is due are spooled too, then replayed.
    assert producer.stats.replayed == producer.stats.spooled >= 200
    assert producer.stats.dropped == 0 and producer.spool.pending_batches() == 0


def test_while_redis_is_down_each_batch_is_spooled_when_due_not_one_per_backoff(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    """A trainer that routes faster than a batch per backoff interval: the producer's thread
    spools every batch as it comes. One batch per interval (0.2 s, 0.5 s, ... 5 s) let the
    buffer fill, and its overflow was spooled by submit(), on the trainer's thread."""
    own_redis.kill()
    producer = Producer(config(own_redis.url, tmp_path, batch_size=10), buffer_max=20)
    for start in range(0, 60, 10):
        producer.submit(records(start, 10))
        time.sleep(0.05)
    wait_for(lambda: producer.stats.spooled == 60, timeout_s=3.0)  # one a backoff: 8.7 s
    assert producer._worker.stats.dropped == 0  # nothing came back to submit() to spool
    producer.close(deadline_s=1)
    assert_the_next_run_replays(own_redis, tmp_path, 60)


def test_close_sends_the_spool_when_redis_is_back_before_the_backoff_is_up(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    """Redis back a moment before the run ends: close() asks it once more and replays, rather
    than leave the spool for the next run (a sleeping backoff or its clock used to)."""
    own_redis.kill()
    producer = Producer(config(own_redis.url, tmp_path, batch_size=10))
    for start in range(0, 60, 10):
        producer.submit(records(start, 10))
        time.sleep(0.3)  # past the first backoffs: the next try is seconds away
    wait_for(lambda: producer.stats.spooled == 60)
    own_redis.start()
    producer.close(deadline_s=5)
    assert producer.spool.pending_records() == 0 and producer.stats.replayed == 60
    assert queued(own_redis.url) == sample_ids(60)


def test_a_full_redis_that_answers_ping_is_one_warning_and_loses_nothing(
    own_redis: OwnRedis, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A shared Redis at its maxmemory (noeviction) answers PING and refuses every write. A
    PING taken for the end of the outage made a warning and an info line for every batch."""
    admin = redis.Redis.from_url(own_redis.url)
    admin.config_set("maxmemory", "3mb")
    admin.config_set("maxmemory-policy", "noeviction")
    with pytest.raises(redis.exceptions.OutOfMemoryError):
        for i in range(100):
            admin.set(f"filler:{i}", "x" * 100_000)
    producer = Producer(config(own_redis.url, tmp_path, batch_size=5, max_latency_ms=20))
    with caplog.at_level("INFO", logger="sampling.transport.producer"):
        for start in range(0, 40, 5):
            producer.submit(records(start, 5))
            time.sleep(0.1)
        wait_for(lambda: producer.stats.spooled == 40)
        said = [r.getMessage() for r in caplog.records]
        assert len(said) == 1 and "refuses the records (OutOfMemoryError" in said[0], said
        admin.delete(*admin.keys("filler:*"))
        wait_for(lambda: producer.stats.enqueued == 40)
    producer.close()
    assert queued(own_redis.url) == sample_ids(40)


def test_close_while_redis_is_down_spools_and_the_next_run_replays(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    own_redis.kill()
    producer = Producer(config(own_redis.url, tmp_path))
    producer.submit(records(0, 90))
    producer.close(deadline_s=2)
    assert producer.spool.pending_records() == 90
    assert_the_next_run_replays(own_redis, tmp_path, 90)


def test_an_unwritable_spool_while_redis_is_down_is_counted_as_dropped(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    own_redis.kill()
    (tmp_path / "blocked").write_text("a file where the spool directory should be")
    producer = Producer(config(own_redis.url, tmp_path, spool_dir=str(tmp_path / "blocked")))
    producer.submit(records(0, 10))
    wait_for(lambda: producer.stats.dropped == 10)
    producer.close(deadline_s=1)
    assert any("cannot write the spool" in error for error in producer.stats.errors)


def test_records_submitted_after_close_go_to_the_spool(own_redis: OwnRedis, tmp_path: Path) -> None:
    producer = Producer(config(own_redis.url, tmp_path))
    producer.close()
    producer.submit(records(0, 5))  # e.g. a budget pick that came after the close wait
    assert producer.spool.pending_records() == 5 and producer.stats.spooled == 5
    assert producer.stats.dropped == 0


def test_flush_sends_a_partial_batch_now_and_waits_for_it(
    own_redis: OwnRedis, tmp_path: Path
) -> None:
    producer = Producer(config(own_redis.url, tmp_path, max_latency_ms=60_000))
    producer.submit(records(0, 70))  # a full batch goes at once; 6 would wait a minute
    started = time.monotonic()
    assert producer.flush(timeout_s=20)
    assert producer.stats.enqueued == 70 and time.monotonic() - started < 10
    producer.close()
    assert queued(own_redis.url) == sample_ids(70)


def test_a_batch_refused_for_another_reason_than_an_outage_waits_in_the_spool(
    own_redis: OwnRedis, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    """An enqueue that fails without Redis being down (a bug, a refusal) keeps the batch in the
    spool, says so once, and the next batch replays it: nothing is lost."""
    import sampling.transport.producer as producer_module

    real = producer_module.enqueue_batch
    failures = iter([ValueError("refused")])

    def failing_once(queue, batch, job_function):
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real(queue, batch, job_function)

    monkeypatch.setattr(producer_module, "enqueue_batch", failing_once)
    producer = Producer(config(own_redis.url, tmp_path))
    producer.submit(records(0, 64))
    wait_for(lambda: producer.stats.spooled == 64)
    assert "stay in the spool" in caplog.text and producer.stats.redis_up
    producer.submit(records(64, 64))
    wait_for(lambda: producer.stats.enqueued == 128)
    producer.close()
    assert queued(own_redis.url) == sample_ids(128)
    assert producer.stats.replayed == 64 and producer.stats.dropped == 0
