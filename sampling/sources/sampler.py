"""The `low_reward_sampler` stage hook: pick the low-reward rollouts of each step and hand them to
the producer. On the trainer thread it only selects and appends to memory; no network I/O.

```yaml
hooks:
  - type: low_reward_sampler
    stage: reward          # rewards and advantages are known here
    every: 1
    when: "step >= 10"     # optional
```
The `sampling` section says which samples (policy, caps, subsample, dedup), `queue` where to;
the routing core (`sampling.routing`) does the work, as it does for every other trainer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from rl.hooks import HookError, StageContext, check_params, validates_params
from sampling.config import QueueConfig, SamplingConfig
from sampling.records import MAX_TEXT_CHARS
from sampling.routing import CLOSE_DEADLINE_S, BatchInfo
from sampling.selection.hacking.observer import WatchObserver
from sampling.selection.hacking.table import COLUMNS, SUSPECTS_TABLE
from sampling.transport.producer import Producer
from sampling.wiring import build_router


class LowRewardSampler:
    """The hook: each call routes the stage's samples and reports what it did as step metrics."""

    def __init__(
        self,
        config: SamplingConfig,
        producer: Any,  # anything with submit(records) and close(deadline_s), and `stats`
        *,
        seed: int = 0,
        max_text_chars: int = MAX_TEXT_CHARS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.router = build_router(
            config, producer, seed=seed, max_text_chars=max_text_chars, clock=clock
        )
        self.watching = self.router.observer(WatchObserver)

    def __call__(self, ctx: StageContext) -> None:
        info = BatchInfo(
            run_id=ctx.run_id,
            step=ctx.step,
            rank=ctx.rank,
            model_name=ctx.model_name,
            checkpoint_step=ctx.step,
            generation=ctx.generation,
            reward_weights=ctx.reward_weights,
        )
        counts = self.router.route(ctx.samples, info)
        for name, (value, reduce) in self.router.metrics(counts).items():
            ctx.control.report_metric(name, value, reduce)
        table = self.watching.suspects_table if self.watching is not None else None
        if table:  # the latest analysis' suspects: the logger writes them at its table interval
            ctx.control.report_table(SUSPECTS_TABLE, COLUMNS, table)

    def close(self) -> None:
        self.router.close(CLOSE_DEADLINE_S)


def check_low_reward_sampler_params(params: Mapping[str, Any]) -> None:
    check_params(params, ("max_text_chars",))
    value = params.get("max_text_chars", MAX_TEXT_CHARS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HookError(f"param 'max_text_chars' must be a positive integer, got {value!r}")


# Provided to rl as `low_reward_sampler` in sampling/__init__.py (rl may not import sampling).
@validates_params(check_low_reward_sampler_params)
def make_low_reward_sampler(
    params: dict[str, Any], resources: Mapping[str, Any]
) -> LowRewardSampler:
    """Built from the run config's `sampling` and `queue` sections (resources["config"])."""
    check_low_reward_sampler_params(params)
    config = resources.get("config")
    sampling = getattr(config, "sampling", None) or SamplingConfig()
    queue = getattr(config, "queue", None) or QueueConfig()
    trainer = getattr(config, "trainer", None)
    return LowRewardSampler(
        sampling,
        Producer(queue),
        seed=getattr(trainer, "seed", 0),
        max_text_chars=int(params.get("max_text_chars", MAX_TEXT_CHARS)),
    )
