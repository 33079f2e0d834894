"""The idle-window rule the verl and OpenRLHF adapters share (sampling/sources/idle_window.py),
on a clock the test moves."""

from __future__ import annotations

import pytest

from sampling.sources.idle_window import IdleWindow
from tests.helpers.clock import Clock

pytestmark = pytest.mark.unit


def test_a_burst_is_due_once_it_has_been_quiet() -> None:
    clock = Clock(100.0)
    window = IdleWindow(1.0, clock=clock)
    assert not window.due() and not window.quiet()  # nothing yet: not a quiet end of anything
    window.add(3)
    clock.now += 0.6
    window.add(2)  # the burst goes on: its quiet time starts again
    clock.now += 0.6
    assert not window.due() and window.wait_s() == pytest.approx(0.4)
    clock.now += 0.4
    assert window.due() and window.take() == 5
    assert window.pending == 0 and not window.due() and window.quiet()


def test_a_long_burst_is_cut_at_window_s_and_a_full_one_at_max_samples() -> None:
    clock = Clock(100.0)
    window = IdleWindow(1.0, window_s=2.0, max_samples=10, clock=clock)
    for _ in range(5):
        window.add(1)
        clock.now += 0.5  # never quiet
    assert window.due() and not window.quiet()  # 2.5 s since its first sample
    window.take()
    assert window.wait_s() == 1.0  # empty: nothing to wait for but the next burst
    window.add(4)
    assert window.wait_s() == pytest.approx(1.0)  # the quiet end comes before window_s
    assert not window.add(5) and window.add(1)  # the tenth sample fills it


def test_bad_settings_are_refused() -> None:
    for settings in ({"quiet_s": 0}, {"quiet_s": 1, "window_s": 0},
                     {"quiet_s": 1, "max_samples": 0}):  # fmt: skip
        with pytest.raises(ValueError, match="must be > 0"):
            IdleWindow(**settings)
