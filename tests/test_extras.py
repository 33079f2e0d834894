"""The base install is the routing core: the commands it serves run without the extras, and a
command that needs one says which, in one line (`lowtide.cli.extras`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


# The routing core's footprint: what the base install brings into another trainer's environment.
# A dependency added to `[project] dependencies` must be added here too, on purpose: the TRL,
# verl and OpenRLHF environments get it, next to their own pins.
BASE_DEPENDENCIES = {"pydantic", "pyyaml", "redis", "rq", "psutil", "python-dotenv",
                     "phonenumbers", "python-stdnum", "hyperscan", "typer", "rich"}  # fmt: skip
# What importing an adapter costs beyond the trainer's own libraries (torch, verl, ...), from
# `python -X importtime`: 1.9-3.6 s measured on a 2-core machine at load average 17 (so ~3x over
# the lowest), well under the ~5 s torch alone takes there.
ADAPTER_IMPORT_BOUND_S = 6.0
TRAINER_LIBRARIES = {"torch", "transformers", "trl", "accelerate", "verl", "ray", "vllm",
                     "openrlhf", "deepspeed"}  # fmt: skip


def _distribution_name(spec: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]).lower()


def base_dependencies_beyond_the_list(pyproject: str) -> set[str]:
    import tomllib

    declared = tomllib.loads(pyproject)["project"]["dependencies"]
    return {_distribution_name(spec) for spec in declared} - BASE_DEPENDENCIES


@pytest.mark.unit
def test_the_base_install_gains_no_dependency_unnoticed() -> None:
    assert base_dependencies_beyond_the_list((REPO / "pyproject.toml").read_text()) == set()
    grown = (
        (REPO / "pyproject.toml")
        .read_text()
        .replace("dependencies = [\n", 'dependencies = [\n    "numpy>=2",\n', 1)
    )
    assert base_dependencies_beyond_the_list(grown) == {"numpy"}


def own_import_seconds(importtime_lines: str) -> float:
    """The seconds `python -X importtime` spent on modules outside TRAINER_LIBRARIES and what
    they import (a module's children are printed before it, indented one step deeper)."""
    rows = []
    for line in importtime_lines.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        head, _, name = line.split("|")
        rows.append((len(name) - len(name.lstrip(" ")), name.strip(), int(head.split(":")[1])))
    own_us, parents = 0, []  # (indent, inside a trainer library), from the outermost in
    for indent, name, self_us in reversed(rows):
        while parents and parents[-1][0] >= indent:
            parents.pop()
        inside = name.split(".")[0] in TRAINER_LIBRARIES or bool(parents and parents[-1][1])
        parents.append((indent, inside))
        own_us += 0 if inside else self_us
    return own_us / 1e6


@pytest.mark.unit
def test_import_time_counts_only_what_is_not_the_trainers() -> None:
    printed = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       300 |        300 |     torch._C\n"
        "import time:      1000 |       1300 |   torch\n"
        "import time:       200 |        200 |   redis\n"
        "import time:        50 |       1550 | lowtide.trl\n"
    )
    assert own_import_seconds(printed) == pytest.approx(250e-6)


@pytest.mark.parametrize(
    "adapter",
    ["lowtide.trl", "lowtide.openrlhf", pytest.param("lowtide.verl", marks=pytest.mark.e2e)],
)
def test_importing_an_adapter_stays_within_its_bound(adapter: str) -> None:
    python = Path(sys.executable)
    if adapter == "lowtide.verl":  # verl's pins clash with ours: its own cached virtualenv
        from lowtide.services.peer_venvs import VERL

        python = VERL.python
        if not python.exists():
            pytest.skip("verl's virtualenv is not built (make peer-venvs)")
    result = subprocess.run(
        [str(python), "-X", "importtime", "-c", f"import {adapter}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert own_import_seconds(result.stderr) < ADAPTER_IMPORT_BOUND_S
