"""Running a search on the table's read-only connection: the match count and the rows to show
(sorted, limited) in one scan, all matches as Arrow batches for an export or for routing, and
`--sql` as the user wrote it, one SELECT.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from rl.suggest import did_you_mean
from sampling.sources.search.query import QueryError
from sampling.sources.search.schema import ORDER, TABLE, Kind, identifier
from sampling.sources.search.sql import Compiled, compile_query, resolve

BATCH_ROWS = 10_000
ROW_ID = '"lowtide search row id"'  # the row ids' name: one no trainer gives a component


class SearchError(ValueError):
    """A query, sort key or SQL statement that cannot run; the message is one line."""


@dataclass(frozen=True)
class SortKey:
    column: str
    descending: bool


@dataclass(frozen=True)
class Found:
    total: int  # rows that match
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]  # the first `limit` of them, in order


def compile_checked(
    connection: duckdb.DuckDBPyConnection, query: str, columns: Mapping[str, Kind]
) -> Compiled:
    """The query compiled, its regular expressions tried: SearchError (one line) otherwise."""
    try:
        compiled = compile_query(query, columns)
    except QueryError as error:
        raise SearchError(f"query {error}") from None
    for pattern, position in compiled.patterns:
        try:
            connection.execute("SELECT regexp_matches('', ?)", [pattern]).fetchall()
        except duckdb.Error as error:
            reason = _first_line(error).split(":", 1)[-1].strip()
            raise SearchError(
                f"query at position {position + 1}: not a regular expression ({reason})"
            ) from None
    return compiled


def sort_keys(text: str | None, columns: Mapping[str, Kind]) -> list[SortKey]:
    """`-reward,step`: by reward, highest first, then by step. SearchError for a name the
    table lacks."""
    if not text:
        return []
    keys = []
    for part in text.split(","):
        word = part.strip()
        descending = word.startswith("-")
        name = word.lstrip("-+").strip()
        if not name:
            raise SearchError(f"--sort {text}: expected column names, e.g. -reward,step")
        try:
            column = resolve(name, columns)
        except QueryError:
            hint = did_you_mean(name, columns)
            raise SearchError(
                f"--sort {text}: no column {name!r}" + (f" ({hint})" if hint else "")
            ) from None
        if columns[column] == "other":
            raise SearchError(f"--sort {text}: {column!r} cannot be sorted on")
        keys.append(SortKey(column, descending))
    return keys


def order_by(keys: Sequence[SortKey]) -> str:
    """The sort keys, then the order the trainer wrote the rows in (so ties read in order)."""
    parts = [f"{identifier(k.column)} {'DESC' if k.descending else 'ASC'} NULLS LAST" for k in keys]
    chosen = {key.column for key in keys}
    parts += [f"{identifier(name)} ASC" for name in ORDER if name not in chosen]
    return ", ".join(parts)


def find(
    connection: duckdb.DuckDBPyConnection,
    compiled: Compiled,
    keys: Sequence[SortKey],
    shown: Sequence[str],
    limit: int,
) -> Found:
    """How many rows match and the first `limit` in order. One scan finds them, light: the row
    ids and sort columns only, kept (a window count would make DuckDB scan twice); the texts
    of the few shown are read afterwards by row id."""
    sorted_on = dict.fromkeys([*(key.column for key in keys), *ORDER])
    kept = ", ".join(identifier(name) for name in sorted_on)
    top = connection.execute(
        f"WITH found AS MATERIALIZED (SELECT rowid AS {ROW_ID}, {kept} FROM {TABLE} "
        f"WHERE {compiled.where}) "
        f"SELECT {ROW_ID}, (SELECT count(*) FROM found) FROM found "
        f"ORDER BY {order_by(keys)} LIMIT ?",
        [*compiled.params, max(limit, 1)],
    ).fetchall()
    total = int(top[0][1]) if top else 0
    select = ", ".join(identifier(name) for name in shown)
    rows = []
    for rowid, _ in top[:limit]:
        # A range on rowid is pruned to its row group; an IN list of ids is not.
        rows += connection.execute(
            f"SELECT {select} FROM {TABLE} WHERE rowid BETWEEN ? AND ?", [rowid, rowid]
        ).fetchall()
    return Found(total, tuple(shown), rows)


def all_matches(
    connection: duckdb.DuckDBPyConnection,
    compiled: Compiled,
    keys: Sequence[SortKey],
    columns: Sequence[str],
) -> Iterator[Any]:
    """Every matching row, in order, as Arrow record batches of the named columns."""
    select = ", ".join(identifier(name) for name in columns)
    relation = connection.sql(
        f"SELECT {select} FROM {TABLE} WHERE {compiled.where} ORDER BY {order_by(keys)}",
        params=list(compiled.params),
    )
    yield from relation.to_arrow_reader(BATCH_ROWS)


def count(connection: duckdb.DuckDBPyConnection) -> int:
    return int(connection.execute(f"SELECT count(*) FROM {TABLE}").fetchall()[0][0])


# ---- --sql -------------------------------------------------------------------------------------


def sql_relation(connection: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation:
    """One SELECT over `rollouts`, as a relation (nothing runs yet). SearchError (one line) for
    anything else or for SQL DuckDB rejects."""
    try:
        statements = connection.extract_statements(sql)
    except duckdb.Error as error:
        raise SearchError(f"--sql: {_first_line(error)}") from None
    if len(statements) != 1:
        raise SearchError(f"--sql: expected one SELECT statement, got {len(statements)}")
    if statements[0].type != duckdb.StatementType.SELECT:
        kind = statements[0].type.name
        raise SearchError(f"--sql: only a SELECT runs here (the table is read-only), not {kind}")
    try:
        return connection.sql(sql)
    except duckdb.Error as error:
        raise SearchError(f"--sql: {_first_line(error)}") from None


def sql_found(relation: duckdb.DuckDBPyRelation, limit: int) -> Found:
    try:
        total = relation.count("*").fetchall()
        rows = relation.limit(limit).fetchall()
    except duckdb.Error as error:
        raise SearchError(f"--sql: {_first_line(error)}") from None
    return Found(int(total[0][0]) if total else 0, tuple(relation.columns), rows)


def sql_batches(relation: duckdb.DuckDBPyRelation) -> Iterator[Any]:
    try:
        reader = relation.to_arrow_reader(BATCH_ROWS)
    except duckdb.Error as error:
        raise SearchError(f"--sql: {_first_line(error)}") from None
    yield from reader


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
