"""A world from its spec: generate its tables and scenarios, check their invariants, store the world file; re-check one.

World generation sits here, above both the generators (:mod:`worldforge.synth`, :mod:`worldforge.scenarios`) and the
storage they write to (:mod:`worldforge.warehouse.worlds`, which stores and reads world files and generates nothing).
The ``world_tables`` and ``scenario_tables`` steps (:mod:`worldforge.pipeline`) and ``worldforge world check`` call it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from worldforge.scenarios import build_scenarios
from worldforge.spec import WorldSpec, load_spec
from worldforge.spec.scenario import scenario_spec
from worldforge.synth import build_world
from worldforge.synth.invariants import Violation, check_world
from worldforge.warehouse.duck import read_every_block
from worldforge.warehouse.layout import Warehouse
from worldforge.warehouse.worlds import WorldFile, read_world, scenario_schema, write_world

__all__ = ["WorldBuild", "build_world_file", "check_world_file"]


@dataclass(frozen=True)
class WorldBuild:
    """The result of :func:`build_world_file`.

    Attributes:
        spec: the validated spec.
        seed: the seed the tables were generated with.
        tables: ``{table: frame}`` as generated.
        scenarios: ``{scenario: {table: frame}}`` (empty when not built).
        violations: invariants the tables break; when any, nothing was written.
        path: the written world file, or ``None`` when there were violations.
    """

    spec: WorldSpec
    seed: int
    tables: dict[str, pl.DataFrame]
    scenarios: dict[str, dict[str, pl.DataFrame]]
    violations: list[Violation]
    path: Path | None


def build_world_file(
    spec_path: str | Path | WorldSpec,
    warehouse: Warehouse,
    seed: int | None = None,
    with_scenarios: bool = True,
    progress: Callable[[str], None] | None = None,
) -> WorldBuild:
    """Validate a spec, generate its world (and scenarios), check every invariant, write ``<warehouse>/<world>.duckdb``.

    Args:
        spec_path: the world spec YAML file, or the spec already loaded (not read again).
        warehouse: the warehouse.
        seed: the seed (default: the spec's).
        with_scenarios: also build the spec's time-shifted scenarios into the file (the
            ``scenario_tables`` asset builds them as a step of its own).
        progress: called with the name of each step as it starts.

    Returns:
        The build; ``path`` is ``None`` when the tables break an invariant (the previous file,
        if any, is then untouched).

    Raises:
        SpecError: the spec is malformed (nothing is written).
        FileNotFoundError: no such spec file.
        GenerationError, ScenarioError: the world or a scenario cannot be generated.
    """
    step = progress or (lambda _: None)
    step("validating spec")
    spec = spec_path if isinstance(spec_path, WorldSpec) else load_spec(spec_path)
    step("generating tables")
    tables = build_world(spec, seed)
    step("checking invariants")
    violations = check_world(spec, tables)
    used = spec.seed if seed is None else seed
    if violations:
        return WorldBuild(spec, used, tables, {}, violations, None)
    scenarios: dict[str, dict[str, pl.DataFrame]] = {}
    if with_scenarios:
        step("building scenarios")
        scenarios = build_scenarios(spec, tables)
    step("writing DuckDB")
    path = write_world(spec, tables, warehouse, seed, scenarios if with_scenarios else None)
    return WorldBuild(spec, used, tables, scenarios, violations, path)



def check_world_file(path: str | Path, every_block: bool = True) -> tuple[WorldFile, list[Violation]]:
    """Re-check a world file: the spec's invariants plus the DDL constraints DuckDB declares.

    With ``every_block`` (the default, ``worldforge world check``), every block of the file is read first
    (:func:`~worldforge.warehouse.duck.read_every_block`: every column of every table, corpus and tasks included,
    and each key's index), so damage DuckDB's checksums see is an error, not a file that checks clean. The
    build's own checks of a file it has just written pass ``False`` (about 0.2 s per check of a 8 MB world).

    Returns:
        The world read back and every violation found (empty when consistent).

    Raises:
        WarehouseError: the file is missing, not a worldforge world, or damaged (one line naming it and what to do).
    """
    if every_block:
        read_every_block(path)
    wf = read_world(path)
    declared = {(r["schema_name"], r["table_name"], r["constraint_type"], r["columns"]): r for r in wf.declared.iter_rows(named=True)}

    def ddl(schema: str, tables: dict[str, pl.DataFrame], label: str) -> list[Violation]:
        out = []
        for tname, table in wf.spec.tables.items():
            if tname not in tables:
                continue
            if (schema, tname, "PRIMARY KEY", table.primary_key) not in declared:
                out.append(Violation(label + tname, "ddl_primary_key", f"DuckDB declares no PRIMARY KEY ({table.primary_key})"))
            for ref_name, ref in table.references.items():
                row = declared.get((schema, tname, "FOREIGN KEY", ref_name))
                if row is None or row["referenced_table"] != ref.parent:
                    out.append(Violation(label + tname, "ddl_foreign_key", f"DuckDB declares no FOREIGN KEY ({ref_name}) REFERENCES {ref.parent}"))
        return out

    violations = check_world(wf.spec, wf.tables) + ddl("main", wf.tables, "")
    for sc in wf.spec.scenarios if wf.has_scenarios else []:
        if sc.name not in wf.scenarios:
            violations.append(Violation(f"{scenario_schema(sc.name)}.*", "missing_scenario", "the spec declares this scenario but the file has none"))
            continue
        label = f"{scenario_schema(sc.name)}."
        found = check_world(scenario_spec(wf.spec, sc), wf.scenarios[sc.name])
        violations += [Violation(label + v.table, v.check, v.detail, v.rows, v.example) for v in found]
        violations += ddl(scenario_schema(sc.name), wf.scenarios[sc.name], label)
    return wf, violations
