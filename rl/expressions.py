"""The core of lowtide's two small expression languages: hook conditions (`rl.hooks.conditions`,
evaluated on step metrics) and the search language (`sampling.sources.search.query`, compiled to
SQL with bound parameters).

Both read text someone else may have written, so both are hand-written, never `eval`, and
bounded: each language caps its length, and every level of nesting (NOT, parentheses, a unary
minus) goes through `nested`, which refuses to go deeper than the language's `max_depth` long
before the interpreter's recursion limit. What is shared lives here: the token, a scanner for
tokenizers, the cursor over the tokens, and the boolean layer both grammars have,

    or  := and (OR and)*
    and := not (AND not)*
    not := NOT not | operand

Each language keeps its own words (`and` or `AND`), its own operands, its own tree and its own
error type and wording: `logical_word`, `operand`, `all_of`, `any_of`, `negation` and
`too_deep` say them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

Node = TypeVar("Node")
LogicalWord = Literal["and", "or", "not"]


@dataclass(frozen=True)
class Token:
    kind: str  # the language's own kinds ("number", "name", "op", ...); "end" closes every stream
    text: str  # as written, for messages
    position: int  # 0-based offset in the source
    value: str | float = ""  # what it stands for, where the language reads one (a number's value)

    @property
    def column(self) -> int:
        """1-based, as editors count."""
        return self.position + 1


class Scanner:
    """A tokenizer's place in its source: skips blanks, matches at the place, cuts tokens."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.position = 0

    def skip_space(self) -> bool:
        """Past any whitespace; False at the end of the source."""
        while self.position < len(self.source) and self.source[self.position].isspace():
            self.position += 1
        return self.position < len(self.source)

    @property
    def char(self) -> str:
        return self.source[self.position]

    def peek(self, count: int) -> str:
        """The next `count` characters (fewer at the end)."""
        return self.source[self.position : self.position + count]

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        return pattern.match(self.source, self.position)

    def one_of(self, symbols: Sequence[str]) -> str | None:
        """The first of `symbols` that starts here (list longer ones first)."""
        return next((s for s in symbols if self.source.startswith(s, self.position)), None)

    def cut(self, kind: str, end: int, value: str | float = "") -> Token:
        """The token from here to `end`, and move past it."""
        token = Token(kind, self.source[self.position : end], self.position, value)
        self.position = end
        return token

    def end(self) -> Token:
        return Token("end", "", len(self.source))


class Tokens:
    """The parser's cursor. A lazy stream (a generator) makes a tokenizer's error the first
    problem from the left: `f('x')` fails at the call, before the quote is read."""

    def __init__(self, tokens: Iterable[Token]) -> None:
        self._stream: Iterator[Token] = iter(tokens)
        self.current = next(self._stream)

    def take(self) -> Token:
        """The current token; the cursor stays on the end token once it gets there."""
        token = self.current
        if token.kind != "end":
            self.current = next(self._stream)
        return token


class BooleanParser(Generic[Node]):
    """The or/and/not layer of a grammar, with bounded nesting. A language subclasses it and
    says what its words, operands and nodes are; its operand parser calls `or_` again for a
    parenthesised sub-expression."""

    max_depth: int

    def __init__(self, tokens: Iterable[Token]) -> None:
        self.tokens = Tokens(tokens)
        self.depth = 0  # NOTs, parentheses and the like open around the current token

    # --- what a language says ---

    def logical_word(self, token: Token) -> LogicalWord | None:
        raise NotImplementedError

    def operand(self) -> Node:
        raise NotImplementedError

    def all_of(self, operands: tuple[Node, ...]) -> Node:
        raise NotImplementedError

    def any_of(self, operands: tuple[Node, ...]) -> Node:
        raise NotImplementedError

    def negation(self, operand: Node) -> Node:
        raise NotImplementedError

    def too_deep(self, opening: Token) -> Exception:
        """The error for nesting past `max_depth` at `opening`."""
        raise NotImplementedError

    # --- the shared layer ---

    def or_(self) -> Node:
        return self.chain("or", self.and_, self.any_of)

    def and_(self) -> Node:
        return self.chain("and", self.not_, self.all_of)

    def chain(
        self, word: str, operand: Callable[[], Node], join: Callable[[tuple[Node, ...]], Node]
    ) -> Node:
        """`operand (word operand)*`: one operand as it is, more joined by `join`."""
        operands = [operand()]
        while self.logical_word(self.tokens.current) == word:
            self.tokens.take()
            operands.append(operand())
        return operands[0] if len(operands) == 1 else join(tuple(operands))

    def not_(self) -> Node:
        token = self.tokens.current
        if self.logical_word(token) != "not":
            return self.operand()
        self.tokens.take()
        with self.nested(token):
            return self.negation(self.not_())

    @contextmanager
    def nested(self, opening: Token) -> Iterator[None]:
        """One level deeper for what follows `opening`; `too_deep` past `max_depth`."""
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                raise self.too_deep(opening)
            yield
        finally:
            self.depth -= 1
