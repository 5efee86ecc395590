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
