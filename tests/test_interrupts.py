"""Signals while training (real signals sent to this process): the first asks the trainer to stop
after its step, the same interrupt arriving twice is one request, a later one quits at once."""

from __future__ import annotations

import os
import signal

import pytest

from lowtide import interrupts
from lowtide.interrupts import stop_after_the_step
from rl.hooks import TrainerControl

pytestmark = pytest.mark.unit


def test_the_first_signal_asks_to_stop_and_a_quick_repeat_is_the_same_request() -> None:
    control, announced = TrainerControl(), []
    before = signal.getsignal(signal.SIGTERM)
    with stop_after_the_step(control, announced.append) as interrupt:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)  # e.g. torchrun passing on the terminal's Ctrl-C
    assert control.should_stop and control.stop_reason == "SIGTERM received"
    assert announced == [interrupt] and interrupt.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are put back


def test_a_later_signal_quits_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupts, "REPEAT_S", -1.0)
    with pytest.raises(SystemExit) as exit_info, stop_after_the_step(TrainerControl(), print):
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
    assert exit_info.value.code == 130
