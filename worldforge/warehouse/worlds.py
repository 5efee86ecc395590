"""World files: ``warehouse/<world>.duckdb``.

Each file holds the world's tables with real ``PRIMARY KEY`` and ``FOREIGN KEY``
constraints (created parents first, so DuckDB itself enforces referential integrity),
``COMMENT ON`` descriptions with units, and a one-row ``_world`` table:

=================== =========================================================
world               the spec's world name
title               the spec's title
seed                the seed the tables were generated with
target_year         the spec's target year
spec_hash           SHA-256 of the spec's canonical JSON, order included (:func:`~worldforge.spec.spec_hash`)
spec_json           the validated spec in the author's order (:func:`~worldforge.spec.spec_json`): it reads back
                    to the same spec, so ``world check`` can re-run its constraints
generated_at        UTC timestamp of the build
worldforge_version  the library version that built the file
generator_version   :data:`worldforge.GENERATOR_VERSION` when the file was built: what the spec built then
                    (a file without the column reads as version unknown: stale, :func:`generator_version`)
faker_version       Faker's version (its providers decide faker columns' values)
total_rows          rows over all world tables
=================== =========================================================

Each scenario of the spec lives in schema ``scenario_<name>`` with the same tables and
constraints, listed in ``_scenarios(name, schema_name, description, shift_years,
target_year, as_of, total_rows)``.

This module stores and reads world files; generating a world and checking one against its spec's invariants is
:mod:`worldforge.world`'s (above the generators).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import duckdb
import polars as pl

import worldforge
from worldforge.errors import SpecError, WarehouseError
from worldforge.spec import WorldSpec, spec_from_dict, spec_hash, spec_json, validate_spec
from worldforge.spec.scenario import scenario_spec
from worldforge.warehouse.duck import atomic_duckdb, constraints, duck_type, insert_frame, open_readonly, quote_ident, quote_str, read_table
from worldforge.warehouse.layout import Warehouse

_FAKER_VERSION = version("faker")

__all__ = ["WorldFile", "write_world", "write_scenarios", "read_world", "scenario_schema", "content_digests", "generator_version",
           "is_stale"]

WORLD_BLOCK_SIZE = 16 * 1024
"""Storage block of a world file: DuckDB's smallest. A world is a dozen small tables and its corpus (2–3 MB of
text); in DuckDB's default 256 KiB blocks most of each block stays empty (esports_2031: 10.5 MiB), in 16 KiB
blocks the same file takes 2.5 MiB, and reads take the same time (the corpus step and the task store add to
the file in place, so it keeps this size). The long text columns (page text, task JSON) are also declared
``USING COMPRESSION zstd``, which finds the repetition across pages that DuckDB's default per-string FSST
misses: 1.8 MiB a catalog world on average instead of 3.0."""


def _comment(col) -> str | None:
    parts = [p for p in (col.description, f"unit: {col.unit}" if col.unit else None) if p]
    return "; ".join(parts) if parts else None


_COLUMNS_VIEW = """
CREATE VIEW v_columns AS
  SELECT table_name, column_name, data_type, comment
  FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'
    AND table_name NOT LIKE '\\_%' ESCAPE '\\' AND table_name NOT LIKE 'corpus\\_%' ESCAPE '\\' AND table_name NOT IN ('search_tasks', 'deep_questions')
  ORDER BY table_name, column_index;
COMMENT ON VIEW v_columns IS 'The world tables and their columns, with units and descriptions from the spec.';
"""


def _references_view(spec: WorldSpec) -> str:
    """``v_references``: every foreign key of the world with its parent table, its label (the role it plays: ``home
    team``) and its shape (:meth:`~worldforge.spec.models.TableSpec.reference_shape`: reference, role, junction,
    hierarchy, optional), so that SQL users join a match to its home team by name."""
    rows = [f"({quote_str(t)}, {quote_str(r)}, {quote_str(c.parent)}, {quote_str(c.label) if c.label else 'NULL'}, "
            f"{quote_str(table.reference_shape(t, r))}, {c.null_share if c.null_share else 'NULL'})"
            for t, table in spec.tables.items() for r, c in table.references.items()]
    body = (f"SELECT * FROM (VALUES {', '.join(rows)}) AS v(table_name, column_name, parent_table, label, shape, null_share)" if rows else
            "SELECT NULL::VARCHAR AS table_name, NULL::VARCHAR AS column_name, NULL::VARCHAR AS parent_table, NULL::VARCHAR AS label, "
            "NULL::VARCHAR AS shape, NULL::DOUBLE AS null_share WHERE false")
    return (f"CREATE VIEW v_references AS {body};\nCOMMENT ON VIEW v_references IS 'Every foreign key of the world: its parent "
            f"table, its label (the role it plays) and its shape (reference, role, junction, hierarchy, optional).';")


def _ddl(spec: WorldSpec, order: tuple[str, ...], tables: dict[str, pl.DataFrame], schema: str = "main") -> str:
    """CREATE TABLE (with PRIMARY/FOREIGN KEY) and COMMENT ON statements, parents first."""

    def q(name: str) -> str:
        return f"{quote_ident(schema)}.{quote_ident(name)}"

    stmts = [] if schema == "main" else [f"CREATE SCHEMA {quote_ident(schema)}"]
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
            cols.append(f"FOREIGN KEY ({quote_ident(ref_name)}) REFERENCES {q(ref.parent)} ({quote_ident(ppk)})")
        stmts.append(f"CREATE TABLE {q(tname)} (\n  " + ",\n  ".join(cols) + "\n)")
        if table.description:
            stmts.append(f"COMMENT ON TABLE {q(tname)} IS {quote_str(table.description)}")
        for cname, col in table.columns.items():
            text = _comment(col)
            if text:
                stmts.append(f"COMMENT ON COLUMN {q(tname)}.{quote_ident(cname)} IS {quote_str(text)}")
    return ";\n".join(stmts)


def _insert_table(con: duckdb.DuckDBPyConnection, spec: WorldSpec, tname: str, target: str, frame: pl.DataFrame) -> None:
    """Insert a world table. DuckDB checks a self-referencing FOREIGN KEY against the rows already in the table, not
    those of the same statement, so a table that references itself (a hierarchy, whose parents are earlier rows) goes
    in consecutive slices, each cut where a row's parent lies in the slice; row order is kept."""
    table = spec.tables[tname]
    selfrefs = [r for r, c in table.references.items() if c.parent == tname]
    if not selfrefs or frame.height == 0:
        insert_frame(con, target, frame)
        return
    pos = {k: i for i, k in enumerate(frame[table.primary_key].to_list())}
    parents = [[pos.get(v) for v in frame[r].to_list()] for r in selfrefs]
    start = 0
    for i in range(frame.height):
        if any(p[i] is not None and p[i] >= start for p in parents):
            insert_frame(con, target, frame.slice(start, i - start))
            start = i
    insert_frame(con, target, frame.slice(start, frame.height - start))


def write_world(
    spec: WorldSpec,
    tables: dict[str, pl.DataFrame],
    warehouse: Warehouse,
    seed: int | None = None,
    scenarios: dict[str, dict[str, pl.DataFrame]] | None = None,
) -> Path:
    """Write a world to ``<warehouse>/<world>.duckdb`` atomically.

    Args:
        spec: the world's spec.
        tables: the generated tables (``build_world`` output).
        warehouse: the warehouse (its folder created when missing).
        seed: the seed used (defaults to ``spec.seed``).
        scenarios: ``{name: tables}`` (``build_scenarios`` output), each written to schema
            ``scenario_<name>`` with the same constraints and listed in ``_scenarios``; None
            writes no ``_scenarios`` table (add them later with :func:`write_scenarios`).

    Returns:
        The path of the written file.

    Raises:
        duckdb.ConstraintException: the tables break a primary/foreign key; nothing is written.
    """
    path = warehouse.world(spec.world)
    total = sum(f.height for f in tables.values())
    meta = pl.DataFrame(
        {
            "world": [spec.world],
            "title": [spec.title],
            "seed": [spec.seed if seed is None else seed],
            "target_year": [spec.target_year],
            "spec_hash": [spec_hash(spec)],
            "spec_json": [spec_json(spec)],
            "generated_at": [datetime.now(timezone.utc).replace(tzinfo=None)],
            "worldforge_version": [worldforge.__version__],
            "generator_version": [worldforge.GENERATOR_VERSION],
            "faker_version": [_FAKER_VERSION],
            "total_rows": [total],
        },
        schema_overrides={"title": pl.String, "generated_at": pl.Datetime("us")},
    )
    order = validate_spec(spec).table_order
    with atomic_duckdb(path, block_size=WORLD_BLOCK_SIZE) as con:
        con.execute(_ddl(spec, order, tables))
        for tname in order:
            _insert_table(con, spec, tname, tname, tables[tname])
        con.execute(
            "CREATE TABLE _world (world VARCHAR PRIMARY KEY, title VARCHAR, seed BIGINT, target_year INTEGER, "
            "spec_hash VARCHAR, spec_json VARCHAR, generated_at TIMESTAMP, worldforge_version VARCHAR, "
            "generator_version VARCHAR, faker_version VARCHAR, total_rows BIGINT)"
        )
        con.execute("COMMENT ON TABLE _world IS 'How this world was generated (worldforge).'")
        con.execute(_COLUMNS_VIEW)
        con.execute(_references_view(spec))
        insert_frame(con, "_world", meta)
        if scenarios is not None:
            _create_scenarios(con, spec, order, scenarios)
    return path


def _create_scenarios(con: duckdb.DuckDBPyConnection, spec: WorldSpec, order: tuple[str, ...], scenarios: dict[str, dict[str, pl.DataFrame]]) -> None:
    old = [r[0] for r in con.execute("SELECT DISTINCT schema_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name LIKE 'scenario\\_%' ESCAPE '\\'").fetchall()]
    for schema in old:
        con.execute(f"DROP SCHEMA {quote_ident(schema)} CASCADE")
    con.execute("DROP TABLE IF EXISTS _scenarios")
    con.execute(
        "CREATE TABLE _scenarios (name VARCHAR PRIMARY KEY, schema_name VARCHAR, description VARCHAR, "
        "shift_years INTEGER, target_year INTEGER, as_of DATE, total_rows BIGINT)"
    )
    by_name = {sc.name: sc for sc in spec.scenarios}
    for name, stables in scenarios.items():
        sc = by_name[name]
        sspec = scenario_spec(spec, sc)
        schema = scenario_schema(name)
        con.execute(_ddl(spec, order, stables, schema))
        for tname in order:
            _insert_table(con, spec, tname, f"{schema}.{tname}", stables[tname])
        con.execute(
            "INSERT INTO _scenarios VALUES (?, ?, ?, ?, ?, ?, ?)",
            [name, schema, sc.description, sc.shift_years, sspec.target_year, sspec.as_of_date, sum(f.height for f in stables.values())],
        )


def write_scenarios(path: str | Path, spec: WorldSpec, scenarios: dict[str, dict[str, pl.DataFrame]]) -> Path:
    """Replace the scenario schemas of an existing world file, atomically."""
    with atomic_duckdb(path, update=True) as con:
        _create_scenarios(con, spec, validate_spec(spec).table_order, scenarios)
    return Path(path)


def scenario_schema(name: str) -> str:
    """The DuckDB schema holding a scenario's tables."""
    return f"scenario_{name}"


@dataclass(frozen=True)
class WorldFile:
    """A world read back from DuckDB."""

    path: Path
    spec: WorldSpec
    meta: dict
    tables: dict[str, pl.DataFrame]
    declared: pl.DataFrame  # constraints as DuckDB reports them (all schemas)
    scenarios: dict[str, dict[str, pl.DataFrame]]
    has_scenarios: bool  # the file has a _scenarios table (its scenarios were built)

    @property
    def generator_version(self) -> str | None:
        """The generator version the file records (``None``: written before the version was recorded)."""
        return self.meta.get("generator_version")

    @property
    def stale(self) -> bool:
        """Built by another generator version than this one's (:func:`is_stale`)."""
        return is_stale(self.generator_version)

    def sources(self, include_scenarios: bool = True) -> list[tuple[str | None, WorldSpec, dict[str, pl.DataFrame]]]:
        """``(scenario or None, spec, tables)`` of the world, then of each stored scenario in the spec's order (its spec
        time-shifted by :func:`~worldforge.spec.scenario.scenario_spec`): what a corpus or task build reads per corpus."""
        out: list[tuple[str | None, WorldSpec, dict[str, pl.DataFrame]]] = [(None, self.spec, self.tables)]
        if include_scenarios:
            out += [(sc.name, scenario_spec(self.spec, sc), self.scenarios[sc.name]) for sc in self.spec.scenarios if sc.name in self.scenarios]
        return out


@functools.lru_cache(maxsize=64)
def _stored_spec(text: str, source: str) -> WorldSpec:
    """A stored ``spec_json`` validated and compiled once per process (specs are frozen: safe to share)."""
    return spec_from_dict(json.loads(text), source)


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
            spec = _stored_spec(meta["spec_json"], f"{p}:_world.spec_json")
        except (SpecError, json.JSONDecodeError) as exc:
            raise WarehouseError(f"{p}: stored spec is unreadable: {exc}") from None
        present = {(r[0], r[1]) for r in con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}
        tables = {t: read_table(con, t) for t in spec.tables if ("main", t) in present}
        scenarios = {}
        for sc in spec.scenarios:
            schema = scenario_schema(sc.name)
            if any(s_ == schema for s_, _ in present):
                scenarios[sc.name] = {t: read_table(con, f"{schema}.{t}") for t in spec.tables if (schema, t) in present}
        declared = constraints(con)
    finally:
        con.close()
    return WorldFile(p, spec, meta, tables, declared, scenarios, ("main", "_scenarios") in present)


def is_stale(recorded: str | None) -> bool:
    """A recorded generator version is stale: not :data:`worldforge.GENERATOR_VERSION` (``None``, unknown, is stale)."""
    return recorded != worldforge.GENERATOR_VERSION


def generator_version(path: str | Path) -> str | None:
    """The generator version a world file records in ``_world.generator_version``, read alone (not the tables).

    Returns:
        The version; ``None`` for a file written before the version was recorded (no such column, or no value).

    Raises:
        WarehouseError: the file is missing, not DuckDB, or not a worldforge world.
    """
    p = Path(path)
    con = open_readonly(p)
    try:
        try:
            row = con.execute("SELECT generator_version FROM _world").fetchone()
        except duckdb.BinderException:  # a file from before the column
            return None
        except duckdb.CatalogException:
            raise WarehouseError(f"{p}: not a worldforge world (no _world table)") from None
    finally:
        con.close()
    return None if row is None else row[0]


def content_digests(path: str | Path) -> dict[str, str]:
    """What a world file holds, one MD5 per table: ``{"<schema>.<table>": hex digest}``.

    Each digest covers the table's rows in a canonical order (every row as DuckDB's text of it,
    sorted), so two files built from the same spec on different engines or machines compare equal
    table by table whatever order their rows were written in. ``TIMESTAMP`` columns are left out:
    they say when a table was written (``generated_at``, ``built_at``), not what it holds.

    Raises:
        WarehouseError: the file does not exist or is not a DuckDB database.
    """
    con = open_readonly(path)
    try:
        tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY ALL").fetchall()
        out = {}
        for schema, table in tables:
            cols = [quote_ident(c) for c, kind in con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
                "ORDER BY column_index",
                [schema, table]).fetchall() if not kind.startswith("TIMESTAMP")]
            row = f"CAST(row({', '.join(cols)}) AS VARCHAR)" if cols else "''"
            digest = con.execute(f"SELECT md5(coalesce(string_agg({row}, chr(10) ORDER BY {row}), '')) "
                                 f"FROM {quote_ident(schema)}.{quote_ident(table)}").fetchone()[0]
            out[f"{schema}.{table}"] = digest
        return out
    finally:
        con.close()
