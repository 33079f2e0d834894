"""A reward server in front of the user's: OpenRLHF's `--reward.remote_url` points here, every POST
goes on to the upstream server, and its answer comes back unchanged (status, body bytes,
content type), so OpenRLHF retries and fails exactly as it would without lowtide. Answers with
status 200 are routed after they are sent: the routing core never delays an answer.

A transport failure upstream (refused, timed out) becomes 502/504 with a one-line body: OpenRLHF
counts it as a failed try, as it counts a refused connection.
"""

from __future__ import annotations

import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from rl.jsonl import parse_value
from sampling.sources.openrlhf import RewardCall, RewardRouting

log = logging.getLogger("lowtide.openrlhf_proxy")
UPSTREAM_TIMEOUT_S = 180.0  # OpenRLHF gives a reward request 180 s
# Not passed on: they describe the upstream connection, or http.server writes its own.
_NOT_PASSED = {"connection", "keep-alive", "transfer-encoding", "content-length", "server", "date"}


class ProxyStats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.upstream_errors = 0  # answers that were not 200, and transport failures

    def count(self, ok: bool) -> None:
        with self.lock:
            self.requests += 1
            self.upstream_errors += not ok


class RewardProxy:
    """Serves on (host, port) until `shutdown()`; `serve_forever()` blocks."""

    def __init__(
        self,
        upstream: str,
        routing: RewardRouting,
        *,
        host: str = "127.0.0.1",
        port: int = 5001,
        timeout_s: float = UPSTREAM_TIMEOUT_S,
    ) -> None:
        self.upstream = upstream
        self.routing = routing
        self.stats = ProxyStats()
        # One pooled client for every request thread (httpx clients are thread-safe).
        self.client = httpx.Client(timeout=timeout_s, limits=httpx.Limits(max_connections=256))
        handler = type("Handler", (_Handler,), {"proxy": self})
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        self.server.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self.server.shutdown()

    def close(self, deadline_s: float = 10.0) -> None:
        """Stop listening, route what is waiting, flush the producer."""
        self.server.server_close()
        self.client.close()
        self.routing.close(deadline_s)

    def forward(self, body: bytes, content_type: str | None) -> tuple[int, bytes, dict[str, str]]:
        # identity: the body comes back as the server wrote it, not re-encoded.
        headers = {"accept-encoding": "identity"}
        if content_type:
            headers["content-type"] = content_type
        try:
            response = self.client.post(self.upstream, content=body, headers=headers)
        except httpx.TimeoutException as exc:
            return _failure(HTTPStatus.GATEWAY_TIMEOUT, f"upstream timed out: {exc}")
        except httpx.HTTPError as exc:
            return _failure(HTTPStatus.BAD_GATEWAY, f"upstream unreachable: {exc}")
        passed = {k: v for k, v in response.headers.multi_items() if k not in _NOT_PASSED}
        passed.pop("content-encoding", None)  # if it was encoded anyway, httpx decoded it
        return response.status_code, response.content, passed

    def route(self, request_body: bytes, status: int, answer_body: bytes) -> None:
        """After the answer went out: hand the request and answer to the routing thread."""
        if status != HTTPStatus.OK:
            return
        try:
            request: Any = parse_value(request_body)  # bounded: BadLine is a ValueError
            answer: Any = parse_value(answer_body)
            call = RewardCall(
                queries=request["query"],
                prompts=request["prompts"],
                labels=request.get("labels") or [],
                answer=answer,
            )
        except (ValueError, KeyError, TypeError) as exc:
            self.routing._error(f"a request was not routed: {type(exc).__name__}: {exc}")
            return
        self.routing.observe(call)


def _failure(status: HTTPStatus, message: str) -> tuple[int, bytes, dict[str, str]]:
    log.warning("%s", message)
    return status.value, (message + "\n").encode(), {"content-type": "text/plain"}


class _Handler(BaseHTTPRequestHandler):
    proxy: RewardProxy
    protocol_version = "HTTP/1.1"  # keep-alive for clients that reuse connections
    # Headers and body leave in two writes: with Nagle's algorithm the body would wait for the
    # client's delayed ACK (~40 ms a request).
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        status, answer, headers = self.proxy.forward(body, self.headers.get("content-type"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        self.wfile.flush()
        self.proxy.stats.count(status == HTTPStatus.OK)
        self.proxy.route(body, status, answer)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug(format, *args)
