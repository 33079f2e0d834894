"""Names of the files that belong to one queue of one Redis (ingest's cursor, search's routed
ledger): two followers of one directory that feed different queues keep separate files.

The name holds a short hash of the Redis URL without its password: these files sit in shared
dump folders, and a hash of the password would be an offline test of a guessed one.
"""

from __future__ import annotations

import glob
import hashlib
import re
from contextlib import suppress
from pathlib import Path

from rl.masking import url_without_secrets


def queue_file(directory: Path, prefix: str, suffix: str, queue_name: str, redis_url: str) -> Path:
    """`<directory>/<prefix>-<queue>-<hash><suffix>`; a file named by an earlier version (its
    hash took the whole URL, password included) is renamed to it, so no state is lost."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", queue_name)[:60]
    digest = _digest(url_without_secrets(redis_url), queue_name)
    path = directory / f"{prefix}-{safe}-{digest}{suffix}"
    legacy = directory / f"{prefix}-{safe}-{_digest(redis_url, queue_name)}{suffix}"
    if legacy != path and legacy.exists() and not path.exists():
        with suppress(OSError):  # a read-only folder: the new name starts afresh
            for old in sorted(directory.glob(f"{glob.escape(legacy.name)}*")):  # and its journal
                old.rename(path.with_name(path.name + old.name[len(legacy.name) :]))
    return path


def _digest(redis_url: str, queue_name: str) -> str:
    return hashlib.sha256(f"{redis_url}\0{queue_name}".encode()).hexdigest()[:10]
