"""Hook machinery: registry resolution, the runner's gates and error policy, and the built-ins."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from rl.config import STAGES, HookSpec, Stage
from rl.hooks import (
    HOOKS,
    HookError,
    HookFailed,
    HookRegistry,
    HookRunner,
    StageContext,
    TrainerControl,
)
from rl.samples import Sample
from tests.conftest import REPO

pytestmark = pytest.mark.unit


# --- fakes ----------------------------------------------------------------------------------


def make_sample(index: int = 0, reward: float = 0.5, details: Mapping[str, float] | None = None):
    return Sample(
        index=index,
        group_id=index // 2,
        prompt="2 + 2 =",
        response=" 4",
        prompt_ids=(1, 2, 3),
        response_ids=(4, 5),
        truncated=False,
        reward=reward,
        reward_details=details if details is not None else MappingProxyType({"exact": reward}),
    )


def make_ctx(
    stage: Stage = "step_end",
    step: int = 1,
    metrics: Mapping[str, float] | None = None,
    samples: Any = None,
    control: TrainerControl | None = None,
    epoch: int = 0,
) -> StageContext:
    return StageContext(
        stage=stage,
        step=step,
        epoch=epoch,
        run_id="run-1",
        rank=0,
        world_size=1,
        samples=samples if samples is not None else (make_sample(0), make_sample(1)),
        metrics=metrics if metrics is not None else {},
        run_dir=Path("/tmp/run-1"),
        model_name="tiny",
        generation=MappingProxyType({"temperature": 1.0}),
        control=control if control is not None else TrainerControl(),
    )


class Recorder:
    """Appends what it saw to `resources["calls"]`; raises when params say `fail: true`."""

    def __init__(self, params: dict[str, Any], resources: Mapping[str, Any]) -> None:
        self.label = params.get("label", "recorder")
        self.fail = params.get("fail", False)
        self.calls: list[tuple[str, str, int]] = resources["calls"]
        self.closed: list[str] = resources.get("closed", [])

    def __call__(self, ctx: StageContext) -> None:
        self.calls.append((self.label, ctx.stage, ctx.step))
        if self.fail:
            raise ValueError("boom\nsecond line")

    def close(self) -> None:
        self.closed.append(self.label)


def make_recorder(params: dict[str, Any], resources: Mapping[str, Any]) -> Recorder:
    """Referenced from configs as `tests.test_hooks:make_recorder`."""
    return Recorder(params, resources)


def registry_with_recorder() -> HookRegistry:
    registry = HookRegistry()
    registry.register("record")(make_recorder)
    return registry


def runner_for(*specs: HookSpec, calls: list, closed: list | None = None) -> HookRunner:
    resources = {"calls": calls, "closed": closed if closed is not None else []}
    return HookRunner.from_specs(list(specs), resources, registry=registry_with_recorder())


def spec(stage: Stage = "step_end", **fields: Any) -> HookSpec:
    return HookSpec(type=fields.pop("type", "record"), stage=stage, **fields)


# --- registry -------------------------------------------------------------------------------


def test_dotted_path_resolves_without_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO))  # `tests` is a package from the repo root
    calls: list = []
    runner = HookRunner.from_specs(
        [
            HookSpec(type="tests.test_hooks:make_recorder", stage="reward", params={"label": "a"}),
            HookSpec(type="tests.test_hooks.make_recorder", stage="reward", params={"label": "b"}),
        ],
        {"calls": calls},
    )
    runner.run("reward", make_ctx("reward", step=3))
    assert calls == [("a", "reward", 3), ("b", "reward", 3)]


def test_unknown_key_suggests_the_nearest_registered_name() -> None:
    with pytest.raises(HookError) as raised:
        HookRunner.from_specs([spec(type="early_stp")], {})
    message = str(raised.value)
    assert message.startswith("hooks[0] (early_stp): unknown hook type 'early_stp'")
    assert "did you mean 'early_stop'?" in message
    assert "registered: checkpoint, early_stop" in message


@pytest.mark.parametrize(
    ("type_name", "message"),
    [
        ("no_such_package.hooks:factory", "no module named 'no_such_package'"),
        ("json:no_such_factory", "'json' has no attribute 'no_such_factory'"),
        ("json.__doc__", "is a str, not a callable hook factory"),
        ("a:b:c", "neither a registered key nor a dotted path"),
        ("json:", "neither a registered key nor a dotted path"),
        ("1bad.module:x", "neither a registered key nor a dotted path"),
    ],
)
def test_bad_dotted_paths_fail_clearly(type_name: str, message: str) -> None:
    with pytest.raises(HookError, match="hooks\\[0\\]") as raised:
        HookRunner.from_specs([spec(type=type_name)], {})
    assert message in str(raised.value)


def test_import_failure_inside_the_module_is_reported_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_hooks_pkg.py").write_text("import not_installed_dependency\n")
    (tmp_path / "raising_hooks_pkg.py").write_text("raise RuntimeError('bad module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(HookError, match="importing 'broken_hooks_pkg' failed"):
        HOOKS.resolve("broken_hooks_pkg:factory")
    with pytest.raises(HookError, match="importing 'raising_hooks_pkg' failed: RuntimeError"):
        HOOKS.resolve("raising_hooks_pkg:factory")


def test_factory_that_returns_a_non_callable_or_raises() -> None:
    registry = HookRegistry()
    registry.register("not_a_hook")(lambda params, resources: 42)
    registry.register("fine")(lambda params, resources: lambda ctx: None)

    @registry.register("explodes")
    def explodes(params: dict[str, Any], resources: Mapping[str, Any]) -> Any:
        raise TypeError("needs a tokenizer")

    with pytest.raises(HookError, match=r"hooks\[0\] \(not_a_hook\): .*returned a int"):
        HookRunner.from_specs([spec(type="not_a_hook")], {}, registry=registry)
    with pytest.raises(HookError, match=r"hooks\[1\] \(explodes\): building.*needs a tokenizer"):
        HookRunner.from_specs([spec(type="fine"), spec(type="explodes")], {}, registry)


def test_register_refuses_a_second_factory_for_a_key() -> None:
    registry = registry_with_recorder()
    registry.register("record")(make_recorder)  # the same factory again: fine (re-import)
    with pytest.raises(HookError, match="already registered"):
        registry.register("record")(Recorder)
    registry.register("record", replace=True)(Recorder)
    assert registry.resolve("record") is Recorder
    with pytest.raises(HookError, match="letters, digits"):
        registry.register("has.dot")


def test_factories_get_a_params_copy_and_their_own_entry() -> None:
    seen: dict[str, Any] = {}
    registry = HookRegistry()

    @registry.register("inspect")
    def inspect(params: dict[str, Any], resources: Mapping[str, Any]) -> Any:
        params["nested"].append("changed")
        seen.update(resources)
        return lambda ctx: None

    entry = spec(type="inspect", params={"nested": ["x"]})
    HookRunner.from_specs([entry], {"tokenizer": "tok"}, registry=registry)
    assert entry.params == {"nested": ["x"]}
    assert seen == {"tokenizer": "tok", "hook_spec": entry, "hook_name": "hooks[0] (inspect)"}


def test_a_failed_build_closes_the_hooks_built_before_it() -> None:
    closed: list[str] = []
    with pytest.raises(HookError, match=r"hooks\[1\] \(record\): when: unexpected"):
        runner_for(spec(), spec(when="a.b"), calls=[], closed=closed)
    # The `when` of hooks[1] is compiled before its factory runs, so only hooks[0] was built.
    assert closed == ["recorder"]


# --- runner: gates --------------------------------------------------------------------------


def test_hooks_fire_only_at_their_stage_in_config_order() -> None:
    calls: list = []
    runner = runner_for(
        spec("reward", params={"label": "r"}),
        spec("step_end", params={"label": "s1"}),
        spec("step_end", params={"label": "s2"}),
        calls=calls,
    )
    for stage in STAGES:
        runner.run(stage, make_ctx(stage, step=1))
    assert calls == [("r", "reward", 1), ("s1", "step_end", 1), ("s2", "step_end", 1)]
    assert runner.has_hooks("reward") and runner.has_hooks("step_end")
    assert not runner.has_hooks("rollout") and not runner.has_hooks("train_end")


def test_every_runs_on_multiples_of_the_step() -> None:
    calls: list = []
    runner = runner_for(spec(every=3), calls=calls)
    for step in range(1, 10):
        runner.run("step_end", make_ctx(step=step))
    assert [step for _, _, step in calls] == [3, 6, 9]


def test_train_end_runs_once_whatever_every_says() -> None:
    calls: list = []
    runner = runner_for(spec("train_end", every=10), calls=calls)
    runner.run("train_end", make_ctx("train_end", step=37))
    assert calls == [("recorder", "train_end", 37)]


def test_when_gates_on_metrics_step_and_epoch() -> None:
    calls: list = []
    runner = runner_for(
        spec(when="reward/mean < 0.5", params={"label": "low"}),
        spec(when="step >= 2 and epoch == 1", params={"label": "late"}),
        calls=calls,
    )
    runner.run("step_end", make_ctx(step=1, metrics={"reward/mean": 0.9}))
    runner.run("step_end", make_ctx(step=2, metrics={"reward/mean": 0.1}))
    runner.run("step_end", make_ctx(step=3, metrics={"reward/mean": 0.1}, epoch=1))
    assert calls == [("low", "step_end", 2), ("low", "step_end", 3), ("late", "step_end", 3)]
    stats = runner.stats
    assert stats["hooks[0] (record)"].calls == 2
    assert stats["hooks[0] (record)"].skipped_by_when == 1
    assert stats["hooks[1] (record)"].skipped_by_when == 2


def test_every_and_when_both_apply() -> None:
    calls: list = []
    runner = runner_for(spec(every=2, when="x > 0"), calls=calls)
    for step, x in [(1, 1), (2, 0), (3, 1), (4, 1)]:
        runner.run("step_end", make_ctx(step=step, metrics={"x": x}))
    assert [step for _, _, step in calls] == [4]


def test_missing_metric_skips_and_warns_once_per_hook_and_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list = []
    runner = runner_for(
        spec("rollout", when="reward/maen < 0.5"),
        spec("rollout", when="kl > 1"),
        calls=calls,
    )
    with caplog.at_level(logging.WARNING, logger="rl.hooks"):
        for step in (1, 2, 3):
            runner.run("rollout", make_ctx("rollout", step=step, metrics={"reward/mean": 0.1}))
    assert calls == []
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    first = warnings[0].getMessage()
    assert first.startswith("hooks[0] (record): skipped at stage rollout, step 1")
    assert "'reward/maen'" in first and "did you mean 'reward/mean'?" in first
    assert "'kl'" in warnings[1].getMessage()
    assert runner.stats["hooks[0] (record)"].skipped_missing_metric == 3
    assert not runner.stats["hooks[0] (record)"].disabled


def test_run_refuses_a_context_of_another_stage() -> None:
    runner = runner_for(spec(), calls=[])
    with pytest.raises(ValueError, match="stage 'reward'"):
        runner.run("step_end", make_ctx("reward"))


# --- runner: errors -------------------------------------------------------------------------


def test_on_error_disable_logs_one_line_and_disables_the_hook(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list = []
    runner = runner_for(
        spec(params={"label": "bad", "fail": True}),
        spec(params={"label": "good"}),
        calls=calls,
    )
    with caplog.at_level(logging.DEBUG, logger="rl.hooks"):
        runner.run("step_end", make_ctx(step=1))
        runner.run("step_end", make_ctx(step=2))
    assert calls == [("bad", "step_end", 1), ("good", "step_end", 1), ("good", "step_end", 2)]
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert errors[0].getMessage() == (
        "hooks[0] (record) failed at stage step_end, step 1: ValueError: boom second line; "
        "disabled for the rest of the run (on_error: disable)"
    )
    assert errors[0].exc_info is None  # the traceback goes to debug only
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)
    stats = runner.stats["hooks[0] (record)"]
    assert (stats.calls, stats.failures, stats.disabled) == (1, 1, True)


def test_a_disabled_hook_no_longer_counts_as_listening() -> None:
    runner = runner_for(spec(params={"fail": True}), calls=[])
    assert runner.has_hooks("step_end")
    runner.run("step_end", make_ctx())
    assert not runner.has_hooks("step_end")


def test_on_error_fatal_raises_hook_failed_chained_to_the_original(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list = []
    runner = runner_for(
        spec(on_error="fatal", params={"fail": True}), spec(params={"label": "after"}), calls=calls
    )
    with pytest.raises(HookFailed) as raised:
        runner.run("step_end", make_ctx(step=4))
    assert str(raised.value).startswith("hooks[0] (record) failed at stage step_end, step 4")
    assert isinstance(raised.value.__cause__, ValueError)
    assert ("after", "step_end", 4) not in calls
    assert any("(on_error: fatal)" in r.getMessage() for r in caplog.records)


def test_a_non_numeric_metric_in_when_follows_on_error() -> None:
    runner = runner_for(spec(when="label > 1", on_error="fatal"), calls=[])
    with pytest.raises(HookFailed, match="'label' is not a number"):
        runner.run("step_end", make_ctx(metrics={"label": "abc"}))  # type: ignore[dict-item]


def test_a_hook_cannot_change_what_the_trainer_uses() -> None:
    trainer_metrics = {"reward/mean": 0.5}
    trainer_details = {"exact": 1.0}
    trainer_samples = [make_sample(0, reward=1.0, details=trainer_details)]
    refused: list[str] = []

    def vandal(ctx: StageContext) -> None:
        view: Any = ctx  # past the type checker, as a careless plug-in would go
        attempts = {
            "metrics": lambda: view.metrics.__setitem__("reward/mean", 99.0),
            "sample": lambda: setattr(view.samples[0], "reward", 99.0),
            "details": lambda: view.samples[0].reward_details.__setitem__("exact", 99.0),
            "samples": lambda: view.samples.append(make_sample(1)),
            "step": lambda: setattr(view, "step", 99),
            "generation": lambda: view.generation.__setitem__("temperature", 0.0),
        }
        for what, attempt in attempts.items():
            try:
                attempt()
            except (TypeError, AttributeError, dataclasses.FrozenInstanceError):
                refused.append(what)

    registry = HookRegistry()
    registry.register("vandal")(lambda params, resources: vandal)
    runner = HookRunner.from_specs([spec(type="vandal", on_error="fatal")], {}, registry)
    ctx = make_ctx(metrics=trainer_metrics, samples=trainer_samples)
    runner.run("step_end", ctx)

    assert refused == ["metrics", "sample", "details", "samples", "step", "generation"]
    assert trainer_metrics == {"reward/mean": 0.5}
    assert trainer_details == {"exact": 1.0}
    assert len(trainer_samples) == 1 and trainer_samples[0].reward == 1.0
    assert ctx.step == 1 and ctx.metrics is trainer_metrics


def test_hooks_see_a_private_copy_of_the_metrics() -> None:
    seen: list[StageContext] = []
    registry = HookRegistry()
    registry.register("keep")(lambda params, resources: seen.append)
    runner = HookRunner.from_specs([spec(type="keep")], {}, registry)
    metrics = MappingProxyType(live := {"x": 1.0})
    runner.run("step_end", make_ctx(metrics=metrics))
    live["x"] = 2.0  # the trainer goes on with its own dict
    assert isinstance(seen[0].metrics, MappingProxyType)
    assert seen[0].metrics == {"x": 1.0}


# --- close ----------------------------------------------------------------------------------


def test_close_calls_each_hook_once_and_logs_close_errors(caplog: pytest.LogCaptureFixture) -> None:
    closed: list[str] = []

    class BadClose:
        def __call__(self, ctx: StageContext) -> None: ...

        def close(self) -> None:
            raise OSError("disk full")

    registry = registry_with_recorder()
    registry.register("bad_close")(lambda params, resources: BadClose())
    registry.register("no_close")(lambda params, resources: lambda ctx: None)
    specs = [spec(params={"label": "a"}), spec(type="bad_close"), spec(type="no_close")]
    specs.append(spec("train_end", params={"label": "b", "fail": True}))
    resources = {"calls": [], "closed": closed}
    with HookRunner.from_specs(specs, resources, registry=registry) as runner:
        runner.run("train_end", make_ctx("train_end"))  # disables "b"; it is still closed
    runner.close()
    assert closed == ["a", "b"]
    assert any(
        "hooks[1] (bad_close): close() failed: OSError: disk full" in r.getMessage()
        for r in caplog.records
    )


# --- built-ins ------------------------------------------------------------------------------


def test_early_stop_requests_a_stop_naming_its_condition() -> None:
    control = TrainerControl()
    runner = HookRunner.from_specs(
        [HookSpec(type="early_stop", stage="step_end", when="reward/mean > 0.9")], {}
    )
    runner.run("step_end", make_ctx(step=4, metrics={"reward/mean": 0.5}, control=control))
    assert not control.should_stop
    runner.run("step_end", make_ctx(step=5, metrics={"reward/mean": 0.95}, control=control))
    assert control.should_stop
    assert control.stop_reason == "when 'reward/mean > 0.9' held at stage step_end, step 5"


def test_early_stop_reason_param_is_kept_with_the_condition() -> None:
    control = TrainerControl()
    entry = HookSpec(
        type="early_stop",
        stage="step_end",
        when="kl > 10",
        params={"reason": "KL blew up"},
    )
    HookRunner.from_specs([entry], {}).run(
        "step_end", make_ctx(step=7, metrics={"kl": math.inf}, control=control)
    )
    assert control.stop_reason == "KL blew up (when 'kl > 10' held) at stage step_end, step 7"


def test_checkpoint_requests_a_checkpoint() -> None:
    control = TrainerControl()
    runner = HookRunner.from_specs([HookSpec(type="checkpoint", stage="step_end", every=2)], {})
    runner.run("step_end", make_ctx(step=1, control=control))
    assert not control.should_save
    runner.run("step_end", make_ctx(step=2, control=control))
    assert control.should_save and not control.should_stop


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            HookSpec(type="early_stop", stage="step_end", params={"reson": "x"}),
            "hooks[0] (early_stop): unknown param 'reson'; did you mean 'reason'?",
        ),
        (
            HookSpec(type="early_stop", stage="step_end", params={"reason": 3}),
            "hooks[0] (early_stop): param 'reason' must be text, got int",
        ),
        (
            HookSpec(type="checkpoint", stage="step_end", params={"path": "x"}),
            "hooks[0] (checkpoint): unknown param 'path' (takes: none)",
        ),
    ],
)
def test_builtins_reject_bad_params(entry: HookSpec, message: str) -> None:
    with pytest.raises(HookError) as raised:
        HookRunner.from_specs([entry], {})
    assert str(raised.value).startswith(message)


def test_the_builtins_are_known_without_importing_their_modules() -> None:
    import sampling  # noqa: F401  (provides low_reward_sampler, as every lowtide path imports it)

    assert {"early_stop", "checkpoint", "low_reward_sampler"} <= set(HOOKS.names())
