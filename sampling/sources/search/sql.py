"""A parsed query (query.py) checked against the table's columns and compiled to a DuckDB `WHERE`
clause with bound parameters: every value of the query travels as a parameter, never as SQL
text; column names come from the table's own schema and are quoted.

Missing values (a component a row does not have, an unknown reward) make a condition false, and
NOT of it true: `NOT x` is compiled as `x IS NOT TRUE`, so a query reads as two-valued logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rl.suggest import did_you_mean
from sampling.sources.search.query import (
    And,
    Column,
    Compare,
    Flag,
    Node,
    Not,
    Or,
    QueryError,
    TextMatch,
    parse,
)
from sampling.sources.search.schema import Kind, identifier

OPERATORS_SQL = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "!=": "<>"}
MAX_NAMES_SHOWN = 12


@dataclass(frozen=True)
class Compiled:
    where: str
    params: tuple[Any, ...]
    columns: tuple[str, ...]  # the columns the query names, in order, each once
    patterns: tuple[tuple[str, int], ...]  # MATCHES regexes and their positions, to check first
    contains: tuple[tuple[str, str, bool], ...]  # (column, text, case_sensitive): for snippets


def compile_query(query: str, columns: Mapping[str, Kind]) -> Compiled:
    """QueryError (one line, with the position) for a query that cannot be read or names a
    column the table lacks or compares it to the wrong kind of value."""
    return _Compiler(columns).compile(parse(query))


def re2_literal(text: str) -> str:
    """`text` as an RE2 pattern that matches exactly it: ASCII punctuation escaped (RE2 takes a
    backslash before any of it), everything else as it is."""
    return "".join(
        "\\" + char
        if char.isascii() and not char.isalnum() and char not in " _" and char.isprintable()
        else char
        for char in text
    )


def resolve(name: str, columns: Mapping[str, Kind], position: int = 0) -> str:
    """The table's spelling of a column: exact, else the one that differs only in case."""
    if name in columns:
        return name
    folded = [column for column in columns if column.lower() == name.lower()]
    if len(folded) == 1:
        return folded[0]
    hint = did_you_mean(name, columns) or did_you_mean(name.lower(), columns)
    if hint:
        raise QueryError(position, f"unknown column {name!r} ({hint})")
    shown = ", ".join(list(columns)[:MAX_NAMES_SHOWN])
    more = ", ..." if len(columns) > MAX_NAMES_SHOWN else ""
    raise QueryError(position, f"unknown column {name!r} (columns: {shown}{more})")


class _Compiler:
    def __init__(self, columns: Mapping[str, Kind]) -> None:
        self.columns = columns
        self.params: list[Any] = []
        self.named: dict[str, None] = {}
        self.patterns: list[tuple[str, int]] = []
        self.contains: list[tuple[str, str, bool]] = []

    def compile(self, node: Node) -> Compiled:
        where = self.node(node)
        return Compiled(
            where,
            tuple(self.params),
            tuple(self.named),
            tuple(self.patterns),
            tuple(self.contains),
        )

    def node(self, node: Node) -> str:
        if isinstance(node, And):
            return " AND ".join(f"({self.node(operand)})" for operand in node.operands)
        if isinstance(node, Or):
            return " OR ".join(f"({self.node(operand)})" for operand in node.operands)
        if isinstance(node, Not):
            return f"({self.node(node.operand)}) IS NOT TRUE"
        if isinstance(node, Compare):
            return self.compare(node)
        if isinstance(node, TextMatch):
            return self.text_match(node)
        return self.flag(node)

    def column(self, column: Column) -> tuple[str, Kind]:
        name = resolve(column.name, self.columns, column.position)
        self.named[name] = None
        return name, self.columns[name]

    def bind(self, value: Any) -> str:
        self.params.append(value)
        return "?"

    def compare(self, node: Compare) -> str:
        name, kind = self.column(node.column)
        value, op = node.value, node.op
        written = f"'{node.column.name} {op}'"
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, float):
                raise QueryError(node.position, f"expected a number after {written}")
        elif kind == "text":
            if not isinstance(value, str):
                raise QueryError(node.position, f"{name!r} holds text: compare it to a quoted text")
            if op not in ("=", "!="):
                raise QueryError(
                    node.column.position,
                    f"{name!r} holds text: use = or !=, CONTAINS or MATCHES, not {op}",
                )
        elif kind == "bool":
            if not isinstance(value, bool):
                raise QueryError(node.position, f"{name!r} is true or false: compare it to TRUE")
            if op not in ("=", "!="):
                raise QueryError(node.column.position, f"{name!r} is true or false: use = or !=")
        else:
            raise QueryError(
                node.column.position, f"{name!r} cannot be compared here: query it with --sql"
            )
        return f"{identifier(name)} {OPERATORS_SQL[op]} {self.bind(value)}"

    def text_match(self, node: TextMatch) -> str:
        name, kind = self.column(node.column)
        keyword = node.kind.upper()
        if kind != "text":
            texts = ", ".join(column for column, k in self.columns.items() if k == "text")
            raise QueryError(
                node.column.position,
                f"{keyword} looks in text columns ({texts}); {name!r} is not one",
            )
        column = identifier(name)
        if node.kind == "matches":
            self.patterns.append((node.text, node.position))
            return f"regexp_matches({column}, {self.bind(node.text)})"
        self.contains.append((name, node.text, node.case_sensitive))
        if node.case_sensitive:
            return f"contains({column}, {self.bind(node.text)})"
        # The text as a case-insensitive RE2 literal: several times faster than ILIKE (which
        # lowers every row's text first) on long responses.
        return f"regexp_matches({column}, {self.bind(re2_literal(node.text))}, 'i')"

    def flag(self, node: Flag) -> str:
        name, kind = self.column(node.column)
        if kind != "bool":
            example = "reward < 0.5" if kind == "number" else 'response CONTAINS "sorry"'
            raise QueryError(
                node.column.position,
                f"{name!r} alone is not a condition: compare it (for example: {example})",
            )
        return f"{identifier(name)} IS TRUE"
