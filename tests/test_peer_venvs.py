"""Other trainers' cached virtualenvs (lowtide.services.peer_venvs): what makes one current, how
a cached one is found and linked without rebuilding, and how a failed build reads. The real
builds run in `make test` (peer-venvs) and are used by the adapters' tests."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lowtide.errors import UserError
from lowtide.services import peer_venvs
from tests.conftest import REPO

PROJECT_PINS = (REPO / "pyproject.toml").read_text()


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOWTIDE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def fake_installed(peer: peer_venvs.PeerVenv, project: Path) -> None:
    """What a finished build leaves: the venv's python and the marker with the recipe's print."""
    (peer.dir / "bin").mkdir(parents=True)
    peer.python.write_text("")
    (peer.dir / ".lowtide-installed").write_text(peer.fingerprint(project))


def test_routing_dependencies_carry_the_pins_of_pyproject() -> None:
    wanted = peer_venvs.routing_requirements(REPO)
    assert [re.split(r"[<>=]", spec)[0] for spec in wanted] == list(peer_venvs.ROUTING_DEPENDENCIES)
    for spec in wanted:
        assert f'"{spec}",' in PROJECT_PINS


def test_the_install_lines_for_verl_and_openrlhf_name_every_routing_dependency() -> None:
    """The docs' `pip install` beside `--no-deps` must hold what the routing core imports
    (a missing one ends the adapter's import in ModuleNotFoundError), with pyproject's pins."""
    from tests.helpers.docs import page

    pages = page("integrations/verl.md") + page("integrations/openrlhf.md")
    lines = re.findall(r"`pip install (\"pydantic[^`]*)`", pages)
    assert len(lines) == 2
    wanted = {re.split(r"[<>=]", spec)[0]: spec for spec in peer_venvs.routing_requirements(REPO)}
    for line in lines:
        given = {re.split(r"[<>=]", spec.strip('"'))[0]: spec.strip('"') for spec in line.split()}
        assert set(given) == set(wanted), line
        for name, spec in given.items():
            assert (
                spec == name
                or spec.replace(">=5,", ">=5.0,") == wanted[name]
                or (spec == wanted[name])
            ), (name, spec)


def test_a_changed_recipe_or_pin_makes_the_cached_venv_stale(cache: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT_PINS)
    peer = peer_venvs.VERL
    fake_installed(peer, project)
    assert peer.is_installed(project)
    assert str(peer.dir).startswith(str(cache))
    assert not dataclasses.replace(peer, steps=(*peer.steps, ("extra",))).is_installed(project)
    (project / "pyproject.toml").write_text(PROJECT_PINS.replace('"rq>=2.12,<2.13"', '"rq>=3"'))
    assert not peer.is_installed(project)


def test_a_cached_venv_is_linked_into_the_project_without_building(
    cache: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT_PINS)
    peer = dataclasses.replace(peer_venvs.VERL, steps=(("never-installed",),))
    fake_installed(peer, project)
    started = time.monotonic()
    python = peer_venvs.ensure(peer, project)
    assert time.monotonic() - started < 1  # no venv, no pip: only the lock and the link
    assert python == peer.python
    assert (project / ".venv-verl").resolve() == peer.dir.resolve()
    # The checkout's code, not an install, is what the venv's python imports.
    assert peer.environ(project, {"PYTHONPATH": "/x"})["PYTHONPATH"] == f"{project}:/x"


@pytest.mark.slow
def test_a_failed_build_is_one_message_and_leaves_nothing_current(
    cache: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(PROJECT_PINS)
    broken = peer_venvs.PeerVenv(name="broken", version="0", steps=(), check="import no_such_mod")
    # Only the check fails (no steps to install): pip installs the routing dependencies.
    with pytest.raises(UserError) as failure:
        peer_venvs.ensure(broken, project)
    message = str(failure.value)
    assert message.startswith(f"checking the broken 0 virtualenv in {broken.dir} failed")
    assert "No module named 'no_such_mod'" in message
    assert "Traceback" not in message.splitlines()[0]
    assert not broken.is_installed(project)


def test_the_command_names_the_known_venvs_on_a_wrong_name() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lowtide.services.peer_venvs", "verll"],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"usage: python -m lowtide.services.peer_venvs {{{','.join(peer_venvs.PEERS)}}}..."
    )
