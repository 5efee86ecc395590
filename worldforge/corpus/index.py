"""Search over a world's corpus: BM25 (tantivy), dense (an embedding model and FAISS) or hybrid (both, fused).

DuckDB 2.x cannot install its ``fts`` extension offline, so the corpus is indexed with
tantivy (PyPI ``tantivy``, BM25 ranking). One index per corpus lives beside the world file:
``<warehouse>/<world>.index/`` for the world and ``<world>.<scenario>.index/`` for a
scenario. Each index records the corpus hash it was built from (``corpus.sha256``);
:func:`search` rebuilds it when the stored corpus has changed since.

A corpus indexed with ``retriever="dense"`` or ``"hybrid"`` (:class:`RetrieverConfig`, ``worldforge corpus index
--retriever``) also has a dense index, ``<world>.dense/`` (``<world>.<scenario>.dense/``): each page's title and
article embedded by the configured model (:mod:`worldforge.retrieval`), in a FAISS index with the model's
configuration and the corpus hash (rebuilt, re-embedding only changed pages, when the corpus changes). Such a
corpus is searched with its retriever by default: ``dense`` ranks by cosine similarity to the query's vector,
``hybrid`` fuses the BM25 and dense rankings (their top :data:`HYBRID_DEPTH` each) by reciprocal rank
(:func:`~worldforge.retrieval.fusion.reciprocal_rank_fusion`). Every entry point (``web_search`` of every
environment and server, ``/retrieve``) searches through :func:`search`, so all of them use it, and the
perturbations and leakage control that follow a search apply to dense hits as to BM25 ones.

Snippets are cut from page *leads* only, choosing the lead sentence that shares most
words with the query: facts that a page states only in its body never show in a snippet.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import polars as pl
import tantivy

from worldforge.corpus.store import article_text, read_corpus, stored_hash
from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.retrieval.embed import EmbeddingConfig, embedder, local_model
from worldforge.retrieval.fusion import reciprocal_rank_fusion
from worldforge.retrieval.train import TrainReport
from worldforge.retrieval.vectors import QUANTIZE, VectorBuild, VectorIndex, build_vector_index, open_vector_index
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.layout import Warehouse

__all__ = ["RETRIEVERS", "RetrieverConfig", "SearchHit", "build_dense_index", "build_index", "dense_dir", "dense_text", "forget",
           "index_dir", "open_index", "parse_query", "remove_dense_index", "search", "title_pairs", "world_embedder"]

RETRIEVERS = ("bm25", "dense", "hybrid")
"""The retrievers a corpus can be searched with."""

HYBRID_DEPTH = 50
"""Hits of each retriever that hybrid search fuses (at least the ``k`` asked for)."""

SNIPPET_CHARS = 240
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
_WORD = re.compile(r"\w+")
_LONE_DASH = re.compile(r"(?<!\S)[-\u2013\u2014](?=\s|$)")


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


def dense_dir(world_file: str | Path, scenario: str | None = None) -> Path:
    """The dense index folder of a world file's corpus: ``<world>.dense`` beside it, or ``<world>.<scenario>.dense``."""
    d = index_dir(world_file, scenario)
    return d.with_name(d.name[: -len(".index")] + ".dense")


@dataclass(frozen=True)
class RetrieverConfig:
    """How the index step indexes a corpus and how it is then searched.

    Attributes:
        retriever: one of :data:`RETRIEVERS`; ``bm25`` builds the tantivy index alone, ``dense`` and ``hybrid``
            also the dense index (``hybrid`` searches both and fuses them).
        embedding: the embedding model (``dense``/``hybrid``).
        quantize: how vectors are stored (:data:`~worldforge.retrieval.vectors.QUANTIZE`: ``none`` or ``sq8``).
        passage_words: what a page's vector is made of (:func:`dense_text`): 0, its title and lead; ``N``, the first
            ``N`` words of its title and article together (e5 and its kind read 512 tokens at most, about 380 words). A
            small model, or one not trained on the worlds, finds pages better by their lead: the rest of an article
            averages the title's words away.
    """

    retriever: str = "bm25"
    embedding: EmbeddingConfig | None = None
    quantize: str = "none"
    passage_words: int = 0

    def __post_init__(self) -> None:
        if self.retriever not in RETRIEVERS:
            raise WorldforgeError(f"retriever must be one of {', '.join(RETRIEVERS)}, not {self.retriever!r}")
        if self.passage_words < 0:
            raise WorldforgeError(f"passage_words must be 0 (title and lead) or a number of words, not {self.passage_words}")
        if self.quantize not in QUANTIZE:
            raise WorldforgeError(f"quantize must be one of {', '.join(QUANTIZE)}, not {self.quantize!r}")
        if self.retriever != "bm25" and (self.embedding is None or not (self.embedding.model or self.embedding.url)):
            raise WorldforgeError(f"--retriever {self.retriever} needs an embedding model: --embedding-model FOLDER "
                                  "(a sentence-transformers model) or --embedding-url URL (an OpenAI-compatible /v1/embeddings endpoint)")

    @classmethod
    def of(cls, retriever: str, model: str = "", url: str = "", query_prompt: str = "", document_prompt: str = "",
           quantize: str = "none", api_key: str = "", passage_words: int = 0) -> RetrieverConfig:
        """A configuration from flat options (a CLI's, a Dagster run config's, the settings'): empty prompts mean the
        model's own; ``bm25`` ignores the embedding options.

        Raises:
            WorldforgeError: an unknown retriever or quantization, or ``dense``/``hybrid`` without a model.
        """
        embedding = None if retriever == "bm25" else EmbeddingConfig(model if url else local_model(model), url, query_prompt or None,
                                                                     document_prompt or None, api_key)
        return cls(retriever, embedding, quantize, passage_words)

    @classmethod
    def over_settings(cls, settings, retriever: str | None = None, model: str | None = None, url: str | None = None,
                      query_prompt: str | None = None, document_prompt: str | None = None, quantize: str | None = None,
                      api_key: str = "", passage_words: int | None = None) -> RetrieverConfig | None:
        """The index step's configuration: each option given (not ``None``) over its setting (``settings``: a
        :class:`~worldforge.settings.Settings`, ``WORLDFORGE_RETRIEVER`` and ``WORLDFORGE_EMBEDDING_*``). ``None`` when
        no retriever is given and the settings say ``bm25``: BM25 indexes, each corpus keeping the retriever and model
        it was indexed with.

        Raises:
            WorldforgeError: as :meth:`of`.
        """
        if retriever is None and settings.retriever == "bm25":
            return None
        def pick(given, setting):
            return setting if given is None else given
        return cls.of(retriever or settings.retriever, pick(model, settings.embedding_model), pick(url, settings.embedding_url),
                      pick(query_prompt, settings.embedding_query_prompt), pick(document_prompt, settings.embedding_document_prompt),
                      quantize or settings.embedding_quantize, api_key, pick(passage_words, settings.embedding_passage_words))

    @classmethod
    def from_meta(cls, meta: dict) -> RetrieverConfig:
        """The configuration a dense index was built with (its ``meta.json``)."""
        return cls(meta.get("retriever", "dense"), EmbeddingConfig.from_stored(meta["embedding"]), meta.get("quantize", "none"),
                   int(meta.get("passage_words", 0)))


def dense_text(title: str, lead: str, article: str = "", words: int = 0) -> str:
    """What a page's vector is made of, as plain text (links to their text, no Markdown marks, whitespace collapsed):
    its title and lead (``words`` 0: the passage a search result shows), or the first ``words`` words of its title
    and article together (the lead is the article's start)."""
    text = f"{title}\n{plain(lead)}" if words <= 0 else " ".join(f"{title}\n{plain(article)}".split()[:words])
    return " ".join(text.split())


_CONTINUATION = re.compile(r"\(page (?!1 of)\d+ of \d+\)")


def title_pairs(world_file: str | Path, scenario: str | None = None, passage_words: int = 0) -> dict[str, list[str]]:
    """Weak supervision for an embedding model from a corpus: ``{"anchor": page titles, "positive": the pages' passages
    (:func:`dense_text`)}``, one row per page, in URL order — title-passage pairs, as e5's pre-training pairs from the
    web (Wang et al., 2022) — for :func:`~worldforge.retrieval.train.train_embedding_model`.

    The continuation pages of a paginated page ("... (page 2 of 8)" onwards) are left out: their titles and passages
    repeat page 1's but for the number, so as in-batch negatives of one another (false negatives) they would teach the
    model to tell page numbers apart and to drop the words a reader searches them by.

    Raises:
        WarehouseError: the world file has no corpus.
    """
    pages = read_corpus(world_file, scenario, dressed=False)[0]
    rows = [r for r in pages.select("title", "lead", "body_md").to_dicts() if not _CONTINUATION.search(r["title"])]
    return {"anchor": [r["title"] for r in rows], "positive": [dense_text(r["title"], r["lead"], r["body_md"], passage_words) for r in rows]}


def world_embedder(world_file: str | Path, out_dir: str | Path, dim: int = 64, epochs: int = 3, seed: int = 0) -> TrainReport | None:
    """The tiny embedding model of a world (``worldforge corpus embedder --world``): its vocabulary counted from the
    world's articles (:func:`~worldforge.retrieval.tiny.build_tiny_embedding_model`), then ``epochs`` passes over its
    :func:`title_pairs` (:func:`~worldforge.retrieval.train.train_embedding_model`; 0: left untrained, ``None`` returned).

    Raises:
        WarehouseError: the world file has no corpus.
        WorldforgeError: sentence-transformers is not installed.
    """
    from worldforge.retrieval.tiny import build_tiny_embedding_model
    from worldforge.retrieval.train import train_embedding_model

    built = build_tiny_embedding_model(out_dir, texts=read_corpus(world_file, None, dressed=False)[0]["body_md"].to_list(), dim=dim, seed=seed)
    return train_embedding_model(built, title_pairs(world_file), built, epochs=epochs, seed=seed) if epochs else None


def build_dense_index(world_file: str | Path, scenario: str | None, config: RetrieverConfig,
                      corpus: tuple[pl.DataFrame, str | None] | None = None,
                      progress: Callable[[int, int], None] | None = None, forget_open: bool = True) -> VectorBuild:
    """(Re)build the dense index of one corpus (:func:`dense_dir`), embedding only pages changed since the last build
    with the same model.

    Args:
        world_file: the world file.
        scenario: the scenario's corpus, ``None`` for the world's.
        config: a ``dense`` or ``hybrid`` configuration (the choice is stored with the index).
        corpus: ``(pages ordered by URL, stored corpus hash)`` when the caller has read them.
        progress: called with ``(pages embedded so far, pages to embed)``.
        forget_open: close the corpus's open index in this process (its next search opens the new one).

    Raises:
        WarehouseError: the world file has no corpus.
        WorldforgeError: ``config`` is ``bm25`` (there is no dense index to build).
        EmbeddingError: the model or endpoint is missing or failed; the previous index is untouched.
    """
    if config.retriever == "bm25" or config.embedding is None:
        raise WorldforgeError("a dense index needs --retriever dense or hybrid and an embedding model")
    pages = read_corpus(world_file, scenario, dressed=False)[0] if corpus is None else corpus[0]
    digest = stored_hash(world_file, scenario) if corpus is None else corpus[1]
    rows = pages.select("url", "title", "lead", "body_md", "published", "page_type").to_dicts()
    texts = [dense_text(r["title"], r["lead"], article_text(r), config.passage_words) for r in rows]
    extra = pl.DataFrame({"title": [r["title"] for r in rows], "lead": [plain(r["lead"]) for r in rows],  # as the BM25 index stores it
                          "published": [r["published"].isoformat() if r["published"] else None for r in rows],
                          "page_type": [r["page_type"] for r in rows]},
                         schema={"title": pl.String, "lead": pl.String, "published": pl.String, "page_type": pl.String})
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], len(texts))

    built = build_vector_index(dense_dir(world_file, scenario), [r["url"] for r in rows], texts, embedder(config.embedding),
                               config.quantize, extra=extra, meta={"retriever": config.retriever, "corpus_hash": digest or "", "passage_words": config.passage_words},
                               progress=step)
    if forget_open:
        forget(world_file, scenario)
    return built


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
    the file (:func:`~worldforge.corpus.steps.index_corpora` reads every corpus of a file at once).

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
    def __init__(self, path: Path, stamp: tuple, dense: VectorIndex | None = None, retriever: str = "bm25", dense_error: str = ""):
        self.index = tantivy.Index.open(str(path))
        self.searcher = self.index.searcher()
        self.stamp = stamp  # the index folders' markers when opened: another process's rebuild changes them
        # (query, k, retriever) -> hits: the index never changes while open (a rebuilt one is a new _Open), and agents repeat
        # queries across sessions (the oracle's clean and perturbed episodes of a task, a trainer's rollouts of one task)
        self.hits: dict[tuple[str, int, str], tuple[SearchHit, ...]] = {}
        self.dense, self.retriever, self.dense_error = dense, retriever, dense_error
        if dense is not None:  # the columns a dense hit is made of, as lists (a hit reads a few rows by position)
            self.embedding = EmbeddingConfig.from_stored(dense.meta["embedding"])
            self.urls, self.titles, self.leads, self.dates, self.types = (dense.docs[c].to_list() for c in ("id", "title", "lead", "published", "page_type"))


_OPEN: FileCache[_Open] = FileCache()
"""Open indexes by ``(world file, scenario)``, while the world file is unchanged (at most ``WORLDFORGE_OPEN_WORLDS``)."""

_DENSE_COLUMNS = ("title", "lead", "published", "page_type")


def _stamp(world_file: str | Path, scenario: str | None) -> tuple:
    """When the corpus's index folders were last replaced: the modification times of the BM25 index's marker and of the
    dense index's ``meta.json`` (``None`` when absent). Two ``stat`` calls."""
    out = []
    for p in (index_dir(world_file, scenario) / "corpus.sha256", dense_dir(world_file, scenario) / "meta.json"):
        try:
            out.append(p.stat().st_mtime_ns)
        except OSError:
            out.append(None)
    return tuple(out)


def forget(world_file: str | Path, scenario: str | None = None) -> None:
    """Close a corpus's open index in this process (the next search opens it again)."""
    _OPEN.pop(str(world_file), scenario)


def remove_dense_index(world_file: str | Path, scenario: str | None = None) -> None:
    """Remove a corpus's dense index (the corpus is then searched with BM25)."""
    shutil.rmtree(dense_dir(world_file, scenario), ignore_errors=True)
    forget(world_file, scenario)


def open_index(world_file: str | Path, scenario: str | None = None) -> tantivy.Index:
    """The index of a corpus, rebuilt first when missing or stale (see the module doc)."""
    return _opened(str(world_file), scenario).index


def _opened(world_file: str, scenario: str | None) -> _Open:
    """The open index of a corpus; one ``stat`` of the world file and two of its index folders' markers per call when warm
    (an index rebuilt by another process is opened again)."""

    def load() -> _Open:
        d = index_dir(world_file, scenario)
        marker = d / "corpus.sha256"
        digest = stored_hash(world_file, scenario) or ""
        if not marker.is_file() or marker.read_text() != digest:
            build_index(world_file, scenario)
        dense, retriever, problem = _open_dense(world_file, scenario, digest)
        return _Open(d, _stamp(world_file, scenario), dense, retriever, problem)

    try:
        opened = _OPEN.get(world_file, scenario, load)
        if opened.stamp != _stamp(world_file, scenario):
            forget(world_file, scenario)
            opened = _OPEN.get(world_file, scenario, load)
        return opened
    except FileNotFoundError:
        raise WarehouseError(f"{world_file}: no such world file") from None


def _open_dense(world_file: str, scenario: str | None, digest: str) -> tuple[VectorIndex | None, str, str]:
    """``(dense index or None, the corpus's retriever, why its dense index cannot be searched)``: a dense index built
    from another corpus or with a model changed since is rebuilt first (embedding the changed pages). A damaged index,
    or a rebuild that fails (the model gone, the endpoint down), leaves BM25 searchable and the reason kept for
    dense and hybrid searches."""
    dd = dense_dir(world_file, scenario)
    if not (dd / "meta.json").is_file():
        return None, "bm25", ""
    retriever = "dense"
    try:
        dense = open_vector_index(dd, _DENSE_COLUMNS)
        config = RetrieverConfig.from_meta(dense.meta)
        retriever = config.retriever
        if dense.meta.get("corpus_hash") != digest or dense.meta.get("key") != config.embedding.key():
            build_dense_index(world_file, scenario, config, forget_open=False)
            dense = open_vector_index(dd, _DENSE_COLUMNS)
        return dense, retriever, ""
    except WorldforgeError as exc:  # EmbeddingError included
        return None, retriever, str(exc)


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


def search(world: str, query: str, k: int, warehouse: Warehouse, scenario: str | None = None,
           retriever: str | None = None) -> list[SearchHit]:
    """Ranked pages of a world's corpus for a free-text query.

    Args:
        world: the world name (``<warehouse>/<world>.duckdb``).
        query: free text; query syntax errors are tolerated (lenient parsing).
        k: how many results.
        warehouse: the warehouse.
        scenario: search a scenario's corpus instead of the world's.
        retriever: ``bm25`` (over title, lead and body), ``dense`` or ``hybrid`` (see the module doc); ``None``: the
            retriever the corpus was indexed with (``bm25`` without a dense index).

    Returns:
        Up to ``k`` hits, best first, each with a snippet cut from the page's lead (a new list: the caller may
        reorder it); ``score`` is BM25's, the cosine similarity, or the fused reciprocal-rank score. An open index
        keeps the hits of its last queries (up to 1,024), so a repeated query is not searched again until the
        index is rebuilt.

    Raises:
        WarehouseError: the world file or its corpus is missing, or ``dense``/``hybrid`` is asked of a corpus
            without a dense index, or whose dense index is damaged or could not be brought up to date (the model
            gone, the endpoint down: BM25 still answers).
        WorldforgeError: ``retriever`` is not one of :data:`RETRIEVERS`; the query's vector is not of the index's
            dimension.
        EmbeddingError: the corpus's embedding model or endpoint cannot embed the query.
    """
    opened = _opened(_world_file(warehouse, world), scenario)
    how = retriever or opened.retriever
    got = opened.hits.get((query, k, how))
    if got is None:
        if how == "bm25":
            got = _search(opened, query, k)
        elif how not in RETRIEVERS:
            raise WorldforgeError(f"retriever must be one of {', '.join(RETRIEVERS)}, not {how!r}")
        elif opened.dense is None:
            raise WarehouseError(f"{world}: the corpus's dense index cannot be searched: {opened.dense_error}" if opened.dense_error else
                                 f"{world}: the corpus has no dense index (build one with `worldforge corpus index {world} "
                                 f"--retriever {how} --embedding-model FOLDER`)")
        elif how == "dense":
            got = _dense(opened, query, k)
        else:
            got = _hybrid(opened, query, k)
        if len(opened.hits) >= _HITS_KEPT:
            opened.hits.clear()
        opened.hits[(query, k, how)] = got
    return list(got)


def _dense(opened: _Open, query: str, k: int) -> tuple[SearchHit, ...]:
    vector = embedder(opened.embedding).embed_queries([query])
    words = frozenset(w.lower() for w in _WORD.findall(query))
    return tuple(_dense_hit(opened, row, score, words) for row, score in opened.dense.search(vector, k)[0])


def _dense_hit(opened: _Open, row: int, score: float, words: frozenset[str]) -> SearchHit:
    return SearchHit(opened.urls[row], opened.titles[row], _snippet(opened.leads[row], words), opened.dates[row] or None,
                     opened.types[row], score)


def _hybrid(opened: _Open, query: str, k: int) -> tuple[SearchHit, ...]:
    depth = max(k, HYBRID_DEPTH)
    lexical = {h.url: h for h in _search(opened, query, depth)}
    dense = {h.url: h for h in _dense(opened, query, depth)}
    fused = reciprocal_rank_fusion([list(lexical), list(dense)], limit=k)
    return tuple((lexical.get(url) or dense[url])._replace(score=score) for url, score in fused)


def parse_query(index: tantivy.Index, query: str, fields: list[str], boosts: dict[str, float] | None = None) -> tantivy.Query:
    """A free-text query for a tantivy index, parsed leniently; with query syntax the user did not mean ("AND (",
    unbalanced quotes), its words alone. A dash standing alone is punctuation, never an exclusion ("Ferreira Azevedo -
    ME", a company's name, does not mean "Ferreira Azevedo, without ME")."""
    query = _LONE_DASH.sub(" ", query)
    q, errors = index.parse_query_lenient(query, fields, field_boosts=boosts or {})
    if errors:
        q, _ = index.parse_query_lenient(" ".join(_WORD.findall(query)), fields, field_boosts=boosts or {})
    return q


def _search(opened: _Open, query: str, k: int) -> tuple[SearchHit, ...]:
    q = parse_query(opened.index, query, ["title", "lead", "body"], {"title": 2.0})
    words = frozenset(w.lower() for w in _WORD.findall(query))
    doc = opened.searcher.doc
    hits = []
    for score, addr in opened.searcher.search(q, k).hits:
        d = doc(addr)
        hits.append(SearchHit(d["url"][0], d["title"][0], _snippet(d["lead"][0], words), d["published"][0] or None, d["page_type"][0], score))
    return tuple(hits)
