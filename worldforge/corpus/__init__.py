"""Search corpora generated from worlds: pages with provenance, their store and BM25 index.

* :mod:`~worldforge.corpus.vocab` — what a column means to a reader: label, unit, kind, event verb;
* :mod:`~worldforge.corpus.quantity` — values as sites write them (units, dates, styles) and back;
* :mod:`~worldforge.corpus.page` — one page and the table cells it states (``Fact``, ``Page``, ``Site``);
* :mod:`~worldforge.corpus.generate` — the pages of eleven web genres generated from rows, each stated cell recorded;
* :mod:`~worldforge.corpus.context` — a row in its context: ranks, comparisons, totals, changes, date gaps;
* :mod:`~worldforge.corpus.claims` — those derived claims with their cells, read back and recomputed by the check;
* :mod:`~worldforge.corpus.store` — ``corpus_pages`` / ``corpus_facts`` in the world file (the writer), the fact check;
* :mod:`~worldforge.corpus.index` — tantivy BM25 indexes and :func:`search`;
* :mod:`~worldforge.corpus.rewriter` — the prose genres rewritten by a model, kept only when every value checks out;
* :mod:`~worldforge.corpus.steps` — the world's two corpus steps: :func:`build_corpus` (generate, rewrite, write,
  check) and :func:`index_corpora`.
"""

from worldforge.corpus.generate import Fact, Page, generate_pages, label_column
from worldforge.corpus.index import RETRIEVERS, RetrieverConfig, SearchHit, build_dense_index, build_index, dense_dir, index_dir, open_index, search
from worldforge.corpus.quantity import render_value
from worldforge.corpus.rewriter import RewriterConfig, RewriterReport, rewrite_pages, rewriter_config
from worldforge.corpus.steps import CorpusBuild, build_corpus, index_corpora, index_world
from worldforge.corpus.store import check_corpus, fact_tally, generate_corpus, read_corpus, write_corpus

__all__ = [
    "RETRIEVERS", "RetrieverConfig", "build_dense_index", "dense_dir", "index_world",
    "CorpusBuild", "Fact", "Page", "SearchHit", "build_corpus", "build_index", "generate_corpus", "generate_pages",
    "check_corpus", "fact_tally", "index_corpora", "index_dir", "label_column", "open_index",
    "read_corpus", "render_value", "search", "write_corpus", "RewriterConfig", "RewriterReport", "rewrite_pages", "rewriter_config",
]
