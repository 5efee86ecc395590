"""How each dataset is built: the one place their defaults live (the CLI options and the Dagster
``DatasetsResource`` take theirs from these models).

Every config carries the held-out split (:class:`SplitConfig`): the same seed and test fraction
give the same split in every build, so the AgentWorldBench export never overlaps CPT or SFT.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SplitConfig(BaseModel):
    """The held-out split: a seeded hash of each trajectory id (:func:`~worldforge.datasets.sources.split_of`).

    Attributes:
        seed: seeds the split (and the sampling of SFT candidates).
        test_fraction: share of trajectories held out (0 ≤ f < 1) for the AgentWorldBench export.
    """

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    test_fraction: float = Field(0.1, ge=0, lt=1)


class CPTConfig(SplitConfig):
    """How a CPT dataset is built.

    Attributes:
        tokenizer: a Hugging Face tokenizer folder (or a cached hub id); ``None``: the local stand-in
            (:func:`~worldforge.datasets.tokenizer.resolve_tokenizer`), resolved when the build starts; the CLI and
            the Dagster assets give ``--tokenizer`` or ``WORLDFORGE_TOKENIZER``.
        max_tokens: the token budget of one sample; longer trajectories are split.
        mask_actions: no loss on the agent's actions (they are the policy's, not the environment's).
        include_pages: add every world corpus page as a sample.
        batch_size: samples per tokenizer batch.
    """

    tokenizer: str | None = None
    max_tokens: int = Field(4096, ge=16)
    mask_actions: bool = True
    include_pages: bool = True
    batch_size: int = Field(64, ge=1)


class SFTConfig(SplitConfig):
    """How an SFT dataset is built.

    Attributes:
        tokenizer: the Hugging Face tokenizer of the model to train (counts the budget); ``None``: the
            local stand-in, resolved when the build starts (as :attr:`CPTConfig.tokenizer`).
        max_context_tokens: prompt + target budget per sample.
        targets: ``informative`` turns only, or ``all`` turns.
        k: candidates per sample (rejection sampling).
        threshold: the aggregate verifier score (0–1) the best candidate needs.
        temperature, max_new_tokens: sampling of the candidates.
        batch_size: samples per backend call.
    """

    tokenizer: str | None = None
    max_context_tokens: int = Field(8192, ge=64)
    targets: Literal["informative", "all"] = "informative"
    k: int = Field(4, ge=1)
    threshold: float = Field(0.5, ge=0, le=1)
    temperature: float = Field(0.8, ge=0)
    max_new_tokens: int = Field(1024, ge=1)
    batch_size: int = Field(32, ge=1)


class ExportConfig(SplitConfig):
    """The held-out split and how much of it to export as AgentWorldBench records.

    Attributes:
        max_records_per_domain: cap per domain, first records in trajectory order (``None``: all).
    """

    max_records_per_domain: int | None = Field(None, ge=1)


def default(config: type[BaseModel], field: str):
    """The default of one field of a config model (for CLI options and resource fields)."""
    return config.model_fields[field].default
