"""The `rollouts` table a search runs on: its fixed columns, one column per reward component, and
how a column name is written in SQL. The same table for every dump format, so that one query
reads a lowtide run, a verl dump and TRL's completions alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

Kind = Literal["number", "text", "bool", "other"]

TABLE = "rollouts"
# name -> (DuckDB type, what it is). Lengths count characters of the texts as the dump holds them.
FIXED: Mapping[str, tuple[str, str]] = {
    "step": ("BIGINT", "the training step"),
    "sample_id": ("VARCHAR", "the id a routed record of this sample gets (rl.samples)"),
    "reward": ("DOUBLE", "the total reward the trainer optimised (NULL: unknown)"),
    "prompt": ("VARCHAR", "the prompt"),
    "response": ("VARCHAR", "the response"),
    "prompt_length": ("BIGINT", "characters in the prompt"),
    "response_length": ("BIGINT", "characters in the response"),
    "advantage": ("DOUBLE", "the sample's advantage where the dump has it"),
    "truncated": ("BOOLEAN", "stopped at the length limit (lowtide runs)"),
    "index": ("BIGINT", "the row's position in its file: part of the sample id"),
    "source": ("VARCHAR", "the dump file's name"),
    "reward_details": ("MAP(VARCHAR, DOUBLE)", "every reward component, NaN kept"),
}
ORDER = ("step", "source", "index")  # the default order: as the trainer wrote them


def kind_of(duckdb_type: str) -> Kind:
    kind = duckdb_type.upper()
    if kind in ("DOUBLE", "FLOAT", "REAL", "BIGINT", "INTEGER", "HUGEINT", "SMALLINT"):
        return "number"
    if kind == "VARCHAR":
        return "text"
    if kind == "BOOLEAN":
        return "bool"
    return "other"


def identifier(name: str) -> str:
    """A column name as SQL: always quoted, quotes doubled. Names come from the table's own
    schema, never from a query's text."""
    return '"' + name.replace('"', '""') + '"'


def has_own_column(component: str, columns: Iterable[str]) -> bool:
    """Whether a reward component is (or may become) a column of its own beside `columns`:
    DuckDB's names are case-insensitive, so a component spelled like a fixed column or like
    another column in another case lives only in `reward_details`."""
    columns = set(columns)
    if component in columns:
        return component not in FIXED
    taken = {name.lower() for name in (*FIXED, *columns)}
    return bool(component) and component.lower() not in taken
