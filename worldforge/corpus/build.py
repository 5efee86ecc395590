"""A world's search corpus end to end: pages with provenance, the fact check, the BM25 indexes.

:func:`build_checked_corpus` writes the pages of the world and of each stored scenario and
re-reads every stated fact against the tables; :func:`index_corpora` (re)builds one tantivy
index per corpus; :func:`publish_corpus` does both (``worldforge corpus build``). The Dagster
assets ``search_corpus`` and ``search_index`` call the first two as steps of their own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from worldforge.corpus.index import build_index
from worldforge.corpus.store import CorpusReport, build_corpus, check_corpus, fact_tally
from worldforge.errors import WarehouseError
from worldforge.tally import Tally
from worldforge.warehouse import read_world
from worldforge.warehouse.duck import open_readonly
from worldforge.warehouse.worlds import scenario_schema


@dataclass(frozen=True)
class CorpusBuild:
    """A built and checked corpus.

    Attributes:
        report: pages per corpus and facts stated.
        contradictions: :func:`~worldforge.corpus.store.check_corpus`'s frame (empty when the
            pages agree with the tables).
        tally: facts stated = consistent + contradicted, by problem.
        indexes: the index folders built, world first (empty until indexed).
    """

    report: CorpusReport
    contradictions: pl.DataFrame
    tally: Tally
    indexes: list[Path] = field(default_factory=list)


def build_checked_corpus(path: str | Path, seed: int | None = None) -> CorpusBuild:
    """Generate and store the corpus of a world file (world and scenarios), then check every stated fact.

    Raises:
        WarehouseError: the file is not a world.
    """
    wf = read_world(path)  # once for both: the corpus build does not change the tables
    report = build_corpus(path, seed, world=wf)
    bad = check_corpus(path, world=wf)
    return CorpusBuild(report, bad, fact_tally(report.facts, bad))


def index_corpora(path: str | Path) -> list[Path]:
    """(Re)build the index of the world's corpus and of each stored scenario's; returns their folders, world first.

    Raises:
        WarehouseError: the file is not a world or has no corpus.
    """
    scenarios, pages, hashes = _stored_corpora(path)
    def corpus(s: str | None) -> tuple[pl.DataFrame, str | None]:
        return pages.filter(pl.col("scenario").is_null() if s is None else pl.col("scenario") == s), hashes.get(s)
    return [build_index(path, None, corpus(None))] + [build_index(path, s, corpus(s)) for s in scenarios]


def _stored_corpora(path: str | Path) -> tuple[list[str], pl.DataFrame, dict[str | None, str]]:
    """With one read-only connection: the file's stored scenarios (``read_world(path).scenarios``'s
    names: the spec's scenarios, in order, that have tables in the file), every corpus page ordered
    by URL, and the corpus hashes by scenario.

    Raises:
        WarehouseError: the file is not a world or has no corpus.
    """
    con = open_readonly(path)
    try:
        present = {(r[0], r[1]) for r in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
        try:
            spec = json.loads(con.execute("SELECT spec_json FROM _world").fetchall()[0][0])
            names = [sc["name"] for sc in spec.get("scenarios") or []]
        except (duckdb.Error, IndexError, KeyError, TypeError, AttributeError, json.JSONDecodeError):
            names = None  # not a readable world: read_world below says why
        pages, hashes = pl.DataFrame(), {}
        if ("main", "corpus_pages") in present:
            pages = con.sql("SELECT * FROM corpus_pages ORDER BY url").pl()
            hashes = dict(con.execute("SELECT scenario, corpus_hash FROM _corpus").fetchall()) if ("main", "_corpus") in present else {}
    finally:
        con.close()
    if names is None:
        names = list(read_world(path).scenarios)  # raises the reader's own error
    if ("main", "corpus_pages") not in present:
        raise WarehouseError(f"{path}: no corpus yet (run `worldforge corpus build`)")
    return [n for n in names if any(s_ == scenario_schema(n) for s_, _ in present)], pages, hashes


def publish_corpus(path: str | Path, progress: Callable[[str], None] | None = None) -> CorpusBuild:
    """:func:`build_checked_corpus`, then :func:`index_corpora`; ``progress`` gets each step's name as it starts.

    Raises:
        WarehouseError: the file is not a world.
    """
    step = progress or (lambda _: None)
    step("generating pages and checking facts against the tables")
    built = build_checked_corpus(path)
    step("indexing")
    return CorpusBuild(built.report, built.contradictions, built.tally, index_corpora(path))
