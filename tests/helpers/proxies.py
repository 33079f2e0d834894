"""HTTP proxies in front of Label Studio that stand for what a network does to a request:
`LostAnswerProxy` carries a request out and loses its answer (a gateway that timed out while
the server went on); `HeldRequestProxy` holds a request back until the test releases it (a slow
upload, a queueing proxy whose client gave up long before). Everything else passes through."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from lowtide.services.process import free_port

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
Reply = tuple[int, bytes, dict[str, str]]


class ForwardingProxy:
    """Forwards each request to `target_url` and its answer back; a subclass decides what one
    request meets (`arrived`, before it is forwarded) and what its client gets (`reply`)."""

    def __init__(self, target_url: str) -> None:
        self.target = target_url.rstrip("/")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())

    def __enter__(self) -> Any:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def arrived(self, method: str, path: str) -> object:
        """Called before forwarding; what it returns is handed to `reply`."""
        return None

    def reply(self, method: str, path: str, answer: httpx.Response, state: object) -> Reply | None:
        """What the client gets (None: no answer at all)."""
        kept = {k: v for k, v in answer.headers.items()
                if k.lower() not in HOP_BY_HOP | {"content-encoding"}}  # fmt: skip
        return answer.status_code, answer.content, kept

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                state = proxy.arrived(self.command, self.path)
                answer = httpx.request(self.command, proxy.target + self.path, headers=headers,
                                       content=body, timeout=60)  # fmt: skip
                reply = proxy.reply(self.command, self.path, answer, state)
                if reply is None:
                    return
                status, content, kept = reply
                with contextlib.suppress(OSError):  # a client that gave up
                    self.send_response(status)
                    for key, value in kept.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

            def log_message(self, *args: object) -> None:
                pass

        return Handler


class LostAnswerProxy(ForwardingProxy):
    """A request matching `lose` is carried out, but its client gets a 502 instead."""

    def __init__(self, target_url: str, lose: Callable[[str, str], bool]) -> None:
        self.lose = lose
        self.lost: list[str] = []  # "METHOD path" of each answer it lost
        super().__init__(target_url)

    def reply(self, method: str, path: str, answer: httpx.Response, state: object) -> Reply | None:
        if self.lose(method, path):
            self.lost.append(f"{method} {path}")
            return 502, b"Bad Gateway", {}
        return super().reply(method, path, answer, state)


class HeldRequestProxy(ForwardingProxy):
    """The first request matching `hold` gets no answer, and is forwarded to Label Studio only
    when the test calls `release()`."""

    def __init__(self, target_url: str, hold: Callable[[str, str], bool]) -> None:
        self.hold = hold
        self.held = threading.Event()  # set once a request is being held
        self.landed = threading.Event()  # set once the held request was carried out
        self.status = 0  # Label Studio's status code for the held request, once it landed
        self._release = threading.Event()
        self._lock = threading.Lock()
        super().__init__(target_url)

    def __exit__(self, *exc: object) -> None:
        self._release.set()
        super().__exit__(*exc)

    def release(self, timeout_s: float = 60) -> int:
        """Forward the held request now; Label Studio's status code for it."""
        self._release.set()
        assert self.landed.wait(timeout_s), "the held request did not land"
        return self.status

    def arrived(self, method: str, path: str) -> object:
        with self._lock:
            held = not self.held.is_set() and self.hold(method, path)
            if held:
                self.held.set()
        if held:
            self._release.wait()
        return held

    def reply(self, method: str, path: str, answer: httpx.Response, state: object) -> Reply | None:
        if state:
            self.status = answer.status_code
            self.landed.set()
            return None  # its client gave up long ago
        return super().reply(method, path, answer, state)
