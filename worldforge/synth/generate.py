"""Seeded generation of world tables from a spec.

The run's state is :class:`~worldforge.synth.state.WorldState`, each column kind's generator is
in :mod:`worldforge.synth.columns`, the redraws of ``enforce: resample`` checks in
:mod:`worldforge.synth.resample`; this module runs them in order.

Every column draws from its own random stream, seeded by SHA-256 of
``(seed, table, column)``, so the same spec and seed give byte-identical tables on any
machine (with the same Faker version, which the warehouse records), and editing one column
leaves the others unchanged. Row counts are fixed first (parents before children, children
spread over parents within the reference's cardinality); columns are then generated in the
dependency order of :func:`worldforge.spec.plan.build_plan`. Rows that break a ``check`` with
``enforce: resample`` are then mended: rules between reference columns by swapping parents between rows
(:func:`worldforge.synth.assign.repair`), the rest redrawn (:func:`worldforge.synth.resample.resample`) from streams of their own, so a
spec without such checks gives exactly the tables it gave before they existed.

Whatever a spec asks for is bounded before generation (:mod:`worldforge.spec.limits`); as a
backstop, every generated column is checked here too (64-bit integers, strings of at most
``MAX_STRING_CHARS``), and any arithmetic, type or polars failure while generating a column
becomes a :class:`~worldforge.errors.GenerationError` that names the column.
"""

from __future__ import annotations

import logging

import polars as pl

from worldforge.errors import GenerationError
from worldforge.spec import models as M
from worldforge.spec.limits import MAX_ABS_INT64
from worldforge.spec.plan import validate_spec
from worldforge.synth.assign import repair
from worldforge.synth.columns import BASE_KINDS, generate_column
from worldforge.synth.resample import downstream, resample
from worldforge.synth.state import WorldState, column_rng

log = logging.getLogger(__name__)

__all__ = ["BASE_KINDS", "build_world", "column_rng", "rederive"]


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
    world = WorldState(spec, spec.seed if seed is None else seed)
    world.count_rows(plan.table_order)
    for tname, cname in plan.column_order:
        generate_column(world, tname, cname)
    swapped = repair(world, plan)  # rules between references: parents swapped between rows
    for node in downstream(world, plan, swapped):
        generate_column(world, *node)
    resample(world, plan)
    log.debug("built world %s seed=%s rows=%s", spec.world, world.seed, world.n)
    return world.frames(plan.table_order)


def rederive(spec: M.WorldSpec, base: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """Recompute every derived column (derive, format, rank, share, aggregate) from the
    base columns of ``base``, under ``spec`` (its ``target_year`` and ``as_of``).

    Used by scenarios: shift the base dates, then re-derive, so ages, durations, totals,
    shares and ranks stay consistent with the shifted world.
    """
    plan = validate_spec(spec)
    world = WorldState(spec, spec.seed)
    for tname in plan.table_order:
        frame = base[tname]
        world.n[tname] = frame.height
        for cname, col in spec.tables[tname].columns.items():
            if col.kind in BASE_KINDS:
                world.values[tname][cname] = frame[cname].to_list()
                world.dtypes[tname][cname] = frame.schema[cname]
    for tname, cname in plan.column_order:
        if spec.tables[tname].columns[cname].kind not in BASE_KINDS:
            generate_column(world, tname, cname)
    return world.frames(plan.table_order)
