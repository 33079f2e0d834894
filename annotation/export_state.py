"""Where the next export resumes, kept per Label Studio server, whatever its URL is spelled.

A server is known by its organization (id and `created_at`, `LabelStudioClient.organization`):
the same through `localhost`, `127.0.0.1`, a proxy or a new hostname, and another for a new
server, even on the same URL. Its hash keys the server's entry in `annotations.cursor.json`:

    {"version": 2, "servers": {"<key>": {"label_studio_url": "<the URL, password masked>",
      "projects": {"<id>": {"updated_at": "...", "sealed_from": 12, "rowless": [3, 9]}}}}}

Per project: `updated_at`, the newest task change read (where the next export resumes);
`sealed_from`, the lowest task id seen with a seal (annotation/task_seal.py: a task after it
without one had its data replaced); `rowless`, the annotated tasks that have no row (skipped,
refused), so that a count of the project's annotated tasks can be compared with what the files
hold (annotation/export_deletions.py). Entries of other servers stay as they are. A file of an
earlier version (keyed by the URL) is read when its URL names this client's server, and
rewritten in this form.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from annotation.errors import AnnotationError
from rl.atomic_file import write_text_atomically
from rl.masking import mask_url

VERSION = 2


class CursorError(AnnotationError):
    """The cursor file cannot be read; the message says what to do."""


@dataclass(frozen=True)
class Server:
    key: str  # a hash of the organization's id and created_at
    url: str  # as this export reached it, password masked: for a person reading the file

    @classmethod
    def of(cls, organization: tuple[int, str], url: str) -> Server:
        organization_id, created_at = organization
        identity = f"label-studio-organization\n{organization_id}\n{created_at}"
        return cls(hashlib.sha256(identity.encode()).hexdigest()[:16], mask_url(url))


@dataclass
class ProjectState:
    updated_at: str | None = None
    sealed_from: int | None = None
    rowless: set[int] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "updated_at": self.updated_at,
            "sealed_from": self.sealed_from,
            "rowless": sorted(self.rowless),
        }

    @classmethod
    def from_json(cls, value: Any) -> ProjectState:
        if not isinstance(value, Mapping):  # an earlier version's bare timestamp
            return cls(updated_at=value if isinstance(value, str) else None)
        sealed = value.get("sealed_from")
        return cls(
            updated_at=value.get("updated_at"),
            sealed_from=int(sealed) if sealed is not None else None,
            rowless={int(task_id) for task_id in value.get("rowless") or []},
        )


@dataclass
class CursorFile:
    path: Path
    stored: dict[str, Any]  # the file as read

    @classmethod
    def read(cls, path: Path) -> CursorFile:
        try:
            stored = json.loads(path.read_text())
        except FileNotFoundError:
            stored = {}
        except ValueError:
            raise CursorError(
                f"{path} is not valid JSON: delete it to read every review again"
            ) from None
        return cls(path, stored if isinstance(stored, dict) else {})

    def projects(self, server: Server, url: str) -> dict[int, ProjectState]:
        """{project id: its state} on `server`; from an earlier version's file when its URL
        names the server `url` reaches."""
        if self.stored.get("version") == VERSION:
            entry = (self.stored.get("servers") or {}).get(server.key) or {}
            projects = entry.get("projects") or {}
            return {int(pid): ProjectState.from_json(state) for pid, state in projects.items()}
        return self._legacy(url)

    def write(self, server: Server, projects: Mapping[int, ProjectState]) -> None:
        servers = dict(self.stored.get("servers") or {}) if self.is_current() else {}
        servers[server.key] = {
            "label_studio_url": server.url,
            "projects": {str(pid): state.to_json() for pid, state in sorted(projects.items())},
        }
        self.stored = {"version": VERSION, "servers": servers}
        write_text_atomically(self.path, json.dumps(self.stored, indent=2) + "\n")

    def is_current(self) -> bool:
        """Written in this version's form (an earlier one's may hold a URL's password)."""
        return self.stored.get("version") == VERSION

    def _legacy(self, url: str) -> dict[int, ProjectState]:
        """An earlier version's cursor, kept per exact URL (which could hold a password)."""
        stored = self.stored
        if not same_server_url(str(stored.get("label_studio_url") or ""), url):
            return {}
        projects = stored.get("projects")
        if isinstance(projects, Mapping):
            return {int(pid): ProjectState(updated_at=stamp) for pid, stamp in projects.items()}
        if stored.get("project_id") is not None:
            return {int(stored["project_id"]): ProjectState(updated_at=stored.get("updated_at"))}
        return {}


def same_server_url(first: str, second: str) -> bool:
    """The same scheme, host, port and path: userinfo, query and a trailing slash aside."""
    return bool(first) and _bare(first) == _bare(second)


def _bare(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=host, query="", fragment="")).rstrip("/")
