"""Helpers that build a full world (tables, scenarios, corpus) in a temporary warehouse."""

from pathlib import Path

from worldforge.corpus import generate_corpus, write_corpus
from worldforge.scenarios import build_scenarios
from worldforge.synth import build_world
from worldforge.warehouse import Warehouse, write_world


def built_world(spec, warehouse: Path | Warehouse, seed: int | None = None) -> Path:
    tables = build_world(spec, seed)
    path = write_world(spec, tables, Warehouse(warehouse), seed, build_scenarios(spec, tables))
    write_corpus(path, generate_corpus(path))
    return path


def age_world(path: Path, version: str | None = None) -> Path:
    """Make a world file look built by an older generator: ``_world.generator_version`` set to ``version``, or (``None``)
    the column dropped, as in a file written before the version was recorded."""
    from worldforge.warehouse.duck import atomic_duckdb

    with atomic_duckdb(path, update=True) as con:
        if version is None:
            con.execute("ALTER TABLE _world DROP COLUMN generator_version")
        else:
            con.execute("UPDATE _world SET generator_version = ?", [version])
    return path
