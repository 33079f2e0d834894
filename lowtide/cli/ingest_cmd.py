"""`lowtide ingest DIR`: follow the rollout dumps a trainer already writes (verl's
`rollout_data_dir`, TRL's `log_completions` files, lowtide's own `rollouts/`) and route them like
the `low_reward_sampler` hook does, with the run config's `sampling` and `queue` sections."""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from lowtide.cli.dump_options import DumpFormatName, parse_reward_weights
from lowtide.console import err, out
from lowtide.errors import UsageError, UserError
from lowtide.interrupts import Interrupt, stop_after_the_step
from rl.visible_text import visible_line

if TYPE_CHECKING:  # the follower loads only when the command runs
    from sampling.sources.ingest.follower import IngestStats
    from sampling.sources.ingest.formats import DumpLocation
    from sampling.transport.producer import Producer

WAIT_NOTICE_S = 30.0


def ingest(
    ctx: typer.Context,
    directory: Path = typer.Argument(
        ..., help="the dump directory: verl's rollout_data_dir, TRL's output_dir, logs/<run>"
    ),
    dump_format: DumpFormatName = typer.Option(
        DumpFormatName.auto, "--format", help="auto: from the file names"
    ),
    once: bool = typer.Option(False, "--once", help="route what is there and exit"),
    config: Path | None = typer.Option(None, "--config", "-c", help="run config"),
    run_id: str | None = typer.Option(
        None, "--run-id", help="run id of the records (default: the run directory's name)"
    ),
    cursor: Path | None = typer.Option(
        None, "--cursor", help="state file (default: in the dump directory, one per queue)"
    ),
    interval: float = typer.Option(1.0, "--interval", min=0.05, help="seconds between polls"),
    reward_weights: str | None = typer.Option(
        None, "--reward-weights", help="TRL: the trainer's reward_weights, e.g. 1.0,0.5"
    ),
    model: str = typer.Option("unknown", "--model", help="model name written in the records"),
) -> None:
    """Follow a directory of rollout dumps as they are written and route the low-reward samples
    to the annotation queue, resuming where it stopped (Ctrl-C or SIGTERM: hand over, save the
    cursor, exit). Override any key: --sampling.threshold=0.3 --queue.name=other."""
    from lowtide.integrations import routing_settings
    from sampling.sources.ingest.cursor import Cursor, CursorError, default_path
    from sampling.sources.ingest.follower import BUDGET_NOT_FOR_INGEST, Follower
    from sampling.sources.ingest.formats import FormatError
    from sampling.sources.ingest.handover import IngestError
    from sampling.transport.producer import Producer

    weights = parse_reward_weights(reward_weights, dump_format)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is a file: give the directory the dump files are in")
    if once and not directory.is_dir():
        raise UsageError(f"{directory}: no such directory")
    settings = routing_settings(config, ctx.args)  # a config mistake stops here, before anything
    if settings.sampling.policy == "budget":
        raise UsageError(BUDGET_NOT_FOR_INGEST)
    producer = Producer(settings.queue)
    stop = _StopRequest()
    with stop_after_the_step(stop, _announce), _producer_messages():
        try:
            location = _wait_for_dumps(directory, dump_format.value, once, stop)
        except BaseException:
            producer.close(deadline_s=2.0)
            raise
        if location is None:  # stopped before the trainer wrote anything
            producer.close()
            return
        if weights is not None and location.format.name != "trl":
            producer.close()
            raise UsageError(f"--reward-weights: {location.format.name} dumps have one reward")
        queue = settings.queue
        state = cursor or default_path(
            location.files_dir, queue.name, queue.redis_url.get_secret_value()
        )
        follower = Follower(
            settings.sampling, producer, location, Cursor(state),
            run_id=run_id or location.run_dir.resolve().name, model_name=model, once=once,
            reward_weights=weights, say=lambda line: err.print(visible_line(line), markup=False),
            seed=settings.seed,
        )  # fmt: skip
        try:
            stats = follower.run(stop.is_set, interval)  # it closes the router, however it ends
        except (IngestError, CursorError, FormatError) as error:
            raise UserError(str(error)) from None
    _summary(stats, location, state, producer)


def _wait_for_dumps(
    directory: Path, name: str, once: bool, stop: threading.Event
) -> DumpLocation | None:
    from sampling.sources.ingest.formats import FormatError, expected_files, locate

    noticed = 0.0
    while True:
        try:
            location = locate(directory, name)
        except FormatError as error:
            raise UsageError(str(error)) from None
        if location is not None:
            return location
        if once:
            raise UserError(f"no dump files in {directory} (expected {expected_files()})")
        if time.monotonic() - noticed > WAIT_NOTICE_S:
            # A trainer may not have made it yet; a mistyped path looks the same: say which.
            missing = "" if directory.is_dir() else ", which does not exist yet"
            waiting = f"ingest: waiting for dump files in {directory}{missing} (Ctrl-C to stop)"
            err.print(waiting, markup=False)
            noticed = time.monotonic()
        if stop.wait(1.0):
            return None


def _summary(stats: IngestStats, location: DumpLocation, state: Path, producer: Producer) -> None:
    queue, sent = producer.config, producer.stats
    lines = [
        f"ingest: {stats.files} {location.format.name} dump files in {location.files_dir}, "
        f"{stats.samples} samples read, {stats.selected} selected, {stats.routed} routed "
        f"({stats.capped} capped, {stats.deduped} deduped), {stats.malformed} malformed "
        "lines skipped",
        f"queue {queue.name}: {sent.enqueued} records enqueued, {sent.spooled} spooled",
        f"cursor: {state}",
    ]
    if stats.resumed:
        lines.insert(1, f"resumed: {stats.resumed} records an interrupted run had routed")
    if stats.unreadable_files:
        lines.insert(1, f"unreadable files: {stats.unreadable_files} (see the warnings above)")
    if stats.repeated_batches:
        lines.insert(1, f"files that repeated the batch before them: {stats.repeated_batches}")
    if sent.spooled > sent.replayed:
        lines.append(
            f"Redis was unreachable: {sent.spooled - sent.replayed} records wait in "
            f"{queue.spool_dir}; `lowtide queue replay` (or the next run) queues them"
        )
    for line in lines:
        out.print(line, markup=False)


class _StopRequest(threading.Event):
    """What the first SIGINT/SIGTERM stops (the train command's handling): the follower, after
    the file it is reading; a second one later quits at once (the cursor holds the last save)."""

    def request_stop(self, reason: str) -> None:
        self.set()


def _announce(interrupt: Interrupt) -> None:
    err.print(f"ingest: {interrupt.name}: handing over and saving the cursor", markup=False)


class _LevelFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


@contextmanager
def _producer_messages() -> Iterator[None]:
    """The producer's and spool's messages (Redis down, replaying) on stderr while it runs."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_LevelFormatter())
    logger = logging.getLogger("sampling")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
