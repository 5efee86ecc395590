"""A small, safe expression language for derived columns and row checks.

Specs compute derived values (``price_usd * units_k * 1000``) and declare row checks
(``launch_date >= announced``) with this language. It is parsed here by a hand-written
Pratt parser into an AST and compiled to a polars expression; it is never handed to
Python's ``eval`` nor built into SQL, so a spec cannot read files, import modules or reach
the network. Only the operators and the whitelisted functions below exist.

Grammar (precedence low → high)::

    expr    := or
    or      := and ("or" and)*
    and     := not ("and" not)*
    not     := "not" not | cmp
    cmp     := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/" | "%") unary)*
    unary   := "-" unary | atom
    atom    := NUMBER | STRING | "true" | "false" | "null"
             | NAME ("." NAME)?            -- a column, or parent_table.column through a foreign key
             | FUNC "(" [expr ("," expr)*] ")"
             | "(" expr ")"

Functions: ``round(x[, n])``, ``abs``, ``floor``, ``ceil``, ``min(a, b, ...)``,
``max(a, b, ...)``, ``int``, ``float``, ``str``, ``upper``, ``lower``, ``len``,
``substr(s, start[, length])`` (0-based), ``concat(a, b, ...)``, ``year``, ``month``,
``day``, ``add_days(date, n)``, ``days_between(a, b)`` (b − a in days),
``if(cond, then, else)``, ``coalesce(a, b, ...)``, ``date('Y-06-30')`` (a date literal,
absolute or relative to the world's ``target_year``) and ``as_of()`` (the date the world
is observed at: the spec's ``as_of``, or a scenario's; "current" facts such as ages use it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Union

import polars as pl

from worldforge.errors import ExpressionError
from worldforge.spec.dates import resolve_date

__all__ = ["Node", "parse", "columns_of", "to_polars", "FUNCTIONS"]


@dataclass(frozen=True)
class Literal:
    """A constant: a number, a string, ``true``/``false`` or ``null`` (``None``)."""

    value: object


@dataclass(frozen=True)
class Column:
    """A column of the row, or ``parent_table.column`` read through the row's reference to that table."""

    name: str  # "col" or "parent_table.col"


@dataclass(frozen=True)
class Unary:
    """``-x`` or ``not x`` (``op`` is ``-`` or ``not``)."""

    op: str
    operand: "Node"


@dataclass(frozen=True)
class Binary:
    """An arithmetic, comparison or logical operation (``op`` as written: ``+``, ``<=``, ``and`` ...)."""

    op: str
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class Call:
    """A call of a whitelisted function (:data:`FUNCTIONS`) with its argument nodes."""

    func: str
    args: tuple["Node", ...]


Node = Union[Literal, Column, Unary, Binary, Call]

# name -> (min args, max args or None for variadic)
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "round": (1, 2),
    "abs": (1, 1),
    "floor": (1, 1),
    "ceil": (1, 1),
    "min": (2, None),
    "max": (2, None),
    "int": (1, 1),
    "float": (1, 1),
    "str": (1, 1),
    "upper": (1, 1),
    "lower": (1, 1),
    "len": (1, 1),
    "substr": (2, 3),
    "concat": (1, None),
    "year": (1, 1),
    "month": (1, 1),
    "day": (1, 1),
    "add_days": (2, 2),
    "days_between": (2, 2),
    "if": (3, 3),
    "coalesce": (1, None),
    "date": (1, 1),
    "as_of": (0, 0),
}

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>\d+\.\d*|\.\d+|\d+)
      | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<op>==|!=|<=|>=|[-+*/%<>(),.])
    )""",
    re.VERBOSE,
)

_KEYWORDS = {"and", "or", "not", "true", "false", "null"}


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"unexpected character {text[pos:].lstrip()[:1]!r} at position {pos} in {text!r}")
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind), m.start(kind)))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        kind, val, pos = self.take()
        if val != value or kind == "str":
            got = "end of expression" if kind == "end" else repr(val)
            raise ExpressionError(f"expected {value!r} at position {pos} in {self.text!r}, got {got}")

    def at(self, value: str) -> bool:
        kind, val, _ = self.peek()
        return kind in ("op", "name") and val == value

    def parse(self) -> Node:
        node = self.or_()
        kind, val, pos = self.peek()
        if kind != "end":
            raise ExpressionError(f"unexpected {val!r} at position {pos} in {self.text!r}")
        return node

    def or_(self) -> Node:
        node = self.and_()
        while self.at("or"):
            self.take()
            node = Binary("or", node, self.and_())
        return node

    def and_(self) -> Node:
        node = self.not_()
        while self.at("and"):
            self.take()
            node = Binary("and", node, self.not_())
        return node

    def not_(self) -> Node:
        if self.at("not"):
            self.take()
            return Unary("not", self.not_())
        return self.cmp()

    def cmp(self) -> Node:
        node = self.sum_()
        kind, val, _ = self.peek()
        if kind == "op" and val in ("==", "!=", "<", "<=", ">", ">="):
            self.take()
            node = Binary(val, node, self.sum_())
        return node

    def sum_(self) -> Node:
        node = self.product()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = Binary(op, node, self.product())
        return node

    def product(self) -> Node:
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            op = self.take()[1]
            node = Binary(op, node, self.unary())
        return node

    def unary(self) -> Node:
        if self.peek()[0] == "op" and self.peek()[1] == "-":
            self.take()
            return Unary("-", self.unary())
        return self.atom()

    def atom(self) -> Node:
        kind, val, pos = self.take()
        if kind == "num":
            return Literal(float(val) if "." in val else int(val))
        if kind == "str":
            body = val[1:-1]
            return Literal(re.sub(r"\\(.)", r"\1", body))
        if kind == "op" and val == "(":
            node = self.or_()
            self.expect(")")
            return node
        if kind == "name":
            if val == "true":
                return Literal(True)
            if val == "false":
                return Literal(False)
            if val == "null":
                return Literal(None)
            if val in _KEYWORDS:
                raise ExpressionError(f"unexpected keyword {val!r} at position {pos} in {self.text!r}")
            if self.at("("):
                return self.call(val, pos)
            if self.at("."):
                self.take()
                k2, v2, p2 = self.take()
                if k2 != "name" or v2 in _KEYWORDS:
                    raise ExpressionError(f"expected a column name after '{val}.' at position {p2} in {self.text!r}")
                if self.at("."):
                    raise ExpressionError(
                        f"only one level of parent lookup is allowed ('{val}.{v2}') in {self.text!r}"
                    )
                return Column(f"{val}.{v2}")
            return Column(val)
        got = "end of expression" if kind == "end" else repr(val)
        raise ExpressionError(f"unexpected {got} at position {pos} in {self.text!r}")

    def call(self, name: str, pos: int) -> Node:
        if name not in FUNCTIONS:
            raise ExpressionError(
                f"unknown function {name!r} at position {pos} in {self.text!r}; "
                f"available: {', '.join(sorted(FUNCTIONS))}"
            )
        self.expect("(")
        args: list[Node] = []
        if not self.at(")"):
            args.append(self.or_())
            while self.at(","):
                self.take()
                args.append(self.or_())
        self.expect(")")
        if name == "date":
            if len(args) != 1 or not isinstance(args[0], Literal) or not isinstance(args[0].value, str):
                raise ExpressionError(f"date() takes one string literal such as 'Y-06-30' in {self.text!r}")
            try:
                resolve_date(args[0].value, 2000)
            except ValueError:
                raise ExpressionError(f"date({args[0].value!r}): use 'YYYY-MM-DD' or 'Y[+N|-N]-MM-DD' in {self.text!r}") from None
        lo, hi = FUNCTIONS[name]
        if len(args) < lo or (hi is not None and len(args) > hi):
            want = f"{lo}" if lo == hi else (f"{lo}+" if hi is None else f"{lo}–{hi}")
            raise ExpressionError(f"{name}() takes {want} arguments, got {len(args)} in {self.text!r}")
        return Call(name, tuple(args))


def parse(text: str) -> Node:
    """Parse an expression into an AST.

    Raises:
        ExpressionError: on a syntax error, an unknown function or a wrong argument count.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("expression is empty")
    return _Parser(text).parse()


def columns_of(node: Node) -> set[str]:
    """The column names an AST reads (``"parent.col"`` for parent lookups)."""
    if isinstance(node, Column):
        return {node.name}
    if isinstance(node, Unary):
        return columns_of(node.operand)
    if isinstance(node, Binary):
        return columns_of(node.left) | columns_of(node.right)
    if isinstance(node, Call):
        out: set[str] = set()
        for a in node.args:
            out |= columns_of(a)
        return out
    return set()


def column_ref(name: str) -> str:
    """The frame column that holds a (possibly dotted) column reference."""
    return name if "." not in name else "__" + name.replace(".", "__")


_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "%": lambda a, b: a % b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
}


def to_polars(node: Node, target_year: int = 2000, as_of: date | None = None) -> pl.Expr:
    """Compile an AST into a polars expression over a frame holding the referenced columns.

    Dotted references ``parent.col`` read the frame column ``__parent__col``, which the
    generator joins in through the foreign key before evaluating. ``target_year`` resolves
    relative ``date('Y-..')`` literals; ``as_of`` is ``as_of()`` (default: Dec 31 of
    ``target_year``).
    """
    if isinstance(node, Literal):
        return pl.lit(node.value)
    if isinstance(node, Column):
        return pl.col(column_ref(node.name))
    if isinstance(node, Unary):
        inner = to_polars(node.operand, target_year, as_of)
        return inner.not_() if node.op == "not" else -inner
    if isinstance(node, Binary):
        return _BINARY[node.op](to_polars(node.left, target_year, as_of), to_polars(node.right, target_year, as_of))
    assert isinstance(node, Call)
    f = node.func
    if f == "date":
        return pl.lit(resolve_date(node.args[0].value, target_year))  # type: ignore[union-attr,arg-type]
    if f == "as_of":
        return pl.lit(as_of or date(target_year, 12, 31))
    a = [to_polars(x, target_year, as_of) for x in node.args]
    if f == "round":
        digits = node.args[1].value if len(node.args) == 2 and isinstance(node.args[1], Literal) else 0
        if len(node.args) == 2 and not isinstance(node.args[1], Literal):
            raise ExpressionError("round(x, n): n must be a literal integer")
        return a[0].round(int(digits))  # type: ignore[arg-type]
    if f == "abs":
        return a[0].abs()
    if f == "floor":
        return a[0].floor()
    if f == "ceil":
        return a[0].ceil()
    if f == "min":
        return pl.min_horizontal(*a)
    if f == "max":
        return pl.max_horizontal(*a)
    if f == "int":
        return a[0].cast(pl.Int64)
    if f == "float":
        return a[0].cast(pl.Float64)
    if f == "str":
        return a[0].cast(pl.String)
    if f == "upper":
        return a[0].cast(pl.String).str.to_uppercase()
    if f == "lower":
        return a[0].cast(pl.String).str.to_lowercase()
    if f == "len":
        return a[0].cast(pl.String).str.len_chars().cast(pl.Int64)
    if f == "substr":
        return a[0].cast(pl.String).str.slice(a[1], a[2] if len(a) == 3 else None)
    if f == "concat":
        return pl.concat_str([x.cast(pl.String) for x in a])
    if f == "year":
        return a[0].dt.year().cast(pl.Int64)
    if f == "month":
        return a[0].dt.month().cast(pl.Int64)
    if f == "day":
        return a[0].dt.day().cast(pl.Int64)
    if f == "add_days":
        return a[0] + pl.duration(days=a[1])
    if f == "days_between":
        return (a[1] - a[0]).dt.total_days().cast(pl.Int64)
    if f == "if":
        return pl.when(a[0]).then(a[1]).otherwise(a[2])
    if f == "coalesce":
        return pl.coalesce(a)
    raise ExpressionError(f"unknown function {f!r}")  # unreachable: parse() whitelists
