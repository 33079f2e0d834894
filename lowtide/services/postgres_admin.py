"""Create or drop Label Studio's database and role: a script run by Label Studio's own Python.

Label Studio's virtualenv carries psycopg 3 (its PostgreSQL driver), ours does not, so lowtide
runs this file with that interpreter instead of adding a driver to every trainer environment.
It imports nothing of lowtide. The admin connection is libpq's own: PGHOST, PGPORT, PGUSER,
PGPASSWORD when set, else the local socket as the current user; PGDATABASE defaults to
`postgres`. Usage: `python postgres_admin.py ensure|drop DATABASE ROLE`, the role's password on
stdin for `ensure`. A failure prints one line on stderr and exits 3 (no server) or 4 (refused).
"""

from __future__ import annotations

import os
import sys

import psycopg
from psycopg import sql

UNREACHABLE, REFUSED = 3, 4


def connect() -> psycopg.Connection:
    return psycopg.connect(
        dbname=os.environ.get("PGDATABASE") or "postgres", autocommit=True, connect_timeout=10
    )


def ensure(connection: psycopg.Connection, database: str, role: str, password: str) -> None:
    """The role (a fresh password every time, so none is stored) and its database, once."""
    ensure_role(connection, role, password)
    found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
    if found.fetchone() is None:
        connection.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(role)
            )
        )


def ensure_role(connection: psycopg.Connection, role: str, password: str) -> None:
    exists = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
    verb = sql.SQL("ALTER" if exists else "CREATE")
    connection.execute(
        sql.SQL("{} ROLE {} WITH LOGIN PASSWORD {}").format(
            verb, sql.Identifier(role), sql.Literal(password)
        )
    )


def drop(connection: psycopg.Connection, database: str, role: str) -> None:
    # FORCE: a Label Studio that was killed may leave connections the server has not closed yet.
    connection.execute(
        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
    )
    connection.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def main(argv: list[str]) -> int:
    action, database, role = argv
    try:
        connection = connect()
    except psycopg.OperationalError as exc:
        print(first_line(exc), file=sys.stderr)
        return UNREACHABLE
    try:
        with connection:
            if action == "ensure":
                ensure(connection, database, role, sys.stdin.read().strip())
            else:
                drop(connection, database, role)
    except psycopg.Error as exc:
        print(first_line(exc), file=sys.stderr)
        return REFUSED
    return 0


def first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
