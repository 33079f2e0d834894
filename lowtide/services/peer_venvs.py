"""Virtualenvs for other trainers (verl, OpenRLHF): built once per user, cached, linked in.

Their transformers pins clash with ours, so each gets a virtualenv of its own in the per-user
cache, keyed by name and version (`~/.cache/lowtide/verl-0.9.1`), linked into the project as
`.venv-<name>` like Label Studio's. torch is installed first, pinned: installed after a library
that needs it, pip would pull a multi-GB CUDA build.

lowtide itself is not installed there (the cache is shared by every checkout): the venv gets
lowtide's few runtime dependencies for the routing core, with the pins of pyproject.toml, and
`PeerVenv.environ(project_dir)` puts the checkout on PYTHONPATH.

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
# What `import lowtide.integrations` needs besides the standard library (the routing core, the
# producer and the config loader); their version pins are read from pyproject.toml.
ROUTING_DEPENDENCIES = (
    "pydantic", "pyyaml", "redis", "rq", "psutil", "python-dotenv", "phonenumbers",
    "python-stdnum",
)  # fmt: skip
_MARKER = ".lowtide-installed"
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
        """Changes when the recipe or lowtide's pins change: the venv is then rebuilt."""
        recipe = [self.steps, sorted(self.install_env.items()), routing_requirements(project_dir)]
        return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()[:16]

    def is_installed(self, project_dir: Path) -> bool:
        marker = self.dir / _MARKER
        return (
            marker.exists()
            and marker.read_text().strip() == self.fingerprint(project_dir)
            and self.python.exists()
        )

    def environ(self, project_dir: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """An environment for the venv's python in which the checkout's lowtide imports."""
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
        "import lowtide.integrations"
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


def routing_requirements(project_dir: Path) -> list[str]:
    """The ROUTING_DEPENDENCIES with the version pins pyproject.toml gives them."""
    text = (project_dir / "pyproject.toml").read_text()
    found: dict[str, str] = {}
    for requirement in re.findall(r'^\s*"([^"]+)",', text, flags=re.MULTILINE):
        name = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower()
        if name in ROUTING_DEPENDENCIES and name not in found:
            found[name] = requirement
    missing = [name for name in ROUTING_DEPENDENCIES if name not in found]
    if missing:
        raise UserError(f"pyproject.toml does not list {', '.join(missing)}")
    return [found[name] for name in ROUTING_DEPENDENCIES]


def ensure(peer: PeerVenv, project_dir: Path, on_line: Callable[[str], None] | None = None) -> Path:
    """Build the peer's venv unless the cache has it (a lock guards concurrent builds), link it
    into the project, and return its python."""
    project_dir = project_dir.resolve()
    target = peer.dir
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not peer.is_installed(project_dir):
            _install(peer, project_dir, on_line or (lambda _: None))
    _link_into_project(project_dir / peer.link_name, target)
    return peer.python


def _install(peer: PeerVenv, project_dir: Path, on_line: Callable[[str], None]) -> None:
    target = peer.dir
    if target.exists():
        shutil.rmtree(target)  # an interrupted or outdated install: start clean
    pip = [str(peer.python), "-m", "pip", "install", "--quiet"]
    commands = [
        [sys.executable, "-m", "venv", str(target)],
        [*pip, "--upgrade", "pip"],
        *([*pip, *step] for step in peer.steps),
        [*pip, *routing_requirements(project_dir)],
        [str(peer.python), "-c", peer.check],
    ]
    env = {**peer.environ(project_dir), **peer.install_env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for command in commands:
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            errors = [line for line in result.stderr.splitlines() if _PIP_NOISE not in line]
            what = "checking" if command[-2] == "-c" else "installing"
            raise UserError(
                f"{what} the {peer.name} {peer.version} virtualenv in {target} failed "
                f"({' '.join(command[3:] if command[-2] != '-c' else command[-1:])[:200]}):\n"
                + "\n".join(errors[-15:])
            )
        on_line(f"{' '.join(command[-3:])[:100]} ({time.monotonic() - started:.0f} s)")
    (target / _MARKER).write_text(peer.fingerprint(project_dir))


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
        cached = peer.is_installed(project_dir.resolve())
        if not cached:
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
