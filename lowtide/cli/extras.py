"""Which extra a command needs when a module of it is missing: one line saying what to install.

The base install is the routing core (what other trainers' environments get); `lowtide train`,
`worker`, `export` and the rest need an extra, and a missing one is a user's install, not a bug.
"""

from __future__ import annotations

# Top-level modules of each extra's distributions (pyproject.toml's optional dependencies).
_EXTRA_OF_MODULE = {
    "label_studio_sdk": "review",
    "httpx": "review",
    "prometheus_client": "review",
    "torch": "train",
    "transformers": "train",
    "tokenizers": "train",
    "safetensors": "train",
    "datasets": "train",
    "wandb": "train",
    "tensorboard": "train",
    "duckdb": "search",
    "pyarrow": "search",
}


def missing_extra(error: ModuleNotFoundError) -> str | None:
    """The line to print for a module an extra provides; None for any other missing module."""
    module = (error.name or "").split(".")[0]
    extra = _EXTRA_OF_MODULE.get(module)
    if extra is None:
        return None
    return (
        f"this command needs lowtide's {extra} extra ({module} is not installed): "
        f"pip install 'lowtide[{extra}]' (or 'lowtide[all]')"
    )
