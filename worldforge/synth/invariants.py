"""Invariants of a generated world.

:func:`check_world` re-reads the tables (from memory or from DuckDB) and reports every
violation instead of stopping at the first one, so a user sees the whole list:

* ``row_budget``   — total rows outside :data:`~worldforge.spec.models.ROW_BUDGET`;
* ``pk_null`` / ``pk_unique`` — primary keys must be present and unique;
* ``fk_unresolved`` — a reference value that is no primary key of its parent;
* ``cardinality``  — a parent with fewer or more children than the reference allows (a null reference,
  ``null_share``, is no child of any parent);
* ``hierarchy_cycle`` / ``hierarchy`` — a self-reference must draw a forest: no row its own ancestor, within
  the declared ``max_depth``, ``max_children`` and ``roots``;
* ``unique`` / ``range`` / ``monotone`` / ``check`` / ``not_after_as_of`` — the table's
  declared constraints (the last: no row refers to the future of the world's ``as_of``).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.dates import resolve_date

__all__ = ["Violation", "check_world"]


@dataclass(frozen=True)
class Violation:
    """One broken invariant.

    Attributes:
        table: the table (``"*"`` for world-level checks).
        check: the invariant's name (see the module docstring).
        detail: what is wrong, in words.
        rows: how many rows break it.
        example: the primary key of one offending row, when there is one.
    """

    table: str
    check: str
    detail: str
    rows: int = 0
    example: str | None = None

    def __str__(self) -> str:
        ex = f" (e.g. {self.example})" if self.example is not None else ""
        return f"{self.table}: [{self.check}] {self.detail}{ex}"


def _with_parents(spec: M.WorldSpec, tname: str, tables: dict[str, pl.DataFrame], names: set[str]) -> pl.DataFrame:
    """The table with ``parent.column`` lookups joined in as ``__parent__column``."""
    df = tables[tname]
    table = spec.tables[tname]
    for name in sorted(n for n in names if "." in n):
        parent, pcol = name.split(".", 1)
        ref = next(r for r, c in table.references.items() if c.parent == parent)
        ppk = spec.tables[parent].primary_key
        right = tables[parent].select(pl.col(ppk).alias(ref), pl.col(pcol).alias(E.column_ref(name)))
        df = df.join(right, on=ref, how="left", maintain_order="left")
    return df


def _bound(v: float | str | None, year: int):
    if isinstance(v, str):
        return resolve_date(v, year)
    return v


def check_world(spec: M.WorldSpec, tables: dict[str, pl.DataFrame]) -> list[Violation]:
    """Check a world's tables against its spec.

    Args:
        spec: the spec the world was generated from.
        tables: ``{table_name: DataFrame}``, as from :func:`~worldforge.synth.build_world`
            or read back from DuckDB.

    Returns:
        Every violation found; an empty list means the world is consistent.

    Raises:
        GenerationError: a constraint cannot be evaluated on the tables (the spec's load-time
            type checks make this a backstop).
    """
    out: list[Violation] = []
    missing = [t for t in spec.tables if t not in tables]
    for t in missing:
        out.append(Violation(t, "missing_table", "the spec declares this table but the world has none"))
    if missing:
        return out

    total = sum(tables[t].height for t in spec.tables)
    lo, hi = M.ROW_BUDGET
    if not lo <= total <= hi:
        out.append(Violation("*", "row_budget", f"{total} rows in total, expected {lo}–{hi}", total))

    for tname, table in spec.tables.items():
        df = tables[tname]
        pk = table.primary_key
        key = df[pk]
        n_null = key.null_count()
        if n_null:
            out.append(Violation(tname, "pk_null", f"primary key '{pk}' is null in {n_null} rows", n_null))
        dup = df.group_by(pk).len().filter(pl.col("len") > 1)
        if dup.height:
            out.append(Violation(tname, "pk_unique", f"primary key '{pk}' repeats", int(dup["len"].sum()), str(dup[pk][0])))

        for ref_name, ref in table.references.items():
            parent = spec.tables[ref.parent]
            pkeys = tables[ref.parent][parent.primary_key]
            dangling = df.filter(pl.col(ref_name).is_not_null() & ~pl.col(ref_name).is_in(pkeys.implode()))
            if dangling.height:
                out.append(Violation(
                    tname, "fk_unresolved",
                    f"'{ref_name}' values not found in {ref.parent}.{parent.primary_key}",
                    dangling.height, str(dangling[pk][0]),
                ))
            if ref.cardinality is not None:
                counts = (
                    pl.DataFrame({"k": pkeys})
                    .join(df.group_by(ref_name).len().rename({ref_name: "k"}), on="k", how="left")
                    .with_columns(pl.col("len").fill_null(0))
                )
                c = ref.cardinality
                bad = counts.filter((pl.col("len") < c.min) | (pl.col("len") > c.max))
                if bad.height:
                    out.append(Violation(
                        tname, "cardinality",
                        f"{ref.parent} rows with children outside {c.min}–{c.max} via '{ref_name}'",
                        bad.height, f"{ref.parent} {bad['k'][0]} has {bad['len'][0]}",
                    ))

            if ref.parent == tname:
                out.extend(_check_hierarchy(tname, df, pk, ref_name, ref))

        for i, con in enumerate(table.constraints):
            try:
                out.extend(_check_constraint(spec, tname, tables, con))
            except (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError, TypeError, OverflowError) as exc:
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise GenerationError(
                    f"world '{spec.world}', tables.{tname}.constraints.{i} ({con.kind}) cannot be checked: {detail[:300]}"
                ) from None
    return out


def _check_hierarchy(tname: str, df: pl.DataFrame, pk: str, ref_name: str, ref: M.ReferenceColumn) -> list[Violation]:
    """A self-reference must draw a forest: no row is its own ancestor (``hierarchy_cycle``), and the tree keeps
    its declared bounds (``hierarchy``: depth, children per row, number of roots)."""
    keys = df[pk].to_list()
    up = dict(zip(keys, df[ref_name].to_list()))
    out: list[Violation] = []
    depth: dict = {}
    cyclic: list = []
    for k in keys:
        path, cur = [], k
        while cur is not None and cur not in depth and cur in up:
            if cur in path:  # a cycle: every row on it (and below it) has no root
                cyclic.append(cur)
                for p in path:
                    depth[p] = None
                break
            path.append(cur)
            cur = up[cur]
        else:
            base = -1 if cur is None or cur not in up else depth[cur]
            for p in reversed(path):
                base = None if base is None else base + 1
                depth[p] = base
    if cyclic:
        out.append(Violation(tname, "hierarchy_cycle", f"'{ref_name}' goes round in a cycle (a row is its own ancestor)",
                             sum(1 for d in depth.values() if d is None), str(cyclic[0])))
    h = ref.hierarchy or M.Hierarchy()
    if h.max_depth is not None:
        deep = [k for k in keys if depth.get(k) is not None and depth[k] > h.max_depth]
        if deep:
            out.append(Violation(tname, "hierarchy", f"rows more than max_depth {h.max_depth} hops below their root via '{ref_name}'",
                                 len(deep), f"{deep[0]} is {depth[deep[0]]} deep"))
    if h.max_children is not None:
        kids = df.filter(pl.col(ref_name).is_not_null()).group_by(ref_name).len().filter(pl.col("len") > h.max_children)
        if kids.height:
            out.append(Violation(tname, "hierarchy", f"rows with more than max_children {h.max_children} children via '{ref_name}'",
                                 kids.height, f"{kids[ref_name][0]} has {kids['len'][0]}"))
    roots = sum(1 for k in keys if up[k] is None)
    if h.roots is not None and roots != h.roots:
        out.append(Violation(tname, "hierarchy", f"{roots} roots (rows with no '{ref_name}'), expected {h.roots}", abs(roots - h.roots)))
    elif roots == 0 and keys:
        out.append(Violation(tname, "hierarchy", f"no root (every row has a '{ref_name}')", len(keys)))
    return out


def _check_constraint(spec: M.WorldSpec, tname: str, tables: dict[str, pl.DataFrame], con) -> list[Violation]:
    table = spec.tables[tname]
    pk = table.primary_key
    df = tables[tname]
    if isinstance(con, M.UniqueConstraint):
        dup = df.drop_nulls(con.columns).group_by(con.columns).len().filter(pl.col("len") > 1)  # nulls: no value to repeat
        if dup.height:
            ex = ", ".join(f"{c}={dup[c][0]}" for c in con.columns)
            return [Violation(tname, "unique", f"({', '.join(con.columns)}) repeats", int(dup["len"].sum()), ex)]
        return []
    if isinstance(con, M.RangeConstraint):
        col = pl.col(con.column)
        lo, hi = _bound(con.min, spec.target_year), _bound(con.max, spec.target_year)
        cond = pl.lit(False)
        if lo is not None:
            cond = cond | (col < lo)
        if hi is not None:
            cond = cond | (col > hi)
        bad = df.filter(cond)
        if bad.height:
            return [Violation(tname, "range", f"'{con.column}' outside [{lo}, {hi}]", bad.height, str(bad[pk][0]))]
        return []
    if isinstance(con, M.MonotoneConstraint):
        groups = [con.within] if con.within else []
        order = df.sort([*groups, con.rank])
        by = pl.col(con.by)
        prev = by.shift(1).over(groups) if groups else by.shift(1)
        worse = (by > prev) if con.descending else (by < prev)
        rank_prev = pl.col(con.rank).shift(1).over(groups) if groups else pl.col(con.rank).shift(1)
        bad = order.filter(worse | (pl.col(con.rank) == rank_prev))
        if bad.height:
            way = "descending" if con.descending else "ascending"
            return [Violation(
                tname, "monotone",
                f"'{con.rank}' does not order '{con.by}' {way} (or repeats a rank)" + (f" within '{con.within}'" if con.within else ""),
                bad.height, str(bad[pk][0]),
            )]
        return []
    if isinstance(con, M.NotAfterAsOfConstraint):
        as_of = spec.as_of_date
        out = []
        for col in con.columns:
            bad = df.filter(pl.col(col) > as_of)
            if bad.height:
                out.append(Violation(tname, "not_after_as_of", f"'{col}' lies after the as-of date {as_of}", bad.height, f"{pk}={bad[pk][0]}: {col}={bad[col][0]}"))
        return out
    assert isinstance(con, M.CheckConstraint)
    node = E.parse(con.expr)
    frame = _with_parents(spec, tname, tables, E.columns_of(node))
    bad = frame.filter(E.to_polars(node, spec.target_year, spec.as_of_date).not_())
    if bad.height:
        return [Violation(tname, "check", con.description or f"{con.expr!r} is false", bad.height, str(bad[pk][0]))]
    return []
