"""Headless Chromium for the tests of what a reviewer sees: where it is, and what to install.

`python -m tests.helpers.browser` exits 0 when Chromium and its driver are installed, else
prints what is missing and how to install it, and exits 1 (`make browser` uses it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PACKAGES = ("chromium", "chromium-driver")  # Debian / Ubuntu package names
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver",)
INSTALL_HINT = (
    "the reviewer UI tests need headless Chromium and its driver: install them with "
    f"`sudo apt-get install {' '.join(PACKAGES)}` (Debian/Ubuntu), or run `make browser` as root"
)


def find_first(names: tuple[str, ...]) -> str | None:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def browser_path() -> str | None:
    return find_first(BROWSER_NAMES)


def driver_path() -> str | None:
    return find_first(DRIVER_NAMES)


def missing() -> list[str]:
    """What is not installed, by package name ([] when both are there)."""
    return [
        package
        for package, found in zip(PACKAGES, (browser_path(), driver_path()), strict=True)
        if found is None
    ]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require() -> None:
    """Skip the calling test when Chromium or its driver is missing, saying what to install;
    in CI (CI=true) fail it instead: there a missing browser is a broken setup, not a choice."""
    import pytest

    absent = missing()
    if not absent:
        return
    message = f"missing: {', '.join(absent)}; {INSTALL_HINT}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def headless_chrome(window: str, page_load_timeout_s: float) -> Iterator[Any]:
    """A headless Chromium driven by ChromeDriver (selenium), at `window` ("1280,1700") and
    scale 1 so that screenshots are the same size everywhere; skipped or failed as `require`
    says when it is missing."""
    require()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(browser_path())
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     f"--window-size={window}", "--force-device-scale-factor=1"):  # fmt: skip
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(driver_path())), options=options)
    driver.set_page_load_timeout(page_load_timeout_s)
    try:
        yield driver
    finally:
        driver.quit()


# The documentation's screenshots (docs/images) are refreshed only when asked: a test run never
# writes inside the tracked tree. `LOWTIDE_SCREENSHOTS=docs pytest -m browser ...` refreshes them.
SCREENSHOTS_VAR = "LOWTIDE_SCREENSHOTS"
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def save_screenshot(driver: Any, name: str) -> Path:
    """The page as `name` (a PNG) in docs/images when refreshing them, else in a temporary
    folder; returns where."""
    if os.environ.get(SCREENSHOTS_VAR) == "docs":
        folder = DOC_IMAGES
    else:
        folder = Path(tempfile.gettempdir()) / f"lowtide-screenshots-{os.getuid()}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    driver.save_screenshot(str(path))
    return path


def main() -> int:
    absent = missing()
    if not absent:
        return 0
    print(f"missing: {', '.join(absent)}; {INSTALL_HINT}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
