"""What lowtide relies on in typer and TRL beyond their documented API, checked against the
versions installed, so that a new release that changes it fails here by name:

- typer raises usage errors of its own vendored click (`typer._click`), which
  lowtide/cli/usage.py reaches through the module of typer's public `BadParameter`;
- TRL hands a reward function `log_metric`, a bound method of the GRPOTrainer, and the TRL
  adapter finds the trainer (run, rank, model, generation settings) as its `__self__`
  (sampling/sources/trl/adapter.py `_trainer_view`). The real-TRL tests (tests/test_trl_adapter.py)
  cover the behaviour; this names the reach.
"""

from __future__ import annotations

import inspect
import re

import pytest
import typer
from typer.testing import CliRunner

from lowtide.cli.usage import click_error_line, click_errors
from tests.conftest import REPO

pytestmark = pytest.mark.unit


def test_typer_raises_the_usage_errors_of_the_click_module_usage_reads() -> None:
    for name in ("UsageError", "NoSuchOption", "BadParameter", "MissingParameter"):
        assert hasattr(click_errors, name), name
    assert typer.BadParameter is click_errors.BadParameter
    app = typer.Typer()

    @app.command()
    def main(count: int = 1) -> None:  # pragma: no cover - never reached
        pass

    result = CliRunner().invoke(app, ["--cuont", "2"], standalone_mode=False)
    assert isinstance(result.exception, click_errors.NoSuchOption)
    assert "--count" in click_error_line(result.exception)  # the suggestion usage prints


def test_trl_gives_reward_functions_log_metric_bound_to_the_trainer() -> None:
    import trl
    from trl import GRPOTrainer

    pin = re.search(r'"trl>=(\d+\.\d+),<(\d+\.\d+)"', (REPO / "pyproject.toml").read_text())
    assert pin is not None and trl.__version__.startswith(pin.group(1) + "."), trl.__version__
    source = inspect.getsource(GRPOTrainer._calculate_rewards)
    assert 'reward_kwargs["log_metric"] = self._log_metric' in source
    init = inspect.getsource(GRPOTrainer.__init__)  # what the adapter reads of the trainer
    assert "self.reward_funcs = " in init and "self.reward_func_names = " in init
