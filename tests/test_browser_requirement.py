"""The reviewer UI test's browser requirement: a missing Chromium skips it with what to install,
except in CI, where it fails; `python -m tests.helpers.browser` (make browser) says the same."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.helpers import browser

pytestmark = pytest.mark.unit


@pytest.fixture
def no_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)


def test_a_missing_browser_skips_with_what_to_install_outside_ci(
    no_browser: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        browser.require()
    assert "sudo apt-get install chromium chromium-driver" in str(skipped.value)
    assert "missing: chromium, chromium-driver" in str(skipped.value)


def test_a_missing_browser_fails_in_ci(no_browser: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        browser.require()
    assert browser.INSTALL_HINT in str(failed.value)


@pytest.mark.integration
def test_the_make_target_prints_the_same_message(tmp_path) -> None:
    # An empty PATH: neither chromium nor chromedriver can be found.
    result = subprocess.run(
        [sys.executable, "-m", "tests.helpers.browser"], cwd=REPO, env={"PATH": str(tmp_path)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.strip() == f"missing: chromium, chromium-driver; {browser.INSTALL_HINT}"
