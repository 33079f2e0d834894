"""`lowtide worker`: annotation workers that import queued batches into Label Studio.

One worker runs in this process. With `--concurrency N` this process supervises N worker
processes instead: it forwards SIGTERM/SIGINT (each finishes its batch, then exits), restarts
one that crashed, and serves the metrics. Logs: one line per batch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import redis
import typer

from lowtide.config import ServiceConfig, load_service_config
from lowtide.console import err
from lowtide.errors import UsageError, UserError
from lowtide.services.clients import redis_errors, require_api_key
from sampling.transport.producer import annotation_queue

if TYPE_CHECKING:  # the worker's modules load the Label Studio SDK: only when a worker runs
    from annotation.importer import ImportContext

RESTART_DELAY_S = 2.0
QUICK_CRASH_S = 10.0  # a worker process that dies sooner than this after its start...
MAX_QUICK_CRASHES = 5  # ...this many times means a crash loop: stop and say so
STOP_GRACE_S = 60.0  # a batch in flight may take a few Label Studio requests to finish
# --burst: how often it looks again while batches wait for a retry, and how long after one is
# due (the scheduler moves it back to the queue when it is).
BURST_POLL_S = 5.0
RETRY_SLACK_S = 0.5
PR_SET_PDEATHSIG = 1
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def worker(
    ctx: typer.Context,
    config: Path | None = typer.Option(None, "--config", "-c", help="run config"),
    concurrency: int = typer.Option(1, "--concurrency", "-n", min=1, help="worker processes"),
    burst: bool = typer.Option(
        False, "--burst", help="exit once the queue and its retries are done (1: a batch gave up)"
    ),
    metrics_port: int | None = typer.Option(
        None, "--metrics-port", help="serve Prometheus metrics on this port"
    ),
    metrics_host: str = typer.Option("127.0.0.1", "--metrics-host", help="metrics bind address"),
) -> None:
    """Import queued rollouts into Label Studio (Ctrl-C or SIGTERM: finish the batch, stop).
    Override any key: --annotation.project="my review" --queue.name=other."""
    service = load_service_config(config, ctx.args)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr, force=True)
    logging.getLogger("rq").setLevel(logging.WARNING)  # RQ's per-job lines would double ours
    _quiet_request_logs()
    queue = annotation_queue(service.queue, _worker_redis(service))
    _check_redis(service, queue.connection)
    with redis_errors(service.queue, "finding the project"):  # a full Redis, an ACL's refusal
        context = _prepare(service, queue, burst)  # a wrong token or config fails here, once
    if metrics_port is not None:
        _serve(queue, metrics_port, metrics_host)
    if concurrency == 1:
        _run_one(context, service.queue, queue, burst)
    else:
        context.client.close()
        _supervise(config, ctx.args, concurrency, burst)


def _quiet_request_logs() -> None:
    from annotation.labelstudio import quiet_request_logs

    quiet_request_logs()


def _worker_redis(service: ServiceConfig) -> redis.Redis:
    # Not the producer's 0.5 s client: a worker blocks on the queue for seconds at a time.
    return redis.Redis.from_url(
        service.queue.redis_url.get_secret_value(),
        socket_connect_timeout=5,
        health_check_interval=30,
    )


def _check_redis(service: ServiceConfig, connection: redis.Redis) -> None:
    with redis_errors(service.queue):
        connection.ping()


def _serve(queue, port: int, host: str) -> None:
    from annotation.metrics import serve_metrics

    try:
        serve_metrics(queue, port, host)
    except OSError as error:
        raise UsageError(f"--metrics-port {port}: cannot listen on {host} ({error})") from None


def _prepare(service: ServiceConfig, queue, burst: bool) -> ImportContext:
    from annotation.importer import ImportContext, LabelingConfigError
    from annotation.labelstudio import LabelStudioAuthError, LabelStudioError

    annotation = service.annotation
    require_api_key(annotation)
    context = ImportContext.create(annotation, queue.connection, queue.name)
    try:
        project_id = context.project_id()
        err.print(
            f"worker: queue {queue.name} -> Label Studio {annotation.label_studio_url}, project "
            f"{annotation.project!r} (id {project_id})",
            markup=False,
        )
    except (LabelStudioAuthError, LabelingConfigError):
        raise  # retrying cannot fix these: the message says what to change
    except LabelStudioError as error:
        if burst:  # one pass over what is queued now: waiting out the retries would take minutes
            context.client.close()
            raise UserError(f"{error}; the batches wait in the queue") from None
        # Not fatal: batches retry with backoff until Label Studio answers.
        err.print(f"warning: {error}; batches will retry until it answers", markup=False)
    return context


def _run_one(context: ImportContext, queue_config, queue, burst: bool) -> None:
    """While it runs, the worker rides out Redis outages itself (it retries the connection);
    only a failure it cannot handle, such as Redis gone while it stops, ends here."""
    from annotation import jobs
    from annotation.worker import AnnotationWorker

    jobs.bind(context)
    try:
        with redis_errors(queue_config, "running the worker"):
            if burst:
                _burst(queue)
            else:
                AnnotationWorker(queue).work(with_scheduler=True, logging_level="WARNING")
    finally:
        context.client.close()


def _burst(queue) -> None:
    """Import what is queued, and the batches that wait for a retry, then exit: a burst that
    ended while Label Studio was briefly out of reach would otherwise leave its batches for a
    later worker and exit 0. A batch that gave up after its retries ends it with exit code 1."""
    from annotation import ledger
    from annotation.rq_internals import waiting_for_retry

    gave_up_before = ledger.read_stats(queue.connection, queue.name).counters["failures"]
    stop = _StopOnSignal()
    try:
        if _burst_until_no_retry_waits(queue, stop):
            waiting, _ = waiting_for_retry(queue)
            if waiting:
                err.print(f"worker: stopped; {waiting} batch(es) wait for a retry", markup=False)
            return
        gave_up = ledger.read_stats(queue.connection, queue.name).counters["failures"]
    finally:
        stop.restore()
    if gave_up > gave_up_before:
        raise UserError(
            f"{gave_up - gave_up_before} batch(es) could not be imported after their retries "
            "while this worker ran: `lowtide queue failed` says why, `lowtide queue requeue "
            "--all` sends them again"
        )


def _burst_until_no_retry_waits(queue, stop: _StopOnSignal) -> bool:
    """RQ bursts until no batch waits for a retry; True when a signal stopped it."""
    from annotation.rq_internals import waiting_for_retry
    from annotation.worker import AnnotationWorker

    said = False
    while True:
        worker = AnnotationWorker(queue)
        worker.work(burst=True, with_scheduler=True, logging_level="WARNING")
        stop.listen()  # RQ's handlers stay after work() and would raise out of this loop
        if worker.stop_asked or stop.requested:  # Ctrl-C or SIGTERM
            return True
        waiting, next_in = waiting_for_retry(queue)
        if not waiting:
            return False
        if not said:
            err.print(f"worker: {waiting} batch(es) wait for a retry (the next in {next_in:.0f} "
                      "s); --burst waits for them", markup=False)  # fmt: skip
            said = True
        stop.sleep(min(max(next_in, 0.0) + RETRY_SLACK_S, BURST_POLL_S))
        if stop.requested:
            return True


class _StopOnSignal:
    """SIGINT or SIGTERM between two bursts (RQ's own handlers cover a burst): stop waiting."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self._previous = {sig: signal.getsignal(sig) for sig in self._SIGNALS}

    def listen(self) -> None:
        for sig in self._SIGNALS:
            signal.signal(sig, self._request)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def sleep(self, seconds: float) -> None:
        until = time.monotonic() + seconds
        while not self.requested and time.monotonic() < until:
            time.sleep(min(0.2, max(0.0, until - time.monotonic())))

    def _request(self, signum: int, frame: object) -> None:
        self.requested = True


def follow_parent(parent: int) -> Callable[[], None] | None:
    """What a worker process runs before exec: ask Linux for SIGTERM when the supervisor (pid
    `parent`) dies; None where there is no prctl. The library is looked up here, in the
    supervisor: between fork and exec a child of a process with threads (the metrics server)
    must do as little as it can. A supervisor that died between the fork and the prctl sends
    nothing, so then the child ends before it becomes a worker that nobody stops."""
    try:
        prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def term_with_parent() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:
            os._exit(128 + signal.SIGTERM)

    return term_with_parent


def _supervise(config: Path | None, overrides: list[str], concurrency: int, burst: bool) -> None:
    command = [sys.executable, "-m", "lowtide", "worker", "--concurrency", "1", *overrides]
    if config is not None:
        command += ["--config", str(config)]
    if burst:
        command.append("--burst")
    stopping = False
    before_exec = follow_parent(os.getpid())

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    def spawn() -> subprocess.Popen:
        # Their own session: a terminal's Ctrl-C reaches only this process, which passes one
        # SIGTERM on (a second signal would make RQ abandon the batch in flight). If this
        # process dies without passing it on, Linux sends it for us.
        return subprocess.Popen(command, start_new_session=True, preexec_fn=before_exec)

    children = [spawn() for _ in range(concurrency)]
    started = [time.monotonic()] * concurrency
    quick_crashes = 0
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    err.print(f"worker: supervising {concurrency} worker processes (pid {os.getpid()})")
    while any(child.poll() is None for child in children) or not (stopping or burst):
        for index, child in enumerate(children):
            code = child.poll()
            # A burst process that exits 1 has said why (batches that gave up): not a crash.
            if code is None or stopping or (burst and code in (0, UserError.exit_code)):
                continue
            lived = time.monotonic() - started[index]
            quick_crashes = quick_crashes + 1 if lived < QUICK_CRASH_S else 0  # in a row only
            if quick_crashes > MAX_QUICK_CRASHES:
                stop(signal.SIGTERM, None)
                raise UserError(f"worker processes keep exiting (last code {code}): see above")
            err.print(f"worker process {child.pid} exited with {code}: restarting it")
            time.sleep(RESTART_DELAY_S)
            children[index] = spawn()
            started[index] = time.monotonic()
        time.sleep(0.5)
    deadline = time.monotonic() + STOP_GRACE_S
    for child in children:
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
    codes = [child.returncode for child in children]
    if burst and any(codes):
        raise UserError(f"worker processes exited with {codes}")
