"""`lowtide worker` against what anyone who can write to Redis can leave on its queue (the
security review's M3): a zlib bomb, callbacks in a job's hash, a batch whose worker dies on
every try. A real Redis of the test's own and real worker processes; no Label Studio: the jobs
are refused before an import is tried, or the one the worker is given never answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from rq import Callback, Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry
from rq.serializers import JSONSerializer

from annotation import ledger
from lowtide.services.process import free_port
from sampling.records import JOB_FUNCTION
from sampling.transport.producer import enqueue_batch
from tests.conftest import invoke
from tests.helpers.pipeline import stop, wait_for
from tests.helpers.records import rollout_records
from tests.helpers.redis_server import OwnRedis

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(240),
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc"),
]

QUEUE = "bounds-annotate"
BOMB_INFLATED = 200_000_000  # '[' repeated: ~0.9 MB stored, 200 MB once inflated
MAX_GROWTH_MIB = 150  # the payload bound (64 MiB) and room; RQ's own read: 400 MB and more
PROBE = '''"""Leaves a file beside itself when imported, another when called."""
from pathlib import Path

Path(__file__).with_name("imported").touch()


def hook(*args, **kwargs):
    Path(__file__).with_name("called").touch()
'''


@dataclass
class Workers:
    """`lowtide worker` processes on the test's Redis and queue, each logging to a file."""

    redis: OwnRedis
    workdir: Path
    label_studio_url: str
    flags: tuple[str, ...] = ()
    logs: list[Path] = field(default_factory=list)

    @property
    def connection(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis.url)

    def start(self) -> subprocess.Popen:
        log = self.workdir / f"worker-{len(self.logs)}.log"
        self.logs.append(log)
        env = {
            **os.environ,
            "REDIS_URL": self.redis.url,
            "LABEL_STUDIO_URL": self.label_studio_url,
            "LABEL_STUDIO_API_KEY": "not-a-real-token",
            # The probe module is importable by the worker, as anything on its path is.
            "PYTHONPATH": os.pathsep.join(filter(None, [str(self.workdir),
                                                        os.environ.get("PYTHONPATH")])),
        }  # fmt: skip
        return subprocess.Popen(
            [sys.executable, "-m", "lowtide", "worker", f"--queue.name={QUEUE}", *self.flags],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_until_ready(self, worker: subprocess.Popen) -> None:
        """Until it has said that Label Studio is out of reach and goes on without it."""
        ready = lambda: "batches will retry" in self.log_text() or worker.poll() is not None  # noqa: E731
        wait_for(ready, 60, "the worker to start", explain=self.log_text)
        assert worker.poll() is None, self.log_text()

    def log_text(self) -> str:
        return self.logs[-1].read_text(errors="replace") if self.logs else ""

    def failed_ids(self) -> list[str]:
        return FailedJobRegistry(QUEUE, connection=self.connection).get_job_ids(cleanup=False)

    def started_ids(self) -> list[str]:
        return StartedJobRegistry(QUEUE, connection=self.connection).get_job_ids(cleanup=False)

    def running(self, job_id: str, worker: subprocess.Popen) -> bool:
        """`worker` has started the job (a dead worker's start stays in the registry until the
        next one recovers it)."""
        if job_id not in self.started_ids():
            return False
        job = Job.fetch(job_id, connection=self.connection, serializer=JSONSerializer)
        return f"-{worker.pid}-" in (job.worker_name or "")

    def reasons(self) -> dict[str, str]:
        entries = ledger.quarantined(self.connection, QUEUE)
        return {entry["job_id"]: entry["reason"] for entry in entries}

    def rejected_jobs(self) -> int:
        return ledger.read_stats(self.connection, QUEUE).counters["rejected_jobs"]


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@contextmanager
def never_answering() -> Iterator[str]:
    """The URL of a server that takes connections and never answers (a hung Label Studio)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(128)
        yield f"http://127.0.0.1:{server.getsockname()[1]}"


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def test_a_zlib_bomb_is_refused_without_the_worker_inflating_it(
    own_redis: OwnRedis, workdir: Path
) -> None:
    """The review's repro: a 1 MB payload that inflates to 200 MB, written straight into a job
    hash and its id pushed on the queue. RQ inflated it whole when it fetched the job, before
    any check of ours ran (past a worker's 1 GiB with a larger one)."""
    workers = Workers(own_redis, workdir, closed_url())
    connection = workers.connection
    worker = workers.start()
    try:
        workers.wait_until_ready(worker)
        before = peak_rss_mib(worker.pid)
        bomb = zlib.compress(b"[" * BOMB_INFLATED, 1)
        stored = {"data": bomb, "status": "queued", "origin": QUEUE}
        connection.hset(Job.key_for("bomb"), mapping=stored)
        connection.rpush(Queue(QUEUE, connection=connection).key, "bomb")
        wait_for(lambda: "bomb" in workers.failed_ids(), 60, "the bomb to be refused",
                 explain=workers.log_text)  # fmt: skip
        grown = peak_rss_mib(worker.pid) - before
    finally:
        stop(worker)
    assert grown < MAX_GROWTH_MIB, f"the worker's peak memory grew {grown:.0f} MiB"
    assert "payload over" in workers.reasons()["bomb"]
    assert workers.rejected_jobs() == 1
    assert connection.hget(Job.key_for("bomb"), "data") == bomb  # kept as it came, for a look


def test_a_job_naming_callbacks_is_refused_and_nothing_it_names_is_imported(
    own_redis: OwnRedis, workdir: Path
) -> None:
    """RQ imports a job's callbacks by their dotted path from its hash and calls them after the
    job ran. A job of ours with no records ran to its end without Label Studio, and its success
    callback was imported (the probe left a file) and called."""
    (workdir / "lowtide_probe.py").write_text(PROBE)
    workers = Workers(own_redis, workdir, closed_url())
    queue = Queue(QUEUE, connection=workers.connection, serializer=JSONSerializer)
    hook = Callback("lowtide_probe.hook")
    job = queue.enqueue(JOB_FUNCTION, [], on_success=hook, on_failure=hook, on_stopped=hook)
    worker = workers.start()
    try:
        done = (JobStatus.FAILED, JobStatus.FINISHED)
        wait_for(lambda: job.get_status(refresh=True) in done, 60, "the job to end",
                 explain=workers.log_text)  # fmt: skip
    finally:
        stop(worker)
    assert not (workdir / "imported").exists() and not (workdir / "called").exists()
    assert job.get_status(refresh=True) == JobStatus.FAILED
    reason = workers.reasons()[job.id]
    assert "success_callback_name" in reason and "failure_callback_name" in reason, reason
    assert workers.rejected_jobs() == 1


def test_a_batch_whose_worker_dies_on_every_try_is_quarantined_after_its_requeues(
    own_redis: OwnRedis,
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each worker that takes the batch is SIGKILLed while it runs it (Label Studio never
    answers, so it is still running). The next worker put it back at the front of the queue
    every time, for ever; with `annotation.orphan_requeues: 1` the second death is its last."""
    queue = Queue(QUEUE, connection=redis.Redis.from_url(own_redis.url), serializer=JSONSerializer)
    enqueue_batch(queue, rollout_records(0, 5, run_id="run-bounds"))
    (job_id,) = queue.get_job_ids()
    with never_answering() as hung:
        flags = ("--annotation.orphan_requeues=1", "--annotation.request_timeout_s=2",
                 "--annotation.retry.max=100", "--annotation.retry.intervals_s=[1]")  # fmt: skip
        workers = Workers(own_redis, workdir, hung, flags)
        for kill in range(2):
            worker = workers.start()
            try:
                wait_for(lambda w=worker: workers.running(job_id, w), 60, f"try {kill + 1}",
                         explain=workers.log_text)  # fmt: skip
            finally:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        worker = workers.start()
        try:
            wait_for(lambda: job_id in workers.failed_ids(), 60, "the batch to be given up",
                     explain=workers.log_text)  # fmt: skip
        finally:
            stop(worker)
    assert queue.count == 0 and not workers.started_ids()
    reason = workers.reasons()[job_id]
    assert reason.startswith("its workers died 2 times running it"), reason
    assert workers.rejected_jobs() == 1

    # What an operator sees: the reason, and the count among the workers' counters.
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    code, shown, _ = invoke(capsys, "queue", "quarantined", f"--queue.name={QUEUE}")
    assert code == 0 and job_id in shown and "workers died 2 times" in " ".join(shown.split())
    code, shown, _ = invoke(capsys, "queue", "status", f"--queue.name={QUEUE}")
    rejected = next(line for line in shown.splitlines() if "workers: rejected jobs" in line)
    assert code == 0 and rejected.split()[-2] == "1"
