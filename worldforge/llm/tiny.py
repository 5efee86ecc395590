"""A tiny random-init chat model, built locally, for tests and benchmarks.

No model can be downloaded here, so the plumbing (servers, structured output, parsing,
retries, caching) is exercised against a model built on the spot: a byte-level BPE tokenizer
trained with ``tokenizers`` on generated text (about a second), a ChatML chat template
(Qwen's), and a random-init Qwen2 config (``hidden_size`` 64–128, 2 layers) saved with
``save_pretrained``. Its text is noise; only its shapes are meaningful.

Needs the ``transformers`` and ``torch`` packages (``pip install torch==2.13.0`` on CPU).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from worldforge.errors import WorldforgeError

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""ChatML, the layout of Qwen's chat template (without tool-call extras)."""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_WORDS = (
    "the a of to in and is for on with as by at from web search page result snippet title date url "
    "price release launch model brand market phone colony mission team player score rank total share "
    "observation action turn environment predicted think tool call arguments query queries error "
    "found not memory added updated removed key value 2029 2030 2031 Jun Mar Dec 10 42 3.5 100 % $ "
    "{ } [ ] ( ) : , . \" ' | # * - _ / < > = \n"
).split(" ")


def _corpus(lines: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    tags = ["<think>", "</think>", "<predicted_observation>", "</predicted_observation>", "**Action:**",
            "**Environment Observation:**", "### Turn 1", '{"name": "web_search", "arguments": {"query": "x"}}']
    out = []
    for _ in range(lines):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 30))]
        if rng.random() < 0.3:
            words.insert(rng.randint(0, len(words)), rng.choice(tags))
        out.append(" ".join(words))
    return out


def build_tiny_tokenizer(out_dir: str | Path, vocab_size: int = 1024, seed: int = 0, texts: list[str] | None = None):
    """Train a byte-level BPE tokenizer with the ChatML template and save it to ``out_dir``.

    No tokenizer can be downloaded here; this is the local stand-in that datasets and tests
    use when none is configured (point ``--tokenizer`` at a real model folder for training data).

    Args:
        out_dir: the folder to write (created).
        vocab_size: the BPE vocabulary size (special tokens included).
        seed: seeds the generated training text.
        texts: training text (default: generated words and the world-model tags).

    Returns:
        The saved ``PreTrainedTokenizerFast`` (loadable with ``AutoTokenizer.from_pretrained(out_dir)``).

    Raises:
        WorldforgeError: ``transformers`` or ``tokenizers`` is not installed.
    """
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
        from transformers import PreTrainedTokenizerFast
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"building a tokenizer needs transformers and tokenizers ({exc.name} is missing): pip install transformers") from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts if texts is not None else _corpus(3000, seed), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None)
    fast.chat_template = CHAT_TEMPLATE
    fast.model_max_length = 8192
    fast.save_pretrained(out)
    return fast


def build_tiny_model(out_dir: str | Path, hidden_size: int = 64, layers: int = 2, vocab_size: int = 1024, seed: int = 0) -> Path:
    """Train a tokenizer and save a random-init Qwen2 causal LM to ``out_dir``.

    Args:
        out_dir: the folder to write (created; existing model files are overwritten).
        hidden_size: the model width (64–128 keeps it at a few MB).
        layers: decoder layers.
        vocab_size: the BPE vocabulary size (special tokens included).
        seed: seeds the training text and the weights.

    Returns:
        ``out_dir``, loadable by ``AutoModelForCausalLM``/``AutoTokenizer`` and ``vllm serve``.

    Raises:
        WorldforgeError: ``transformers`` or ``torch`` is not installed.
    """
    try:
        import torch
        from transformers import Qwen2Config, Qwen2ForCausalLM
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"building a tiny model needs transformers and torch ({exc.name} is missing): pip install torch==2.13.0 transformers") from None
    out = Path(out_dir)
    fast = build_tiny_tokenizer(out, vocab_size=vocab_size, seed=seed)
    torch.manual_seed(seed)
    heads = max(2, hidden_size // 32)
    config = Qwen2Config(
        vocab_size=len(fast), hidden_size=hidden_size, intermediate_size=hidden_size * 2, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=max(1, heads // 2), max_position_embeddings=8192,
        tie_word_embeddings=True, eos_token_id=fast.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=fast.convert_tokens_to_ids("<|endoftext|>"), bos_token_id=None,
        dtype="float32",
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out)
    (out / "worldforge_tiny.json").write_text(json.dumps({"hidden_size": hidden_size, "layers": layers, "vocab_size": len(fast), "seed": seed}))
    return out
