"""Waiting for a server started in another process or thread to answer HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for_http(
    port: int, timeout_s: float = 30, alive: Callable[[], None] | None = None
) -> bool:
    """Whether anything answers HTTP on 127.0.0.1:`port` within `timeout_s`. `alive` runs before
    each try: it raises where the server's process has died, so a test fails at once."""
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return True
        except httpx.TransportError:
            time.sleep(0.1)
    return False
