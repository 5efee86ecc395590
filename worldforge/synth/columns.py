"""The column kinds of the spec language, one generator each, and the step that makes a column.

Each kind of :mod:`worldforge.spec.models` (``sequence``, ``faker``, ``choice``, ``number``,
``date``, ``format``, ``reference``, ``derive``, ``rank``, ``share``, ``aggregate``) has one
function here, ``(state, table, column, spec column, rows, rng) -> (values, dtype)``, registered
in :data:`COLUMN_KINDS` by its ``kind``; :func:`generate_column` runs the one a column declares
on its own random stream (:func:`~worldforge.synth.state.column_rng`). Base kinds
(:data:`BASE_KINDS`) draw at random; the others are derived from columns already made.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.dates import resolve_date
from worldforge.spec.limits import MAX_STRING_CHARS
from worldforge.spec.plan import round_to, template_fields, validate_spec
from worldforge.synth import assign
from worldforge.synth.state import WorldState, dtype_of

_UNIQUE_TRIES = 200

ColumnKind = Callable[..., tuple[list[Any], pl.DataType]]
"""``(state, table, column, spec column, rows, rng) -> (values, dtype)``."""


@lru_cache(maxsize=16)
def _faker_instance(locale: str, weighted: bool):
    from faker import Faker

    return Faker(locale, use_weighting=weighted)


def _normalise(v: Any) -> Any:
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, (str, int, float, bool, date)) or v is None:
        return v
    return str(v)


def sequence(w: WorldState, t, c, col: M.SequenceColumn, n, rng):
    """``start``, ``start + step``, ... (Int64)."""
    return [col.start + i * col.step for i in range(n)], pl.Int64()

def faker(w: WorldState, t, c, col: M.FakerColumn, n, rng, taken: set[Any] | frozenset[Any] = frozenset()):
    """Values of a Faker provider or template for the column's locale, seeded from ``rng``; a unique column draws again
    (at most 200 tries a value) until a value is new, none of ``taken`` (the rows a resample keeps)."""
    fake = _faker_instance(col.locale, col.weighted)
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
            raise w.fail(t, c, f"Faker {col.provider or col.template!r} gave a value of {len(v)} characters, more than {MAX_STRING_CHARS}")
        return v

    try:
        for _ in range(n):
            v = draw()
            if col.unique:
                tries = 0
                while v in seen:
                    tries += 1
                    if tries > _UNIQUE_TRIES:
                        raise w.fail(t, c, f"Faker {col.provider or col.template!r} gave no new unique value after {_UNIQUE_TRIES} tries ({len(seen)} distinct so far)")
                    v = draw()
                seen.add(v)
            out.append(v)
    except GenerationError:
        raise
    except TypeError as exc:
        raise w.fail(t, c, f"Faker provider '{col.provider}' rejected args {col.args}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a provider given hostile args may raise anything
        raise w.fail(t, c, f"Faker {col.provider or col.template!r} failed with args {col.args}: {type(exc).__name__}: {str(exc)[:200]}") from None
    return out, dtype_of(out)

def choice(w: WorldState, t, c, col: M.ChoiceColumn, n, rng):
    """Values drawn from the list (weighted when ``weights`` is given); a unique column samples without replacement
    (Efraimidis–Spirakis keys when weighted)."""
    values = list(col.values)
    if col.unique:
        if n > len(values):
            raise w.fail(t, c, f"unique choice needs {n} values but the list has {len(values)}")
        if col.weights is None:
            out = rng.sample(values, n)
        else:  # weighted sampling without replacement (Efraimidis–Spirakis keys)
            keys = [(rng.random() ** (1.0 / w) if w > 0 else -1.0, i) for i, w in enumerate(col.weights)]
            picked = sorted(keys, reverse=True)[:n]
            if any(k < 0 for k, _ in picked):
                raise w.fail(t, c, f"unique choice needs {n} values with positive weight")
            out = [values[i] for _, i in picked]
    else:
        out = rng.choices(values, weights=col.weights, k=n)
    return out, dtype_of(values)

def number(w: WorldState, t, c, col: M.NumberColumn, n, rng):
    """Numbers from the distribution (uniform, normal, lognormal, triangular, exponential), redrawn up to 50 times
    to land in ``[min, max]`` and clamped after; rounded to ints, or to ``decimals`` (when none is given, to two or as
    many as the bounds are written with: :func:`~worldforge.spec.plan.number_decimals`) (Float64 or Int64)."""
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
            out.append(round(v, col.decimals) if col.decimals is not None else round_to(v, validate_spec(w.spec).decimals.get((t, c))))
    return out, pl.Int64() if col.dtype == "int" else pl.Float64()

def date_column(w: WorldState, t, c, col: M.DateColumn, n, rng):
    """Dates uniform over the window (``start``/``end`` resolved against the target year) (Date)."""
    start = resolve_date(col.start, w.spec.target_year)
    end = resolve_date(col.end, w.spec.target_year)
    if end < start:
        raise w.fail(t, c, f"date window ends ({end}) before it starts ({start})")
    span = (end - start).days
    return [start + timedelta(days=rng.randint(0, span)) for _ in range(n)], pl.Date()

def format_column(w: WorldState, t, c, col: M.FormatColumn, n, rng):
    """Strings from the template: ``{column}`` fields of the row, ``{n}`` a counter (per ``counter_within`` group) (String)."""
    import string

    pieces = list(string.Formatter().parse(col.template))
    data = {f: w.read(t, f) for f, _ in template_fields(col.template) if f != "n"}
    groups = w.read(t, col.counter_within) if col.counter_within else [None] * n
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
                raise w.fail(t, c, f"template field {{{field}:{spec}}} cannot format {value!r}: {exc}") from None
        out.append("".join(parts))
    return out, pl.String()

def reference(w: WorldState, t, c, col: M.ReferenceColumn, n, rng):
    """Parent keys: the parent row fixed for each row when rows were counted (a driving or junction reference, a
    hierarchy; ``None``: no parent), else a uniformly random parent; a ``null_share`` of rows (drawn from a stream of
    its own) then holds null."""
    parent = w.spec.tables[col.parent]
    keys = w.values[col.parent][parent.primary_key]
    idx = w.parent_index.get((t, c))
    if idx is None:
        if not keys:
            raise w.fail(t, c, f"parent table '{col.parent}' has no rows")
        idx = [rng.randrange(len(keys)) for _ in range(n)]
        if col.null_share:
            empty = assign.null_rows(n, col.null_share, w.rng(t, c, "null"))
            idx = [None if r in empty else i for r, i in enumerate(idx)]
    return [None if i is None else keys[i] for i in idx], w.dtypes[col.parent][parent.primary_key]

def derive(w: WorldState, t, c, col: M.DeriveColumn, n, rng):
    """The expression evaluated over the row (and its parents' columns), cast to ``dtype`` when given; float values
    rounded to the decimals derived from the expression's inputs (:func:`~worldforge.spec.plan.column_decimals`)."""
    node = E.parse(col.expr)
    frame = w.frame(t, E.columns_of(node))
    try:
        expr = E.to_polars(node, w.spec.target_year, w.spec.as_of_date)
        if col.dtype is not None:
            expr = expr.cast({"int": pl.Int64, "float": pl.Float64, "str": pl.String, "bool": pl.Boolean, "date": pl.Date}[col.dtype])
        s = frame.with_columns(expr.alias(c)).get_column(c)  # with_columns broadcasts a constant to every row
        if s.dtype == pl.Float64:  # at the expression's precision: no float noise (0.1 * 3 is 0.3)
            places = validate_spec(w.spec).decimals.get((t, c))
            return [round_to(v, places) for v in s.to_list()], s.dtype
        return s.to_list(), s.dtype
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError, OverflowError, TypeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise w.fail(t, c, f"expr {col.expr!r} cannot be evaluated: {detail[:300]}") from None

def groups_of(w: WorldState, t: str, within: str | None, n: int) -> list[Any]:
    """The group of each row of ``t``: the column ``within`` (or ``parent.column``), or one group."""
    return w.read(t, within) if within else [None] * n

def rank(w: WorldState, t, c, col: M.RankColumn, n, rng):
    """1-based rank of ``of`` within each ``within`` group (descending when asked; ties by row order) (Int64)."""
    vals = w.read(t, col.of)
    groups = groups_of(w, t, col.within, n)
    if any(v is None for v in vals):
        raise w.fail(t, c, f"cannot rank '{col.of}': it has nulls")
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

def share(w: WorldState, t, c, col: M.ShareColumn, n, rng):
    """Each row's ``of`` over its group's total (times 100 with ``percent``), rounded to ``decimals`` (Float64)."""
    vals = w.read(t, col.of)
    groups = groups_of(w, t, col.within, n)
    totals: dict[Any, float] = defaultdict(float)
    for v, g in zip(vals, groups):
        totals[g] += v or 0
    scale = 100.0 if col.percent else 1.0
    out = [round(scale * (v or 0) / totals[g], col.decimals) if totals[g] else None for v, g in zip(vals, groups)]
    return out, pl.Float64()

def aggregate(w: WorldState, t, c, col: M.AggregateColumn, n, rng):
    """Per row, the count, sum, mean, min or max of ``of`` over its child rows (``via`` the child's reference); float
    results rounded to ``decimals``, or when none is declared to the decimals derived from the source column's
    (:func:`~worldforge.spec.plan.column_decimals`: a mean two more, a sum, min or max the same)."""
    child = w.spec.tables[col.child]
    via = col.via or next(name for name, r in child.references.items() if r.parent == t)
    keys = w.values[col.child][via]
    vals = w.values[col.child][col.of] if col.of else [1] * len(keys)
    buckets: dict[Any, list[Any]] = defaultdict(list)
    for k, v in zip(keys, vals):
        if v is not None:
            buckets[k].append(v)
    pks = w.values[t][w.spec.tables[t].primary_key]
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
        if isinstance(v, float):  # at the declared or derived decimals: a mean or sum of floats carries no noise
            v = round(v, col.decimals) if col.decimals is not None else round_to(v, validate_spec(w.spec).decimals.get((t, c)))
        out.append(v)
    if col.fn == "count":
        return out, pl.Int64()
    if col.fn == "mean":
        return [None if v is None else float(v) for v in out], pl.Float64()
    src = w.dtypes[col.child][col.of]  # type: ignore[index]
    if isinstance(src, pl.Int64) and col.fn in ("sum", "min", "max"):
        return out, pl.Int64()
    if isinstance(src, pl.Date):
        return out, pl.Date()
    return [None if v is None else float(v) for v in out], pl.Float64()


COLUMN_KINDS: dict[str, ColumnKind] = {
    "sequence": sequence, "faker": faker, "choice": choice, "number": number, "date": date_column,
    "format": format_column, "reference": reference, "derive": derive, "rank": rank, "share": share,
    "aggregate": aggregate,
}
"""The generator of each column kind, by the spec's ``kind``."""

BASE_KINDS = frozenset({"sequence", "faker", "choice", "number", "date", "reference"})
"""Column kinds drawn at random; every other kind is derived from columns."""


def generate_column(w: WorldState, tname: str, cname: str) -> None:
    """Generate one column of a table with the generator of its kind, checked (:meth:`WorldState.guarded`)."""
    col = w.spec.tables[tname].columns[cname]
    n = w.n[tname]
    rng = w.rng(tname, cname)
    handler = COLUMN_KINDS[col.kind]
    values, dtype = w.guarded(tname, cname, lambda: handler(w, tname, cname, col, n, rng))
    w.values[tname][cname] = values
    w.dtypes[tname][cname] = dtype
