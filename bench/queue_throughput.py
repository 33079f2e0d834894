"""Routing cost, measured against baselines in the same run, on a redis-server of our own:

1. records/s through our producer (2 KB records, RQ JSON jobs of 64) vs a raw pipelined RPUSH of
   the same JSON with redis-py, the Python client's lower bound (goal: ours >= 0.4x raw);
2. the sampler hook's cost on the trainer thread for a 256-sample batch (goal: p99 <= 1 ms);
3. the quickstart training with the sampler on vs off, interleaved runs (goal: ratio <= 1.02),
   and with the sampler on, its reward-hacking watch (a helper process) on vs off (goal: ratio
   <= 1.02).
Knobs: BENCH_RECORDS (20000), BENCH_RUNS (3), BENCH_STEPS (20), BENCH_HOOK_CALLS (1000).
"""

from __future__ import annotations

import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType

from _child_run import child_main, own_redis_server, percentile, run_child
from _quick import announce, knob, sized, tiny_models

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
RECORDS = knob("RECORDS", 20000, 300)  # quick: still a few jobs of 64
RUNS = knob("RUNS", 3, 1)
STEPS = knob("STEPS", 20, 1)
HOOK_CALLS = knob("HOOK_CALLS", 1000, 10)
WARMUP = sized(3, 0)  # quick: one step, measured (its figure means nothing anyway)
# Quick: the quickstart's steps on a smaller batch (the same code paths).
QUICK_BATCH = {"rollout_batch_size": 2, "samples_per_prompt": 2, "max_new_tokens": 8}


def records(count: int, start: int = 0) -> list[dict]:
    return [{"sample_id": f"s-{start + i:08d}", "response": "x" * 2000} for i in range(count)]


def raw_rpush(url: str) -> float:
    import redis

    client = redis.Redis.from_url(url)
    payloads = [json.dumps(r) for r in records(RECORDS)]
    started = time.perf_counter()
    for chunk in range(0, len(payloads), 1000):
        pipe = client.pipeline(transaction=False)
        for payload in payloads[chunk : chunk + 1000]:
            pipe.rpush("bench:raw", payload)
        pipe.execute()
    elapsed = time.perf_counter() - started
    client.delete("bench:raw")
    return RECORDS / elapsed


def ours(url: str, spool: Path) -> float:
    from sampling.config import QueueConfig
    from sampling.transport.producer import Producer, annotation_queue

    config = QueueConfig(redis_url=url, name="bench", batch_size=64, max_latency_ms=50,
                         spool_dir=str(spool))  # fmt: skip
    batch = records(RECORDS, start=10**7 + int(time.time() * 1000) % 10**6)
    producer = Producer(config, buffer_max=RECORDS * 2)
    started = time.perf_counter()
    for chunk in range(0, RECORDS, 16):  # as the sampler hands them over: a step's worth at a time
        producer.submit(batch[chunk : chunk + 16])
    while producer.stats.enqueued < RECORDS:
        time.sleep(0.001)
    elapsed = time.perf_counter() - started
    producer.close()
    annotation_queue(config).empty()
    return RECORDS / elapsed


def hook_cost_ms(watch: bool) -> list[float]:
    from rl.hooks import StageContext, TrainerControl
    from rl.samples import Sample
    from sampling.config import SamplingConfig
    from sampling.sources.sampler import LowRewardSampler

    class HandOff:
        stats = None

        def submit(self, items: list) -> None:
            self.items = items

        def close(self, deadline_s: float) -> None:
            pass

    # The defaults (threshold 0.2, 16 a step), the reward-hacking watch on or off.
    hook = LowRewardSampler(SamplingConfig(watch={"enabled": watch}), HandOff())
    timings = []
    for step in range(1, HOOK_CALLS + 1):
        samples = tuple(
            Sample(index=i, group_id=i // 4, prompt=f"prompt {i}", response=f"response {i} {step}",
                   prompt_ids=(1, 2, 3), response_ids=(4, 5, 6), truncated=False,
                   reward=((i * 37 + step) % 100) / 100, reward_details=MappingProxyType({}),
                   advantage=0.0)
            for i in range(256)
        )  # fmt: skip
        ctx = StageContext("reward", step, 0, "bench", 0, 1, samples, MappingProxyType({}),
                           Path("."), "tiny", MappingProxyType({}), TrainerControl())  # fmt: skip
        started = time.perf_counter()
        hook(ctx)
        timings.append(1000 * (time.perf_counter() - started))
    hook.close()
    return sorted(timings)


def training(mode: str, model: str, url: str, out: str) -> list[float]:
    """`mode`: off (no sampler), on (the sampler, its watch on), nowatch (the sampler alone)."""
    import yaml

    from rl.config import DataConfig, HookSpec, ModelConfig, ModelRef, RewardSpec, TrainerConfig
    from rl.trainer import Trainer
    from sampling.config import QueueConfig, SamplingConfig

    quickstart = yaml.safe_load((REPO / "configs" / "quickstart.yaml").read_text())
    settings = {**quickstart["trainer"], "max_steps": STEPS, "output_dir": out, "save_every": 0}
    settings |= sized({}, QUICK_BATCH)
    watch = {"watch": {"enabled": mode == "on"}}
    config = type("Run", (), {"sampling": SamplingConfig(**quickstart["sampling"], **watch),
                              "queue": QueueConfig(redis_url=url, name="bench-train",
                                                   spool_dir=str(Path(out) / "spool")),
                              "trainer": TrainerConfig(**settings)})  # fmt: skip
    hooks = [HookSpec(type="low_reward_sampler", stage="reward")] if mode != "off" else []
    trainer = Trainer(
        TrainerConfig(**settings), ModelConfig(actor=ModelRef(model_name_or_path=model)),
        DataConfig(path=str(REPO / "configs" / "prompts" / "quickstart.yaml")),
        [RewardSpec(**spec) for spec in quickstart["rewards"]], hooks, device="cpu",
        run_id=f"bench-{mode}", hook_resources={"config": config},
    )  # fmt: skip
    stamps = [time.perf_counter()]
    trainer.train(lambda *_: stamps.append(time.perf_counter()))
    return [b - a for a, b in itertools.pairwise(stamps)]


def child(mode: str, model: str, url: str) -> None:
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as out:
        print(json.dumps(training(mode, model, url, out)))


def main() -> None:
    announce()
    with own_redis_server() as url, tempfile.TemporaryDirectory() as tmp, tiny_models() as models:
        raw, mine = [], []
        for _ in range(RUNS):  # interleaved
            raw.append(raw_rpush(url))
            mine.append(ours(url, Path(tmp) / "spool"))
        raw_rate, our_rate = statistics.median(raw), statistics.median(mine)
        ratio = our_rate / raw_rate
        print(f"raw pipelined RPUSH: {raw_rate:,.0f} records/s; our producer: "
              f"{our_rate:,.0f} records/s; ratio {ratio:.2f} (goal >= 0.4)")  # fmt: skip

        for watch in (False, True):
            costs = hook_cost_ms(watch)
            print(f"sampler hook, 256 samples, watch {'on' if watch else 'off'}: median "
                  f"{percentile(costs, 0.5):.3f} ms, p99 {percentile(costs, 0.99):.3f} ms "
                  "(goal: p99 <= 1 ms)")  # fmt: skip

        model = str(models.policy)
        steps: dict[str, list[float]] = {"off": [], "on": [], "nowatch": []}
        for _ in range(RUNS):
            for mode in steps:
                steps[mode] += run_child(__file__, mode, model, url)[WARMUP:]
        off, on = statistics.median(steps["off"]), statistics.median(steps["on"])
        alone = statistics.median(steps["nowatch"])
        print(f"quickstart median step: sampler off {off:.3f} s, on {on:.3f} s; "
              f"ratio {on / off:.3f} (goal <= 1.02)")  # fmt: skip
        print(f"quickstart median step, sampler on: watch off {alone:.3f} s, on {on:.3f} s; "
              f"ratio {on / alone:.3f} (goal <= 1.02)")  # fmt: skip


if __name__ == "__main__":
    if not child_main(child):
        main()
