"""The state of one world's generation run: row counts, the columns drawn so far, lookups.

:class:`WorldState` holds what a run has generated and answers the questions every column kind
asks (:mod:`worldforge.synth.columns`): a column of this table or ``parent.column`` aligned to
its rows, a frame of the columns an expression reads, the random stream of one column. Every
column is checked as it is made (:meth:`WorldState.guarded`): one 64-bit polars column, strings
of at most ``MAX_STRING_CHARS``; any failure names the world, seed, table and column.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.limits import MAX_STRING_CHARS
from worldforge.spec.plan import hierarchy_roots, junction_references
from worldforge.synth import assign


def column_rng(seed: int, *names: str) -> random.Random:
    """A random stream for one named part of a world, independent of every other part."""
    digest = hashlib.sha256("\x1f".join([str(seed), *names]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def dtype_of(values: list[Any]) -> pl.DataType:
    """The polars dtype of drawn values: Boolean, Int64, Float64 (ints and floats), Date, Datetime, else String."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pl.String()
    if kinds == {bool}:
        return pl.Boolean()
    if kinds <= {int}:
        return pl.Int64()
    if kinds <= {int, float}:
        return pl.Float64()
    if kinds == {date}:
        return pl.Date()
    if kinds == {datetime}:
        return pl.Datetime("us")
    return pl.String()


class WorldState:
    """The mutable state of one world's generation run (:func:`~worldforge.synth.generate.build_world`).

    Attributes:
        spec: the validated spec.
        seed: the run's seed.
        n: rows per table, fixed by :meth:`count_rows` before any column is drawn.
        values: ``values[table][column]``: the column's values so far, one per row.
        dtypes: ``dtypes[table][column]``: each generated column's polars dtype.
        parent_index: ``(child table, reference) -> parent row of each child row`` for the driving reference, a
            junction's other cardinality references and a self-reference's tree (``None``: no parent).
        distinct_pairs: per junction table, the ``(driving, other)`` reference pairs that never repeat.
        check_exprs: ``(table, constraint index) -> (columns read, polars expression)`` of the
            ``enforce: resample`` checks, compiled once per run (:mod:`worldforge.synth.resample`).
    """

    def __init__(self, spec: M.WorldSpec, seed: int):
        self.spec = spec
        self.seed = seed
        self.n: dict[str, int] = {}
        self.values: dict[str, dict[str, list[Any]]] = defaultdict(dict)
        self.dtypes: dict[str, dict[str, pl.DataType]] = defaultdict(dict)
        # driving reference: child row -> parent row index
        self.parent_index: dict[tuple[str, str], list[int]] = {}
        self.check_exprs: dict[tuple[str, int], tuple[set[str], pl.Expr]] = {}
        # junction tables: (driving reference, other cardinality reference) pairs kept distinct
        self.distinct_pairs: dict[str, list[tuple[str, str]]] = {}

    def rng(self, *names: str) -> random.Random:
        """A random stream for one column, seeded by the world's seed and the names given."""
        return column_rng(self.seed, *names)

    def fail(self, table: str, column: str, msg: str) -> GenerationError:
        """The generation error for a column, naming world, seed, table and column (the caller raises it)."""
        return GenerationError(f"world '{self.spec.world}' (seed {self.seed}), {table}.{column}: {msg}")

    def frames(self, order: tuple[str, ...]) -> dict[str, pl.DataFrame]:
        """The generated tables, in ``order``, columns in declared order."""
        return {
            t: pl.DataFrame([pl.Series(c, self.values[t][c], dtype=self.dtypes[t][c]) for c in self.spec.tables[t].columns], height=self.n[t])
            for t in order
        }

    # ---- row counts -------------------------------------------------------------------
    def count_rows(self, table_order: tuple[str, ...]) -> None:
        """Fix how many rows each table gets (``self.n``): its fixed ``rows``, or children per parent within the cardinality."""
        for tname in table_order:
            table = self.spec.tables[tname]
            driving = table.driving_reference
            if driving is None:
                assert table.rows is not None
                self.n[tname] = table.rows
                continue
            ref_name, ref = driving
            card = ref.cardinality
            assert card is not None
            n_parents = self.n[ref.parent]
            rng = self.rng(tname, ref_name, "cardinality")
            if table.rows is None:
                counts = [rng.randint(card.min, card.max) for _ in range(n_parents)]
            else:
                counts = [card.min] * n_parents
                open_ = [i for i in range(n_parents) if counts[i] < card.max]
                for _ in range(table.rows - sum(counts)):
                    i = rng.randrange(len(open_))
                    counts[open_[i]] += 1
                    if counts[open_[i]] >= card.max:
                        open_.pop(i)
            junction = junction_references(table)
            if len(junction) > 1:
                counts = self._junction(tname, junction, counts)
            self.parent_index[(tname, ref_name)] = [p for p, c in enumerate(counts) for _ in range(c)]
            self.n[tname] = sum(counts)
            if len(junction) > 1:
                self._match(tname, junction, counts)
        for tname in table_order:
            for ref_name, ref in self.spec.tables[tname].references.items():
                if ref.parent == tname:
                    h = ref.hierarchy or M.Hierarchy()
                    n = self.n[tname]
                    try:
                        self.parent_index[(tname, ref_name)] = assign.tree(
                            n, hierarchy_roots(ref, n), h.max_depth, h.max_children, self.rng(tname, ref_name, "hierarchy"))
                    except ValueError as exc:
                        raise self.fail(tname, ref_name, str(exc)) from None

    def _junction(self, tname: str, junction: list[tuple[str, M.ReferenceColumn]], counts: list[int]) -> list[int]:
        """The driving reference's per-parent counts, nudged within its bounds so every other cardinality can take the total."""
        card = junction[0][1].cardinality
        assert card is not None
        lo, hi = 0, 10**9
        for _, ref in junction[1:]:
            c, m = ref.cardinality, self.n[ref.parent]
            assert c is not None
            lo, hi = max(lo, m * c.min), min(hi, m * c.max)
        if lo > hi or not (len(counts) * card.min <= hi and lo <= len(counts) * card.max):
            raise self.fail(tname, junction[1][0], f"no row count fits every cardinality ({lo}–{hi} against "
                                                    f"{len(counts) * card.min}–{len(counts) * card.max} from {junction[0][0]})")
        return assign.fit_total(counts, card.min, card.max, (lo, hi), self.rng(tname, junction[0][0], "junction"))

    def _match(self, tname: str, junction: list[tuple[str, M.ReferenceColumn]], counts: list[int]) -> None:
        """Each other cardinality reference: per-parent counts within its bounds, rows matched to parents with no
        (driving parent, other parent) pair repeated when that is possible (then kept so by :func:`assign.repair`)."""
        drive = junction[0][0]
        total = sum(counts)
        for ref_name, ref in junction[1:]:
            c = ref.cardinality
            assert c is not None
            m = self.n[ref.parent]
            cap = min(c.max, len(counts))  # distinct pairs: no other parent with more rows than driving parents
            distinct = c.min <= cap and total <= m * cap and max(counts, default=0) <= m
            rng = self.rng(tname, ref_name, "junction")
            other = assign.spread(total, m, c.min, cap if distinct else c.max, rng)
            self.parent_index[(tname, ref_name)] = assign.match(counts, other, rng)
            if distinct:
                self.distinct_pairs.setdefault(tname, []).append((drive, ref_name))

    # ---- lookups ------------------------------------------------------------------------
    def read(self, tname: str, name: str) -> list[Any]:
        """Values of a local column or of ``parent.column`` aligned to ``tname``'s rows."""
        if "." not in name:
            return self.values[tname][name]
        parent, pcol = name.split(".", 1)
        table = self.spec.tables[tname]
        ref = next(n for n, c in table.references.items() if c.parent == parent)
        pk = self.spec.tables[parent].primary_key
        by_key = dict(zip(self.values[parent][pk], self.values[parent][pcol]))
        return [by_key.get(k) for k in self.values[tname][ref]]

    def read_dtype(self, tname: str, name: str) -> pl.DataType:
        """The dtype of a column an expression reads: ``name`` of ``tname``, or ``parent.column``."""
        if "." not in name:
            return self.dtypes[tname][name]
        parent, pcol = name.split(".", 1)
        return self.dtypes[parent][pcol]

    def frame(self, tname: str, names: set[str]) -> pl.DataFrame:
        """A frame of the columns ``names`` an expression reads, one row per row of ``tname`` (no columns for a constant)."""
        if not names:  # a constant expression: a frame of the table's height and no columns
            return pl.DataFrame(height=self.n[tname])
        return pl.DataFrame(
            [pl.Series(E.column_ref(n), self.read(tname, n), dtype=self.read_dtype(tname, n)) for n in sorted(names)],
            height=self.n[tname],
        )


    # ---- making a column ----------------------------------------------------------------
    def guarded(self, tname: str, cname: str, make: Callable[[], tuple[list[Any], pl.DataType]]) -> tuple[list[Any], pl.DataType]:
        """``make()``'s ``(values, dtype)`` for a whole column, checked by :meth:`bounded`; a failure
        while making them is a :class:`GenerationError` naming the column."""
        n = self.n[tname]
        try:
            values, dtype = make()
            if len(values) != n:  # pragma: no cover - internal invariant
                raise self.fail(tname, cname, f"generated {len(values)} values for {n} rows")
            self.bounded(tname, cname, values, dtype)
        except GenerationError:
            raise
        except (ArithmeticError, ValueError, TypeError, pl.exceptions.PolarsError, pl.exceptions.PanicException) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise self.fail(tname, cname, f"cannot be generated: {detail[:300]}") from None
        return values, dtype

    def bounded(self, t: str, c: str, values: list[Any], dtype: pl.DataType) -> None:
        """Raise unless the values fit their column: one polars series of ``dtype`` (so 64-bit ints), bounded strings."""
        try:
            series = pl.Series(c, values, dtype=dtype)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as exc:
            raise self.fail(t, c, f"values do not fit one {dtype} column: {str(exc).splitlines()[0][:200]}") from None
        if series.dtype == pl.String and series.len():
            longest = series.str.len_chars().max()
            if longest is not None and longest > MAX_STRING_CHARS:  # type: ignore[operator]
                raise self.fail(t, c, f"a value has {longest} characters, more than {MAX_STRING_CHARS}")
