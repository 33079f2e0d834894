"""The machine's PostgreSQL for the tests that run Label Studio on it: is it there, what to do
if not, and a database of a test session's own, dropped when the session ends.

`python -m tests.helpers.postgres` exits 0 when PostgreSQL accepts connections where Label
Studio would connect (PGHOST/PGPORT, else 127.0.0.1:5432), else prints what to do and exits 1
(`make postgres` uses it). Stdlib only: it runs before the virtualenv exists.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from lowtide.services.postgres import (
    PostgresDatabase,
    drop_database,
    server_address,
    unreachable,
)
from tests.helpers.browser import in_ci

INSTALL_HINT = (
    "the PostgreSQL tests need it: run `make postgres` as root (it starts PostgreSQL, or "
    "installs it with apt-get), or `sudo apt-get install postgresql`, or start your own and set "
    "PGHOST/PGPORT"
)


def problem() -> str | None:
    """None when PostgreSQL accepts connections, else what is wrong and what to do."""
    host, port = server_address()
    reason = unreachable(host, port)
    if reason is None:
        return None
    return f"PostgreSQL is not reachable at {host}:{port} ({reason}); {INSTALL_HINT}"


def require() -> None:
    """Skip the calling test when PostgreSQL is not there, saying what to do; in CI (CI=true)
    fail it instead, as a missing browser does (tests/helpers/browser.py)."""
    import pytest

    message = problem()
    if message is None:
        return
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def session_database() -> Iterator[PostgresDatabase]:
    """A database and role named for this session alone, dropped afterwards (Label Studio
    creates them on start: see lowtide.services.postgres.ensure_database)."""
    from lowtide.services.labelstudio import python

    database = PostgresDatabase.named(f"lowtide_test_{uuid.uuid4().hex[:12]}")
    try:
        yield database
    finally:
        if unreachable(database.host, database.port) is None:  # else it was never made
            drop_database(database, python())


def main() -> int:
    message = problem()
    if message is None:
        return 0
    print(message)
    return 1


if __name__ == "__main__":
    sys.exit(main())
