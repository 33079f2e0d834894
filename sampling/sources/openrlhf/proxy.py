"""A reward server in front of the user's: OpenRLHF's `--reward.remote_url` points here, every POST
goes on to the upstream server, and its answer comes back unchanged (status, body bytes,
content type), so OpenRLHF retries and fails exactly as it would without lowtide. Answers with
status 200 are routed after they are sent: the routing core never delays an answer.

A transport failure upstream (refused, timed out) becomes 502/504 with a one-line body: OpenRLHF
counts it as a failed try, as it counts a refused connection.

Whatever reaches the port could put text in front of reviewers and into reward-model data, so:
- every request carries the token, as `Authorization: Bearer TOKEN` or as the password of HTTP
  Basic (what aiohttp sends for `http://user:TOKEN@host/...`: OpenRLHF's client passes no
  headers, only the URL); without it, 401 before the body is read, nothing forwarded or routed;
- a body over `max_body` is refused (413) from its Content-Length before it is read, a chunked
  one as soon as it passes the cap; a malformed length is 400;
- one event loop reads every connection: a slow client holds a socket and what it sent, never a
  thread, and is dropped when its request is not in within `read_timeout_s`. Connections beyond
  `max_connections`, and bodies beyond `max_buffered` bytes in all, get 503 at once;
- an upstream call has a deadline (`timeout_s`), and at most `upstream_calls` run at once.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import http.client
import io
import logging
import re
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from typing import Any

import httpx

from rl.jsonl import parse_value
from rl.masking import mask_text
from sampling.sources.openrlhf.adapter import RewardRouting
from sampling.sources.openrlhf.answers import RewardCall

log = logging.getLogger("lowtide.openrlhf_proxy")
UPSTREAM_TIMEOUT_S = 180.0  # OpenRLHF gives a reward request 180 s
# Not passed on: they describe the upstream connection, or this server writes its own.
_NOT_PASSED = {
    b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"content-encoding",
    b"server", b"date",
}  # fmt: skip
MAX_HEAD = 64 * 1024  # request line and headers together
LISTEN_BACKLOG = 1024  # connections the kernel queues before the loop accepts them
LINGER_S = 1.0  # after a refusal, how long what the client still sends is read and dropped
LINGER_BYTES = 1024 * 1024
STOP_GRACE_S = 5.0  # on shutdown, how long requests already forwarded may take to finish
_DIGITS = re.compile(r"[0-9]+")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


@dataclass(frozen=True)
class Limits:
    """What one client, and all of them together, may hold of the proxy."""

    max_body: int = 16 * 1024 * 1024  # one request's body; OpenRLHF sends one sample a request
    read_timeout_s: float = 30.0  # to send a whole request (head and body), or read an answer
    max_connections: int = 512  # open at once; more get 503
    max_buffered: int = 256 * 1024 * 1024  # bodies held at once (read, forwarded, routed)
    upstream_calls: int = 64  # upstream requests at once; more wait for a free connection


class ProxyStats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.upstream_errors = 0  # answers that were not 200, and transport failures
        self.refused = 0  # requests answered here (no token, too large, malformed, overloaded)

    def count(self, ok: bool) -> None:
        with self.lock:
            self.requests += 1
            self.upstream_errors += not ok

    def count_refused(self) -> None:
        with self.lock:
            self.refused += 1


class Refusal(Exception):
    """A request answered here, never forwarded; the connection closes after it."""

    def __init__(self, status: HTTPStatus, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


@dataclass
class Request:
    headers: http.client.HTTPMessage
    keep_alive: bool
    body: bytes = b""
    reserved: int = 0  # bytes of the buffer budget this request holds


def token_matches(authorization: str | None, token: bytes) -> bool:
    """`Bearer TOKEN`, or `Basic` with TOKEN as the password (any user name)."""
    scheme, _, value = (authorization or "").strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer":
        given = value.encode("latin-1", "replace")  # headers arrive decoded as latin-1
    elif scheme.lower() == "basic":
        try:
            given = base64.b64decode(value, validate=True).partition(b":")[2]
        except (binascii.Error, ValueError):
            return False
    else:
        return False
    return hmac.compare_digest(given, token)  # constant time: no guessing byte by byte


def body_length(headers: http.client.HTTPMessage, max_body: int) -> int | None:
    """The body's length from Content-Length (0 without one), None for a chunked body."""
    encodings = headers.get_all("transfer-encoding") or []
    lengths = headers.get_all("content-length") or []
    if encodings:
        if lengths:  # two framings: which one a hop believes is how requests get smuggled
            raise Refusal(HTTPStatus.BAD_REQUEST, "both Content-Length and Transfer-Encoding")
        names = [name.strip().lower() for value in encodings for name in value.split(",")]
        if names != ["chunked"]:
            raise Refusal(HTTPStatus.NOT_IMPLEMENTED, "only chunked transfer encoding is read")
        return None
    if not lengths:
        return 0
    values = {value.strip() for value in lengths}
    value = values.pop()
    if values or not _DIGITS.fullmatch(value):
        raise Refusal(HTTPStatus.BAD_REQUEST, "Content-Length is not one whole number")
    if len(value) > 18 or int(value) > max_body:
        raise Refusal(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {max_body} bytes")
    return int(value)


def parse_head(head: bytes) -> tuple[str, str, http.client.HTTPMessage]:
    """(method, version, headers) of a request head that ends with an empty line."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refusal(HTTPStatus.BAD_REQUEST, "not an HTTP/1.x request line")
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except http.client.HTTPException as error:  # a line over 64 KiB, over 100 headers
        raise Refusal(HTTPStatus.BAD_REQUEST, f"bad headers: {type(error).__name__}") from None
    return parts[0], parts[2], headers


def keeps_alive(version: str, headers: http.client.HTTPMessage) -> bool:
    tokens = {t.strip().lower() for v in headers.get_all("connection") or [] for t in v.split(",")}
    return version == "HTTP/1.1" and "close" not in tokens


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    """The request line and headers; None when the client closed before sending any."""
    try:
        return await reader.readuntil(b"\r\n\r\n")  # the reader's limit is MAX_HEAD
    except asyncio.IncompleteReadError as error:
        if error.partial.strip():
            raise ConnectionResetError("closed inside a request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise Refusal(
            HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, f"request head over {MAX_HEAD} bytes"
        ) from None


async def read_chunked(reader: asyncio.StreamReader, max_body: int) -> bytes:
    """A chunked body, refused as soon as it passes `max_body`; trailers are dropped."""
    body = bytearray()
    try:
        while True:
            size_text = (await reader.readuntil(b"\r\n"))[:-2].split(b";", 1)[0].strip()
            if not _HEX.fullmatch(size_text):
                raise Refusal(HTTPStatus.BAD_REQUEST, "bad chunk size")
            size = int(size_text, 16)
            if len(body) + size > max_body:
                raise Refusal(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {max_body} bytes")
            if size == 0:
                break
            body += await reader.readexactly(size)
            if await reader.readexactly(2) != b"\r\n":
                raise Refusal(HTTPStatus.BAD_REQUEST, "chunk not followed by CRLF")
        for _ in range(100):
            if await reader.readuntil(b"\r\n") == b"\r\n":
                return bytes(body)
    except asyncio.LimitOverrunError:
        pass
    raise Refusal(HTTPStatus.BAD_REQUEST, "chunk header or trailers too long")


def response_head(
    status: int, headers: list[tuple[bytes, bytes]], length: int, keep_alive: bool
) -> bytes:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:  # a code the upstream made up: the number is what clients read
        reason = ""
    lines = [f"HTTP/1.1 {status} {reason}".encode(), *(name + b": " + v for name, v in headers)]
    lines.append(f"content-length: {length}".encode())
    lines.append(f"date: {formatdate(usegmt=True)}".encode())
    if not keep_alive:
        lines.append(b"connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


class RewardProxy:
    """Serves on (host, port) until `shutdown()`; `serve_forever()` blocks (an asyncio loop on the
    calling thread). Binds in the constructor, so a port in use is an OSError here."""

    def __init__(
        self,
        upstream: str,
        routing: RewardRouting,
        *,
        token: str,
        host: str = "127.0.0.1",
        port: int = 5001,
        timeout_s: float = UPSTREAM_TIMEOUT_S,
        limits: Limits | None = None,
    ) -> None:
        if not token:
            raise ValueError("the proxy needs a token")
        self.upstream = upstream
        self.routing = routing
        self.timeout_s = timeout_s
        self.limits = limits or Limits()
        self.stats = ProxyStats()
        self._token = token.encode()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET  # "localhost": 127.0.0.1
        self._socket = socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
        self._buffered = 0  # bytes of bodies held now; touched on the loop only
        self._connections: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}
        self._busy: set[asyncio.Task[Any]] = set()  # past reading: forwarding or routing
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._client: httpx.AsyncClient | None = None  # made on the loop that uses it
        # Reading answers and handing them to routing: off the loop, one at a time, in order.
        self._router = ThreadPoolExecutor(1, thread_name_prefix="lowtide-proxy-route")

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._socket.getsockname()[:2]
        return str(host), int(port)

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serving (from another thread) and wait until `serve_forever` returned."""
        self._stop.set()
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return  # not serving yet: `_serve` sees the flag when it starts
        with contextlib.suppress(RuntimeError):  # the loop already ended
            loop.call_soon_threadsafe(wake.set)
        self._stopped.wait()

    def close(self, deadline_s: float = 10.0) -> None:
        """Stop listening, route what is waiting, flush the producer."""
        self._socket.close()
        self._router.shutdown(wait=True)
        self.routing.close(deadline_s)

    # ---- the loop ----------------------------------------------------------------------------

    async def _serve(self) -> None:
        wake = asyncio.Event()
        self._wake, self._loop = wake, asyncio.get_running_loop()
        if self._stop.is_set():
            return
        limits = httpx.Limits(max_connections=self.limits.upstream_calls)
        async with httpx.AsyncClient(timeout=self.timeout_s, limits=limits) as client:
            self._client = client
            server = await asyncio.start_server(
                self._connection, sock=self._socket, limit=MAX_HEAD, backlog=LISTEN_BACKLOG
            )
            await wake.wait()
            server.close()
            await self._drain()

    async def _drain(self) -> None:
        """Drop connections that are still sending; give forwarded requests a moment."""
        # Closed rather than cancelled: their tasks then end as on a client's hang-up.
        for task, writer in list(self._connections.items()):
            if task not in self._busy:
                writer.transport.abort()
        if self._busy:
            await asyncio.wait(set(self._busy), timeout=STOP_GRACE_S)
        for writer in list(self._connections.values()):
            writer.transport.abort()
        if self._connections:
            await asyncio.wait(set(self._connections), timeout=1.0)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            if len(self._connections) > self.limits.max_connections:
                self.stats.count_refused()
                writer.write(_refusal_bytes(Refusal(HTTPStatus.SERVICE_UNAVAILABLE, "busy")))
                return
            while not self._stop.is_set() and await self._exchange(reader, writer, task):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass  # the client went away or stopped reading: nothing to answer
        finally:
            self._connections.pop(task, None)
            self._busy.discard(task)
            writer.close()

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, task: asyncio.Task[Any]
    ) -> bool:
        """One request and its answer; False when the connection should close."""
        try:
            # One deadline for the whole request, idle wait included: a client sending a byte
            # now and then cannot hold its connection longer than this.
            request = await asyncio.wait_for(
                self._read_request(reader, writer), self.limits.read_timeout_s
            )
        except Refusal as refusal:
            await self._refuse(reader, writer, refusal)
            return False
        if request is None:
            return False
        self._busy.add(task)
        try:
            keep = request.keep_alive and not self._stop.is_set()
            status, answer, headers = await self._forward(
                request.body, request.headers.get("content-type")
            )
            writer.write(response_head(status, headers, len(answer), keep) + answer)
            await asyncio.wait_for(writer.drain(), self.limits.read_timeout_s)
            self.stats.count(status == HTTPStatus.OK)
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(self._router, self.route, request.body, status, answer)
        finally:
            self._buffered -= request.reserved
            self._busy.discard(task)
        return keep

    async def _read_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> Request | None:
        head = await read_head(reader)
        if head is None:
            return None
        method, version, headers = parse_head(head)
        if method != "POST":
            raise Refusal(HTTPStatus.METHOD_NOT_ALLOWED, "POST only", {"allow": "POST"})
        if not token_matches(headers.get("authorization"), self._token):
            challenge = {"www-authenticate": 'Bearer realm="lowtide", Basic realm="lowtide"'}
            raise Refusal(HTTPStatus.UNAUTHORIZED, "no valid token", challenge)
        length = body_length(headers, self.limits.max_body)
        request = Request(headers, keeps_alive(version, headers))
        request.reserved = self._reserve(self.limits.max_body if length is None else length)
        try:
            if (headers.get("expect") or "").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # checked: the client may send
            if length is None:
                request.body = await read_chunked(reader, self.limits.max_body)
            else:
                request.body = await reader.readexactly(length)
        except BaseException:
            self._buffered -= request.reserved
            raise
        return request

    def _reserve(self, size: int) -> int:
        if self._buffered + size > self.limits.max_buffered:
            raise Refusal(HTTPStatus.SERVICE_UNAVAILABLE, "busy", {"retry-after": "1"})
        self._buffered += size
        return size

    async def _refuse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, refusal: Refusal
    ) -> None:
        self.stats.count_refused()
        log.debug("refused a request: %s %s", refusal.status.value, refusal)
        writer.write(_refusal_bytes(refusal))
        await asyncio.wait_for(writer.drain(), LINGER_S)
        if writer.can_write_eof():
            writer.write_eof()
        # Closing with unread bytes resets the connection, and the client may lose the answer
        # before it reads it: drop what it is still sending, for a moment and up to a limit.
        with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
            await asyncio.wait_for(_discard(reader, LINGER_BYTES), LINGER_S)

    # ---- forwarding and routing --------------------------------------------------------------

    async def _forward(
        self, body: bytes, content_type: str | None
    ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        # identity: the body comes back as the server wrote it, not re-encoded.
        assert self._client is not None, "forwarding before serving"
        headers = {"accept-encoding": "identity"}
        if content_type:
            headers["content-type"] = content_type
        try:
            # httpx's timeout is per read; this one is for the whole call.
            response = await asyncio.wait_for(
                self._client.post(self.upstream, content=body, headers=headers), self.timeout_s
            )
        except (asyncio.TimeoutError, httpx.TimeoutException):
            return _failure(HTTPStatus.GATEWAY_TIMEOUT, f"upstream timed out ({self.timeout_s} s)")
        except httpx.HTTPError as exc:
            return _failure(HTTPStatus.BAD_GATEWAY, f"upstream unreachable: {exc}")
        passed = [(k, v) for k, v in response.headers.raw if k.lower() not in _NOT_PASSED]
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


async def _discard(reader: asyncio.StreamReader, limit: int) -> None:
    dropped = 0
    while dropped < limit:
        data = await reader.read(64 * 1024)
        if not data:
            return
        dropped += len(data)


def _refusal_bytes(refusal: Refusal) -> bytes:
    body = f"{refusal}\n".encode()
    headers = [(b"content-type", b"text/plain")]
    headers += [(k.encode(), v.encode()) for k, v in refusal.headers.items()]
    return response_head(refusal.status.value, headers, len(body), keep_alive=False) + body


def _failure(status: HTTPStatus, message: str) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    message = mask_text(message)  # goes back to the client: no upstream password in it
    log.warning("%s", message)
    return status.value, (message + "\n").encode(), [(b"content-type", b"text/plain")]
