"""The catalog's diversity report: how different the worlds of ``WAREHOUSE/catalog.duckdb`` are.

Read from the ``catalog`` table (archetypes, schema signatures, rows, tasks, years, statuses) and from
the built worlds' files (table and column names, and the entity names: the values of each table's label
column, :func:`~worldforge.corpus.vocab.label_column`, where it holds text), and which built worlds are stale: their file
records another generator version than :data:`worldforge.GENERATOR_VERSION` (``worldforge catalog build`` rebuilds them).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from worldforge.catalog.build import CatalogRow, read_catalog
from worldforge.warehouse.layout import Warehouse


def _spread(values: list[int | float]) -> tuple[float, float, float] | None:
    return (min(values), statistics.median(values), max(values)) if values else None


@dataclass(frozen=True)
class WorldTasks:
    """The wide tasks stored in one world file: how many (all, and the base world's: scenarios not counted), and the
    sizes of the base world's gold tables (rows: median and largest)."""

    tasks: int
    base: int
    median_gold: float
    max_gold: int


def world_tasks(path) -> WorldTasks | None:
    """:class:`WorldTasks` of a world file (``search_tasks``), ``None`` when it has no tasks (or cannot be read)."""
    from worldforge.errors import WarehouseError
    from worldforge.warehouse.duck import count_rows, open_readonly

    try:
        if not count_rows(path, "search_tasks"):
            return None
        with open_readonly(path) as con:
            got = con.execute("SELECT scenario IS NULL, json_array_length(gold_json) FROM search_tasks").fetchall()
    except (WarehouseError, FileNotFoundError):
        return None
    base = [n for is_base, n in got if is_base]
    return WorldTasks(len(got), len(base), statistics.median(base) if base else 0, max(base, default=0))


@dataclass(frozen=True)
class CatalogReport:
    """Diversity figures of a catalog.

    Attributes:
        worlds: rows in the catalog (one per spec).
        built, failed: rows by status.
        archetypes: built worlds per archetype (``(none)`` for specs without one).
        signatures: distinct schema signatures among the built worlds.
        table_names: distinct table names over the built worlds.
        table_sets: distinct sets of table names (one set per world).
        column_names: distinct column names over the built worlds.
        entity_names: distinct entity names (text values of the label columns, case-folded).
        shared_entity_names: those that appear in more than one world.
        rows: (min, median, max) rows per built world.
        tasks: (min, median, max) tasks per built world.
        years: distinct target years of the built worlds, sorted.
        failures: ``(world, error)`` of every failed row.
        world_tasks: per built world whose file has tasks, :class:`WorldTasks` (base-world wide tasks and gold sizes).
        stale: the built worlds whose file records another generator version (or none), sorted: the next
            ``worldforge catalog build`` rebuilds them.
    """

    worlds: int
    built: int
    failed: int
    archetypes: dict[str, int]
    signatures: int
    table_names: int
    table_sets: int
    column_names: int
    entity_names: int
    shared_entity_names: int
    rows: tuple[float, float, float] | None
    tasks: tuple[float, float, float] | None
    years: list[int] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    world_tasks: dict[str, WorldTasks] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)

    @property
    def entity_overlap(self) -> float:
        """Share of the entity names that appear in more than one world (0.0 without names)."""
        return self.shared_entity_names / self.entity_names if self.entity_names else 0.0

    def figures(self) -> dict[str, str]:
        """Every figure as ``{name: text}``, in a fixed order (what the CLI and the Dagster asset show)."""

        def spread(s: tuple[float, float, float] | None) -> str:
            return "-" if s is None else f"{s[0]:g} / {s[1]:g} / {s[2]:g}"

        return {
            "worlds": str(self.worlds),
            "built": str(self.built),
            "failed": str(self.failed),
            "archetypes": str(len(self.archetypes)),
            "distinct schema signatures": str(self.signatures),
            "distinct table names": str(self.table_names),
            "distinct table-name sets": str(self.table_sets),
            "distinct column names": str(self.column_names),
            "entity names": str(self.entity_names),
            "entity names in more than one world": f"{self.shared_entity_names} ({self.entity_overlap:.1%})",
            "rows per world (min / median / max)": spread(self.rows),
            "tasks per world (min / median / max)": spread(self.tasks),
            "base-world wide tasks per world (min / median / max)": spread(_spread([w.base for w in self.world_tasks.values()])),
            "median gold rows per world (min / median / max)": spread(_spread([w.median_gold for w in self.world_tasks.values()])),
            "target years": "-" if not self.years else f"{self.years[0]}–{self.years[-1]} ({len(self.years)} distinct)",
            "stale worlds (another generator version)": str(len(self.stale)) if not self.stale else
            f"{len(self.stale)}: {', '.join(self.stale[:10])}{', ...' if len(self.stale) > 10 else ''}",
        }


def catalog_report(warehouse: Warehouse) -> CatalogReport:
    """The diversity report of ``WAREHOUSE/catalog.duckdb`` (an empty report when there is no catalog).

    A built row whose world file is gone or unreadable counts in the catalog figures but adds no names.
    """
    import polars as pl

    from worldforge.corpus.vocab import label_column
    from worldforge.errors import WarehouseError
    from worldforge.warehouse import read_world

    rows = read_catalog(warehouse)
    built = [r for r in rows if r.status == "built"]
    tables: set[str] = set()
    table_sets: set[frozenset[str]] = set()
    columns: set[str] = set()
    seen_in: Counter[str] = Counter()
    per_world: dict[str, WorldTasks] = {}
    stale: list[str] = []
    for r in built:
        try:
            wf = read_world(warehouse.world(r.world))
        except WarehouseError:
            continue
        if wf.stale:
            stale.append(r.world)
        wt = world_tasks(warehouse.world(r.world))
        if wt is not None:
            per_world[r.world] = wt
        tables |= set(wf.spec.tables)
        table_sets.add(frozenset(wf.spec.tables))
        names: set[str] = set()
        for tname, tspec in wf.spec.tables.items():
            columns |= set(tspec.columns)
            frame = wf.tables.get(tname)
            col = label_column(tspec)
            if frame is None or col not in frame.columns or frame.schema[col] != pl.String:
                continue  # numeric keys (1, 2, ...) would overlap between any two worlds: only names count
            names |= {str(v).casefold() for v in frame[col].drop_nulls().to_list()}
        seen_in.update(names)  # once per world
    return CatalogReport(
        worlds=len(rows), built=len(built), failed=len(rows) - len(built),
        archetypes=dict(sorted(Counter(r.archetype or "(none)" for r in built).items())),
        signatures=len({r.schema_signature for r in built if r.schema_signature}),
        table_names=len(tables), table_sets=len(table_sets), column_names=len(columns),
        entity_names=len(seen_in), shared_entity_names=sum(1 for n in seen_in.values() if n > 1),
        rows=_spread([r.rows for r in built if r.rows is not None]),
        tasks=_spread([r.tasks for r in built if r.tasks is not None]),
        years=sorted({r.target_year for r in built if r.target_year is not None}),
        failures=[(r.world, r.error or "") for r in rows if r.status != "built"],
        world_tasks=dict(sorted(per_world.items())),
        stale=sorted(stale),
    )


__all__ = ["CatalogReport", "CatalogRow", "WorldTasks", "catalog_report", "world_tasks"]
