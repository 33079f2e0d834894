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
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from sampling.routing import CLOSE_DEADLINE_S, BatchInfo, Router
from sampling.sources.adapter import AdapterSetupError, TrainerAdapter
from sampling.sources.trl.rewards import reward_columns, weighted_totals
from sampling.sources.trl.samples import ScoredBatch, TrlSample, prompt_groups

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


class RewardRouting(TrainerAdapter):
    """Wraps a trainer's reward functions and routes each batch they score (see the module doc).
    `close()` flushes what is waiting (to Redis, else the spool) and stops routing; the wrapped
    functions keep scoring as before."""

    log = logging.getLogger("lowtide.trl")

    def __init__(
        self,
        router: Router,
        reward_funcs: Sequence[Callable[..., Any]],
        *,
        reward_weights: Sequence[float] | None = None,
        run_id: str | None = None,
    ) -> None:
        if not reward_funcs:
            raise AdapterSetupError("route_low_rewards needs at least one reward function")
        for func in reward_funcs:
            if not callable(func) or isinstance(func, str | torch.nn.Module):
                raise AdapterSetupError(
                    f"route_low_rewards wraps reward functions; {func!r} is not one (reward "
                    "models given by name or as a module cannot be wrapped)"
                )
        if reward_weights is not None and len(reward_weights) != len(reward_funcs):
            raise AdapterSetupError(
                f"{len(reward_weights)} reward weights for {len(reward_funcs)} reward functions"
            )
        super().__init__(router)
        self.funcs = list(reward_funcs)
        self.names = [callable_name(func) for func in self.funcs]
        # float32, as TRL holds them
        given = [1.0] * len(self.funcs) if reward_weights is None else list(reward_weights)
        try:
            self.weights = array.array("f", given).tolist()
        except TypeError:
            raise AdapterSetupError(f"reward_weights must be numbers, got {given!r}") from None
        self.explicit_weights = reward_weights is not None  # else read from the trainer
        self.run_id = run_id
        self.wrapped = [self._wrap(position, func) for position, func in enumerate(self.funcs)]
        self._positions = {id(wrapper): i for i, wrapper in enumerate(self.wrapped)}
        # close() waits for a batch being routed: the producer is closed after it, not during it
        self._lock = self._close_lock
        self._pending: _Pending | None = None
        self._trainer: weakref.ref[Any] | None = None
        self._view: TrainerView | None = None
        self._calls_without_trainer = 0
        self._last_step: tuple[int, int] = (-1, 0)  # (step, batches routed under it so far)

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
        with self.guard("could not route a TRL batch"), self._lock:
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
                self.warn_once(
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
        counts = self.route(samples, info)
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

    def _warn_foreign(self, view: TrainerView) -> None:
        self.warn_once(
            "foreign",
            "lowtide routes nothing: the trainer also has reward functions that "
            f"route_low_rewards did not wrap ({', '.join(view.foreign)}), so lowtide cannot see "
            "the total reward TRL optimises; pass all of them through route_low_rewards",
        )


class RoutedRewardFuncs(list):  # type: ignore[type-arg]
    """The wrapped reward functions, a list to pass to TRL as `reward_funcs`; `.close()` flushes
    (also done at interpreter exit), `.routing` holds the state."""

    def __init__(self, routing: RewardRouting) -> None:
        super().__init__(routing.wrapped)
        self.routing = routing

    def close(self, deadline_s: float = CLOSE_DEADLINE_S) -> None:
        self.routing.close(deadline_s)
