"""Valid RolloutRecord dicts, as the sampler puts them on the queue."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from rl.samples import Sample
from sampling.records import RolloutRecord, Selection


def rollout_record(
    i: int, run_id: str = "run-1", reward: float = 0.05, response: str | None = None
) -> dict[str, Any]:
    sample = Sample(
        index=i,
        group_id=i // 4,
        prompt=f"Name a colour, please ({i}).",
        response=response if response is not None else f"I would rather not say ({i}).",
        prompt_ids=(1, 2, 3),
        response_ids=(4, 5),
        truncated=False,
        reward=reward,
        reward_details=MappingProxyType({"keyword": 0.0, "format": reward}),
        advantage=-0.5,
    )
    record = RolloutRecord.from_sample(
        sample,
        run_id=run_id,
        step=i // 16,
        rank=0,
        model_name_or_path="./models/tiny",
        checkpoint_step=None,
        generation={"temperature": 1.0, "max_new_tokens": 32},
        selection=Selection(policy="threshold", parameter={"threshold": 0.2}, value=reward),
    )
    return record.model_dump(mode="json")


def rollout_records(start: int, count: int, **kwargs: Any) -> list[dict[str, Any]]:
    return [rollout_record(i, **kwargs) for i in range(start, start + count)]


class CapturingProducer:
    """A producer that builds what it is handed at once, as the real one does on its thread."""

    stats = None

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def submit(self, pending: list[Any]) -> None:
        self.records += [item.build() for item in pending]

    def close(self, deadline_s: float = 0.0) -> None:
        pass


def comparison_records(
    run_id: str,
    prompt: str,
    responses: list[str],
    rewards: list[float],
    size: int = 4,
    step: int = 0,
) -> list[dict[str, Any]]:
    """The records the routing core makes of one prompt group in comparison mode (threshold
    0.2, so the group's responses rewarded below it are selected)."""
    from sampling.batch import BatchInfo, PlainSample
    from sampling.config import SamplingConfig
    from sampling.wiring import build_router

    samples = [
        PlainSample(prompt, response, reward, {"keyword": reward}, group_id=0, index=i)
        for i, (response, reward) in enumerate(zip(responses, rewards, strict=True))
    ]
    producer = CapturingProducer()
    config = SamplingConfig.model_validate({"compare_size": size, "watch": {"enabled": False}})
    router = build_router(config, producer)
    router.route(samples, BatchInfo(run_id, step, model_name="./models/tiny"))
    router.close(1.0)
    return producer.records
