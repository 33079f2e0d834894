"""The search table: the rows of a run's dump files in a DuckDB database (columnar, compressed)
beside them, kept in step with the files at every search.

What was read is written down per file in the same database, in the same transaction as its
rows: size, modification time, how far it was read, and digests of its first line and of the
bytes before that point. At the next search a file that only grew (a trainer appending) is read
from there on; one that changed otherwise is read again whole; a new file is added and a removed
one dropped. A kill mid-update leaves the rows and their bookkeeping as they were together.

The database lives in `<files dir>/.lowtide-search/` (a user cache directory, keyed by the dump
directory, when that one is not writable). It belongs to one reading of the dumps (format, run
id, TRL's reward weights, this module's version): a different one builds it again. Searches run
on a read-only connection with file access switched off and the settings locked, so that neither
a query nor `--sql` can change the table or reach any other file.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from rl.private_files import private_dir, private_opener
from rl.samples import make_sample_id
from sampling.sources.ingest.formats import DumpFile, DumpLocation, list_files
from sampling.sources.search.reader import (
    Mark,
    Piece,
    Unreadable,
    digest,
    only_grew,
    read_jsonl,
    read_parquet,
)
from sampling.sources.search.schema import (
    FIXED,
    TABLE,
    Kind,
    has_own_column,
    identifier,
    kind_of,
)

VERSION = "1"
CACHE_DIR = ".lowtide-search"
DATABASE = "rollouts.duckdb"
BATCH_ROWS = 50_000  # rows handed to DuckDB (and committed with their files' marks) at once
# Each batch is stored by reward: a condition on the reward then leaves whole runs of rows out,
# and DuckDB reads none of their texts (the query, 1M rows: about 2x faster). Queries
# never see this order: every search says its own.
STORED_ORDER = '"reward" NULLS LAST'
COMPACT_AFTER = 0.5  # deleted rows, as a share of the table, that make it be written afresh
PROBLEMS_SHOWN = 20
SEARCH_SETTINGS = {
    "enable_external_access": False,  # no other file, no extension download
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}  # and, once set, locked (lock_configuration): no query can change them


class TableError(RuntimeError):
    """The table cannot be built or opened; the message is one line that says why."""


@dataclass(frozen=True)
class TableKey:
    """What the rows depend on besides the files: a different key builds the table again."""

    format: str
    run_id: str  # part of every sample id
    reward_weights: tuple[float, ...] | None = None  # TRL: the totals depend on them

    def as_text(self) -> str:
        weights = list(self.reward_weights) if self.reward_weights is not None else None
        return json.dumps(
            {"version": VERSION, "format": self.format, "run_id": self.run_id, "weights": weights}
        )


@dataclass
class Refresh:
    """What bringing the table up to date did."""

    files: int = 0  # dump files there now
    read: int = 0  # files read this time (whole, or the part added since)
    added: int = 0  # rows added
    dropped: int = 0  # files gone or changed, whose rows left the table
    rows: int = 0  # rows in the table now
    problems: list[str] = field(default_factory=list)  # the first few skipped lines and rows
    more_problems: int = 0
    unreadable: list[str] = field(default_factory=list)  # files skipped this time, with why
    rebuilt: str = ""  # why the table was built from scratch, when it was

    def problem(self, line: str) -> None:
        if len(self.problems) < PROBLEMS_SHOWN:
            self.problems.append(line)
        else:
            self.more_problems += 1


def cache_dir_for(files_dir: Path) -> Path:
    """`<files dir>/.lowtide-search`, or a user cache directory keyed by the dump directory
    when that is not writable (a team's read-only copy of a run)."""
    preferred = files_dir / CACHE_DIR
    try:
        # Owner-only: the table holds a copy of every prompt and response.
        private_dir(preferred, parents=False)
        if os.access(preferred, os.W_OK):
            return preferred
    except OSError:
        pass
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    key = digest(str(files_dir.resolve()).encode("utf-8", "surrogateescape"))[:16]
    return Path(home) / "lowtide" / "search" / key


class SearchTable:
    def __init__(
        self,
        location: DumpLocation,
        key: TableKey,
        directory: Path | None = None,
        *,
        on_progress: Callable[[int, int], None] | None = None,  # (bytes read, bytes to read)
    ) -> None:
        self.location = location
        self.key = key
        self.directory = directory or cache_dir_for(location.files_dir)
        self.path = self.directory / DATABASE
        self.on_progress = on_progress

    @contextmanager
    def opened(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, Refresh]]:
        """The table brought up to date, on a read-only connection; other searches of the same
        directory wait while one updates it."""
        try:
            private_dir(self.directory)
            lock = open(self.directory / "lock", "a+", opener=private_opener)  # noqa: SIM115
        except OSError as error:
            raise TableError(f"cannot write the search cache {self.directory}: {error}") from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            refresh = self.refresh()
            fcntl.flock(lock, fcntl.LOCK_SH)  # readers may share it; an update waits
            try:
                connection = duckdb.connect(str(self.path), read_only=True, config=SEARCH_SETTINGS)
            except duckdb.Error as error:
                raise TableError(f"cannot open {self.path}: {_first_line(error)}") from None
            try:
                connection.execute("SET enable_progress_bar = false")
                connection.execute("SET lock_configuration = true")
                yield connection, refresh
            finally:
                connection.close()
        finally:
            lock.close()  # and with it the lock

    # ---- bringing it up to date --------------------------------------------------------------

    def refresh(self) -> Refresh:
        refresh = Refresh()
        connection = self._writable(refresh)
        try:
            _Update(self, connection, refresh).run()
            refresh.rows = _count(connection)
        finally:
            connection.close()
        return refresh

    def _writable(self, refresh: Refresh) -> duckdb.DuckDBPyConnection:
        try:
            connection = _connect(self.path)
        except duckdb.Error as error:
            if not _damaged(error):  # in use by another program, say: never removed
                raise TableError(f"cannot open {self.path}: {_first_line(error)}") from None
            refresh.rebuilt = f"the old one could not be opened ({_first_line(error)})"
            self._remove()
            connection = _connect(self.path)
        try:
            saved = _one(connection.execute("SELECT value FROM meta WHERE key = 'key'").fetchall())
        except duckdb.CatalogException:
            saved = None
        if saved is not None and saved[0] != self.key.as_text():
            connection.close()
            refresh.rebuilt = "it was made for another run id, format or reward weights"
            self._remove()
            connection = _connect(self.path)
            saved = None
        if saved is None:
            _create(connection, self.key)
        return connection

    def _remove(self) -> None:
        for path in (self.path, self.path.with_name(self.path.name + ".wal")):
            path.unlink(missing_ok=True)


class _Update:
    """One pass over the dump files: what changed goes in, what went goes out."""

    def __init__(
        self, table: SearchTable, connection: duckdb.DuckDBPyConnection, refresh: Refresh
    ) -> None:
        self.table = table
        self.connection = connection
        self.refresh = refresh
        self.key = table.key
        self.pending: list[Piece] = []
        self.pending_rows = 0
        self.columns = _columns(connection)
        self.done_bytes = 0

    def run(self) -> None:
        location = self.table.location
        files = list_files(location)
        self.refresh.files = len(files)
        known = {
            name: (size, mtime, Mark(offset, lines, head, tail))
            for name, size, mtime, offset, lines, head, tail in self.connection.execute(
                'SELECT name, size, mtime, "offset", lines, head, tail FROM sources'
            ).fetchall()
        }
        present = {file.path.name for file in files}
        for name in sorted(set(known) - present):
            self._drop(name)
        todo: list[tuple[DumpFile, Mark]] = []
        for file in files:
            saved = known.get(file.path.name)
            if saved is not None and saved[:2] == (file.size, file.mtime):
                continue  # untouched since it was read
            mark = Mark()
            if saved is not None:
                if location.format.kind == "jsonl" and only_grew(file, saved[2]):
                    mark = saved[2]
                else:
                    self._drop(file.path.name)
            todo.append((file, mark))
        total = sum(file.size - mark.offset for file, mark in todo)
        for file, mark in todo:
            self._read(file, mark)
            self.done_bytes += file.size - mark.offset
            self._progress(total)
        self._flush()
        self._compact()

    def _read(self, file: DumpFile, mark: Mark) -> None:
        dump_format = self.table.location.format
        try:
            if dump_format.kind == "jsonl":
                added = False
                for piece in read_jsonl(dump_format, file, mark):
                    self._add(piece)
                    added = True
                if not added:  # touched, nothing new: its size and time are written down
                    self._add(Piece(file, [], mark))
            else:
                self._add(read_parquet(file, self.key.reward_weights))
        except Unreadable as problem:
            self.refresh.unreadable.append(f"{file.path}: {problem}; not read (read next time)")
            return
        except FileNotFoundError:
            return  # removed since the listing: dropped next time
        if file.size > mark.offset:
            self.refresh.read += 1

    def _add(self, piece: Piece) -> None:
        for line in piece.problems:
            self.refresh.problem(line)
        self.pending.append(piece)
        self.pending_rows += len(piece.rows)
        if self.pending_rows >= BATCH_ROWS:
            self._flush()

    def _drop(self, name: str) -> None:
        connection = self.connection
        connection.begin()
        deleted = connection.execute(f"DELETE FROM {TABLE} WHERE source = ?", [name]).fetchall()
        connection.execute("DELETE FROM sources WHERE name = ?", [name])
        _set_meta(connection, "deleted", _meta_int(connection, "deleted") + int(deleted[0][0]))
        connection.commit()
        self.refresh.dropped += 1

    def _flush(self) -> None:
        if not self.pending:
            return
        pieces, self.pending, self.pending_rows = self.pending, [], 0
        names = sorted(_component_names(pieces))
        connection = self.connection
        connection.begin()
        for name in names:
            if name not in self.columns and has_own_column(name, self.columns):
                connection.execute(f"ALTER TABLE {TABLE} ADD COLUMN {identifier(name)} DOUBLE")
                self.columns[name] = "number"
        own = [name for name in names if name in self.columns and name not in FIXED]
        batch = _arrow(pieces, self.key.run_id, own)
        connection.register("incoming", batch)
        try:
            connection.execute(
                f"INSERT INTO {TABLE} BY NAME SELECT * FROM incoming ORDER BY {STORED_ORDER}"
            )
        finally:
            connection.unregister("incoming")
        for piece in pieces:
            file, mark = piece.file, piece.mark
            connection.execute(
                "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?, ?, ?)",
                [file.path.name, file.size, file.mtime, mark.offset, mark.lines, mark.head,
                 mark.tail],
            )  # fmt: skip
        connection.commit()
        self.refresh.added += batch.num_rows

    def _compact(self) -> None:
        """Deleted rows keep their place in DuckDB's row groups until the table is written
        afresh: done once they are a large share of it."""
        connection = self.connection
        deleted = _meta_int(connection, "deleted")
        if not deleted or deleted < COMPACT_AFTER * (_count(connection) + deleted):
            return
        order = f"rowid // {BATCH_ROWS}, {STORED_ORDER}"  # the batches as they were written
        connection.begin()
        connection.execute(f"CREATE TABLE compacted AS SELECT * FROM {TABLE} ORDER BY {order}")
        connection.execute(f"DROP TABLE {TABLE}")
        connection.execute(f"ALTER TABLE compacted RENAME TO {TABLE}")
        _set_meta(connection, "deleted", 0)
        connection.commit()
        connection.execute("CHECKPOINT")

    def _progress(self, total: int) -> None:
        if self.table.on_progress is not None:
            self.table.on_progress(self.done_bytes, total)


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(str(path))
    # No progress bar of DuckDB's own on the terminal: the command draws its own.
    connection.execute("SET enable_progress_bar = false")
    return connection


def _damaged(error: duckdb.Error) -> bool:
    """Not a DuckDB database (cut, overwritten) or one of another DuckDB version: what building
    it again mends. A lock another program holds, or anything else, is not."""
    text = str(error).lower()
    held = ("could not set lock", "conflicting lock")
    return isinstance(error, duckdb.IOException) and not any(word in text for word in held)


def _create(connection: duckdb.DuckDBPyConnection, key: TableKey) -> None:
    columns = ", ".join(f"{identifier(name)} {kind}" for name, (kind, _) in FIXED.items())
    connection.begin()
    connection.execute(f"CREATE TABLE {TABLE} ({columns})")
    connection.execute(
        "CREATE TABLE sources (name VARCHAR PRIMARY KEY, size BIGINT, mtime DOUBLE, "
        '"offset" BIGINT, lines BIGINT, head VARCHAR, tail VARCHAR)'
    )
    connection.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    connection.execute("INSERT INTO meta VALUES ('key', ?)", [key.as_text()])
    connection.commit()


def _meta_int(connection: duckdb.DuckDBPyConnection, key: str) -> int:
    found = _one(connection.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchall())
    return int(found[0]) if found else 0


def _set_meta(connection: duckdb.DuckDBPyConnection, key: str, value: object) -> None:
    connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, str(value)])


def columns_of(connection: duckdb.DuckDBPyConnection) -> dict[str, Kind]:
    """The table's columns and what each holds, in the table's order."""
    return _columns(connection)


def _columns(connection: duckdb.DuckDBPyConnection) -> dict[str, Kind]:
    described = connection.execute(f"DESCRIBE {TABLE}").fetchall()
    return {name: kind_of(kind) for name, kind, *_ in described}


def _count(connection: duckdb.DuckDBPyConnection) -> int:
    return int(connection.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0])


def _arrow(pieces: Sequence[Piece], run_id: str, components: Sequence[str]) -> Any:
    import pyarrow as pa

    source: list[str] = []
    index: list[int] = []
    step: list[int] = []
    sample_id: list[str] = []
    prompt: list[str] = []
    response: list[str] = []
    reward: list[float | None] = []
    advantage: list[float | None] = []
    truncated: list[bool] = []
    details: list[list[tuple[str, float]]] = []
    own: dict[str, list[float | None]] = {name: [] for name in components}
    for piece in pieces:
        name = piece.file.path.name
        for row in piece.rows:
            source.append(name)
            index.append(row.index)
            step.append(row.step)
            # As the router makes it for a dump row (rank 0, as `lowtide ingest` routes them).
            sample_id.append(
                make_sample_id(run_id, row.step, 0, row.index, row.prompt, row.response)
            )
            prompt.append(row.prompt)
            response.append(row.response)
            reward.append(_known(row.reward))
            advantage.append(_known(row.advantage))
            truncated.append(row.truncated)
            values = row.reward_details
            details.append(list(values.items()))
            for component, column in own.items():
                column.append(_known(values.get(component)))
    columns: dict[str, Any] = {
        "source": pa.array(source, pa.string()),
        "index": pa.array(index, pa.int64()),
        "step": pa.array(step, pa.int64()),
        "sample_id": pa.array(sample_id, pa.string()),
        "prompt": pa.array(prompt, pa.large_string()),
        "response": pa.array(response, pa.large_string()),
        "prompt_length": pa.array([len(text) for text in prompt], pa.int64()),
        "response_length": pa.array([len(text) for text in response], pa.int64()),
        "reward": pa.array(reward, pa.float64()),
        "advantage": pa.array(advantage, pa.float64()),
        "truncated": pa.array(truncated, pa.bool_()),
        "reward_details": pa.array(details, pa.map_(pa.string(), pa.float64())),
    }
    for component, values in own.items():
        columns[component] = pa.array(values, pa.float64())
    return pa.table(columns)


def _component_names(pieces: Sequence[Piece]) -> set[str]:
    return {name for piece in pieces for row in piece.rows for name in row.reward_details}


def _known(value: float | None) -> float | None:
    """NaN (unknown) as NULL: DuckDB orders NaN above every number, so `reward > 2` would
    match it."""
    return None if value is None or math.isnan(value) else value


def _one(rows: list[Any]) -> Any:
    return rows[0] if rows else None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
