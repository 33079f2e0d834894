"""An HTTP proxy in front of Label Studio that loses answers: a request matching `lose` is
forwarded and carried out, but its client gets a 502 instead of the answer, as from a gateway
that timed out while the server went on. Everything else passes through."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from lowtide.services.process import free_port

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class LostAnswerProxy:
    def __init__(self, target_url: str, lose: Callable[[str, str], bool]) -> None:
        self.target, self.lose = target_url.rstrip("/"), lose
        self.lost: list[str] = []  # "METHOD path" of each answer it lost
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())

    def __enter__(self) -> LostAnswerProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                answer = httpx.request(self.command, proxy.target + self.path, headers=headers,
                                       content=body, timeout=60)  # fmt: skip
                if proxy.lose(self.command, self.path):
                    proxy.lost.append(f"{self.command} {self.path}")
                    status, content, kept = 502, b"Bad Gateway", {}
                else:
                    status, content = answer.status_code, answer.content
                    kept = {k: v for k, v in answer.headers.items()
                            if k.lower() not in HOP_BY_HOP | {"content-encoding"}}  # fmt: skip
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
