"""Fine-tuning an embedding model on (query, positive[, negatives]) pairs with sentence-transformers' own trainer.

The loss is ``MultipleNegativesRankingLoss`` (InfoNCE with in-batch negatives, as e5 and most retrievers are trained:
van den Oord et al., 2018; Henderson et al., 2017), the trainer ``SentenceTransformerTrainer``. The pairs come from
``worldforge export retriever`` (questions and their evidence pages, with hard negatives) or, as weak supervision
in the manner of e5's title-passage pairs, from a corpus's page titles and passages.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

from worldforge.errors import WorldforgeError

__all__ = ["TrainReport", "train_embedding_model"]


@dataclass(frozen=True)
class TrainReport:
    """What a fine-tuning run did.

    Attributes:
        out_dir: the trained model's folder.
        examples: training rows.
        steps: optimizer steps.
        loss: the mean training loss of the last logged steps (``nan`` when none was logged).
    """

    out_dir: Path
    examples: int
    steps: int
    loss: float


def train_embedding_model(model_dir: str | Path, rows: dict[str, list[str]], out_dir: str | Path, epochs: int = 1,
                          batch_size: int = 64, learning_rate: float = 0.05, max_steps: int = -1, seed: int = 0) -> TrainReport:
    """Fine-tune the sentence-transformers model in ``model_dir`` on ``rows`` and save it to ``out_dir``.

    Args:
        model_dir: the model to start from (a folder).
        rows: columns ``anchor`` and ``positive`` (and optionally ``negative`` or ``negative_1`` ...), one string each
            per row; the anchor gets the model's query prompt, the others its document prompt.
        out_dir: where the trained model is saved (created).
        epochs: passes over the rows.
        batch_size: rows per step (each row's positive is a negative for the others).
        learning_rate: AdamW's rate (0.05 suits a static embedding model; a transformer wants about 2e-5).
        max_steps: stop after this many steps (-1: after ``epochs``).
        seed: seeds the shuffling.

    Raises:
        WorldforgeError: sentence-transformers is missing, or ``rows`` lacks ``anchor``/``positive`` or is empty.
    """
    if not rows.get("anchor") or "positive" not in rows or len(rows["anchor"]) != len(rows["positive"]):
        raise WorldforgeError("training rows need non-empty 'anchor' and 'positive' columns of the same length")
    try:
        from datasets import Dataset
        from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer, SentenceTransformerTrainingArguments
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise WorldforgeError(f"training an embedding model needs sentence-transformers and datasets ({exc.name} is missing): "
                              "pip install -e '.[retrieval]'") from None
    model = SentenceTransformer(str(model_dir), device="cpu")
    # a widget example of our own: the trainer would otherwise sample its model card's examples with the global random
    # module (changing the caller's random stream) behind a progress bar
    model.model_card_data.widget = [{"text": rows["anchor"][0]}]
    prompts = getattr(model, "prompts", None) or {}
    cols = ["anchor", "positive"] + sorted(c for c in rows if c.startswith("negative"))
    data = Dataset.from_dict({c: rows[c] for c in cols})
    col_prompts = {c: prompts.get("query" if c == "anchor" else "document", "") for c in cols}
    with tempfile.TemporaryDirectory() as tmp:
        args = SentenceTransformerTrainingArguments(
            output_dir=tmp, num_train_epochs=epochs, max_steps=max_steps, per_device_train_batch_size=batch_size,
            learning_rate=learning_rate, seed=seed, report_to="none", save_strategy="no", logging_steps=10, log_level="error",
            use_cpu=True, disable_tqdm=True, prompts={c: p for c, p in col_prompts.items() if p} or None,
            batch_sampler="no_duplicates",
        )
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=MultipleNegativesRankingLoss(model))
        with contextlib.redirect_stdout(io.StringIO()):  # the trainer prints each logged step's dict
            result = trainer.train()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save(str(out), create_model_card=False)
    return TrainReport(out, len(data), int(result.global_step), float(result.training_loss))
