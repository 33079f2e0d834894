"""The routing core over plain per-sample data, as every adapter for another trainer uses it,
and the router an adapter builds from a run config."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lowtide.errors import UsageError
from lowtide.integrations import router_from_config
from sampling.config import SamplingConfig
from sampling.records import parse_record
from sampling.routing import BatchInfo, PlainSample, Router
from tests.test_sampler import FakeProducer

pytestmark = pytest.mark.unit


def plain(rewards: list[float]) -> list[PlainSample]:
    return [
        PlainSample(prompt=f"p{i}", response=f"r{i}", reward=r, reward_details={"fmt": r},
                    group_id=i // 2, index=i)
        for i, r in enumerate(rewards)
    ]  # fmt: skip


def test_plain_samples_become_valid_records_with_rank_distinct_ids() -> None:
    producer = FakeProducer()
    router = Router(SamplingConfig(policy="threshold", threshold=0.5), producer)
    samples = plain([0.1, 0.9, math.nan, 0.2])
    counts = [router.route(samples, BatchInfo("run", 3, rank=rank, model_name="m"))
              for rank in (0, 1)]  # fmt: skip
    assert [(c.selected, c.submitted) for c in counts] == [(2, 2), (2, 2)]  # NaN never selected
    records = [parse_record(record) for record in producer.records]
    assert {(r.rank, r.prompt, r.reward_details["fmt"]) for r in records} == {
        (0, "p0", 0.1), (0, "p3", 0.2), (1, "p0", 0.1), (1, "p3", 0.2)
    }  # fmt: skip
    assert len({r.sample_id for r in records}) == 4
    assert all(r.step == 3 and r.model.name_or_path == "m" for r in records)
    metrics = router.metrics(counts[0])
    assert metrics["sampling/selected"] == (2, "sum") and metrics["queue/depth"][1] == "max"


def test_the_same_batch_routed_twice_is_deduped() -> None:
    producer = FakeProducer()
    router = Router(SamplingConfig(threshold=0.5), producer)
    router.route(plain([0.1]), BatchInfo("run", 1))
    again = router.route(plain([0.1]), BatchInfo("run", 1))
    assert (again.deduped, again.submitted, len(producer.records)) == (1, 0, 1)


@pytest.mark.integration
def test_an_adapter_router_reads_the_config_file_and_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "lowtide.yaml"
    config.write_text("sampling: {policy: quantile, quantile: 0.25}\nqueue: {name: trl-review}\n")
    url = "redis://127.0.0.1:6390/3"
    router = router_from_config(environ={"LOWTIDE_CONFIG": str(config), "REDIS_URL": url})
    try:
        assert router.config.policy == "quantile" and router.config.quantile == 0.25
        assert router.producer.config.name == "trl-review"
        assert router.producer.config.redis_url.get_secret_value() == url
    finally:
        router.close(deadline_s=0.5)


def test_an_adapter_router_refuses_a_misspelled_key(tmp_path: Path) -> None:
    config = tmp_path / "lowtide.yaml"
    config.write_text("sampling: {treshold: 0.3}\n")
    with pytest.raises(UsageError, match=r"sampling.treshold.*did you mean threshold"):
        router_from_config(config, environ={})
