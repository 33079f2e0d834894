"""The follower's state: how far each dump file was read (the state file), and the records routed
from the lines before that point that the producer has not yet taken durably (the journal).

The state file is small and written atomically (temporary file, fsync, rename, fsync of the
directory), so a kill at any moment leaves either the previous state or the new one. The journal
beside it is append-only, one record per line, fsynced before a state that counts its lines is
saved; the state says which byte range of it is still pending and which part of that was handed
to the producer. Bytes past the state's `end` were written by a run killed before it saved: they
are cut on start (their dump lines are read again). Keeping the records, not only the offsets, is
what makes a restart queue nothing twice: see `Follower._commit`.
One follower at a time per state file (an exclusive lock beside it). They sit in the dump
folder, which may be shared: each is owner-only (0600), as the journal holds routed records.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rl.private_files import private_opener
from sampling.transport.queue_files import queue_file

STATE_VERSION = 1


class CursorError(OSError):
    """The state file or journal cannot be read, written or locked; the message says why."""


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
    # The journal's pending records are its bytes [start, end); [start, submitted) were handed
    # to the producer as one submission, cut into batches of `batch_size`.
    start: int = 0
    submitted: int = 0
    end: int = 0
    batch_size: int = 0
    bucket: tuple[float, float] | None = None  # the per-minute cap's (tokens, clock)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION, "run_id": self.run_id, "format": self.format,
            "files": {name: [p.offset, p.line, p.head] for name, p in self.files.items()},
            "done": self.done, "last_batch": self.last_batch, "start": self.start,
            "submitted": self.submitted, "end": self.end, "batch_size": self.batch_size,
            "bucket": list(self.bucket) if self.bucket else None,
        }  # fmt: skip

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CursorState:
        bucket = raw["bucket"]
        return cls(
            run_id=str(raw["run_id"]),
            format=str(raw["format"]),
            files={name: FilePosition(*map_position(p)) for name, p in raw["files"].items()},
            done=dict(raw["done"]),
            last_batch=str(raw["last_batch"]),
            start=int(raw["start"]),
            submitted=int(raw["submitted"]),
            end=int(raw["end"]),
            batch_size=int(raw["batch_size"]),
            bucket=(float(bucket[0]), float(bucket[1])) if bucket else None,
        )


def map_position(raw: list[Any]) -> tuple[int, int, str]:
    offset, line, head = raw
    return int(offset), int(line), str(head)


def default_path(files_dir: Path, queue_name: str, redis_url: str) -> Path:
    """One state file per queue (and Redis): two followers of one directory that feed different
    queues keep separate cursors."""
    return queue_file(files_dir, ".lowtide-ingest", ".json", queue_name, redis_url)


class Cursor:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.journal_path = path.with_name(path.name + ".journal")
        self._lock: IO[str] | None = None

    # ---- the lock ----------------------------------------------------------------------------

    def lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+", opener=private_opener)  # noqa: SIM115 (held until release)
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

    # ---- the state file ----------------------------------------------------------------------

    def load(self) -> CursorState | None:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except OSError as error:
            raise CursorError(f"cannot read the cursor {self.path}: {error}") from None
        except ValueError as error:
            raise _damaged(self.path, error) from None
        if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION:
            raise CursorError(f"{self.path} is not a cursor this version of lowtide reads")
        try:
            return CursorState.from_json(raw)
        except (AttributeError, KeyError, TypeError, ValueError) as error:  # a wrong shape
            raise _damaged(self.path, error) from None

    def save(self, state: CursorState) -> None:
        text = json.dumps(state.as_json(), ensure_ascii=False, separators=(",", ":"))
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            with open(temporary, "w", encoding="utf-8", opener=private_opener) as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            _fsync_directory(self.path.parent)  # the rename itself survives a power cut
        except OSError as error:
            raise CursorError(f"cannot write the cursor {self.path}: {error}") from None

    # ---- the journal -------------------------------------------------------------------------

    def append(self, at: int, records: list[dict[str, Any]]) -> list[int]:
        """Write records from byte `at` on (cutting what lies past it) and fsync; returns each
        record's size in bytes."""
        lines = [(json.dumps(record, ensure_ascii=False) + "\n").encode() for record in records]
        try:
            with open(self.journal_path, "ab", opener=private_opener) as handle:
                handle.truncate(at)
                handle.write(b"".join(lines))
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            raise CursorError(f"cannot write the journal {self.journal_path}: {error}") from None
        return [len(line) for line in lines]

    def read(self, start: int, end: int) -> list[tuple[dict[str, Any], int]]:
        """The records in bytes [start, end), each with its size."""
        if end <= start:
            return []
        try:
            with open(self.journal_path, "rb") as handle:
                handle.seek(start)
                data = handle.read(end - start)
        except OSError as error:
            raise CursorError(f"cannot read the journal {self.journal_path}: {error}") from None
        if len(data) != end - start or not data.endswith(b"\n"):
            raise CursorError(
                f"the journal {self.journal_path} is shorter than its cursor says: was it "
                "changed by hand? Move both away to start over"
            )
        lines = data.split(b"\n")[:-1]
        return [(json.loads(line), len(line) + 1) for line in lines]

    def cut(self, end: int) -> None:
        """Drop what a killed run wrote past the saved end."""
        try:
            with open(self.journal_path, "ab", opener=private_opener) as handle:
                handle.truncate(end)
        except OSError as error:
            raise CursorError(f"cannot write the journal {self.journal_path}: {error}") from None


def _damaged(path: Path, error: Exception) -> CursorError:
    # Nothing is lost by starting over: the dumps are read again and the worker imports each
    # sample once, however often it is queued.
    return CursorError(
        f"the cursor {path} is damaged ({type(error).__name__}: {error}): move it away to "
        "route the dumps again from the start"
    )


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
