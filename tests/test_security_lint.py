"""`bandit` over the product code, against a reviewed baseline (tests/data/bandit_reviewed.yaml):
each kind of finding is there with why it is safe and how many each file may have. A new
finding, or one more of a reviewed kind in a file, fails with its place and bandit's words; a
finding that went away asks for its line to go too, so the baseline stays what was reviewed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.unit

PRODUCT = ("lowtide", "rl", "sampling", "annotation")
BASELINE = REPO / "tests" / "data" / "bandit_reviewed.yaml"


def findings() -> list:
    from bandit.core import config, manager

    bandit = manager.BanditManager(config.BanditConfig(), "file", quiet=True)
    bandit.discover_files([str(REPO / part) for part in PRODUCT], recursive=True)
    bandit.run_tests()
    return bandit.get_issue_list()


def reviewed() -> dict[tuple[str, str], int]:
    allowed: dict[tuple[str, str], int] = {}
    for test_id, entry in yaml.safe_load(BASELINE.read_text()).items():
        assert entry.get("why"), f"{test_id}: say why it is safe"
        for path, count in entry["files"].items():
            allowed[(test_id, path)] = count
    return allowed


def test_the_product_code_has_no_unreviewed_security_finding() -> None:
    found = findings()
    counts = Counter((issue.test_id, str(Path(issue.fname).relative_to(REPO))) for issue in found)
    allowed = reviewed()
    new = [
        f"{Path(i.fname).relative_to(REPO)}:{i.lineno}: {i.test_id} {i.text}"
        for i in found
        if counts[(i.test_id, str(Path(i.fname).relative_to(REPO)))]
        > allowed.get((i.test_id, str(Path(i.fname).relative_to(REPO))), 0)
    ]
    assert not new, "new findings (fix them, or review and add them to the baseline):\n" + (
        "\n".join(new)
    )
    gone = [f"{test_id} {path}" for (test_id, path), n in allowed.items()
            if counts[(test_id, path)] < n]  # fmt: skip
    assert not gone, "fewer findings than reviewed: lower these counts in the baseline: " + (
        ", ".join(gone)
    )
