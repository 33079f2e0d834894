"""What every bench's quick run must show (tests/test_benches.py, and the benches whose quick
run a test of their own makes)."""

from __future__ import annotations

import subprocess

from bench._quick import NOTE


def assert_a_quick_run(result: subprocess.CompletedProcess) -> None:
    """It says it is a quick run, first and last, and ends without a traceback."""
    lines = result.stdout.splitlines()
    assert NOTE in lines and f"({NOTE})" in lines, result.stdout[-1500:]
    assert "Traceback" not in result.stderr, result.stderr[-4000:]
