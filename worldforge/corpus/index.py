"""BM25 search over a world's corpus with tantivy.

DuckDB 2.x cannot install its ``fts`` extension offline, so the corpus is indexed with
tantivy (PyPI ``tantivy``, BM25 ranking). One index per corpus lives beside the world file:
``<warehouse>/<world>.index/`` for the world and ``<world>.<scenario>.index/`` for a
scenario. Each index records the corpus hash it was built from (``corpus.sha256``);
:func:`search` rebuilds it when the stored corpus has changed since.

Snippets are cut from page *leads* only, choosing the lead sentence that shares most
words with the query: facts that a page states only in its body never show in a snippet.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import polars as pl
import tantivy

from worldforge.corpus.store import article_text, read_corpus, stored_hash
from worldforge.errors import WarehouseError
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.layout import Warehouse, WarehouseLike

__all__ = ["SearchHit", "build_index", "index_dir", "open_index", "search"]

SNIPPET_CHARS = 240
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_WORD = re.compile(r"\w+")


class SearchHit(NamedTuple):
    """One ranked result (a NamedTuple: cheap to build on the query path)."""

    url: str
    title: str
    snippet: str
    published: str | None  # ISO date or None
    page_type: str
    score: float


def index_dir(world_file: str | Path, scenario: str | None = None) -> Path:
    """The index folder of a world file's corpus: ``<world>.index`` beside it, or ``<world>.<scenario>.index`` for a scenario."""
    p = Path(world_file)
    stem = p.name[: -len(".duckdb")] if p.name.endswith(".duckdb") else p.stem
    return p.with_name(f"{stem}.{scenario}.index" if scenario else f"{stem}.index")


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("url", stored=True, tokenizer_name="raw")
    sb.add_text_field("title", stored=True)
    sb.add_text_field("lead", stored=True)
    sb.add_text_field("body", stored=False)
    sb.add_text_field("page_type", stored=True, tokenizer_name="raw")
    sb.add_text_field("published", stored=True, tokenizer_name="raw")
    return sb.build()


_EMPHASIS = re.compile(r"(?<!\w)[*_]+|[*_]+(?!\w)")
"""Emphasis marks at a word's edge (``*Title*.``, ``**bold**``); an underscore inside a word stays."""


def plain(markdown: str) -> str:
    """Markdown to searchable text: links to their text, emphasis marks removed (``*X*.`` reads ``X.``, never
    ``X .``), table bars, headings and quote marks to spaces."""
    return re.sub(r"[|#>]+", " ", _EMPHASIS.sub("", _MD_LINK.sub(r"\1", markdown)))


def index_text(markdown: str) -> str:
    """What the index reads of the unstored body: :func:`plain`'s link pass only. Emphasis marks, table bars,
    headings and quote marks are separators to the tokenizer (tantivy's ``default``: runs of alphanumeric
    characters, lower-cased), so removing them too gives the same tokens at the same positions, in a
    fifth of the time."""
    return _MD_LINK.sub(r"\1", markdown) if "](" in markdown else markdown


def build_index(world_file: str | Path, scenario: str | None = None, corpus: tuple[pl.DataFrame, str | None] | None = None) -> Path:
    """(Re)build the index of one corpus; the new index replaces the old one when complete.

    ``corpus``: ``(pages ordered by URL, stored corpus hash)`` when the caller has read them from
    the file (:func:`~worldforge.corpus.build.index_corpora` reads every corpus of a file at once).

    Raises:
        WarehouseError: the world file has no corpus.
    """
    pages = read_corpus(world_file, scenario, dressed=False)[0] if corpus is None else corpus[0]
    target = index_dir(world_file, scenario)
    with atomic_dir(target) as tmp:
        index = tantivy.Index(_schema(), path=str(tmp))
        writer = index.writer(heap_size=50_000_000, num_threads=1)
        for r in pages.iter_rows(named=True):
            writer.add_document(tantivy.Document(
                url=r["url"], title=r["title"], lead=plain(r["lead"]), body=index_text(article_text(r)),  # the article, not the site chrome
                page_type=r["page_type"], published=r["published"].isoformat() if r["published"] else "",
            ))
        writer.commit()
        writer.wait_merging_threads()
        digest = stored_hash(world_file, scenario) if corpus is None else corpus[1]
        (tmp / "corpus.sha256").write_text(digest or "")
    _OPEN.pop(world_file, scenario)
    return target


_HITS_KEPT = 1024
"""Queries whose hits an open index keeps (:func:`search`); the store is emptied when full."""


class _Open:
    def __init__(self, path: Path):
        self.index = tantivy.Index.open(str(path))
        self.searcher = self.index.searcher()
        # (query, k) -> hits: the index never changes while open (a rebuilt one is a new _Open), and agents repeat
        # queries across sessions (the oracle's clean and perturbed episodes of a task, a trainer's rollouts of one task)
        self.hits: dict[tuple[str, int], tuple[SearchHit, ...]] = {}


_OPEN: FileCache[_Open] = FileCache()
"""Open indexes by ``(world file, scenario)``, while the world file is unchanged (at most ``WORLDFORGE_OPEN_WORLDS``)."""


def open_index(world_file: str | Path, scenario: str | None = None) -> tantivy.Index:
    """The index of a corpus, rebuilt first when missing or stale (see the module doc)."""
    return _opened(str(world_file), scenario).index


def _opened(world_file: str, scenario: str | None) -> _Open:
    """The open index of a corpus; one ``stat`` of the world file per call when warm."""

    def load() -> _Open:
        d = index_dir(world_file, scenario)
        marker = d / "corpus.sha256"
        if not marker.is_file() or marker.read_text() != (stored_hash(world_file, scenario) or ""):
            build_index(world_file, scenario)
        return _Open(d)

    try:
        return _OPEN.get(world_file, scenario, load)
    except FileNotFoundError:
        raise WarehouseError(f"{world_file}: no such world file") from None


@lru_cache(maxsize=100_000)
def _sentences(lead: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A lead's sentences (whitespace collapsed) with their lower-cased words, cached per lead."""
    parts = [" ".join(x.split()) for x in re.split(r"(?<=[.!?])\s+", lead) if x.strip()] or [" ".join(lead.split())]
    return tuple((x, frozenset(w.lower() for w in _WORD.findall(x))) for x in parts)


def _snippet(lead: str, words: frozenset[str]) -> str:
    best, best_n = "", -1
    for text, vocab in _sentences(lead):
        n = len(words & vocab)
        if n > best_n:  # first sentence wins ties
            best, best_n = text, n
    if len(best) > SNIPPET_CHARS:
        best = best[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
    return best


@lru_cache(maxsize=1024)
def _world_file(warehouse: Warehouse, world: str) -> str:
    return str(warehouse.world(world))


def search(world: str, query: str, k: int, warehouse: WarehouseLike, scenario: str | None = None) -> list[SearchHit]:
    """Ranked pages of a world's corpus for a free-text query (BM25 over title, lead, body).

    Args:
        world: the world name (``<warehouse>/<world>.duckdb``).
        query: free text; query syntax errors are tolerated (lenient parsing).
        k: how many results.
        warehouse: the warehouse, or its folder.
        scenario: search a scenario's corpus instead of the world's.

    Returns:
        Up to ``k`` hits, best first, each with a snippet cut from the page's lead (a new list: the caller may
        reorder it). An open index keeps the hits of its last queries (up to 1,024), so a repeated query is
        not searched again until the index is rebuilt.

    Raises:
        WarehouseError: the world file or its corpus is missing.
    """
    opened = _opened(_world_file(Warehouse.of(warehouse), world), scenario)
    got = opened.hits.get((query, k))
    if got is None:
        got = _search(opened, query, k)
        if len(opened.hits) >= _HITS_KEPT:
            opened.hits.clear()
        opened.hits[(query, k)] = got
    return list(got)


def _search(opened: _Open, query: str, k: int) -> tuple[SearchHit, ...]:
    fields = ["title", "lead", "body"]
    q, errors = opened.index.parse_query_lenient(query, fields, field_boosts={"title": 2.0})
    if errors:  # query syntax the user did not mean ("AND (", unbalanced quotes): search the words
        q, _ = opened.index.parse_query_lenient(" ".join(_WORD.findall(query)), fields, field_boosts={"title": 2.0})
    words = frozenset(w.lower() for w in _WORD.findall(query))
    doc = opened.searcher.doc
    hits = []
    for score, addr in opened.searcher.search(q, k).hits:
        d = doc(addr)
        hits.append(SearchHit(d["url"][0], d["title"][0], _snippet(d["lead"][0], words), d["published"][0] or None, d["page_type"][0], score))
    return tuple(hits)
