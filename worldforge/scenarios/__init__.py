"""Time-shifted scenarios of a world.

A scenario (``scenarios:`` in a spec) is the same world moved in time and/or observed at
another date. :func:`shift_world` moves every ``date`` column by ``shift_years`` (Feb 29
becomes Feb 28), moves ``target_year`` with it, sets the scenario's ``as_of``, and then
re-derives every derived column from the base columns: ages and durations computed from
dates stay consistent, ``as_of()``-relative ("current") facts follow the new as-of date,
aggregates and shares are recomputed and anything ranked by a value is re-ranked. The
result must pass the same invariants as the world, including ``not_after_as_of`` (no row
refers to the future of its as-of date); otherwise :class:`ScenarioError` names the row
that breaks it and nothing is written.
"""

from __future__ import annotations

import polars as pl

from worldforge.errors import WorldforgeError
from worldforge.spec.models import ScenarioSpec, WorldSpec
from worldforge.spec.scenario import scenario_spec, shift_year
from worldforge.synth import Violation, check_world, rederive

__all__ = ["ScenarioError", "scenario_spec", "shift_world", "build_scenarios"]


class ScenarioError(WorldforgeError):
    """A scenario would break an invariant of the world."""

    def __init__(self, world: str, scenario: str, violations: list[Violation]):
        self.violations = violations
        lines = [f"scenario '{scenario}' of world '{world}' breaks {len(violations)} invariant(s); nothing written:"]
        lines += [f"  {v}" for v in violations[:10]]
        super().__init__("\n".join(lines))


def shift_world(spec: WorldSpec, tables: dict[str, pl.DataFrame], scenario: ScenarioSpec) -> dict[str, pl.DataFrame]:
    """A consistent time-shifted copy of a world's tables.

    Args:
        spec: the world's spec.
        tables: the world's tables (``build_world`` output).
        scenario: the scenario to apply.

    Returns:
        The scenario's tables, same keys and row counts as the world's.

    Raises:
        ScenarioError: the shifted world breaks an invariant (with the offending rows).
    """
    sspec = scenario_spec(spec, scenario)
    shifted = {}
    for tname, frame in tables.items():
        dates = [c for c, col in spec.tables[tname].columns.items() if col.kind == "date"]
        if scenario.shift_years and dates:
            frame = frame.with_columns(
                pl.col(c).map_elements(lambda d: shift_year(d, scenario.shift_years), return_dtype=pl.Date) for c in dates
            )
        shifted[tname] = frame
    out = rederive(sspec, shifted)
    violations = check_world(sspec, out)
    if violations:
        raise ScenarioError(spec.world, scenario.name, violations)
    return out


def build_scenarios(spec: WorldSpec, tables: dict[str, pl.DataFrame]) -> dict[str, dict[str, pl.DataFrame]]:
    """Every scenario the spec declares, by name (raises on the first broken one)."""
    return {s.name: shift_world(spec, tables, s) for s in spec.scenarios}
