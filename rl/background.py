"""One background worker: a daemon thread behind a bounded queue, for work the caller's thread
(a trainer's) must never wait on.

    worker = Worker("lowtide-producer", send, Triggers(size=64, age_s=0.05, idle_s=1.0))
    left_over = worker.put_many(records)  # returns at once; what a full queue turned away
    ...
    closed = worker.close(deadline_s=10.0)  # drains what it can, then says what it left

- `handle(batch)` runs on the worker's thread with up to `Triggers.size` items, oldest first:
  as soon as `size` items wait, when the oldest has waited `age_s`, or at once on `flush()` and
  `close()`. With nothing waiting for `idle_s` since the last call, it is called with `[]`: a tick
  for work due without new items (a retry, a spool replay, a periodic selection).
- `put` / `put_many` never block. A full queue turns items away by the `when_full` policy:
  `"refuse"` the new ones, `"drop_oldest"` the oldest; either way they are counted (`dropped`)
  and handed back, so the caller may keep them elsewhere (a disk spool) or let them go.
- An exception from `handle` or `final` never reaches the caller: it is counted (`errors`,
  `last_error`), logged once per distinct message, and the worker goes on.
- `close(deadline_s)` hands what waits to `handle`, then calls `final()` (on the worker's
  thread), for at most `deadline_s`; it returns `Closed`: whether the worker finished, and the
  items it never got to (taken back from the queue: the worker no longer sees them). After
  `close`, `put_many` hands every item back.
- `flush(timeout_s)` asks for a call now (with what waits, else `[]`) and waits for it.
- With `source` (an iterable whose next item may block: the reader of a pipe), the worker takes
  its items from it instead of from `put`: each is handled as it comes, and the worker ends when
  the source does (or raises: counted and said as a failing `handle` is). `close(deadline_s)`
  then waits for that end, at most `deadline_s`, and takes nothing back: ending the source
  (closing its pipe) is its owner's. Such a worker takes no `put` and no `flush`.

Model: TRL's `log_rollout_traces`, a daemon thread behind a bounded queue with `put_nowait`, so
that a slow backend never blocks sample delivery.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

T = TypeVar("T")
WhenFull = Literal["refuse", "drop_oldest"]
ERRORS_KEPT = 20  # distinct error messages logged; one that quotes a changing value must not grow


@dataclass(frozen=True)
class Triggers:
    """When `handle` runs: `size` items waiting, the oldest waiting `age_s` (None: only a full
    batch, a flush or close), or `idle_s` with no call at all (None: never on its own)."""

    size: int = 1
    age_s: float | None = 0.0
    idle_s: float | None = None

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"Triggers.size must be at least 1, not {self.size}")
        for name in ("age_s", "idle_s"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"Triggers.{name} must not be negative, not {value}")

    def due(self, waiting: int, oldest_waited_s: float) -> bool:
        """Whether `waiting` items, the oldest queued `oldest_waited_s` ago, are to be handled
        now (the same rule for a caller that batches on its own thread)."""
        if waiting <= 0:
            return False
        return waiting >= self.size or (self.age_s is not None and oldest_waited_s >= self.age_s)


@dataclass
class WorkerStats:
    queued: int = 0  # items the queue took
    processed: int = 0  # items handed to a `handle` call that returned
    dropped: int = 0  # items a full (or closed) queue handed back
    errors: int = 0  # `handle` or `final` calls that raised
    last_error: str = ""


@dataclass(frozen=True)
class Closed(Generic[T]):
    finished: bool  # the worker's thread ended within the deadline
    left: list[T]  # items it never handled, oldest first


class Worker(Generic[T]):
    def __init__(
        self,
        name: str,
        handle: Callable[[list[T]], object],
        triggers: Triggers = Triggers(),
        *,
        capacity: int = 1024,
        when_full: WhenFull = "refuse",
        final: Callable[[], object] | None = None,
        log: logging.Logger | None = None,
        source: Iterable[T] | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity}")
        self.name = name
        self.triggers = triggers
        self.capacity = capacity
        self.when_full = when_full
        self.stats = WorkerStats()
        self._handle = handle
        self._final = final
        self._log = log or logging.getLogger("rl.background")
        self._said: list[str] = []
        self._pending: deque[tuple[float, T]] = deque()
        self._lock = threading.Condition()
        self._closing = False
        self._closed = False
        self._stopped = False  # the worker's thread has ended
        self._last_call = time.monotonic()
        self._flush_asked = 0
        self._flush_done = 0
        self._source = None if source is None else iter(source)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # ---- caller's thread ---------------------------------------------------------------------

    @property
    def thread(self) -> threading.Thread:
        """The worker's thread (to tell whether it is still at work)."""
        return self._thread

    @property
    def closing(self) -> bool:
        """True once `close` was called (a handler may skip its waits then)."""
        return self._closing

    @property
    def waiting(self) -> int:
        """Items queued and not yet taken by the worker."""
        return len(self._pending)

    def put(self, item: T) -> bool:
        """Queue one item; False when it was turned away (or, with `drop_oldest`, pushed
        another out)."""
        return not self.put_many((item,))

    def put_many(self, items: Iterable[T]) -> list[T]:
        """Queue the items without waiting; returns those a full or closed queue turned away."""
        self._refuse_with_a_source("put")
        batch = list(items)
        now = time.monotonic()
        with self._lock:
            if self._closed:
                back = batch
            else:
                pending = self._pending
                was_empty = not pending
                pending.extend((now, item) for item in batch)
                overflow = len(pending) - self.capacity
                if overflow <= 0:
                    back = []
                elif self.when_full == "drop_oldest":
                    back = [pending.popleft()[1] for _ in range(overflow)]
                else:
                    back = [pending.pop()[1] for _ in range(overflow)][::-1]
                self.stats.queued += len(batch) - (len(back) if self.when_full == "refuse" else 0)
                # Wake the worker only when it has something new to decide: the first item
                # starts the age clock, a full batch is due at once.
                if was_empty or len(pending) >= self.triggers.size:
                    self._lock.notify()
            self.stats.dropped += len(back)
        return back

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Have the worker call `handle` now (with what waits, else with `[]`) and wait until
        the queue has been emptied once since; False if that took over `timeout_s`."""
        self._refuse_with_a_source("flush")
        if threading.current_thread() is self._thread:
            return False  # asked by handle() itself: waiting for its own call would never end
        with self._lock:
            if self._stopped:
                return not self._pending  # closed: no one is left to call
            self._flush_asked += 1
            wanted = self._flush_asked
            self._lock.notify()
            return self._lock.wait_for(lambda: self._flush_done >= wanted, timeout=timeout_s)

    def close(self, deadline_s: float = 10.0) -> Closed[T]:
        """Handle what waits and call `final`, within `deadline_s`; then take back what is left.
        A second close only reports."""
        with self._lock:
            self._closing = True
            self._lock.notify()
        if threading.current_thread() is not self._thread:  # handle() may close its own worker
            self._thread.join(timeout=max(0.0, deadline_s))
        with self._lock:
            left = [item for _, item in self._pending]
            self._pending.clear()
            self._closed = True
        return Closed(not self._thread.is_alive(), left)

    def _refuse_with_a_source(self, asked: str) -> None:
        if self._source is not None:
            raise TypeError(f"{self.name} reads its items from its source: it takes no {asked}")

    # ---- worker's thread ---------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            batch, flushing = self._next() if self._source is None else self._read()
            if batch is None:
                break
            self._call(self._handle, batch)
            self._last_call = time.monotonic()
            if flushing:
                with self._lock:
                    if not self._pending or self._closing:
                        self._flush_done = flushing
                        self._lock.notify_all()
        if self._final is not None:
            self._call(self._final)
        with self._lock:  # a flush asked while closing is answered: nothing is left to wait for
            self._stopped = True
            self._flush_done = self._flush_asked
            self._lock.notify_all()

    def _next(self) -> tuple[list[T] | None, int]:
        """The next batch ([] for a tick) and the flush it serves (0: none); None to stop."""
        triggers = self.triggers
        size, age_s, idle_s = triggers.size, triggers.age_s, triggers.idle_s
        with self._lock:
            while True:
                pending = self._pending
                flushing = self._flush_asked if self._flush_asked > self._flush_done else 0
                now = time.monotonic()
                timeout: float | None
                if pending:
                    waited = now - pending[0][0]
                    if flushing or self._closing or triggers.due(len(pending), waited):
                        count = min(size, len(pending))
                        return [pending.popleft()[1] for _ in range(count)], flushing
                    timeout = None if age_s is None else age_s - waited
                elif flushing:
                    return [], flushing
                elif self._closing:
                    return None, 0
                elif idle_s is not None:
                    timeout = idle_s - (now - self._last_call)
                    if timeout <= 0:
                        return [], 0
                else:
                    timeout = None
                self._lock.wait(timeout=timeout)

    def _read(self) -> tuple[list[T] | None, int]:
        """The source's next item, as a batch of one; None once the source has ended."""
        if self._source is None:  # only a source worker reads
            raise TypeError("this worker takes items by put(), not from a source")
        try:
            item = next(self._source)
        except StopIteration:
            return None, 0
        except Exception as exc:  # a source that fails has ended: said, as handle's failures
            self._failed(exc)
            return None, 0
        self.stats.queued += 1
        return [item], 0

    def _call(self, function: Callable[..., object], *args: Sequence[T]) -> None:
        count = len(args[0]) if args else 0
        try:
            function(*args)
        except Exception as exc:  # never raised into anyone's thread: counted, said once
            self._failed(exc)
            return
        self.stats.processed += count

    def _failed(self, exc: Exception) -> None:
        self.stats.errors += 1
        message = f"{type(exc).__name__}: {exc}"
        self.stats.last_error = message
        if message not in self._said and len(self._said) < ERRORS_KEPT:
            self._said.append(message)
            self._log.error("%s failed: %s", self.name, message, exc_info=exc)
