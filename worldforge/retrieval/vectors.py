"""A FAISS index of document vectors in a folder, with the embedding cache that makes rebuilds cheap.

The folder (written atomically: a rebuild replaces it only when complete) holds

* ``vectors.faiss``: the FAISS index, inner product over L2-normalised vectors (cosine similarity);
  ``IndexFlatIP`` (exact, 4 bytes a dimension) or, with ``quantize="sq8"``, ``IndexScalarQuantizer``
  with 8-bit codes (1 byte a dimension, about 4x smaller; scores within about 1 % of the exact ones);
* ``docs.parquet``: one row per vector, in index order: ``id`` (the document's identifier, here a URL),
  ``text_hash`` (:func:`~worldforge.retrieval.embed.text_hash` of the embedded text), and whatever other
  columns the caller stores to answer a hit (title, snippet source ...);
* ``meta.json``: the embedding configuration (:meth:`EmbeddingConfig.stored`), its key, ``dim``, ``quantize``,
  the count, and whatever the caller adds (the corpus hash it was built from).

Rebuilding a folder with the same model (the same :meth:`EmbeddingConfig.key`) reuses the stored vector of every
text whose hash is unchanged: only new or changed pages are embedded again (an ``sq8`` index gives its decoded
vectors back, so a reused vector is the quantized one; an exact index is never rebuilt from quantized vectors).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from worldforge.errors import WorldforgeError
from worldforge.retrieval.embed import Embedder, text_hash
from worldforge.warehouse.atomic import atomic_dir

__all__ = ["QUANTIZE", "VectorBuild", "VectorIndex", "build_vector_index", "open_vector_index"]

QUANTIZE = ("none", "sq8")
"""How vectors are stored: ``none`` (float32, exact) or ``sq8`` (8-bit scalar quantization)."""


@dataclass(frozen=True)
class VectorBuild:
    """What a build did.

    Attributes:
        folder: the index folder.
        vectors: vectors in the index.
        embedded: of those, texts embedded by this build (the rest came from the previous index's cache).
        dim: the vectors' dimension.
        bytes: the size of ``vectors.faiss``.
    """

    folder: Path
    vectors: int
    embedded: int
    dim: int
    bytes: int


def _faiss():
    try:
        import faiss
    except ImportError:  # pragma: no cover - depends on the install
        raise WorldforgeError("dense retrieval needs faiss: pip install -e '.[retrieval]'") from None
    return faiss


def _cached(folder: Path, key: str, dim: int, quantize: str) -> dict[str, np.ndarray]:
    """``text hash -> vector`` of the index already in ``folder`` when it was built with the model ``key`` (vectors of
    ``dim`` dimensions), exact or quantized as ``quantize`` asks (exact vectors serve both; quantized ones never
    become an exact index)."""
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return {}
    try:
        meta = json.loads(meta_path.read_text())
        if meta.get("key") != key or meta.get("dim") != dim or meta.get("quantize") not in ("none", quantize):
            return {}
        index = _faiss().read_index(str(folder / "vectors.faiss"))
        hashes = pl.read_parquet(folder / "docs.parquet", columns=["text_hash"])["text_hash"].to_list()
        vectors = index.reconstruct_n(0, index.ntotal) if index.ntotal else np.zeros((0, index.d), np.float32)
    except (OSError, ValueError, RuntimeError, pl.exceptions.PolarsError):  # a damaged old index: embed everything again
        return {}
    return dict(zip(hashes, vectors)) if len(hashes) == len(vectors) else {}


def build_vector_index(folder: str | Path, ids: Sequence[str], texts: Sequence[str], embedder: Embedder, quantize: str = "none",
                       extra: pl.DataFrame | None = None, meta: dict | None = None,
                       progress: Callable[[int], None] | None = None) -> VectorBuild:
    """Embed ``texts`` (cached by text hash) and write the index folder, replacing it when complete.

    Args:
        folder: the index folder (``<world>.dense`` beside a world file).
        ids: one identifier per text, in order (a hit's ``id``).
        texts: the documents' text as embedded (the model's document prompt is added by the embedder).
        embedder: the opened model.
        quantize: one of :data:`QUANTIZE`.
        extra: more columns for ``docs.parquet``, one row per text, in order.
        meta: more keys for ``meta.json``.
        progress: called with the number of texts embedded by each batch (a progress bar's advance).

    Raises:
        WorldforgeError: ``quantize`` is unknown, or ``ids``, ``texts`` and ``extra`` differ in length.
        EmbeddingError: the model or endpoint failed.
    """
    if quantize not in QUANTIZE:
        raise WorldforgeError(f"quantize must be one of {', '.join(QUANTIZE)}, not {quantize!r}")
    if len(ids) != len(texts) or (extra is not None and extra.height != len(texts)):
        raise WorldforgeError(f"{len(ids)} ids, {len(texts)} texts and {extra.height if extra is not None else len(texts)} rows of extra columns: one each per document")
    faiss = _faiss()
    target = Path(folder)
    key = embedder.config.key()
    cache = _cached(target, key, embedder.dim, quantize)
    hashes = [text_hash(t) for t in texts]
    todo = [i for i, h in enumerate(hashes) if h not in cache]
    fresh = embedder.embed_documents([texts[i] for i in todo], progress) if todo else np.zeros((0, embedder.dim), np.float32)
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    got = dict(zip(todo, fresh))
    for i, h in enumerate(hashes):
        vectors[i] = got[i] if i in got else cache[h]
    if quantize == "sq8":
        index = faiss.IndexScalarQuantizer(embedder.dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors if len(vectors) else np.zeros((1, embedder.dim), np.float32))
    else:
        index = faiss.IndexFlatIP(embedder.dim)
    if len(vectors):
        index.add(vectors)
    docs = pl.DataFrame({"id": list(ids), "text_hash": hashes}, schema={"id": pl.String, "text_hash": pl.String})
    if extra is not None:
        docs = pl.concat([docs, extra], how="horizontal")
    with atomic_dir(target) as tmp:
        faiss.write_index(index, str(tmp / "vectors.faiss"))
        docs.write_parquet(tmp / "docs.parquet")
        (tmp / "meta.json").write_text(json.dumps({**(meta or {}), "embedding": embedder.config.stored(), "key": key,
                                                   "dim": embedder.dim, "quantize": quantize, "count": len(texts)}, indent=1))
    return VectorBuild(target, len(texts), len(todo), embedder.dim, (target / "vectors.faiss").stat().st_size)


class VectorIndex:
    """An opened index folder (:func:`open_vector_index`).

    Attributes:
        folder: where it lives.
        meta: its ``meta.json``.
        docs: its ``docs.parquet`` (row ``i`` is vector ``i``).
    """

    def __init__(self, folder: Path, columns: tuple[str, ...] = ()):
        self.folder = folder
        self.meta = json.loads((folder / "meta.json").read_text())
        if not isinstance(self.meta, dict) or not isinstance(self.meta.get("embedding"), dict) or not isinstance(self.meta.get("dim"), int):
            raise ValueError("meta.json lacks its embedding configuration or dimension")
        self.docs = pl.read_parquet(folder / "docs.parquet")
        missing = [c for c in ("id", "text_hash", *columns) if c not in self.docs.columns]
        if missing:
            raise ValueError(f"docs.parquet lacks the columns {missing}")
        self.index = _faiss().read_index(str(folder / "vectors.faiss"))
        if self.index.ntotal != self.docs.height or self.index.d != self.meta["dim"]:
            raise ValueError(f"{self.index.ntotal} vectors of {self.index.d} dimensions for {self.docs.height} documents of {self.meta['dim']}")

    def search(self, vectors: np.ndarray, k: int) -> list[list[tuple[int, float]]]:
        """The ``k`` nearest documents of each query vector (shape ``(n, dim)``): ``[(row, inner product), ...]`` per
        query, best first (fewer when the index holds fewer documents).

        Raises:
            WorldforgeError: the vectors are not of the index's dimension (the model changed: rebuild the index).
        """
        if vectors.ndim != 2 or vectors.shape[1] != self.index.d:
            raise WorldforgeError(f"{self.folder}: query vectors of shape {vectors.shape}, the index holds {self.index.d} dimensions "
                                  "(the embedding model changed since: rebuild with `worldforge corpus index`)")
        if self.index.ntotal == 0 or k <= 0:
            return [[] for _ in range(len(vectors))]
        scores, rows = self.index.search(np.ascontiguousarray(vectors, dtype=np.float32), min(k, self.index.ntotal))
        return [[(int(r), float(s)) for r, s in zip(rr, ss) if r >= 0] for rr, ss in zip(rows, scores)]


def open_vector_index(folder: str | Path, columns: tuple[str, ...] = ()) -> VectorIndex:
    """Open an index folder; ``columns``: the ``docs.parquet`` columns the caller reads besides ``id`` and ``text_hash``.

    Raises:
        WorldforgeError: the folder is missing or damaged (one line: rebuild it).
    """
    folder = Path(folder)
    if not (folder / "meta.json").is_file():
        raise WorldforgeError(f"{folder}: no dense index here (build it with `worldforge corpus index WORLD --retriever dense`)")
    try:
        return VectorIndex(folder, columns)
    except (OSError, ValueError, RuntimeError, pl.exceptions.PolarsError) as exc:
        raise WorldforgeError(f"{folder}: damaged dense index ({type(exc).__name__}: {str(exc)[:160]}); rebuild it with "
                              "`worldforge corpus index`") from None
