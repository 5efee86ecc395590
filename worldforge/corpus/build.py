"""A world's search corpus end to end: pages with provenance, the fact check, the BM25 indexes.

:func:`build_checked_corpus` writes the pages of the world and of each stored scenario and
re-reads every stated fact against the tables; :func:`index_corpora` (re)builds one tantivy
index per corpus; :func:`publish_corpus` does both (``worldforge corpus build``). The Dagster
assets ``search_corpus`` and ``search_index`` call the first two as steps of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from worldforge.corpus.index import build_index
from worldforge.corpus.store import CorpusReport, build_corpus, check_corpus, fact_tally
from worldforge.tally import Tally
from worldforge.warehouse import read_world


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
    return [build_index(path)] + [build_index(path, s) for s in read_world(path).scenarios]


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
