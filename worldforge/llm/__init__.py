"""World-model backends behind one protocol, AgentWorldBench prompts, grounding and caching.

Backends (``kind``): ``openai`` (any OpenAI-compatible server, first of all ``vllm serve``),
``vllm`` (in-process ``vllm.LLM``), ``transformers`` (``AutoModelForCausalLM``) and
``grounded`` (no model: rendered from the world tables; the default). Heavy packages are
imported only when a backend loads.
"""

from __future__ import annotations

from typing import Any

from worldforge.llm.base import (
    BackendError,
    Completion,
    Failure,
    GenerationParams,
    GenerationResult,
    WorldModelBackend,
    WorldModelRequest,
)
from worldforge.llm.cache import CachedBackend, KVCache
from worldforge.llm.grounded import GroundedBackend
from worldforge.llm.local_backends import TransformersBackend, VLLMBackend
from worldforge.llm.openai_backend import OpenAIBackend

BACKENDS: dict[str, type[WorldModelBackend]] = {
    "openai": OpenAIBackend,
    "vllm": VLLMBackend,
    "transformers": TransformersBackend,
    "grounded": GroundedBackend,
}
"""The backend classes by kind."""


def make_backend(kind: str = "grounded", **settings: Any) -> WorldModelBackend:
    """A backend by kind, with its settings (``model``, ``base_url``, ``warehouse`` ...).

    Settings that are ``None`` are dropped, so CLI options can be passed through as they are.

    Raises:
        BackendError: an unknown kind or a setting the backend does not take.
    """
    cls = BACKENDS.get(kind)
    if cls is None:
        raise BackendError(f"unknown world-model backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    settings = {k: v for k, v in settings.items() if v is not None}
    unknown = sorted(set(settings) - set(cls.model_fields))
    if unknown:
        raise BackendError(f"the {kind!r} backend does not take {', '.join(unknown)} (it takes: {', '.join(sorted(cls.model_fields))})")
    return cls(**settings)


__all__ = [
    "BACKENDS", "BackendError", "CachedBackend", "Completion", "Failure", "GenerationParams", "GenerationResult",
    "GroundedBackend", "KVCache", "OpenAIBackend", "TransformersBackend", "VLLMBackend", "WorldModelBackend",
    "WorldModelRequest", "make_backend",
]
