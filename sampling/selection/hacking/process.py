"""`WatchProcess`: the reward-hacking watch in a helper process, off the trainer's interpreter lock.

The watch reads every response's features in pure Python; on a thread of the trainer's process
that work would hold the interpreter's lock the trainer's thread needs. So beside a trainer it
runs in a process of its own, started with the `spawn` method (a fresh interpreter: forking a
process that holds torch's threads is unsafe), and is fed batches as plain data:

- `observe` (the trainer's thread) counts the batch against `max_pending_samples` and queues it;
  a background worker (`rl.background.Worker`) turns it into plain rows and writes them to the
  process. A process that falls behind makes the queue full: batches are left out (counted in
  `hacking/dropped`, said once), so the watch reads a sample of the run and never slows it.
- The process runs a `HackingWatch` without a thread, reading each batch as it comes and
  analysing every `analyze_every_steps` steps; each analysis comes back as a `WatchReport` to
  a second worker of the owner's process, the reader of the process's pipe, which calls
  `on_suspect` (once per suspect) and `on_report` there, as `HackingWatch` does. The process's
  warnings and errors are logged by the owner.
- `carriers` and `analyze_now` ask the process and wait for its answer.
- `close(deadline_s)` stops feeding, lets the process analyse what it has read, and ends it
  within the deadline (terminated past it). It is also closed at interpreter exit, and the
  process ends by itself when its owner dies (its end of the pipe closes): no orphan.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import multiprocessing
import signal
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

from rl.background import Triggers, Worker
from sampling.selection.hacking.carriers import Carried, carriers
from sampling.selection.hacking.config import WatchConfig
from sampling.selection.hacking.suspects import Suspect, WatchReport
from sampling.selection.hacking.watch import (
    CLOSE_DEADLINE_S,
    THREAD_NAME,
    Announcer,
    HackingWatch,
)

log = logging.getLogger("sampling.selection.hacking")
START_METHOD = "spawn"
FEED_BATCHES = 16  # batches written to the process in one go
# How long a batch may wait to be written: each wake of the feeding thread takes the
# interpreter's lock from the trainer's thread once, so it wakes once per window, not per batch.
FEED_AGE_S = 0.1
STATE_EVERY = 64  # batches the process reads, while behind, between reports of its progress
FEED_CAPACITY = 4096  # batches queued at most (samples are bounded by max_pending_samples)
ASK_TIMEOUT_S = 60.0  # the longest a question to the process waits for its answer
CLOSE_FEED_SHARE = 0.25  # of close's deadline, spent handing over what is still queued
AT_EXIT_DEADLINE_S = 2.0


class PlainSample(NamedTuple):
    """A routed sample as the process reads it: plain data, whatever the trainer's type."""

    index: int
    prompt: str
    response: str
    reward: Any  # as the trainer gave it: the watch skips what is not a finite number
    reward_details: dict[str, float]


class PlainBatch(NamedTuple):
    step: int
    run_id: str
    rank: int


@dataclass
class _Answer:
    ready: threading.Event = field(default_factory=threading.Event)
    value: Any = None


class WatchProcess(Announcer):
    def __init__(
        self,
        config: WatchConfig | None = None,
        *,
        on_suspect: Callable[[Suspect], None] | None = None,
        on_report: Callable[[WatchReport], None] | None = None,
    ) -> None:
        """Start the process (its interpreter boots while the trainer sets up). `on_suspect`
        and `on_report` are called on this process's receiving thread, as `HackingWatch` calls
        them on its own."""
        super().__init__(config, on_suspect, on_report)
        # The process's metrics, as it last sent them.
        self._state = HackingWatch(self.config, start=False).metrics()
        # Samples: queued (the trainer's thread), read by the process (the receiving thread),
        # and queued but never read (the feeding thread, close).
        self._offered = 0
        self._read = 0
        self._unsent = 0
        self._dropped = 0  # left out: the queue was full, or close came first
        self._feed_errors = 0
        self._closing = False
        self._gone = False  # the process ended before close
        self._answers: dict[int, _Answer] = {}
        self._tokens = itertools.count(1)
        self._send_lock = threading.Lock()
        context = multiprocessing.get_context(START_METHOD)
        inbox, self._to_process = context.Pipe(duplex=False)
        self._from_process, outbox = context.Pipe(duplex=False)
        self.process = context.Process(
            target=serve,
            args=(self.config.model_dump(mode="json"), inbox, outbox),
            name="lowtide-hacking-watch",
            daemon=True,
        )
        try:
            with _main_not_run_again():
                self.process.start()
        except BaseException:
            self._to_process.close()
            self._from_process.close()
            raise
        finally:
            inbox.close()  # the process's ends: closed here, so either side sees the other end
            outbox.close()
        # Reads the process's reports, answers and log lines as they come; ends with the pipe.
        self._receiver: Worker[tuple[Any, ...]] = Worker(
            THREAD_NAME, self._take_each, source=self._messages(), final=self._ended, log=log
        )
        self._feeder: Worker[tuple[Sequence[Any], int, str, int]] = Worker(
            f"{THREAD_NAME}-feed",
            self._feed,
            Triggers(size=FEED_BATCHES, age_s=FEED_AGE_S),
            capacity=FEED_CAPACITY,
            log=log,
        )
        this = weakref.ref(self)
        self._at_exit = lambda: (watch := this()) is not None and watch.close(AT_EXIT_DEADLINE_S)
        atexit.register(self._at_exit)

    # ---- the trainer's thread: cheap ---------------------------------------------------------

    def observe(self, samples: Sequence[Any], info: Any) -> None:
        """Queue a routed batch for the process; never reads the texts, never waits."""
        if self._closing or self._gone:
            return
        count = len(samples)
        behind = self._pending()
        if behind + count > self.config.max_pending_samples:
            self._leave_out(count, behind)
            return
        self._offered += count
        if self._feeder.put_many(((tuple(samples), info.step, info.run_id, info.rank),)):
            self._offered -= count
            self._leave_out(count, behind)

    def metrics(self) -> dict[str, tuple[float, str]]:
        """`hacking/*` metrics as `HackingWatch.metrics` names them: the process's figures, with
        what is pending and left out on the way to it."""
        found = dict(self._state)
        errors = self._feed_errors + self._receiver.stats.errors + found["hacking/errors"][0]
        found["hacking/pending"] = (self._pending(), "max")
        found["hacking/dropped"] = (self._dropped, "sum")
        found["hacking/errors"] = (errors, "sum")
        return found

    # ---- any other thread: asks the process and waits ----------------------------------------

    def carriers(self, responses: Sequence[str], prompts: Sequence[str]) -> list[Carried]:
        """Which of `responses` carry each current suspect's feature, read by the process; once
        it has ended (the budget policy spends a round's budget after the router closed the
        watch), here, from the last report."""
        if not self._report.suspects:
            return []
        if self._closing or self._gone:
            return carriers(self._report.suspects, responses, self.config, prompts)
        return self._ask("carriers", list(responses), list(prompts))

    def analyze_now(self) -> WatchReport:
        """Hand over everything observed, have the process analyse it (the last step too), and
        return the report (after `on_suspect` and `on_report` ran)."""
        self._feeder.flush(ASK_TIMEOUT_S)
        return self._ask("analyze")

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> WatchReport:
        """Stop observing; hand over what is queued, have the process analyse what it read, and
        end it, all within the deadline. Past it the process is terminated and the report so
        far is returned."""
        if self._closing:
            return self._report
        self._closing = True
        ends = time.monotonic() + max(0.0, deadline_s)
        closed = self._feeder.close(deadline_s * CLOSE_FEED_SHARE)
        left_out = sum(len(samples) for samples, *_ in closed.left)
        if left_out:
            self._unsent += left_out
            self._dropped += left_out
            log.warning("hacking watch: %d samples still queued at close were left out", left_out)
        finished = False
        if not self._gone:
            try:
                self._ask("close", timeout_s=max(0.0, ends - time.monotonic()))
                self.process.join(max(0.0, ends - time.monotonic()))
                finished = not self.process.is_alive()
            except (TimeoutError, OSError, EOFError):
                finished = False
        if self.process.is_alive():
            if not finished:
                log.warning("hacking watch: its last analysis did not end within %.1fs", deadline_s)
            self.process.terminate()
            self.process.join(1.0)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(1.0)
        self._to_process.close()
        self._receiver.close(1.0)
        atexit.unregister(self._at_exit)
        return self._report

    # ---- inside ------------------------------------------------------------------------------

    def _pending(self) -> int:
        return max(0, self._offered - self._read - self._unsent)

    def _leave_out(self, count: int, behind: int) -> None:
        if not self._dropped:  # said once: the metric counts the rest
            log.warning(
                "hacking watch: its process is %d samples behind; batches are left out until "
                "it catches up, so it reads a sample of the run (hacking/dropped counts them; "
                "sampling.watch.max_pending_samples holds more)",
                behind,
            )
        self._dropped += count

    def _feed(self, batches: list[tuple[Sequence[Any], int, str, int]]) -> None:
        """On the feeding worker's thread: each batch as columns of plain values (cheap to make
        and to pickle: this thread shares the trainer's interpreter lock), written to the
        process."""
        for samples, step, run_id, rank in batches:
            try:
                self._send(("batch", PlainBatch(step, run_id, rank), _columns(samples)))
            except OSError:  # the process is gone: the receiver says so
                self._unsent += len(samples)
                self._dropped += len(samples)
            except Exception as error:  # not samples at all: said once, counted
                self._unsent += len(samples)
                self._feed_errors += 1
                if self._feed_errors == 1:
                    log.error("hacking watch: a batch it could not read was left out (%s: %s)",
                              type(error).__name__, error)  # fmt: skip

    def _send(self, message: tuple[Any, ...], timeout_s: float = -1) -> None:
        """Write a message (one writer at a time); `timeout_s`: the longest to wait for the
        feeding thread, which may be blocked writing to a busy process."""
        if not self._send_lock.acquire(timeout=timeout_s):
            raise TimeoutError("the hacking watch's process is not reading")
        try:
            self._to_process.send(message)
        finally:
            self._send_lock.release()

    def _ask(self, kind: str, *args: Any, timeout_s: float = ASK_TIMEOUT_S) -> Any:
        if self._gone:
            raise OSError("the hacking watch's process has ended")
        token = next(self._tokens)
        answer = self._answers[token] = _Answer()
        try:
            started = time.monotonic()
            self._send((kind, token, *args), timeout_s)
            if not answer.ready.wait(max(0.0, timeout_s - (time.monotonic() - started))):
                raise TimeoutError(f"the hacking watch's process gave no answer in {timeout_s}s")
            if isinstance(answer.value, BaseException):
                raise answer.value
            return answer.value
        finally:
            self._answers.pop(token, None)

    def _messages(self) -> Iterator[tuple[Any, ...]]:
        """The process's messages, until its end of the pipe closes (it ended, or was ended)."""
        while True:
            try:
                yield self._from_process.recv()
            except (EOFError, OSError):
                return

    def _take_each(self, messages: list[tuple[Any, ...]]) -> None:
        """On the receiving worker's thread; a message that fails there is counted and said
        once by the worker, and the watch reads on."""
        for message in messages:
            self._take(message)

    def _ended(self) -> None:
        """The process's pipe closed: said, unless close ended it; nobody is left waiting."""
        if not self._closing:
            self._gone = True
            log.error("hacking watch: its process ended (exit code %s); the watch is off for "
                      "the rest of the run", self.process.exitcode)  # fmt: skip
        for answer in list(self._answers.values()):  # nobody waits for an answer that will not come
            answer.value = OSError("the hacking watch's process has ended")
            answer.ready.set()
        self._from_process.close()

    def _take(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "state":
            _, read, self._state = message
            self._read += read
        elif kind == "report":
            _, token, report, self._state, read = message
            self._read += read
            self._publish(report)
            self._answer(token, report)
        elif kind == "answer":
            _, token, value = message
            self._answer(token, value)
        elif kind == "log":
            _, level, text = message
            log.log(level, "%s", text)

    def _answer(self, token: int | None, value: Any) -> None:
        answer = self._answers.get(token) if token is not None else None
        if answer is not None:
            answer.value = value
            answer.ready.set()


Columns = tuple[list[Any], list[Any], list[Any], list[Any], list[dict[str, Any]]]


def _columns(samples: Sequence[Any]) -> Columns:
    """Index, prompt, response, reward and reward details, one list each."""
    return (
        [s.index for s in samples],
        [s.prompt for s in samples],
        [s.response for s in samples],
        [s.reward for s in samples],
        [dict(s.reward_details) if s.reward_details else {} for s in samples],
    )


def _rows(columns: Columns) -> list[PlainSample]:
    """The samples again, in the process; a reward or detail that is not a number is skipped
    there as the watch skips it anywhere."""
    return [
        PlainSample(index, str(prompt), str(response), reward,
                    {str(k): v for k, v in details.items() if isinstance(v, int | float)})
        for index, prompt, response, reward, details in zip(*columns, strict=True)
    ]  # fmt: skip


@contextlib.contextmanager
def _main_not_run_again() -> Iterator[None]:
    """`spawn` runs the owner's main script again in the new process (as `__mp_main__`), unless
    it is a package's `__main__`: a training script without a main guard would train again
    there. The process needs nothing of it, so it is not told of it."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


# ---- the helper process ----------------------------------------------------------------------


class _ToOwner(logging.Handler):
    """The process's log lines, sent to its owner, whose logging says them."""

    def __init__(self, outbox: Connection) -> None:
        super().__init__(logging.WARNING)
        self.outbox = outbox

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            text = self.format(record)
            self.outbox.send(("log", record.levelno, text))


def serve(settings: dict[str, Any], inbox: Connection, outbox: Connection) -> None:
    """The helper process: read batches and questions until `close` or the owner's end of the
    pipe closes (the owner died)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the owner's to handle
    log.addHandler(_ToOwner(outbox))
    log.propagate = False
    config = WatchConfig.model_validate(settings)

    unreported = [0]  # samples read since the owner was last told

    def report_to_owner(report: WatchReport, token: int | None = None) -> None:
        outbox.send(("report", token, report, watch.metrics(), unreported[0]))
        unreported[0] = 0

    watch = HackingWatch(config, on_report=report_to_owner, start=False)
    batches = 0
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return  # the owner is gone
        kind = message[0]
        if kind == "batch":
            _, info, columns = message
            rows = _rows(columns)
            watch.observe(rows, info)
            watch.work()
            unreported[0] += len(rows)
            batches += 1
            # Progress once caught up, or now and then while behind: each message wakes a
            # thread of the owner's (the trainer's) process.
            if batches % STATE_EVERY == 0 or not inbox.poll():
                outbox.send(("state", unreported[0], watch.metrics()))
                unreported[0] = 0
            continue
        token = message[1]
        if kind == "carriers":
            try:
                value: Any = watch.carriers(message[2], message[3])
            except Exception as error:
                value = RuntimeError(f"{type(error).__name__}: {error}")
            outbox.send(("answer", token, value))
        elif kind in ("analyze", "close"):
            watch.on_report = None  # this analysis is the answer
            try:
                report = watch.analyze_now()
            except Exception as error:
                log.exception("hacking watch: analysis failed")
                outbox.send(("answer", token, RuntimeError(f"{type(error).__name__}: {error}")))
            else:
                report_to_owner(report, token)
            watch.on_report = report_to_owner
            if kind == "close":
                return
