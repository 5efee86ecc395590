"""A tiny random-init embedding model, built locally, for tests, the demo and the retrieval benchmark.

No model can be downloaded here, so dense retrieval is exercised against a model built on the spot, in
the layout of a sentence-transformers model folder: a WordPiece tokenizer trained with ``tokenizers`` on the
given text (a corpus's pages, about a second), a random-init static embedding (sentence-transformers'
``StaticEmbedding``: the mean of per-token vectors, the architecture of model2vec's and of
``static-retrieval-mrl-en-v1``), L2 normalisation, and e5's prompts (``"query: "``, ``"passage: "``) in
``config_sentence_transformers.json``. Untrained, its vectors still carry the words two texts share (the
same token, the same vector); trained on a retriever export (``bench/retrieval.py``, sentence-transformers'
own trainer) it learns which words matter. A static model embeds a query in microseconds on a CPU, where
a transformer encoder of the same width takes milliseconds: dense search stays as fast as BM25's.

Needs the ``sentence-transformers`` and ``torch`` packages (the ``retrieval`` extra).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path

from worldforge.errors import WorldforgeError

__all__ = ["E5_PROMPTS", "build_tiny_embedding_model"]

E5_PROMPTS = {"query": "query: ", "document": "passage: "}
"""The e5 family's prompts (Wang et al., 2022, "Text Embeddings by Weakly-Supervised Contrastive Pre-training"):
a query and a passage are prefixed differently; Search-R1's default retriever is e5."""

_WORDS = ("the a of in on and to with by for is was has its price launch model brand team player season colony habitat "
          "mission market phone 2029 2030 2031 rank total share highest lowest largest more fewer announced founded "
          "record page news forum profile dataset archive compare").split()


def _default_texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 25))) for _ in range(2000)]


def build_tiny_embedding_model(out_dir: str | Path, texts: Iterable[str] | None = None, dim: int = 64,
                               vocab_size: int = 8192, seed: int = 0) -> Path:
    """Train a WordPiece tokenizer on ``texts`` and save a random-init static sentence-transformers model to ``out_dir``.

    Args:
        out_dir: the folder to write (created; existing model files are overwritten).
        texts: the tokenizer's training text (a corpus's pages; default: generated words).
        dim: the embedding dimension (64: 2 MiB of weights at the default vocabulary, 256 bytes a page's vector).
        vocab_size: the WordPiece vocabulary size (special tokens included).
        seed: seeds the generated text and the weights.

    Returns:
        ``out_dir``, loadable by ``SentenceTransformer(out_dir)`` and by worldforge's ``--embedding-model``.

    Raises:
        WorldforgeError: ``sentence-transformers`` or ``torch`` is not installed.
    """
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding
        from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"building an embedding model needs sentence-transformers and torch ({exc.name} is missing): "
                              "pip install -e '.[retrieval]'") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=["[PAD]", "[UNK]"], show_progress=False)
    tok.train_from_iterator(list(texts) if texts is not None else _default_texts(seed), trainer=trainer)
    torch.manual_seed(seed)
    weights = torch.randn(tok.get_vocab_size(), dim) / dim ** 0.5
    model = SentenceTransformer(modules=[StaticEmbedding(tok, embedding_weights=weights), Normalize()], device="cpu",
                                prompts=dict(E5_PROMPTS))
    model.save(str(out))
    (out / "worldforge_tiny.json").write_text(json.dumps({"dim": dim, "vocab_size": tok.get_vocab_size(), "seed": seed}))
    return out
