"""Run one measurement in its own process (own peak RSS, no state carried between runs) and
read back the JSON it prints last. Shared by the benchmarks that interleave runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def run_child(script: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """`python script --child args...`, one CPU thread; its last stdout line is JSON."""
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, script, "--child", *args],
        capture_output=True, text=True, env=environment, cwd=REPO, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"{Path(script).name} {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])
