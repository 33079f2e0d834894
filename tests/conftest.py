"""Shared test helpers: an isolated working directory and a way to run the real CLI."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")  # shared 2-core machines: one torch thread
# Hypothesis keeps caches (its Unicode tables, examples) in ./.hypothesis unless told, and its
# pytest plugin writes them while collecting: set before any test module is imported.
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", str(Path(tempfile.gettempdir()) / "lowtide-hypothesis")
)

pytest_plugins = ["tests.helpers.tiers", "pytester"]  # tiers: see tests/helpers/tiers.py

REPO = Path(__file__).resolve().parent.parent
SECRET_VARS = (
    "LABEL_STUDIO_API_KEY",
    "LABEL_STUDIO_USERNAME",
    "LABEL_STUDIO_PASSWORD",
    "WANDB_API_KEY",
)


@pytest.fixture(autouse=True)
def routers_closed():
    """A test that makes a Router closes it: an open one leaves its reward-hacking watch's
    thread polling for the rest of the worker's run, and its analyses land in later tests."""
    from sampling.selection.hacking.watch import THREAD_NAME

    before = set(threading.enumerate())
    yield
    left = [t for t in set(threading.enumerate()) - before if t.name == THREAD_NAME]
    for thread in left:
        thread.join(2.0)  # a router closing on another thread of the test
    alive = [t for t in left if t.is_alive()]
    assert not alive, (
        f"{len(alive)} reward-hacking watch thread(s) left running: close the Router "
        "(router.close()) or the HackingWatch this test made"
    )


@pytest.fixture
def closing():
    """`closing(thing)` returns `thing` and closes it at the end of the test (a Router, a
    sampler hook: anything with close())."""
    opened = []

    def register(thing):
        opened.append(thing)
        return thing

    yield register
    for thing in reversed(opened):
        thing.close()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh project directory: own state dir and .env, no secrets inherited from the shell."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOWTIDE_STATE_DIR", str(tmp_path / ".lowtide"))
    monkeypatch.setenv("LOWTIDE_ENV_FILE", str(tmp_path / ".env"))
    for name in (*SECRET_VARS, "REDIS_URL", "LABEL_STUDIO_URL", "LABEL_STUDIO_PORT"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def invoke(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The CLI in this process (fast): (exit code, stdout, stderr)."""
    from lowtide.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return exit_info.value.code or 0, captured.out, captured.err


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    """The installed entry point, as a user runs it (a separate process, real exit code)."""
    full_env = {**os.environ, **(env or {}), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "lowtide", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,  # non-interactive, as in CI: nothing may wait for input
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's directory, shared by every worker process of a parallel run (`pytest -n`):
    what is built there once (under a lock) the other workers read."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's directory, above each worker's own
    return root


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory):
    """The tiny policy and reward model, built once per test run (~10 s) and shared by every
    worker process of a parallel run (`pytest -n`): the first builds, the others wait and read."""
    import torch

    from rl.models.tiny import TinyModelPaths, build_tiny_models

    torch.set_num_threads(1)
    root = run_shared_dir(tmp_path_factory)
    target, built = root / "tiny-models", root / "tiny-models.built"
    with open(root / "tiny-models.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            build_tiny_models(target, sft_steps=100, seed=0)
            built.touch()
    return TinyModelPaths.under(target)


@pytest.fixture
def own_redis(tmp_path: Path):
    """A redis-server on a free port with an fsynced append-only file (see OwnRedis)."""
    from tests.helpers.redis_server import OwnRedis

    server = OwnRedis(tmp_path)
    server.start()
    yield server
    if server.process and server.process.poll() is None:
        server.kill()


@pytest.fixture(scope="session")
def label_studio(tmp_path_factory: pytest.TempPathFactory):
    """A real Label Studio shared by the session (a cold start takes 20-80 s). Tests that stop
    it start it again before they end."""
    from tests.helpers.labelstudio import LabelStudioServer

    server = LabelStudioServer(tmp_path_factory.mktemp("label-studio"))
    server.start()
    yield server
    server.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The PostgreSQL tests first, together, then the longer kinds before the shorter ones:
    end-to-end, integration, unit (a module stays together: its fixtures are made once).
    `make test`'s work-stealing workers each take a contiguous share of the run and are stolen
    from at its tail, so one worker runs the PostgreSQL tests and only it starts a PostgreSQL
    Label Studio (every worker that ran one would start its own), and what is left to share
    out at the end is short: no worker runs a two-minute test alone while the others wait."""
    from tests.helpers.tiers import TIERS, tier_of

    longest_first = {tier: rank for rank, tier in enumerate(reversed(TIERS))}  # TIERS: unit..e2e

    def position(item: pytest.Item) -> tuple[bool, int]:
        # An untiered test stops the run in tests/helpers/tiers.py; until then it sorts as unit.
        return item.get_closest_marker("postgres") is None, longest_first[tier_of(item) or "unit"]

    items.sort(key=position)  # stable: file order within each kind


@pytest.fixture(scope="session")
def label_studio_postgres(tmp_path_factory: pytest.TempPathFactory):
    """A second real Label Studio, on a PostgreSQL database of its own (created on start, dropped
    at the end): what production runs. Skipped without PostgreSQL, failed under CI=true."""
    from tests.helpers import postgres
    from tests.helpers.labelstudio import LabelStudioServer

    postgres.require()
    with postgres.session_database() as database:
        server = LabelStudioServer(tmp_path_factory.mktemp("label-studio-pg"), database=database)
        server.start()
        yield server
        server.stop()


@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def any_label_studio(request: pytest.FixtureRequest):
    """Label Studio on each database in turn, for the promises that must hold at scale
    (exactly-once imports, export): test ids end in [sqlite] and [postgres] (`-m postgres`)."""
    name = "label_studio" if request.param == "sqlite" else "label_studio_postgres"
    return request.getfixturevalue(name)
