"""A small, safe evaluator for a hook's `when:` condition on step metrics.

Never `eval`: a hand-written tokenizer and recursive-descent parser (on the core the search
language shares, `rl.expressions`) build a tiny tree of numbers, metric names, arithmetic,
comparisons and and/or/not, and that tree is all that ever runs.

Grammar, loosest binding first:

    or_expr    := and_expr ("or" and_expr)*
    and_expr   := not_expr ("and" not_expr)*
    not_expr   := "not" not_expr | comparison
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)*   # chained like Python
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/" | "%") unary)*
    unary      := "-" unary | atom
    atom       := NUMBER | NAME | "true" | "false" | "(" or_expr ")"

A NAME is a metric key: `[A-Za-z_][A-Za-z0-9_]*` segments joined by `/` with no spaces around it
(`reward/mean`); a `/` with whitespace on either side, or not between two name segments, divides.
"""

from __future__ import annotations

import keyword
import math
import operator
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from rl.expressions import BooleanParser, LogicalWord, Scanner, Token

MAX_LENGTH = 500
MAX_DEPTH = 50

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*")
_OPERATORS = ("<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "%", "(", ")")
_WORDS = frozenset({"and", "or", "not", "true", "false"})
# Python words a user may reach for; naming them in the error beats "metric 'if' unknown" later.
_RESERVED = frozenset(keyword.kwlist) - _WORDS
_HINTS = {
    "'": "strings are not allowed",
    '"': "strings are not allowed",
    ".": "attribute access is not allowed",
    "[": "indexing is not allowed",
    "=": "use == to compare",
    ":": "only numbers, metric names, + - * / %, comparisons, and/or/not, parentheses",
    ",": "only numbers, metric names, + - * / %, comparisons, and/or/not, parentheses",
}


class ConditionError(ValueError):
    """A `when:` expression that is not in the grammar (raised at compile time)."""


class MissingMetric(KeyError):
    """The condition names a metric that the values given to `evaluate` do not have."""

    def __init__(self, name: str, source: str) -> None:
        super().__init__(name)
        self.name = name
        self.source = source

    def __str__(self) -> str:
        return f"when: metric {self.name!r} is not known here (in {self.source!r})"


# --- tokens ---------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return f'"{text}"' if "'" in text else f"'{text}'"


def _quote_source(source: str) -> str:
    return f"'{source}'" if '"' in source else f'"{source}"'


def _error(source: str, column: int, found: str, hint: str | None = None) -> ConditionError:
    where = f"at column {column} in {_quote_source(source)}"
    what = "end of condition" if not found else _quote(found)
    suffix = f": {hint}" if hint else ""
    return ConditionError(f"when: unexpected {what} {where}{suffix}")


def _tokenize(source: str) -> Iterator[Token]:
    # Lazy, so the parser reports the first problem from the left (`f('x')` fails at the call).
    scan = Scanner(source)
    while scan.skip_space():
        if number := scan.match(_NUMBER):
            after = number.end()
            if after < len(source) and (source[after].isalnum() or source[after] in "_."):
                raise _error(source, after + 1, source[after], _HINTS.get(source[after]))
            yield scan.cut("number", after, float(number.group()))
        elif name := scan.match(_NAME):
            text = name.group()
            if text in ("True", "False"):
                raise _error(source, scan.position + 1, text, f"write {text.lower()}")
            if text in _RESERVED:
                raise _error(source, scan.position + 1, text, "Python keywords are not allowed")
            yield scan.cut("word" if text in _WORDS else "name", name.end())
        elif symbol := scan.one_of(_OPERATORS):
            yield scan.cut("op", scan.position + len(symbol))
        else:
            raise _error(source, scan.position + 1, scan.char, _HINTS.get(scan.char))
    yield scan.end()


# --- tree -----------------------------------------------------------------------------------

Value = float | bool


class _Node:
    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        raise NotImplementedError


@dataclass(frozen=True)
class _Number(_Node):
    value: float

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        return self.value


@dataclass(frozen=True)
class _Name(_Node):
    name: str

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        try:
            raw = values[self.name]
        except KeyError:
            raise MissingMetric(self.name, source) from None
        try:
            return float(raw)
        except OverflowError:  # an integer too large for a float: as large as one goes
            return -math.inf if isinstance(raw, int) and raw < 0 else math.inf
        except (TypeError, ValueError):
            raise ConditionError(
                f"when: metric {self.name!r} is not a number ({repr(raw)[:80]}) in {source!r}"
            ) from None


def _divide(left: float, right: float) -> float:
    if right != 0:
        return left / right
    if left == 0 or math.isnan(left) or math.isnan(right):
        return math.nan
    return math.copysign(math.inf, left) * math.copysign(1.0, right)  # IEEE, not an exception


def _modulo(left: float, right: float) -> float:
    return math.nan if right == 0 or math.isnan(right) else left % right


_ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _divide,
    "%": _modulo,
}
_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass(frozen=True)
class _Negate(_Node):
    operand: _Node

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        return -float(self.operand.evaluate(values, source))


@dataclass(frozen=True)
class _Not(_Node):
    operand: _Node

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        return not self.operand.evaluate(values, source)


@dataclass(frozen=True)
class _Arithmetic(_Node):
    symbol: str
    left: _Node
    right: _Node

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        left = float(self.left.evaluate(values, source))
        right = float(self.right.evaluate(values, source))
        try:
            return _ARITHMETIC[self.symbol](left, right)
        except OverflowError:
            return math.inf


@dataclass(frozen=True)
class _Compare(_Node):
    first: _Node
    rest: tuple[tuple[str, _Node], ...]

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        # Like Python: `a < b < c` is `a < b and b < c`, each operand evaluated at most once.
        left = float(self.first.evaluate(values, source))
        for symbol, node in self.rest:
            right = float(node.evaluate(values, source))
            # A NaN metric never satisfies a condition, `!=` included: unknown is not "true".
            if math.isnan(left) or math.isnan(right) or not _COMPARISONS[symbol](left, right):
                return False
            left = right
        return True


@dataclass(frozen=True)
class _Logical(_Node):
    symbol: str  # "and" | "or"
    operands: tuple[_Node, ...]

    def evaluate(self, values: Mapping[str, float], source: str) -> Value:
        # Short-circuits, so `step > 20 and kl > 1` never asks for `kl` before step 21.
        if self.symbol == "and":
            return all(bool(node.evaluate(values, source)) for node in self.operands)
        return any(bool(node.evaluate(values, source)) for node in self.operands)


# --- parser ---------------------------------------------------------------------------------


class _Parser(BooleanParser[_Node]):
    max_depth = MAX_DEPTH

    def __init__(self, source: str) -> None:
        super().__init__(_tokenize(source))
        self.source = source
        self.names: set[str] = set()

    def _at(self, kind: str, *texts: str) -> bool:
        return self.tokens.current.kind == kind and self.tokens.current.text in texts

    def _take(self) -> Token:
        return self.tokens.take()

    def _unexpected(self, hint: str | None = None) -> ConditionError:
        token = self.tokens.current
        return _error(self.source, token.column, token.text, hint)

    def parse(self) -> _Node:
        tree = self.or_()
        if self.tokens.current.kind != "end":
            raise self._unexpected()
        return tree

    # --- the boolean layer (rl.expressions) in this language's words ---

    def logical_word(self, token: Token) -> LogicalWord | None:
        if token.kind == "word" and token.text in ("and", "or", "not"):
            return token.text  # type: ignore[return-value]
        return None

    def operand(self) -> _Node:
        return self._comparison()

    def all_of(self, operands: tuple[_Node, ...]) -> _Node:
        return _Logical("and", operands)

    def any_of(self, operands: tuple[_Node, ...]) -> _Node:
        return _Logical("or", operands)

    def negation(self, operand: _Node) -> _Node:
        return _Not(operand)

    def too_deep(self, opening: Token) -> Exception:
        # The column is the first token inside the level that is one too many.
        return ConditionError(
            f"when: nested more than {MAX_DEPTH} levels deep at column "
            f"{self.tokens.current.column} in {_quote_source(self.source)}"
        )

    # --- arithmetic and comparisons ---

    def _comparison(self) -> _Node:
        first = self._sum()
        rest: list[tuple[str, _Node]] = []
        while self._at("op", *_COMPARISONS):
            symbol = self._take().text
            rest.append((symbol, self._sum()))
        return _Compare(first, tuple(rest)) if rest else first

    def _sum(self) -> _Node:
        node = self._product()
        while self._at("op", "+", "-"):
            symbol = self._take().text
            node = _Arithmetic(symbol, node, self._product())
        return node

    def _product(self) -> _Node:
        node = self._unary()
        while self._at("op", "*", "/", "%"):
            symbol = self._take().text
            node = _Arithmetic(symbol, node, self._unary())
        return node

    def _unary(self) -> _Node:
        if not self._at("op", "-"):
            return self._atom()
        minus = self._take()
        with self.nested(minus):
            return _Negate(self._unary())

    def _atom(self) -> _Node:
        token = self.tokens.current
        if token.kind == "number":
            self._take()
            return _Number(float(token.value))
        if token.kind == "name":
            self._take()
            if self._at("op", "("):
                raise self._unexpected("calls are not allowed")
            self.names.add(token.text)
            return _Name(token.text)
        if self._at("word", "true", "false"):
            self._take()
            return _Number(1.0 if token.text == "true" else 0.0)
        if self._at("op", "("):
            with self.nested(self._take()):
                node = self.or_()
                if not self._at("op", ")"):
                    raise self._unexpected("expected ')'")
            self._take()
            return node
        raise self._unexpected()


# --- public API -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Condition:
    """A compiled `when:` expression; compile once, evaluate every step."""

    source: str
    names: frozenset[str]
    _tree: _Node

    def evaluate(self, values: Mapping[str, float]) -> bool:
        """True when the condition holds. Raises MissingMetric for a name not in `values`."""
        return bool(self._tree.evaluate(values, self.source))

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"


def compile_condition(source: str) -> Condition:
    """Parse `source` into a Condition, or raise ConditionError saying where it went wrong."""
    if not isinstance(source, str):
        raise ConditionError(f"when: expected a string, got {type(source).__name__}")
    if len(source) > MAX_LENGTH:
        raise ConditionError(
            f"when: condition is {len(source)} characters long; the limit is {MAX_LENGTH}"
        )
    if not source.strip():
        raise ConditionError("when: empty condition; leave `when` out to run on every step")
    parser = _Parser(source)
    tree = parser.parse()
    return Condition(source=source, names=frozenset(parser.names), _tree=tree)
