"""Label Studio on PostgreSQL: its database, where Label Studio reaches it, made and dropped.

Label Studio connects over TCP with a role of its own; lowtide creates that role and database
through libpq's usual admin connection (PGHOST, PGPORT, PGUSER, PGPASSWORD, else the local
socket as the current user), run by Label Studio's Python (`postgres_admin.py`). Stdlib only:
`make test` checks the server with this module before any virtualenv exists.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from lowtide.errors import UsageError, UserError

DEFAULT_DATABASE = "lowtide_label_studio"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 5432
_ADMIN_SCRIPT = Path(__file__).with_name("postgres_admin.py")
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")  # a PostgreSQL identifier that needs no quoting
_UNREACHABLE = 3  # postgres_admin.py's exit code when it cannot connect


def server_address() -> tuple[str, int]:
    """Where Label Studio connects: PGHOST and PGPORT when set, else 127.0.0.1:5432. A socket
    directory in PGHOST means this machine, which Label Studio reaches on 127.0.0.1."""
    host = os.environ.get("PGHOST") or DEFAULT_HOST
    if host.startswith("/"):
        host = DEFAULT_HOST
    port = os.environ.get("PGPORT") or str(DEFAULT_PORT)
    if not port.isdigit():
        raise UsageError(f"PGPORT={port!r} is not a port number")
    return host, int(port)


@dataclass(frozen=True)
class PostgresDatabase:
    """One Label Studio's database and the role it logs in as (the database's owner)."""

    name: str
    role: str
    host: str
    port: int
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18), repr=False)

    @classmethod
    def named(cls, name: str, role: str | None = None) -> PostgresDatabase:
        for value in (name, role or name):
            if not _NAME.fullmatch(value):
                raise UsageError(
                    f"PostgreSQL database name {value!r}: use 1-63 lower-case letters, digits "
                    "and underscores, starting with a letter or underscore"
                )
        host, port = server_address()
        return cls(name=name, role=role or name, host=host, port=port)

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    def label_studio_env(self) -> dict[str, str]:
        """The variables that put Label Studio on this database instead of SQLite."""
        return {
            "DJANGO_DB": "default",
            "POSTGRE_NAME": self.name,
            "POSTGRE_USER": self.role,
            "POSTGRE_PASSWORD": self.password,
            "POSTGRE_HOST": self.host,
            "POSTGRE_PORT": str(self.port),
        }


def unreachable(host: str, port: int, timeout_s: float = 3.0) -> str | None:
    """None when something accepts connections at host:port, else why not (one phrase)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def not_reachable_message(host: str, port: int, reason: str) -> str:
    return (
        f"PostgreSQL is not reachable at {host}:{port} ({reason}): start it (e.g. `sudo service "
        "postgresql start`), install it (`sudo apt-get install postgresql`), or point PGHOST "
        "and PGPORT at yours"
    )


def require_reachable(host: str, port: int) -> None:
    reason = unreachable(host, port)
    if reason is not None:
        raise UserError(not_reachable_message(host, port, reason))


def ensure_database(database: PostgresDatabase, python: Path) -> None:
    """Create the role and database if missing; the role gets `database.password` either way."""
    require_reachable(database.host, database.port)
    _admin(python, database, "ensure", stdin=database.password)


def drop_database(database: PostgresDatabase, python: Path) -> None:
    _admin(python, database, "drop")


def _admin(python: Path, database: PostgresDatabase, action: str, stdin: str = "") -> None:
    # libpq reads PG* itself; our own Python's paths must not leak into Label Studio's.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run(
        [str(python), str(_ADMIN_SCRIPT), action, database.name, database.role],
        input=stdin, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if result.returncode == 0:
        return
    reason = (result.stderr.strip().splitlines() or ["no output"])[-1]
    if result.returncode == _UNREACHABLE:
        raise UserError(
            f"PostgreSQL answers at {database.where} but lowtide cannot log in to manage "
            f"Label Studio's database ({reason}): set PGUSER and PGPASSWORD to a role that may "
            "create roles and databases, or make yours one (`sudo -u postgres createuser "
            "--createdb --createrole $USER`)"
        )
    verb = "create" if action == "ensure" else "drop"
    raise UserError(
        f"PostgreSQL at {database.where} refused to {verb} Label Studio's database "
        f"{database.name} ({reason}): connect as a role that may create roles and databases "
        "(PGUSER, PGPASSWORD; e.g. `sudo -u postgres createuser --createdb --createrole $USER`)"
    )
