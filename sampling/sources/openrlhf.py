"""OpenRLHF (0.11.2): route low-reward rollouts from the rewards its `--reward.remote_url` returns.

OpenRLHF's `SingleTurnAgentExecutor` scores each sample on its own: it calls a file's
`reward_func(queries, prompts, labels)` in a worker thread, or POSTs `{"query", "prompts",
"labels"}` to a reward server, one sample per call, and reads `{"rewards", "scores",
"extra_logs"}` back. `queries` are prompt + response decoded with special tokens kept.

`RewardRouting.observe` takes one such call and its answer. On the calling thread it only
appends to a deque (no lock, no parsing); a background thread collects the calls of a window,
then reads the answers and routes the window's samples through the routing core:

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
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Real
from types import MappingProxyType
from typing import Any

from sampling.once import first_time
from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, PlainSample, Router
from sampling.sources import group_id_of
from sampling.sources.idle_window import IdleWindow

log = logging.getLogger("sampling.sources.openrlhf")

QUIET_S = 2.0
WINDOW_S = 30.0
MAX_SAMPLES = 4096
STEP_SOURCE = MappingProxyType({"step_source": "burst"})
TICK_S = 0.05  # how often the background thread looks at the deque
# What a special token a decoded query ends with (eos, end of turn, padding) looks like:
# `<|im_end|>`, `<|eot_id|>`, `<|endoftext|>`, `</s>`, `<eos>`, `<end_of_turn>`,
# `<｜end▁of▁sentence｜>`.
_SPECIAL_TOKEN = re.compile(
    r"<\|[^<>|\s]{1,40}\|>|</s>|<eos>|<pad>|<end_of_turn>|<｜[^<>｜\s]{1,40}｜>"
)
_MIN_OVERLAP = 8  # characters of a cut prompt's end that must be found again


def response_from_query(query: str, prompt: str, end_tokens: Sequence[str] | None = None) -> str:
    """The response in an OpenRLHF query: the query without its prompt, without the special
    tokens it ends with (`end_tokens` exactly, else anything that looks like one).

    The query is `decode(encode(prompt) + response tokens)`. It starts with the prompt unless
    OpenRLHF cut the prompt from the left to fit `max_len` (then it starts with the prompt's
    end), or decoding did not give the prompt back (then the common prefix is cut)."""
    if query.startswith(prompt):
        rest = query[len(prompt) :]
    else:
        kept = _kept_prompt_end(query, prompt)
        rest = query[kept if kept >= _MIN_OVERLAP else _common_prefix(query, prompt) :]
    if end_tokens is None:
        return _strip_special_end(rest)
    stripped = True
    while stripped:  # e.g. eos then padding
        stripped = False
        trimmed = rest.rstrip()
        for token in end_tokens:
            if token and trimmed.endswith(token):
                rest, stripped = trimmed[: -len(token)], True
    return rest


def _strip_special_end(text: str) -> str:
    # From the end, token by token: a regex over the whole response would cost ~30 ns a char.
    while True:
        trimmed = text.rstrip()
        start = trimmed.rfind("<") if trimmed.endswith(">") else -1
        if start < 0 or not _SPECIAL_TOKEN.fullmatch(trimmed, start):
            return text
        text = trimmed[:start]


def _kept_prompt_end(query: str, prompt: str) -> int:
    """The length of the longest start of `query` that is an end of `prompt` (what is left of
    a prompt cut from the left). Linear: the KMP prefix function of start + sep + prompt."""
    text = f"{query[: len(prompt)]}\x00{prompt}"
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        border[i] = k + (text[i] == text[k])
    return border[-1]


def _common_prefix(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _number(value: Any) -> float | None:
    if isinstance(value, Real):
        return float(value)
    return None


def per_sample(value: Any, count: int, *, broadcast: bool = False) -> list[float] | None:
    """One float per sample from a value of an answer: a number (for one sample, or every sample
    with `broadcast`), a list, or a tensor/array (anything with `tolist`). Entries that are not
    numbers become NaN (never selected). None: the value cannot be read as `count` numbers."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        try:
            value = value.tolist()  # torch, numpy: a 0-d tensor gives a number
        except Exception:
            return None
    number = _number(value)
    if number is not None:
        return [number] * count if (count == 1 or broadcast) else None
    if isinstance(value, list | tuple):
        if len(value) == 1 and isinstance(value[0], list | tuple):
            value = value[0]  # a [[x]] from a tensor of shape (1, 1)
        if len(value) != count:
            return None
        return [math.nan if (n := _number(item)) is None else n for item in value]
    return None


def group_of(prompt: str, label: Any) -> int:
    """Samples of one prompt share a group (OpenRLHF samples `n_samples_per_prompt` each)."""
    return group_id_of(f"{prompt}\x00{label}")


@dataclass(frozen=True)
class RewardCall:
    """One call of OpenRLHF's reward path and what it got back."""

    queries: Sequence[str]
    prompts: Sequence[str]
    labels: Sequence[Any]
    answer: Any  # the reward function's return value, or the server's parsed JSON


class UnreadableAnswer(ValueError):
    """An answer without one reward per query: returned to OpenRLHF as it is, never routed."""


def _listed(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)


def samples_of(
    call: RewardCall, end_tokens: Sequence[str] | None, first_index: int = 0
) -> list[PlainSample]:
    """The scored samples of one call, indexed from `first_index`. Reward: `rewards`;
    components: `scores` and every numeric `extra_logs` value."""
    answer = call.answer
    queries, prompts, labels = _listed(call.queries), _listed(call.prompts), _listed(call.labels)
    count = len(queries)
    if not isinstance(answer, Mapping):
        raise UnreadableAnswer(f"the answer is a {type(answer).__name__}, not a dict")
    if len(prompts) != count:
        raise UnreadableAnswer(f"{count} queries but {len(prompts)} prompts")
    rewards = per_sample(answer.get("rewards"), count)
    if rewards is None:
        raise UnreadableAnswer(f"'rewards' is not {count} number(s): {answer.get('rewards')!r:.80}")
    columns: dict[str, list[float]] = {}
    scores = per_sample(answer.get("scores"), count)
    if scores is not None:
        columns["scores"] = scores
    extra = answer.get("extra_logs")
    if isinstance(extra, Mapping):
        for name, value in extra.items():
            values = per_sample(value, count, broadcast=True)
            if values is not None:
                columns[str(name)] = values
    if len(labels) != count:
        labels = [None] * count
    samples = []
    for i in range(count):
        prompt, query = str(prompts[i]), str(queries[i])
        details = {name: values[i] for name, values in columns.items() if math.isfinite(values[i])}
        samples.append(
            PlainSample(
                prompt=prompt,
                response=response_from_query(query, prompt, end_tokens),
                reward=rewards[i],
                reward_details=details,
                group_id=group_of(prompt, labels[i]),
                index=first_index + i,
            )
        )
    return samples


@dataclass
class RoutingStats:
    observed: int = 0  # reward calls seen
    samples: int = 0  # samples read from them
    unreadable: int = 0  # calls whose answer could not be read (not routed)
    windows: int = 0  # route calls
    selected: int = 0
    submitted: int = 0  # handed to the producer
    errors: list[str] = field(default_factory=list)


class RewardRouting:
    """Collects OpenRLHF reward calls from any thread and routes them in windows (see the
    module's docstring). `close()` routes what is waiting and flushes the producer."""

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
        self.router = router
        self.run_id = run_id
        self.rank = rank
        self.model_name = model_name
        self.end_tokens = tuple(end_tokens) if end_tokens is not None else None
        self.clock = clock
        self.window = IdleWindow(quiet_s, window_s=window_s, max_samples=max_samples, clock=clock)
        self.stats = RoutingStats()
        self.step = 1
        self._index = 0  # next sample index in this step
        self._incoming: deque[RewardCall] = deque()  # append/popleft are thread-safe
        self._window: list[RewardCall] = []
        self._closing = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lowtide-openrlhf", daemon=True)
        self._thread.start()

    # ---- any thread (OpenRLHF's reward threads, the proxy's request threads) ----------------

    def observe(self, call: RewardCall) -> None:
        """Hand over one reward call and its answer; returns at once, never raises. After
        `close()` nothing is kept (no thread would ever take it)."""
        if not self._closed:
            self._incoming.append(call)

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Route what is waiting, then flush the producer within the deadline. Idempotent."""
        if self._closed:
            return
        self._closed = True
        started = self.clock()
        self._closing.set()
        self._thread.join(timeout=deadline_s)
        self.router.close(deadline_s=max(0.5, deadline_s - (self.clock() - started)))

    # ---- the background thread ---------------------------------------------------------------

    def _run(self) -> None:
        while True:
            closing = self._closing.wait(TICK_S)
            try:
                self._tick(closing)
            except Exception as exc:  # never let routing take the trainer's process down
                self._error(f"routing a window failed: {type(exc).__name__}: {exc}")
                self._window = []
                self.window.take()
            if closing:
                return

    def _tick(self, closing: bool) -> None:
        # Only collect here: reading and routing wait for the window's end, which is mostly the
        # quiet gap after a burst, when the process has nothing else to do.
        now = self.clock()
        window = self.window
        while self._incoming:
            call = self._incoming.popleft()
            self.stats.observed += 1
            self._window.append(call)
            if window.add(1 if isinstance(call.queries, str) else len(call.queries), now):
                self._route(ends_step=False)
        if not self._window:
            if self._index and window.quiet(now):
                self._next_step()  # the burst ended with a full or timed-out window
            return
        if closing or window.quiet(now):
            self._route(ends_step=True)
        elif window.due(now):  # not quiet: the window has lasted window_s
            self._route(ends_step=False)

    def _route(self, *, ends_step: bool) -> None:
        calls, self._window = self._window, []
        self.window.take()
        samples: list[PlainSample] = []
        for call in calls:
            try:
                # Indices run on through the windows of a step: the sample ids stay distinct.
                samples += samples_of(call, self.end_tokens, self._index + len(samples))
            except UnreadableAnswer as exc:
                self.stats.unreadable += 1
                self._error(f"an answer was not routed: {exc}")
        self._index += len(samples)
        self.stats.samples += len(samples)
        info = BatchInfo(
            run_id=self.run_id,
            step=self.step,
            rank=self.rank,
            model_name=self.model_name,
            generation=STEP_SOURCE,  # the step is counted here, not OpenRLHF's: records say so
        )
        counts = self.router.route(samples, info) if samples else None
        self.stats.windows += 1
        if counts is not None:
            self.stats.selected += counts.selected
            self.stats.submitted += counts.submitted
        if ends_step:
            self._next_step()

    def _next_step(self) -> None:
        self.step += 1
        self._index = 0

    def _error(self, message: str) -> None:
        if first_time(self.stats.errors, message):
            log.warning("lowtide: %s", message)


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
        try:
            queries, prompts, labels = _call_arguments(args, kwargs)
            self.routing.observe(RewardCall(queries, prompts, labels, answer))
        except Exception as exc:  # unusual arguments: OpenRLHF still gets its answer
            self.routing._error(f"a reward call was not routed: {type(exc).__name__}: {exc}")
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
