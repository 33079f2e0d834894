"""`lowtide queue ...` against a real Redis and a real RQ worker (JSON serializer)."""

from __future__ import annotations

import time
import tracemalloc
import zlib
from pathlib import Path

import pytest
from rq.job import Job
from rq.registry import FailedJobRegistry
from rq.serializers import JSONSerializer

from annotation.rq_internals import PromptSimpleWorker
from sampling.config import QueueConfig
from sampling.transport.producer import annotation_queue, enqueue_batch
from sampling.transport.spool import Spool, SpooledBatch
from tests.conftest import invoke
from tests.helpers.redis_server import OwnRedis
from tests.test_producer import records

pytestmark = pytest.mark.integration


@pytest.fixture
def redis_url(own_redis: OwnRedis, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test's own Redis, named by REDIS_URL as the commands read it."""
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    return own_redis.url


def test_status_failed_requeue_purge(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    config = QueueConfig(redis_url=redis_url, spool_dir=str(tmp_path / "spool"))
    queue = annotation_queue(config)
    enqueue_batch(queue, records(0, 3))
    enqueue_batch(queue, records(3, 2))
    monkeypatch.chdir(tmp_path)  # the default spool_dir is relative

    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    code, shown, _ = invoke(capsys, "queue", "status")
    waiting = next(line for line in shown.splitlines() if "waiting jobs" in line)
    assert code == 0 and waiting.split()[-2] == "2"
    assert "not read: LABEL_STUDIO_API_KEY is not set" in shown  # the queue's view stands

    # Label Studio down: one row says so, the queue's rows stand, the token is never shown.
    from lowtide.services.process import free_port

    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "ls-secret-token")
    down = f"http://127.0.0.1:{free_port()}"
    code, shown, said = invoke(capsys, "queue", "status", f"--annotation.label_studio_url={down}")
    assert code == 0 and "waiting jobs" in shown and "ls-secret-token" not in shown + said
    assert "not read: cannot reach Label Studio" in " ".join(shown.split())

    # A plain JSON worker (not `lowtide worker`): the job finds no worker context, so both fail.
    PromptSimpleWorker([queue], connection=queue.connection, serializer=JSONSerializer).work(
        burst=True
    )
    code, shown, _ = invoke(capsys, "queue", "failed")
    assert code == 0 and "2 failed job(s)" in shown and "import_batch" in shown

    code, _, said = invoke(capsys, "queue", "requeue", "--all")
    assert code == 0 and "requeued 2 job(s)" in said
    assert queue.count == 2

    assert invoke(capsys, "queue", "purge")[0] == 2  # needs --yes
    code, _, said = invoke(capsys, "queue", "purge", "--yes")
    assert code == 0 and "deleted 2 waiting" in said and queue.count == 0


def test_replay_enqueues_the_spool(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    spool = Spool(tmp_path / "logs" / "spool")  # the default queue.spool_dir
    spool.append(SpooledBatch("b-1", records(0, 4)))
    code, _, said = invoke(capsys, "queue", "replay")
    assert code == 0 and "replayed 4 record(s)" in said
    assert spool.pending_batches() == 0
    assert annotation_queue(QueueConfig(redis_url=redis_url)).count == 1


def test_an_unreachable_redis_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from lowtide.services.process import free_port

    monkeypatch.setenv("REDIS_URL", f"redis://:secret-pw@127.0.0.1:{free_port()}/0")
    code, _, said = invoke(capsys, "queue", "status")
    assert code == 1
    assert said.count("\n") == 1 and "is not reachable" in said and "secret-pw" not in said


def test_a_redis_that_refuses_the_password_says_so_not_that_it_is_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A shared Redis that answers but wants another password: starting one would not help."""
    server = OwnRedis(tmp_path, password="the-right-pw")
    server.start()
    try:
        port = server.port
        monkeypatch.setenv("REDIS_URL", f"redis://:wrong-pw-42@127.0.0.1:{port}/0")
        code, _, said = invoke(capsys, "queue", "status")
        assert code == 1 and said.count("\n") == 1 and "wrong-pw-42" not in said
        assert "refuses the password in REDIS_URL" in said and "not reachable" not in said
        monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
        code, _, said = invoke(capsys, "queue", "failed")
        assert code == 1 and said.count("\n") == 1
        assert "wants a password" in said and "`redis://:` and `@`" in said
    finally:
        server.kill()


def test_the_queue_commands_read_a_zlib_bomb_within_bounds(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A 1 MB job that inflates to 200 MB, waiting and in the failed registry: RQ's own reading
    inflated it whole in `status` (the oldest job's age), `failed`, `requeue` and `purge`."""
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    queue = annotation_queue(QueueConfig(redis_url=redis_url))
    connection = queue.connection
    bomb = zlib.compress(b"[" * 200_000_000, 1)
    for job_id in ("bomb-waiting", "bomb-failed"):
        stored = {"data": bomb, "status": "queued", "origin": queue.name}
        connection.hset(Job.key_for(job_id), mapping=stored)
    connection.rpush(queue.key, "bomb-waiting")
    connection.zadd(FailedJobRegistry(queue=queue).key, {"bomb-failed": time.time() + 3600})

    tracemalloc.start()
    try:
        status = invoke(capsys, "queue", "status")
        failed = invoke(capsys, "queue", "failed")
        requeued = invoke(capsys, "queue", "requeue", "--all")
        purged = invoke(capsys, "queue", "purge", "--yes")
        peak_mib = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert peak_mib < 100, peak_mib  # the payload bound (64 MiB) and room
    assert status[0] == 0 and "waiting jobs" in status[1]
    assert failed[0] == 0 and "payload over" in " ".join(failed[1].split())
    assert requeued[0] == 0 and "requeued 0 job(s)" in requeued[2]
    assert "left failed: bomb-failed: payload over" in " ".join(requeued[2].split())
    assert purged[0] == 0 and "deleted 1 waiting and 1 failed job(s)" in purged[2]
    assert not connection.exists(Job.key_for("bomb-waiting"), Job.key_for("bomb-failed"))
