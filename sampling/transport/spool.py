"""Where batches wait while Redis is unreachable: append-only files, fsynced per batch.

Layout under `spool_dir`: `segment-<n>.jsonl` (one batch per line: `{"batch_id", "records"}`),
and beside each a `segment-<n>.acked` list of batch ids that Redis acknowledged during a replay.
A segment is deleted only when every batch in it is acknowledged, so a crash at any point loses
nothing; at worst one batch is sent twice, and its deterministic job id makes RQ and the
worker's `sample_id` check drop the copy. A file lock keeps a trainer and `lowtide queue replay`
from replaying the same segment at once.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rl.jsonl import read_jsonl

log = logging.getLogger("sampling.transport.spool")
_SEGMENT = re.compile(r"^segment-(\d{8})\.jsonl$")
SEGMENT_MAX_BYTES = 64 * 2**20  # start a new file past this: replays free disk as they go


class SpoolError(OSError):
    """The spool cannot be written (full disk, no permission): records would be lost."""


@dataclass(frozen=True)
class SpooledBatch:
    batch_id: str
    records: list[dict[str, Any]]


class Spool:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def append(self, batch: SpooledBatch) -> None:
        """Durably add one batch (written and fsynced before returning)."""
        line = json.dumps({"batch_id": batch.batch_id, "records": batch.records}) + "\n"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._locked():
                path = self._writable_segment()
                with open(path, "a", encoding="utf-8") as handle:
                    handle.write(line)
                    handle.flush()
                    os.fsync(handle.fileno())
        except OSError as exc:
            raise SpoolError(f"cannot write the spool in {self.directory}: {exc}") from exc

    def pending_batches(self) -> int:
        return sum(1 for _ in self._unacked())

    def pending_records(self) -> int:
        return sum(len(batch.records) for _, batch in self._unacked())

    def size_bytes(self) -> int:
        total = 0
        for path in self._segments():
            with suppress(FileNotFoundError):  # replayed and removed since it was listed
                total += path.stat().st_size
        return total

    def replay(self, send: Callable[[SpooledBatch], None]) -> int:
        """Send every spooled batch in order; stop at the first failure (it stays spooled).
        Returns how many batches were sent. `send` must raise unless Redis acknowledged."""
        sent = 0
        with self._locked():
            for segment in self._segments():
                acked = self._acked(segment)
                for batch in self._batches(segment):
                    if batch.batch_id in acked:
                        continue
                    send(batch)  # raises: stop here, nothing is marked
                    with open(segment.with_suffix(".acked"), "a", encoding="utf-8") as handle:
                        handle.write(batch.batch_id + "\n")
                        handle.flush()
                        os.fsync(handle.fileno())
                    acked.add(batch.batch_id)
                    sent += 1
                # The segment first: a reader (or a crash) in between sees it gone, not a
                # segment whose acks were removed, all of it pending again.
                segment.unlink()
                segment.with_suffix(".acked").unlink(missing_ok=True)
        return sent

    # ---- files --------------------------------------------------------------------------------

    def _segments(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if _SEGMENT.match(p.name))

    def _writable_segment(self) -> Path:
        segments = self._segments()
        if segments and segments[-1].stat().st_size < SEGMENT_MAX_BYTES:
            return segments[-1]
        number = int(_SEGMENT.match(segments[-1].name).group(1)) + 1 if segments else 0
        path = self.directory / f"segment-{number:08d}.jsonl"
        # Acks a crash left behind after removing their segment belong to no batch of this one.
        path.with_suffix(".acked").unlink(missing_ok=True)
        return path

    def _batches(self, segment: Path) -> Iterator[SpooledBatch]:
        # Only a write cut by a crash makes a bad line: append() never returned for it, so no
        # caller ever counted those records as spooled.
        def incomplete(number: int, problem: str = "") -> None:
            log.warning("%s:%d: skipping an incomplete spool line", segment, number)

        for number, raw in read_jsonl(segment, incomplete):
            if "batch_id" in raw and isinstance(raw.get("records"), list):
                yield SpooledBatch(raw["batch_id"], raw["records"])
            else:
                incomplete(number)

    def _acked(self, segment: Path) -> set[str]:
        try:
            return set(segment.with_suffix(".acked").read_text().split())
        except FileNotFoundError:
            return set()

    def _unacked(self) -> Iterator[tuple[Path, SpooledBatch]]:
        """Unlocked, so that counting never waits on a replay: a segment the replay removes
        after it was listed counts as sent, as it is."""
        for segment in self._segments():
            acked = self._acked(segment)
            try:
                for batch in self._batches(segment):
                    if batch.batch_id not in acked:
                        yield segment, batch
            except FileNotFoundError:
                continue

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
