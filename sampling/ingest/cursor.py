"""The follower's state file: how far each dump file was read, and the records routed from the
lines before that point that the producer has not yet taken durably.

Written atomically (temporary file, fsync, rename, fsync of the directory), so a kill at any
moment leaves either the previous state or the new one. Keeping the records here, not only the
offsets, is what makes a restart queue nothing twice: see `Follower._commit`.
One follower at a time per state file (an exclusive lock beside it).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

STATE_VERSION = 1


class CursorError(OSError):
    """The state file cannot be read, written or locked; the message says which and why."""


@dataclass
class FilePosition:
    offset: int = 0  # bytes read, whole lines only
    line: int = 0  # lines read
    head: str = ""  # digest of the first line: tells a rewritten file from one that grew


@dataclass
class CursorState:
    run_id: str
    format: str
    files: dict[str, FilePosition] = field(default_factory=dict)  # jsonl: name -> position
    done: dict[str, str] = field(default_factory=dict)  # parquet: name -> content digest
    last_batch: str = ""  # parquet: digest of the last batch routed
    # Records routed but not known to be on the queue or in the spool, in routing order; the
    # first `submitting` were handed to the producer as one submission when the state was saved.
    pending: list[dict[str, Any]] = field(default_factory=list)
    submitting: int = 0
    batch_size: int = 0  # the producer's batch size when `submitting` was saved
    bucket: tuple[float, float] | None = None  # the per-minute cap's (tokens, clock)


def default_path(files_dir: Path, queue_name: str, redis_url: str) -> Path:
    """One state file per queue (and Redis): two followers of one directory that feed different
    queues keep separate cursors."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", queue_name)[:60]
    digest = hashlib.sha256(f"{redis_url}\0{queue_name}".encode()).hexdigest()[:10]
    return files_dir / f".lowtide-ingest-{safe}-{digest}.json"


class Cursor:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: IO[str] | None = None

    def lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+")  # noqa: SIM115 (held until release)
        except OSError as error:
            raise CursorError(f"cannot create the cursor {self.path}: {error}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise CursorError(
                f"another lowtide ingest is using the cursor {self.path}: stop it first, or "
                "give this one another --cursor"
            ) from None
        self._lock = handle

    def release(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def load(self) -> CursorState | None:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise CursorError(f"cannot read the cursor {self.path}: {error}") from None
        if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION:
            raise CursorError(f"{self.path} is not a cursor this version of lowtide reads")
        try:
            bucket = raw.get("bucket")
            return CursorState(
                run_id=raw["run_id"],
                format=raw["format"],
                files={name: FilePosition(**pos) for name, pos in raw["files"].items()},
                done=dict(raw["done"]),
                last_batch=raw["last_batch"],
                pending=list(raw["pending"]),
                submitting=int(raw["submitting"]),
                batch_size=int(raw["batch_size"]),
                bucket=(float(bucket[0]), float(bucket[1])) if bucket else None,
            )
        except (KeyError, TypeError, ValueError) as error:
            raise CursorError(
                f"{self.path} is damaged ({error!r}): move it away to start over"
            ) from None

    def save(self, state: CursorState) -> None:
        data = {"version": STATE_VERSION, **asdict(state)}
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            directory = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)  # the rename itself survives a power cut
            finally:
                os.close(directory)
        except OSError as error:
            raise CursorError(f"cannot write the cursor {self.path}: {error}") from None
