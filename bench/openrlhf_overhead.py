"""What lowtide adds to OpenRLHF's reward path, against the same path without it, in one run:

1. the file form: `routed(reward_func)` vs `reward_func`, called one sample per call from a pool
   of threads as OpenRLHF's `asyncio.to_thread` does, with a cheap rule-based reward (~2 KB
   responses, about half of them routed to a redis-server of our own). Wall time ratio (goal
   <= 1.05) and the time a call spends in the wrapper on the calling thread (goal: p99 <= 50 µs);
2. the HTTP form: a POST per sample (a new connection each, as OpenRLHF opens a session per
   request) to a reward server directly vs through `lowtide openrlhf proxy`, both servers in
   processes of their own. Latency p50/p99 and what the proxy adds (goal: p50 <= 2 ms).
Knobs: BENCH_CALLS (20000), BENCH_REQUESTS (500).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _child_run import own_redis_server, percentile
from _quick import announce, knob

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CALLS = knob("CALLS", 20000, 500)
REQUESTS = knob("REQUESTS", 500, 50)
THREADS = 8
WORDS = re.compile(r"\b(red|green|blue)\b")


def reward_func(queries: list[str], prompts: list[str], labels: list[str]) -> dict[str, Any]:
    """A rule-based reward, as cheap as they come: the label named in the response or not."""
    rewards = [0.9 if labels[i] in WORDS.findall(q[len(p) :]) else 0.1
               for i, (q, p) in enumerate(zip(queries, prompts, strict=True))]  # fmt: skip
    return {"rewards": rewards, "scores": rewards, "extra_logs": {"length": [len(queries[0])]}}


def calls(count: int) -> list[tuple[list[str], list[str], list[str]]]:
    filler = "lorem ipsum " * 170  # ~2 KB
    return [([f"<|bos|>User: colour {i}?\nAssistant: {filler}{'red' if i % 2 else 'blue'}<|eos|>"],
             [f"<|bos|>User: colour {i}?\nAssistant:"], ["red"]) for i in range(count)]  # fmt: skip


def routed_all(routing: Any) -> None:
    """Wait (sleeping) until every call so far is routed and its records are on the queue."""
    producer = routing.router.producer.stats
    while routing.waiting:
        time.sleep(0.01)
    while producer.enqueued + producer.spooled < routing.stats.submitted:
        time.sleep(0.01)


def file_form(url: str, spool: Path) -> None:
    from lowtide.openrlhf import routed

    work = calls(CALLS)
    wrapped = routed(
        reward_func,
        overrides=[f"--queue.redis_url={url}", "--queue.name=bench-openrlhf",
                   f"--queue.spool_dir={spool}", "--sampling.threshold=0.5",
                   "--sampling.max_per_step=100000", "--sampling.max_per_minute=10000000"],
        run_id=f"bench-{time.time_ns()}",
        quiet_s=0.2,
    )  # fmt: skip
    inner: list[float] = []

    def timed(args: tuple[list[str], list[str], list[str]]) -> None:
        started = time.perf_counter()
        wrapped(*args)
        inner.append(time.perf_counter() - started)

    def run(func: Any, items: list[Any]) -> float:
        with ThreadPoolExecutor(THREADS) as pool:  # what asyncio.to_thread hands calls to
            started = time.perf_counter()
            list(pool.map(lambda args: func(*args), items))
            return time.perf_counter() - started

    plain_s = wrapped_s = plain_cpu = wrapped_cpu = 0.0
    for _ in range(3):  # interleaved: drift on a shared machine hits both alike
        cpu = time.process_time()
        plain_s += run(reward_func, work)
        plain_cpu += time.process_time() - cpu
        cpu = time.process_time()
        wrapped_s += run(wrapped, work)
        routed_all(wrapped.routing)  # its routing CPU counts too
        wrapped_cpu += time.process_time() - cpu
    # The wrapper's own share of a call on the calling thread: routed minus plain, per call.
    plain_each = []
    for args in work[:5000]:
        started = time.perf_counter()
        reward_func(*args)
        plain_each.append(time.perf_counter() - started)
        timed(args)
    wrapped.close(deadline_s=30)
    stats = wrapped.routing.stats
    added = [w - p for w, p in zip(inner, plain_each, strict=True)]
    per_sample_us = 1e6 * (wrapped_cpu - plain_cpu) / (3 * CALLS)
    print(f"file form, {CALLS} calls x 3 from {THREADS} threads, every 2nd sample routed: plain "
          f"{plain_s / 3:.3f} s, routed {wrapped_s / 3:.3f} s, ratio {wrapped_s / plain_s:.2f} "
          f"(report: a ~{1e6 * percentile(plain_each, 0.5):.0f} µs CPU-only reward is the worst "
          f"case); routing CPU {per_sample_us:.0f} µs a sample, on the background threads; "
          f"{stats.submitted:,} samples routed in {stats.windows} windows")  # fmt: skip
    print(f"file form, time added on the calling thread: median "
          f"{1e6 * percentile(added, 0.5):.1f} µs, p99 {1e6 * percentile(added, 0.99):.1f} µs "
          "(goal: p99 <= 50 µs)")  # fmt: skip


class _Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as real servers (uvicorn) do

    def do_POST(self) -> None:
        data = json.loads(self.rfile.read(int(self.headers["content-length"])))
        body = json.dumps(reward_func(data["query"], data["prompts"], data["labels"])).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_upstream(port: int) -> None:
    ThreadingHTTPServer(("127.0.0.1", port), _Upstream).serve_forever()


def wait_for(port: int) -> None:
    from tests.helpers.listening import wait_for_http

    if not wait_for_http(port):
        raise SystemExit(f"nothing listens on {port}")


def latencies(port: int, work: list[Any], headers: dict[str, str] | None = None) -> list[float]:
    found = []
    for queries, prompts, labels in work:
        body = json.dumps({"query": queries, "prompts": prompts, "labels": labels})
        started = time.perf_counter()
        # A new connection per request, as OpenRLHF opens a session per request.
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        sent = {"content-type": "application/json", **(headers or {})}
        connection.request("POST", "/get_reward", body, sent)
        response = connection.getresponse()
        response.read()
        connection.close()
        found.append(time.perf_counter() - started)
        assert response.status == 200, response.status
    return found


def http_form(url: str, spool: Path) -> None:
    from lowtide.services.process import free_port

    upstream_port, proxy_port = free_port(), free_port()
    token = secrets.token_urlsafe(32)  # the proxy refuses requests without it
    upstream = subprocess.Popen([sys.executable, __file__, "--upstream", str(upstream_port)])
    proxy = subprocess.Popen(
        [sys.executable, "-m", "lowtide", "openrlhf", "proxy", "--port", str(proxy_port),
         "--upstream", f"http://127.0.0.1:{upstream_port}/get_reward",
         f"--queue.redis_url={url}", "--queue.name=bench-openrlhf-http",
         f"--queue.spool_dir={spool}", "--sampling.threshold=0.5",
         "--sampling.max_per_minute=10000000"],
        cwd=REPO, stderr=subprocess.DEVNULL, env={**os.environ, "LOWTIDE_PROXY_TOKEN": token},
    )  # fmt: skip
    try:
        wait_for(upstream_port)
        wait_for(proxy_port)
        work = calls(REQUESTS)
        auth = {"authorization": f"Bearer {token}"}
        direct: list[float] = []
        proxied: list[float] = []
        for chunk in range(0, REQUESTS, 50):  # interleaved
            direct += latencies(upstream_port, work[chunk : chunk + 50])
            proxied += latencies(proxy_port, work[chunk : chunk + 50], auth)
    finally:
        proxy.send_signal(signal.SIGTERM)
        proxy.wait(timeout=30)
        upstream.terminate()
        upstream.wait(timeout=10)
    d50, p50 = percentile(direct, 0.5), percentile(proxied, 0.5)
    print(f"HTTP form, {REQUESTS} requests: direct p50 {1e3 * d50:.2f} ms, p99 "
          f"{1e3 * percentile(direct, 0.99):.2f} ms; through the proxy p50 {1e3 * p50:.2f} ms, "
          f"p99 {1e3 * percentile(proxied, 0.99):.2f} ms; added p50 {1e3 * (p50 - d50):.2f} ms, "
          f"ratio {p50 / d50:.2f} (goal: added p50 <= 2 ms)")  # fmt: skip


def main() -> None:
    announce()
    with own_redis_server() as url, tempfile.TemporaryDirectory() as tmp:
        file_form(url, Path(tmp) / "spool")
        http_form(url, Path(tmp) / "spool-http")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--upstream"]:
        serve_upstream(int(sys.argv[2]))
    else:
        main()
