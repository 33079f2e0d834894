"""The wandb backend, read back from the offline run it writes (no server, no network).

History rows come from `wandb leet inspect --json <run dir>` (one JSON record per line); tables
from the run's `files/media/table/*.table.json`.
"""

from __future__ import annotations

import json
import logging
import math
import os
import pty
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from rl.config import LoggerConfig
from rl.tracking.backends.base import (
    ROLLOUT_COLUMNS,
    ROLLOUT_TABLE,
    RunInfo,
    Table,
    backend_factory,
)
from rl.tracking.backends.wandb_backend import WandbBackend, resolve_mode, wandb_run_id
from tests.conftest import REPO

pytestmark = pytest.mark.integration

COLUMNS = (*ROLLOUT_COLUMNS, "reward/format", "reward/length")
ROWS = (
    (2, "s-0", "What is 2+2?", "4", 1.0, '{"format": 1.0, "length": 0.5}', 1.0, 0.5),
    (2, "s-1", "Say | hi\nthere", "hi", 0.25, '{"format": 0.0}', 0.0, math.nan),
)


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No key, no mode, no data dir; a private home so stray files would show up there."""
    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_DATA_DIR", "WANDB_DIR"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    return home


def run_info(save_dir: Path, run_id: str = "20260101-000000", name: str = "run-a") -> RunInfo:
    return RunInfo(
        run_id=run_id,
        run_name=name,
        save_dir=save_dir,
        run_dir=save_dir / name,
        config={"trainer": {"learning_rate": 1e-5}, "logger": {"wandb_api_key": "***"}},
    )


def records(run_dir: Path) -> list[dict[str, Any]]:
    """Every record of the run's .wandb log, through wandb's own reader."""
    done = subprocess.run(
        [sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(run_dir)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def history(run_dir: Path) -> list[dict[str, Any]]:
    return [r["history"]["item"] for r in records(run_dir) if r["type"] == "history"]


def same_cells(got: list[list[Any]], want: tuple[tuple[Any, ...], ...]) -> bool:
    def norm(cell: Any) -> Any:
        return "nan" if isinstance(cell, float) and math.isnan(cell) else cell

    return [[norm(c) for c in row] for row in got] == [[norm(c) for c in row] for row in want]


def test_offline_without_key_reads_back(
    clean_env: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="rl.tracking")
    save_dir = tmp_path / "logs"
    backend = backend_factory("wandb")(run_info(save_dir), LoggerConfig())
    assert isinstance(backend, WandbBackend)
    for step in range(3):
        backend.log_scalars(step, {"reward/mean": 0.5 + step, "loss": 1.0 / (step + 1)})
    backend.log_histograms(
        2, {"reward/distribution": [0.0, 0.5, 1.0, math.nan, math.inf], "empty": [math.nan]}
    )
    backend.log_table(2, Table(ROLLOUT_TABLE, COLUMNS, ROWS))
    backend.close()
    backend.close()  # idempotent

    run_dir = backend.offline_dir
    assert run_dir is not None and run_dir.parent == (save_dir / "wandb").resolve()
    assert run_dir.name.endswith("-20260101-000000")

    said = [r.getMessage() for r in caplog.records if "wandb sync" in r.getMessage()]
    assert said == [
        f"wandb: no API key (WANDB_API_KEY), logging offline to {run_dir}; "
        f"upload later with: wandb sync {run_dir}"
    ]

    tables = list((run_dir / "files" / "media" / "table").glob("rollout_samples_*_*.table.json"))
    assert len(tables) == 1
    content = json.loads(tables[0].read_text())
    assert content["columns"] == list(COLUMNS)
    assert same_cells(content["data"], ROWS)

    rows = history(run_dir)
    scalars = [(r["trainer/step"], r["reward/mean"], r["loss"]) for r in rows if "loss" in r]
    assert scalars == [(0, 0.5, 1.0), (1, 1.5, 0.5), (2, 2.5, 1.0 / 3)]
    (hist,) = [r for r in rows if "reward/distribution._type" in r]
    assert hist["trainer/step"] == 2 and hist["reward/distribution._type"] == "histogram"
    assert sum(hist["reward/distribution.values"]) == 3  # the non-finite values were left out
    assert not any("empty._type" in r for r in rows)
    (table_row,) = [r for r in rows if "rollout_samples._type" in r]
    assert table_row["trainer/step"] == 2
    assert table_row["rollout_samples.path"] == str(tables[0].relative_to(run_dir / "files"))

    # staging copies live with the run, not in the user's data dir; nothing changed for good
    assert list((save_dir / "wandb" / "data" / "artifacts" / "staging").iterdir())
    assert not (clean_env / ".local" / "share" / "wandb").exists()
    assert "WANDB_DATA_DIR" not in os.environ


def test_disabled_writes_nothing(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_MODE", "disabled")
    save_dir = tmp_path / "logs"
    backend = WandbBackend(run_info(save_dir), LoggerConfig())
    backend.log_scalars(0, {"loss": 1.0})
    backend.log_histograms(0, {"reward/distribution": [1.0, 2.0]})
    backend.log_table(0, Table(ROLLOUT_TABLE, COLUMNS, ROWS))
    backend.close()
    backend.close()
    assert backend.offline_dir is None
    assert [path for path in save_dir.rglob("*") if not path.is_dir()] == []


def test_two_runs_in_one_process(clean_env: Path, tmp_path: Path) -> None:
    first = WandbBackend(run_info(tmp_path / "a", "run-1", "first"), LoggerConfig())
    second = WandbBackend(run_info(tmp_path / "b", "run-2", "second"), LoggerConfig())
    for step in range(2):
        first.log_scalars(step, {"loss": 10.0 + step})
        second.log_scalars(step, {"loss": 20.0 + step})
    first.log_table(1, Table(ROLLOUT_TABLE, COLUMNS, ROWS[:1]))
    second.log_table(1, Table(ROLLOUT_TABLE, COLUMNS, ROWS[1:]))
    first.close()
    second.log_scalars(2, {"loss": 22.0})  # still open after the other one finished
    second.close()

    assert first.offline_dir is not None and second.offline_dir is not None
    assert [r["loss"] for r in history(first.offline_dir) if "loss" in r] == [10.0, 11.0]
    assert [r["loss"] for r in history(second.offline_dir) if "loss" in r] == [20.0, 21.0, 22.0]
    for backend, root, rows in ((first, "a", ROWS[:1]), (second, "b", ROWS[1:])):
        assert backend.offline_dir is not None
        (table,) = (backend.offline_dir / "files" / "media" / "table").glob("*.table.json")
        assert same_cells(json.loads(table.read_text())["data"], rows)
        assert len(list((tmp_path / root / "wandb" / "data").rglob("tmp*"))) == 2


@pytest.mark.unit
def test_resolve_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    with_key = LoggerConfig(wandb_api_key="k" * 40)
    assert resolve_mode(LoggerConfig(), {}) == ("offline", None)
    assert resolve_mode(with_key, {}) == ("online", "k" * 40)
    assert resolve_mode(LoggerConfig(), {"WANDB_API_KEY": "e" * 40}) == ("online", "e" * 40)
    assert resolve_mode(with_key, {"WANDB_MODE": "offline"}) == ("offline", "k" * 40)
    assert resolve_mode(LoggerConfig(), {"WANDB_MODE": "Disabled"}) == ("disabled", None)
    assert resolve_mode(LoggerConfig(), {"WANDB_MODE": "dryrun"}) == ("offline", None)


@pytest.mark.unit
def test_run_ids_are_valid_and_distinct() -> None:
    assert wandb_run_id("20260101-120000") == "20260101-120000"
    odd = [wandb_run_id(i) for i in ("a/b:c", "a:b/c", "x" * 100, " ", "#?")]
    assert len(set(odd)) == len(odd)
    for run_id in odd:
        assert len(run_id) <= 64 and all(c.isalnum() or c in "._-" for c in run_id)


CHILD = textwrap.dedent(
    """
    import logging, sys
    from pathlib import Path
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    from rl.config import LoggerConfig
    from rl.tracking.backends.base import RunInfo
    from rl.tracking.backends.wandb_backend import WandbBackend
    save = Path(sys.argv[1])
    try:
        backend = WandbBackend(RunInfo("tty-run", "tty", save, save / "tty", {}), LoggerConfig())
    except RuntimeError as exc:
        print("REFUSED", exc)
    else:
        backend.log_scalars(0, {"loss": 1.0})
        backend.close()
        print("DONE", backend.offline_dir)
    """
)


@pytest.mark.parametrize("mode", [None, "online"])
def test_never_waits_for_a_login_prompt_on_a_terminal(tmp_path: Path, mode: str | None) -> None:
    """With a terminal on stdin and stderr wandb would ask for a key and wait: it must not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(HOME=str(tmp_path / "home"), NETRC=str(tmp_path / "no-netrc"), PYTHONPATH=str(REPO))
    if mode:
        env["WANDB_MODE"] = mode
    leader, follower = pty.openpty()
    terminal: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(leader, terminal), daemon=True)
    reader.start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(tmp_path / "logs")],
            stdin=follower,
            stderr=follower,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            timeout=60,
        )
    finally:
        os.close(follower)
        reader.join(timeout=5)
        os.close(leader)
    said = b"".join(terminal).decode(errors="replace")
    assert done.returncode == 0, said
    if mode == "online":
        assert "REFUSED WANDB_MODE=online but no wandb credentials" in done.stdout
    else:
        assert "DONE " in done.stdout and "wandb sync" in done.stdout
    assert "Enter your choice" not in said and "API key" not in said  # no prompt was shown


def _drain(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other side closed
            return
        if not chunk:
            return
        into.append(chunk)
