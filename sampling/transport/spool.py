"""Where batches wait while Redis is unreachable: append-only files, fsynced per batch.

Layout under `spool_dir`:

- `segment-<n>.spool`: one frame per batch, in order. A frame is a 16-byte header (the magic
  `\\x89LTS`, the payload's length, the payload's CRC-32, the CRC-32 of those 12 bytes), the
  payload (`{"batch_id", "records"}` as ASCII-only JSON, so the magic's first byte never occurs
  inside one) and an 8-byte trailer (the length again, `\\x89LTE`).
- `segment-<n>.acked`: the batch ids Redis acknowledged during a replay.
- `segment-<n>.jsonl`: the earlier format (one batch per JSON line); replayed, never written.
- `quarantine/`: segments with bytes that could not be read, each beside a `.damage.json` note
  of the unreadable byte ranges.

A write cut short (a full disk, a process killed mid-write) leaves part of a frame at the end of
a segment, and append() never returned for it. append() truncates its own failed write away; when
that fails, or the writer was killed, the next append() finds that the segment does not end in a
whole frame and starts a new one, so nothing acknowledged is ever written after a torn frame.
A reader checks every frame and, past bytes it cannot read, resynchronises on the next header
that checks out, so a frame is never lost to the damage before it.

A segment is deleted only when every batch in it is acknowledged, so a crash at any point loses
nothing; at worst one batch is sent twice, and its deterministic job id makes RQ and the
worker's `sample_id` check drop the copy. A segment whose only unreadable bytes are one frame cut
short at its end held nothing acknowledged and is deleted too. Any other unreadable bytes may have
held an acknowledged batch: the segment is replayed as far as it reads, then moved to
`quarantine/` (never deleted), with one warning. A file lock keeps a trainer and `lowtide queue
replay` from replaying the same segment at once.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import re
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from rl.private_files import PRIVATE_FILE_MODE, private_dir, private_opener

log = logging.getLogger("sampling.transport.spool")
_SEGMENT = re.compile(r"^segment-(\d{8})\.(spool|jsonl)$")
SEGMENT_MAX_BYTES = 64 * 2**20  # start a new file past this: replays free disk as they go
MAX_FRAME_BYTES = 256 * 2**20  # a header declaring more is damage: never allocated
QUARANTINE = "quarantine"

MAGIC = b"\x89LTS"
END = b"\x89LTE"
_HEAD = struct.Struct(">4sII")  # magic, payload length, payload CRC-32
_HEADER = struct.Struct(">4sIII")  # the same, then the CRC-32 of those 12 bytes
_TRAILER = struct.Struct(">I4s")  # payload length, END
_CHUNK = 2**20  # how much a resynchronising reader scans at a time
_SALVAGE_TRIES = 16


class SpoolError(OSError):
    """The spool cannot be written (full disk, no permission): records would be lost."""


@dataclass(frozen=True)
class SpooledBatch:
    batch_id: str
    records: list[dict[str, Any]]


@dataclass
class SegmentScan:
    """What reading one segment found besides its batches."""

    size: int = 0
    unreadable: list[tuple[int, int]] = field(default_factory=list)  # may hold acked batches
    torn_tail: int | None = None  # where a write that never returned begins


def encode_frame(batch: SpooledBatch) -> bytes:
    """One batch as a segment holds it: header, ASCII-only JSON payload, trailer."""
    payload = json.dumps({"batch_id": batch.batch_id, "records": batch.records}).encode("ascii")
    head = _HEAD.pack(MAGIC, len(payload), zlib.crc32(payload))
    return head + struct.pack(">I", zlib.crc32(head)) + payload + _TRAILER.pack(len(payload), END)


class Spool:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def append(self, batch: SpooledBatch) -> None:
        """Durably add one batch (written and fsynced before returning)."""
        frame = encode_frame(batch)
        if len(frame) - _HEADER.size - _TRAILER.size > MAX_FRAME_BYTES:
            raise SpoolError(
                f"cannot write the spool in {self.directory}: a batch of {len(frame)} bytes is "
                f"over the {MAX_FRAME_BYTES}-byte limit"
            )
        try:
            private_dir(self.directory)  # queued records: this user's only
            with self._locked():
                _write(self._writable_segment(), frame)
        except OSError as exc:
            raise SpoolError(f"cannot write the spool in {self.directory}: {exc}") from exc

    def pending(self) -> list[SpooledBatch]:
        """The batches not yet acknowledged, in order (unlocked, like the counts)."""
        return list(self._unacked())

    def pending_batches(self) -> int:
        return sum(1 for _ in self._unacked())

    def pending_records(self) -> int:
        return sum(len(batch.records) for batch in self._unacked())

    def size_bytes(self) -> int:
        total = 0
        for path in self._segments():
            with suppress(FileNotFoundError):  # replayed and removed since it was listed
                total += path.stat().st_size
        return total

    def quarantined(self) -> list[Path]:
        """Segments moved aside because part of them could not be read, oldest first."""
        folder = self.directory / QUARANTINE
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.suffix in (".spool", ".jsonl"))

    def replay(self, send: Callable[[SpooledBatch], None]) -> int:
        """Send every spooled batch in order; stop at the first failure (it stays spooled).
        Returns how many batches were sent. `send` must raise unless Redis acknowledged."""
        sent = 0
        with self._locked():
            for segment in self._segments():
                if not _readable(segment):
                    continue  # said once; the later segments still go (nothing is deleted)
                acked = self._acked(segment)
                scan = SegmentScan()
                for batch in _read(segment, scan):
                    if batch.batch_id in acked:
                        continue
                    send(batch)  # raises: stop here, nothing is marked
                    self._ack(segment, batch.batch_id)
                    acked.add(batch.batch_id)
                    sent += 1
                if scan.unreadable:
                    self._quarantine(segment, scan)
                    continue
                if scan.torn_tail is not None:
                    log.info("%s: dropping a write cut short at byte %d", segment, scan.torn_tail)
                # The segment first: a reader (or a crash) in between sees it gone, not a
                # segment whose acks were removed, all of it pending again.
                segment.unlink()
                segment.with_suffix(".acked").unlink(missing_ok=True)
        return sent

    # ---- files --------------------------------------------------------------------------------

    def _segments(self) -> list[Path]:
        """The segment files, oldest first. Something else named like one (a directory, a
        socket) is no segment: taken for one, it failed every write, and records were lost."""
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.iterdir() if _SEGMENT.match(p.name) and p.is_file())

    def _writable_segment(self) -> Path:
        segments = self._segments()
        if segments:
            last = segments[-1]
            if (
                last.suffix == ".spool"
                and last.stat().st_size < SEGMENT_MAX_BYTES
                and _ends_in_a_frame(last)
            ):
                return last
            number = int(_SEGMENT.match(last.name).group(1)) + 1
        else:
            number = 0
        path = self.directory / f"segment-{number:08d}.spool"
        # Acks a crash left behind after removing their segment belong to no batch of this one.
        path.with_suffix(".acked").unlink(missing_ok=True)
        return path

    def _acked(self, segment: Path) -> set[str]:
        try:
            return set(segment.with_suffix(".acked").read_text(errors="replace").split())
        except FileNotFoundError:
            return set()

    def _ack(self, segment: Path, batch_id: str) -> None:
        # The leading newline: an ack cut short by a crash never glues onto the next one.
        acked = segment.with_suffix(".acked")
        with open(acked, "a", encoding="utf-8", opener=private_opener) as handle:
            handle.write(f"\n{batch_id}\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _quarantine(self, segment: Path, scan: SegmentScan) -> None:
        """Keep a segment with unreadable bytes for a person to look at; never delete it."""
        folder = self.directory / QUARANTINE
        base = f"{time.time_ns()}-{segment.stem}"  # numbers restart once a spool empties
        ranges = ", ".join(f"{start}-{end}" for start, end in scan.unreadable[:5])
        more = f" and {len(scan.unreadable) - 5} more" if len(scan.unreadable) > 5 else ""
        note = {
            "segment": segment.name,
            "size": scan.size,
            "unreadable": [[start, end] for start, end in scan.unreadable],
            "torn_tail": scan.torn_tail,
        }
        try:
            private_dir(folder)
            with suppress(OSError):  # a full disk: the warning still names the ranges
                (folder / f"{base}.damage.json").write_text(json.dumps(note, indent=1) + "\n")
            segment.rename(folder / f"{base}{segment.suffix}")
            with suppress(FileNotFoundError):
                segment.with_suffix(".acked").rename(folder / f"{base}.acked")
            kept = f"kept as {folder / base}{segment.suffix}"
        except OSError as exc:
            kept = f"left in place, it could not be moved aside ({exc})"
        log.warning(
            "spool segment %s: bytes %s%s could not be read and may hold batches that were never "
            "sent; everything readable was replayed and the segment %s",
            segment, ranges, more, kept,
        )  # fmt: skip

    def _unacked(self) -> Iterator[SpooledBatch]:
        """Unlocked, so that counting never waits on a replay: a segment the replay removes
        after it was listed counts as sent, as it is."""
        for segment in self._segments():
            if not _readable(segment):
                continue
            acked = self._acked(segment)
            try:
                for batch in _read(segment, SegmentScan()):
                    if batch.batch_id not in acked:
                        yield batch
            except FileNotFoundError:
                continue

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.directory)
        with open(self.directory / ".lock", "w", opener=private_opener) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


# ---- writing ----------------------------------------------------------------------------------


def _write(path: Path, frame: bytes) -> None:
    """Append one frame and fsync it; a failed write is truncated away (best effort: a torn
    frame left behind makes the next append start a new segment)."""
    created = not path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(frame)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            with suppress(OSError):  # only this call's bytes: nothing acknowledged is after them
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)
    if created:  # the new file's name must outlive a power cut as its first batch does
        _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # a file system without it
            raise
    finally:
        os.close(fd)


def _ends_in_a_frame(path: Path) -> bool:
    """Whether the segment ends with a whole, checked frame (or is empty): read from the end."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return True
        if size < _HEADER.size + _TRAILER.size:
            return False
        handle.seek(size - _TRAILER.size)
        trailer = handle.read(_TRAILER.size)
        if len(trailer) != _TRAILER.size:
            return False
        length, end = _TRAILER.unpack(trailer)
        start = size - _TRAILER.size - length - _HEADER.size
        if end != END or start < 0:
            return False
        payload, read_to, _ = _frame_at(handle, start, size)
        return payload is not None and read_to == size


# ---- reading ----------------------------------------------------------------------------------


_UNREADABLE_SAID: set[str] = set()


def _readable(segment: Path) -> bool:
    """The segment can be opened for reading; else a warning, once a segment: another user's
    file, or one whose mode a person changed, is left where it is for them, and neither the
    counts nor the replay of the segments after it stop there."""
    try:
        with open(segment, "rb"):
            return True
    except FileNotFoundError:
        return False  # replayed and removed since it was listed
    except OSError as exc:
        if str(segment) not in _UNREADABLE_SAID:
            _UNREADABLE_SAID.add(str(segment))
            log.warning("spool segment %s cannot be read (%s): left as it is, not replayed; "
                        "the segments after it are", segment, type(exc).__name__)  # fmt: skip
        return False


def _read(segment: Path, scan: SegmentScan) -> Iterator[SpooledBatch]:
    with open(segment, "rb") as handle:
        scan.size = os.fstat(handle.fileno()).st_size
        read = _read_lines if segment.suffix == ".jsonl" else _read_frames
        yield from read(handle, scan)


def _read_frames(handle: BinaryIO, scan: SegmentScan) -> Iterator[SpooledBatch]:
    size, position, bad_from = scan.size, 0, None
    while position < size:
        payload, read_to, cut = _frame_at(handle, position, size)
        batch = None if payload is None else _decode(payload)
        if batch is not None:
            if bad_from is not None:
                scan.unreadable.append((bad_from, position))
                bad_from = None
            yield batch
            position = read_to
            continue
        following = _next_magic(handle, position + 1, size)
        if cut and following == size:  # the start of a frame, then the end of the file
            if bad_from is not None:
                scan.unreadable.append((bad_from, position))
            scan.torn_tail = position
            return
        if bad_from is None:
            bad_from = position
        position = following
    if bad_from is not None:
        scan.unreadable.append((bad_from, size))


def _frame_at(handle: BinaryIO, position: int, size: int) -> tuple[bytes | None, int, bool]:
    """(payload, where its frame's bytes end, cut): the payload when a frame whose checksums
    hold starts at `position`; `cut` when the bytes from there to `size` are the start of a
    frame (a torn write). A payload whose trailer is wrong still counts; its bytes end before
    the trailer."""
    handle.seek(position)
    header = handle.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None, position, MAGIC.startswith(header[: len(MAGIC)])
    magic, length, payload_crc, header_crc = _HEADER.unpack(header)
    if magic != MAGIC or header_crc != zlib.crc32(header[:12]) or length > MAX_FRAME_BYTES:
        return None, position, False
    payload_end = position + _HEADER.size + length
    if payload_end + _TRAILER.size > size:
        return None, position, True
    payload = handle.read(length)
    if len(payload) != length or zlib.crc32(payload) != payload_crc:
        return None, position, False
    if handle.read(_TRAILER.size) != _TRAILER.pack(length, END):
        return payload, payload_end, False
    return payload, payload_end + _TRAILER.size, False


def _next_magic(handle: BinaryIO, start: int, size: int) -> int:
    """Where the next magic begins at or after `start`; `size` when there is none."""
    position = start
    while position + len(MAGIC) <= size:
        handle.seek(position)
        chunk = handle.read(min(_CHUNK, size - position))
        found = chunk.find(MAGIC)
        if found >= 0:
            return position + found
        if position + len(chunk) >= size or len(chunk) < len(MAGIC):
            break
        position += len(chunk) - len(MAGIC) + 1  # a magic may straddle two chunks
    return size


def _decode(payload: bytes) -> SpooledBatch | None:
    try:
        raw = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(raw, dict):
        return None
    batch_id, records = raw.get("batch_id"), raw.get("records")
    if isinstance(batch_id, str) and isinstance(records, list):
        return SpooledBatch(batch_id, records)
    return None


def _read_lines(handle: BinaryIO, scan: SegmentScan) -> Iterator[SpooledBatch]:
    """The earlier format: one JSON batch a line. A write cut short there was glued to the next
    batch's line; that batch is salvaged, and the line counts as unreadable (no checksum tells a
    torn write from damage to an acknowledged batch)."""
    position = 0
    for line in handle:
        start, position = position, position + len(line)
        if not line.strip():
            continue
        batch = _decode(line)
        if batch is not None:
            yield batch
            continue
        if not line.endswith(b"\n"):  # the last line, cut by a crash: never acknowledged
            scan.torn_tail = start
            return
        salvaged, at = _salvage(line)
        if salvaged is not None:
            yield salvaged
        scan.unreadable.append((start, start + at))


def _salvage(line: bytes) -> tuple[SpooledBatch | None, int]:
    """A whole batch line written after a torn one, on the same line: (it, where it begins)."""
    at = line.find(b'{"batch_id": ', 1)
    for _ in range(_SALVAGE_TRIES):
        if at < 0:
            break
        batch = _decode(line[at:])
        if batch is not None:
            return batch, at
        at = line.find(b'{"batch_id": ', at + 1)
    return None, len(line)
