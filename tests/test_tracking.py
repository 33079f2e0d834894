"""The tracking router: what goes out when, off the trainer thread, and read back exactly."""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import ClassVar

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rl.config import LoggerConfig
from rl.samples import Sample
from rl.tracking import RunInfo, Table, Tracker
from rl.tracking.backends.console import format_line
from rl.tracking.backends.local_files import LocalFilesBackend
from rl.tracking.reader import TOKEN_ARRAYS, read_run
from rl.tracking.text import safe_text
from tests.conftest import REPO, invoke

pytestmark = pytest.mark.unit


class Recorder:
    def __init__(self, name: str = "recorder", delay_s: float = 0.0, fail: bool = False) -> None:
        self.name = name
        self.delay_s = delay_s
        self.fail = fail
        self.calls: list[tuple[str, int, object]] = []
        self.closed = False
        self.release = threading.Event()

    def _record(self, kind: str, step: int, payload: object) -> None:
        if self.fail:
            raise OSError("disk full")
        if self.delay_s:
            self.release.wait(self.delay_s)
        self.calls.append((kind, step, payload))

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        self._record("scalars", step, dict(values))

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        self._record("histograms", step, dict(values))

    def log_table(self, step: int, table: Table) -> None:
        self._record("table", step, table)

    def close(self) -> None:
        self.closed = True


def info(tmp_path: Path) -> RunInfo:
    return RunInfo("run-1", "run-1", tmp_path, tmp_path / "run-1", {"trainer": {}})


def samples(n: int = 4) -> tuple[Sample, ...]:
    return tuple(
        Sample(
            index=i, group_id=i // 2, prompt=f"prompt {i}", response=f"response {i}",
            prompt_ids=(1, 2), response_ids=(3, 4, 5), truncated=False, reward=0.1 * i,
            reward_details=MappingProxyType({"keyword": float(i % 2), "format": 1.0}),
            advantage=0.0,
        )
        for i in range(n)
    )  # fmt: skip


STAGE_METRICS = {
    "rollout": {"response_length/mean": 5.0, "timing_s/rollout": 0.1},
    "reward": {"response_length/mean": 5.0, "timing_s/rollout": 0.1, "reward/mean": 0.3},
    "update": {"reward/mean": 0.3, "actor_loss": 0.4, "critic_loss": 0.2, "grad_norm": 1.0},
}
STAGE_METRICS["step_end"] = {
    **STAGE_METRICS["reward"], **STAGE_METRICS["update"], "kl_divergence": 0.08, "entropy": 1.5,
}  # fmt: skip


def run_steps(tracker: Tracker, steps: int) -> None:
    for step in range(1, steps + 1):
        for stage, metrics in STAGE_METRICS.items():
            tracker.on_stage(stage, step, metrics, samples())
    tracker.close()


def test_each_kind_has_its_own_interval(tmp_path: Path) -> None:
    config = LoggerConfig(log_interval={"scalars": 2, "histograms": 3, "tables": 5})
    recorder = Recorder()
    run_steps(Tracker(config, info(tmp_path), [recorder]), 10)
    steps = {
        kind: [s for k, s, _ in recorder.calls if k == kind]
        for kind in ("scalars", "histograms", "table")
    }
    assert steps["scalars"] == [2, 4, 6, 8, 10]
    assert steps["histograms"] == [3, 6, 9]
    assert steps["table"] == [5, 10]
    histogram = next(p for k, _, p in recorder.calls if k == "histograms")
    assert histogram == {"reward/distribution": [0.0, 0.1, 0.2, pytest.approx(0.3)]}
    assert recorder.closed


@pytest.mark.parametrize(
    "settings, table_steps",
    [
        ({"rollout_log_interval": 4}, [4, 8]),  # the seed's name, alone, still sets it
        ({"log_interval": 3, "rollout_log_interval": 5}, [5, 10]),  # it names tables; 3 does not
        ({"log_interval": {"tables": 5}, "rollout_log_interval": 5}, [5, 10]),  # agreeing
        ({"log_interval": 2}, [2, 4, 6, 8, 10]),  # one number for every kind
        ({}, []),  # default: every 100 steps
    ],
)
def test_the_table_interval_and_its_old_name(
    tmp_path: Path, settings: dict, table_steps: list[int]
) -> None:
    recorder = Recorder()
    run_steps(Tracker(LoggerConfig(**settings), info(tmp_path), [recorder]), 10)
    assert [step for kind, step, _ in recorder.calls if kind == "table"] == table_steps


def test_two_table_intervals_that_disagree_are_a_config_error() -> None:
    with pytest.raises(ValueError) as raised:
        LoggerConfig(log_interval={"tables": 10}, rollout_log_interval=100)
    message = str(raised.value)
    assert "log_interval.tables (10)" in message and "rollout_log_interval (100)" in message


@pytest.mark.integration
def test_read_run_is_exported_and_tracking_stays_light() -> None:
    probe = (
        "import sys, rl.tracking; print('pandas' in sys.modules)\n"
        "from rl.tracking import RunLogs, read_run; import rl.tracking.reader as reader\n"
        "print(read_run is reader.read_run and RunLogs is reader.RunLogs)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]  # pandas loads on first use only


def test_whitelist_and_conditional_logging_per_stage(tmp_path: Path) -> None:
    config = LoggerConfig(
        metrics={
            "scalars": ["reward/mean", "kl_divergence"],
            "histograms": ["reward/keyword/distribution", "advantage/distribution"],
        },
        conditional_logging=[
            {"stage": "rollout", "metrics": ["response_length"]},
            {"stage": "update", "metrics": ["actor_loss", "critic_loss", "grad_norm"]},
        ],
    )  # fmt: skip
    recorder = Recorder()
    tracker = Tracker(config, info(tmp_path), [recorder])
    for stage, metrics in STAGE_METRICS.items():
        tracker.on_stage(stage, 1, metrics, samples())
    tracker.close()
    scalars = [payload for kind, _, payload in recorder.calls if kind == "scalars"]
    assert scalars == [
        {"response_length/mean": 5.0},  # rollout: conditional
        {"actor_loss": 0.4, "critic_loss": 0.2, "grad_norm": 1.0},  # update: conditional
        {"kl_divergence": 0.08, "reward/mean": 0.3},  # step_end: the whitelist
    ]
    histograms = next(p for k, _, p in recorder.calls if k == "histograms")
    assert histograms == {
        "reward/keyword/distribution": [0.0, 1.0, 0.0, 1.0],
        "advantage/distribution": [0.0] * 4,
    }


def test_rollout_table_columns_and_cells(tmp_path: Path) -> None:
    recorder = Recorder()
    tracker = Tracker(LoggerConfig(rollout_log_interval=1), info(tmp_path), [recorder])
    tracker.on_stage("step_end", 1, {}, samples(2))
    tracker.close()
    table = next(p for k, _, p in recorder.calls if k == "table")
    assert table.name == "rollout_samples"
    assert table.columns[:6] == (
        "step",
        "sample_id",
        "prompt",
        "response",
        "reward",
        "reward_details",
    )
    assert {"reward/keyword", "reward/format"} <= set(table.columns)
    for column in range(len(table.columns)):  # single-typed cells
        assert len({type(row[column]) for row in table.rows}) == 1
    assert table.rows[0][2:4] == ("prompt 0", "response 0")
    assert table.rows[0][1] != table.rows[1][1] and table.rows[0][1].startswith("s-")


def test_a_stalled_backend_never_blocks_the_trainer(tmp_path: Path) -> None:
    stalled = Recorder("stalled", delay_s=30)
    tracker = Tracker(LoggerConfig(), info(tmp_path), [stalled], queue_size=4)
    timings = []
    for step in range(1, 51):
        started = time.perf_counter()
        tracker.on_stage("step_end", step, STAGE_METRICS["step_end"], samples())
        timings.append(time.perf_counter() - started)
    # Blocking would cost the backend's 30 s stall; a busy 2-core machine can add tens of ms.
    assert max(timings) < 0.5
    assert tracker.dropped > 0
    stalled.release.set()
    tracker.close(deadline_s=10)
    reported = [p for k, _, p in stalled.calls if k == "scalars" and "logging/dropped" in p]
    assert reported  # the loss is visible as a metric, not silent


def test_a_failing_backend_is_reported_once_and_the_others_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken, healthy = Recorder("broken", fail=True), Recorder("healthy")
    with caplog.at_level(logging.ERROR, logger="rl.tracking"):
        run_steps(Tracker(LoggerConfig(), info(tmp_path), [broken, healthy]), 3)
    assert len([r for r in caplog.records if "broken" in r.getMessage()]) == 1
    assert len([c for c in healthy.calls if c[0] == "scalars"]) == 3


def test_close_keeps_its_deadline(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stuck = Recorder("stuck", delay_s=60)
    tracker = Tracker(LoggerConfig(), info(tmp_path), [stuck])
    tracker.on_stage("step_end", 1, {"reward/mean": 1.0}, ())
    started = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="rl.tracking"):
        tracker.close(deadline_s=0.5)
    assert time.perf_counter() - started < 2
    assert "did not finish" in caplog.text
    stuck.release.set()


def test_local_files_read_back_exactly(tmp_path: Path) -> None:
    values = [
        {"reward/mean": 0.1 + 0.2, "kl_divergence": 1e-12, "reward/nonfinite_count": 0.0},
        {"reward/mean": math.nan, "kl_divergence": 2 / 3, "reward/nonfinite_count": 3.0},
    ]
    backend = LocalFilesBackend(tmp_path / "run")
    for step, row in enumerate(values, 1):
        backend.log_scalars(step, row)
    tracker = Tracker(LoggerConfig(rollout_log_interval=1), info(tmp_path), [backend])
    tracker.on_stage("step_end", 3, {}, samples(3))
    tracker.close()
    logs = read_run(tmp_path / "run")
    assert logs.metrics["step"].tolist() == [1, 2]
    assert logs.metrics["reward/mean"].iloc[0] == 0.1 + 0.2
    assert math.isnan(logs.metrics["reward/mean"].iloc[1])
    assert logs.metrics["kl_divergence"].tolist() == [1e-12, 2 / 3]
    assert logs.rollouts["response"].tolist() == ["response 0", "response 1", "response 2"]
    assert logs.rollouts["reward"].tolist() == [0.0, 0.1, 0.2]


def test_console_line_format() -> None:
    line = format_line(
        10,
        {"reward/mean": 1.2401, "reward/std": 0.31, "kl_divergence": 0.08, "actor_loss": 0.42,
         "response_length/mean": 42.1, "grad_norm": 3.0},
    )  # fmt: skip
    assert line == (
        "[Step 10] reward/mean=1.24 ±0.31 | kl_divergence=0.08 | actor_loss=0.42 "
        "| response_len=42.1"
    )


@pytest.mark.parametrize(
    "raw, expected, cut, escaped",
    [
        ("plain text\nline two", "plain text\nline two", False, False),
        ("bell\x07 and esc\x1b[31m", "bell\\x07 and esc\\x1b[31m", False, True),
        (b"bad \xff bytes", "bad \ufffd bytes", False, True),
        ("lone \ud800 surrogate", "lone ? surrogate", False, True),
        ("x" * 50, "x" * 20 + " …[cut 30 chars]", True, False),
    ],
)
def test_text_is_made_safe(raw, expected: str, cut: bool, escaped: bool) -> None:
    safe = safe_text(raw, 20 if cut else 1000)
    assert (safe.text, safe.cut, safe.escaped) == (expected, cut, escaped)
    safe.text.encode("utf-8")  # always writable


def test_encode_response_stores_base64() -> None:
    import base64

    safe = safe_text("héllo", 100, encode=True)
    assert base64.b64decode(safe.text).decode("utf-8") == "héllo"


def test_a_backend_that_cannot_start_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rl.tracking.router import TrackingError

    monkeypatch.setenv("WANDB_MODE", "online")  # online, with no key: wandb refuses to start
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    monkeypatch.setenv("HOME", str(tmp_path))  # no stored login either
    config = LoggerConfig(name=["wandb"], save_dir=str(tmp_path))
    with pytest.raises(TrackingError, match="the wandb backend could not start"):
        Tracker.from_config(config, info(tmp_path))


def test_a_hooks_table_goes_out_at_the_table_interval_and_never_among_rollouts(
    tmp_path: Path,
) -> None:
    recorder = Recorder()
    backend = LocalFilesBackend(tmp_path)
    config = LoggerConfig(log_interval={"tables": 2})
    tracker = Tracker(config, info(tmp_path), [recorder, backend])
    table = (("rank", "feature"), ((1, '"i agree"'),))
    for step in (1, 2, 3, 4):
        tracker.on_tables(step, {"hacking/suspects": table})
    tracker.close()
    sent = [(step, payload.name) for kind, step, payload in recorder.calls if kind == "table"]
    assert sent == [(2, "hacking/suspects"), (4, "hacking/suspects")]
    written = sorted(path.name for path in (tmp_path / "tables").iterdir())
    assert written == ["hacking_suspects-step-0000002.jsonl", "hacking_suspects-step-0000004.jsonl"]
    assert (
        tmp_path / "tables" / written[0]
    ).read_text() == '{"rank": 1, "feature": "\\"i agree\\""}\n'
    assert read_run(tmp_path).rollouts.empty  # a hook's table is not a rollout


def test_a_hooks_table_is_redacted_for_the_backends_that_get_redacted_tables(
    tmp_path: Path,
) -> None:
    remote, local = Recorder("remote"), Recorder("local")
    local.remote = False  # a Recorder counts as remote: it says nothing of where text goes
    config = LoggerConfig(log_interval={"tables": 1})

    def redact(texts: Sequence[str]) -> list[str]:
        return [text.replace("ada@example.com", "<EMAIL_1>") for text in texts]

    tracker = Tracker(config, info(tmp_path), [remote, local], redact=redact)
    tracker.on_tables(1, {"hacking/suspects": (("example", "n"), (("mail ada@example.com", 3),))})
    tracker.close()
    rows = {r.name: [p.rows for k, _, p in r.calls if k == "table"] for r in (remote, local)}
    assert rows == {"remote": [(("mail <EMAIL_1>", 3),)], "local": [(("mail ada@example.com", 3),)]}


class Remembering:
    """A backend of a user's own: keeps what it is given."""

    name = "remembering"
    remote = False
    seen: ClassVar[list[tuple[int, dict[str, float]]]] = []

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        Remembering.seen.append((step, dict(values)))

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        pass

    def log_table(self, step: int, table: Table) -> None:
        pass

    def close(self) -> None:
        pass


def make_remembering(info: RunInfo, config: LoggerConfig) -> Remembering:
    return Remembering()


def test_a_backend_of_ones_own_is_named_in_the_config_by_registry_or_by_path(
    tmp_path: Path,
) -> None:
    """register_backend is the documented extension point: a config names what it registered,
    or the factory's dotted path; a misspelled name still fails with the nearest one."""
    from pydantic import ValidationError

    from rl.tracking import register_backend

    register_backend("remembering")(make_remembering)
    for name in ("remembering", "tests.test_tracking:make_remembering"):
        Remembering.seen.clear()
        config = LoggerConfig(name=[name])
        info = RunInfo("r", "r", tmp_path, tmp_path / name.replace(":", "-"), {})
        tracker = Tracker.from_config(config, info)
        tracker.on_stage("step_end", 0, {"reward/mean": 0.5}, [])
        tracker.close()
        assert Remembering.seen and Remembering.seen[0][1]["reward/mean"] == 0.5, name
    with pytest.raises(ValidationError, match="did you mean console"):
        LoggerConfig(name=["consol"])
    with pytest.raises(ValueError, match="'console' is already registered"):
        register_backend("console")(make_remembering)


OUTSIDE_BACKEND = """
from rl.tracking import register_backend

SEEN = []


class Recorder:
    name = "recorder"
    remote = False

    def log_scalars(self, step, values):
        SEEN.append((step, dict(values)))

    def log_histograms(self, step, values):
        pass

    def log_table(self, step, table):
        pass

    def close(self):
        pass


@register_backend("outside_recorder")
def make_recorder(info, config):
    return Recorder()
"""


def test_a_backend_from_a_module_outside_the_tree_is_named_in_a_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The logger-backend recipe: a module of one's own (here in a temporary directory) named
    in the config by the dotted path of its factory; once imported, by its registered name."""
    (tmp_path / "outside_backends.py").write_text(OUTSIDE_BACKEND, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("outside_backends:make_recorder", "outside_recorder"):
        info = RunInfo("r", "r", tmp_path, tmp_path / name.replace(":", "-"), {})
        tracker = Tracker.from_config(LoggerConfig(name=[name]), info)
        tracker.on_stage("step_end", 3, {"reward/mean": 0.25}, [])
        tracker.close()
        seen = sys.modules["outside_backends"].SEEN
        assert seen[-1][0] == 3 and seen[-1][1]["reward/mean"] == 0.25, name


# ---- a run directory someone else wrote ---------------------------------------------------------

ROLLOUT_FILE = "rollouts/rollout_samples-step-0000001.jsonl"
TOKENS_FILE = "rollouts/tokens/rollout_samples-step-0000001.jsonl"
TOKEN_ROW = {"step": 1, "sample_id": "s-1", "token_ids": [7, 8], "tokens": ["a", "b"],
             "logprobs": [-1.0, -2.0], "kl": None, "token_rewards": [0.0, 0.5],
             "advantages": [1.0, 1.0]}  # fmt: skip


def write_run(run_dir: Path, *, metrics: list[bytes] = (), rollouts: list[bytes] = (),
              tokens: list[bytes] = ()) -> Path:  # fmt: skip
    """A run with one good line in each file, then the lines given."""
    (run_dir / "rollouts" / "tokens").mkdir(parents=True)
    good_rollout = {"step": 1, "sample_id": "s-1", "prompt": "p", "response": "r", "reward": 0.5}
    for name, good, more in (("metrics.jsonl", {"step": 1, "reward/mean": 0.5}, metrics),
                             (ROLLOUT_FILE, good_rollout, rollouts),
                             (TOKENS_FILE, TOKEN_ROW, tokens)):  # fmt: skip
        (run_dir / name).write_bytes(b"\n".join([json.dumps(good).encode(), *more]) + b"\n")
    return run_dir


def test_a_token_row_that_lacks_an_array_is_shown_blank_and_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_ids = {key: value for key, value in TOKEN_ROW.items() if key != "token_ids"}
    run_dir = write_run(tmp_path / "run", tokens=[json.dumps({**no_ids, "step": 2}).encode()])
    logs = read_run(run_dir)
    assert logs.tokens["step"].tolist() == [1, 1, 2, 2]
    assert logs.tokens["token"].tolist() == ["a", "b", "a", "b"]
    assert logs.tokens["token_id"].iloc[:2].tolist() == [7, 8]
    assert logs.tokens["token_id"].iloc[2:].isna().all()
    assert logs.problems == (f"{run_dir / TOKENS_FILE}:2: no token_ids; shown blank",)
    code, out, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", "s-1", "--tokens")
    assert code == 0, err
    assert f"warning: {run_dir / TOKENS_FILE}:2: no token_ids; shown blank" in err
    assert '"b"' in out and "-2" in out


@pytest.mark.parametrize(
    ("where", "line", "problem"),
    [
        ("metrics", b'{"step": 3, "step": "x", "reward/mean": 1}', "'step' must be a whole"),
        ("metrics", b'{"step": [3], "reward/mean": 1}', "'step' must be a whole number"),
        ("metrics", b'{"step": 3, "reward/mean": "high"}', "'reward/mean' is a text, not a"),
        ("rollouts", b'{"step": "3", "sample_id": "s-2", "reward": 1}', "'step' must be"),
        ("rollouts", b'{"sample_id": "s-2", "reward": 1}', "'step' must be a whole number"),
        ("rollouts", b'{"step": 2, "sample_id": "s-2", "prompt": "\\udc80"', "not valid JSON"),
        ("tokens", b'{"step": 2, "sample_id": "s-2", "token_ids": 5}', "must be a list"),
        ("tokens", b'{"step": 2, "sample_id": "s-2", "token_ids": [1, 2], "tokens": ["a"]}',
         "per-token arrays of different lengths (token_ids 2, tokens 1)"),
        ("tokens", b'{"step": 2, "token_ids": [1]}', "'sample_id' must be a text, got nothing"),
        ("tokens", b'{"step": 2, "sample_id": "s-2"}', "no per-token arrays; skipped"),
    ],
)  # fmt: skip
def test_a_row_the_reader_cannot_use_is_one_problem_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, line: bytes, problem: str
) -> None:
    run_dir = write_run(tmp_path / "run", **{where: [line]})
    file = {"metrics": "metrics.jsonl", "rollouts": ROLLOUT_FILE, "tokens": TOKENS_FILE}[where]
    logs = read_run(run_dir)
    assert len(logs.problems) == 1 and logs.problems[0].startswith(f"{run_dir / file}:2: ")
    assert problem in logs.problems[0]
    for argv in ([], ["--sample", "s-1", "--tokens"]):
        code, _, err = invoke(capsys, "logs", "show", str(run_dir), *argv)
        assert code == 0 and f"warning: {run_dir / file}:2: " in err, err
    code, _, err = invoke(capsys, "logs", "export", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == 0, err


def test_texts_rewards_and_steps_of_any_kind_are_shown_and_exported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lone surrogate (pandas stores texts as UTF-8), rewards that are texts (a markup tag
    too), lists, NaN or too large for a float, a step too large for 64 bits: shown, and in the
    Parquet files."""
    rows = [
        b'{"step": 2, "sample_id": "s-\\udc80", "prompt": "\\ud800", "response": "r", "reward": 1}',
        b'{"step": 3, "sample_id": "s-3", "prompt": "p", "response": "r", "reward": "[/high]"}',
        b'{"step": 4, "sample_id": "s-4", "prompt": "p", "response": "r", "reward": [1]}',
        b'{"step": 5, "sample_id": "s-5", "prompt": "p", "response": "r", "reward": NaN}',
        b'{"step": 6, "sample_id": "s-6", "response": "r", "reward": 1' + b"0" * 400 + b"}",
        b'{"step": 1' + b"0" * 30 + b', "sample_id": "s-7", "reward": -Infinity}',
    ]
    run_dir = write_run(tmp_path / "run", rollouts=rows)
    code, out, err = invoke(capsys, "logs", "show", str(run_dir))
    assert code == 0, err
    assert all(shown in out for shown in ("[/high]", "[1]", "nan", "-inf", "s-7")), out
    code, out, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", "1")
    assert code == 0 and "s-\ufffd" in out, err
    code, _, err = invoke(capsys, "logs", "export", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert "column 'reward' mixes kinds of values; written as JSON text" in err
    exported = pd.read_parquet(tmp_path / "out" / "rollouts.parquet")
    rewards = ["0.5", "1", '"[/high]"', "[1]", None, "1" + "0" * 400, "-Infinity"]
    assert [None if pd.isna(r) else r for r in exported["reward"]] == rewards
    assert exported["prompt"].tolist()[:2] == ["p", "\ufffd" * 3]  # its three UTF-8 bytes


@pytest.mark.timeout(20)  # reading a FIFO never ends: fail, not hang
def test_a_file_that_is_not_a_regular_file_is_told_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A directory, or a FIFO whose reading would never end, where a rollout file is expected."""
    run_dir = write_run(tmp_path / "run")
    os.mkfifo(run_dir / "rollouts" / "rollout_samples-step-0000002.jsonl")
    (run_dir / "rollouts" / "rollout_samples-step-0000003.jsonl").mkdir()
    code, out, err = invoke(capsys, "logs", "show", str(run_dir))
    assert code == 0, err
    for step in (2, 3):
        file = run_dir / "rollouts" / f"rollout_samples-step-000000{step}.jsonl"
        assert f"warning: {file}: not a regular file; skipped" in err
    assert "1 samples" in out


RUN_FIELDS = st.sampled_from(["step", "sample_id", "prompt", "response", "reward", "reward/mean",
                              *TOKEN_ARRAYS])  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(10**300, 10**400)
    | st.floats() | st.text(max_size=5) | st.sampled_from(["\ud800", "s-1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=2),
    max_leaves=8,
)  # fmt: skip
RUN_LINES = st.one_of(
    st.binary(max_size=60),
    st.dictionaries(RUN_FIELDS, JSON_VALUES, max_size=8).map(lambda row: json.dumps(row).encode()),
    st.dictionaries(RUN_FIELDS, JSON_VALUES, max_size=8).map(
        lambda row: json.dumps({**row, "step": 2, "sample_id": "s-1"}).encode()
    ),
).map(lambda line: line.replace(b"\n", b" "))


RUN_PROPERTY = settings(deadline=timedelta(seconds=2), database=None,
                        suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


@settings(RUN_PROPERTY, max_examples=40)
@given(st.lists(RUN_LINES, max_size=4))
def test_any_lines_in_a_run_are_rows_or_problems_naming_them(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]
) -> None:
    """The same lines in each file: every non-blank rollout line is a row or a problem."""
    run_dir = write_run(tmp_path_factory.mktemp("run") / "run", metrics=lines, rollouts=lines,
                        tokens=lines)  # fmt: skip
    logs = read_run(run_dir)
    skipped = [p for p in logs.problems if ROLLOUT_FILE in p and p.endswith("skipped")]
    assert len(logs.rollouts) + len(skipped) == 1 + sum(1 for line in lines if line.strip())


@settings(RUN_PROPERTY, max_examples=8)
@given(st.lists(RUN_LINES, min_size=1, max_size=4))
def test_logs_show_and_export_end_in_no_traceback_whatever_the_lines(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
    lines: list[bytes],
) -> None:  # fmt: skip
    run_dir = write_run(tmp_path_factory.mktemp("run") / "run", metrics=lines, rollouts=lines,
                        tokens=lines)  # fmt: skip
    for argv in (["show", str(run_dir)], ["show", str(run_dir), "--sample", "s-1", "--tokens"],
                 ["export", str(run_dir), "--out", str(run_dir / "out")]):  # fmt: skip
        code, _, _ = invoke(capsys, "logs", *argv)  # raises on any error of another kind
        assert code in (0, 1, 2)


def test_a_huge_text_is_shown_cut_and_exported_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A terminal takes minutes to lay out a cell of megabytes: the table cuts it, and says so."""
    prompt = "x" * 100_000
    row = {"step": 2, "sample_id": "s-2", "prompt": prompt, "response": "r", "reward": 0.1}
    run_dir = write_run(tmp_path / "run", rollouts=[json.dumps(row).encode()])
    code, out, err = invoke(capsys, "logs", "show", str(run_dir))
    assert code == 0 and len(out) < 20_000 and "…[cut 98000 chars]" in out, err
    code, out, err = invoke(capsys, "logs", "show", str(run_dir), "--sample", "s-2")
    assert code == 0 and len(out) < 40_000, err
    assert "…[cut80000chars]" in "".join(out.replace("│", "").split())  # folded over lines
    code, _, err = invoke(capsys, "logs", "export", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == 0, err
    assert pd.read_parquet(tmp_path / "out" / "rollouts.parquet")["prompt"][1] == prompt
