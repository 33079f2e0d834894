"""Runs the configured hooks at each stage: `every` and `when` gates, read-only context, errors.

The trainer builds one `HookRunner` at start (so a bad `type`, `when` or param fails before any
step), calls `run(stage, ctx)` after each stage, reads `ctx.control`, and calls `close()` at the
end. A hook never breaks a step: it sees a frozen copy, and its failure is logged and the hook
disabled, unless its entry says `on_error: fatal`.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from rl.config import HookSpec, Stage
from rl.hooks.conditions import Condition, ConditionError, MissingMetric, compile_condition
from rl.hooks.context import StageContext
from rl.hooks.registry import HOOKS, Hook, HookError, HookFactory, HookRegistry, params_check
from rl.suggest import did_you_mean

logger = logging.getLogger("rl.hooks")

_NO_RESOURCES: Mapping[str, Any] = MappingProxyType({})
_MAX_MESSAGE = 500


class HookFailed(RuntimeError):
    """A hook with `on_error: fatal` raised; the original exception is the `__cause__`."""


@dataclass
class HookStats:
    calls: int = 0  # times the hook was called (failed calls included)
    skipped_by_when: int = 0  # due by `every`, but its `when` was false
    skipped_missing_metric: int = 0  # due by `every`, but its `when` names an absent metric
    failures: int = 0
    disabled: bool = False


@dataclass
class _ConfiguredHook:
    name: str  # "hooks[1] (early_stop)": the entry's place in the config, for messages
    spec: HookSpec
    hook: Hook
    condition: Condition | None
    stats: HookStats = field(default_factory=HookStats)
    warned_missing: set[str] = field(default_factory=set)

    def is_due(self, step: int) -> bool:
        # train_end happens once, at whatever step training stopped: `every` would skip it.
        return self.spec.stage == "train_end" or step % self.spec.every == 0


def hook_name(index: int, spec: HookSpec) -> str:
    return f"hooks[{index}] ({spec.type})"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    text = text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 1] + "…"
    return f"{type(exc).__name__}: {text}"


def _read_only(ctx: StageContext) -> StageContext:
    """The context a hook gets: metrics always a private read-only copy, other mappings wrapped."""
    samples = ctx.samples
    if not isinstance(samples, tuple) or any(
        not isinstance(sample.reward_details, MappingProxyType) for sample in samples
    ):
        samples = tuple(
            sample
            if isinstance(sample.reward_details, MappingProxyType)
            else dataclasses.replace(
                sample, reward_details=MappingProxyType(dict(sample.reward_details))
            )
            for sample in samples
        )
    generation = ctx.generation
    if not isinstance(generation, MappingProxyType):
        generation = MappingProxyType(dict(generation))
    return dataclasses.replace(
        ctx,
        samples=samples,
        metrics=MappingProxyType(dict(ctx.metrics)),
        generation=generation,
    )


def check_when(index: int, spec: HookSpec) -> Condition | None:
    """The entry's compiled `when`; HookError naming the entry if it is not in the grammar."""
    try:
        return None if spec.when is None else compile_condition(spec.when)
    except ConditionError as exc:
        raise HookError(f"{hook_name(index, spec)}: {exc}") from exc


def check_factory(index: int, spec: HookSpec, registry: HookRegistry = HOOKS) -> HookFactory:
    """The entry's factory, with its params checked where the factory says how (nothing is
    built); HookError naming the entry."""
    name = hook_name(index, spec)
    try:
        factory = registry.resolve(spec.type)
    except HookError as exc:
        raise HookError(f"{name}: {exc}") from exc
    check = params_check(factory)
    if check is None:
        return factory
    try:
        check(copy.deepcopy(spec.params))
    except HookError as exc:
        raise HookError(f"{name}: {exc}") from exc
    except Exception as exc:
        raise HookError(f"{name}: checking its params failed: {_one_line(exc)}") from exc
    return factory


def check_hook_specs(
    specs: Sequence[HookSpec], registry: HookRegistry = HOOKS
) -> list[tuple[int, str | None, str]]:
    """Every mistake `HookRunner.from_specs` finds before building a hook, as (entry index, the
    key it is about or None for the entry, message): the same checks, but nothing is built."""
    problems: list[tuple[int, str | None, str]] = []
    for index, spec in enumerate(specs):
        try:
            check_when(index, spec)
        except HookError as exc:
            problems.append((index, "when", str(exc)))
        try:
            check_factory(index, spec, registry)
        except HookError as exc:
            problems.append((index, None, str(exc)))
    return problems


def _build(
    index: int, spec: HookSpec, resources: Mapping[str, Any], registry: HookRegistry
) -> _ConfiguredHook:
    name = hook_name(index, spec)
    condition = check_when(index, spec)
    factory = check_factory(index, spec, registry)
    # Each factory also sees its own entry, e.g. so early_stop can name its condition.
    hook_resources = MappingProxyType(ChainMap({"hook_spec": spec, "hook_name": name}, resources))
    try:
        hook = factory(copy.deepcopy(spec.params), hook_resources)
    except HookError as exc:
        raise HookError(f"{name}: {exc}") from exc
    except Exception as exc:
        raise HookError(f"{name}: building the hook failed: {_one_line(exc)}") from exc
    if not callable(hook):
        raise HookError(
            f"{name}: its factory returned a {type(hook).__name__}, not a callable hook"
        )
    return _ConfiguredHook(name=name, spec=spec, hook=hook, condition=condition)


class HookRunner:
    """The configured hooks, grouped by stage, in config order."""

    def __init__(self, hooks: Sequence[_ConfiguredHook]) -> None:
        self._hooks = list(hooks)
        self._closed = False

    @classmethod
    def from_specs(
        cls,
        specs: Sequence[HookSpec],
        resources: Mapping[str, Any] = _NO_RESOURCES,
        registry: HookRegistry = HOOKS,
    ) -> HookRunner:
        """Resolve, build and check every hook now; raises HookError naming the bad entry."""
        built: list[_ConfiguredHook] = []
        try:
            for index, spec in enumerate(specs):
                built.append(_build(index, spec, resources, registry))
        except BaseException:
            cls(built).close()  # hooks built before the bad one may hold files or connections
            raise
        return cls(built)

    def has_hooks(self, stage: Stage) -> bool:
        """Whether any enabled hook listens at `stage`: if not, skip building its context."""
        return any(h.spec.stage == stage and not h.stats.disabled for h in self._hooks)

    @property
    def stats(self) -> dict[str, HookStats]:
        """A snapshot per hook name."""
        return {h.name: dataclasses.replace(h.stats) for h in self._hooks}

    def run(self, stage: Stage, ctx: StageContext) -> None:
        """Call each enabled hook of `stage` that is due at `ctx.step` and whose `when` holds."""
        if ctx.stage != stage:
            raise ValueError(f"run({stage!r}) was given a context for stage {ctx.stage!r}")
        due = [
            h
            for h in self._hooks
            if h.spec.stage == stage and not h.stats.disabled and h.is_due(ctx.step)
        ]
        if not due:
            return
        safe_ctx = _read_only(ctx)
        values: dict[str, float] | None = None
        for configured in due:
            if configured.condition is not None:
                if values is None:
                    values = {**safe_ctx.metrics, "step": ctx.step, "epoch": ctx.epoch}
                if not self._condition_holds(configured, safe_ctx, values):
                    continue
            self._call(configured, safe_ctx)

    def _condition_holds(
        self, configured: _ConfiguredHook, ctx: StageContext, values: Mapping[str, float]
    ) -> bool:
        assert configured.condition is not None
        try:
            holds = configured.condition.evaluate(values)
        except MissingMetric as missing:
            configured.stats.skipped_missing_metric += 1
            if missing.name not in configured.warned_missing:
                configured.warned_missing.add(missing.name)
                self._warn_missing(configured, ctx, missing.name)
            return False
        except ConditionError as exc:  # e.g. a metric that is not a number
            self._fail(configured, ctx, exc)
            return False
        if not holds:
            configured.stats.skipped_by_when += 1
        return holds

    @staticmethod
    def _warn_missing(configured: _ConfiguredHook, ctx: StageContext, name: str) -> None:
        nearest = did_you_mean(name, ctx.metrics)
        hint = f"; {nearest}" if nearest else ""
        logger.warning(
            "%s: skipped at stage %s, step %d: its when %r needs metric %r, which this stage "
            "does not have%s (warned once)",
            configured.name,
            ctx.stage,
            ctx.step,
            configured.spec.when,
            name,
            hint,
        )

    def _call(self, configured: _ConfiguredHook, ctx: StageContext) -> None:
        configured.stats.calls += 1
        try:
            configured.hook(ctx)
        except Exception as exc:
            self._fail(configured, ctx, exc)

    @staticmethod
    def _fail(configured: _ConfiguredHook, ctx: StageContext, exc: Exception) -> None:
        configured.stats.failures += 1
        where = f"{configured.name} failed at stage {ctx.stage}, step {ctx.step}"
        logger.debug("%s", where, exc_info=exc)
        if configured.spec.on_error == "fatal":
            logger.error("%s: %s (on_error: fatal)", where, _one_line(exc))
            raise HookFailed(f"{where}: {_one_line(exc)}") from exc
        configured.stats.disabled = True
        logger.error(
            "%s: %s; disabled for the rest of the run (on_error: disable)", where, _one_line(exc)
        )

    def close(self) -> None:
        """Call each hook's `close()` once; a failure there is logged, never raised."""
        if self._closed:
            return
        self._closed = True
        for configured in self._hooks:
            close = getattr(configured.hook, "close", None)
            if not callable(close):
                continue
            try:
                close()
            except Exception as exc:
                logger.error("%s: close() failed: %s", configured.name, _one_line(exc))
                logger.debug("%s: close() failed", configured.name, exc_info=exc)

    def __enter__(self) -> HookRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
