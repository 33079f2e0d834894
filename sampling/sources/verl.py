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

`RoutingRewardManager.run_single` awaits the wrapped manager with exactly what verl passed and
returns exactly what it returned; an exception propagates as it is. In each request lowtide only
appends the request and its result to a list (~1 us). When the worker has scored nothing for
`flush_idle_s` (after a burst: verl is then busy elsewhere), the requests since the last flush
are read (ids, score, the numeric reward_extra_info values as components, group) and routed as
one batch, at most `MAX_PENDING` of them: texts are decoded only for selected samples, records
are built and sent on the producer thread (Redis down: spooled). Nothing here raises into
verl's loop.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import numbers
import re
import time
import weakref
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, RouteCounts, Router
from sampling.sources import group_id_of
from sampling.sources.idle_window import IdleWindow

log = logging.getLogger("lowtide.verl")
# Requests kept between flushes: past this, flush at once (~25 us a request to read: ~0.2 s).
MAX_PENDING = 8192
GENERATION_SETTINGS = {  # actor_rollout_ref.rollout key -> record field (as the TRL adapter's)
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "response_length": "max_new_tokens",
    "n": "num_generations",
}
_WORKER_NAME = re.compile(r".*_(\d+)")


@dataclass(frozen=True)
class Routing:
    """What the wrapper needs besides verl's own arguments."""

    wrapped: type[RewardManagerBase]  # the manager whose scores verl trains on
    router: Router
    info: BatchInfo  # run, rank, model, generation; the step is set per batch
    flush_idle_s: float = 1.0


class VerlSample:
    """One scored sample: what the routing core reads (`ScoredSample`). The texts are decoded
    on first use, which is only for the samples a policy selects."""

    advantage = math.nan  # computed by the trainer after scoring: not known here

    def __init__(
        self,
        *,
        index: int,
        group_id: int,
        reward: float,
        reward_details: Mapping[str, float],
        truncated: bool,
        step: int | None,
        prompt_ids: Any,
        response_ids: Any,
        decode: Callable[[Any], str],
    ) -> None:
        self.index = index
        self.group_id = group_id
        self.reward = reward
        self.reward_details = reward_details
        self.truncated = truncated
        self.step = step
        self._prompt_ids = prompt_ids
        self._response_ids = response_ids
        self._decode = decode

    @cached_property
    def prompt(self) -> str:
        return self._decode(self._prompt_ids)

    @cached_property
    def response(self) -> str:
        # As verl's managers decode the `solution_str` they score, and as its rollout dumps do.
        return self._decode(self._response_ids)


def as_float(value: Any) -> float | None:
    """A real number (Python, numpy, or a one-element tensor) as a float; None for anything
    else (strings, lists, None)."""
    if not isinstance(value, bool | numbers.Number):
        item = getattr(value, "item", None)  # numpy scalars and arrays, tensors
        if not callable(item):
            return None
        try:
            value = item()
        except (ValueError, RuntimeError, TypeError):  # more than one element
            return None
        if not isinstance(value, bool | numbers.Number):
            return None
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # complex
        return None


def reward_components(extra_info: Any) -> dict[str, float]:
    """The numeric values of a manager's `reward_extra_info` (strings and lists left out). The
    record keeps at most `MAX_REWARD_DETAILS` of them, as for every trainer; the policy may
    select on any of them."""
    if not isinstance(extra_info, Mapping):
        return {}
    found: dict[str, float] = {}
    for key, value in extra_info.items():
        number = as_float(value)
        if number is not None:
            found[str(key)] = number
    return found


def group_of(uid: Any) -> int:
    """verl's group key (`uid`, a uuid string per prompt) as a stable integer, the same on every
    worker."""
    if isinstance(uid, numbers.Integral):
        return int(uid)
    return group_id_of(str(uid))


def worker_rank() -> int:
    """This reward worker's number, so that sample ids of different workers never collide:
    `i` of the Ray actor `reward_loop_worker_{i}`, else a number from the actor's id, else 0
    (outside Ray: one process)."""
    try:
        import ray

        if not ray.is_initialized():
            return 0
        context = ray.get_runtime_context()
        name = context.get_actor_name() or ""
        actor_id = context.get_actor_id()
    except Exception:
        return 0
    numbered = _WORKER_NAME.fullmatch(name)
    if numbered:
        return int(numbered[1])
    return int(actor_id[:8], 16) if actor_id else 0


def batch_info(config: Any, run_id: str | None = None) -> BatchInfo:
    """Run, rank, model and generation settings from verl's config (step 0: set per batch).
    The run is `trainer.project_name/trainer.experiment_name` unless `run_id` is given."""
    trainer = OmegaConf.select(config, "trainer", default=None) or {}
    if run_id is None:
        project = trainer.get("project_name") or "verl"
        run_id = f"{project}/{trainer.get('experiment_name') or 'run'}"
    rollout = OmegaConf.select(config, "actor_rollout_ref.rollout", default=None) or {}
    generation: dict[str, float | int | str | bool] = {}
    for key, field in GENERATION_SETTINGS.items():
        value = rollout.get(key)
        if isinstance(value, bool | int | float | str) and value is not None:
            generation[field] = value
    return BatchInfo(
        run_id=run_id,
        step=0,
        rank=worker_rank(),
        model_name=str(OmegaConf.select(config, "actor_rollout_ref.model.path", default="unknown")),
        generation=generation,
    )


class Batcher:
    """Samples from `add` routed in batches: each burst of scoring, flushed once the worker has
    been idle for `flush_idle_s` (a timer on the running event loop), or by `flush`/`close`."""

    def __init__(
        self,
        routing: Routing,
        decode: Callable[[Any], str],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.router = routing.router
        self.info = routing.info
        self.decode = decode
        self.window = IdleWindow(routing.flush_idle_s, max_samples=MAX_PENDING, clock=clock)
        generation = dict(self.info.generation)
        self.max_new_tokens = generation.get("max_new_tokens")
        self.pending: list[tuple[DataProto, Any]] = []  # requests and results, as verl had them
        self.rounds = 0  # flushes so far: the step of samples that carry none
        self.next_index = 0  # per worker, never reused: ids stay unique across rounds
        self.totals: Counter[str] = Counter()
        self.problems: Counter[str] = Counter()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        this = weakref.ref(self)
        atexit.register(lambda: (batcher := this()) is not None and batcher.close())

    # ---- verl's event loop -----------------------------------------------------------------

    def add(self, data: DataProto, result: Any) -> None:
        """Keep one scored request for the next flush (never raises)."""
        if self._closed:
            return
        self.pending.append((data, result))
        if self.window.add():
            self.flush()
        else:
            self._arm()

    def flush(self) -> list[RouteCounts]:
        """Route what is waiting as one batch (per step, when requests carried verl's step)."""
        requests, self.pending = self.pending, []
        self.window.take()
        if not requests:
            return []
        round_step = self.rounds
        self.rounds += 1
        by_step: dict[tuple[int, str], list[VerlSample]] = {}
        for data, result in requests:
            try:
                sample = self._sample(data, result)
            except Exception as error:  # a request lowtide cannot read is left unrouted
                self._problem("could not read a scored sample", error)
                continue
            key = (round_step, "round") if sample.step is None else (sample.step, "global_steps")
            by_step.setdefault(key, []).append(sample)
        results = []
        for (step, source), samples in by_step.items():
            info = replace(
                self.info, step=step, generation={**self.info.generation, "step_source": source}
            )
            try:
                counts = self.router.route(samples, info)
            except Exception as error:
                self._problem("could not route a batch", error)
                continue
            self.totals.update(scored=len(samples), submitted=counts.submitted)
            results.append(counts)
        return results

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Flush, then hand what is waiting to Redis (or the spool) within the deadline."""
        if self._closed:
            return
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
        try:
            self.router.close(deadline_s=deadline_s)
        except Exception as error:
            self._problem("could not flush the queue", error)
        if self.problems:
            log.warning("lowtide: %s", dict(self.problems))

    # ---- internals ------------------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop running: flush() or close() routes what waits
            return
        self._timer = loop.call_later(self.window.wait_s(), self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self.window.due():
            self.flush()
        elif self.pending:  # a sample came meanwhile: wait for the rest of its idle time
            self._arm()

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

    def _problem(self, what: str, error: Exception) -> None:
        self.problems[what] += 1
        if self.problems[what] == 1:  # once per kind: the loop must not drown in warnings
            log.warning("lowtide: %s (%s: %s); training goes on", what, type(error).__name__, error)


class RoutingRewardManager(RewardManagerBase):
    """A verl reward manager that returns what the wrapped one returns and routes each scored
    sample. Subclasses supply `Routing` (lowtide.verl.LowtideRewardManager reads it from the
    `lowtide` section of verl's config)."""

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,
        *,
        routing: Routing,
        **wrapped_kwargs: Any,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.wrapped = routing.wrapped(
            config=config, tokenizer=tokenizer, compute_score=compute_score, **wrapped_kwargs
        )
        self.batcher = Batcher(routing, self._decode)

    async def run_single(self, data: DataProto) -> Any:
        result = await self.wrapped.run_single(data)
        self.batcher.add(data, result)
        return result

    def flush(self) -> list[RouteCounts]:
        return self.batcher.flush()

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.batcher.close(deadline_s)

    def _decode(self, ids: Any) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=True)
