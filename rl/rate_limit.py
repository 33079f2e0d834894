"""One rate limiter: a token bucket, refilled continuously.

`rate` tokens accrue every `period_s`, up to `capacity`; a bucket starts full (a burst of one
period's worth at once) or empty (nothing before it has accrued). With `window_s`, no more than
`capacity` tokens are taken in any trailing window of that length, whatever accrued.

    per_minute = TokenBucket(60, period_s=60)  # routing caps: bursts up to a minute's
    per_hour = TokenBucket(10, period_s=3600, start_full=False, window_s=3600)  # a review budget
    granted = per_minute.take(wanted)
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

EPSILON = 1e-9  # a token that accrued in float steps counts as whole


class TokenBucket:
    def __init__(
        self,
        rate: float,
        *,
        period_s: float = 60.0,
        capacity: float | None = None,
        start_full: bool = True,
        window_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if period_s <= 0:
            raise ValueError(f"period_s must be above 0, not {period_s}")
        self.rate = float(rate)
        self.period_s = period_s
        self._capacity = None if capacity is None else float(capacity)
        self.window_s = window_s
        self.clock = clock
        self.tokens = self.capacity if start_full else 0.0
        self.updated = clock()
        self.taken_at: deque[float] = deque()  # kept only with a window

    @property
    def capacity(self) -> float:
        """The most tokens the bucket holds (by default one period's)."""
        return self.rate if self._capacity is None else self._capacity

    def available(self) -> int:
        """Whole tokens that may be taken now (accrual brought up to date)."""
        now = self.clock()
        accrued = (now - self.updated) * self.rate / self.period_s
        self.tokens = min(self.capacity, self.tokens + accrued)
        self.updated = now
        whole = int(self.tokens + EPSILON)
        if self.window_s is None:
            return max(0, whole)
        while self.taken_at and self.taken_at[0] <= now - self.window_s:
            self.taken_at.popleft()
        return max(0, min(whole, int(self.capacity) - len(self.taken_at)))

    def spend(self, count: int) -> None:
        """Take `count` tokens, whatever is available (the caller checked)."""
        self.tokens -= count
        if self.window_s is not None:
            self.taken_at.extend([self.clock()] * count)

    def take(self, wanted: int) -> int:
        """Take up to `wanted` tokens; returns how many were granted."""
        granted = max(0, min(wanted, self.available()))
        self.spend(granted)
        return granted
