"""World files: ``warehouse/<world>.duckdb``.

Each file holds the world's tables with real ``PRIMARY KEY`` and ``FOREIGN KEY``
constraints (created parents first, so DuckDB itself enforces referential integrity),
``COMMENT ON`` descriptions with units, and a one-row ``_world`` table:

=================== =========================================================
world               the spec's world name
title               the spec's title
seed                the seed the tables were generated with
target_year         the spec's target year
spec_hash           SHA-256 of the spec's canonical JSON
spec_json           the validated spec, so ``world check`` can re-run its constraints
generated_at        UTC timestamp of the build
worldforge_version  the library version that built the file
faker_version       Faker's version (its providers decide faker columns' values)
total_rows          rows over all world tables
=================== =========================================================
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import duckdb
import polars as pl

import worldforge
from worldforge.errors import SpecError, WarehouseError
from worldforge.spec import WorldSpec, spec_from_dict, spec_hash, validate_spec
from worldforge.synth.invariants import Violation, check_world
from worldforge.warehouse.duck import (
    atomic_duckdb,
    constraints,
    duck_type,
    insert_frame,
    open_readonly,
    quote_ident,
    quote_str,
    read_table,
)

_FAKER_VERSION = version("faker")

__all__ = ["WorldFile", "write_world", "read_world", "check_world_file", "world_path"]


def world_path(warehouse: str | Path, world: str) -> Path:
    """``<warehouse>/<world>.duckdb``."""
    return Path(warehouse) / f"{world}.duckdb"


def _comment(col) -> str | None:
    parts = [p for p in (col.description, f"unit: {col.unit}" if col.unit else None) if p]
    return "; ".join(parts) if parts else None


def _ddl(spec: WorldSpec, order: tuple[str, ...], tables: dict[str, pl.DataFrame]) -> str:
    """CREATE TABLE (with PRIMARY/FOREIGN KEY) and COMMENT ON statements, parents first."""
    stmts = []
    for tname in order:
        table = spec.tables[tname]
        frame = tables[tname]
        cols = []
        for cname, col in table.columns.items():
            null = " NOT NULL" if cname == table.primary_key else ""
            dtype = frame.schema[cname]
            if cname in table.references:  # a foreign key has its parent key's type
                parent = spec.tables[col.parent]
                dtype = tables[col.parent].schema[parent.primary_key]
            cols.append(f"{quote_ident(cname)} {duck_type(dtype)}{null}")
        cols.append(f"PRIMARY KEY ({quote_ident(table.primary_key)})")
        for ref_name, ref in table.references.items():
            ppk = spec.tables[ref.parent].primary_key
            cols.append(f"FOREIGN KEY ({quote_ident(ref_name)}) REFERENCES {quote_ident(ref.parent)} ({quote_ident(ppk)})")
        stmts.append(f"CREATE TABLE {quote_ident(tname)} (\n  " + ",\n  ".join(cols) + "\n)")
        if table.description:
            stmts.append(f"COMMENT ON TABLE {quote_ident(tname)} IS {quote_str(table.description)}")
        for cname, col in table.columns.items():
            text = _comment(col)
            if text:
                stmts.append(f"COMMENT ON COLUMN {quote_ident(tname)}.{quote_ident(cname)} IS {quote_str(text)}")
    return ";\n".join(stmts)


def write_world(
    spec: WorldSpec,
    tables: dict[str, pl.DataFrame],
    warehouse: str | Path,
    seed: int | None = None,
) -> Path:
    """Write a world to ``<warehouse>/<world>.duckdb`` atomically.

    Args:
        spec: the world's spec.
        tables: the generated tables (``build_world`` output).
        warehouse: the warehouse folder (created when missing).
        seed: the seed used (defaults to ``spec.seed``).

    Returns:
        The path of the written file.

    Raises:
        duckdb.ConstraintException: the tables break a primary/foreign key; nothing is written.
    """
    path = world_path(warehouse, spec.world)
    total = sum(f.height for f in tables.values())
    meta = pl.DataFrame(
        {
            "world": [spec.world],
            "title": [spec.title],
            "seed": [spec.seed if seed is None else seed],
            "target_year": [spec.target_year],
            "spec_hash": [spec_hash(spec)],
            "spec_json": [json.dumps(spec.model_dump(mode="json", exclude_defaults=True), sort_keys=True)],
            "generated_at": [datetime.now(timezone.utc).replace(tzinfo=None)],
            "worldforge_version": [worldforge.__version__],
            "faker_version": [_FAKER_VERSION],
            "total_rows": [total],
        },
        schema_overrides={"title": pl.String, "generated_at": pl.Datetime("us")},
    )
    order = validate_spec(spec).table_order
    with atomic_duckdb(path) as con:
        con.execute(_ddl(spec, order, tables))
        for tname in order:
            insert_frame(con, tname, tables[tname])
        con.execute(
            "CREATE TABLE _world (world VARCHAR PRIMARY KEY, title VARCHAR, seed BIGINT, target_year INTEGER, "
            "spec_hash VARCHAR, spec_json VARCHAR, generated_at TIMESTAMP, worldforge_version VARCHAR, "
            "faker_version VARCHAR, total_rows BIGINT)"
        )
        con.execute("COMMENT ON TABLE _world IS 'How this world was generated (worldforge).'")
        insert_frame(con, "_world", meta)
    return path


@dataclass(frozen=True)
class WorldFile:
    """A world read back from DuckDB."""

    path: Path
    spec: WorldSpec
    meta: dict
    tables: dict[str, pl.DataFrame]
    declared: pl.DataFrame  # constraints as DuckDB reports them


def read_world(path: str | Path) -> WorldFile:
    """Read a world file: its spec (from ``_world.spec_json``), tables and declared constraints.

    Raises:
        WarehouseError: the file is missing, not DuckDB, or not a worldforge world.
    """
    p = Path(path)
    con = open_readonly(p)
    try:
        try:
            meta_df = read_table(con, "_world")
        except duckdb.CatalogException:
            raise WarehouseError(f"{p}: not a worldforge world (no _world table)") from None
        if meta_df.height != 1:
            raise WarehouseError(f"{p}: _world must have exactly one row, has {meta_df.height}")
        meta = meta_df.row(0, named=True)
        try:
            spec = spec_from_dict(json.loads(meta["spec_json"]), f"{p}:_world.spec_json")
        except (SpecError, json.JSONDecodeError) as exc:
            raise WarehouseError(f"{p}: stored spec is unreadable: {exc}") from None
        present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'").fetchall()}
        tables = {t: read_table(con, t) for t in spec.tables if t in present}
        declared = constraints(con)
    finally:
        con.close()
    return WorldFile(p, spec, meta, tables, declared)


def check_world_file(path: str | Path) -> tuple[WorldFile, list[Violation]]:
    """Re-check a world file: the spec's invariants plus the DDL constraints DuckDB declares.

    Returns:
        The world read back and every violation found (empty when consistent).
    """
    wf = read_world(path)
    violations = check_world(wf.spec, wf.tables)
    declared = {(r["table_name"], r["constraint_type"], r["columns"]): r for r in wf.declared.iter_rows(named=True)}
    for tname, table in wf.spec.tables.items():
        if tname not in wf.tables:
            continue
        if (tname, "PRIMARY KEY", table.primary_key) not in declared:
            violations.append(Violation(tname, "ddl_primary_key", f"DuckDB declares no PRIMARY KEY ({table.primary_key})"))
        for ref_name, ref in table.references.items():
            row = declared.get((tname, "FOREIGN KEY", ref_name))
            if row is None or row["referenced_table"] != ref.parent:
                violations.append(Violation(tname, "ddl_foreign_key", f"DuckDB declares no FOREIGN KEY ({ref_name}) REFERENCES {ref.parent}"))
    return wf, violations
