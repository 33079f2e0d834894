"""Command options generated from the settings models: each setting declared once, with one
default; the flags users and docs know keep their names; secrets are never options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from pydantic import Field, SecretStr

from annotation.reward_model.settings import RMTrainSettings
from lowtide.cli.settings_options import option_for, settings_options
from lowtide.loop.settings import LoopSettings
from rl.config_base import ConfigSection
from tests.conftest import invoke

pytestmark = pytest.mark.unit

RM_TRAIN_FLAGS = ("--epochs", "--lr", "--lr-schedule", "--batch-size", "--rating-weight",
                  "--holdout", "--seed", "--weight-by-agreement", "--written-weight")  # fmt: skip
LOOP_FLAGS = ("--rounds", "--steps", "--start", "--reviewer", "--reviewer-email",
              "--min-reviews", "--review-timeout", "--poll", "--eval-prompts", "--rm-epochs",
              "--rm-lr", "--rm-written-weight", "--rm-disagreement",
              "--no-rm-disagreement")  # fmt: skip


def command(*words: str) -> Any:
    from lowtide.cli.main import build_app

    found = typer.main.get_command(build_app(list(words)))
    for word in words:
        found = found.commands[word]
    return found


def options(cmd: Any) -> dict[str, Any]:
    # typer brings its own copy of click: options are told by their kind, not their class
    return {
        flag: param
        for param in cmd.params
        if param.param_type_name == "option"
        for flag in (*param.opts, *param.secondary_opts)
    }


def test_rm_train_takes_the_training_settings_with_their_defaults() -> None:
    taken = options(command("rm", "train"))
    assert set(RM_TRAIN_FLAGS) <= set(taken)
    defaults = RMTrainSettings()
    for flag in RM_TRAIN_FLAGS:
        param = taken[flag]
        assert param.default == getattr(defaults, param.name or ""), flag
    assert taken["--lr"].name == "learning_rate"
    assert taken["--epochs"].min == 1  # the model's bound, shown in --help


def test_the_loop_trains_its_reward_models_with_the_same_settings() -> None:
    taken = options(command("loop"))
    assert set(LOOP_FLAGS) <= set(taken)
    rm, loop = RMTrainSettings.model_fields, LoopSettings.model_fields
    assert taken["--rm-epochs"].default == rm["epochs"].default
    assert loop["rm_written_weight"].metadata == rm["written_weight"].metadata  # its bounds
    # The loop's one deliberate difference, set in LoopSettings (it says why).
    assert taken["--rm-lr"].default == loop["rm_learning_rate"].default == 3e-4
    assert LoopSettings(rm_epochs=2).rm_training() == RMTrainSettings(epochs=2, learning_rate=3e-4)


def test_a_value_the_model_refuses_is_one_line_naming_the_flag(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = invoke(capsys, "rm", "train", "--base", "b", "--out", "o", "--lr", "0")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --lr 0.0: ") and "greater than 0" in err


class _WithSecrets(ConfigSection):
    name: str = Field("x", description="a plain setting")
    token: SecretStr | None = None
    url: str = Field("u", json_schema_extra={"env": "SOME_URL", "env_only": True})


def test_secret_fields_are_never_options() -> None:
    @settings_options(_WithSecrets)
    def show(settings: _WithSecrets) -> None:
        pass

    app = typer.Typer()
    app.command()(show)
    flags = set(options(typer.main.get_command(app)))
    assert "--name" in flags and not flags & {"--token", "--url"}
    with pytest.raises(ValueError, match="secret"):
        option_for(_WithSecrets, "token")
