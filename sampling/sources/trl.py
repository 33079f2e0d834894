"""Route what a TRL `GRPOTrainer` or `RLOOTrainer` (TRL 1.16) scores, from its reward functions.

How TRL calls reward functions (`_calculate_rewards`): once per generation batch, each function
with the same `prompts`, `completions` and `completion_ids` lists, plus as kwargs every other
dataset column, `trainer_state`, `log_extra` and `log_metric` (bound methods of the trainer).
Sync functions run in order on the trainer thread; async ones are then gathered on TRL's event
loop thread while the trainer thread waits. Each process scores only its own slice of the batch
before TRL gathers them. TRL turns None into NaN, raises ValueError on a wrong length, and
combines the functions as `(rewards * reward_weights).nansum(dim=1)` in float32; a row where
every function gave NaN is unscorable (NaN total).

`RewardRouting` wraps each of the user's functions. A wrapper calls the function with
exactly what TRL passed and hands back exactly what it returned; an exception propagates as it
is. It keeps the values; when every wrapped function of the trainer has answered for the batch,
it combines them as TRL does (reading the weights and names from the trainer itself) and routes
the batch with the routing core: rank = the trainer's process index, step = the optimizer step
the batch trains (`trainer_state.global_step + 1`, the step TRL's completion logs name). On the
caller's thread this is the combination, the selection and an append; texts are read only for
the selected samples and records are built on the producer thread. Nothing here raises into
TRL: a batch lowtide cannot read is left unrouted (and TRL reports what is wrong with it).
"""

from __future__ import annotations

import array
import functools
import inspect
import itertools
import logging
import math
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from sampling.once import first_time
from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, RouteCounts, Router
from sampling.sources import group_id_of

log = logging.getLogger("lowtide.trl")
GENERATION_SETTINGS = {  # trainer attribute -> record field
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "min_p": "min_p",
    "repetition_penalty": "repetition_penalty",
    "max_completion_length": "max_new_tokens",
    "num_generations": "num_generations",
}


def callable_name(func: Callable[..., Any]) -> str:
    """The name TRL gives a reward function (its log keys and completion columns)."""
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__name__", type(func).__name__)


def is_async(func: Callable[..., Any]) -> bool:
    """Whether TRL awaits `func` (partials unwrapped; callable objects by their `__call__`)."""
    while isinstance(func, functools.partial):
        func = func.func
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - the method itself, as TRL checks it
    )


def as_text(value: Any) -> str:
    """A prompt or completion as text: plain strings as they are; conversational ones (lists of
    messages) as `role: content` blocks, a lone assistant message as its content."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        if len(value) == 1 and value[0].get("role") == "assistant":
            return _content_text(value[0].get("content"))
        return "\n\n".join(f"{m.get('role', '')}: {_content_text(m.get('content'))}" for m in value)
    return str(value)


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, list):  # content parts: keep the text ones
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return str(content)


def reward_columns(outputs: Sequence[Any], rows: int) -> list[array.array] | None:
    """Each function's output as TRL holds it (float32, None as NaN), or None when one of them
    is not what TRL accepts (TRL itself then raises)."""
    columns = []
    for output in outputs:
        if not isinstance(output, list | tuple | torch.Tensor) and not hasattr(output, "__array__"):
            return None  # a generator would be consumed here: leave it to TRL
        if isinstance(output, list | tuple) and None not in output:
            values = output  # nothing to replace: spare a copy
        else:
            values = [math.nan if value is None else value for value in output]
        if len(values) != rows:
            return None
        column = float32_column(values)
        if column is None:
            return None
        columns.append(column)
    return columns


def float32_column(values: Sequence[Any]) -> array.array | None:
    """`torch.tensor(values, dtype=float32)` as TRL converts them. Plain Python numbers go
    through an `array` (the same rounding, without torch's dispatch); anything else, which
    `array` might accept where torch does not, through torch itself."""
    if set(map(type, values)) <= {float, int, bool}:
        try:
            return array.array("f", values)
        except OverflowError:  # an int beyond float range: let torch decide
            pass
    try:
        column = torch.tensor(values, dtype=torch.float32)
    except (TypeError, ValueError, RuntimeError):
        return None
    return array.array("f", column.tolist()) if column.dim() == 1 else None


def weighted_totals(columns: Sequence[array.array], weights: Sequence[float]) -> list[float]:
    """TRL's total, `(rewards * weights).nansum(dim=1)` in float32, NaN where every function
    gave NaN (never selected). With one or two functions computed here: a float32 product or
    sum rounded from double is the float32 result (double has more than 2 x 24 + 2 bits), in
    any order. With more, torch's own reduction, whose order decides the last bit."""
    weights = array.array("f", weights)
    if not columns or not columns[0]:
        return []
    if len(columns) > 2:
        stacked = torch.stack([torch.tensor(c, dtype=torch.float32) for c in columns], dim=1)
        totals = (stacked * torch.tensor(weights, dtype=torch.float32).unsqueeze(0)).nansum(dim=1)
        totals[torch.isnan(stacked).all(dim=1)] = math.nan
        return totals.tolist()
    products = [array.array("f", [w * v for v in c]) for w, c in zip(weights, columns, strict=True)]
    nan = math.nan
    if len(columns) == 1:
        return [
            p if p == p else (0.0 if v == v else nan)
            for p, v in zip(products[0], columns[0], strict=True)
        ]
    sums = array.array(
        "f",
        [
            (0.0 + (a if a == a else 0.0)) + (b if b == b else 0.0)
            for a, b in zip(products[0], products[1], strict=True)
        ],
    )
    return [t if (u == u or v == v) else nan for t, u, v in zip(sums, *columns, strict=True)]


@dataclass(eq=False)
class ScoredBatch:
    """One generation batch of one process, scored; `TrlSample`s read from it lazily."""

    prompts: list[Any]
    completions: list[Any]
    completion_ids: list[Any] | None
    totals: list[float]
    columns: list[array.array]  # float32, per function, in the trainer's order
    names: list[str]
    group_ids: list[int]
    max_completion_length: int | None
    eos_token_id: int | None
    _prompt_texts: dict[int, str] = field(default_factory=dict)

    def prompt_text(self, index: int) -> str:
        prompt = self.prompts[index]
        if isinstance(prompt, str):
            return prompt
        text = self._prompt_texts.get(index)
        if text is None:
            text = self._prompt_texts[index] = as_text(self.prompts[index])
        return text

    def truncated(self, index: int) -> bool:
        if self.completion_ids is None or not self.max_completion_length:
            return False
        ids = self.completion_ids[index]
        if len(ids) < self.max_completion_length:
            return False
        return not ids or self.eos_token_id is None or int(ids[-1]) != self.eos_token_id


class TrlSample:
    """One scored completion in the shape the routing core reads (`ScoredSample`). The core reads
    every sample's reward and group but the texts only of the samples it selects."""

    __slots__ = ("_batch", "_row", "group_id", "index", "reward")

    def __init__(
        self, batch: ScoredBatch, row: int, index: int, reward: float, group_id: int
    ) -> None:
        self._batch = batch
        self._row = row  # in the batch; `index` (part of the id) may count on from a batch before
        self.index = index
        self.reward = reward  # plain attributes: read for every sample
        self.group_id = group_id

    @property
    def prompt(self) -> str:
        return self._batch.prompt_text(self._row)

    @property
    def response(self) -> str:
        return as_text(self._batch.completions[self._row])

    @property
    def reward_details(self) -> dict[str, float]:
        batch = self._batch
        return {
            name: column[self._row] for name, column in zip(batch.names, batch.columns, strict=True)
        }

    @property
    def advantage(self) -> float:
        return math.nan  # TRL computes advantages after the reward functions

    @property
    def truncated(self) -> bool:
        return self._batch.truncated(self._row)


def prompt_groups(batch: ScoredBatch) -> list[int]:
    """Samples of one prompt share a group: TRL repeats each prompt `num_generations` times in a
    row. The id hashes the prompt's text, so a group split across processes keeps one id."""
    ids: list[int] = []
    previous: Any = object()
    group = 0
    for index, prompt in enumerate(batch.prompts):
        if prompt is not previous and prompt != previous:
            group = group_id_of(batch.prompt_text(index))
            previous = prompt
        ids.append(group)
    return ids


@dataclass
class TrainerView:
    """What the routing reads from one trainer: fixed for its life except the step."""

    order: list[int] | None  # for each of the trainer's reward functions, our wrapper's position
    foreign: list[str]  # names of the trainer's reward functions lowtide did not wrap
    rank: int
    run_id: str
    model_name: str
    generation: dict[str, float | int | str | bool]
    max_completion_length: int | None
    eos_token_id: int | None


class _Pending:
    """The outputs gathered so far for the batch now being scored."""

    def __init__(self, completions: Any) -> None:
        self.completions = completions  # identifies the batch (the same list for every function)
        self.outputs: dict[int, Any] = {}


class RewardRouting:
    """Wraps a trainer's reward functions and routes each batch they score (see the module doc).
    `close()` flushes what is waiting (to Redis, else the spool) and stops routing."""

    def __init__(
        self,
        router: Router,
        reward_funcs: Sequence[Callable[..., Any]],
        *,
        reward_weights: Sequence[float] | None = None,
        run_id: str | None = None,
    ) -> None:
        if not reward_funcs:
            raise ValueError("route_low_rewards needs at least one reward function")
        for func in reward_funcs:
            if not callable(func) or isinstance(func, str | torch.nn.Module):
                raise ValueError(
                    f"route_low_rewards wraps reward functions; {func!r} is not one (reward "
                    "models given by name or as a module cannot be wrapped)"
                )
        if reward_weights is not None and len(reward_weights) != len(reward_funcs):
            raise ValueError(
                f"{len(reward_weights)} reward weights for {len(reward_funcs)} reward functions"
            )
        self.router = router
        self.funcs = list(reward_funcs)
        self.names = [callable_name(func) for func in self.funcs]
        # float32, as TRL holds them
        given = [1.0] * len(self.funcs) if reward_weights is None else list(reward_weights)
        try:
            self.weights = array.array("f", given).tolist()
        except TypeError:
            raise ValueError(f"reward_weights must be numbers, got {given!r}") from None
        self.explicit_weights = reward_weights is not None  # else read from the trainer
        self.run_id = run_id
        self.wrapped = [self._wrap(position, func) for position, func in enumerate(self.funcs)]
        self._positions = {id(wrapper): i for i, wrapper in enumerate(self.wrapped)}
        self._lock = threading.Lock()
        self._pending: _Pending | None = None
        self._trainer: weakref.ref[Any] | None = None
        self._view: TrainerView | None = None
        self._calls_without_trainer = 0
        self._last_step: tuple[int, int] = (-1, 0)  # (step, batches routed under it so far)
        self._warned: list[str] = []
        self.closed = False
        self.batches_routed = 0
        self.last_counts: RouteCounts | None = None

    # ---- the wrappers ------------------------------------------------------------------------

    def _wrap(self, position: int, func: Callable[..., Any]) -> Callable[..., Any]:
        if is_async(func):

            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                output = await func(*args, **kwargs)
                self._observe(position, output, kwargs)
                return output

        else:

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                output = func(*args, **kwargs)
                self._observe(position, output, kwargs)
                return output

        functools.update_wrapper(wrapper, func)  # copies what exists (objects have no __name__)
        wrapper.__name__ = callable_name(func)  # TRL's name: its logs and columns stay the same
        return wrapper

    def _observe(self, position: int, output: Any, kwargs: Mapping[str, Any]) -> None:
        """After a function answered: keep its output; route once all have. Never raises."""
        try:
            with self._lock:
                if self.closed:
                    return
                completions = kwargs.get("completions")
                pending = self._pending
                if pending is None or pending.completions is not completions:
                    pending = self._pending = _Pending(completions)
                pending.outputs[position] = output
                view = self._trainer_view(kwargs.get("log_metric"))
                if view is not None and view.foreign:
                    self._warn_foreign(view)
                    return
                wanted = range(len(self.funcs)) if view is None else view.order or ()
                if not all(i in pending.outputs for i in wanted):
                    return
                self._pending = None
                self._route(pending, view, kwargs)
        except Exception as error:  # lowtide never breaks the trainer's reward step
            self._warn_once("error", f"lowtide could not route a TRL batch: {error!r}")

    # ---- routing -----------------------------------------------------------------------------

    def _route(
        self, pending: _Pending, view: TrainerView | None, kwargs: Mapping[str, Any]
    ) -> None:
        trainer = self._trainer() if self._trainer is not None else None
        if trainer is not None and not getattr(getattr(trainer, "model", None), "training", True):
            return  # evaluation batches are not training rollouts
        prompts, completions = kwargs.get("prompts"), pending.completions
        if not isinstance(prompts, list) or not isinstance(completions, list):
            return
        if view is not None and view.order is not None and trainer is not None:
            order = view.order
            weights = trainer.reward_weights.tolist()  # a tensor; it may change during training
            names = list(trainer.reward_func_names)
            ours = order == list(range(len(self.funcs)))
            if self.explicit_weights and ours and weights != self.weights:
                self._warn_once(
                    "weights",
                    f"route_low_rewards was given reward_weights={self.weights} but the "
                    f"trainer uses {weights}; lowtide routes on the trainer's",
                )
        else:
            order = list(range(len(self.funcs)))
            weights, names = self.weights, self.names
        columns = reward_columns([pending.outputs[i] for i in order], len(prompts))
        if columns is None:
            return  # TRL raises about this batch itself
        batch = ScoredBatch(
            prompts=list(prompts),
            completions=list(completions),
            completion_ids=kwargs.get("completion_ids"),
            totals=weighted_totals(columns, weights),
            columns=columns,
            names=names,
            group_ids=[],
            max_completion_length=view.max_completion_length if view else None,
            eos_token_id=view.eos_token_id if view else None,
        )
        batch.group_ids = prompt_groups(batch)
        info = self._batch_info(view, kwargs.get("trainer_state"))
        # Reviewers see each function's weight and contribution, as TRL combined them.
        info = replace(info, reward_weights=dict(zip(names, weights, strict=True)))
        # Several generation batches can share a step (steps_per_generation below the gradient
        # accumulation steps): their positions continue, so their ids differ.
        step, earlier = self._last_step
        earlier = earlier + 1 if step == info.step else 0
        self._last_step = (info.step, earlier)
        first = earlier * len(prompts)
        rows = range(len(prompts))
        samples = list(
            map(TrlSample, itertools.repeat(batch), rows, range(first, first + len(prompts)),
                batch.totals, batch.group_ids)
        )  # fmt: skip
        counts = self.router.route(samples, info)
        self.batches_routed += 1
        self.last_counts = counts
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            for name, (value, _reduce) in self.router.metrics(counts).items():
                log_metric(name, float(value))  # TRL averages them over processes and steps

    def _batch_info(self, view: TrainerView | None, state: Any) -> BatchInfo:
        done = getattr(state, "global_step", None)
        if not isinstance(done, int):  # called outside a trainer: count the batches
            done = self._calls_without_trainer
            self._calls_without_trainer += 1
        if view is None:
            return BatchInfo(
                run_id=self.run_id or "trl",
                step=done + 1,
                rank=int(os.environ.get("RANK", "0") or 0),
                checkpoint_step=done,
            )
        return BatchInfo(
            run_id=view.run_id,
            step=done + 1,  # the optimizer step this batch trains, as TRL's logs number it
            rank=view.rank,
            model_name=view.model_name,
            checkpoint_step=done,  # the weights that generated it
            generation=view.generation,
        )

    def _trainer_view(self, log_metric: Any) -> TrainerView | None:
        """The trainer that called, found through `log_metric` (a bound method of it)."""
        trainer = getattr(log_metric, "__self__", None)
        if trainer is None or not hasattr(trainer, "reward_funcs"):
            return None
        if self._trainer is not None and self._trainer() is trainer and self._view is not None:
            return self._view
        self._trainer = weakref.ref(trainer)
        self._view = self._read_trainer(trainer)
        return self._view

    def _read_trainer(self, trainer: Any) -> TrainerView:
        positions = [self._positions.get(id(func)) for func in trainer.reward_funcs]
        foreign = [
            name
            for name, position in zip(trainer.reward_func_names, positions, strict=False)
            if position is None
        ]
        args = trainer.args
        accelerator = getattr(trainer, "accelerator", None)
        model = getattr(trainer, "model", None)
        model_name = getattr(getattr(model, "config", None), "_name_or_path", None)
        processing = getattr(trainer, "processing_class", None)
        tokenizer = getattr(processing, "tokenizer", processing)
        generation: dict[str, float | int | str | bool] = {}
        for attribute, name in GENERATION_SETTINGS.items():
            value = getattr(trainer, attribute, None)
            if isinstance(value, bool | int | str) or (
                isinstance(value, float) and math.isfinite(value)
            ):
                generation[name] = value
        output_dir = str(getattr(args, "output_dir", "") or "").rstrip("/")
        return TrainerView(
            order=None if foreign else [p for p in positions if p is not None],
            foreign=foreign,
            rank=int(getattr(accelerator, "process_index", 0)),
            run_id=self.run_id
            or getattr(args, "run_name", None)
            or os.path.basename(output_dir)
            or "trl",
            model_name=str(model_name or "unknown"),
            generation=generation,
            max_completion_length=getattr(trainer, "max_completion_length", None),
            eos_token_id=getattr(tokenizer, "eos_token_id", None),
        )

    # ---- the end -----------------------------------------------------------------------------

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        """Hand what is waiting to Redis (or the spool) within the deadline; routing stops (the
        wrapped functions keep scoring as before). Safe to call twice."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self.router.close(deadline_s)

    def _warn_foreign(self, view: TrainerView) -> None:
        self._warn_once(
            "foreign",
            "lowtide routes nothing: the trainer also has reward functions that "
            f"route_low_rewards did not wrap ({', '.join(view.foreign)}), so lowtide cannot see "
            "the total reward TRL optimises; pass all of them through route_low_rewards",
        )

    def _warn_once(self, key: str, message: str) -> None:
        if first_time(self._warned, key):
            log.warning(message)


class RoutedRewardFuncs(list):  # type: ignore[type-arg]
    """The wrapped reward functions, a list to pass to TRL as `reward_funcs`; `.close()` flushes
    (also done at interpreter exit), `.routing` holds the state."""

    def __init__(self, routing: RewardRouting) -> None:
        super().__init__(routing.wrapped)
        self.routing = routing

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.routing.close(deadline_s)
