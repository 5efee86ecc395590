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

Bounds (:mod:`worldforge.spec.limits`): an expression has at most ``MAX_EXPR_CHARS`` characters
and nests at most ``MAX_EXPR_DEPTH`` levels (parentheses, calls, operators); number literals
stay within ``MAX_ABS_NUMBER``. :func:`infer_type` type-checks an AST against the column types
of a spec before anything is generated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Union

import polars as pl

from worldforge.errors import ExpressionError
from worldforge.spec.dates import resolve_date
from worldforge.spec.limits import MAX_ABS_NUMBER, MAX_EXPR_CHARS, MAX_EXPR_DEPTH, MAX_STRING_CHARS

__all__ = ["Node", "parse", "columns_of", "to_polars", "infer_type", "unparse", "FUNCTIONS", "TYPES"]


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
        self.depth = 0

    def enter(self) -> None:
        """One level deeper (a parenthesis, a call, a prefix operator); raise past the limit."""
        self.depth += 1
        if self.depth > MAX_EXPR_DEPTH:
            raise ExpressionError(f"expression nests more than {MAX_EXPR_DEPTH} levels deep: {_short(self.text)}")

    def peek(self) -> tuple[str, str, int]:
        """The current token without consuming it."""
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        """Consume and return the current token."""
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        """Consume a token that must be ``value``; a clear error otherwise."""
        kind, val, pos = self.take()
        if val != value or kind == "str":
            got = "end of expression" if kind == "end" else repr(val)
            raise ExpressionError(f"expected {value!r} at position {pos} in {self.text!r}, got {got}")

    def at(self, value: str) -> bool:
        """Whether the current token is the operator or name ``value``."""
        kind, val, _ = self.peek()
        return kind in ("op", "name") and val == value

    def parse(self) -> Node:
        """The whole expression; trailing tokens are an error."""
        node = self.or_()
        kind, val, pos = self.peek()
        if kind != "end":
            raise ExpressionError(f"unexpected {val!r} at position {pos} in {self.text!r}")
        return node

    def or_(self) -> Node:
        """``a or b or ...``."""
        node = self.and_()
        while self.at("or"):
            self.take()
            node = Binary("or", node, self.and_())
        return node

    def and_(self) -> Node:
        """``a and b and ...``."""
        node = self.not_()
        while self.at("and"):
            self.take()
            node = Binary("and", node, self.not_())
        return node

    def not_(self) -> Node:
        """``not a`` (depth-limited)."""
        if self.at("not"):
            self.take()
            self.enter()
            node = Unary("not", self.not_())
            self.depth -= 1
            return node
        return self.cmp()

    def cmp(self) -> Node:
        """A comparison of two sums."""
        node = self.sum_()
        kind, val, _ = self.peek()
        if kind == "op" and val in ("==", "!=", "<", "<=", ">", ">="):
            self.take()
            node = Binary(val, node, self.sum_())
        return node

    def sum_(self) -> Node:
        """``a + b - c ...``."""
        node = self.product()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = Binary(op, node, self.product())
        return node

    def product(self) -> Node:
        """``a * b / c ...``."""
        node = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            op = self.take()[1]
            node = Binary(op, node, self.unary())
        return node

    def unary(self) -> Node:
        """A signed atom (depth-limited)."""
        if self.peek()[0] == "op" and self.peek()[1] == "-":
            self.take()
            self.enter()
            node = Unary("-", self.unary())
            self.depth -= 1
            return node
        return self.atom()

    def atom(self) -> Node:
        """A literal, a column reference, a call or a parenthesised expression (depth-limited)."""
        kind, val, pos = self.take()
        if kind == "num":
            number = float(val) if "." in val else int(val) if len(val) <= 20 else math.inf
            if not math.isfinite(number) or abs(number) > MAX_ABS_NUMBER:
                raise ExpressionError(f"number {_short(val, 30)} at position {pos} is too large (at most {MAX_ABS_NUMBER:.0e}) in {_short(self.text)}")
            return Literal(number)
        if kind == "str":
            body = val[1:-1]
            return Literal(re.sub(r"\\(.)", r"\1", body))
        if kind == "op" and val == "(":
            self.enter()
            node = self.or_()
            self.expect(")")
            self.depth -= 1
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
        """A function call with its arguments."""
        if name not in FUNCTIONS:
            raise ExpressionError(
                f"unknown function {name!r} at position {pos} in {self.text!r}; "
                f"available: {', '.join(sorted(FUNCTIONS))}"
            )
        self.expect("(")
        self.enter()
        args: list[Node] = []
        if not self.at(")"):
            args.append(self.or_())
            while self.at(","):
                self.take()
                args.append(self.or_())
        self.expect(")")
        self.depth -= 1
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
    if len(text) > MAX_EXPR_CHARS:
        raise ExpressionError(f"expression has {len(text)} characters, more than {MAX_EXPR_CHARS}: {_short(text)}")
    node = _Parser(text).parse()
    if _depth(node) > MAX_EXPR_DEPTH:
        raise ExpressionError(f"expression nests more than {MAX_EXPR_DEPTH} levels deep: {_short(text)}")
    return node


def _short(text: str, n: int = 60) -> str:
    """``text`` quoted, cut to about ``n`` characters (messages stay one readable line)."""
    return repr(text) if len(text) <= n else repr(text[:n]) + f"... ({len(text)} characters)"


def _depth(node: Node) -> int:
    """Height of an AST, computed without recursion (left-leaning ``1+1+...`` chains are deep)."""
    best = 0
    stack: list[tuple[Node, int]] = [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        if best > MAX_EXPR_DEPTH:
            return best
        if isinstance(n, Unary):
            stack.append((n.operand, d + 1))
        elif isinstance(n, Binary):
            stack.extend([(n.left, d + 1), (n.right, d + 1)])
        elif isinstance(n, Call):
            stack.extend((a, d + 1) for a in n.args)
    return best


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


_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


def _is_not(node: Node) -> bool:
    return isinstance(node, Unary) and node.op == "not"


def unparse(node: Node) -> str:
    """An AST written back as expression text (fully parenthesised where precedence needs it)."""
    if isinstance(node, Literal):
        v = node.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
        if isinstance(v, float) and math.isfinite(v):  # positional: the grammar has no exponent (1e-05)
            text = format(Decimal(repr(v)), "f")
            return text if "." in text else text + ".0"
        return repr(v)
    if isinstance(node, Column):
        return node.name
    if isinstance(node, Unary):
        inner = unparse(node.operand)
        if isinstance(node.operand, Binary) or (node.op == "-" and _is_not(node.operand)):
            inner = f"({inner})"
        return f"not {inner}" if node.op == "not" else f"-{inner}"
    if isinstance(node, Binary):
        parts = []
        for side in (node.left, node.right):
            text = unparse(side)
            if isinstance(side, Binary) and _PREC[side.op] <= _PREC[node.op]:  # always safe, sometimes verbose
                text = f"({text})"
            elif _is_not(side) and node.op not in ("and", "or"):  # ``not`` binds looser than comparisons and arithmetic
                text = f"({text})"
            parts.append(text)
        return f"{parts[0]} {node.op} {parts[1]}"
    assert isinstance(node, Call)
    return f"{node.func}({', '.join(unparse(a) for a in node.args)})"


TYPES = ("int", "float", "str", "bool", "date", "null", "any")
"""Value types of the expression language: ``null`` is the literal ``null``; ``any`` is not known
before generation (Faker columns) and passes every check."""

_NUMERIC = {"int", "float"}


class _TypeChecker:
    def __init__(self, types: Mapping[str, str], text: str):
        self.types = types
        self.text = text

    def fail(self, node: Node, msg: str) -> ExpressionError:
        """Raise a spec error for this expression."""
        return ExpressionError(f"{msg} in {_short(unparse(node))}" + ("" if unparse(node) == self.text else f" (in {_short(self.text)})"))

    def want(self, node: Node, t: str, allowed: set[str], what: str) -> None:
        """Check that a type is one of ``allowed``."""
        if t not in allowed and t not in ("any", "null"):
            raise self.fail(node, f"{what} must be {' or '.join(sorted(allowed))}, not {t}")

    def unify(self, node: Node, ts: list[str], what: str) -> str:
        """The common type of two branches (null joins anything)."""
        known = [t for t in ts if t not in ("any", "null")]
        if not known:
            return "any" if "any" in ts else "null"
        if all(t in _NUMERIC for t in known):
            out = "float" if "float" in known else "int"
        elif len(set(known)) == 1:
            out = known[0]
        else:
            raise self.fail(node, f"{what} mix {' and '.join(sorted(set(known)))} values")
        return "any" if "any" in ts else out

    def infer(self, node: Node) -> str:
        """The type of an expression node."""
        if isinstance(node, Literal):
            v = node.value
            if v is None:
                return "null"
            if isinstance(v, bool):
                return "bool"
            if isinstance(v, int):
                return "int"
            if isinstance(v, float):
                return "float"
            if len(v) > MAX_STRING_CHARS:  # type: ignore[arg-type]
                raise self.fail(node, f"a string literal is longer than {MAX_STRING_CHARS} characters")
            return "str"
        if isinstance(node, Column):
            return self.types.get(node.name, "any")
        if isinstance(node, Unary):
            t = self.infer(node.operand)
            if node.op == "not":
                self.want(node, t, {"bool"}, "the operand of 'not'")
                return "bool"
            self.want(node, t, _NUMERIC, "the operand of '-'")
            return t
        if isinstance(node, Binary):
            lt, rt = self.infer(node.left), self.infer(node.right)
            if node.op in ("and", "or"):
                self.want(node, lt, {"bool"}, f"each side of '{node.op}'")
                self.want(node, rt, {"bool"}, f"each side of '{node.op}'")
                return "bool"
            if node.op in ("==", "!=", "<", "<=", ">", ">="):
                self.unify(node, [lt, rt], f"the sides of '{node.op}'")
                return "bool"
            hint = {"str": " (use concat() for strings)", "date": " (use add_days() or days_between() for dates)"}
            for t in (lt, rt):
                if t not in _NUMERIC and t not in ("any", "null"):
                    raise self.fail(node, f"arithmetic '{node.op}' needs numbers, not {t}{hint.get(t, '')}")
            if "any" in (lt, rt):
                return "any"
            if lt == rt == "null":
                return "null"
            return "float" if node.op == "/" or "float" in (lt, rt) else "int"
        assert isinstance(node, Call)
        return self.call(node)

    def call(self, node: Call) -> str:
        """The type of a function call, its arguments checked."""
        f = node.func
        if f == "date" or f == "as_of":
            return "date"
        ts = [self.infer(a) for a in node.args]
        if f == "round":
            self.want(node, ts[0], _NUMERIC, "round()'s first argument")
            if len(node.args) == 2:
                n = node.args[1]
                if not (isinstance(n, Literal) and type(n.value) is int and 0 <= n.value <= 12):  # noqa: E721
                    raise self.fail(node, "round(x, n): n must be a whole number from 0 to 12")
            return ts[0]
        if f in ("abs", "floor", "ceil"):
            self.want(node, ts[0], _NUMERIC, f"{f}()'s argument")
            return ts[0]
        if f in ("min", "max"):
            for t in ts:
                self.want(node, t, _NUMERIC | {"date"}, f"{f}()'s arguments")
            return self.unify(node, ts, f"{f}()'s arguments")
        if f in ("int", "float", "str"):
            return f
        if f in ("upper", "lower", "concat"):
            return "str"
        if f == "len":
            return "int"
        if f == "substr":
            for a, t in zip(node.args[1:], ts[1:]):
                self.want(node, t, {"int"}, "substr()'s start and length")
            if len(node.args) == 3 and isinstance(node.args[2], Literal) and isinstance(node.args[2].value, int) and node.args[2].value < 0:
                raise self.fail(node, "substr()'s length must not be negative")
            return "str"
        if f in ("year", "month", "day"):
            self.want(node, ts[0], {"date"}, f"{f}()'s argument")
            return "int"
        if f == "add_days":
            self.want(node, ts[0], {"date"}, "add_days()'s first argument")
            self.want(node, ts[1], {"int"}, "add_days()'s day count")
            return "date"
        if f == "days_between":
            self.want(node, ts[0], {"date"}, "days_between()'s arguments")
            self.want(node, ts[1], {"date"}, "days_between()'s arguments")
            return "int"
        if f == "if":
            self.want(node, ts[0], {"bool"}, "if()'s condition")
            return self.unify(node, ts[1:], "if()'s branches")
        if f == "coalesce":
            return self.unify(node, ts, "coalesce()'s arguments")
        raise self.fail(node, f"unknown function {f!r}")  # pragma: no cover - parse() whitelists


def infer_type(node: Node, types: Mapping[str, str], text: str | None = None) -> str:
    """The type (one of :data:`TYPES`) an expression yields, checking every operator and call on the way.

    Args:
        node: a parsed expression.
        types: the type of each column the expression may read (``"parent.col"`` for lookups);
            a missing name counts as ``any``.
        text: the expression as written, for messages.

    Raises:
        ExpressionError: an operator or function gets values of the wrong type (arithmetic on
            strings, ``and`` of numbers, comparing a date with a number, ``if`` branches of
            different types ...).
    """
    return _TypeChecker(types, text if text is not None else unparse(node)).infer(node)
