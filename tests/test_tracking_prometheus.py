"""The `prometheus` logger backend: the run's latest scalars as gauges on /metrics."""

from __future__ import annotations

import httpx
import pytest

from lowtide.services.process import free_port
from rl.config import LoggerConfig
from rl.tracking.backends.prometheus_backend import PrometheusBackend, metric_name

pytestmark = pytest.mark.integration


def test_scalars_become_gauges_labelled_by_run() -> None:
    port = free_port()
    backend = PrometheusBackend("run-7", port, host="127.0.0.1")
    try:
        backend.log_scalars(3, {"reward/mean": 0.25, "timing_s/step": 0.5})
        backend.log_scalars(4, {"reward/mean": 0.5})
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        backend.close()
    assert 'lowtide_train_reward_mean{run="run-7"} 0.5' in text
    assert 'lowtide_train_timing_s_step{run="run-7"} 0.5' in text
    assert 'lowtide_train_step{run="run-7"} 4.0' in text


def test_the_scalars_a_trainer_logs_step_included_are_served() -> None:
    # The trainer logs `step` and `epoch` among its scalars; `step` is the step gauge already.
    port = free_port()
    backend = PrometheusBackend("run-8", port, host="127.0.0.1")
    try:
        backend.log_scalars(1, {"step": 1, "epoch": 0, "reward/mean": 0.25})
        backend.log_scalars(2, {"step": 2, "epoch": 0, "reward/mean": 0.5})
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    finally:
        backend.close()
    assert 'lowtide_train_step{run="run-8"} 2.0' in text
    assert 'lowtide_train_reward_mean{run="run-8"} 0.5' in text


@pytest.mark.unit
def test_names_and_config() -> None:
    assert metric_name("reward/keyword/mean") == "lowtide_train_reward_keyword_mean"
    assert LoggerConfig(name=["console", "prometheus"]).prometheus_port == 9110
