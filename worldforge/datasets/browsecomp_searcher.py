"""A BrowseComp-Plus-style searcher over a ``worldforge export browsecomp-plus`` folder: BM25, dense or hybrid.

BrowseComp-Plus (github.com/texttron/BrowseComp-Plus) gives its agents two tools, ``search`` and ``get_document``,
answered by a searcher (``searcher/searchers/base.py``'s ``BaseSearcher``: Pyserini BM25 or a FAISS index of a
Qwen3 embedding model, ``searcher/tools.py`` registers them over MCP). :class:`WorldforgeSearcher` answers the same
calls with the same names and return shapes over an exported corpus, with no Java, no Hub download and no GPU:

* ``search(query, k)`` and ``_retrieve(query, k)``: ``[{"docid", "score", "text", "snippet"}, ...]``, best first —
  ``text`` is the document whole, as its BM25 and FAISS searchers return it (its ``tools.py`` cuts the snippet
  from it); ``snippet`` is its first :data:`SNIPPET_CHARS` characters, what ``BaseSearcher``'s docstring names;
* ``retrieve_batch(queries, qids, k)``: ``{qid: [hit, ...]}``;
* ``get_document(docid)``: ``{"docid", "text", "url"}``;
* ``search_type``, ``search_description(k)``, ``get_document_description()``: as ``BaseSearcher``'s.

Differences, on purpose: ``search`` takes ``k`` second (``search(query, k=10, query_id=None)``; its base class has
``query_id`` second, yet its own ``tools.py`` calls ``searcher.search(query, k)``), and ``get_document`` of an
unknown docid raises :class:`DocumentNotFound` (its searchers return ``None``) — a tool server wrapping it turns the
message into the tool's error.

The index lives in the export, ``<export>/searcher_index/``: ``bm25/`` (tantivy, BM25 over each document's text, as
:mod:`worldforge.corpus.index` indexes pages) and, for ``dense``/``hybrid``, ``dense-<model key>/``
(:func:`~worldforge.retrieval.vectors.build_vector_index`: the model's document prompt, FAISS inner product).
Each records the SHA-256 of the ``corpus.parquet`` it was built from and is rebuilt when that changes (a new
export); ``hybrid`` fuses the two rankings (top ``max(k, 50)`` each) by reciprocal rank
(:func:`~worldforge.retrieval.fusion.reciprocal_rank_fusion`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from worldforge.corpus.index import HYBRID_DEPTH, RETRIEVERS, parse_query
from worldforge.errors import WorldforgeError

__all__ = ["SNIPPET_CHARS", "DocumentNotFound", "WorldforgeSearcher"]

"""The retrievers :class:`WorldforgeSearcher` offers."""

SNIPPET_CHARS = 1000
"""How much of a document a hit's ``snippet`` holds (cut at a word boundary)."""

"""Hits of each retriever that hybrid search fuses (at least the ``k`` asked for)."""



class DocumentNotFound(WorldforgeError):
    """``get_document`` was given a docid that the exported corpus does not hold."""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _snippet(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + "…"


class WorldforgeSearcher:
    """``search``/``get_document`` over a BrowseComp-Plus export, in the shapes of BrowseComp-Plus's searchers.

    Args:
        export_dir: a folder ``worldforge export browsecomp-plus`` wrote (its ``corpus.parquet``: docid, text, url).
        retriever: ``bm25`` (tantivy), ``dense`` (``embedding_model``, FAISS) or ``hybrid`` (both, fused by reciprocal rank).
        embedding_model: a sentence-transformers model folder (``dense``/``hybrid``; for example the tiny model
            ``worldforge corpus embedder DIR`` builds); its own query and document prompts are used.
        embedding_url: instead, an OpenAI-compatible ``/v1/embeddings`` endpoint (``embedding_model`` then names the
            served model; empty: the first it lists).
        quantize: ``none`` or ``sq8`` (:data:`~worldforge.retrieval.vectors.QUANTIZE`).
        snippet_chars: the length of a hit's ``snippet``.

    Attributes:
        export_dir: the export.
        retriever: the retriever in use.
        index_dir: ``<export>/searcher_index``.

    Raises:
        WorldforgeError: the folder holds no ``corpus.parquet``, the retriever is unknown, or ``dense``/``hybrid``
            has no model.
        EmbeddingError: the model cannot be loaded or the endpoint reached.
    """

    def __init__(self, export_dir: str | Path, retriever: str = "bm25", embedding_model: str | Path | None = None,
                 embedding_url: str = "", quantize: str = "none", snippet_chars: int = SNIPPET_CHARS):
        import polars as pl

        self.export_dir = Path(export_dir)
        corpus = self.export_dir / "corpus.parquet"
        if not corpus.is_file():
            raise WorldforgeError(f"{self.export_dir}: no corpus.parquet here (write one with `worldforge export browsecomp-plus`)")
        if retriever not in RETRIEVERS:
            raise WorldforgeError(f"retriever must be one of {', '.join(RETRIEVERS)}, not {retriever!r}")
        if retriever != "bm25" and not (embedding_model or embedding_url):
            raise WorldforgeError(f"the {retriever} retriever needs an embedding model folder (embedding_model) or endpoint (embedding_url)")
        self.retriever = retriever
        self.snippet_chars = snippet_chars
        self.index_dir = self.export_dir / "searcher_index"
        frame = pl.read_parquet(corpus, columns=["docid", "text", "url"])
        self._docids: list[str] = frame["docid"].to_list()
        self._texts: list[str] = frame["text"].to_list()
        self._urls: list[str] = frame["url"].to_list()
        self._row = {d: i for i, d in enumerate(self._docids)}
        self._digest = _sha256(corpus)
        self._bm25 = self._open_bm25() if retriever != "dense" else None
        self._dense = self._embedder = None
        if retriever != "bm25":
            self._open_dense(str(embedding_model or ""), embedding_url, quantize)

    # --- the indexes ----------------------------------------------------------------------------------------------

    def _open_bm25(self):
        import tantivy

        from worldforge.warehouse.atomic import atomic_dir

        folder = self.index_dir / "bm25"
        marker = folder / "corpus.sha256"
        if not marker.is_file() or marker.read_text() != self._digest:
            self.index_dir.mkdir(exist_ok=True)
            sb = tantivy.SchemaBuilder()
            sb.add_text_field("docid", stored=True, tokenizer_name="raw")
            sb.add_text_field("text", stored=False)
            with atomic_dir(folder) as tmp:
                index = tantivy.Index(sb.build(), path=str(tmp))
                writer = index.writer(heap_size=50_000_000, num_threads=1)
                for d, t in zip(self._docids, self._texts):
                    writer.add_document(tantivy.Document(docid=d, text=t))
                writer.commit()
                writer.wait_merging_threads()
                (tmp / "corpus.sha256").write_text(self._digest)
        index = tantivy.Index.open(str(folder))
        return index, index.searcher()

    def _open_dense(self, model: str, url: str, quantize: str) -> None:
        from worldforge.retrieval.embed import EmbeddingConfig, embedder, local_model
        from worldforge.retrieval.vectors import build_vector_index, open_vector_index

        config = EmbeddingConfig(model=model if url else local_model(model), url=url)
        self._embedder = embedder(config)
        folder = self.index_dir / f"dense-{config.key()}-{quantize}"
        meta = folder / "meta.json"
        try:
            fresh = meta.is_file() and json.loads(meta.read_text()).get("corpus_hash") == self._digest
        except (OSError, ValueError, AttributeError):  # a damaged folder: built again
            fresh = False
        if not fresh:
            self.index_dir.mkdir(exist_ok=True)
            build_vector_index(folder, self._docids, [" ".join(t.split()) for t in self._texts], self._embedder, quantize,
                               meta={"corpus_hash": self._digest})
        self._dense = open_vector_index(folder)
        if self._dense.docs["id"].to_list() != self._docids:  # pragma: no cover - a folder edited by hand
            shutil.rmtree(folder, ignore_errors=True)
            raise WorldforgeError(f"{folder}: the dense index does not match the corpus; it was removed, open the searcher again")

    # --- BaseSearcher's calls -------------------------------------------------------------------------------------

    @property
    def search_type(self) -> str:
        """``BM25``, ``FAISS`` (dense) or ``hybrid``, as BrowseComp-Plus's searchers name themselves."""
        return {"bm25": "BM25", "dense": "FAISS", "hybrid": "hybrid"}[self.retriever]

    def search(self, query: str, k: int = 10, query_id: str | None = None) -> list[dict[str, Any]]:
        """The ``k`` best documents for ``query``: ``[{"docid": str, "score": float, "text": str, "snippet": str}, ...]``,
        best first (fewer when the corpus holds fewer). ``score`` is BM25's, the cosine similarity, or the fused
        reciprocal-rank score. ``query_id`` is accepted for BrowseComp-Plus's signature (its rerankers read it) and unused."""
        return self._retrieve(query, k)

    def _retrieve(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """:meth:`search` without reranking (BrowseComp-Plus's first stage; there is no reranker here)."""
        if k <= 0:
            return []
        if self.retriever == "bm25":
            ranked = self._lexical(query, k)
        elif self.retriever == "dense":
            ranked = self._vector(query, k)
        else:
            from worldforge.retrieval.fusion import reciprocal_rank_fusion

            depth = max(k, HYBRID_DEPTH)
            ranked = reciprocal_rank_fusion([[r for r, _ in self._lexical(query, depth)], [r for r, _ in self._vector(query, depth)]], limit=k)
        return [{"docid": self._docids[r], "score": float(s), "text": self._texts[r],
                 "snippet": _snippet(self._texts[r], self.snippet_chars)} for r, s in ranked]

    def retrieve_batch(self, queries: Sequence[str], qids: Sequence[str], k: int = 10) -> dict[str, list[dict[str, Any]]]:
        """:meth:`search` of each query: ``{qid: [hit, ...]}`` (BrowseComp-Plus's batch retrieval).

        Raises:
            WorldforgeError: ``queries`` and ``qids`` differ in length.
        """
        if len(queries) != len(qids):
            raise WorldforgeError(f"{len(queries)} queries and {len(qids)} query ids: one id per query")
        return {qid: self._retrieve(q, k) for q, qid in zip(queries, qids)}

    def get_document(self, docid: str) -> dict[str, Any]:
        """The whole document: ``{"docid": str, "text": str, "url": str}``.

        Raises:
            DocumentNotFound: the corpus has no such docid (BrowseComp-Plus's own searchers return ``None``).
        """
        row = self._row.get(str(docid))
        if row is None:
            raise DocumentNotFound(f"no document with docid {docid!r} in {self.export_dir} "
                                   f"({len(self._docids):,} documents; docids are the ones search returns)")
        return {"docid": self._docids[row], "text": self._texts[row], "url": self._urls[row]}

    def search_description(self, k: int = 10) -> str:
        """The ``search`` tool's description for a model (BrowseComp-Plus's wording)."""
        return (f"Perform a search on a knowledge source. Returns top-{k} hits with docid, score, and snippet. "
                "The snippet contains the document's contents (may be truncated based on token limits).")

    def get_document_description(self) -> str:
        """The ``get_document`` tool's description for a model."""
        return "Retrieve a full document by its docid."

    def __len__(self) -> int:
        """Documents in the corpus."""
        return len(self._docids)

    # --- the retrievers -------------------------------------------------------------------------------------------

    def _lexical(self, query: str, k: int) -> list[tuple[int, float]]:
        index, searcher = self._bm25
        q = parse_query(index, query, ["text"])
        return [(self._row[searcher.doc(addr)["docid"][0]], score) for score, addr in searcher.search(q, k).hits]

    def _vector(self, query: str, k: int) -> list[tuple[int, float]]:
        return self._dense.search(self._embedder.embed_queries([query]), k)[0]
