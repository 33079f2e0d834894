"""Virtualenvs for other trainers (verl, OpenRLHF): built once per user, cached, linked in.

Their transformers pins clash with ours, so each gets a virtualenv of its own in the per-user
cache, keyed by name and version (`~/.cache/lowtide/verl-0.9.1`), linked into the project as
`.venv-<name>` like Label Studio's. torch is installed first, pinned: installed after a library
that needs it, pip would pull a multi-GB CUDA build.

lowtide goes in with the line the integrations pages give its users (`INSTALL_LINE`: the base
install, the routing core), so a dependency the core imports but pyproject.toml does not list
fails the build's check, as it would fail a user. The check imports the adapter from the
installed copy, away from the checkout. When the checkout's code changes, only that line runs
again (a few seconds); when the recipe or the base dependencies change, the venv is rebuilt.

    python -m lowtide.services.peer_venvs verl     # what `make test` runs: fast when cached
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from lowtide.errors import UserError
from lowtide.services.state import cache_dir

TORCH_SPEC = "torch==2.13.0"  # as the Makefile's: a CPU wheel here
# The line docs/integrations/{verl,openrlhf}.md give, word for word (a test holds them to it).
INSTALL_LINE = "pip install <lowtide checkout>"
PACKAGES = ("lowtide", "rl", "sampling", "annotation")  # pyproject.toml's packages
_MARKER = ".lowtide-installed"  # the recipe's fingerprint: the venv is built
_SOURCE_MARKER = ".lowtide-source"  # the fingerprint of the lowtide copy installed in it
_PIP_NOISE = "ignored: it is neither"  # pip's notes about local mirrors that do not exist


@dataclass(frozen=True)
class PeerVenv:
    """How to build one trainer's virtualenv: pip steps in order, then a check that must pass."""

    name: str
    version: str
    steps: tuple[tuple[str, ...], ...]  # each: the arguments of one `pip install`
    check: str  # Python run in the venv with the checkout on PYTHONPATH: imports that must work
    install_env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def dir(self) -> Path:
        return cache_dir() / f"{self.name}-{self.version}"

    @property
    def python(self) -> Path:
        return self.dir / "bin" / "python"

    @property
    def link_name(self) -> str:
        return f".venv-{self.name}"

    def fingerprint(self, project_dir: Path) -> str:
        """Changes when the recipe or lowtide's base dependencies change: then a rebuild."""
        recipe = [self.steps, sorted(self.install_env.items()), base_dependencies(project_dir)]
        return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()[:16]

    def is_installed(self, project_dir: Path) -> bool:
        """Built from the current recipe (the lowtide copy in it may still be older)."""
        return _marker_is(self.dir / _MARKER, self.fingerprint(project_dir)) and (
            self.python.exists()
        )

    def has_current_lowtide(self, project_dir: Path) -> bool:
        return self.is_installed(project_dir) and _marker_is(
            self.dir / _SOURCE_MARKER, source_fingerprint(project_dir)
        )

    def environ(self, project_dir: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """An environment for the venv's python with the checkout on PYTHONPATH, for scripts
        that import from it (the tests' helpers); `ensure` keeps the installed copy of lowtide
        the same code, and `_run` imports that copy alone."""
        env = dict(os.environ if base is None else base)
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (str(project_dir), env.get("PYTHONPATH", "")) if part
        )
        env.pop("VIRTUAL_ENV", None)
        return env


VERL = PeerVenv(
    name="verl",
    version="0.9.1",
    steps=(
        (TORCH_SPEC,),
        # verl imports cachetools, fastapi and uvicorn without declaring them (ray_trainer.py).
        ("verl==0.9.1", "cachetools", "fastapi", "uvicorn"),
    ),
    check=(
        "import verl, transformers, ray;"
        "from verl.trainer.ppo.ray_trainer import RayPPOTrainer;"
        "from verl.experimental.reward_loop.reward_manager import get_reward_manager_cls;"
        "import lowtide.verl, lowtide.integrations"
    ),
)

OPENRLHF = PeerVenv(
    name="openrlhf",
    version="0.11.2",
    steps=(
        (TORCH_SPEC,),
        # Its full install builds flash-attn and pulls deepspeed and ray (~90 s, 2.0 GB); its
        # reward path (openrlhf.utils.agent and the package's utils) needs only these (~50 s,
        # 1.2 GB), with the transformers it pins.
        ("--no-deps", "openrlhf==0.11.2"),
        ("transformers==5.15.0", "aiohttp", "pylatexenc", "sympy"),
    ),
    check=(
        "from openrlhf.utils.agent import SingleTurnAgentExecutor;"
        "import transformers, aiohttp;"
        "import lowtide.openrlhf"
    ),
)

PEERS: dict[str, PeerVenv] = {VERL.name: VERL, OPENRLHF.name: OPENRLHF}


def base_dependencies(project_dir: Path) -> str:
    """pyproject.toml's `[project] dependencies` list, as written."""
    text = (project_dir / "pyproject.toml").read_text()
    found = re.search(r"^dependencies = \[\n(.*?)^\]", text, flags=re.MULTILINE | re.DOTALL)
    if found is None:
        raise UserError(f"{project_dir / 'pyproject.toml'} has no [project] dependencies list")
    return found.group(1)


def source_fingerprint(project_dir: Path) -> str:
    """Changes with any file pip would install from the checkout."""
    digest = hashlib.sha256((project_dir / "pyproject.toml").read_bytes())
    for package in PACKAGES:
        for path in sorted((project_dir / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(project_dir)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def install_command(python: Path, project_dir: Path) -> list[str]:
    """INSTALL_LINE with the checkout filled in, run by the venv's own pip."""
    command, placeholder = INSTALL_LINE.split(" <", 1)
    assert placeholder == "lowtide checkout>", INSTALL_LINE
    # The checkout is one argument, spaces and all.
    return [str(python), "-m", *command.split(), str(project_dir), "--quiet"]


def _marker_is(marker: Path, fingerprint: str) -> bool:
    return marker.exists() and marker.read_text().strip() == fingerprint


def ensure(peer: PeerVenv, project_dir: Path, on_line: Callable[[str], None] | None = None) -> Path:
    """Build the peer's venv unless the cache has it, install the checkout's lowtide into it
    unless that copy is current (a lock guards concurrent builds), link it into the project, and
    return its python."""
    project_dir = project_dir.resolve()
    on_line = on_line or (lambda _: None)
    target = peer.dir
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not peer.is_installed(project_dir):
            _build(peer, project_dir, on_line)
        if not peer.has_current_lowtide(project_dir):
            _install_lowtide(peer, project_dir, on_line)
    _link_into_project(project_dir / peer.link_name, target)
    return peer.python


def _build(peer: PeerVenv, project_dir: Path, on_line: Callable[[str], None]) -> None:
    target = peer.dir
    if target.exists():
        shutil.rmtree(target)  # an interrupted or outdated install: start clean
    pip = [str(peer.python), "-m", "pip", "install", "--quiet"]
    _run(peer, [sys.executable, "-m", "venv", str(target)], on_line)
    for step in (("--upgrade", "pip"), *peer.steps):
        _run(peer, [*pip, *step], on_line)
    (target / _MARKER).write_text(peer.fingerprint(project_dir))


def _install_lowtide(peer: PeerVenv, project_dir: Path, on_line: Callable[[str], None]) -> None:
    (peer.dir / _SOURCE_MARKER).unlink(missing_ok=True)
    # setuptools builds in the checkout's build/ and keeps there what the source has since
    # deleted, which would go into the copy: start from the source alone.
    shutil.rmtree(project_dir / "build", ignore_errors=True)
    _run(peer, install_command(peer.python, project_dir), on_line)
    # Run in the venv's directory: the check imports the installed copy, not the checkout.
    _run(peer, [str(peer.python), "-c", peer.check], on_line, cwd=peer.dir)
    (peer.dir / _SOURCE_MARKER).write_text(source_fingerprint(project_dir))


def _run(
    peer: PeerVenv, command: list[str], on_line: Callable[[str], None], cwd: Path | None = None
) -> None:
    env = {**os.environ, **peer.install_env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    checking = command[-2] == "-c"
    shown = " ".join(command[-1:] if checking else command[3:])
    if result.returncode != 0:
        errors = [line for line in result.stderr.splitlines() if _PIP_NOISE not in line]
        raise UserError(
            f"{'checking' if checking else 'installing'} the {peer.name} {peer.version} "
            f"virtualenv in {peer.dir} failed ({shown[:200]}):\n" + "\n".join(errors[-15:])
        )
    on_line(f"{shown[:100]} ({time.monotonic() - started:.0f} s)")


def _link_into_project(link: Path, target: Path) -> None:
    if link.is_symlink() and link.resolve() == target.resolve():
        return
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(target)


def main(argv: list[str]) -> int:
    """`python -m lowtide.services.peer_venvs NAME...`: build (or find) each, one line each."""
    unknown = [name for name in argv if name not in PEERS]
    if not argv or unknown:
        print(
            f"usage: python -m lowtide.services.peer_venvs {{{','.join(PEERS)}}}...",
            file=sys.stderr,
        )
        return 2
    project_dir = Path.cwd()
    for name in argv:
        peer = PEERS[name]
        cached = peer.has_current_lowtide(project_dir.resolve())
        if not peer.is_installed(project_dir.resolve()):
            print(f"building the {name} {peer.version} virtualenv in {peer.dir} (once)")
        started = time.monotonic()
        try:
            ensure(peer, project_dir, on_line=lambda line: print(f"  {line}", flush=True))
        except UserError as error:
            print(error, file=sys.stderr)
            return 1
        state = "cached" if cached else f"built in {time.monotonic() - started:.0f} s"
        print(f"{peer.link_name} -> {peer.dir} ({state})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
