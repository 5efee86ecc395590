"""Search corpora generated from worlds: pages with provenance, their store and BM25 index."""

from worldforge.corpus.index import SearchHit, build_index, index_dir, open_index, search
from worldforge.corpus.pages import Fact, Page, build_pages, label_column, render_value
from worldforge.corpus.store import build_corpus, check_corpus, read_corpus, write_corpus

__all__ = [
    "Fact", "Page", "SearchHit", "build_corpus", "build_index", "build_pages", "check_corpus", "index_dir",
    "label_column", "open_index", "read_corpus", "render_value", "search", "write_corpus",
]
