"""A test's own queue and Label Studio project, and how to run workers and CLI commands on
them, with the checks every pipeline test makes (exact counts, no leaked key)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import redis
from rq import Queue
from rq.serializers import JSONSerializer

from annotation import ledger
from annotation.config import AnnotationConfig
from sampling.config import QueueConfig
from sampling.transport.producer import enqueue_batch
from tests.conftest import run_cli
from tests.helpers.labelstudio import REVIEW_XML_PATH, LabelStudioServer, sdk_client
from tests.helpers.records import rollout_record, rollout_records

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


class Setup:
    """One test's queue and project, and how to run workers and CLI commands on them."""

    def __init__(
        self,
        server: LabelStudioServer,
        workdir: Path,
        project: str | None = None,
        url: str | None = None,
        **annotation: str,
    ) -> None:
        self.server = server
        self.url = url or server.url  # where workers and commands reach it (a ToggleProxy's)
        self.workdir = workdir
        tag = uuid.uuid4().hex[:8]
        self.queue_name = f"test-annotate-{tag}"
        self.project = project or f"worker test {tag}"
        self.connection = redis.Redis.from_url(REDIS_URL)
        self.queue = Queue(self.queue_name, connection=self.connection, serializer=JSONSerializer)
        self.flags = [
            f"--queue.name={self.queue_name}",
            f"--annotation.project={self.project}",
            f"--annotation.labeling_config={REVIEW_XML_PATH}",
            *(f"--annotation.{key}={value}" for key, value in annotation.items()),
        ]
        self.logs: list[Path] = []
        self.run_id = f"run-{tag}"  # job ids derive from sample ids: no collisions across tests
        self._project_id: int | None = None  # once made, a project keeps its id

    def records(self, start: int, count: int, **kwargs: object) -> list[dict]:
        return rollout_records(start, count, run_id=self.run_id, **kwargs)

    def record(self, i: int, **kwargs: object) -> dict:
        return rollout_record(i, run_id=self.run_id, **kwargs)

    def queue_config(self) -> QueueConfig:
        return QueueConfig(redis_url=REDIS_URL, name=self.queue_name)

    def annotation_config(self, url: str | None = None) -> AnnotationConfig:
        """The `annotation` section of this test's project, reaching Label Studio at `url`
        (default: the server's own address)."""
        return AnnotationConfig(
            label_studio_url=url or self.server.url,
            api_key=self.server.api_key,
            project=self.project,
            labeling_config=str(REVIEW_XML_PATH),
        )

    def env(self) -> dict[str, str]:
        return {**self.server.env(), "LABEL_STUDIO_URL": self.url, "REDIS_URL": REDIS_URL}

    def enqueue(self, records: list[dict], batch: int = 64) -> None:
        for start in range(0, len(records), batch):
            enqueue_batch(self.queue, records[start : start + batch])

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        result = run_cli(*args, *self.flags, cwd=self.workdir, env=self.env(), timeout=timeout)
        self.logs.append(self.workdir / f"cli-{len(self.logs)}.log")
        self.logs[-1].write_text(result.stdout + result.stderr)
        return result

    def start_worker(self, *args: str) -> subprocess.Popen:
        """A worker in its own session (killpg takes its scheduler too), logging to a file."""
        log = self.workdir / f"worker-{len(self.logs)}.log"
        self.logs.append(log)
        return subprocess.Popen(
            [sys.executable, "-m", "lowtide", "worker", *args, *self.flags],
            cwd=self.workdir,
            env={**os.environ, **self.env()},
            stdin=subprocess.DEVNULL,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def project_id(self) -> int:
        project_id = self._find_project()
        assert project_id is not None
        return project_id

    def task_count(self) -> int:
        project_id = self._find_project()
        if project_id is None:
            return 0
        with self.server.client() as client:
            return client.count_tasks(project_id)

    def _find_project(self) -> int | None:
        """The project's id, looked up until it exists: the tests poll task counts, and each
        lookup by title is a listing Label Studio pays for."""
        if self._project_id is None:
            with self.server.client() as client:
                self._project_id = client.find_project(self.project)
        return self._project_id

    def tasks(self) -> list[dict]:
        sdk = sdk_client(self.server.url, self.server.api_key)
        pages = sdk.tasks.list(project=self.project_id(), fields="task_only", page_size=1000)
        return [{"id": task.id, **task.data} for task in pages]

    def sample_id_counts(self) -> Counter[str]:
        return Counter(task["sample_id"] for task in self.tasks())

    def wait_for_all(self, count: int) -> None:
        """Until the project holds `count` tasks and the queue is empty, and a second more."""
        done = lambda: self.queue.count == 0 and self.task_count() >= count  # noqa: E731
        wait_for(done, 120, "the rest", explain=self.queue_state)
        time.sleep(1)  # anything imported twice would show up by now

    def assert_each_once(self, records: list[dict]) -> None:
        counts = self.sample_id_counts()
        assert set(counts) == {r["sample_id"] for r in records}
        assert max(counts.values()) == 1, [sid for sid, n in counts.items() if n > 1][:5]

    def stats(self) -> dict[str, int]:
        return ledger.read_stats(self.connection, self.queue_name).counters

    def queue_state(self) -> str:
        """Where every job of this queue is, and the end of the newest worker log: what a
        timed-out wait prints, so a stall in CI can be read from its output."""
        queue = self.queue
        registries = {
            "started": queue.started_job_registry,
            "scheduled": queue.scheduled_job_registry,
            "deferred": queue.deferred_job_registry,
            "failed": queue.failed_job_registry,
        }
        lines = [
            f"tasks {self.task_count()}, queued {queue.count}, "
            f"intermediate {queue.intermediate_queue.get_job_ids()}",
            *(f"{name}: {registry.get_job_ids()}" for name, registry in registries.items()),
        ]
        for job_id in queue.failed_job_registry.get_job_ids()[:3]:
            job = queue.fetch_job(job_id)
            info = job.latest_result().exc_string if job and job.latest_result() else None
            lines.append(f"failed {job_id}: {(info or '')[-400:]}")
        lines.append(f"scheduler lock: {self.connection.get(f'rq:scheduler-lock:{queue.name}')}")
        workers = [log for log in self.logs if log.name.startswith("worker-") and log.exists()]
        if workers:
            tail = workers[-1].read_text(errors="replace").splitlines()[-30:]
            lines += [f"--- {workers[-1].name}", *tail]
        return "\n".join(lines)

    def assert_no_key_leaked(self) -> None:
        """Neither the API token nor a password in the Label Studio URL the commands were given
        is in a worker's log, a job's record in Redis (RQ keeps a failure's traceback there) or
        the quarantine."""
        secrets = [self.server.api_key]
        password = urlsplit(self.url).password
        if password:
            secrets.append(password)
        for log in self.logs:
            if log.exists():
                text = log.read_text(errors="replace")
                assert not [s for s in secrets if s in text], log
        for job_key in self.connection.scan_iter("rq:job:*"):
            for value in self.connection.hvals(job_key):
                for text in (value, _maybe_decompressed(value)):
                    assert not [s for s in secrets if s.encode() in text], job_key
        for entry in self.connection.lrange(ledger.quarantine_key(self.queue_name), 0, -1):
            assert not [s for s in secrets if s.encode() in entry]


def _maybe_decompressed(value: bytes) -> bytes:
    try:
        return zlib.decompress(value)
    except zlib.error:
        return value


def wait_for(
    condition: Callable[[], bool],
    timeout_s: float,
    what: str,
    explain: Callable[[], str] | None = None,
) -> None:
    """Poll until `condition`; on timeout fail with `explain()`'s account of the state."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            state = f"\n{explain()}" if explain is not None else ""
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}{state}")
        time.sleep(0.2)


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
