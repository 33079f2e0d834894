"""A local Label Studio: installed once per user in its own virtualenv, run on loopback.

Label Studio pins Django, redis, rq and numpy versions that clash with a trainer environment, so
it never shares our virtualenv. The virtualenv lives in the per-user cache, keyed by version, and
`.venv-labelstudio` in the project links to it: fresh checkouts reuse ~1 GB instead of reinstalling.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from lowtide.errors import UserError
from lowtide.services.credentials import Credentials
from lowtide.services.postgres import PostgresDatabase, ensure_database
from lowtide.services.process import await_start, is_running, port_is_free, spawn_detached, tail
from lowtide.services.state import ServiceRecord, ServiceRegistry, cache_dir

NAME = "label-studio"
VERSION = "1.23.2"
DEFAULT_PORT = 8080
START_TIMEOUT_S = 240  # cold start with migrations takes 20-50 s, more on a loaded machine
_INSTALLED_MARKER = ".lowtide-installed"
# Only these reach the server: Label Studio also reads bare names (PORT, HOST, USERNAME, DEBUG)
# as fallbacks, so a stray variable in the user's shell would change its behaviour.
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "SSL_CERT_FILE")


def venv_dir() -> Path:
    return cache_dir() / f"labelstudio-{VERSION}"


def executable() -> Path:
    return venv_dir() / "bin" / "label-studio"


def python() -> Path:
    """Label Studio's own interpreter: it has the PostgreSQL driver that ours lacks."""
    return venv_dir() / "bin" / "python"


def is_installed() -> bool:
    return (venv_dir() / _INSTALLED_MARKER).exists() and executable().exists()


def ensure_installed(project_dir: Path, on_line: Callable[[str], None] | None = None) -> Path:
    """Install label-studio into the cache venv (once; a lock guards concurrent runs)."""
    target = venv_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"labelstudio-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_installed():
            _install(target, on_line)
    _link_into_project(project_dir, target)
    return target


def _install(target: Path, on_line: Callable[[str], None] | None) -> None:
    if target.exists():
        shutil.rmtree(target)  # an interrupted install: start clean
    python = target / "bin" / "python"
    steps = [
        [sys.executable, "-m", "venv", str(target)],
        [str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
        [str(python), "-m", "pip", "install", "--quiet", f"label-studio=={VERSION}"],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True)
        if result.returncode != 0:
            errors = [
                line for line in result.stderr.splitlines() if "ignored: it is neither" not in line
            ]
            raise UserError(
                f"installing Label Studio failed ({' '.join(step[-2:])}):\n"
                + "\n".join(errors[-15:])
            )
        if on_line is not None:
            on_line(step[-1])
    (target / _INSTALLED_MARKER).write_text(VERSION)


def _link_into_project(project_dir: Path, target: Path) -> None:
    link = project_dir / ".venv-labelstudio"
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(target)


def health(url: str, timeout_s: float = 2.0) -> bool:
    # The review extra, imported here: `lowtide ingest` and `queue` run without it.
    from annotation.labelstudio import server_health

    return server_health(url, timeout_s)


def server_environment(
    credentials: Credentials, data_dir: Path, database: PostgresDatabase | None = None
) -> dict[str, str]:
    env = {name: os.environ[name] for name in _PASSED_THROUGH if name in os.environ}
    env.update(
        LABEL_STUDIO_BASE_DATA_DIR=str(data_dir),
        LABEL_STUDIO_USERNAME=credentials.username,
        LABEL_STUDIO_PASSWORD=credentials.password,
        LABEL_STUDIO_USER_TOKEN=credentials.api_key,
        # Applies when the organisation is first created: lets `Authorization: Token ...` work.
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK="true",
        # No error reports, analytics or version checks leave the machine.
        SENTRY_DSN="",
        FRONTEND_SENTRY_DSN="",
        LATEST_VERSION_CHECK="false",
        COLLECT_ANALYTICS="false",
    )
    if database is not None:
        env.update(database.label_studio_env())  # else SQLite, under data_dir
    return env


def _database_text(name: str | None) -> str:
    return f"PostgreSQL database {name}" if name else "SQLite"


def ensure_label_studio(
    registry: ServiceRegistry,
    credentials: Credentials,
    port: int,
    on_wait: Callable[[float], None] | None = None,
    database: PostgresDatabase | None = None,
) -> tuple[ServiceRecord, str]:
    """Label Studio as `up` wants it: the one already running, an external one at
    LABEL_STUDIO_URL, else a new one on `port`, on SQLite or on `database` (created if missing)."""
    url = f"http://127.0.0.1:{port}"
    wanted = database.name if database else None
    known = registry.get(NAME)
    if known and known.managed and is_running(known.pid, known.command) and health(known.url):
        if known.database != wanted:
            raise UserError(
                f"Label Studio already runs at {known.url} on {_database_text(known.database)}: "
                f"stop it with `lowtide down` to start it on {_database_text(wanted)}"
            )
        _check_token(known.url, credentials, registry.root, known.database)
        return known, f"Label Studio already running at {known.url} (pid {known.pid})"
    external = os.environ.get("LABEL_STUDIO_URL")
    if external and health(external):
        _check_token(external, credentials, registry.root)
        record = ServiceRecord(name=NAME, url=external.rstrip("/"), kind="external")
        registry.put(record)
        return record, f"Label Studio answers at {record.url}: using it"
    if not port_is_free(port):
        raise UserError(
            f"port {port} is in use, and Label Studio would silently move to another port: "
            f"free it or pass --label-studio-port"
        )
    if not is_installed():
        raise UserError(
            "Label Studio is not installed yet: run `lowtide up` (it installs it first)"
        )
    if database is not None:
        ensure_database(database, python())
    data_dir = registry.directory("label-studio")  # owner-only: its SQLite holds the token
    log = registry.directory("logs") / "label-studio.log"
    command = [
        str(executable()),
        "start",
        "--no-browser",
        "--internal-host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    environment = server_environment(credentials, data_dir, database)
    pid = spawn_detached(command, log, environment, cwd=registry.root)
    record = ServiceRecord(
        name=NAME, url=url, kind="label-studio", pid=pid, log=str(log), command=f"--port {port}",
        database=wanted,
    )  # fmt: skip
    registry.put(record)
    problem = await_start(pid, lambda: health(url), START_TIMEOUT_S, 0.5, on_wait)
    if problem is not None:
        registry.remove(NAME)
        raise UserError(f"Label Studio {problem}; the end of {log}:\n{tail(log)}")
    _check_token(url, credentials, registry.root, wanted)
    on = _database_text(wanted)
    return record, f"Started Label Studio at {url} on {on}, pid {pid}, log {log}"


def stop_label_studio(registry: ServiceRegistry) -> str:
    return registry.stop(NAME, "Label Studio")


def _check_token(
    url: str, credentials: Credentials, state: Path, database: str | None = None
) -> None:
    from annotation.labelstudio import token_problem

    problem = token_problem(url, credentials.api_key)
    if problem is not None:
        data = f"PostgreSQL database {database}" if database else state / "label-studio"
        where = "drop that database" if database else "delete that directory"
        raise UserError(
            f"Label Studio at {url} rejects the API token from LABEL_STUDIO_API_KEY "
            f"({credentials.env_file} or the environment): {problem}. If lowtide started it, its "
            f"data ({data}) was probably created with another token: restore that token, or run "
            f"`lowtide down` and {where} to start over."
        )
