"""A migrated Label Studio that the tests' servers start from: a data directory for SQLite,
a template database for PostgreSQL.

Label Studio's first start migrates an empty database: 35 s on a quiet 2-core machine, 90-120 s
under the suite's load. A start on a migrated one takes about 4 s. So the first server the tests
need is started once on an empty database and stopped, and every later one starts on a copy:
of its SQLite data directory, kept per user beside Label Studio's virtualenv and named for its
release; or of a PostgreSQL database of that server's (`lowtide_ls_template_<release>`), copied
with `CREATE DATABASE ... TEMPLATE` and its tables handed to the session's role
(tests/helpers/postgres_template_admin.py). A copy keeps the template's account (user,
password, API token, kept beside it), so servers made from one template share those test
credentials. A lock makes concurrent workers build a template once; a template of another
release is never read (its name is another).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lowtide.services.credentials import Credentials
from lowtide.services.labelstudio import (
    VERSION,
    ensure_label_studio,
    python,
    stop_label_studio,
)
from lowtide.services.postgres import PostgresDatabase, drop_database
from lowtide.services.process import free_port
from lowtide.services.state import ServiceRegistry, cache_dir

DATA = "label-studio"  # the data directory's name under a server's state root
_ACCOUNT = "account.json"
_ADMIN = Path(__file__).with_name("postgres_template_admin.py")
TEMPLATE_DATABASE = f"lowtide_ls_template_{VERSION.replace('.', '_')}"


def template_dir() -> Path:
    return cache_dir() / f"labelstudio-{VERSION}-test-template"


def migrated_copy(root: Path, env_file: Path) -> Credentials:
    """Put a copy of the migrated data directory under `root` (the state root a server will use)
    and return the account it holds, its `.env` at `env_file`."""
    with _locked():
        template = template_dir()
        if not (template / _ACCOUNT).is_file():
            _build_sqlite(template)
    shutil.copytree(template / DATA, root / DATA)
    return _account(template / _ACCOUNT, env_file)


def migrated_database(database: PostgresDatabase, env_file: Path) -> Credentials | None:
    """Make `database` and its role as a copy of the migrated template database (built first if
    this PostgreSQL server has none) and return the account it holds. None, with a warning,
    where this server will not copy one (REASSIGN OWNED needs an admin role that is a member of
    both roles, as a superuser is): the caller then starts on an empty database, as before."""
    account = template_dir().with_name(
        f"{template_dir().name}-postgres-{database.host}-{database.port}.json"
    )
    try:
        with _locked():
            if not (account.is_file() and _admin("exists", TEMPLATE_DATABASE) == 0):
                _build_postgres(account)
        _admin(
            "copy", TEMPLATE_DATABASE, TEMPLATE_DATABASE, database.name, database.role,
            stdin=database.password,
        )  # fmt: skip
    except RuntimeError as problem:
        warnings.warn(f"{problem}: Label Studio migrates an empty database", stacklevel=2)
        drop_database(database, python())  # a half-made copy would stop its migrations
        return None
    return _account(account, env_file)


@contextmanager
def _locked() -> Iterator[None]:
    target = template_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(f"{target.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _new_account(env_file: Path) -> Credentials:
    return Credentials(
        "admin@lowtide.local", secrets.token_urlsafe(12), secrets.token_hex(20), env_file
    )


def _account(path: Path, env_file: Path) -> Credentials:
    account = json.loads(path.read_text())
    return Credentials(account["username"], account["password"], account["api_key"], env_file)


def _write_account(path: Path, account: Credentials) -> None:
    fields = {"username": account.username, "password": account.password}
    path.write_text(json.dumps({**fields, "api_key": account.api_key}))


def _migrate(root: Path, account: Credentials, database: PostgresDatabase | None = None) -> None:
    """Start Label Studio once on an empty database under `root` (it migrates it), then stop."""
    registry = ServiceRegistry(root)
    try:
        ensure_label_studio(registry, account, free_port(), database=database)
    finally:
        stop_label_studio(registry)


def _build_sqlite(target: Path) -> None:
    building = target.with_name(f"{target.name}.building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    account = _new_account(building / ".env")
    _migrate(building, account)
    for left in building.iterdir():  # the registry, its logs: only the data directory is kept
        if left.name != DATA:
            shutil.rmtree(left) if left.is_dir() else left.unlink()
    _write_account(building / _ACCOUNT, account)
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)  # one rename: a half-built template is never read


def _build_postgres(account_file: Path) -> None:
    template = PostgresDatabase.named(TEMPLATE_DATABASE)
    drop_database(template, python())  # a half-built one of an earlier try
    building = account_file.with_name(f"{account_file.name}.building")
    shutil.rmtree(building, ignore_errors=True)
    account = _new_account(building / ".env")
    try:
        _migrate(building, account, template)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    _admin("freeze", TEMPLATE_DATABASE)
    _write_account(account_file, account)


def _admin(*argv: str, stdin: str = "") -> int:
    """The admin script's exit code: 0, or 1 (`exists`: no such database); RuntimeError with its
    message otherwise."""
    # As lowtide.services.postgres runs its admin script: Label Studio's Python, libpq's PG*.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run(
        [str(python()), str(_ADMIN), *argv], input=stdin, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    if result.returncode not in (0, 1):
        raise RuntimeError(f"{_ADMIN.name} {argv[0]}: {result.stderr.strip()}")
    return result.returncode
