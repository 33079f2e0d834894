"""Start, find and stop the local service processes."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psutil

from rl.private_files import private_dir, private_opener

CHILD_UMASK = 0o077  # a service's own files: readable by this user only


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port free now, drawn from below the range the OS hands to outgoing connections and to
    port-0 binds: the caller binds it seconds later (a server starting), and a connection opened
    in between must not take it (EADDRINUSE in a parallel test run). Where that range leaves no
    room below it, or nothing there is free, the OS's own pick."""
    low = _ephemeral_range_start()
    if low > _LOWEST_DRAWN + 1000:
        draw = random.SystemRandom()
        for _ in range(200):
            port = draw.randrange(_LOWEST_DRAWN, low)
            if port_is_free(port, host):
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


_LOWEST_DRAWN = 10_000  # above the well-known ports services are configured on


def _ephemeral_range_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def spawn_detached(
    command: Sequence[str], log_path: Path, env: Mapping[str, str], cwd: Path
) -> int:
    """Start a process in its own session (it outlives us; `stop` kills its whole group).
    What it creates (a database, an append-only file) is owner-only: it runs with umask 077,
    set in the child alone, and its log is 0600."""
    private_dir(log_path.parent)
    with open(log_path, "ab", opener=private_opener) as log:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            umask=CHILD_UMASK,
        )
    return process.pid


def is_running(pid: int, command_fragment: str | None = None) -> bool:
    """True if `pid` lives (a zombie does not) and, when given, its command line still contains
    `command_fragment`, so that a PID reused by an unrelated process is never taken for ours."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return command_fragment is None or command_fragment in " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return False  # another user's process: never one of ours


def stop_process_group(pid: int, timeout_s: float = 15.0) -> None:
    """SIGTERM the process group, wait, then SIGKILL what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            os.kill(pid, sig)
        if wait_until(lambda: not is_running(pid), timeout_s if sig == signal.SIGTERM else 5.0):
            _reap(pid)
            return


def await_start(
    pid: int,
    answers: Callable[[], bool],
    timeout_s: float,
    interval_s: float = 0.25,
    on_tick: Callable[[float], None] | None = None,
) -> str | None:
    """After `spawn_detached`: wait until the process at `pid` answers (`answers()`). None once
    it does; otherwise its process group is stopped and the reason comes back: "exited", or
    "did not answer within N s"."""
    waited = wait_until(lambda: answers() or not is_running(pid), timeout_s, interval_s, on_tick)
    if waited and answers():
        return None
    stop_process_group(pid)
    return "exited" if waited else f"did not answer within {timeout_s:g} s"


def wait_until(
    ready: Callable[[], bool],
    timeout_s: float,
    interval_s: float = 0.25,
    on_tick: Callable[[float], None] | None = None,
) -> bool:
    deadline = time.monotonic() + timeout_s
    start = time.monotonic()
    while True:
        if ready():
            return True
        if time.monotonic() >= deadline:
            return False
        if on_tick is not None:
            on_tick(time.monotonic() - start)
        time.sleep(interval_s)


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _reap(pid: int) -> None:
    """Collect the exit status if the process was our own child (same-process up/down in tests)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
