r"""The query language of `lowtide logs search`, read into a tree: a hand-written tokenizer and a
recursive-descent parser, on the core hook conditions share (`rl.expressions`). Nothing here
runs a query or knows the table; `sql.py` checks the column names against the table and
compiles the tree to SQL with bound parameters.

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
position (1-based, in characters); so does nesting NOTs and parentheses deeper than MAX_DEPTH,
or a query longer than MAX_LENGTH characters.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from rl.expressions import BooleanParser, LogicalWord, Scanner, Token

KEYWORDS = frozenset({"and", "or", "not", "contains", "matches", "case", "true", "false"})
OPERATORS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "==": "=", "!=": "!=",
             "<>": "!="}  # fmt: skip
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Longest first, so `<=` is read as one operator and not as `<` then `=`.
_OPERATOR_SPELLINGS = sorted(OPERATORS, key=len, reverse=True)
SPECIAL_NUMBERS = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
EXAMPLE = 'reward < 0.2 AND response CONTAINS "sorry"'
# Parentheses and NOTs inside each other: the parser and the compiler recurse once per level,
# so a query nested past this is refused before the interpreter's recursion limit is reached.
MAX_DEPTH = 100
# A query is typed or pasted by a person; anything longer is not one.
MAX_LENGTH = 10_000


class QueryError(ValueError):
    """A query that cannot be read; the message is one line that names the position."""

    def __init__(self, position: int, message: str) -> None:
        super().__init__(f"at position {position + 1}: {message}")
        self.position = position  # 0-based offset in the query text


def _keyword(token: Token) -> str | None:
    lowered = token.text.lower()
    return lowered if token.kind == "word" and lowered in KEYWORDS else None


def _shown(token: Token) -> str:
    return "the end of the query" if token.kind == "end" else repr(token.text)


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
    scan = Scanner(query)
    while scan.skip_space():
        at, char = scan.position, scan.char
        if char in "()":
            tokens.append(scan.cut(char, at + 1, char))
        elif char in "<>=!":
            op = scan.one_of(_OPERATOR_SPELLINGS)
            if op is None:  # a lone '!'
                raise QueryError(at, "unexpected '!' (did you mean '!=' or NOT?)")
            tokens.append(scan.cut("op", at + len(op), OPERATORS[op]))
        elif char in "\"'`":
            text, end = _quoted(query, at)
            tokens.append(scan.cut("name" if char == "`" else "text", end, text))
        elif (number := scan.match(NUMBER)) is not None:
            tokens.append(scan.cut("number", number.end(), float(number.group())))
        elif scan.peek(4).lower() in ("-inf", "+inf") and not _word_char(query, at + 4):
            tokens.append(scan.cut("number", at + 4, SPECIAL_NUMBERS[scan.peek(4).lower()]))
        elif (word := scan.match(WORD)) is not None:
            tokens.append(scan.cut("word", word.end(), word.group()))
        elif char.isdigit() or (char in "+-." and query[at + 1 : at + 2].isdigit()):
            chunk = re.match(r"[^\s()]+", query[at:])
            raise QueryError(at, f"{chunk.group() if chunk else char!r} is not a number")
        else:
            raise QueryError(at, f"unexpected {char!r} (put texts and odd column names in quotes)")
    tokens.append(scan.end())
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
    if len(query) > MAX_LENGTH:
        raise QueryError(MAX_LENGTH, f"the query is longer than {MAX_LENGTH:,} characters")
    return _Parser(tokenize(query)).query()


class _Parser(BooleanParser[Node]):
    max_depth = MAX_DEPTH

    @property
    def current(self) -> Token:
        return self.tokens.current

    def advance(self) -> Token:
        return self.tokens.take()

    def query(self) -> Node:
        node = self.or_()
        token = self.current
        if token.kind != "end":
            wanted = "AND, OR or the end of the query"
            if token.kind == ")":
                raise QueryError(token.position, "this ')' closes no '('")
            raise QueryError(token.position, f"expected {wanted}, got {_shown(token)}")
        return node

    # ---- the boolean layer (rl.expressions) in this language's words ----

    def logical_word(self, token: Token) -> LogicalWord | None:
        word = _keyword(token)
        return word if word in ("and", "or", "not") else None  # type: ignore[return-value]

    def all_of(self, operands: tuple[Node, ...]) -> Node:
        return And(operands)

    def any_of(self, operands: tuple[Node, ...]) -> Node:
        return Or(operands)

    def negation(self, operand: Node) -> Node:
        return Not(operand)

    def too_deep(self, opening: Token) -> Exception:
        return QueryError(opening.position, f"nested more than {MAX_DEPTH} levels deep")

    def operand(self) -> Node:
        token = self.current
        if token.kind != "(":
            return self.condition()
        self.advance()
        with self.nested(token):
            node = self.or_()
        closing = self.current
        if closing.kind != ")":
            raise QueryError(
                closing.position,
                f"expected ')' to close the '(' at position {token.position + 1}, "
                f"got {_shown(closing)}",
            )
        self.advance()
        return node

    # ---- conditions ----

    def condition(self) -> Node:
        column = self.column()
        token = self.current
        if token.kind == "op":
            self.advance()
            position = self.current.position
            return Compare(column, str(token.value), self.value(column, token), position)
        negated = _keyword(token) == "not"
        if negated:
            self.advance()
            token = self.current
            if _keyword(token) not in ("contains", "matches"):
                raise QueryError(
                    token.position,
                    f"expected CONTAINS or MATCHES after '{column.name} NOT', got {_shown(token)}",
                )
        if _keyword(token) in ("contains", "matches"):
            self.advance()
            node: Node = self.text_match(column, token)
            return Not(node) if negated else node
        if token.kind in ("end", ")") or _keyword(token) in ("and", "or"):
            return Flag(column)  # `truncated`: sql.py checks the column is true/false
        raise QueryError(
            token.position,
            f"expected a comparison (< <= > >= = !=), CONTAINS or MATCHES after "
            f"{column.name!r}, got {_shown(token)}",
        )

    def column(self) -> Column:
        token = self.current
        if token.kind in ("name", "text"):
            self.advance()
            return Column(str(token.value), token.position)
        if token.kind == "word" and _keyword(token) is None:
            self.advance()
            return Column(token.text, token.position)
        if token.kind == "word":  # a keyword where a column belongs
            hint = f" (a column named {token.text!r}: write it in backquotes)"
            if _keyword(token) in ("and", "or"):
                hint = ""
            raise QueryError(token.position, f"expected a column, got {token.text.upper()}{hint}")
        raise QueryError(
            token.position, f"expected a column (reward, step, response, ...), got {_shown(token)}"
        )

    def value(self, column: Column, op: Token) -> float | str | bool:
        token = self.current
        after = f"after '{column.name} {op.text}'"
        if token.kind == "number":
            self.advance()
            return float(token.value)
        if token.kind == "text":
            self.advance()
            return str(token.value)
        if _keyword(token) in ("true", "false"):
            self.advance()
            return _keyword(token) == "true"
        if token.kind == "word" and token.text.lower() in ("inf", "infinity"):
            self.advance()
            return math.inf
        raise QueryError(
            token.position, f"expected a number or a quoted text {after}, got {_shown(token)}"
        )

    def text_match(self, column: Column, keyword: Token) -> TextMatch:
        kind: Literal["contains", "matches"] = (
            "contains" if _keyword(keyword) == "contains" else "matches"
        )
        case_sensitive = kind == "matches"  # a regex says (?i) itself
        if kind == "contains" and _keyword(self.current) == "case":
            self.advance()
            case_sensitive = True
        token = self.current
        if token.kind != "text":
            what = "a quoted text" if kind == "contains" else "a quoted regular expression"
            raise QueryError(
                token.position,
                f"expected {what} after '{column.name} {keyword.text.upper()}', "
                f"got {_shown(token)}",
            )
        self.advance()
        return TextMatch(column, kind, str(token.value), case_sensitive, token.position)
