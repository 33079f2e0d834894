"""Prometheus metrics of the annotation workers, read from Redis at each scrape.

The counters live in Redis (ledger.py), so one endpoint reports every worker of the queue,
whichever process serves it, and a restarted worker does not reset them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import redis
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from rq import Queue
from rq.registry import FailedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

from annotation import ledger

log = logging.getLogger("annotation.worker")


class AnnotationCollector:
    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    def collect(self) -> Iterator[Metric]:
        connection = self.queue.connection
        up = GaugeMetricFamily("lowtide_redis_up", "1 if Redis answered this scrape")
        try:
            stats = ledger.read_stats(connection, self.queue.name)
            depths = {
                "waiting": self.queue.count,
                "started": StartedJobRegistry(queue=self.queue).count,
                "scheduled": ScheduledJobRegistry(queue=self.queue).count,
                "failed": FailedJobRegistry(queue=self.queue).count,
            }
        except redis.RedisError:
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        labels = ["queue"]
        for name, value in stats.counters.items():
            help_text = ledger.COUNTERS[name]
            family = CounterMetricFamily(f"lowtide_annotation_{name}", help_text, labels=labels)
            family.add_metric([self.queue.name], value)
            yield family
        jobs = GaugeMetricFamily(
            "lowtide_queue_jobs", "Jobs of the annotation queue by state", labels=["queue", "state"]
        )
        for state, count in depths.items():
            jobs.add_metric([self.queue.name, state], count)
        yield jobs
        latency = HistogramMetricFamily(
            "lowtide_annotation_import_seconds",
            "Duration of one Label Studio import request",
            labels=labels,
        )
        buckets = [(f"{bound:g}", count) for bound, count in stats.import_seconds_buckets.items()]
        buckets.append(("+Inf", stats.import_seconds_count))
        latency.add_metric([self.queue.name], buckets, stats.import_seconds_sum)
        yield latency


def serve_metrics(queue: Queue, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """/metrics (Prometheus) and /healthz (200 when Redis answers, else 503) on host:port, in
    a daemon thread."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(AnnotationCollector(queue))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path == "/metrics":
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            elif path == "/healthz":
                healthy = _redis_answers(queue.connection)
                body = b"ok\n" if healthy else b"redis unreachable\n"
                self._send(200 if healthy else 503, body, "text/plain")
            else:
                self._send(404, b"/metrics or /healthz\n", "text/plain")

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # scrapes every few seconds: no log lines
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="lowtide-metrics", daemon=True).start()
    log.info("metrics on http://%s:%d/metrics, health on /healthz", host, port)
    return server


def _redis_answers(connection: redis.Redis) -> bool:
    try:
        return bool(connection.ping())
    except redis.RedisError:
        return False
