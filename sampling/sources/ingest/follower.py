"""The dump follower behind `lowtide ingest`: reads a trainer's dump files as they are written,
routes each step's samples through the routing core exactly as the hook does, and keeps a cursor
so that a restart queues nothing twice and skips nothing.

Reading. A jsonl file is read up to its last newline (a line still being written waits for its
newline); while following, a file is read once it kept its size for one poll or a later step's
file exists, so that a step is routed whole (quantile and group policies look at the batch). A
parquet file is read once it is complete (its magic bytes at both ends), readable and, while
following, kept its size for one poll. A malformed line is counted and skipped with its file
and line; it never stops the follower. So is a line longer than `rl.jsonl.MAX_LINE_BYTES` or
nested deeper than `rl.jsonl.MAX_DEPTH`, once its newline is written (the cursor moves past it).

Exactly once. The follower asks the router for its decisions (`Router.decide`), builds their
records and gives them to the hand-over (handover.py), which keeps them in the cursor's journal
until the producer has them durably. Lines past the saved positions were never routed.

Caps. The per-minute cap counts the trainer's minutes (the dump files' modification times), so
following a finished run routes what the hook would have routed while it ran.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rl import jsonl
from sampling.config import SamplingConfig
from sampling.records import RecordError
from sampling.routing import BatchInfo, PlainSample, RouteCounts
from sampling.selection.decision import Decision
from sampling.sources import group_id_of
from sampling.sources.ingest.cursor import Cursor, CursorState, FilePosition
from sampling.sources.ingest.formats import DumpFile, DumpLocation, list_files
from sampling.sources.ingest.handover import HandOver, IngestError, fail_point
from sampling.sources.ingest.rows import BadRow, DumpRow
from sampling.sources.trl import dumps as trl
from sampling.transport.producer import Producer
from sampling.wiring import build_router

MAX_READ_BYTES = 64 * 2**20  # a bigger step file is routed in parts of about this size
HEAD_BYTES = jsonl.HEAD_BYTES
PROGRESS_EVERY_S = 5.0


@dataclass
class IngestStats:
    files: int = 0  # dump files seen
    samples: int = 0  # rows read as samples
    selected: int = 0
    capped: int = 0
    deduped: int = 0
    routed: int = 0  # records handed to the producer
    malformed: int = 0  # lines or rows skipped
    unreadable_files: int = 0
    repeated_batches: int = 0  # TRL files that held the batch of the file before
    resumed: int = 0  # records an interrupted run had routed, handed over again at start

    def add(self, counts: RouteCounts) -> None:
        self.selected += counts.selected
        self.capped += counts.capped
        self.deduped += counts.deduped
        self.routed += counts.submitted


# The cursor moves past what was read, while the budget policy's candidates wait in memory for
# their selection: a stop or crash would lose them for good.
BUDGET_NOT_FOR_INGEST = (
    "sampling.policy budget does not work with lowtide ingest yet (candidates waiting for the "
    "budget's selection would be lost behind the cursor): choose threshold, quantile, "
    "group_relative or zscore"
)


class DumpClock:
    """The trainer's time as the dump files tell it: never goes back."""

    def __init__(self) -> None:
        self.now = 0.0

    def advance(self, moment: float) -> None:
        self.now = max(self.now, moment)

    def __call__(self) -> float:
        return self.now


class Follower:
    def __init__(
        self,
        sampling: SamplingConfig,
        producer: Producer,
        location: DumpLocation,
        cursor: Cursor,
        *,
        run_id: str,
        model_name: str = "unknown",
        once: bool = False,
        reward_weights: Sequence[float] | None = None,
        say: Callable[[str], None] = print,
        seed: int = 0,
    ) -> None:
        if sampling.policy == "budget":
            raise IngestError(BUDGET_NOT_FOR_INGEST)
        self.location = location
        self.cursor = cursor
        self.run_id = run_id
        self.model_name = model_name
        self.once = once
        self.reward_weights = reward_weights
        self.say = say
        self.producer = producer
        # The router only decides: its records are held until the cursor can say they were
        # sent. Its per-minute cap runs on the dumps' clock, not the wall's.
        self.clock = DumpClock()
        self.router = build_router(sampling, producer, seed=seed, clock=self.clock)
        self.bucket = self.router.selector.bucket  # type: ignore[attr-defined]  # not budget
        self.stats = IngestStats()
        state = CursorState(run_id=run_id, format=location.format.name)
        self.handover = HandOver(producer, cursor, state, self.bucket, say)
        self._decided: list[Decision] = []  # routed from the file being read, not yet kept
        self._sizes: dict[str, int] = {}  # at the previous poll: a file that kept it is settled
        self._warned: set[tuple[str, int]] = set()
        self._not_files: set[str] = set()  # told once each
        self._progress_at = time.monotonic()

    @property
    def state(self) -> CursorState:
        return self.handover.state

    # ---- the loop ----------------------------------------------------------------------------

    def run(self, stopping: Callable[[], bool], interval_s: float = 1.0) -> IngestStats:
        """Follow until `stopping()` (or once through with `once`), then flush and save."""
        self.start()
        try:
            while True:
                self.poll(stopping)
                if self.once or stopping():
                    break
                deadline = time.monotonic() + interval_s
                while not stopping() and time.monotonic() < deadline:
                    time.sleep(min(0.05, interval_s))
        except BaseException:
            self._abandon()
            raise
        self.finish()
        return self.stats

    def start(self) -> None:
        self.cursor.lock()
        try:
            saved = self.cursor.load()
            if saved is not None:
                self._check(saved)
                self.clock.advance(saved.bucket[1] if saved.bucket else 0.0)
                self.stats.resumed = self.handover.resume(saved)
        except BaseException:
            self._abandon()
            raise

    def poll(self, stopping: Callable[[], bool] = lambda: False) -> None:
        """One pass over the dump files."""
        files = list_files(self.location, self._not_a_file)
        self.stats.files = max(self.stats.files, len(files))
        for number, file in enumerate(files):
            if stopping():
                break
            later = number + 1 < len(files)
            settled = self.once or later or self._sizes.get(file.path.name) == file.size
            if self.location.format.kind == "jsonl":
                self._read_jsonl(file, settled)
            else:
                self._read_parquet(file, settled)
            self.handover.commit(flush=False)
            self._progress()
        self._sizes = {file.path.name: file.size for file in files}
        self.handover.commit(flush=self.handover.flush_due() and not self.once)
        self._progress()

    def finish(self) -> None:
        """Hand everything over, close the producer, save the cursor."""
        try:
            self.handover.commit(flush=True, last=True)
        except BaseException:
            self._abandon()
            raise
        try:
            self.router.close()  # the producer may be closed already: closing it again is a no-op
            self.handover.save()
        finally:
            self.cursor.release()

    def _abandon(self) -> None:
        # An error: what was read but not saved is read again next time. In the middle of a
        # hand-over the producer is not closed: it would spool what it still holds as one batch
        # of another make-up; the journal has those records for the next run.
        try:
            if self.handover.handing or self.handover.closed:
                self.router.close_observers(deadline_s=2.0)
            else:
                self.router.close(deadline_s=2.0)
        finally:
            self.cursor.release()

    # ---- reading -----------------------------------------------------------------------------

    def _read_jsonl(self, file: DumpFile, settled: bool) -> None:
        name = file.path.name
        position = self.state.files.get(name, FilePosition())
        if file.size == position.offset or not settled:
            return
        if position.offset and file.size > position.offset:
            head = self._head(file)
            if head is None:
                return
            rewritten = head != position.head
        else:
            rewritten = position.offset > 0  # it shrank
        if rewritten:
            self.say(
                f"warning: {file.path} was rewritten since it was read (did the trainer start "
                "again from a checkpoint?): reading it from the start"
            )
            position = FilePosition()
        parse = self.location.format.parse
        assert parse is not None
        while position.offset < file.size:
            block = self._lines(file, position.offset)
            if block is None:
                return  # gone, unreadable, or a line still being written
            rows = []
            for number, raw in enumerate(block.lines, position.line + 1):
                row = self._parse_line(file.path, number, raw, file.step, parse)
                if row is not None:
                    rows.append(row)
            head = position.head or _digest(block.head[:HEAD_BYTES] + b"\n")
            self._route(rows, file)
            position = FilePosition(block.end, position.line + len(block.lines), head)
            self.state.files[name] = position
            self.handover.dirty = True
            self.handover.commit(flush=False)

    def _lines(self, file: DumpFile, offset: int) -> jsonl.LineBlock | None:
        """The whole lines of a dump file from `offset`, a line longer than the limit as None;
        None (and a warning once) when it cannot be read."""
        try:
            with open(file.path, "rb") as handle:
                return jsonl.whole_lines(handle, offset, file.size, MAX_READ_BYTES)
        except OSError as error:
            self._unreadable(file, error)
            return None

    def _bytes(self, file: DumpFile, offset: int, size: int) -> bytes | None:
        """Bytes of a dump file; None (and a warning once) when it cannot be read."""
        try:
            with open(file.path, "rb") as handle:
                handle.seek(offset)
                return handle.read(size)
        except OSError as error:
            self._unreadable(file, error)
            return None

    def _unreadable(self, file: DumpFile, error: OSError) -> None:
        if isinstance(error, FileNotFoundError):
            return  # removed since the listing
        if (file.path.name, file.size) not in self._warned:
            self._warned.add((file.path.name, file.size))
            self.say(f"warning: {file.path}: cannot read it ({error}); tried again later")

    def _not_a_file(self, path: Path) -> None:
        if path.name not in self._not_files:
            self._not_files.add(path.name)
            self.say(f"warning: {path}: not a regular file; skipped")

    def _head(self, file: DumpFile) -> str | None:
        data = self._bytes(file, 0, HEAD_BYTES)
        if data is None:
            return None
        return _digest(data.split(b"\n", 1)[0] + b"\n")

    def _parse_line(
        self, path: Path, number: int, raw: bytes | None, step: int, parse: Callable[..., DumpRow]
    ) -> DumpRow | None:
        if raw is None:
            self._malformed(path, f"line {number}", jsonl.over_long(jsonl.MAX_LINE_BYTES))
            return None
        if not raw.strip():
            return None
        try:
            row = jsonl.parse_line(raw)
        except jsonl.BadLine as problem:
            self._malformed(path, f"line {number}", str(problem))
            return None
        try:
            return parse(row, number - 1, step)
        except BadRow as problem:
            self._malformed(path, f"line {number}", str(problem))
            return None

    def _read_parquet(self, file: DumpFile, settled: bool) -> None:
        name = file.path.name
        if name in self.state.done or not settled:
            return
        key = (name, file.size)
        try:
            if not trl.looks_complete(file.path):
                raise trl.UnreadableFile("not complete (still being written?)")
            rows = trl.read_rows(file.path, file.step, self.reward_weights)
        except trl.UnreadableFile as problem:
            if key not in self._warned:  # once per file and size, however often it is polled
                self._warned.add(key)
                self.stats.unreadable_files += 1
                later = "run again once it is complete" if self.once else "tried again"
                self.say(f"warning: {file.path}: {problem}; not read ({later})")
            return
        good = []
        for number, row in enumerate(rows, 1):
            if isinstance(row, BadRow):
                self._malformed(file.path, f"row {number}", str(row))
            else:
                good.append(row)
        digest = _batch_digest(good)
        self.state.done[name] = digest
        self.handover.dirty = True
        if digest == self.state.last_batch:
            self.stats.repeated_batches += 1  # the generation batch of the file before
            return
        self.state.last_batch = digest
        self._route(good, file)

    def _malformed(self, path: Path, where: str, problem: str) -> None:
        self.stats.malformed += 1
        self.say(f"warning: {path}:{where.removeprefix('line ')}: {problem}; skipped")

    # ---- routing -----------------------------------------------------------------------------

    def _route(self, rows: list[DumpRow], file: DumpFile) -> None:
        self.clock.advance(file.mtime)
        for step, in_step in itertools.groupby(rows, key=lambda row: row.step):
            batch = list(in_step)
            samples = [
                PlainSample(
                    prompt=row.prompt,
                    response=row.response,
                    reward=row.reward,
                    reward_details=row.reward_details,
                    group_id=group_id_of(row.prompt),
                    index=row.index,
                    advantage=row.advantage,
                    truncated=row.truncated,
                )
                for row in batch
            ]
            offered = self.router.decide(samples, BatchInfo(self.run_id, step, 0, self.model_name))
            self._decided.extend(offered.decisions)
            self.stats.samples += len(batch)
            self.stats.add(offered.counts)
            self._keep(file.path)
        fail_point("routed")

    def _keep(self, path: Path) -> None:
        decided, self._decided = self._decided, []
        for decision in decided:
            try:
                record = self.router.records.build(decision)
            except RecordError as problem:
                self.stats.routed -= 1
                self.stats.malformed += 1
                self.say(f"warning: {path}: a sample cannot be made a record ({problem}); skipped")
                continue
            self.handover.add(record)

    def _check(self, saved: CursorState) -> None:
        if saved.run_id != self.run_id:
            raise IngestError(
                f"the cursor {self.cursor.path} follows run id {saved.run_id!r}: pass --run-id "
                f"{saved.run_id} (or another --cursor to route everything again as "
                f"{self.run_id!r})"
            )
        if saved.format != self.location.format.name:
            raise IngestError(
                f"the cursor {self.cursor.path} follows {saved.format} dumps, not "
                f"{self.location.format.name}: pass --format {saved.format}"
            )

    # ---- reporting ---------------------------------------------------------------------------

    def _progress(self) -> None:
        if time.monotonic() - self._progress_at < PROGRESS_EVERY_S:
            return
        self._progress_at = time.monotonic()
        s = self.stats
        self.say(
            f"ingest: {s.files} files, {s.samples} samples read, {s.routed} routed, "
            f"{s.malformed} malformed lines skipped"
        )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _batch_digest(rows: list[DumpRow]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        details = repr(sorted(row.reward_details.items()))
        for part in (row.prompt, row.response, repr(row.reward), details):
            digest.update(part.encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
    return digest.hexdigest()[:32]
