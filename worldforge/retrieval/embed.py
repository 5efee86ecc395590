"""Text to vectors: a sentence-transformers model folder, or an OpenAI-compatible ``/v1/embeddings`` endpoint.

An :class:`EmbeddingConfig` names the model and the prompts; :func:`embedder` opens it (once per process and
configuration). Every vector is L2-normalised (``float32``, shape ``(n, dim)``), so an inner product is the cosine
similarity that FAISS ranks by.

Prompts: embedding models are trained with different prefixes for queries and documents — e5's ``"query: "`` and
``"passage: "`` (Wang et al., 2022), Qwen3-Embedding's ``"Instruct: <task>\\nQuery: "`` for queries and nothing for
documents. A prompt given in the configuration is prepended as is; without one, a sentence-transformers model's own
``prompts`` (``config_sentence_transformers.json``: ``query``, and ``document`` or ``passage``) are used, and an
endpoint gets the bare text.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from worldforge.errors import WorldforgeError

__all__ = ["EmbeddingConfig", "EmbeddingError", "Embedder", "embedder", "local_model", "text_hash"]

BATCH = 64
"""Texts per call of the model or the endpoint while embedding a corpus."""


class EmbeddingError(WorldforgeError):
    """The embedding model or endpoint is missing, unreachable, or answered something that is not vectors."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Which embedding model a dense index uses (stored beside the index, read again to embed queries).

    Attributes:
        model: a sentence-transformers model folder, or (with ``url``) the served model's name (empty: the first
            model the endpoint lists).
        url: an OpenAI-compatible endpoint (``http://HOST:PORT/v1``) serving ``/v1/embeddings`` (``vllm serve
            MODEL --runner pooling`` of an embedding model does); empty: the model folder is loaded in this process.
        query_prompt: prepended to every query (``None``: the model's own ``query`` prompt, if any).
        document_prompt: prepended to every page (``None``: the model's own ``document``/``passage`` prompt, if any).
        api_key: the endpoint's key (never stored: ``stored()`` leaves it out; default ``OPENAI_API_KEY``).
    """

    model: str = ""
    url: str = ""
    query_prompt: str | None = None
    document_prompt: str | None = None
    api_key: str = ""

    def key(self) -> str:
        """What a vector depends on, as a short hash: the model (a folder's path and the size and modification time of
        its files, so that a model retrained in place is another model), the endpoint and the document prompt. Vectors
        made under another key are never reused. Behind an endpoint, the served model is known by its name only: give
        ``model`` when the server may change what it serves."""
        return hashlib.sha256(f"{self.model}\x1f{_fingerprint(self)}\x1f{self.url}\x1f{self.document_prompt}".encode()).hexdigest()[:16]

    def stored(self) -> dict:
        """The configuration as stored beside an index (the API key left out)."""
        return {k: v for k, v in asdict(self).items() if k != "api_key"}

    @classmethod
    def from_stored(cls, data: dict) -> EmbeddingConfig:
        """The configuration a stored index was built with (:meth:`stored`)."""
        return cls(**{k: data.get(k, getattr(cls, k)) for k in ("model", "url", "query_prompt", "document_prompt")})


def local_model(model: str) -> str:
    """A model folder's absolute path (what an index stores, so that it is found from any working directory), or
    ``model`` unchanged when it is not an existing folder (a served model's name)."""
    return str(Path(model).resolve()) if model and Path(model).is_dir() else model


def _fingerprint(config: EmbeddingConfig) -> str:
    """Size and modification time of a local model folder's files (recursively); empty for an endpoint."""
    folder = Path(config.model)
    if config.url or not config.model or not folder.is_dir():
        return ""
    return ";".join(f"{p.relative_to(folder)}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in sorted(folder.rglob("*")) if p.is_file())


def text_hash(text: str) -> str:
    """A page text's cache key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Embedder:
    """One opened embedding model: a backend's ``encode`` (texts to vectors) with the prompts it is used with.

    Attributes:
        config: what it was opened from.
        dim: the vectors' dimension.
        query_prompt, document_prompt: prepended to queries and to pages: the configuration's, else the model's own
            (``query``, and ``document`` or ``passage``), else none.
    """

    def __init__(self, config: EmbeddingConfig, encode: Callable[[list[str]], np.ndarray], dim: int, prompts: dict | None = None):
        prompts = prompts or {}
        self.config, self._encode, self.dim = config, encode, dim
        self.query_prompt = config.query_prompt if config.query_prompt is not None else prompts.get("query", "")
        self.document_prompt = (config.document_prompt if config.document_prompt is not None
                                else prompts.get("document", prompts.get("passage", "")))

    def _embed(self, texts: list[str], prompt: str) -> np.ndarray:
        return self._checked(self._encode([prompt + t for t in texts] if prompt else texts), len(texts))

    def embed_documents(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Page vectors, ``float32`` of shape ``(len(texts), dim)``, L2-normalised, in batches of :data:`BATCH`
        (``progress`` is called with each batch's size).

        Raises:
            EmbeddingError: the model or endpoint failed, or returned vectors of another dimension.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(texts), BATCH):
            out[i:i + BATCH] = self._embed(list(texts[i:i + BATCH]), self.document_prompt)
            if progress is not None:
                progress(min(BATCH, len(texts) - i))
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors, ``float32`` of shape ``(len(texts), dim)``, L2-normalised.

        Raises:
            EmbeddingError: as :meth:`embed_documents`.
        """
        return self._embed(list(texts), self.query_prompt)

    def _checked(self, vectors: np.ndarray, n: int) -> np.ndarray:
        v = np.asarray(vectors, dtype=np.float32)
        if v.shape != (n, self.dim):
            raise EmbeddingError(f"embedding model {self.config.model or self.config.url}: got vectors of shape {v.shape}, "
                                 f"expected ({n}, {self.dim})")
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(norms == 0, 1, norms)


_OPEN: dict[tuple[EmbeddingConfig, str], Embedder] = {}
_LOCK = threading.Lock()


def embedder(config: EmbeddingConfig) -> Embedder:
    """The opened model of a configuration, loaded once per process (again when the folder's files change).

    An endpoint's API key is the configuration's, else the environment's ``OPENAI_API_KEY`` (an index stores no key:
    set it for every process that searches).

    Raises:
        EmbeddingError: the configuration names no model, the folder is not a sentence-transformers model, the
            package is missing, or the endpoint cannot be reached (one line saying what to fix).
    """
    with _LOCK:
        key = (config, _fingerprint(config))
        got = _OPEN.get(key)
        if got is None:
            got = _OPEN[key] = _endpoint(config) if config.url else _local(config)
        return got


def _local(config: EmbeddingConfig) -> Embedder:
    if not config.model:
        raise EmbeddingError("dense retrieval needs an embedding model: --embedding-model FOLDER (a sentence-transformers "
                             "model) or --embedding-url URL (an OpenAI-compatible /v1/embeddings endpoint)")
    folder = Path(config.model)
    if not folder.is_dir():
        raise EmbeddingError(f"{config.model}: no such model folder (models cannot be downloaded here: give a local "
                             "sentence-transformers folder, e.g. one `worldforge corpus embedder DIR` builds)")
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise EmbeddingError(f"{config.model}: not a sentence-transformers or transformers model folder (no modules.json or config.json)")
    static = _static_folder(config, folder)
    if static is not None:
        return static
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - depends on the install
        raise EmbeddingError("dense retrieval with a local model needs sentence-transformers: pip install -e '.[retrieval]'") from None
    try:
        model = SentenceTransformer(str(folder), device="cpu")
    except Exception as exc:  # noqa: BLE001 - whatever the loader raises, one line names the folder
        raise EmbeddingError(f"{config.model}: cannot load the embedding model ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
    dim = (model.get_embedding_dimension() if hasattr(model, "get_embedding_dimension") else model.get_sentence_embedding_dimension())

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(texts, batch_size=BATCH, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)

    return Embedder(config, encode, int(dim), getattr(model, "prompts", None))


def _static_folder(config: EmbeddingConfig, folder: Path) -> Embedder | None:
    """A static embedding model's folder (``modules.json``: sentence-transformers' ``StaticEmbedding``, then
    ``Normalize`` modules or none) opened without torch: its token vectors read with ``safetensors``, its tokenizer with
    ``tokenizers``, its prompts from ``config_sentence_transformers.json``; a query or page vector is the mean of its
    tokens' vectors, as the module's ``EmbeddingBag`` computes it (the numbers ``model.encode`` gives; a query in about 30 µs instead of 400 µs). A server
    that searches with it does not load torch (about 500 MiB) or sentence-transformers (seconds). ``None`` for any
    other model."""
    if not (folder / "modules.json").is_file():  # a transformers folder: sentence-transformers wraps it (mean pooling)
        return None
    try:
        modules = json.loads((folder / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if not kinds or kinds[0] != "StaticEmbedding" or any(k != "Normalize" for k in kinds[1:]):
            return None
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        where = folder / modules[0].get("path", "")
        weights = np.asarray(load_file(str(where / "model.safetensors"))["embedding.weight"], dtype=np.float32)
        tok = Tokenizer.from_file(str(where / "tokenizer.json"))
        prompts = {}
        if (folder / "config_sentence_transformers.json").is_file():
            prompts = json.loads((folder / "config_sentence_transformers.json").read_text()).get("prompts") or {}
    except Exception as exc:  # noqa: BLE001 - a damaged folder, whatever the readers raise: one line
        raise EmbeddingError(f"{config.model}: cannot read the static embedding model ({type(exc).__name__}: {str(exc)[:200]})") from None
    tok.no_padding()

    def encode(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), weights.shape[1]), dtype=np.float32)
        for i, enc in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
            if enc.ids:
                out[i] = weights[enc.ids].mean(axis=0)
        return out

    return Embedder(config, encode, int(weights.shape[1]), prompts)


def _endpoint(config: EmbeddingConfig) -> Embedder:
    try:
        import openai
    except ImportError:  # pragma: no cover - a dependency of the project
        raise EmbeddingError("an embedding endpoint needs the openai package: pip install openai") from None
    client = openai.OpenAI(base_url=config.url.rstrip("/"), api_key=config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
                           timeout=60.0, max_retries=2)
    try:
        model = config.model or client.models.list().data[0].id
        probe = client.embeddings.create(model=model, input=["probe"]).data[0].embedding
    except (openai.APIError, IndexError) as exc:
        raise EmbeddingError(f"{config.url}: no embedding model answers there ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200] if str(exc) else 'no models listed'}); start one with "
                             "`vllm serve MODEL --runner pooling` or give --embedding-model FOLDER") from None

    def call(texts: list[str]) -> np.ndarray:
        try:
            got = client.embeddings.create(model=model, input=texts).data
        except openai.APIError as exc:
            raise EmbeddingError(f"{config.url}: embedding request failed ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
        return np.array([d.embedding for d in sorted(got, key=lambda d: d.index)], dtype=np.float32)

    return Embedder(config, call, len(probe))
