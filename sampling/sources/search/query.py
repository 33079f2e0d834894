r"""The query language of `lowtide logs search`, read into a tree: a hand-written tokenizer and a
recursive-descent parser. Nothing here runs a query or knows the table; `sql.py` checks the
column names against the table and compiles the tree to SQL with bound parameters.

    query      := or EOF
    or         := and (OR and)*
    and        := not (AND not)*
    not        := NOT not | '(' or ')' | condition
    condition  := column ( op value
                         | [NOT] CONTAINS [CASE] text
                         | [NOT] MATCHES text
                         | <nothing: a true/false column such as `truncated`> )
    op         := < | <= | > | >= | = | != | == | <>
    column     := name | `any name` | "any name"     (a quoted text where a column is expected)
    value      := number | "text" | 'text' | TRUE | FALSE

Keywords are case-insensitive. CONTAINS ignores case unless CASE follows it; MATCHES takes a
regular expression (RE2 syntax; `(?i)` ignores case). Inside quotes, `\\` is one backslash and
a backslash before the quote character is that character; any other backslash stays as written
(so `"\d+"` and `"\\d+"` both are the regex `\d+`). A mistake raises QueryError with its
position (1-based, in characters); so does nesting NOTs and parentheses deeper than MAX_DEPTH.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

KEYWORDS = frozenset({"and", "or", "not", "contains", "matches", "case", "true", "false"})
OPERATORS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "==": "=", "!=": "!=",
             "<>": "!="}  # fmt: skip
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SPECIAL_NUMBERS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
EXAMPLE = 'reward < 0.2 AND response CONTAINS "sorry"'
# Parentheses and NOTs inside each other: the parser and the compiler recurse once per level,
# so a query nested past this is refused before the interpreter's recursion limit is reached.
MAX_DEPTH = 100


class QueryError(ValueError):
    """A query that cannot be read; the message is one line that names the position."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(f"at position {position + 1}: {message}")
        self.position = position  # 0-based offset in the query text


TokenKind = Literal["word", "name", "text", "number", "op", "(", ")", "end"]


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    raw: str  # as written, for messages
    value: str | float = ""
    position: int = 0

    @property
    def keyword(self) -> str | None:
        lowered = self.raw.lower()
        return lowered if self.kind == "word" and lowered in KEYWORDS else None

    def shown(self) -> str:
        return "the end of the query" if self.kind == "end" else repr(self.raw)


# ---- the tree ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    position: int


@dataclass(frozen=True)
class Compare:
    column: Column
    op: str  # one of OPERATORS' values
    value: float | str | bool
    position: int  # of the value


@dataclass(frozen=True)
class TextMatch:
    column: Column
    kind: Literal["contains", "matches"]
    text: str
    case_sensitive: bool
    position: int  # of the text


@dataclass(frozen=True)
class Flag:
    """A column on its own: true where a true/false column is true (`truncated`)."""

    column: Column


@dataclass(frozen=True)
class Not:
    operand: Node


@dataclass(frozen=True)
class And:
    operands: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    operands: tuple[Node, ...]


Node = Compare | TextMatch | Flag | Not | And | Or


# ---- tokens ------------------------------------------------------------------------------------


def tokenize(query: str) -> list[Token]:
    tokens: list[Token] = []
    at = 0
    while at < len(query):
        char = query[at]
        if char.isspace():
            at += 1
        elif char in "()":
            tokens.append(Token(char, char, char, at))  # type: ignore[arg-type]
            at += 1
        elif char in "<>=!":
            two = query[at : at + 2]
            op = two if two in OPERATORS else char
            if op not in OPERATORS:  # a lone '!'
                raise QueryError(at, "unexpected '!' (did you mean '!=' or NOT?)")
            tokens.append(Token("op", op, OPERATORS[op], at))
            at += len(op)
        elif char in "\"'`":
            text, end = _quoted(query, at)
            tokens.append(Token("name" if char == "`" else "text", query[at:end], text, at))
            at = end
        elif (number := NUMBER.match(query, at)) is not None:
            tokens.append(Token("number", number.group(), float(number.group()), at))
            at = number.end()
        elif query[at : at + 4].lower() in ("-inf", "+inf") and not _word_char(query, at + 4):
            raw = query[at : at + 4]
            tokens.append(Token("number", raw, SPECIAL_NUMBERS[raw.lower()], at))
            at += 4
        elif (word := WORD.match(query, at)) is not None:
            tokens.append(Token("word", word.group(), word.group(), at))
            at = word.end()
        elif char.isdigit() or (char in "+-." and query[at + 1 : at + 2].isdigit()):
            chunk = re.match(r"[^\s()]+", query[at:])
            raise QueryError(at, f"{chunk.group() if chunk else char!r} is not a number")
        else:
            raise QueryError(at, f"unexpected {char!r} (put texts and odd column names in quotes)")
    tokens.append(Token("end", "", "", len(query)))
    return tokens


def _quoted(query: str, start: int) -> tuple[str, int]:
    quote, parts, at = query[start], [], start + 1
    while at < len(query):
        char = query[at]
        if char == "\\" and at + 1 < len(query) and query[at + 1] in (quote, "\\"):
            parts.append(query[at + 1])
            at += 2
        elif char == quote:
            return "".join(parts), at + 1
        else:
            parts.append(char)
            at += 1
    raise QueryError(start, f"the text that starts here has no closing {quote}")


def _word_char(query: str, at: int) -> bool:
    return at < len(query) and (query[at].isalnum() or query[at] == "_")


# ---- the parser --------------------------------------------------------------------------------


def parse(query: str) -> Node:
    """The tree of `query`; QueryError (one line, with the position) when it cannot be read."""
    if not query.strip():
        raise QueryError(0, f"the query is empty (for example: {EXAMPLE})")
    return _Parser(tokenize(query)).query()


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0
        self.depth = 0  # NOTs and parentheses open around the current token

    @property
    def current(self) -> Token:
        return self.tokens[self.at]

    def advance(self) -> Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def query(self) -> Node:
        node = self.or_()
        token = self.current
        if token.kind != "end":
            wanted = "AND, OR or the end of the query"
            if token.kind == ")":
                raise QueryError(token.position, "this ')' closes no '('")
            raise QueryError(token.position, f"expected {wanted}, got {token.shown()}")
        return node

    def or_(self) -> Node:
        operands = [self.and_()]
        while self.current.keyword == "or":
            self.advance()
            operands.append(self.and_())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def and_(self) -> Node:
        operands = [self.not_()]
        while self.current.keyword == "and":
            self.advance()
            operands.append(self.not_())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def not_(self) -> Node:
        token = self.current
        if token.keyword == "not":
            self.advance()
            with self.nested(token):
                return Not(self.not_())
        if token.kind == "(":
            self.advance()
            with self.nested(token):
                node = self.or_()
            closing = self.current
            if closing.kind != ")":
                raise QueryError(
                    closing.position,
                    f"expected ')' to close the '(' at position {token.position + 1}, "
                    f"got {closing.shown()}",
                )
            self.advance()
            return node
        return self.condition()

    @contextmanager
    def nested(self, token: Token) -> Iterator[None]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QueryError(token.position, f"nested more than {MAX_DEPTH} levels deep")
        try:
            yield
        finally:
            self.depth -= 1

    def condition(self) -> Node:
        column = self.column()
        token = self.current
        if token.kind == "op":
            self.advance()
            position = self.current.position
            return Compare(column, str(token.value), self.value(column, token), position)
        negated = token.keyword == "not"
        if negated:
            self.advance()
            token = self.current
            if token.keyword not in ("contains", "matches"):
                raise QueryError(
                    token.position,
                    f"expected CONTAINS or MATCHES after '{column.name} NOT', got {token.shown()}",
                )
        if token.keyword in ("contains", "matches"):
            self.advance()
            node: Node = self.text_match(column, token)
            return Not(node) if negated else node
        if token.kind in ("end", ")") or token.keyword in ("and", "or"):
            return Flag(column)  # `truncated`: sql.py checks the column is true/false
        raise QueryError(
            token.position,
            f"expected a comparison (< <= > >= = !=), CONTAINS or MATCHES after "
            f"{column.name!r}, got {token.shown()}",
        )

    def column(self) -> Column:
        token = self.current
        if token.kind in ("name", "text"):
            self.advance()
            return Column(str(token.value), token.position)
        if token.kind == "word" and token.keyword is None:
            self.advance()
            return Column(token.raw, token.position)
        if token.kind == "word":  # a keyword where a column belongs
            hint = f" (a column named {token.raw!r}: write it in backquotes)"
            if token.keyword in ("and", "or"):
                hint = ""
            raise QueryError(token.position, f"expected a column, got {token.raw.upper()}{hint}")
        raise QueryError(
            token.position, f"expected a column (reward, step, response, ...), got {token.shown()}"
        )

    def value(self, column: Column, op: Token) -> float | str | bool:
        token = self.current
        after = f"after '{column.name} {op.raw}'"
        if token.kind == "number":
            self.advance()
            return float(token.value)
        if token.kind == "text":
            self.advance()
            return str(token.value)
        if token.keyword in ("true", "false"):
            self.advance()
            return token.keyword == "true"
        if token.kind == "word" and token.raw.lower() in ("inf", "infinity"):
            self.advance()
            return math.inf
        raise QueryError(
            token.position, f"expected a number or a quoted text {after}, got {token.shown()}"
        )

    def text_match(self, column: Column, keyword: Token) -> TextMatch:
        kind: Literal["contains", "matches"] = (
            "contains" if keyword.keyword == "contains" else "matches"
        )
        case_sensitive = kind == "matches"  # a regex says (?i) itself
        if kind == "contains" and self.current.keyword == "case":
            self.advance()
            case_sensitive = True
        token = self.current
        if token.kind != "text":
            what = "a quoted text" if kind == "contains" else "a quoted regular expression"
            raise QueryError(
                token.position,
                f"expected {what} after '{column.name} {keyword.raw.upper()}', got {token.shown()}",
            )
        self.advance()
        return TextMatch(column, kind, str(token.value), case_sensitive, token.position)
