"""When a window of arrivals is due for routing: the one rule the verl and OpenRLHF adapters
share.

Both see samples one reward call at a time, in bursts (a step's generation), and route them
together once the burst is over, when the process has nothing else to do: after `quiet_s` with
no arrival. A long burst is cut at `window_s` after its first arrival or at `max_samples`, so
that nothing waits without end. The window only decides; its owner drives it
(`sampling.sources.adapter.Bursts`, on a background worker that looks every few tens of ms),
asking `due` whether to route and `wait_s` how long until it may be.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

# A timer set for the remaining idle time may fire a hair early: count that as idle.
EARLY = 0.999


class IdleWindow:
    def __init__(
        self,
        quiet_s: float,
        *,
        window_s: float = math.inf,
        max_samples: float = math.inf,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not quiet_s > 0 or not window_s > 0 or not max_samples >= 1:
            raise ValueError("quiet_s and window_s must be > 0, max_samples >= 1")
        self.quiet_s = quiet_s
        self.window_s = window_s
        self.max_samples = max_samples
        self.clock = clock
        self.pending = 0  # samples in the window
        self._opened = 0.0  # when the window got its first sample
        self._last_seen: float | None = None  # the last arrival, kept across windows

    def add(self, count: int = 1, now: float | None = None) -> bool:
        """Count `count` arrivals; True when the window is full (route it now)."""
        now = self.clock() if now is None else now
        if not self.pending:
            self._opened = now
        self.pending += count
        self._last_seen = now
        return self.pending >= self.max_samples

    def quiet(self, now: float | None = None) -> bool:
        """Has nothing arrived for `quiet_s` (the burst is over)? False before any arrival."""
        if self._last_seen is None:
            return False
        now = self.clock() if now is None else now
        return now - self._last_seen >= self.quiet_s * EARLY

    def due(self, now: float | None = None) -> bool:
        """Route the window now: it holds samples and the burst ended or lasted `window_s`."""
        if not self.pending:
            return False
        now = self.clock() if now is None else now
        return self.quiet(now) or now - self._opened >= self.window_s * EARLY

    def wait_s(self, now: float | None = None) -> float:
        """Seconds until the window may be due (0: look now)."""
        if not self.pending or self._last_seen is None:
            return self.quiet_s
        now = self.clock() if now is None else now
        until = min(self._last_seen + self.quiet_s, self._opened + self.window_s)
        return max(0.0, until - now)

    def take(self) -> int:
        """Empty the window (its owner routes what it held); the count it held."""
        count, self.pending = self.pending, 0
        return count
