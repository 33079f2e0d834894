"""OpenRLHF (0.11.2): route low-reward rollouts from the rewards its `--reward.remote_url` returns.

OpenRLHF's `SingleTurnAgentExecutor` scores each sample on its own: it calls a file's
`reward_func(queries, prompts, labels)` in a worker thread, or POSTs `{"query", "prompts",
"labels"}` to a reward server, one sample per call, and reads `{"rewards", "scores",
"extra_logs"}` back. `queries` are prompt + response decoded with special tokens kept.

`RewardRouting.observe` takes one such call and its answer. On the calling thread it only
queues it (no parsing) for a background worker (`rl.background.Worker`), which collects the
calls of a window, then reads the answers and routes the window's samples through the routing
core:

- a window closes after `quiet_s` without a new sample, after `window_s`, or at `max_samples`
  (`sampling/sources/idle_window.py`, the rule the verl adapter shares);
- nothing tells the reward function the step: `step` counts the quiet gaps of this process
  (generation bursts), from 1. With synchronous training (a pause for the update between
  generations) and no evaluation, that is OpenRLHF's global step; a burst longer than
  `window_s` is routed in several windows of the same step. Records say so:
  `generation.step_source` is `burst`;
- each process routes its own samples (every vLLM engine loads the reward file in its own
  process), with its process id as rank, so ids never collide.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, PlainSample, Router
from sampling.sources.adapter import AdapterSetupError, Bursts, Routed, TrainerAdapter
from sampling.sources.idle_window import IdleWindow
from sampling.sources.openrlhf.answers import RewardCall, UnreadableAnswer, samples_of

QUIET_S = 2.0
WINDOW_S = 30.0
MAX_SAMPLES = 4096
STEP_SOURCE = MappingProxyType({"step_source": "burst"})
CALLS_WAITING = 65_536  # reward calls the worker's queue holds; more are turned away, counted
RUN_ID_VAR = "LOWTIDE_RUN_ID"
RANK_VAR = "LOWTIDE_RANK"


def default_run_id() -> str:
    """`$LOWTIDE_RUN_ID`, else one per process (each vLLM engine loads the reward file in its own
    process: give `run_id` to see one run)."""
    return os.environ.get(RUN_ID_VAR) or (
        f"openrlhf-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{socket.gethostname()}-"
        f"{os.getpid()}"
    )


def default_rank() -> int:
    """`$LOWTIDE_RANK`, else the process id: processes of one run never share sample ids."""
    value = os.environ.get(RANK_VAR, "")
    if value:
        if not value.isdigit():
            raise AdapterSetupError(f"{RANK_VAR} must be a non-negative integer, got {value!r}")
        return int(value)
    return os.getpid()


@dataclass
class RoutingStats:
    """What OpenRLHF's reward calls gave; the samples, selected and submitted counts are the
    adapter's own (`TrainerAdapter.routed`), read through."""

    routed: Routed
    observed: int = 0  # reward calls seen
    unreadable: int = 0  # calls whose answer could not be read (not routed)
    windows: int = 0  # route calls

    @property
    def samples(self) -> int:  # samples read from the calls
        return self.routed.samples

    @property
    def selected(self) -> int:
        return self.routed.selected

    @property
    def submitted(self) -> int:  # handed to the producer
        return self.routed.submitted


class RewardRouting(TrainerAdapter):
    """Collects OpenRLHF reward calls from any thread and routes them in windows (see the
    module's docstring). `close()` routes what is waiting and flushes the producer."""

    log = logging.getLogger("sampling.sources.openrlhf")

    def __init__(
        self,
        router: Router,
        *,
        run_id: str,
        rank: int,
        model_name: str = "unknown",
        end_tokens: Sequence[str] | None = None,
        quiet_s: float = QUIET_S,
        window_s: float = WINDOW_S,
        max_samples: int = MAX_SAMPLES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = IdleWindow(quiet_s, window_s=window_s, max_samples=max_samples, clock=clock)
        super().__init__(router)
        self.run_id = run_id
        self.rank = rank
        self.model_name = model_name
        self.end_tokens = tuple(end_tokens) if end_tokens is not None else None
        self.stats = RoutingStats(self.routed)
        self.step = 1
        self._index = 0  # next sample index in this step
        self._calls: Bursts[RewardCall] = Bursts(
            self,
            self._deliver,
            self.window,
            name="lowtide-openrlhf",
            what="reward calls",
            capacity=CALLS_WAITING,
            size_of=lambda call: 1 if isinstance(call.queries, str) else len(call.queries),
        )

    @property
    def waiting(self) -> int:
        """Reward calls handed over and not routed yet."""
        return self._calls.waiting

    # ---- any thread (OpenRLHF's reward threads, the proxy's request threads) ----------------

    def observe(self, call: RewardCall) -> None:
        """Hand over one reward call and its answer; returns at once, never raises. After
        `close()` nothing is kept (no worker would ever take it)."""
        if not self.closed:
            self._calls.put(call)

    def drain(self, deadline_s: float) -> None:
        self._calls.close(deadline_s)  # the worker routes what waits, then ends

    # ---- the background worker ---------------------------------------------------------------

    def _deliver(self, calls: list[RewardCall], burst_over: bool) -> None:
        # Reading and routing wait for the window's end, which is mostly the quiet gap after a
        # burst, when the process has nothing else to do.
        with self.guard("routing a window failed"):
            self.stats.observed += len(calls)
            if calls:
                self._route(calls)
            if burst_over and (calls or self._index):
                self._next_step()

    def _route(self, calls: list[RewardCall]) -> None:
        samples: list[PlainSample] = []
        for call in calls:
            try:
                # Indices run on through the windows of a step: the sample ids stay distinct.
                samples += samples_of(call, self.end_tokens, self._index + len(samples))
            except UnreadableAnswer as exc:
                self.stats.unreadable += 1
                self.report("an answer was not routed", exc)
        self._index += len(samples)
        info = BatchInfo(
            run_id=self.run_id,
            step=self.step,
            rank=self.rank,
            model_name=self.model_name,
            generation=STEP_SOURCE,  # the step is counted here, not OpenRLHF's: records say so
        )
        if samples:
            self.route(samples, info)
        self.stats.windows += 1

    def _next_step(self) -> None:
        self.step += 1
        self._index = 0


class RoutedRewardFunc:
    """The user's `reward_func(queries, prompts, labels)`, routed: OpenRLHF gets exactly what the
    function returns, and exactly what it raises."""

    def __init__(self, func: Callable[..., Any], routing: RewardRouting) -> None:
        self.func = func
        self.routing = routing
        self.__wrapped__ = func
        self.__name__ = getattr(func, "__name__", "reward_func")
        self.__doc__ = getattr(func, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        answer = self.func(*args, **kwargs)
        # Unusual arguments: OpenRLHF still gets its answer.
        with self.routing.guard("a reward call was not routed"):
            queries, prompts, labels = _call_arguments(args, kwargs)
            self.routing.observe(RewardCall(queries, prompts, labels, answer))
        return answer

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.routing.close(deadline_s)


def _call_arguments(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    names = ("queries", "prompts", "labels")
    values = list(args[:3]) + [kwargs.get(name) for name in names[len(args[:3]) :]]
    queries, prompts, labels = values
    if queries is None or prompts is None:
        raise ValueError("no queries or prompts among the arguments")
    return queries, prompts, labels if labels is not None else []
