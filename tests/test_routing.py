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
from sampling.routing import BatchInfo, PlainSample
from sampling.wiring import build_router
from tests.test_sampler import FakeProducer

pytestmark = pytest.mark.unit


def plain(rewards: list[float]) -> list[PlainSample]:
    return [
        PlainSample(prompt=f"p{i}", response=f"r{i}", reward=r, reward_details={"fmt": r},
                    group_id=i // 2, index=i)
        for i, r in enumerate(rewards)
    ]  # fmt: skip


def test_plain_samples_become_valid_records_with_rank_distinct_ids(closing) -> None:
    producer = FakeProducer()
    router = closing(build_router(SamplingConfig(policy="threshold", threshold=0.5), producer))
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


def test_the_same_batch_routed_twice_is_deduped(closing) -> None:
    producer = FakeProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer))
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


def test_decide_is_plain_data_and_delivers_nothing(closing) -> None:
    producer = FakeProducer()
    router = closing(build_router(SamplingConfig(threshold=0.5), producer))
    offered = router.decide(plain([0.1, 0.9, 0.3]), BatchInfo("run", 2))
    assert producer.records == [] and offered.counts.submitted == 2
    assert [d.sample.prompt for d in offered.decisions] == ["p0", "p2"]
    assert offered.decisions[0].selection.policy == "threshold"
    record = parse_record(router.records.build(offered.decisions[0]))
    assert (record.prompt, record.selected_by.value) == ("p0", 0.1)


def test_chosen_samples_are_routed_with_their_reason_and_query_once(closing) -> None:
    producer = FakeProducer()
    router = closing(
        build_router(SamplingConfig(threshold=10.0), producer)
    )  # the policy: every finite one
    query = 'reward > 2.0 AND response CONTAINS "I agree"'
    samples = plain([2.5, math.nan, 3.0])
    counts = router.route_chosen(samples, BatchInfo("run", 4), reason="search", about=query)
    assert (counts.selected, counts.submitted) == (3, 3)
    records = [parse_record(record) for record in producer.records]
    assert {(r.selected_by.policy, r.selected_by.reason, r.selected_by.about) for r in records} == {
        ("search", "search", query)
    }
    assert [r.selected_by.value for r in records] == [2.5, None, 3.0]
    again = router.route_chosen(samples, BatchInfo("run", 4), reason="search", about=query)
    assert (again.deduped, again.submitted, len(producer.records)) == (3, 0, 3)
    # ... and the policy does not pick a sample routed by hand a second time.
    assert router.route(samples, BatchInfo("run", 4)).deduped == 2


def test_a_query_is_redacted_like_the_texts_and_capped(closing) -> None:
    producer = FakeProducer()
    router = closing(build_router(SamplingConfig(threshold=0.0), producer))
    sample = PlainSample(prompt="mail me", response="at jane.doe@example.com", reward=1.0)
    router.route_chosen([sample], BatchInfo("run", 1), reason="search",
                        about='response CONTAINS "jane.doe@example.com"')  # fmt: skip
    record = parse_record(producer.records[0])
    assert "jane.doe" not in record.response and "jane.doe" not in record.selected_by.about
    placeholder = record.response.removeprefix("at ")
    assert record.selected_by.about == f'response CONTAINS "{placeholder}"'
    router.route_chosen(plain([1.0]), BatchInfo("run", 2), reason="search", about="x" * 5000)
    assert len(parse_record(producer.records[1]).selected_by.about) == 1000
