"""The suite's three tiers; each test is in exactly one.

- `unit`: in-process only (no subprocess, no network connection, no service): `make unit`.
- `integration`: a real Redis, subprocesses, the tiny model, a trainer run in-process.
- `e2e`: a real Label Studio, a headless browser, other trainers' virtualenvs, the CLI's
  whole commands end to end.

A module names its tier (`pytestmark = pytest.mark.unit`); a test in it may name another, and
the closest mark wins. `pytest --tier unit` runs one tier; `make test` runs all three. A unit
test that starts a process or opens a connection fails, saying so: its tier is wrong.
"""

from __future__ import annotations

import multiprocessing.process
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

TIERS = ("unit", "integration", "e2e")


def tier_of(item: pytest.Item) -> str | None:
    for mark in item.iter_markers():  # closest first: the test, its class, its module
        if mark.name in TIERS:
            return mark.name
    return None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier", choices=TIERS, action="append", help="run only these tiers")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    untiered = sorted({item.nodeid.split("::")[0] for item in items if tier_of(item) is None})
    if untiered:
        raise pytest.UsageError(
            f"{', '.join(untiered)}: name the tier (pytestmark = pytest.mark.unit, integration "
            "or e2e; see tests/helpers/tiers.py)"
        )
    wanted = config.getoption("--tier")
    if wanted:
        kept = [item for item in items if tier_of(item) in wanted]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def refuse_processes_and_connections(patch: pytest.MonkeyPatch, who: str) -> None:
    """From now on, starting a process or connecting to a network address fails, naming `who`."""

    def refuse(what: str) -> None:
        raise AssertionError(f"{who} {what}: not a unit test (mark it integration)")

    def starts_a_process(*args: object, **kwargs: object) -> None:
        refuse("starts a process")

    def local_only(original: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(self: socket.socket, address: object) -> Any:
            if self.family in (socket.AF_INET, socket.AF_INET6):
                refuse(f"connects to {address}")
            return original(self, address)

        return guarded

    patch.setattr(subprocess.Popen, "__init__", starts_a_process)
    patch.setattr(multiprocessing.process.BaseProcess, "start", starts_a_process)
    patch.setattr(socket.socket, "connect", local_only(socket.socket.connect))
    patch.setattr(socket.socket, "connect_ex", local_only(socket.socket.connect_ex))


def pytest_sessionstart(session: pytest.Session) -> None:
    # A unit-only run guards the whole session, so that a module- or session-scoped fixture
    # that starts a service fails too (the per-test guard below starts after such fixtures).
    config = session.config
    controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(
        config, "workerinput"
    )  # pytest-xdist's controller starts the workers; they guard themselves
    if config.getoption("--tier") == ["unit"] and not controller:
        patch = pytest.MonkeyPatch()
        refuse_processes_and_connections(patch, "the unit tier")
        session.config.add_cleanup(patch.undo)


@pytest.fixture(autouse=True)
def _unit_tests_stay_in_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if tier_of(request.node) == "unit":
        refuse_processes_and_connections(monkeypatch, request.node.nodeid)
    yield
