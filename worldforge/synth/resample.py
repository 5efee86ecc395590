"""Checks with ``enforce: resample``: the rows that break one are redrawn until none does.

Runs once every column is generated (:func:`resample`), so a spec without such checks gives
exactly the tables it gave before they existed; the redraws come from streams of their own.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import expr as E
from worldforge.spec import models as M
from worldforge.spec.limits import MAX_RESAMPLE_TRIES
from worldforge.spec.plan import Plan, column_inputs, resample_columns
from worldforge.synth.columns import COLUMN_KINDS, choice, faker, generate_column
from worldforge.synth.state import WorldState, dtype_of


def resample(w: WorldState, plan: Plan) -> None:
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
        (t, i, con) for t in plan.table_order for i, con in enumerate(w.spec.tables[t].constraints)
        if isinstance(con, M.CheckConstraint) and con.enforce == "resample"
    ]
    if not checks:
        return
    targets = {(t, i): resample_columns(w.spec, t, con.expr) for t, i, con in checks}
    redrawn = {(t, c) for (t, _), cols in targets.items() for c in cols}
    dependents = downstream(w, plan, redrawn)
    rngs: dict[tuple[str, str], random.Random] = {}
    by_table: dict[str, list[tuple[int, M.CheckConstraint]]] = defaultdict(list)
    for t, i, con in checks:
        by_table[t].append((i, con))
    for round_ in range(MAX_RESAMPLE_TRIES + 1):
        failing = {(t, i): bad for t, cons in by_table.items() for i, bad in _failing_rows(w, t, cons).items()}
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
                rng = rngs.setdefault(node, w.rng(*node, "resample"))
                _redraw(w, *node, sorted(rows[node]), rng)
        for node in dependents:
            generate_column(w, *node)
    problems = [
        f"table '{t}': check {con.expr!r} (tables.{t}.constraints.{i}, enforce: resample) still fails for "
        f"{len(failing[(t, i)])} of {w.n[t]} rows after {MAX_RESAMPLE_TRIES} redraws of {', '.join(targets[(t, i)])}"
        for t, i, con in checks if failing[(t, i)]
    ]
    if len(problems) > 3:
        problems[3:] = [f"{len(problems) - 3} more resample checks"]
    raise GenerationError(
        f"world '{w.spec.world}' (seed {w.seed}): " + "; ".join(problems)
        + f" (the bound is MAX_RESAMPLE_TRIES = {MAX_RESAMPLE_TRIES}); loosen the check or widen the columns it redraws"
    )

def downstream(w: WorldState, plan: Plan, roots: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The columns that read any of ``roots``, directly or not, in plan order (``roots`` left out)."""
    users: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for node in plan.column_order:
        for dep in column_inputs(w.spec, *node)[0]:
            users[dep].append(node)
    found: set[tuple[str, str]] = set()
    stack = list(roots)
    while stack:
        for user in users[stack.pop()]:
            if user not in found:
                found.add(user)
                stack.append(user)
    return [node for node in plan.column_order if node in found and node not in roots]

def _failing_rows(w: WorldState, t: str, checks: list[tuple[int, M.CheckConstraint]]) -> dict[int, list[int]]:
    """Per check (by its index in the table's constraints), the rows of ``t`` for which it is false
    (null, as in the final check, is not a failure). The checks are evaluated on one frame, at once."""
    errors = (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError, OverflowError, TypeError)

    def cannot(i: int, con: M.CheckConstraint, exc: Exception) -> GenerationError:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return GenerationError(
            f"world '{w.spec.world}' (seed {w.seed}), tables.{t}.constraints.{i}: check {con.expr!r} cannot be evaluated: {detail[:300]}"
        )

    exprs: dict[int, pl.Expr] = {}
    names: set[str] = set()
    for i, con in checks:
        if (t, i) not in w.check_exprs:  # parsed and compiled once per world
            node = E.parse(con.expr)
            try:
                w.check_exprs[(t, i)] = (E.columns_of(node), E.to_polars(node, w.spec.target_year, w.spec.as_of_date).alias(f"__holds_{i}__"))
            except errors as exc:
                raise cannot(i, con, exc) from None
        reads, exprs[i] = w.check_exprs[(t, i)]
        names |= reads
    frame = w.frame(t, names)
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

def _redraw(w: WorldState, t: str, c: str, rows: list[int], rng: random.Random) -> None:
    """Draw new values of base column ``c`` for ``rows`` from its generator; the other rows keep theirs.

    A unique column (``unique: true``, or alone in a ``unique`` constraint) stays unique: a new value
    is none of the kept rows' values.
    """
    table = w.spec.tables[t]
    col = table.columns[c]
    old = w.values[t][c]
    chosen = set(rows)
    unique = getattr(col, "unique", False) or any(
        isinstance(con, M.UniqueConstraint) and con.columns == [c] for con in table.constraints
    )
    kept = {v for r, v in enumerate(old) if r not in chosen} if unique else set()

    def make() -> tuple[list[Any], pl.DataType]:
        if isinstance(col, M.FakerColumn):
            new, _ = faker(w, t, c, col, len(rows), rng, taken=kept)
        elif isinstance(col, M.ChoiceColumn) and unique:
            free = [k for k, v in enumerate(col.values) if v not in kept]
            pool = col.model_copy(update={
                "values": [col.values[k] for k in free],
                "weights": None if col.weights is None else [col.weights[k] for k in free],
                "unique": True,
            })
            new, _ = choice(w, t, c, pool, len(rows), rng)
        else:
            new, _ = COLUMN_KINDS[col.kind](w, t, c, col, len(rows), rng)
        values = list(old)
        for r, v in zip(rows, new):
            values[r] = v
        return values, dtype_of(values) if isinstance(col, M.FakerColumn) else w.dtypes[t][c]

    w.values[t][c], w.dtypes[t][c] = w.guarded(t, c, make)

