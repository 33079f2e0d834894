"""`lowtide worker` as a process, without Label Studio: it starts when Label Studio is down
(batches will retry), serves Prometheus metrics, supervises N processes and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
import redis

from annotation import ledger
from lowtide.services.process import free_port, is_running, stop_process_group
from tests.conftest import REPO, run_cli
from tests.helpers.pipeline import REDIS_URL, wait_for
from tests.helpers.redis_server import OwnRedis

pytestmark = pytest.mark.e2e


def _flags(queue: str) -> list[str]:
    return [
        f"--queue.name={queue}",
        f"--annotation.labeling_config={REPO / 'configs' / 'label_studio' / 'review.xml'}",
    ]


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": REDIS_URL,
        "LABEL_STUDIO_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens there
        "LABEL_STUDIO_API_KEY": "k" * 40,
    }


def _idle_workers(redis_url: str) -> int:
    """Workers registered in that Redis that wait on their queue (RQ sets "idle" there)."""
    import redis
    from rq import Worker

    connection = redis.Redis.from_url(redis_url)
    try:
        return sum(worker.get_state() == "idle" for worker in Worker.all(connection=connection))
    finally:
        connection.close()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.timeout(120)
def test_supervised_workers_serve_metrics_and_stop_on_sigterm(workdir: Path) -> None:
    import redis

    queue = f"test-cli-{uuid.uuid4().hex[:8]}"
    ledger.add_counts(redis.Redis.from_url(REDIS_URL), queue, {"imported": 7}, [0.2])
    port = free_port()
    log = workdir / "worker.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "worker", "--concurrency", "2",
         "--metrics-port", str(port), *_flags(queue)],
        env=_env(), cwd=workdir, stdout=log.open("w"), stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(lambda: len(_children(worker.pid)) == 2, 60, "two worker processes")
        wait_for(lambda: log.read_text().count("batches will retry") >= 3, 60, "the warnings")
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert f'lowtide_annotation_imported_total{{queue="{queue}"}} 7.0' in metrics
        assert f'lowtide_annotation_import_seconds_count{{queue="{queue}"}} 1.0' in metrics
        assert "lowtide_redis_up 1.0" in metrics
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
        assert health.status_code == 200 and health.text == "ok\n"
        assert httpx.get(f"http://127.0.0.1:{port}/nope", timeout=10).status_code == 404
        children = _children(worker.pid)

        started = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
        assert time.monotonic() - started < 30
        for child in children:
            assert (
                not Path(f"/proc/{child}").exists()
                or "Z" in Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
            )
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
    text = log.read_text()
    assert "k" * 40 not in text and "Traceback" not in text
    assert "cannot reach Label Studio" in text


def test_worker_without_a_token_or_redis_says_what_to_do(workdir: Path) -> None:
    env = {k: v for k, v in _env().items() if k != "LABEL_STUDIO_API_KEY"}
    result = run_cli("worker", "--burst", *_flags("q"), cwd=workdir, env=env, timeout=60)
    assert result.returncode == 1 and "LABEL_STUDIO_API_KEY is not set" in result.stderr

    env = {**_env(), "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    result = run_cli("worker", "--burst", *_flags("q"), cwd=workdir, env=env, timeout=60)
    assert result.returncode == 1 and "is not reachable" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_redis_that_answers_ping_but_refuses_the_workers_commands_is_one_line(
    workdir: Path, tmp_path: Path
) -> None:
    """A shared Redis whose account may only PING (an ACL), or that is full (maxmemory): the
    worker's first commands after its check fail; one line says what Redis answered."""
    server = OwnRedis(tmp_path, password="admin-pw-5521")
    server.start()
    try:
        redis.Redis.from_url(server.url).execute_command(
            "ACL", "SETUSER", "pinger", "on", ">pinger-pw-8832", "+ping", "+hello", "+auth"
        )
        env = {**_env(), "REDIS_URL": f"redis://pinger:pinger-pw-8832@127.0.0.1:{server.port}/0"}
        result = run_cli("worker", "--burst", *_flags("q"), cwd=workdir, env=env, timeout=60)
    finally:
        server.kill()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "answered with an error (NoPermissionError" in result.stderr
    assert "pinger-pw-8832" not in result.stderr + result.stdout


@pytest.mark.timeout(120)
def test_worker_processes_stop_when_their_supervisor_is_killed(workdir: Path) -> None:
    supervisor = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "worker", "--concurrency", "2",
         *_flags(f"test-cli-{uuid.uuid4().hex[:8]}")],
        env=_env(), cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    children: list[int] = []
    try:
        wait_for(lambda: len(_children(supervisor.pid)) == 2, 60, "two worker processes")
        children = _children(supervisor.pid)
        supervisor.kill()  # no chance to pass SIGTERM on
        supervisor.wait()
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in children), 60,
                 "the orphaned workers to stop")  # fmt: skip
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
        for pid in {*children, *_children(supervisor.pid)}:  # orphans have another parent now
            stop_process_group(pid, timeout_s=5)  # each worker leads its session: its scheduler too


# The supervisor's side of a spawn, cut so that it dies after the fork and before the child
# asks Linux to signal it: the child writes its pid, waits for its parent to be gone, then runs
# what `lowtide worker --concurrency N` runs before exec.
_SPAWN_AND_DIE_EARLY = """
import os, subprocess, sys, time
from pathlib import Path
from lowtide.cli.worker_cmd import follow_parent

marker, supervisor = Path(sys.argv[1]), os.getpid()
term_with_parent = follow_parent(supervisor)

def before_exec():
    marker.write_text(str(os.getpid()))
    while os.getppid() == supervisor:
        time.sleep(0.05)
    term_with_parent()

subprocess.Popen(["sleep", "60"], start_new_session=True, preexec_fn=before_exec)
"""


@pytest.mark.timeout(60)
def test_a_worker_whose_supervisor_died_before_its_death_signal_was_set_stops(
    workdir: Path,
) -> None:
    marker = workdir / "child.pid"
    supervisor = subprocess.Popen([sys.executable, "-c", _SPAWN_AND_DIE_EARLY, str(marker)],
                                  cwd=REPO, stdin=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(lambda: marker.exists() and marker.read_text() != "", 30, "the child's pid")
        child = int(marker.read_text())
        supervisor.kill()
        supervisor.wait()
        wait_for(lambda: not is_running(child), 10, "the child to stop instead of running on")
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
        if marker.exists() and marker.read_text():
            stop_process_group(int(marker.read_text()), timeout_s=5)  # it leads its session


@pytest.mark.timeout(240)
def test_a_worker_outlives_a_redis_outage_and_says_so_if_stopped_during_it(
    workdir: Path, own_redis
) -> None:
    log = workdir / "worker.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "worker", *_flags("outage")],
        env={**_env(), "REDIS_URL": own_redis.url}, cwd=workdir, stdout=log.open("w"),
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: "batches will retry" in log.read_text(), 60, "the worker to start")
        # Redis goes away once the worker waits for batches: an outage during its start-up
        # (registration, recovery, scheduler) ends it with the same error at once instead.
        wait_for(lambda: _idle_workers(own_redis.url) == 1, 60, "the worker to wait for batches")
        own_redis.kill()
        wait_for(lambda: "could not connect to Redis" in log.read_text(), 30, "the retry lines")
        assert worker.poll() is None  # it waits for Redis instead of dying
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=150) == 1  # RQ may be inside a reconnect back-off
    finally:
        if worker.poll() is None:
            worker.kill()
    assert "is not reachable (ConnectionError) while running the worker" in log.read_text()
