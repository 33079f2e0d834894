"""The base install is the routing core: the commands it serves run without the extras, and a
command that needs one says which, in one line (`lowtide.cli.extras`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lowtide.cli.extras import missing_extra
from tests.conftest import REPO

pytestmark = pytest.mark.integration

# What the base install leaves out: blocked the way a missing package fails an import.
EXTRAS_MODULES = ("torch", "transformers", "wandb", "datasets", "label_studio_sdk", "httpx",
                  "prometheus_client", "tensorboard")  # fmt: skip
RUN_WITHOUT_EXTRAS = f"""
import sys
for module in {EXTRAS_MODULES!r}:
    sys.modules[module] = None  # `import module` now raises ModuleNotFoundError
from lowtide.cli.main import main
main(sys.argv[1:])
"""


def lowtide_without_extras(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_EXTRAS, *args],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.unit
def test_a_module_of_an_extra_names_the_extra_and_the_pip_line() -> None:
    line = missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch"))
    assert line == (
        "this command needs lowtide's train extra (torch is not installed): "
        "pip install 'lowtide[train]' (or 'lowtide[all]')"
    )
    assert "lowtide[review]" in (
        missing_extra(ModuleNotFoundError(name="label_studio_sdk.x")) or ""
    )
    assert missing_extra(ModuleNotFoundError(name="no_such_thing")) is None


@pytest.mark.parametrize(
    "args", [["--help"], ["ingest", "--help"], ["queue", "--help"], ["config", "check", "--help"]]
)
def test_the_commands_of_the_base_install_start_without_any_extra(args: list[str]) -> None:
    result = lowtide_without_extras(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Usage" in result.stdout


@pytest.mark.parametrize(
    ("args", "extra"),
    [(["worker", "--burst"], "review"), (["model", "tiny", "--out", "/nonexistent/x"], "train")],
)
def test_a_command_that_needs_an_extra_says_so_in_one_line(args: list[str], extra: str) -> None:
    result = lowtide_without_extras(*args)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: this command needs lowtide's ")
    assert f"pip install 'lowtide[{extra}]'" in lines[0]


def test_every_module_named_belongs_to_a_distribution_of_its_extra() -> None:
    """The module -> extra map says what pyproject.toml's extras hold: a distribution moved to
    another extra (or out of them) fails here, not as a wrong pip line for a user."""
    import re
    from importlib.metadata import packages_distributions

    import tomllib

    from lowtide.cli import extras

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    distributions = packages_distributions()

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    for module, extra in extras._EXTRA_OF_MODULE.items():
        listed = {
            normal(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0])
            for spec in declared["optional-dependencies"][extra]
        }
        assert {normal(d) for d in distributions.get(module, [])} & listed, (module, extra)
