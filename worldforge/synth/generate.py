"""Seeded generation of world tables from a spec.

Every column draws from its own random stream, seeded by SHA-256 of
``(seed, table, column)``, so the same spec and seed give byte-identical tables on any
machine (with the same Faker version, which the warehouse records), and editing one column
leaves the others unchanged. Row counts are fixed first (parents before children, children
spread over parents within the reference's cardinality); columns are then generated in the
dependency order of :func:`worldforge.spec.plan.build_plan`. Rows that break a ``check`` with
``enforce: resample`` are then redrawn (:meth:`_World.resample`) from streams of their own, so a
spec without such checks gives exactly the tables it gave before they existed.

Whatever a spec asks for is bounded before generation (:mod:`worldforge.spec.limits`); as a
backstop, every generated column is checked here too (64-bit integers, strings of at most
``MAX_STRING_CHARS``), and any arithmetic, type or polars failure while generating a column
becomes a :class:`~worldforge.errors.GenerationError` that names the column.
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.dates import resolve_date
from worldforge.spec.limits import MAX_ABS_INT64, MAX_RESAMPLE_TRIES, MAX_STRING_CHARS
from worldforge.spec.plan import Plan, column_inputs, resample_columns, template_fields, validate_spec

log = logging.getLogger(__name__)

__all__ = ["BASE_KINDS", "build_world", "column_rng", "rederive"]

_UNIQUE_TRIES = 200


def column_rng(seed: int, *names: str) -> random.Random:
    """A random stream for one named part of a world, independent of every other part."""
    digest = hashlib.sha256("\x1f".join([str(seed), *names]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@lru_cache(maxsize=16)
def _faker(locale: str, weighted: bool):
    from faker import Faker

    return Faker(locale, use_weighting=weighted)


def _dtype_of(values: list[Any]) -> pl.DataType:
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


def _normalise(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, (str, int, float, bool, date)) or v is None:
        return v
    return str(v)


class _World:
    """Mutable state of one generation run."""

    def __init__(self, spec: M.WorldSpec, seed: int):
        self.spec = spec
        self.seed = seed
        self.n: dict[str, int] = {}
        self.values: dict[str, dict[str, list[Any]]] = defaultdict(dict)
        self.dtypes: dict[str, dict[str, pl.DataType]] = defaultdict(dict)
        # driving reference: child row -> parent row index
        self.parent_index: dict[tuple[str, str], list[int]] = {}
        # resample checks: (table, constraint index) -> (columns read, polars expression)
        self._check_exprs: dict[tuple[str, int], tuple[set[str], pl.Expr]] = {}

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
            self.parent_index[(tname, ref_name)] = [p for p, c in enumerate(counts) for _ in range(c)]
            self.n[tname] = sum(counts)

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

    # ---- columns --------------------------------------------------------------------------
    def generate(self, tname: str, cname: str) -> None:
        """Generate one column of a table with the handler of its kind."""
        col = self.spec.tables[tname].columns[cname]
        n = self.n[tname]
        rng = self.rng(tname, cname)
        handler = getattr(self, "_" + col.kind)
        values, dtype = self._guarded(tname, cname, lambda: handler(tname, cname, col, n, rng))
        self.values[tname][cname] = values
        self.dtypes[tname][cname] = dtype

    def _guarded(self, tname: str, cname: str, make) -> tuple[list[Any], pl.DataType]:
        """``make()``'s ``(values, dtype)`` for a whole column, checked by :meth:`_bounded`; a failure
        while making them is a :class:`GenerationError` naming the column."""
        n = self.n[tname]
        try:
            values, dtype = make()
            if len(values) != n:  # pragma: no cover - internal invariant
                raise self.fail(tname, cname, f"generated {len(values)} values for {n} rows")
            self._bounded(tname, cname, values, dtype)
        except GenerationError:
            raise
        except (ArithmeticError, ValueError, TypeError, pl.exceptions.PolarsError, pl.exceptions.PanicException) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise self.fail(tname, cname, f"cannot be generated: {detail[:300]}") from None
        return values, dtype

    # ---- checks with enforce: resample -------------------------------------------------
    def resample(self, plan: Plan) -> None:
        """Redraw the rows that break a ``check`` with ``enforce: resample`` until none does.

        Runs once every column is generated, so the first draw of every column is the one a spec
        without resample checks gives. Each round evaluates every resample check of the world, redraws the
        failing rows' redrawable inputs (:func:`~worldforge.spec.plan.resample_columns`) from a stream of
        their own per column, then recomputes every derived column downstream of them, in plan order (in
        any table: a parent's aggregates, a child's ``parent.column`` reads). At most
        :data:`~worldforge.spec.limits.MAX_RESAMPLE_TRIES` rounds.

        Raises:
            GenerationError: rows still break a check after the last round; it names the table, the
                check, how many rows and the bound.
        """
        checks = [
            (t, i, con) for t in plan.table_order for i, con in enumerate(self.spec.tables[t].constraints)
            if isinstance(con, M.CheckConstraint) and con.enforce == "resample"
        ]
        if not checks:
            return
        targets = {(t, i): resample_columns(self.spec, t, con.expr) for t, i, con in checks}
        redrawn = {(t, c) for (t, _), cols in targets.items() for c in cols}
        dependents = self._downstream(plan, redrawn)
        rngs: dict[tuple[str, str], random.Random] = {}
        by_table: dict[str, list[tuple[int, M.CheckConstraint]]] = defaultdict(list)
        for t, i, con in checks:
            by_table[t].append((i, con))
        for round_ in range(MAX_RESAMPLE_TRIES + 1):
            failing = {(t, i): bad for t, cons in by_table.items() for i, bad in self._failing_rows(t, cons).items()}
            if not any(failing.values()):
                return
            if round_ == MAX_RESAMPLE_TRIES:
                break
            rows: dict[tuple[str, str], set[int]] = defaultdict(set)
            for (t, i), bad in failing.items():
                for c in targets[(t, i)]:
                    rows[(t, c)].update(bad)
            for node in plan.column_order:  # a fixed order: the same seed redraws the same way
                if rows.get(node):
                    rng = rngs.setdefault(node, self.rng(*node, "resample"))
                    self._redraw(*node, sorted(rows[node]), rng)
            for node in dependents:
                self.generate(*node)
        problems = [
            f"table '{t}': check {con.expr!r} (tables.{t}.constraints.{i}, enforce: resample) still fails for "
            f"{len(failing[(t, i)])} of {self.n[t]} rows after {MAX_RESAMPLE_TRIES} redraws of {', '.join(targets[(t, i)])}"
            for t, i, con in checks if failing[(t, i)]
        ]
        if len(problems) > 3:
            problems[3:] = [f"{len(problems) - 3} more resample checks"]
        raise GenerationError(
            f"world '{self.spec.world}' (seed {self.seed}): " + "; ".join(problems)
            + f" (the bound is MAX_RESAMPLE_TRIES = {MAX_RESAMPLE_TRIES}); loosen the check or widen the columns it redraws"
        )

    def _downstream(self, plan: Plan, roots: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """The columns that read any of ``roots``, directly or not, in plan order (``roots`` left out)."""
        users: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for node in plan.column_order:
            for dep in column_inputs(self.spec, *node)[0]:
                users[dep].append(node)
        found: set[tuple[str, str]] = set()
        stack = list(roots)
        while stack:
            for user in users[stack.pop()]:
                if user not in found:
                    found.add(user)
                    stack.append(user)
        return [node for node in plan.column_order if node in found and node not in roots]

    def _failing_rows(self, t: str, checks: list[tuple[int, M.CheckConstraint]]) -> dict[int, list[int]]:
        """Per check (by its index in the table's constraints), the rows of ``t`` for which it is false
        (null, as in the final check, is not a failure). The checks are evaluated on one frame, at once."""
        errors = (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError, OverflowError, TypeError)

        def cannot(i: int, con: M.CheckConstraint, exc: Exception) -> GenerationError:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return GenerationError(
                f"world '{self.spec.world}' (seed {self.seed}), tables.{t}.constraints.{i}: check {con.expr!r} cannot be evaluated: {detail[:300]}"
            )

        exprs: dict[int, pl.Expr] = {}
        names: set[str] = set()
        for i, con in checks:
            if (t, i) not in self._check_exprs:  # parsed and compiled once per world
                node = E.parse(con.expr)
                try:
                    self._check_exprs[(t, i)] = (E.columns_of(node), E.to_polars(node, self.spec.target_year, self.spec.as_of_date).alias(f"__holds_{i}__"))
                except errors as exc:
                    raise cannot(i, con, exc) from None
            reads, exprs[i] = self._check_exprs[(t, i)]
            names |= reads
        frame = self.frame(t, names)
        try:
            holds = frame.with_columns(list(exprs.values()))
        except errors:
            for i, con in checks:  # name the check that cannot be evaluated
                try:
                    frame.with_columns(exprs[i])
                except errors as exc:
                    raise cannot(i, con, exc) from None
            raise  # pragma: no cover - each evaluates alone but not all together
        return {i: holds.get_column(f"__holds_{i}__").cast(pl.Boolean).not_().arg_true().to_list() for i in exprs}

    def _redraw(self, t: str, c: str, rows: list[int], rng: random.Random) -> None:
        """Draw new values of base column ``c`` for ``rows`` from its generator; the other rows keep theirs.

        A unique column (``unique: true``, or alone in a ``unique`` constraint) stays unique: a new value
        is none of the kept rows' values.
        """
        table = self.spec.tables[t]
        col = table.columns[c]
        old = self.values[t][c]
        chosen = set(rows)
        unique = getattr(col, "unique", False) or any(
            isinstance(con, M.UniqueConstraint) and con.columns == [c] for con in table.constraints
        )
        kept = {v for r, v in enumerate(old) if r not in chosen} if unique else set()

        def make() -> tuple[list[Any], pl.DataType]:
            if isinstance(col, M.FakerColumn):
                new, _ = self._faker(t, c, col, len(rows), rng, taken=kept)
            elif isinstance(col, M.ChoiceColumn) and unique:
                free = [k for k, v in enumerate(col.values) if v not in kept]
                pool = col.model_copy(update={
                    "values": [col.values[k] for k in free],
                    "weights": None if col.weights is None else [col.weights[k] for k in free],
                    "unique": True,
                })
                new, _ = self._choice(t, c, pool, len(rows), rng)
            else:
                new, _ = getattr(self, "_" + col.kind)(t, c, col, len(rows), rng)
            values = list(old)
            for r, v in zip(rows, new):
                values[r] = v
            return values, _dtype_of(values) if isinstance(col, M.FakerColumn) else self.dtypes[t][c]

        self.values[t][c], self.dtypes[t][c] = self._guarded(t, c, make)

    def _bounded(self, t: str, c: str, values: list[Any], dtype: pl.DataType) -> None:
        """Raise unless the values fit their column: one polars series of ``dtype`` (so 64-bit ints), bounded strings."""
        try:
            series = pl.Series(c, values, dtype=dtype)
        except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError) as exc:
            raise self.fail(t, c, f"values do not fit one {dtype} column: {str(exc).splitlines()[0][:200]}") from None
        if series.dtype == pl.String and series.len():
            longest = series.str.len_chars().max()
            if longest is not None and longest > MAX_STRING_CHARS:  # type: ignore[operator]
                raise self.fail(t, c, f"a value has {longest} characters, more than {MAX_STRING_CHARS}")

    def _sequence(self, t, c, col: M.SequenceColumn, n, rng):
        return [col.start + i * col.step for i in range(n)], pl.Int64()

    def _faker(self, t, c, col: M.FakerColumn, n, rng, taken: set[Any] | frozenset[Any] = frozenset()):
        fake = _faker(col.locale, col.weighted)
        fake.seed_instance(rng.getrandbits(64))
        if col.template is not None:
            template = col.template
            method = lambda: fake.parse(template)  # noqa: E731 - tokens validated as providers
        else:
            method = getattr(fake, col.provider)
        out: list[Any] = []
        seen: set[Any] = set(taken)  # a unique column's values so far (and those of rows a resample keeps)
        def draw() -> Any:
            v = _normalise(method(**col.args))
            if isinstance(v, str) and len(v) > MAX_STRING_CHARS:
                raise self.fail(t, c, f"Faker {col.provider or col.template!r} gave a value of {len(v)} characters, more than {MAX_STRING_CHARS}")
            return v

        try:
            for _ in range(n):
                v = draw()
                if col.unique:
                    tries = 0
                    while v in seen:
                        tries += 1
                        if tries > _UNIQUE_TRIES:
                            raise self.fail(t, c, f"Faker {col.provider or col.template!r} gave no new unique value after {_UNIQUE_TRIES} tries ({len(seen)} distinct so far)")
                        v = draw()
                    seen.add(v)
                out.append(v)
        except GenerationError:
            raise
        except TypeError as exc:
            raise self.fail(t, c, f"Faker provider '{col.provider}' rejected args {col.args}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a provider given hostile args may raise anything
            raise self.fail(t, c, f"Faker {col.provider or col.template!r} failed with args {col.args}: {type(exc).__name__}: {str(exc)[:200]}") from None
        return out, _dtype_of(out)

    def _choice(self, t, c, col: M.ChoiceColumn, n, rng):
        values = list(col.values)
        if col.unique:
            if n > len(values):
                raise self.fail(t, c, f"unique choice needs {n} values but the list has {len(values)}")
            if col.weights is None:
                out = rng.sample(values, n)
            else:  # weighted sampling without replacement (Efraimidis–Spirakis keys)
                keys = [(rng.random() ** (1.0 / w) if w > 0 else -1.0, i) for i, w in enumerate(col.weights)]
                picked = sorted(keys, reverse=True)[:n]
                if any(k < 0 for k, _ in picked):
                    raise self.fail(t, c, f"unique choice needs {n} values with positive weight")
                out = [values[i] for _, i in picked]
        else:
            out = rng.choices(values, weights=col.weights, k=n)
        return out, _dtype_of(values)

    def _number(self, t, c, col: M.NumberColumn, n, rng):
        def draw() -> float:
            d = col.distribution
            if d == "uniform":
                return rng.randint(int(math.ceil(col.min)), int(math.floor(col.max))) if col.dtype == "int" else rng.uniform(col.min, col.max)
            if d == "normal":
                return rng.normalvariate(col.mean, col.std)
            if d == "lognormal":
                return math.exp(rng.normalvariate(math.log(col.mean), col.std))
            if d == "triangular":
                return rng.triangular(col.min, col.max, col.mode if col.mode is not None else (col.min + col.max) / 2)
            return col.min + rng.expovariate(1.0 / col.mean)  # exponential

        out: list[Any] = []
        for _ in range(n):
            v = draw()
            for _retry in range(50):
                if col.min <= v <= col.max:
                    break
                v = draw()
            v = min(max(v, col.min), col.max)
            if col.dtype == "int":
                out.append(int(round(v)))
            else:
                out.append(round(v, col.decimals) if col.decimals is not None else v)
        return out, pl.Int64() if col.dtype == "int" else pl.Float64()

    def _date(self, t, c, col: M.DateColumn, n, rng):
        start = resolve_date(col.start, self.spec.target_year)
        end = resolve_date(col.end, self.spec.target_year)
        if end < start:
            raise self.fail(t, c, f"date window ends ({end}) before it starts ({start})")
        span = (end - start).days
        return [start + timedelta(days=rng.randint(0, span)) for _ in range(n)], pl.Date()

    def _format(self, t, c, col: M.FormatColumn, n, rng):
        import string

        pieces = list(string.Formatter().parse(col.template))
        data = {f: self.read(t, f) for f, _ in template_fields(col.template) if f != "n"}
        groups = self.read(t, col.counter_within) if col.counter_within else [None] * n
        counters: dict[Any, int] = defaultdict(lambda: col.start)
        out = []
        for i in range(n):
            counter = counters[groups[i]]
            counters[groups[i]] += 1
            parts = []
            for literal, field, spec, _ in pieces:
                parts.append(literal)
                if field is None:
                    continue
                value = counter if field == "n" else data[field][i]
                try:
                    parts.append(format(value, spec or ""))
                except (ValueError, TypeError) as exc:
                    raise self.fail(t, c, f"template field {{{field}:{spec}}} cannot format {value!r}: {exc}") from None
            out.append("".join(parts))
        return out, pl.String()

    def _reference(self, t, c, col: M.ReferenceColumn, n, rng):
        parent = self.spec.tables[col.parent]
        keys = self.values[col.parent][parent.primary_key]
        idx = self.parent_index.get((t, c))
        if idx is None:
            if not keys:
                raise self.fail(t, c, f"parent table '{col.parent}' has no rows")
            idx = [rng.randrange(len(keys)) for _ in range(n)]
        return [keys[i] for i in idx], self.dtypes[col.parent][parent.primary_key]

    def _derive(self, t, c, col: M.DeriveColumn, n, rng):
        node = E.parse(col.expr)
        frame = self.frame(t, E.columns_of(node))
        try:
            expr = E.to_polars(node, self.spec.target_year, self.spec.as_of_date)
            if col.dtype is not None:
                expr = expr.cast({"int": pl.Int64, "float": pl.Float64, "str": pl.String, "bool": pl.Boolean, "date": pl.Date}[col.dtype])
            s = frame.with_columns(expr.alias(c)).get_column(c)  # with_columns broadcasts a constant to every row
            return s.to_list(), s.dtype
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError, OverflowError, TypeError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise self.fail(t, c, f"expr {col.expr!r} cannot be evaluated: {detail[:300]}") from None

    def _groups(self, t: str, within: str | None, n: int) -> list[Any]:
        return self.read(t, within) if within else [None] * n

    def _rank(self, t, c, col: M.RankColumn, n, rng):
        vals = self.read(t, col.of)
        groups = self._groups(t, col.within, n)
        if any(v is None for v in vals):
            raise self.fail(t, c, f"cannot rank '{col.of}': it has nulls")
        sign = -1 if col.descending else 1
        if vals and isinstance(vals[0], date):
            vals = [v.toordinal() for v in vals]
        by_group: dict[Any, list[int]] = defaultdict(list)
        for i, g in enumerate(groups):
            by_group[g].append(i)
        out = [0] * n
        for rows in by_group.values():
            for r, i in enumerate(sorted(rows, key=lambda i: (sign * vals[i], i)), start=1):
                out[i] = r
        return out, pl.Int64()

    def _share(self, t, c, col: M.ShareColumn, n, rng):
        vals = self.read(t, col.of)
        groups = self._groups(t, col.within, n)
        totals: dict[Any, float] = defaultdict(float)
        for v, g in zip(vals, groups):
            totals[g] += v or 0
        scale = 100.0 if col.percent else 1.0
        out = [round(scale * (v or 0) / totals[g], col.decimals) if totals[g] else None for v, g in zip(vals, groups)]
        return out, pl.Float64()

    def _aggregate(self, t, c, col: M.AggregateColumn, n, rng):
        child = self.spec.tables[col.child]
        via = col.via or next(name for name, r in child.references.items() if r.parent == t)
        keys = self.values[col.child][via]
        vals = self.values[col.child][col.of] if col.of else [1] * len(keys)
        buckets: dict[Any, list[Any]] = defaultdict(list)
        for k, v in zip(keys, vals):
            if v is not None:
                buckets[k].append(v)
        pks = self.values[t][self.spec.tables[t].primary_key]
        out: list[Any] = []
        for pk in pks:
            b = buckets.get(pk, [])
            if col.fn == "count":
                out.append(len(b))
                continue
            if col.fn == "sum":
                v = sum(b)
            elif not b:
                v = None
            elif col.fn == "mean":
                v = sum(b) / len(b)
            else:
                v = min(b) if col.fn == "min" else max(b)
            if isinstance(v, float) and col.decimals is not None:
                v = round(v, col.decimals)
            out.append(v)
        if col.fn == "count":
            return out, pl.Int64()
        if col.fn == "mean":
            return [None if v is None else float(v) for v in out], pl.Float64()
        src = self.dtypes[col.child][col.of]  # type: ignore[index]
        if isinstance(src, pl.Int64) and col.fn in ("sum", "min", "max"):
            return out, pl.Int64()
        if isinstance(src, pl.Date):
            return out, pl.Date()
        return [None if v is None else float(v) for v in out], pl.Float64()


def build_world(spec: M.WorldSpec, seed: int | None = None) -> dict[str, pl.DataFrame]:
    """Generate the tables of a world.

    Args:
        spec: A validated world spec.
        seed: Overrides ``spec.seed``; different seeds give different worlds.

    Returns:
        ``{table_name: DataFrame}`` with parents before children and columns in the
        declared order; 300–500 rows in total.

    Raises:
        SpecError: the spec's cross-references are invalid.
        GenerationError: a valid spec cannot be realised (e.g. a unique Faker column runs
            out of values, an expression fails on the generated types, or rows still break a
            ``check`` with ``enforce: resample`` after ``MAX_RESAMPLE_TRIES`` redraws).
    """
    plan = validate_spec(spec)
    if seed is not None and not -MAX_ABS_INT64 <= seed <= MAX_ABS_INT64:
        raise GenerationError(f"seed {seed} does not fit 64 bits")
    world = _World(spec, spec.seed if seed is None else seed)
    world.count_rows(plan.table_order)
    for tname, cname in plan.column_order:
        world.generate(tname, cname)
    world.resample(plan)
    log.debug("built world %s seed=%s rows=%s", spec.world, world.seed, world.n)
    return world.frames(plan.table_order)


BASE_KINDS = frozenset({"sequence", "faker", "choice", "number", "date", "reference"})
"""Column kinds drawn at random; every other kind is derived from columns."""


def rederive(spec: M.WorldSpec, base: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Recompute every derived column (derive, format, rank, share, aggregate) from the
    base columns of ``base``, under ``spec`` (its ``target_year`` and ``as_of``).

    Used by scenarios: shift the base dates, then re-derive, so ages, durations, totals,
    shares and ranks stay consistent with the shifted world.
    """
    plan = validate_spec(spec)
    world = _World(spec, spec.seed)
    for tname in plan.table_order:
        frame = base[tname]
        world.n[tname] = frame.height
        for cname, col in spec.tables[tname].columns.items():
            if col.kind in BASE_KINDS:
                world.values[tname][cname] = frame[cname].to_list()
                world.dtypes[tname][cname] = frame.schema[cname]
    for tname, cname in plan.column_order:
        if spec.tables[tname].columns[cname].kind not in BASE_KINDS:
            world.generate(tname, cname)
    return world.frames(plan.table_order)
