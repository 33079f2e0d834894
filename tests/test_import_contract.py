"""The dependency direction of DESIGN.md, checked on every import statement in the packages.

rl imports neither sampling nor annotation; sampling does not import annotation; annotation uses
only sampling.records (and its own config) from sampling; no package imports the CLI (`lowtide`),
so each works as a library without it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
FORBIDDEN = {
    "rl": ("sampling", "annotation", "lowtide"),
    "sampling": ("annotation", "lowtide"),
    "annotation": ("lowtide",),
}
ANNOTATION_MAY_USE_FROM_SAMPLING = ("sampling.records",)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def violations(package: str) -> list[str]:
    problems = []
    for path in sorted((REPO / package).rglob("*.py")):
        for line, module in imported_modules(path):
            top = module.split(".")[0]
            where = f"{path.relative_to(REPO)}:{line} imports {module}"
            if top in FORBIDDEN[package] or (
                package == "annotation"
                and top == "sampling"
                and not module.startswith(ANNOTATION_MAY_USE_FROM_SAMPLING)
                and module != "sampling"
            ):
                problems.append(where)
    return problems


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_dependency_direction(package: str) -> None:
    assert violations(package) == []


def test_the_check_catches_a_violation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "bad.py").write_text(
        "from sampling.transport.producer import Producer\nimport annotation\n"
    )
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert violations("rl") == [
        "rl/bad.py:1 imports sampling.transport.producer",
        "rl/bad.py:1 imports sampling.transport.producer.Producer",
        "rl/bad.py:2 imports annotation",
    ]


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


def test_only_the_entry_point_imports_the_commands() -> None:
    """The loop, the services and the rest of `lowtide` are what the commands use, never the
    other way round: a module outside lowtide/cli that imports a command drags typer's command
    tree (and every command's imports) into a library call."""
    reaching = [
        f"{path.relative_to(REPO)}:{line} imports {module}"
        for path in sorted((REPO / "lowtide").rglob("*.py"))
        if "cli" not in path.relative_to(REPO / "lowtide").parts[:1] and path.name != "__main__.py"
        for line, module in imported_modules(path)
        if module.split(".")[0] == "typer"  # a library ends no command
        or module == "lowtide.cli"
        or module.startswith("lowtide.cli.")
    ]
    assert reaching == []


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


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


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
