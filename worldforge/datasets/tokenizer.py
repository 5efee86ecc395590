"""Loading the Hugging Face tokenizer a dataset is built for.

Datasets are tokenized with the tokenizer of the model that will be trained on them: a local
folder saved with ``save_pretrained`` (``tokenizer.json`` + ``tokenizer_config.json``), or a
hub name already in the local cache (nothing is downloaded here). When none is configured,
:func:`default_tokenizer` trains worldforge's local byte-level BPE stand-in once under
``<warehouse>/models/tokenizer`` and says so: token counts then describe that tokenizer, not
your model's.
"""

from __future__ import annotations

import logging
from pathlib import Path

from worldforge.errors import WorldforgeError
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)


class TokenizerError(WorldforgeError):
    """The configured tokenizer cannot be loaded or cannot give token offsets."""


def load_tokenizer(name_or_path: str | Path):
    """A fast (Rust-backed) ``transformers`` tokenizer.

    Args:
        name_or_path: a tokenizer folder, or a hub id present in the local cache.

    Returns:
        A ``PreTrainedTokenizerFast``; its ``backend_tokenizer`` gives token offsets.

    Raises:
        TokenizerError: the folder is missing, holds no tokenizer, or the tokenizer is a slow
            (Python) one without offsets.
    """
    try:
        from transformers import AutoTokenizer
    except ImportError:  # pragma: no cover - depends on the install
        raise TokenizerError("tokenizing datasets needs transformers: pip install transformers (or `pip install -e '.[models]'`)") from None
    where = str(name_or_path)
    if Path(where).expanduser().exists() and not (Path(where).expanduser() / "tokenizer_config.json").exists() and not (Path(where).expanduser() / "tokenizer.json").exists():
        raise TokenizerError(f"{where}: no tokenizer here (expected tokenizer.json or tokenizer_config.json, as save_pretrained writes)")
    try:
        tok = AutoTokenizer.from_pretrained(where, local_files_only=True)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(f"{where}: cannot load a tokenizer ({first})") from None
    if not getattr(tok, "is_fast", False):
        raise TokenizerError(f"{where}: a slow tokenizer ({type(tok).__name__}); datasets need a fast one (tokenizer.json) for token offsets")
    tok.model_max_length = 1 << 60  # we count long conversations on purpose; budgets are ours, not the model's
    return tok


def default_tokenizer(warehouse: Warehouse) -> Path:
    """The local stand-in tokenizer under ``<warehouse>/models/tokenizer``, trained on first use."""
    path = warehouse.tokenizer
    if not (path / "tokenizer.json").exists():
        from worldforge.llm.tiny import build_tiny_tokenizer

        log.warning("no tokenizer configured: training worldforge's local byte-level BPE tokenizer at %s "
                    "(pass --tokenizer / WORLDFORGE_TOKENIZER with your model's folder for real training data)", path)
        build_tiny_tokenizer(path, vocab_size=4096)
    return path


def resolve_tokenizer(tokenizer: str | None, warehouse: Warehouse) -> str:
    """The tokenizer a dataset is built with: ``tokenizer`` when given (the CLI and the Dagster assets pass
    ``--tokenizer`` or ``WORLDFORGE_TOKENIZER``), else the local stand-in of :func:`default_tokenizer` (trained on
    first use)."""
    return tokenizer or str(default_tokenizer(warehouse))


def has_chat_template(tok) -> bool:
    """Whether a tokenizer carries a chat template (``apply_chat_template`` works)."""
    return bool(getattr(tok, "chat_template", None))
