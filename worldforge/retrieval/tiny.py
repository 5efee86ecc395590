"""A tiny random-init embedding model, built locally, for tests, the demo and the retrieval benchmark.

No model can be downloaded here, so dense retrieval is exercised against a model built on the spot, in
the layout of a sentence-transformers model folder: a WordPiece tokenizer built from the
given text (a corpus's pages: its most frequent words and every character, counted in about a second, the same
vocabulary on every run), a random-init static embedding (sentence-transformers'
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

__all__ = ["E5_PROMPTS", "build_tiny_embedding_model", "build_tiny_encoder"]

E5_PROMPTS = {"query": "query: ", "document": "passage: "}
"""The e5 family's prompts (Wang et al., 2022, "Text Embeddings by Weakly-Supervised Contrastive Pre-training"):
a query and a passage are prefixed differently; Search-R1's default retriever is e5."""

_WORDS = ("the a of in on and to with by for is was has its price launch model brand team player season colony habitat "
          "mission market phone 2029 2030 2031 rank total share highest lowest largest more fewer announced founded "
          "record page news forum profile dataset archive compare").split()


def _default_texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 25))) for _ in range(2000)]


def _word_tokenizer(texts: Iterable[str], vocab_size: int, special: tuple[str, ...] = ("[PAD]", "[UNK]")):
    """A WordPiece tokenizer whose vocabulary is the texts' most frequent words (ties by the word itself) and every
    character seen, alone and as a word's continuation (``##x``): an unseen word is spelled out, never unknown. Built by
    counting, not by ``tokenizers``' trainer, whose choice among equally frequent merges changes from run to run."""
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w, _ in pre.pre_tokenize_str(norm.normalize_str(text)))
    chars = sorted({ch for w in counts for ch in w})
    vocab = [*special, *chars, *(f"##{ch}" for ch in chars)]
    room = max(0, vocab_size - len(vocab))
    vocab += [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if len(w) > 1][:room]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(dict.fromkeys(vocab))}, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer, tok.pre_tokenizer, tok.decoder = norm, pre, decoders.WordPiece()
    return tok


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
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"building an embedding model needs sentence-transformers and torch ({exc.name} is missing): "
                              "pip install -e '.[retrieval]'") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = _word_tokenizer(texts if texts is not None else _default_texts(seed), vocab_size)
    torch.manual_seed(seed)
    weights = torch.randn(tok.get_vocab_size(), dim) / dim ** 0.5
    model = SentenceTransformer(modules=[StaticEmbedding(tok, embedding_weights=weights), Normalize()], device="cpu",
                                prompts=dict(E5_PROMPTS))
    model.save(str(out), create_model_card=False)
    (out / "worldforge_tiny.json").write_text(json.dumps({"dim": dim, "vocab_size": tok.get_vocab_size(), "seed": seed}))
    return out


def build_tiny_encoder(out_dir: str | Path, texts: Iterable[str] | None = None, hidden_size: int = 64, layers: int = 2,
                       vocab_size: int = 4096, max_length: int = 512, seed: int = 0) -> Path:
    """Build a WordPiece tokenizer (:func:`_word_tokenizer`, with BERT's special tokens) and save a random-init BERT encoder (``transformers``' layout) to ``out_dir``: a model
    ``vllm serve OUT_DIR --runner pooling`` serves as an embedding model (``/v1/embeddings``), for tests of
    ``--embedding-url``.

    Args:
        out_dir: the folder to write (created).
        texts: the tokenizer's training text (default: generated words).
        hidden_size: the embedding dimension.
        layers: encoder layers.
        vocab_size: the vocabulary size.
        max_length: the longest input in tokens.
        seed: seeds the generated text and the weights.

    Raises:
        WorldforgeError: ``transformers`` or ``torch`` is not installed.
    """
    try:
        import torch
        from tokenizers import processors
        from transformers import BertConfig, BertModel, PreTrainedTokenizerFast
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"building an encoder needs transformers and torch ({exc.name} is missing)") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = _word_tokenizer(texts if texts is not None else _default_texts(seed), vocab_size, ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"))
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[
        ("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
                                   mask_token="[MASK]", model_max_length=max_length)
    fast.save_pretrained(out)
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=len(fast), hidden_size=hidden_size, num_hidden_layers=layers,
                         num_attention_heads=max(1, hidden_size // 32), intermediate_size=hidden_size * 2,
                         max_position_embeddings=max_length, pad_token_id=fast.pad_token_id)).save_pretrained(out)
    return out
