"""A scenario's spec: the world's spec moved in time (what the scenario's tables satisfy, what its corpus states)."""

from __future__ import annotations

from datetime import date

from worldforge.spec.dates import resolve_date
from worldforge.spec.models import ScenarioSpec, WorldSpec

__all__ = ["scenario_spec", "shift_year"]


def shift_year(d: date, years: int) -> date:
    """``d`` moved by ``years`` (Feb 29 becomes Feb 28 in a year that has none)."""
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # Feb 29 in a non-leap year
        return d.replace(year=d.year + years, day=28)


def scenario_spec(spec: WorldSpec, scenario: ScenarioSpec) -> WorldSpec:
    """The spec a scenario's tables satisfy: target year and as-of date moved."""
    year = spec.target_year + scenario.shift_years
    as_of = resolve_date(scenario.as_of, year) if scenario.as_of else shift_year(spec.as_of_date, scenario.shift_years)
    return spec.model_copy(update={"target_year": year, "as_of": as_of.isoformat(), "scenarios": []})
