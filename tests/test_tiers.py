"""The suite's tiers (tests/helpers/tiers.py): a unit test that starts a process or connects to
an address fails saying so, `--tier` runs one tier, and a module without a tier stops the run."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit

CONFTEST = 'pytest_plugins = ["tests.helpers.tiers"]\n'
TESTS = """
import socket, subprocess, sys
import pytest

pytestmark = pytest.mark.unit

def test_pure():
    assert sum([1, 2]) == 3

def test_starts_a_process():
    subprocess.run([sys.executable, "-c", "pass"])

def test_connects():
    socket.create_connection(("127.0.0.1", 9), timeout=1)

@pytest.mark.integration
def test_may_start_a_process():
    pass
"""


def test_a_unit_test_that_leaves_the_process_fails_naming_its_tier(pytester: pytest.Pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_sample=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*starts a process: not a unit test (mark it integration)*"])
    result.stdout.fnmatch_lines(["*connects to ('127.0.0.1', 9): not a unit test*"])


def test_tier_runs_one_tier(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_sample=TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--tier", "integration")
    result.assert_outcomes(passed=1, deselected=3)


def test_a_module_without_a_tier_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_untiered="def test_x():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_untiered.py: name the tier*"])


class _Item:
    """What the suite's ordering reads of a test: its name and its marks, closest first."""

    def __init__(self, name: str, *marks: str) -> None:
        self.name, self.marks = name, [pytest.Mark(mark, (), {}) for mark in marks]

    def iter_markers(self):
        return iter(self.marks)

    def get_closest_marker(self, name: str):
        return next((mark for mark in self.marks if mark.name == name), None)


def test_the_suite_runs_postgres_then_the_long_tiers_first_keeping_file_order() -> None:
    from tests.conftest import pytest_collection_modifyitems

    items = [
        _Item("unit_a", "unit"), _Item("e2e_a", "e2e"), _Item("integration_a", "integration"),
        _Item("pg", "postgres", "e2e"), _Item("e2e_b", "e2e"), _Item("unit_b", "unit"),
        _Item("pg_unit", "unit", "postgres"),
    ]  # fmt: skip
    pytest_collection_modifyitems(items)
    assert [item.name for item in items] == [
        "pg", "pg_unit", "e2e_a", "e2e_b", "integration_a", "unit_a", "unit_b",
    ]  # fmt: skip
