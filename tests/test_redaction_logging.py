"""`logger.redact`: the rollout tables and files the logger writes carry placeholders instead of
secrets and personal data, built off the trainer thread; a table that cannot be redacted is not
written; rl names the redactor by dotted path only (it never imports sampling)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from types import MappingProxyType

import pytest
from pydantic import ValidationError

from rl.config import LoggerConfig
from rl.samples import Sample, TokenValues
from rl.tracking import RunInfo, Tracker
from rl.tracking.router import TrackingError

pytestmark = pytest.mark.unit

PROMPT = "My card is 4111 1111 1111 1111, mail jane.doe@example.com"
RESPONSE = "Noted: jane.doe@example.com will get a receipt."


def info(tmp_path: Path, redact: dict | None = None) -> RunInfo:
    config = {"trainer": {}, "sampling": {"redact": redact or {}}}
    return RunInfo("run-1", "run-1", tmp_path, tmp_path / "run-1", config)


def sample(response: str = RESPONSE) -> Sample:
    tokens = TokenValues(ids=(5, 6), texts=("Noted", ": jane"), logprobs=(-1.0, -2.0), kl=None,
                         rewards=(0.0, 0.1), advantages=(0.1, 0.1))  # fmt: skip
    return Sample(index=0, group_id=0, prompt=PROMPT, response=response, prompt_ids=(1,),
                  response_ids=(5, 6), truncated=False, reward=0.0,
                  reward_details=MappingProxyType({}), advantage=0.1, tokens=tokens)  # fmt: skip


def table_files(run_dir: Path) -> str:
    return "".join(path.read_text() for path in run_dir.rglob("*") if path.is_file())


def run_one_step(tracker: Tracker, samples: tuple[Sample, ...]) -> None:
    tracker.on_stage("step_end", 0, {"reward/mean": 0.0}, samples)
    tracker.close()


def test_off_by_default_the_files_hold_the_text(tmp_path: Path) -> None:
    config = LoggerConfig(name=[], rollout_log_interval=1)
    run_one_step(Tracker.from_config(config, info(tmp_path)), (sample(),))
    assert "jane.doe@example.com" in table_files(tmp_path / "run-1")


def test_redacted_tables_and_files(tmp_path: Path) -> None:
    config = LoggerConfig(name=[], rollout_log_interval=1, redact=True)
    tracker = Tracker.from_config(config, info(tmp_path, {"disable": ["CARD"]}))
    plain = dataclasses.replace(sample(), response="nothing personal", tokens=None)
    run_one_step(tracker, (sample(), plain))
    written = table_files(tmp_path / "run-1")
    assert "jane.doe@example.com" not in written and "jane" not in written
    assert "<EMAIL_1>" in written
    assert "4111 1111 1111 1111" in written  # the run's sampling.redact settings apply
    from rl.tracking import read_run

    logs = read_run(tmp_path / "run-1")
    assert list(logs.rollouts["response"]) == [
        "Noted: <EMAIL_1> will get a receipt.",
        "nothing personal",
    ]
    assert logs.tokens.empty  # the redacted response kept no token texts


def test_a_failing_redactor_writes_no_table(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = LoggerConfig(name=[], rollout_log_interval=1, redact=True)
    redact = {"redactor": "tests.helpers.redaction_plugins:broken"}
    tracker = Tracker.from_config(config, info(tmp_path, redact))
    with caplog.at_level(logging.ERROR):
        run_one_step(tracker, (sample(),))
    assert tracker.unredacted_tables == 1
    assert "jane" not in table_files(tmp_path / "run-1") and "jane" not in caplog.text
    assert "redaction failed (RedactionError)" in caplog.text


def test_logger_redact_mistakes_are_one_clear_message(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not a dotted path"):
        LoggerConfig(redact={"enabled": True, "redactor": "no path"})
    config = LoggerConfig(name=[], redact={"enabled": True, "redactor": "tests.nothing:here"})
    with pytest.raises(TrackingError, match=r"^logger\.redact\.redactor: cannot import"):
        Tracker.from_config(config, info(tmp_path))


class _Collecting:
    """A backend of one's own: `remote` as it says, or absent (then it counts as remote)."""

    def __init__(self, name: str, remote: bool | None) -> None:
        self.name, self.tables = name, []
        if remote is not None:
            self.remote = remote

    def log_scalars(self, step, values) -> None: ...  # type: ignore[no-untyped-def]

    def log_histograms(self, step, values) -> None: ...  # type: ignore[no-untyped-def]

    def log_table(self, step, table) -> None:  # type: ignore[no-untyped-def]
        self.tables.append(table)

    def close(self) -> None: ...


def tracker_with(config: LoggerConfig, run: RunInfo, *backends: _Collecting) -> Tracker:
    from rl.tracking.router import redactor_from_config

    redact = redactor_from_config(config, run, backends)
    return Tracker(config, run, list(backends), redact=redact)


@pytest.mark.parametrize("remote", [True, None])
def test_a_remote_backend_gets_a_redacted_table_by_default(
    tmp_path: Path, remote: bool | None
) -> None:
    sent, local = _Collecting("elsewhere", remote), _Collecting("here", False)
    config = LoggerConfig(name=[], rollout_log_interval=1)
    run_one_step(tracker_with(config, info(tmp_path), sent, local), (sample(),))
    (away,) = [row[2] + row[3] for table in sent.tables for row in table.rows]
    assert "jane.doe@example.com" not in away and "<EMAIL_1>" in away
    assert not sent.tables[0].tokens  # the token texts would give the value back
    (kept,) = [row[2] + row[3] for table in local.tables for row in table.rows]
    assert "jane.doe@example.com" in kept


def test_remote_false_sends_the_text_as_it_is(tmp_path: Path) -> None:
    sent = _Collecting("elsewhere", True)
    config = LoggerConfig(name=[], rollout_log_interval=1, redact={"remote": False})
    run_one_step(tracker_with(config, info(tmp_path), sent), (sample(),))
    assert "jane.doe@example.com" in sent.tables[0].rows[0][3]


@pytest.mark.integration
def test_wandb_tables_are_redacted_by_default_and_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real wandb run (offline: its files are what `wandb sync` uploads), read back."""
    import json

    for name in ("WANDB_MODE", "WANDB_API_KEY", "WANDB_DATA_DIR", "WANDB_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    config = LoggerConfig(name=["wandb"], rollout_log_interval=1)
    tracker = Tracker.from_config(config, info(tmp_path))
    run_one_step(tracker, (sample(),))
    (wandb_backend,) = [b for b in tracker.backends if b.name == "wandb"]
    tables = list(wandb_backend.offline_dir.glob("files/media/table/*.table.json"))
    content = json.loads(tables[0].read_text())
    cells = json.dumps(content["data"])
    assert "jane.doe@example.com" not in cells and "4111 1111" not in cells
    assert "<EMAIL_1>" in cells and "<CARD_1>" in cells
    assert "jane.doe@example.com" in table_files(tmp_path / "run-1" / "rollouts")
