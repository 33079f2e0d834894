"""The background worker block and the rate limiter: triggers, a full queue, errors said once,
close within a deadline, flush; and the token bucket's bursts, accrual and trailing window."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from rl.background import Closed, Triggers, Worker
from rl.rate_limit import TokenBucket
from tests.helpers.clock import Clock

pytestmark = pytest.mark.unit


def wait_for(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


class Recorder:
    def __init__(self, block: threading.Event | None = None) -> None:
        self.batches: list[list[int]] = []
        self.block = block
        self.threads: set[str] = set()

    def __call__(self, batch: list[int]) -> None:
        self.threads.add(threading.current_thread().name)
        if self.block is not None:
            self.block.wait(5)
        self.batches.append(list(batch))

    @property
    def items(self) -> list[int]:
        return [item for batch in self.batches for item in batch]


def test_a_full_batch_goes_at_once_on_the_workers_thread() -> None:
    seen = Recorder()
    worker = Worker("test-size", seen, Triggers(size=4, age_s=60))
    assert worker.put_many(range(10)) == []
    wait_for(lambda: len(seen.items) == 8)
    assert seen.batches == [[0, 1, 2, 3], [4, 5, 6, 7]]  # 8, 9 wait for the age or close
    assert seen.threads == {"test-size"}
    closed = worker.close(deadline_s=5)
    assert closed == Closed(True, [])
    assert seen.batches[-1] == [8, 9]
    assert worker.stats.queued == 10 and worker.stats.processed == 10


def test_a_partial_batch_goes_when_its_oldest_has_waited_its_age() -> None:
    seen = Recorder()
    worker = Worker("test-age", seen, Triggers(size=100, age_s=0.05))
    started = time.monotonic()
    worker.put_many([1, 2])
    wait_for(lambda: seen.items == [1, 2])
    assert 0.04 <= time.monotonic() - started < 2
    worker.close()


def test_an_idle_worker_ticks_with_an_empty_batch() -> None:
    seen = Recorder()
    worker = Worker("test-idle", seen, Triggers(size=10, age_s=0, idle_s=0.02))
    wait_for(lambda: len(seen.batches) >= 3)
    assert all(batch == [] for batch in seen.batches)
    worker.close()


def test_without_idle_an_empty_worker_never_calls() -> None:
    seen = Recorder()
    worker = Worker("test-quiet", seen, Triggers(size=1))
    time.sleep(0.1)
    worker.close()
    assert seen.batches == []


@pytest.mark.parametrize(
    ("when_full", "back", "kept"),
    [
        ("refuse", [6, 7, 8, 9], [0, 1, 2, 3, 4, 5]),
        ("drop_oldest", [0, 1, 2, 3], [4, 5, 6, 7, 8, 9]),
    ],
)
def test_a_full_queue_hands_items_back_and_counts_them(
    when_full: str, back: list[int], kept: list[int]
) -> None:
    release = threading.Event()
    seen = Recorder(block=release)
    worker = Worker("test-full", seen, Triggers(size=100, age_s=None), capacity=6,
                    when_full=when_full)  # type: ignore[arg-type]  # fmt: skip
    started = time.perf_counter()
    assert worker.put_many(range(10)) == back
    assert time.perf_counter() - started < 0.05  # never waits for room
    assert worker.put(10) is False
    assert worker.stats.dropped == 5
    release.set()
    worker.close(deadline_s=5)
    assert seen.items == (kept if when_full == "refuse" else [5, 6, 7, 8, 9, 10])


def test_an_error_is_counted_said_once_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handled: list[int] = []

    def handle(batch: list[int]) -> None:
        if batch[0] % 2:
            raise RuntimeError("odd item")
        handled.extend(batch)

    caller = threading.current_thread()
    with caplog.at_level(logging.ERROR, logger="rl.background"):
        worker = Worker("test-errors", handle, Triggers(size=1))
        worker.put_many(range(6))
        worker.close(deadline_s=5)
    assert handled == [0, 2, 4]
    assert worker.stats.errors == 3 and worker.stats.processed == 3
    assert worker.stats.last_error == "RuntimeError: odd item"
    said = [r for r in caplog.records if "odd item" in r.getMessage()]
    assert len(said) == 1 and "test-errors" in said[0].getMessage()
    assert threading.current_thread() is caller


def test_close_leaves_what_it_could_not_handle_within_the_deadline() -> None:
    release = threading.Event()
    seen = Recorder(block=release)
    worker = Worker("test-deadline", seen, Triggers(size=2, age_s=0))
    worker.put_many([0, 1])
    wait_for(lambda: worker.waiting == 0)  # the worker holds [0, 1] and waits on the release
    worker.put_many([2, 3, 4])
    started = time.monotonic()
    closed = worker.close(deadline_s=0.1)
    assert time.monotonic() - started < 2
    assert closed == Closed(False, [2, 3, 4])
    assert worker.put_many([5]) == [5]  # closed: handed back
    release.set()
    wait_for(lambda: seen.items == [0, 1])
    time.sleep(0.05)
    assert seen.items == [0, 1]  # what close took back is never handled


def test_final_runs_on_the_worker_after_the_drain() -> None:
    order: list[str] = []
    worker = Worker(
        "test-final",
        lambda batch: order.append(f"batch {batch}"),
        Triggers(size=5, age_s=None),
        final=lambda: order.append(f"final on {threading.current_thread().name}"),
    )
    worker.put_many([1, 2])
    assert worker.close(deadline_s=5).finished
    assert order == ["batch [1, 2]", "final on test-final"]


def test_flush_handles_what_waits_now_and_waits_for_it() -> None:
    seen = Recorder()
    worker = Worker("test-flush", seen, Triggers(size=100, age_s=None))
    worker.put_many([1, 2, 3])
    assert worker.flush(timeout_s=5)
    assert seen.items == [1, 2, 3]
    assert worker.flush(timeout_s=5)  # nothing waits: one empty call
    assert seen.batches[-1] == []
    worker.close()
    assert worker.flush(timeout_s=1)  # after close: nothing to wait for


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="size"):
        Triggers(size=0)
    with pytest.raises(ValueError, match="age_s"):
        Triggers(age_s=-1)


def test_a_full_bucket_bursts_one_period_then_refills_evenly() -> None:
    clock = Clock()
    bucket = TokenBucket(60, period_s=60, clock=clock)
    assert bucket.take(100) == 60
    assert bucket.take(5) == 0
    clock.now = 10
    assert bucket.take(100) == 10
    clock.now = 10_000
    assert bucket.take(1000) == 60  # never more than its capacity


def test_an_empty_bucket_with_a_window_never_spends_more_than_its_rate_an_hour() -> None:
    clock = Clock()
    bucket = TokenBucket(10, period_s=3600, start_full=False, window_s=3600, clock=clock)
    assert bucket.available() == 0  # nothing before it accrued
    clock.now = 360
    assert bucket.take(5) == 1
    spent = 1
    for minute in range(7, 60 * 5):
        clock.now = minute * 60
        spent += bucket.take(100)
        window = [t for t in bucket.taken_at if t > clock.now - 3600]
        assert len(window) <= 10
    assert spent == pytest.approx(5 * 10, abs=1)


def test_flush_or_close_from_the_handler_itself_never_hangs() -> None:
    answers: list[bool] = []
    worker: Worker[int]

    def handle(batch: list[int]) -> None:
        answers.append(worker.flush(timeout_s=5))
        answers.append(worker.close(deadline_s=5).finished)

    worker = Worker("test-self", handle, Triggers(size=1))
    started = time.monotonic()
    worker.put(1)
    wait_for(lambda: len(answers) == 2)
    assert time.monotonic() - started < 2
    assert answers == [False, False]  # it cannot wait for itself, and says so
    assert worker.put_many([2]) == [2]  # closed all the same


class Pipe:
    """A source whose next item blocks until one is sent, as a pipe's reader does; `end()`
    ends it as a closed pipe would."""

    END = object()

    def __init__(self) -> None:
        self.items: list[object] = []
        self.ready = threading.Condition()

    def send(self, item: object) -> None:
        with self.ready:
            self.items.append(item)
            self.ready.notify()

    def end(self) -> None:
        self.send(self.END)

    def __iter__(self):
        while True:
            with self.ready:
                self.ready.wait_for(lambda: self.items)
                item = self.items.pop(0)
            if item is self.END:
                return
            if isinstance(item, Exception):
                raise item
            yield item


def test_a_worker_reading_a_source_handles_each_item_as_it_comes_until_it_ends() -> None:
    pipe = Pipe()
    seen = Recorder()
    ended: list[str] = []
    worker = Worker("test-source", seen, source=pipe,
                    final=lambda: ended.append(threading.current_thread().name))  # fmt: skip
    pipe.send(1)
    wait_for(lambda: seen.items == [1])
    pipe.send(2)
    wait_for(lambda: seen.batches == [[1], [2]])
    assert seen.threads == {"test-source"} and ended == []
    pipe.end()
    wait_for(lambda: not worker.thread.is_alive())
    assert ended == ["test-source"]
    assert worker.close(deadline_s=1) == Closed(True, [])
    assert worker.stats.queued == 2 and worker.stats.processed == 2


def test_a_worker_reading_a_source_takes_no_put_and_no_flush() -> None:
    pipe = Pipe()
    worker = Worker("test-source-only", Recorder(), source=pipe)
    with pytest.raises(TypeError, match="source"):
        worker.put(1)
    with pytest.raises(TypeError, match="source"):
        worker.flush(timeout_s=1)
    pipe.end()
    assert worker.close(deadline_s=5).finished


def test_close_waits_for_a_blocked_source_no_longer_than_its_deadline() -> None:
    pipe = Pipe()
    seen = Recorder()
    worker = Worker("test-source-close", seen, source=pipe)
    started = time.monotonic()
    assert worker.close(deadline_s=0.1) == Closed(False, [])  # its owner has not ended it
    assert time.monotonic() - started < 2
    pipe.send(3)  # read and handled all the same, until the source ends
    wait_for(lambda: seen.items == [3])
    pipe.end()
    wait_for(lambda: not worker.thread.is_alive())


def test_a_failing_source_ends_the_worker_counted_and_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pipe = Pipe()
    ended: list[bool] = []
    with caplog.at_level(logging.ERROR, logger="rl.background"):
        worker = Worker("test-source-error", Recorder(), source=pipe,
                        final=lambda: ended.append(True))  # fmt: skip
        pipe.send(OSError("pipe broke"))
        assert worker.close(deadline_s=5).finished
    assert ended == [True]
    assert worker.stats.errors == 1 and worker.stats.last_error == "OSError: pipe broke"
    assert [r for r in caplog.records if "pipe broke" in r.getMessage()]
