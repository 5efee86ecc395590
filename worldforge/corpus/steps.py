"""A world's search corpus end to end: pages with provenance, the fact check, the search indexes.

:func:`build_corpus` writes the pages of the world and of each stored scenario and
re-reads every stated fact against the tables; :func:`index_corpora` (re)builds one tantivy
index per corpus, and a dense index with a dense or hybrid retriever. They are the world's steps ``search_corpus``
and ``search_index`` (:data:`worldforge.pipeline.WORLD_STEPS`: ``world run``, ``corpus build`` and the Dagster assets). With a
:class:`~worldforge.corpus.rewriter.RewriterConfig` the prose pages are rewritten by a model first
(:mod:`worldforge.corpus.rewriter`); the corpus is written once, after every page is settled.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from worldforge.corpus.index import RetrieverConfig, build_dense_index, build_index, dense_dir, remove_dense_index
from worldforge.corpus.rewriter import RewriterConfig, RewriterReport, rewrite_corpus_pages
from worldforge.corpus.store import CorpusReport, check_corpus, fact_tally, generate_corpus, write_corpus
from worldforge.corpus.vocab import column_info
from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.retrieval.vectors import VectorBuild
from worldforge.runtime import paused_gc
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
        rewriter: what the LLM rewriter did (``None``: the template pages as generated).
    """

    report: CorpusReport
    contradictions: pl.DataFrame
    tally: Tally
    indexes: list[Path] = field(default_factory=list)
    rewriter: RewriterReport | None = None


def build_corpus(path: str | Path, seed: int | None = None, rewriter: RewriterConfig | None = None,
                         on_page: Callable[[int, int], None] | None = None) -> CorpusBuild:
    """Generate and store the corpus of a world file (world and scenarios), then check every stated fact.

    Args:
        path: the world file.
        seed: the page seed (default: the world's).
        rewriter: rewrite the prose pages with a model (:func:`~worldforge.corpus.rewriter.rewrite_pages`; replies
            cached under ``<warehouse>/cache/corpus-writer.sqlite`` unless the config names a cache); ``None``:
            the template pages.
        on_page: the rewriter's progress, ``(pages done, pages in)``.

    Raises:
        WarehouseError: the file is not a world.
        BackendError: the rewriter's server is unreachable or does not serve the model; nothing is written.
    """
    wf = read_world(path)  # once for both: the corpus build does not change the tables
    with paused_gc():  # the pages are freed before the collector runs again: it never walks them (worldforge.runtime)
        by_scenario = generate_corpus(path, seed, world=wf)
        written = None
        if rewriter is not None:
            labels = {(t, c): column_info(ts, c).label for t, ts in wf.spec.tables.items() for c in ts.columns}
            by_scenario, written = rewrite_corpus_pages(
                by_scenario, rewriter, label=lambda f: labels.get((f.table_name, f.column_name), f.column_name.replace("_", " ")),
                progress=on_page, cache_path=Path(path).parent / "cache" / "corpus-writer.sqlite",
            )
        report = write_corpus(path, by_scenario)
        del by_scenario
    bad = check_corpus(path, world=wf)
    return CorpusBuild(report, bad, fact_tally(report.facts, bad), rewriter=written)


def index_corpora(path: str | Path, retriever: RetrieverConfig | None = None,
                  progress: Callable[[str, int, int], None] | None = None) -> list[Path]:
    """(Re)build the index of the world's corpus and of each stored scenario's; returns their BM25 index folders, world first.

    ``retriever``: ``dense`` or ``hybrid`` also builds each corpus's dense index (:func:`index_world`); ``bm25``
    removes a dense index the corpora had; ``None`` keeps a corpus's retriever (a dense index is rebuilt with its
    stored model, embedding only the pages that changed; a scenario without one gets the world's).

    Raises:
        WarehouseError: the file is not a world or has no corpus.
        EmbeddingError: the embedding model or endpoint is missing or failed: the corpora before the one that failed
            are indexed, its BM25 index is built, its dense index and the later corpora's indexes are as they were.
    """
    return [bm25 for _, bm25, _ in index_world(path, retriever, progress)]


def index_world(path: str | Path, retriever: RetrieverConfig | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> list[tuple[str | None, Path, VectorBuild | None]]:
    """:func:`index_corpora` with what it built: ``(scenario, BM25 index folder, dense build or None)`` per corpus,
    world first. ``progress`` is called with ``(corpus name, pages embedded, pages to embed)`` while embedding."""
    scenarios, pages, hashes = _stored_corpora(path)

    def corpus(s: str | None) -> tuple[pl.DataFrame, str | None]:
        return pages.filter(pl.col("scenario").is_null() if s is None else pl.col("scenario") == s), hashes.get(s)

    out = []
    world_config = None  # a scenario without a dense index of its own gets the world's retriever and model
    for s in [None, *scenarios]:
        got = corpus(s)
        bm25 = build_index(path, s, got)
        config = retriever
        if config is None:  # keep the corpus's retriever and model (a new scenario's: the world's)
            config = _stored_config(path, s) or world_config
        if s is None:
            world_config = config if retriever is None else None
        dense = None
        if config is not None and config.retriever != "bm25":
            name = s or "(world)"
            dense = build_dense_index(path, s, config, got, progress=None if progress is None else (lambda d, n, name=name: progress(name, d, n)))
        elif config is not None:
            remove_dense_index(path, s)
        out.append((s, bm25, dense))
    return out


def _stored_config(path: str | Path, scenario: str | None) -> RetrieverConfig | None:
    """The retriever a corpus's dense index was built with, ``None`` without one; a damaged one is rebuilt from nothing
    only when the caller names a retriever (``None`` here: the corpus is indexed with BM25 and the folder left alone,
    and searches say what is wrong with it)."""
    meta_path = dense_dir(path, scenario) / "meta.json"
    if not meta_path.is_file():
        return None
    try:
        return RetrieverConfig.from_meta(json.loads(meta_path.read_text()))
    except (ValueError, KeyError, TypeError, AttributeError, WorldforgeError):
        return None


def _stored_corpora(path: str | Path) -> tuple[list[str], pl.DataFrame, dict[str | None, str]]:
    """With one read-only connection: the file's stored scenarios (``read_world(path).scenarios``'s
    names: the spec's scenarios, in order, that have tables in the file), every corpus page ordered
    by URL, and the corpus hashes by scenario.

    Raises:
        WarehouseError: the file is not a world or has no corpus.
    """
    con = open_readonly(path)
    try:
        present = {(r[0], r[1]) for r in con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database()").fetchall()}
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
