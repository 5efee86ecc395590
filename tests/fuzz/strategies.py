"""Hypothesis strategies shared by the fuzz properties: JSON values, expressions and mutations of real documents."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from worldforge.spec.expr import FUNCTIONS

# Values that sit on or past a limit (worldforge.spec.limits, 64-bit integers, float range).
EDGE_VALUES: list[Any] = [
    0, 1, -1, 2**63, -(2**63) - 1, 10**15, 10**16, 10**30, 1e308, -1e308, 1e-300, 0.5, "", "x", "Y-13-40",
    "x" * 10_001, True, False, None, [], {}, [None], {"": None}, "\ud800",
]

edge_values = st.sampled_from(EDGE_VALUES).map(copy.deepcopy)
"""One of :data:`EDGE_VALUES`, a fresh copy (a mutation that edits it must not edit the list)."""

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-(2**64), 2**64),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30), edge_values,
)
"""Scalars a JSON (or YAML) document can hold, with the edge values above mixed in."""

json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
"""Any JSON value, nested a few levels."""


def paths(node: Any, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    """Every ``(path, value)`` below a parsed document, in document order (not the root itself)."""
    out: list[tuple[tuple, Any]] = []
    stack = [(prefix, node)]
    while stack:
        here, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
        children = [(here + (k,), v) for k, v in items]
        out.extend(children)
        stack.extend(reversed(children))
    return out


@st.composite
def mutated(draw: st.DrawFn, doc: Any, keys: list[str] = (), scalars: st.SearchStrategy = json_values, most: int = 3) -> Any:
    """``doc`` (deep-copied) with 1–``most`` edits: a value replaced, a key or item deleted, a key added,
    a list emptied or a subtree copied elsewhere. ``keys`` are field names worth adding (a format's own)."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, most))):
        found = paths(doc)
        if not found:
            return copy.deepcopy(draw(scalars))
        path, value = found[draw(st.integers(0, len(found) - 1))]
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "replace", "delete", "add", "empty", "graft"]))
        if op == "replace":
            parent[path[-1]] = copy.deepcopy(draw(scalars))
        elif op == "delete":
            del parent[path[-1]]
        elif op == "add" and isinstance(value, dict):
            value[draw(st.sampled_from(list(keys) or ["x"]) | st.text(max_size=8))] = copy.deepcopy(draw(scalars))
        elif op == "empty" and isinstance(value, (dict, list)):
            parent[path[-1]] = type(value)()
        elif op == "graft":
            _, other = found[draw(st.integers(0, len(found) - 1))]
            parent[path[-1]] = copy.deepcopy(other)
        else:
            parent[path[-1]] = copy.deepcopy(draw(scalars))
    return doc


@st.composite
def text_edits(draw: st.DrawFn, text: str, inserts: list[str] = ()) -> str:
    """``text`` with 1–3 character-level edits: a slice deleted, duplicated or replaced by noise or by one of ``inserts``."""
    for _ in range(draw(st.integers(1, 3))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 200)))
        op = draw(st.sampled_from(["delete", "duplicate", "insert", "truncate"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif op == "truncate":
            text = text[:i]
        else:
            noise = draw(st.sampled_from(list(inserts) or [""]) | st.text(max_size=12))
            text = text[:i] + noise + text[j:]
    return text


# ---- expressions ------------------------------------------------------------------------------

_OPERATORS = ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"]


def _number(n: int | float) -> str:
    return str(n) if isinstance(n, int) else format(n, "f").rstrip("0") or "0."


def _quoted(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def expression_atoms(columns: list[str]) -> st.SearchStrategy[str]:
    """Literals, column references (``columns``, some unknown) and the nullary calls of the expression language."""
    return st.one_of(
        st.integers(0, 10**16).map(str),
        st.floats(0, 1e16, allow_nan=False).map(_number),
        st.text(max_size=8).map(_quoted),
        st.sampled_from(["true", "false", "null", "as_of()", "date('Y-06-30')", "date('2029-02-28')", "date('Y+1000-01-01')"]),
        st.sampled_from(columns or ["x"]),
        st.sampled_from(["unknown_column", "brands.name", "no_table.col"]),
    )


def expressions(columns: list[str] = (), max_leaves: int = 12) -> st.SearchStrategy[str]:
    """Expression text built from the grammar (mostly well-formed; the checks are the parser's and type checker's)."""
    def grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(_OPERATORS), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
            inner.map(lambda s: f"({s})"),
            inner.map(lambda s: f"-{s}"),
            inner.map(lambda s: f"not {s}"),
            st.tuples(st.sampled_from(sorted(FUNCTIONS)), st.lists(inner, max_size=4)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        )
    return st.recursive(expression_atoms(list(columns)), grow, max_leaves=max_leaves)


expression_noise = st.lists(
    st.sampled_from(list("()+-*/%<>=!,.'\"\\ _aeiorntdx0129") + ["not ", " and ", " or ", "round(", "if(", "date(", "1e5", "\n"]), max_size=60,
).map("".join)
"""Token soup: characters and words of the expression language in any order."""


def typed_expressions(columns: dict[str, str]) -> st.SearchStrategy[str]:
    """Expression text that is mostly well typed, over ``columns`` (``{name: type}``), so that it
    reaches evaluation: arithmetic on numbers (huge ones and zeros included), string functions on
    strings, day arithmetic on dates, comparisons and logic on their results."""
    def cols(t: str) -> list[str]:
        return [c for c, ct in columns.items() if ct == t] or ["null"]

    base = {
        "int": st.one_of(st.sampled_from(cols("int")), st.sampled_from(["0", "1", "-1", "12", "1000000000000000", "-1000000000000000"])),
        "float": st.one_of(st.sampled_from(cols("float")), st.sampled_from(["0.0", "0.5", "1000000000000000.0", "0.000001"])),
        "str": st.one_of(st.sampled_from(cols("str")), st.text(max_size=6).map(_quoted)),
        "date": st.sampled_from([*cols("date"), "as_of()", "date('Y-01-01')", "date('0001-01-01')", "date('9999-12-31')"]),
    }

    def grow(kind: str, depth: int) -> st.SearchStrategy[str]:
        if depth == 0:
            return base["float" if kind == "num" else kind] if kind != "bool" else st.sampled_from(["true", "false"])
        sub = lambda k: st.deferred(lambda: grow(k, depth - 1))  # noqa: E731
        num = st.one_of(sub("int"), sub("float"))
        if kind in ("int", "float", "num"):
            ops = st.sampled_from(["+", "-", "*", "/", "%"])
            options = [
                base["int"], base["float"],
                st.tuples(num, ops, num).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
                st.tuples(st.sampled_from(["abs", "floor", "ceil", "int", "float", "-"]), num).map(lambda t: f"{t[0]}({t[1]})"),
                st.tuples(num, st.integers(0, 12)).map(lambda t: f"round({t[0]}, {t[1]})"),
                st.tuples(st.sampled_from(["min", "max"]), num, num).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
                st.tuples(st.sampled_from(["year", "month", "day"]), sub("date")).map(lambda t: f"{t[0]}({t[1]})"),
                st.tuples(sub("date"), sub("date")).map(lambda t: f"days_between({t[0]}, {t[1]})"),
                sub("str").map(lambda s: f"len({s})"),
                sub("str").map(lambda s: f"int({s})"),
                st.tuples(sub("bool"), num, num).map(lambda t: f"if({t[0]}, {t[1]}, {t[2]})"),
            ]
            return st.one_of(options)
        if kind == "str":
            return st.one_of(
                base["str"],
                st.tuples(st.sampled_from(["upper", "lower", "str"]), sub("str") | num).map(lambda t: f"{t[0]}({t[1]})"),
                st.lists(sub("str") | num, min_size=1, max_size=4).map(lambda xs: f"concat({', '.join(xs)})"),
                st.tuples(sub("str"), sub("int"), st.none() | sub("int")).map(lambda t: f"substr({t[0]}, {t[1]}" + (f", {t[2]})" if t[2] else ")")),
                st.tuples(sub("str"), sub("str")).map(lambda t: f"coalesce({t[0]}, {t[1]})"),
            )
        if kind == "date":
            return st.one_of(
                base["date"],
                st.tuples(sub("date"), sub("int")).map(lambda t: f"add_days({t[0]}, {t[1]})"),
                st.tuples(st.sampled_from(["min", "max"]), sub("date"), sub("date")).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
            )
        assert kind == "bool"
        cmp = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
        same = st.sampled_from(["num", "str", "date"]).flatmap(lambda k: st.tuples(sub(k), cmp, sub(k)))
        return st.one_of(
            same.map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            st.tuples(sub("bool"), st.sampled_from(["and", "or"]), sub("bool")).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
            sub("bool").map(lambda s: f"not {s}"),
        )

    return st.integers(0, 2).flatmap(lambda depth: st.sampled_from(["num", "str", "date", "bool"]).flatmap(lambda k: grow(k, depth)))
