"""`prometheus`: the run's latest scalars as gauges on an HTTP endpoint, for a cluster's
Prometheus (and the Grafana dashboard in deploy/). Rank 0 serves it, like every backend.

`reward/mean` becomes `lowtide_train_reward_mean{run="<run id>"}`; `lowtide_train_step` is
the last logged step. Port `logger.prometheus_port` (9110) on `logger.prometheus_host`:
loopback by default, so that other users and hosts read nothing; a pod that Prometheus scrapes
sets `0.0.0.0` (deploy/k8s/examples/trainer-job.yaml does, behind its NetworkPolicy).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from prometheus_client import CollectorRegistry, Gauge, start_http_server

from rl.config import LoggerConfig
from rl.tracking.backends.base import RunInfo, Table

_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_]")


def metric_name(key: str) -> str:
    return "lowtide_train_" + _NOT_ALLOWED.sub("_", key).strip("_")


class PrometheusBackend:
    name = "prometheus"
    remote = False  # serves numbers; never a table's text

    def __init__(self, run_id: str, port: int, host: str = "127.0.0.1") -> None:
        self.run_id = run_id
        self.registry = CollectorRegistry(auto_describe=False)
        self.gauges: dict[str, Gauge] = {}
        self.step = Gauge("lowtide_train_step", "Last logged step", ["run"], registry=self.registry)
        self.server, self.thread = start_http_server(port, addr=host, registry=self.registry)

    def log_scalars(self, step: int, values: Mapping[str, float]) -> None:
        self.step.labels(self.run_id).set(step)
        for key, value in values.items():
            name = metric_name(key)
            if name == "lowtide_train_step":  # the trainer's `step` scalar: set just above
                continue
            gauge = self.gauges.get(name)
            if gauge is None:
                gauge = Gauge(name, f"Training metric {key}", ["run"], registry=self.registry)
                self.gauges[name] = gauge
            gauge.labels(self.run_id).set(value)

    def log_histograms(self, step: int, values: Mapping[str, Sequence[float]]) -> None:
        """Histograms of one step do not map onto Prometheus histograms; the files have them."""

    def log_table(self, step: int, table: Table) -> None:
        """Tables are not metrics."""

    def close(self) -> None:
        self.server.shutdown()


def make_prometheus_backend(info: RunInfo, config: LoggerConfig) -> PrometheusBackend:
    return PrometheusBackend(info.run_id, config.prometheus_port, config.prometheus_host)
