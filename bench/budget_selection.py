"""The budget policy's and the reward-hacking watch's cost, against the default threshold policy
without the watch in the same run:

1. `Router.route` of a 256-sample batch on the calling (trainer) thread: threshold without the
   watch (the baseline), threshold with it, budget with it; one router at a time (a watch's
   thread slows every thread of the process), with a producer that only holds what it is
   handed, and a pause between calls (BENCH_GAP_MS, 100: a trainer's step, short of a real one,
   in which the watch's thread reads what it was handed). Goal: p99 <= 1 ms with the watch
   on (route() only pools and buffers; selection and the watch run on threads of their own,
   which share the interpreter's lock with the caller: the p99 shows what that costs);
2. `sampling.selection.budget.choose` on the selector thread, for pools of 1,000 and 5,000
   candidates (`pool_max` defaults to 5,000): a number to report, no goal.
Knobs: BENCH_CALLS (200), BENCH_GAP_MS (100).

    OMP_NUM_THREADS=1 .venv/bin/python bench/budget_selection.py
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

from _child_run import percentile
from _quick import announce, knob, sized

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
CALLS = knob("CALLS", 200, 30)
GAP_S = knob("GAP_MS", 100, 5, minimum=0) / 1000  # 0: calls back to back
POOLS = sized((1000, 5000), (200, 500))  # choose()'s pools: 5,000 is pool_max's default
BATCH = 256
WORDS = ["blue", "green", "red", "sky", "sea", "leaf", "grass", "stone", "cloud", "river",
         "tree", "light", "dark", "cold", "warm"]  # fmt: skip


class HoldingProducer:
    """Takes what route() hands over and builds nothing: only the caller's cost is measured."""

    def __init__(self) -> None:
        self.held = 0

    def submit(self, records: list) -> None:
        self.held += len(records)

    def close(self, deadline_s: float) -> None:
        pass


def batch(step: int) -> list:
    from sampling.routing import PlainSample

    rng = random.Random(step)
    return [
        PlainSample(
            prompt=f"Name a colour ({i % 16}).",
            response=" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))),
            reward=rng.random(),
            reward_details={"reward_model": rng.random(), "format": rng.random()},
            group_id=i % 16,
            index=i,
        )
        for i in range(BATCH)
    ]


def route_costs() -> dict[str, list[float]]:
    from sampling.config import SamplingConfig
    from sampling.routing import BatchInfo
    from sampling.selection.hacking.observer import WatchObserver
    from sampling.wiring import build_router

    off = {"enabled": False}
    budget = {"policy": "budget", "review_budget": {"reviews": 50}, "redact": False}
    configs = {
        "threshold": SamplingConfig(threshold=0.2, redact=False, watch=off),
        "threshold+watch": SamplingConfig(threshold=0.2, redact=False),
        "budget+watch": SamplingConfig(**budget),
    }
    batches = [batch(step) for step in range(1, 21)]
    costs: dict[str, list[float]] = {}
    # One router at a time: a watch's thread would slow the others' calls too.
    for name, config in configs.items():
        router = build_router(config, HoldingProducer())
        costs[name] = []
        for call in range(CALLS):
            started = time.perf_counter()
            router.route(batches[call % len(batches)], BatchInfo("bench", call + 1))
            costs[name].append(time.perf_counter() - started)
            time.sleep(GAP_S)
        watching = router.observer(WatchObserver)
        if watching is not None:
            figures = watching.metrics()
            pending, dropped = figures["hacking/pending"][0], figures["hacking/dropped"][0]
            print(f"  {name}: the watch's buffer held {pending:.0f} samples at the last "
                  f"call, dropped {dropped:.0f}")  # fmt: skip
        router.close(5.0)
    return costs


def choose_seconds(count: int) -> float:
    from sampling.config import BudgetConfig
    from sampling.selection.budget import Candidate, choose

    samples = [s for step in range(1, count // BATCH + 2) for s in batch(step)][:count]
    candidates = [
        Candidate(prompt=s.prompt, response=s.response, reward=s.reward,
                  reward_details=s.reward_details, group_id=s.group_id, step=1, position=i)
        for i, s in enumerate(samples)
    ]  # fmt: skip
    started = time.perf_counter()
    choose(candidates, 50, BudgetConfig(), seed=0)
    return time.perf_counter() - started


def main() -> int:
    announce()
    print(f"route() of {BATCH} samples on the calling thread, {CALLS} calls each, "
          f"{1e3 * GAP_S:.0f} ms apart:")  # fmt: skip
    costs = route_costs()
    for name, values in costs.items():
        print(f"  {name:15} median {1e3 * statistics.median(values):.3f} ms, "
              f"p99 {1e3 * percentile(values, 0.99):.3f} ms")  # fmt: skip
    base = statistics.median(costs["threshold"])
    for name in ("threshold+watch", "budget+watch"):
        p99 = percentile(costs[name], 0.99)
        ratio = statistics.median(costs[name]) / base
        print(f"  {name}/threshold median ratio {ratio:.2f}; p99 {1e3 * p99:.3f} ms "
              f"(goal: <= 1 ms): {'met' if p99 <= 1e-3 else 'NOT met'}")  # fmt: skip
    for count in POOLS:
        print(f"choose() on {count} candidates (selector thread): {choose_seconds(count):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
