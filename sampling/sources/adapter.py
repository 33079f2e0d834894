"""What every trainer adapter is: one base class, `TrainerAdapter`, and what the adapters share.

An adapter runs inside another trainer's process (TRL's reward functions, verl's reward manager,
OpenRLHF's reward file or proxy), reads the samples the trainer scored, and hands them to the
routing core a batch at a time. Whatever goes wrong on lowtide's side stays there: a problem is
counted and warned about once per kind, and training goes on.

Each trainer's integration is one folder, `sampling/sources/<trainer>/`:

- `adapter.py`: one `TrainerAdapter` subclass. It turns what the trainer scored into samples the
  routing core reads and calls `route(samples, info)` per batch; whatever it runs on the
  trainer's side runs inside `guard(kind)`. A trainer that hands over one sample at a time
  (verl, OpenRLHF) puts them into `Bursts`, which calls the adapter back with a burst's worth on
  a background worker; what is held back is routed by `drain()` at `close()` or at exit;
- `dumps.py`: its dump reader for `lowtide ingest` and `lowtide logs`, a `DumpFormat` listed in
  `sampling/sources/ingest/formats.py` (a trainer that writes no rollout files has none);
- the trainer's own library is imported only inside the folder, and only when used: the
  folder's `__init__` imports nothing.

A fourth trainer is one more such folder, plus its public entry, `lowtide/<trainer>.py`: there
the router is built from the run config (`lowtide.integrations.router_from_config`), an
`AdapterSetupError` becomes the command line's `UsageError`, and what users import is named.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from rl.background import Triggers, Worker
from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, RouteCounts, Router
from sampling.sources.idle_window import IdleWindow

if TYPE_CHECKING:
    from sampling.records import ScoredSample

MIN_FLUSH_S = 0.5  # the producer's share of close(), however long draining took
TICK_S = 0.05  # how often a burst's worker looks at what came (and for a quiet gap)
T = TypeVar("T")


class AdapterSetupError(ValueError):
    """A mistake in how an adapter is set up (its settings, what it wraps), found before training
    starts; the public entry raises it as the command line's `UsageError`."""


@dataclass
class Routed:
    """What an adapter handed to the routing core so far."""

    batches: int = 0
    samples: int = 0
    selected: int = 0
    submitted: int = 0


class TrainerAdapter:
    """Routes a trainer's scored samples in batches; never raises into the trainer."""

    log: ClassVar[logging.Logger] = logging.getLogger("lowtide")

    def __init__(self, router: Router) -> None:
        self.router = router
        self.routed = Routed()
        self.last_counts: RouteCounts | None = None
        self.problems: Counter[str] = Counter()  # kind -> how often
        self._problems_lock = threading.Lock()  # reported from the trainer's threads and ours
        self.closed = False
        self._close_lock = threading.Lock()
        # A script that never calls close() still flushes. The hook holds the adapter: a user's
        # script may drop its reward functions before it ends.
        atexit.register(self.close)

    def route(self, samples: Sequence[ScoredSample], info: BatchInfo) -> RouteCounts:
        """One batch to the routing core, counted. Raises what the core raises: call it inside
        `guard`."""
        counts = self.router.route(samples, info)
        self.routed.batches += 1
        self.routed.samples += len(samples)
        self.routed.selected += counts.selected
        self.routed.submitted += counts.submitted
        self.last_counts = counts
        return counts

    @contextmanager
    def guard(self, kind: str) -> Iterator[None]:
        """Whatever fails inside is a problem of `kind`, never the trainer's."""
        try:
            yield
        except Exception as error:
            self.report(kind, error)

    def report(self, kind: str, error: BaseException) -> None:
        self.warn_once(kind, f"lowtide: {kind} ({type(error).__name__}: {error}); training goes on")

    def warn_once(self, kind: str, message: str) -> None:
        """Count a problem; warn at the first of its kind only (a trainer's log must not drown)."""
        with self._problems_lock:
            self.problems[kind] += 1
            first = self.problems[kind] == 1
        if first:
            self.log.warning(message)

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Route what is held back, then hand what is waiting to Redis (or the spool) within the
        deadline; routing stops. Safe to call twice, from any thread."""
        with self._close_lock:
            if self.closed:
                return
            self.closed = True
        started = time.monotonic()
        with self.guard("could not route what was waiting"):
            self.drain(deadline_s)
        left = max(MIN_FLUSH_S, deadline_s - (time.monotonic() - started))
        with self.guard("could not flush the queue"):
            self.router.close(deadline_s=left)

    def drain(self, deadline_s: float) -> None:
        """Route what the adapter holds back; `closed` is already set. Nothing by default."""


class Bursts(Generic[T]):
    """Items handed over from any of the trainer's threads, given back a window at a time on a
    background worker (`rl.background.Worker`): `deliver(items, burst_over)` when the burst is
    over (`quiet_s` without a new item: the trainer is busy elsewhere), and when a window is
    full or old (`IdleWindow`'s rule) with `burst_over=False`. After a burst cut into windows
    it is called once more, with no items, to say the burst is over. `deliver` must not raise:
    it runs inside the adapter's `guard`. What the queue turns away (over `capacity`) or close()
    leaves is the adapter's problem: warned about once, counted."""

    def __init__(
        self,
        adapter: TrainerAdapter,
        deliver: Callable[[list[T], bool], None],
        window: IdleWindow,
        *,
        name: str,
        what: str,
        capacity: int,
        size_of: Callable[[T], int] = lambda _item: 1,
    ) -> None:
        self.window = window
        self._adapter = adapter
        self._what = what  # what an item is, for the warnings: "reward calls"
        self._deliver = deliver
        self._size_of = size_of
        self._held: list[T] = []  # the worker's: the window now open
        self._cut = False  # the worker's: this burst was handed on in windows, its end is owed
        self._flush_now = False
        # Called with what came, at most every TICK_S while items come, and every TICK_S
        # without any (to see a quiet gap); at close, `_end` hands on the last window.
        size = int(min(window.max_samples, capacity))
        triggers = Triggers(size=size, age_s=TICK_S, idle_s=TICK_S)
        self._worker: Worker[T] = Worker(
            name, self._collect, triggers, capacity=capacity, final=self._end, log=adapter.log
        )

    @property
    def waiting(self) -> int:
        """Items handed over and not given back yet."""
        return self._worker.waiting + len(self._held)

    def put(self, item: T) -> None:
        """Hand over one item without waiting (a full queue turns it away)."""
        if not self._worker.put(item):
            self._adapter.warn_once(
                "turned away",
                f"lowtide: over {self._worker.capacity} {self._what} wait to be routed; more are "
                "not routed (training goes on)",
            )

    def flush(self, timeout_s: float = CLOSE_DEADLINE_S) -> bool:
        """Give back what is held now, as a window that ends its burst, and wait for it."""
        self._flush_now = True
        return self._worker.flush(timeout_s)

    def close(self, deadline_s: float) -> None:
        """Give back what is held, within the deadline."""
        left = self._worker.close(deadline_s).left
        if left:
            self._adapter.warn_once(
                "left at close", f"lowtide: {len(left)} {self._what} not routed within close()"
            )

    # ---- the worker's thread -------------------------------------------------------------------

    def _collect(self, items: list[T]) -> None:
        now = self.window.clock()
        for item in items:
            self._held.append(item)
            if self.window.add(self._size_of(item), now):
                self._hand_on(burst_over=False)
        if self._flush_now:
            self._flush_now = False
            self._hand_on(burst_over=True)
        elif self._held and self.window.quiet(now):
            self._hand_on(burst_over=True)
        elif self._held and self.window.due(now):  # not quiet: the window lasted window_s
            self._hand_on(burst_over=False)
        elif not self._held and self._cut and self.window.quiet(now):
            self._hand_on(burst_over=True)  # a burst cut into full or old windows ended

    def _end(self) -> None:
        if self._held or self._cut:
            self._hand_on(burst_over=True)

    def _hand_on(self, *, burst_over: bool) -> None:
        items, self._held = self._held, []
        self.window.take()
        self._cut = not burst_over
        self._deliver(items, burst_over)
