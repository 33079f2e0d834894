"""Route what verl 0.9.1 scores, from inside its reward loop: a reward manager that wraps the
configured one.

How verl 0.9.1 scores (`verl/experimental/reward_loop`): each reward worker (a Ray actor named
`reward_loop_worker_{i}`) builds one reward manager with `load_reward_manager(config, tokenizer,
compute_score=..., **kwargs)` and awaits its `run_single(data)` once per sample, on the worker's
event loop. During rollout the agent-loop workers send each finished sample to a random reward
worker (streaming); with a colocated reward model the trainer sends each worker a chunk of the
batch (`compute_score_batch`). `run_single` returns `{"reward_score", "reward_extra_info"}`;
`assemble_rm_scores` (a classmethod; no built-in manager overrides it) places the scores.

What a manager sees: the prompt and response ids, the attention mask, and the dataset's
non-tensor fields, among them `uid` (the GRPO group: one per prompt, shared by its n samples).
What it does not see in 0.9.1: the trainer's step. `ray_trainer.py` sets
`meta_info["global_steps"]` on the generation batch, but the agent loop builds each reward
request without meta_info. So the step is `global_steps` when a request carries it, and
otherwise the worker's *round*: the n-th burst of samples it scored, counted from 0 (a
training step's rollout is one burst; so is each validation). Records say which
(`generation.step_source`). Whoever needs verl's exact step follows the rollout dumps instead
(`trainer.rollout_data_dir`, `lowtide ingest`).

`RoutingRewardManager.run_single` (`manager.py`) awaits the wrapped manager with exactly what
verl passed and returns exactly what it returned; an exception propagates as it is. In each
request lowtide only queues the request and its result for a background worker (`Bursts`, a
few us). When the worker has scored nothing for `flush_idle_s` (after a burst: verl is then
busy elsewhere), the requests since the last flush are read (ids, score, the numeric
reward_extra_info values as components, group) and routed as one batch, at most `MAX_PENDING`
of them, on that worker's thread, never on verl's event loop: texts are decoded only for
selected samples, records are built and sent on the producer thread (Redis down: spooled).
Nothing here raises into verl's loop.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from verl import DataProto

from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, Router
from sampling.sources.adapter import Bursts, TrainerAdapter
from sampling.sources.idle_window import IdleWindow
from sampling.sources.verl.samples import VerlSample, as_float, group_of, reward_components

# Requests kept between flushes: past this, flush at once (~25 us a request to read: ~0.2 s).
MAX_PENDING = 8192
REQUESTS_WAITING = 4 * MAX_PENDING  # requests the worker's queue holds; more are turned away


class RewardRouting(TrainerAdapter):
    """Samples from `add` routed in batches: each burst of scoring, flushed once the worker has
    been idle for `flush_idle_s`, or by `flush`/`close` (on a background worker: `Bursts`)."""

    log = logging.getLogger("lowtide.verl")

    def __init__(
        self,
        router: Router,
        info: BatchInfo,
        decode: Callable[[Any], str],
        *,
        flush_idle_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = IdleWindow(flush_idle_s, max_samples=MAX_PENDING, clock=clock)
        super().__init__(router)
        self.info = info
        self.decode = decode
        self.max_new_tokens = dict(info.generation).get("max_new_tokens")
        self.rounds = 0  # flushes so far: the step of samples that carry none
        self.next_index = 0  # per worker, never reused: ids stay unique across rounds
        self._requests: Bursts[tuple[DataProto, Any]] = Bursts(
            self,
            self._deliver,
            self.window,
            name="lowtide-verl",
            what="scored requests",
            capacity=REQUESTS_WAITING,
        )

    @property
    def totals(self) -> Counter[str]:
        return Counter(scored=self.routed.samples, submitted=self.routed.submitted)

    @property
    def waiting(self) -> int:
        """Scored requests handed over and not routed yet."""
        return self._requests.waiting

    # ---- verl's event loop -----------------------------------------------------------------

    def add(self, data: DataProto, result: Any) -> None:
        """Keep one scored request (and verl's result) for the next flush; never raises."""
        if not self.closed:
            self._requests.put((data, result))

    def flush(self, timeout_s: float = CLOSE_DEADLINE_S) -> None:
        """Route what is waiting now, and wait for it."""
        self._requests.flush(timeout_s)

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Flush, then hand what is waiting to Redis (or the spool) within the deadline; what
        went wrong meanwhile is summed up in one warning."""
        if self.closed:
            return
        super().close(deadline_s)
        if self.problems:
            self.log.warning("lowtide: %s", dict(self.problems))

    def drain(self, deadline_s: float) -> None:
        self._requests.close(deadline_s)

    # ---- the background worker ---------------------------------------------------------------

    def _deliver(self, requests: list[tuple[DataProto, Any]], burst_over: bool) -> None:
        """Route the requests as one round (per step, when they carried verl's step)."""
        if not requests:
            return
        round_step = self.rounds
        self.rounds += 1
        by_step: dict[tuple[int, str], list[VerlSample]] = {}
        for data, result in requests:
            with self.guard("could not read a scored sample"):  # left unrouted
                sample = self._sample(data, result)
                key = (
                    (round_step, "round") if sample.step is None else (sample.step, "global_steps")
                )
                by_step.setdefault(key, []).append(sample)
        for (step, source), samples in by_step.items():
            info = replace(
                self.info, step=step, generation={**self.info.generation, "step_source": source}
            )
            with self.guard("could not route a batch"):
                self.route(samples, info)

    def _sample(self, data: DataProto, result: Any) -> VerlSample:
        # The last row, as verl's managers read a multi-sequence request; by plain indexing
        # (slicing a DataProto costs ~0.2 ms, as much as a rule-based reward).
        tensors, fields = data.batch, data.non_tensor_batch
        mask = tensors["attention_mask"][-1]
        prompts = tensors["prompts"][-1]
        responses = tensors["responses"][-1]
        valid_prompt = int(mask[: prompts.shape[-1]].sum())
        valid_response = int(mask[-responses.shape[-1] :].sum())
        step = data.meta_info.get("global_steps")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            step = None
        group = fields["uid"][-1] if "uid" in fields else None
        if group is None and "extra_info" in fields:  # no GRPO uid: the dataset's index
            extra = fields["extra_info"][-1]
            group = extra.get("index") if isinstance(extra, Mapping) else None
        if not isinstance(result, Mapping):
            result = {}
        reward = as_float(result.get("reward_score"))
        index = self.next_index
        self.next_index += 1
        limit = self.max_new_tokens
        return VerlSample(
            index=index,
            group_id=-1 - index if group is None else group_of(group),  # alone: a group of its own
            reward=math.nan if reward is None else reward,
            reward_details=reward_components(result.get("reward_extra_info")),
            truncated=isinstance(limit, int) and valid_response >= limit,
            step=step,
            # Left-padded prompts, right-padded responses (verl's layout).
            prompt_ids=prompts[prompts.shape[-1] - valid_prompt :],
            response_ids=responses[:valid_response],
            decode=self.decode,
        )
