"""Ctrl-C and SIGTERM while training: the trainer finishes its step, saves it and flushes the
loggers, then the command exits with 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM).
A second signal quits at once, without saving."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI starts without torch; training imports it when it runs
    from rl.hooks import TrainerControl

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# torchrun passes on the signal it got, and a terminal's Ctrl-C reaches every process of the job:
# one interrupt often arrives twice within moments, and that is not a second request.
REPEAT_S = 2.0


@dataclass
class Interrupt:
    signum: int | None = None
    received_at: float = 0.0

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or 0)


@contextmanager
def stop_after_the_step(
    control: TrainerControl, announce: Callable[[Interrupt], None]
) -> Iterator[Interrupt]:
    """While inside: the first SIGINT/SIGTERM asks the trainer to stop (`announce` says so);
    the yielded Interrupt tells afterwards whether one came."""
    interrupt = Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield interrupt  # signal handlers can only be set from the main thread
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        now = time.monotonic()
        if interrupt.signum is None:
            interrupt.signum, interrupt.received_at = signum, now
            control.request_stop(f"{interrupt.name} received")
            announce(interrupt)
        elif now - interrupt.received_at > REPEAT_S:
            raise SystemExit(128 + signum)  # unwinds: hooks and loggers still close

    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        signal.signal(signum, handle)
    try:
        yield interrupt
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
