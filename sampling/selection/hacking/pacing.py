"""Handing the interpreter's lock back often. The watch reads text in pure Python on a thread of
the trainer's process; left alone, such a thread keeps the lock for the interpreter's switch
interval (5 ms), and the trainer's thread waits that long whenever it wants to run. The watch's
thread calls `pace()` in its loops: every `SLICE_S` of work it sleeps `REST_S`, which lets a
waiting thread in at once. `pace()` costs nothing on a thread that did not ask for pacing
(offline analysis, tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

SLICE_S = 0.0003  # the longest the watch works before it lets another thread in
REST_S = 0.00005  # how long it steps aside (a sleep of any length releases the lock)

_local = threading.local()


def pace() -> None:
    """Step aside if this thread paces and has worked a slice since it last did."""
    since = getattr(_local, "since", None)
    if since is None:
        return
    now = time.perf_counter()
    if now - since >= SLICE_S:
        time.sleep(REST_S)
        _local.since = time.perf_counter()


@contextmanager
def paced() -> Iterator[None]:
    """Pace this thread's `pace()` calls while inside (nested: as the outer one)."""
    outer = getattr(_local, "since", None)
    _local.since = outer if outer is not None else time.perf_counter()
    try:
        yield
    finally:
        _local.since = None if outer is None else time.perf_counter()
