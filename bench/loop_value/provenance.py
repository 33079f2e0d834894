"""Which starting models and code a run measured, so two people can tell whether their figures
should agree: a sha256 of each model directory's files (the tiny policy with its tokenizer, the
reward model's base, the task's starting reward model), the commit, and what the arithmetic ran
on (torch version, its CPU kernels, threads, the processor's model) and the releases of the
other packages that compute a figure (transformers, trl, ...). The same hashes, commit and
kernels on one thread should give the same figures; a different kernel set (AVX2 against
AVX512) can change the last bits of a logit, and a sampler at temperature 1 turns that into
other tokens, other rollouts.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Files that say when or where a model was written, not what it computes.
_NOT_CONTENT = {"built_from.json", "lowtide_reward_model.json", "README.md", "model_card.md"}


def tree_digest(root: Path) -> str:
    """sha256 over the directory's files (relative path and bytes, in path order), 12 hex; a
    JSON file's `transformers_version` is left out: it says which release wrote the config
    (`transformers>=5,<6` admits many), not what the model computes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.name in _NOT_CONTENT:
            continue
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(_content(path)).digest())
    return digest.hexdigest()[:12]


def _content(path: Path) -> bytes:
    if path.suffix != ".json":
        return path.read_bytes()
    try:
        data = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return path.read_bytes()
    if isinstance(data, dict):
        data.pop("transformers_version", None)
    return json.dumps(data, sort_keys=True).encode()


def source_digest(builder: Callable[..., Any]) -> str:
    """sha256 of the builder's module and of the shared builder code (starting.py), 12 hex."""
    from bench.loop_value import starting

    digest = hashlib.sha256()
    for path in sorted({inspect.getfile(builder), inspect.getfile(starting)}):
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:12]


def commit(repo: Path) -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    try:
        head, dirty = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "-uno")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}{' (with uncommitted changes)' if dirty else ''}"


def arithmetic() -> str:
    import torch

    capability = getattr(torch.backends.cpu, "get_cpu_capability", lambda: "unknown")()
    threads = torch.get_num_threads()
    return f"torch {torch.__version__}, CPU kernels {capability}, {threads} thread(s)"


# What else computes a figure: the trainer's and the tokenizer's code, and the array library.
PACKAGES = ("transformers", "trl", "tokenizers", "numpy", "accelerate")


def software() -> str:
    from importlib.metadata import PackageNotFoundError, version

    def release(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "absent"

    return ", ".join(f"{name} {release(name)}" for name in PACKAGES)


def processor() -> str:
    """The CPU's model name (Linux), or the platform's word for it: two machines with the same
    kernel set can still round differently."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def describe(models, start_rm: Path, repo: Path) -> dict[str, str]:
    return {
        "policy (with tokenizer)": tree_digest(Path(models.policy)),
        "reward-model base": tree_digest(Path(models.reward_model)),
        "starting reward model": tree_digest(start_rm),
        "commit": commit(repo),
        "arithmetic": arithmetic(),
        "processor": processor(),
        "software": software(),
    }
