"""A run directory is someone's data: the commands that read one never import or call what it
names (a redactor in its saved config, a config its `.env` points to), and the report says
which redaction it applied."""

from __future__ import annotations

import shutil
import sys
from html import unescape
from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.test_logs_report import EMAIL, planted, write_run

pytestmark = [
    pytest.mark.integration,  # ingest routes to a Redis of the test's own
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

PLUGIN = "lowtide_planted_plugin"
# Leaves a file when it is imported and when its redactor is called: neither may happen.
PLUGIN_SOURCE = """
from pathlib import Path
HERE = Path(__file__).parent
(HERE / "imported").touch()

def redact(text):
    (HERE / "called").touch()
    return []
"""


@pytest.fixture
def hostile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run with rollouts, a saved config naming a plug-in as its redactor and switching the
    e-mail finder off, and a `.env` that points LOWTIDE_CONFIG at a config naming it too."""
    plugin_dir = tmp_path / "site"
    plugin_dir.mkdir()
    (plugin_dir / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(plugin_dir))  # importable, as an installed package would be
    run_dir = tmp_path / "logs" / "run-1"
    write_run(run_dir, planted())
    named = f"sampling:\n  redact:\n    redactor: {PLUGIN}:redact\n    allow: [{EMAIL}]\n"
    (run_dir / "config.yaml").write_text(named)
    (run_dir / "their.yaml").write_text(named)
    (run_dir / ".env").write_text(f"LOWTIDE_CONFIG={run_dir / 'their.yaml'}\nPYTHONPATH=/x\n")
    monkeypatch.chdir(run_dir)  # where a user reading it may stand
    monkeypatch.setenv("LOWTIDE_ENV_FILE", str(run_dir / ".env"))
    monkeypatch.delenv("LOWTIDE_CONFIG", raising=False)
    yield run_dir
    sys.modules.pop(PLUGIN, None)


def nothing_ran(run_dir: Path) -> None:
    site = run_dir.parent.parent / "site"
    assert not (site / "imported").exists() and not (site / "called").exists()
    assert PLUGIN not in sys.modules


def test_the_report_applies_the_defaults_and_says_what_it_did_not_apply(
    hostile_run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    code, _, err = invoke(capsys, "logs", "report", str(hostile_run), "--out", str(page))
    assert code == 0, err
    nothing_ran(hostile_run)
    text = unescape(page.read_text())
    assert "texts redacted with the defaults" in text
    assert EMAIL not in text  # the run's allowlist is not applied either
    assert f"sets sampling.redact redactor {PLUGIN}:redact, allow: not applied" in err
    assert "ignored LOWTIDE_CONFIG, PYTHONPATH" in err


def test_search_bias_and_ingest_never_load_what_the_run_names(
    hostile_run: Path, capsys: pytest.CaptureFixture[str], own_redis, monkeypatch
) -> None:
    monkeypatch.setenv("REDIS_URL", own_redis.url)
    searched = invoke(capsys, "logs", "search", str(hostile_run), "reward < 100")
    assert searched[0] == 0, searched[2]
    biased = invoke(capsys, "logs", "bias", str(hostile_run))
    assert biased[0] == 0, biased[2]
    spool = f"--queue.spool_dir={hostile_run.parent / 'spool'}"
    ingested = invoke(capsys, "ingest", str(hostile_run), "--once", "--queue.name=untrusted", spool)
    assert ingested[0] == 0, ingested[2]
    nothing_ran(hostile_run)


def test_a_config_the_reader_names_is_theirs_to_trust(
    hostile_run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--config is the reader's own choice: its redactor runs (the same file, named by them)."""
    page = tmp_path / "report.html"
    config = hostile_run / "config.yaml"
    code, _, err = invoke(capsys, "logs", "report", str(hostile_run), "-c", str(config),
                          "--out", str(page))  # fmt: skip
    assert code == 0, err
    assert (hostile_run.parent.parent / "site" / "called").exists()
    assert f"texts redacted with the sampling.redact settings of {config}" in unescape(
        page.read_text()
    )
