"""The budget policy's cost, against the default threshold policy in the same run:

1. `Router.route` of a 256-sample batch on the calling (trainer) thread, budget vs threshold,
   interleaved calls with a producer that only holds what it is handed (goal: budget p99 <= 1 ms;
   with the budget policy route() only pools, selection runs on its own thread);
2. `sampling.selection.budget.choose` on the selector thread, for pools of 1,000 and 5,000
   candidates (`pool_max` defaults to 5,000): a number to report, no goal.
Knobs: BENCH_CALLS (300).

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
CALLS = knob("CALLS", 300, 30)
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
    from sampling.routing import BatchInfo, Router

    routers = {
        "threshold": Router(SamplingConfig(threshold=0.2, redact=False), HoldingProducer()),
        "budget": Router(
            SamplingConfig(policy="budget", review_budget={"reviews": 50}, redact=False),
            HoldingProducer(),
        ),
    }
    batches = [batch(step) for step in range(1, 21)]
    costs: dict[str, list[float]] = {name: [] for name in routers}
    for call in range(CALLS):
        for name, router in routers.items():  # interleaved: both see the same machine state
            started = time.perf_counter()
            router.route(batches[call % len(batches)], BatchInfo("bench", call + 1))
            costs[name].append(time.perf_counter() - started)
    for router in routers.values():
        router.close(1.0)
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
    costs = route_costs()
    print(f"route() of {BATCH} samples on the calling thread, {CALLS} interleaved calls each:")
    for name, values in costs.items():
        print(f"  {name:9} median {1e3 * statistics.median(values):.3f} ms, "
              f"p99 {1e3 * percentile(values, 0.99):.3f} ms")  # fmt: skip
    p99 = percentile(costs["budget"], 0.99)
    ratio = statistics.median(costs["budget"]) / statistics.median(costs["threshold"])
    print(f"  budget/threshold median ratio {ratio:.2f}; budget p99 {1e3 * p99:.3f} ms "
          f"(goal: <= 1 ms): {'met' if p99 <= 1e-3 else 'NOT met'}")  # fmt: skip
    for count in POOLS:
        print(f"choose() on {count} candidates (selector thread): {choose_seconds(count):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
