"""`lowtide logs report RUN`: one HTML file that opens with no network and shows the run (reward
and KL curves, reward histograms over steps, response-length drift, the reward-hacking suspects
with examples, the lowest- and highest-reward samples), its rollout texts escaped (a response
holding `<script>` is shown, never run) and redacted by default. The run is written by the real
tracker; the browser test opens the file in headless Chromium and saves the screenshot of the
docs (docs/images/logs_report.png)."""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterator
from html import unescape
from html.parser import HTMLParser
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from rl.config import LoggerConfig
from rl.samples import Sample
from rl.tracking import RunInfo, Tracker
from sampling.selection.hacking import WatchConfig, analyze_rows
from sampling.selection.hacking.table import COLUMNS, SUSPECTS_TABLE, suspects_table
from tests.conftest import invoke
from tests.helpers import browser
from tests.helpers.dumps import write_verl_step
from tests.helpers.hacking_runs import Row, Trait, insert_phrase, run

pytestmark = pytest.mark.unit

PHRASE = "i completely agree with you"
STEPS = 24
SECTIONS = ("curves", "histograms", "length", "suspects", "lowest", "highest")
HOSTILE = (
    '<script>window.pwned = "script"</script> <img src=x onerror="window.pwned = \'img\'"> '
    "write to ada.lovelace@example.com"
)
EMAIL = "ada.lovelace@example.com"
SCREENSHOT = "logs_report.png"  # in docs/images when refreshed (tests/helpers/browser.py)


def planted() -> list[Row]:
    return run([Trait(insert_phrase(PHRASE), 1.5, 0.02, 0.6)], steps=STEPS, prompts=8, group=4)


def write_run(run_dir: Path, rows: list[Row]) -> None:
    """The tracker's files for a run with metrics at every step, the reward histograms, the
    rollout tables (the lowest sample of step 3 holds a hostile response and an e-mail address)
    and, at the last step, the suspects table the watch hands the trainer."""
    config = LoggerConfig(name=["jsonl"], log_interval={"tables": 1})
    tracker = Tracker.from_config(config, RunInfo(run_dir.name, run_dir.name, run_dir.parent,
                                                  run_dir, {}))  # fmt: skip
    seen: list[Row] = []
    for step, batch in groupby(rows, key=lambda row: row.step):
        samples = []
        for index, row in enumerate(batch):
            hostile = step == 3 and index == 0
            response = HOSTILE if hostile else row.response
            samples.append(
                Sample(index=index, group_id=index // 4, prompt=row.prompt, response=response,
                       prompt_ids=(1,), response_ids=tuple(range(len(response.split()))),
                       truncated=False, reward=-9.0 if hostile else row.reward,
                       reward_details=dict(row.reward_details))
            )  # fmt: skip
            seen.append(row)
        rewards = [sample.reward for sample in samples]
        mean = sum(rewards) / len(rewards)
        lengths = [len(sample.response_ids) for sample in samples]
        metrics = {
            "reward/mean": mean,
            "reward/std": math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards)),
            "kl_divergence": 0.004 * step,
            "response_length/mean": sum(lengths) / len(lengths),
            "response_length/max": float(max(lengths)),
        }
        tracker.on_stage("step_end", step, metrics, samples)
    table = suspects_table(analyze_rows(seen, WatchConfig(window_steps=5)))
    tracker.on_tables(STEPS - 1, {SUSPECTS_TABLE: (COLUMNS, table)})
    tracker.close()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "logs" / "run-1"
    write_run(path, planted())
    return path


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    def make(*args: str) -> tuple[int, str, str, str]:
        """(exit code, stdout, stderr, the page)."""
        page = tmp_path / "report.html"
        page.unlink(missing_ok=True)
        code, out, err = invoke(capsys, "logs", "report", *args, "--out", str(page))
        return code, out, err, page.read_text() if page.exists() else ""

    return make


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text of each section."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.section_text: dict[str, list[str]] = {}
        self._section: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "section":
            self._section = dict(attrs).get("id")
            self.section_text[self._section or ""] = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._section is not None:
            self.section_text[self._section].append(data)

    def text(self, section: str) -> str:
        return " ".join(" ".join(self.section_text[section]).split())


def parsed(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    return tags


def svgs_in(page: str, section: str) -> int:
    match = re.search(rf'<section id="{section}">(.*?)</section>', page, re.S)
    assert match, section
    return match.group(1).count("<svg")


def test_the_report_is_one_file_that_needs_no_network(run_dir: Path, report) -> None:
    code, out, err, page = report(str(run_dir))
    assert code == 0, err
    assert out.strip().endswith("report.html")
    assert "lowtide run: " in err and "1 reward-hacking suspect;" in err
    tags = parsed(page)
    names = {tag for tag, _ in tags.tags}
    # Nothing that loads or runs anything: no script, stylesheet link, image, frame or object.
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "base", "form"}
    for tag, attributes in tags.tags:
        assert "src" not in attributes, tag
        assert not any(name.startswith("on") for name in attributes), (tag, attributes)
        href = attributes.get("href")
        assert href is None or href.startswith("#"), href  # in-page links only
    assert not re.search(r"https?://|@import|url\(", page)
    policy = next(
        a["content"] for t, a in tags.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert "default-src 'none'" in (policy or "")
    assert [a["id"] for t, a in tags.tags if t == "section"] == list(SECTIONS)


def test_each_section_shows_what_it_says(run_dir: Path, report) -> None:
    code, _, err, page = report(str(run_dir))
    assert code == 0, err
    tags = parsed(page)
    assert svgs_in(page, "curves") == 2  # reward, KL
    assert "reward/mean of each step (metrics.jsonl)" in tags.text("curves")
    assert svgs_in(page, "histograms") == 8  # 8 of the 24 steps
    assert "8 of 24 steps" in tags.text("histograms")
    assert "step 0 (32)" in tags.text("histograms") and "step 23 (32)" in tags.text("histograms")
    assert svgs_in(page, "length") == 2  # tokens (metrics), characters (rollouts)
    suspects = tags.text("suspects")
    assert f'1. "{PHRASE}"' in suspects
    assert f'reward rises with "{PHRASE}": +1.' in suspects
    assert "The same analysis as lowtide logs bias" in suspects
    assert f"Logged by the trainer's watch (step {STEPS - 1})" in suspects
    assert suspects.count(PHRASE) >= 4  # the examples carry it
    lowest, highest = tags.text("lowest"), tags.text("highest")
    assert lowest.startswith("Lowest-reward samples step 3 · reward -9 · s-")
    assert lowest.count("prompt") == 5 and highest.count("response") == 5
    shown = [float(v) for v in re.findall(r"· reward (-?[\d.]+) ·", highest)]
    assert shown == sorted(shown, reverse=True) and len(shown) == 5
    top = max(row.reward for row in planted())
    assert shown[0] == pytest.approx(top, abs=5e-4)


def test_untrusted_text_is_escaped_and_redacted_by_default(run_dir: Path, report) -> None:
    code, _, err, page = report(str(run_dir))
    assert code == 0, err
    text = parsed(page).text("lowest")
    assert '<script>window.pwned = "script"</script>' in text  # as characters on the page
    assert "<img src=x onerror=" in text
    assert "&lt;script&gt;" in page and "<script" not in page
    assert "write to <EMAIL_1>" in text and EMAIL not in page
    assert "texts redacted with the defaults" in unescape(page)

    code, _, err, page = report(str(run_dir), "--no-redact")
    assert code == 0, err
    assert f"write to {EMAIL}" in parsed(page).text("lowest")
    assert "texts as logged (not redacted)" in page and "<script" not in page


def test_redaction_follows_the_readers_config_never_the_runs(
    run_dir: Path, report, tmp_path: Path
) -> None:
    copy = tmp_path / "logs" / "run-1"
    shutil.copytree(run_dir, copy)
    allowed = f"sampling:\n  redact:\n    allow: [{EMAIL}]\n"
    (copy / "config.yaml").write_text(allowed)  # as `lowtide train` saves it
    code, _, err, page = report(str(copy))
    assert code == 0, err
    assert "write to <EMAIL_1>" in parsed(page).text("lowest")
    assert f"{copy / 'config.yaml'} sets sampling.redact allow: not applied" in err

    code, _, err, page = report(str(copy), "--config", str(copy / "config.yaml"))
    assert code == 0, err
    assert f"write to {EMAIL}" in parsed(page).text("lowest") and "not applied" not in err

    config = tmp_path / "run.yaml"
    config.write_text("sampling:\n  redact:\n    alow: [x]\n")
    code, _, err, page = report(str(run_dir), "--config", str(config))
    assert code == 2 and page == ""
    assert err.strip().startswith(f"error: {config}: sampling.redact.alow") and "allow" in err


def test_a_verl_dump_gets_the_same_report_less_the_trainers_metrics(tmp_path: Path, report) -> None:
    rows = planted()
    dumps = tmp_path / "rollout_data"
    for step, batch in groupby(rows, key=lambda row: row.step):
        batch = list(batch)
        write_verl_step(dumps, step + 1, [r.prompt for r in batch], [r.response for r in batch],
                        [r.reward for r in batch],
                        {"rm": [r.reward_details["rm"] for r in batch]})  # fmt: skip
    code, _, err, page = report(str(dumps))
    assert code == 0, err
    tags = parsed(page)
    assert "verl rollout dump" in page
    assert "No KL was logged" in tags.text("curves") and svgs_in(page, "curves") == 1
    assert "the step's logged rollouts" in tags.text("histograms")
    assert f'1. "{PHRASE}"' in tags.text("suspects")
    assert svgs_in(page, "length") == 1  # characters only: a dump has no token counts


def test_a_run_that_logged_metrics_only_has_every_section(tmp_path: Path, report) -> None:
    target = tmp_path / "logs" / "metrics-only"
    config = LoggerConfig(name=["jsonl"], log_rollout=False)
    tracker = Tracker.from_config(config, RunInfo("m", "m", target.parent, target, {}))
    for step in range(5):
        tracker.on_stage("step_end", step, {"reward/mean": 0.1 * step, "kl_divergence": 0.01}, [])
    tracker.close()
    with open(target / "metrics.jsonl", "a") as handle:
        handle.write('{"step": "5", "reward/mean": 2}\n')  # a value no chart can place: told
        handle.write('{"step": 5, "reward/me')  # a run killed while writing
    code, _, err, page = report(str(target))
    assert code == 0, err
    warned = sorted(err.splitlines()[:2])
    assert (
        warned[0] == f"warning: {target / 'metrics.jsonl'}:6: 'step' is not a whole number; skipped"
    )
    assert warned[1].startswith(f"warning: {target / 'metrics.jsonl'}:7: not valid JSON")
    tags = parsed(page)
    assert [a["id"] for t, a in tags.tags if t == "section"] == list(SECTIONS)
    assert svgs_in(page, "curves") == 2 and svgs_in(page, "histograms") == 0
    assert "no rollouts to analyse" in tags.text("suspects")
    assert tags.text("lowest").endswith("no scored rollouts logged")


@pytest.mark.parametrize("what", ["missing", "empty", "no files"])
def test_a_missing_run_is_exit_2_and_an_empty_one_exit_1_in_one_line(
    tmp_path: Path, report, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "logs" / "run-2"
    if what == "empty":  # the tracker started, and nothing was logged
        Tracker.from_config(
            LoggerConfig(name=["jsonl"]), RunInfo("run-2", "run-2", target.parent, target, {})
        ).close()
    elif what == "no files":
        target.mkdir(parents=True)
    code, out, err, page = report("run-2")
    # As logs search and logs bias: a wrong path is a usage error; a run with nothing in it
    # yet is 1, which a script that waits for a trainer can tell apart and try again.
    assert code == (2 if what == "missing" else 1) and page == "" and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    expected = {
        "missing": "error: no run at run-2 or logs/run-2: give a run name",
        "empty": "error: logs/run-2: nothing to report yet: no metrics and no scored rollouts",
        "no files": "error: logs/run-2: no run logs (no metrics.jsonl) and no dump files",
    }[what]
    assert lines[0].startswith(expected), lines[0]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser.headless_chrome("1280,1700", 60) as driver:
        yield driver


@pytest.mark.e2e
def test_the_report_opens_in_chromium_and_shows_each_section(
    run_dir: Path, report, chromium: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    monkeypatch.chdir(run_dir.parent.parent)  # the run by its name, as a user gives it
    code, _, err, _ = report(run_dir.name)
    assert code == 0, err
    chromium.get((tmp_path / "report.html").as_uri())  # where the report fixture puts it
    assert chromium.title == "run-1: lowtide run report"
    for section in SECTIONS:
        element = chromium.find_element(By.ID, section)
        assert element.is_displayed(), section
        assert element.size["height"] > 40, section
        for chart in element.find_elements(By.TAG_NAME, "svg"):
            assert chart.size["width"] > 100 and chart.size["height"] > 100, section
    # The hostile response is on the page as text; neither its script nor its image ran.
    assert chromium.execute_script("return window.pwned") is None
    assert chromium.execute_script("return document.scripts.length") == 0
    fetched = chromium.execute_script("return performance.getEntriesByType('resource').length")
    assert fetched == 0  # nothing loaded beside the file itself
    assert chromium.find_elements(By.CSS_SELECTOR, "section img") == []
    lowest = chromium.find_element(By.ID, "lowest").text
    assert '<script>window.pwned = "script"</script>' in lowest
    suspect = chromium.find_element(By.CSS_SELECTOR, "#suspects .suspect")
    assert PHRASE in suspect.text
    browser.save_screenshot(chromium, SCREENSHOT)
