"""The PostgreSQL side of the tests' migrated Label Studio template, run by Label Studio's own
Python (its psycopg; lowtide's environment has no driver), connecting as
lowtide/services/postgres_admin.py does. Imports nothing of lowtide.

- `exists TEMPLATE`: exit 0 when the template database is there, 1 when not.
- `freeze TEMPLATE`: hand the template database itself to the admin (its tables stay its
  role's), so that a copy's REASSIGN moves only the copy's tables.
- `copy TEMPLATE TEMPLATE_ROLE DATABASE ROLE` (the role's password on stdin): the role, and the
  database as a copy of the template, its tables owned by the role.
A failure prints one line on stderr and exits 4.
"""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "lowtide" / "services"))
from postgres_admin import connect, ensure_role, first_line

REFUSED = 4


def _copy(template: str, template_role: str, database: str, role: str, password: str) -> None:
    with connect() as admin:
        ensure_role(admin, role, password)
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(template), sql.Identifier(role)
            )
        )
    with psycopg.connect(dbname=database, autocommit=True, connect_timeout=10) as inside:
        inside.execute(
            sql.SQL("REASSIGN OWNED BY {} TO {}").format(
                sql.Identifier(template_role), sql.Identifier(role)
            )
        )


def main(argv: list[str]) -> int:
    action, template, *rest = argv
    try:
        if action == "exists":
            with connect() as admin:
                found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,))
                return 0 if found.fetchone() else 1
        if action == "freeze":
            with connect() as admin:
                admin.execute(
                    sql.SQL("ALTER DATABASE {} OWNER TO CURRENT_USER").format(
                        sql.Identifier(template)
                    )
                )
            return 0
        _copy(template, *rest, sys.stdin.read().strip())
    except psycopg.Error as exc:
        print(first_line(exc), file=sys.stderr)
        return REFUSED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
