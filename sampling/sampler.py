"""The `low_reward_sampler` stage hook: pick the low-reward rollouts of each step and hand them to
the producer. On the trainer thread it only selects and appends to memory; no network I/O.

```yaml
hooks:
  - type: low_reward_sampler
    stage: reward          # rewards and advantages are known here
    every: 1
    when: "step >= 10"     # optional
```
The `sampling` section says which samples (policy, caps, subsample, dedup), `queue` where to.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from rl.hooks import HookError, StageContext, check_params, validates_params
from rl.samples import make_sample_id
from sampling.config import QueueConfig, SamplingConfig
from sampling.policies import component_values, select
from sampling.producer import Producer
from sampling.records import RolloutRecord

DEDUP_MEMORY = 1_000_000  # sample ids remembered for dedup (oldest forgotten first)
CLOSE_DEADLINE_S = 10.0


class TokenBucket:
    """At most `per_minute` records a minute, refilled continuously; bursts up to one minute's."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.tokens = float(per_minute)
        self.clock = clock
        self.updated = clock()

    def take(self, wanted: int) -> int:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.capacity / 60)
        self.updated = now
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted


class LowRewardSampler:
    def __init__(
        self,
        config: SamplingConfig,
        producer: Any,  # anything with submit(records) and close(deadline_s), and `stats`
        *,
        seed: int = 0,
        max_text_chars: int = 20_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.producer = producer
        self.seed = seed
        self.max_text_chars = max_text_chars
        self.bucket = TokenBucket(config.max_per_minute, clock)
        self._seen: OrderedDict[str, None] = OrderedDict()

    def __call__(self, ctx: StageContext) -> None:
        config = self.config
        values = component_values(ctx.samples, config.component)
        chosen = select(config, values, [s.group_id for s in ctx.samples])
        # Lowest first, so that caps keep the worst samples.
        indices = sorted(chosen.indices, key=lambda i: (values[i], i))
        selected = len(indices)
        indices = indices[: config.max_per_step]
        capped = selected - len(indices)
        indices = self._subsample(indices, ctx)  # not a cap: a chosen share
        granted = self.bucket.take(len(indices))
        capped += len(indices) - granted
        indices = indices[:granted]

        builders, deduped = [], 0
        for i in indices:
            sample = ctx.samples[i]
            sample_id = make_sample_id(
                ctx.run_id, ctx.step, ctx.rank, sample.index, sample.prompt, sample.response
            )
            if config.dedup and self._already_seen(sample_id):
                deduped += 1
                continue
            # Validating and serialising the record is the producer thread's work.
            builders.append(partial(self._record_json, ctx, i, chosen))
        if builders:
            self.producer.submit(builders)
        self._report(ctx, selected=selected, capped=capped, deduped=deduped)

    def close(self) -> None:
        self.producer.close(deadline_s=CLOSE_DEADLINE_S)

    def _subsample(self, indices: list[int], ctx: StageContext) -> list[int]:
        fraction = self.config.sample_fraction
        if fraction >= 1 or not indices:
            return indices
        keep = max(1, round(fraction * len(indices)))
        seed = hashlib.sha256(f"{self.seed}:{ctx.run_id}:{ctx.step}:{ctx.rank}".encode()).digest()
        chosen = set(random.Random(seed).sample(indices, keep))
        return [i for i in indices if i in chosen]  # seeded: the same step keeps the same ones

    def _record_json(self, ctx: StageContext, index: int, chosen: Any) -> dict[str, Any]:
        return self._record(ctx, index, chosen).model_dump(mode="json")

    def _record(self, ctx: StageContext, index: int, chosen: Any) -> RolloutRecord:
        sample = ctx.samples[index]
        selection = chosen.selection_for(index, self.config.component)  # with its own statistics
        return RolloutRecord.from_sample(
            sample,
            run_id=ctx.run_id,
            step=ctx.step,
            rank=ctx.rank,
            model_name_or_path=ctx.model_name,
            checkpoint_step=ctx.step,
            generation=dict(ctx.generation),
            selection=selection,
            max_text_chars=self.max_text_chars,
        )

    def _already_seen(self, sample_id: str) -> bool:
        if sample_id in self._seen:
            return True
        self._seen[sample_id] = None
        if len(self._seen) > DEDUP_MEMORY:
            self._seen.popitem(last=False)
        return False

    def _report(self, ctx: StageContext, *, selected: int, capped: int, deduped: int) -> None:
        report = ctx.control.report_metric
        report("sampling/selected", selected)
        report("sampling/capped", capped)
        report("sampling/deduped", deduped)
        stats = getattr(self.producer, "stats", None)
        if stats is None:
            return
        # Run totals so far, as the producer thread last saw them (no Redis call here).
        report("sampling/enqueued", stats.enqueued)
        report("sampling/spooled", stats.spooled)
        report("sampling/replayed", stats.replayed)
        report("sampling/dropped", stats.dropped)
        report("queue/depth", stats.queue_depth, "max")
        report("queue/enqueue_latency_ms", stats.enqueue_latency_ms, "max")


def check_low_reward_sampler_params(params: Mapping[str, Any]) -> None:
    check_params(params, ("max_text_chars",))
    value = params.get("max_text_chars", 20_000)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HookError(f"param 'max_text_chars' must be a positive integer, got {value!r}")


# Named in rl.plugins.BUILTIN_HOOKS as `low_reward_sampler` (rl may not import this package).
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
        max_text_chars=int(params.get("max_text_chars", 20_000)),
    )
