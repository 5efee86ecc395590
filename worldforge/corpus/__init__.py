"""Search corpora generated from worlds: pages with provenance, their store and BM25 index.

* :mod:`~worldforge.corpus.vocab` — what a column means to a reader: label, unit, kind, event verb;
* :mod:`~worldforge.corpus.quantity` — values as sites write them (units, dates, styles) and back;
* :mod:`~worldforge.corpus.pages` — pages of eleven web genres from rows, each stated cell recorded;
* :mod:`~worldforge.corpus.context` — a row in its context: ranks, comparisons, totals, changes, date gaps;
* :mod:`~worldforge.corpus.claims` — those derived claims with their cells, read back and recomputed by the check;
* :mod:`~worldforge.corpus.store` — ``corpus_pages`` / ``corpus_facts`` in the world file, the fact check;
* :mod:`~worldforge.corpus.index` — tantivy BM25 indexes and :func:`search`;
* :mod:`~worldforge.corpus.writer` — the prose genres rewritten by a model, kept only when every value checks out;
* :mod:`~worldforge.corpus.build` — all of them for a world file.
"""

from worldforge.corpus.build import CorpusBuild, build_checked_corpus, index_corpora, index_world
from worldforge.corpus.index import RETRIEVERS, RetrieverConfig, SearchHit, build_dense_index, build_index, dense_dir, index_dir, open_index, search
from worldforge.corpus.pages import Fact, Page, build_pages, label_column
from worldforge.corpus.quantity import render_value
from worldforge.corpus.store import build_corpus, check_corpus, fact_tally, read_corpus, write_corpus
from worldforge.corpus.writer import WriterConfig, WriterReport, write_pages, writer_config

__all__ = [
    "RETRIEVERS", "RetrieverConfig", "build_dense_index", "dense_dir", "index_world",
    "CorpusBuild", "Fact", "Page", "SearchHit", "build_checked_corpus", "build_corpus", "build_index", "build_pages",
    "check_corpus", "fact_tally", "index_corpora", "index_dir", "label_column", "open_index",
    "read_corpus", "render_value", "search", "write_corpus", "WriterConfig", "WriterReport", "write_pages", "writer_config",
]
