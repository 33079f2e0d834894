"""The floor plan of DESIGN.md, checked on every import statement in the packages.

The layers (rl < sampling < annotation < lowtide), the forbidden edges and the fences around
each outside library are import-linter contracts in pyproject.toml (`lint-imports` checks them
too); these tests run them, show each can fail, and check what a contract cannot say: dotted
paths written as strings, RQ's private modules (import-linter sees a library as one module),
libraries nothing imports yet, import cycles, and what the command line loads at start.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import Any, ClassVar

import grimp
import pytest
from importlinter.adapters.building import GraphBuilder
from importlinter.application import use_cases
from importlinter.application.app_config import settings
from importlinter.application.ports.reporting import Report
from importlinter.application.rendering import render_report
from importlinter.configuration import configure

from tests.conftest import REPO

pytestmark = pytest.mark.unit

FORBIDDEN = {
    "rl": ("sampling", "annotation", "lowtide"),
    "sampling": ("annotation", "lowtide"),
    "annotation": ("lowtide",),
}
# Fences import-linter cannot hold: it refuses a contract on a library no module imports, and it
# sees a library as one module. A library -> the modules (and their submodules) that may import it.
FENCES_OF_LIBRARIES_NOT_IMPORTED_YET = {
    "trl": ("sampling.sources.trl", "lowtide.trl"),
    "openrlhf": ("sampling.sources.openrlhf", "lowtide.openrlhf"),
    "click": ("lowtide.cli.usage",),  # typer's click: typer/click internals
    "requests": ("annotation.labelstudio",),
}
# RQ's documented API; its other modules (rq.worker, rq.scheduler, rq.executions, ...) are its
# internals, reached only from annotation.rq_internals (tests/test_rq_internals.py guards them).
RQ_PUBLIC = ("rq", "rq.job", "rq.registry", "rq.exceptions", "rq.serializers")


def contracts_report(extra_import: tuple[str, str] | None = None) -> Report:
    """import-linter's report on pyproject.toml's contracts; `extra_import` (importer, imported)
    is added to the graph first, as if a module had that import statement."""
    configure()
    use_cases._register_built_in_contract_types()  # what `lint-imports` does first (2.17)
    options = use_cases.read_user_options(str(REPO / "pyproject.toml"))
    settings.configure(GRAPH_BUILDER=_CachedBuilder(extra_import))
    try:
        return use_cases.create_report(options, cache_dir=None)
    finally:
        configure()


class _CachedBuilder:
    """The graph of the packages, built once per test run; a copy of it for each report."""

    built: ClassVar[dict[str, grimp.ImportGraph]] = {}

    def __init__(self, extra_import: tuple[str, str] | None) -> None:
        self.extra_import = extra_import

    def build(self, **options: Any) -> grimp.ImportGraph:
        key = repr(sorted(options.items()))
        if key not in self.built:
            self.built[key] = GraphBuilder().build(**options)
        graph = copy.deepcopy(self.built[key])
        if self.extra_import is not None:
            importer, imported = self.extra_import
            graph.add_import(importer=importer, imported=imported, line_number=1,
                             line_contents=f"import {imported}")  # fmt: skip
        return graph


def broken_contracts(report: Report) -> list[str]:
    return sorted(
        contract.contract_options["id"]
        for contract, check in report.get_contracts_and_checks()
        if not check.kept
    )


def test_the_import_contracts_hold() -> None:
    report = contracts_report()
    if report.contains_failures:
        render_report(report)  # each broken contract with its import chains, as lint-imports
    assert report.contains_failures is False, broken_contracts(report)
    assert report.kept_count >= 12


@pytest.mark.parametrize(
    ("importer", "imported", "broken"),
    [
        ("rl.trainer", "sampling.routing", ["layers"]),
        # and through the importer, the Label Studio client: the core (and `lowtide ingest`,
        # which routes through it) would load its SDK
        (
            "sampling.routing",
            "annotation.importer",
            ["layers", "light-dump-follower", "light-routing-core"],
        ),
        ("annotation.export", "lowtide.errors", ["layers"]),
        ("annotation.export", "sampling.selection.policies", ["record-schema"]),
        ("sampling.selection.policies", "torch", ["light-dump-follower", "light-routing-core"]),
        (
            "sampling.transport.producer",
            "transformers",
            ["light-dump-follower", "light-routing-core"],
        ),
        ("sampling.sources.ingest.follower", "torch", ["light-dump-follower"]),
        ("lowtide.loop.runner", "lowtide.cli.main", ["commands"]),
        ("lowtide.services.labelstudio", "typer", ["typer"]),
        ("annotation.export", "label_studio_sdk", ["label-studio"]),
        ("annotation.accounts", "annotation.labelstudio_sdk", ["label-studio"]),
        ("lowtide.services.labelstudio", "httpx", ["http"]),
        ("annotation.export", "rq", ["rq"]),
        ("sampling.sources.search.route", "duckdb", ["duckdb"]),
        ("rl.tracking.router", "wandb", ["wandb"]),
        ("sampling.routing", "verl", ["verl"]),
    ],
)
def test_a_broken_contract_fails(importer: str, imported: str, broken: list[str]) -> None:
    assert broken_contracts(contracts_report((importer, imported))) == broken


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def fence_violations(root: Path = REPO) -> list[str]:
    """Imports of a library of FENCES_OF_LIBRARIES_NOT_IMPORTED_YET, or of RQ's internals,
    outside the modules allowed to."""
    found = []
    for package in (*FORBIDDEN, "lowtide"):
        for path in sorted((root / package).rglob("*.py")):
            importer = ".".join(path.relative_to(root).with_suffix("").parts)
            for line, module in statement_modules(path):
                top = module.split(".")[0]
                allowed = FENCES_OF_LIBRARIES_NOT_IMPORTED_YET.get(top)
                if top == "rq" and module not in RQ_PUBLIC:
                    allowed = ("annotation.rq_internals",)
                if allowed is not None and not any(
                    importer == name or importer.startswith(f"{name}.") for name in allowed
                ):
                    found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


def statement_modules(path: Path) -> list[tuple[int, str]]:
    """The modules import statements name (`from rq.job import Job`: rq.job), not the names
    taken from them."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_the_libraries_no_contract_can_fence_yet_stay_in_their_modules() -> None:
    assert fence_violations() == []


def test_the_fence_check_catches_a_library_outside_its_module(tmp_path: Path) -> None:
    for package in (*FORBIDDEN, "lowtide"):
        (tmp_path / package).mkdir()
    (tmp_path / "rl" / "bad.py").write_text("import trl\nfrom rq.worker import Worker\n")
    (tmp_path / "annotation" / "rq_internals.py").write_text("from rq.worker import Worker\n")
    (tmp_path / "annotation" / "jobs.py").write_text("from rq.job import Job\nimport rq\n")
    expected = ["rl/bad.py:1 imports trl", "rl/bad.py:2 imports rq.worker"]
    assert fence_violations(tmp_path) == expected


def named_modules(path: Path) -> list[tuple[int, str]]:
    """Dotted paths written as strings (`"sampling.sources.sampler:make_low_reward_sampler"`): an
    import in all but the statement, which the check must see too."""
    dotted = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+:[A-Za-z_][\w.]*")
    return [
        (node.lineno, node.value.partition(":")[0])
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and dotted.fullmatch(node.value)
    ]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_package_names_a_module_it_may_not_import_in_a_string(package: str) -> None:
    named = [
        f"{path.relative_to(REPO)}:{line} names {module}"
        for path in sorted((REPO / package).rglob("*.py"))
        for line, module in named_modules(path)
        if module.split(".")[0] in FORBIDDEN[package]
    ]
    assert named == []


@pytest.mark.integration
def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    """Every command pays for what `lowtide` imports at start: torch, transformers and the Label
    Studio SDK (0.7 s) load only inside the commands that use them."""
    import subprocess
    import sys

    heavy = ("torch", "transformers", "label_studio_sdk", "datasets", "wandb")
    probe = (  # every command's module, as `lowtide --help` loads them
        "import sys; from lowtide.cli.main import build_app; build_app([]); "
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip()
    assert loaded == ""


@pytest.mark.integration
def test_a_command_loads_only_its_own_module() -> None:
    """`lowtide worker` (started by every worker process and many tests) does not pay for the
    trainer's, the loop's or the search's command modules."""
    import subprocess
    import sys

    from lowtide.cli.main import COMMANDS

    probe = (
        "import sys; from lowtide.cli.main import build_app; build_app(['worker', '--help']); "
        "print(','.join(sorted(m for m in sys.modules if m.startswith('lowtide.cli.'))))"
    )
    loaded = (
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
        )
        .stdout.strip()
        .split(",")
    )
    commands = {f"lowtide.cli.{command.module}" for command in COMMANDS.values()}
    assert commands & set(loaded) == {"lowtide.cli.worker_cmd"}, loaded


def import_cycle(package: str) -> list[str] | None:
    """A chain of modules of `package` that imports its own start, counting imports inside
    functions too (a lazy import is still a cycle to read through), or None."""
    paths = sorted((REPO / package).rglob("*.py"))
    modules = {module_name(path) for path in paths}
    graph = {
        module_name(path): sorted(
            {name for _, name in imported_modules(path) if name in modules} - {module_name(path)}
        )
        for path in paths
    }
    state: dict[str, str] = {}

    def visit(module: str, chain: list[str]) -> list[str] | None:
        state[module] = "open"
        for target in graph[module]:
            if state.get(target) == "open":
                return [*chain[chain.index(target) :], target]
            if target not in state and (found := visit(target, [*chain, target])):
                return found
        state[module] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


@pytest.mark.parametrize("package", [*sorted(FORBIDDEN), "lowtide"])
def test_no_import_cycles(package: str) -> None:
    # A package's __init__ that imports its own submodules is an edge too, so a submodule that
    # imports its package back (instead of the module that defines the name) shows up here.
    assert import_cycle(package) is None
