"""World-model backends behind one protocol (:class:`WorldModelBackend`), with caching and retries.

Backends: :class:`OpenAIBackend` (any OpenAI-compatible server, first of all ``vllm serve``),
:class:`VLLMBackend` (in-process ``vllm.LLM``), :class:`TransformersBackend`
(``AutoModelForCausalLM``); the ``grounded`` backend (:mod:`worldforge.worldmodel.grounded`, which replays the search
environment), and the registry of kinds, ``make_backend`` and the
configured world model are in :mod:`worldforge.worldmodel.backends`. Heavy packages are imported only
when a backend loads.
"""

from __future__ import annotations

from worldforge.llm.base import BackendError, Completion, Failure, GenerationParams, GenerationResult, WorldModelBackend, WorldModelRequest
from worldforge.llm.cache import CachedBackend, KVCache
from worldforge.llm.local_backends import TransformersBackend, VLLMBackend
from worldforge.llm.openai_backend import OpenAIBackend

__all__ = [
    "BackendError", "CachedBackend", "Completion", "Failure", "GenerationParams", "GenerationResult",
    "KVCache", "OpenAIBackend", "TransformersBackend", "VLLMBackend", "WorldModelBackend", "WorldModelRequest",
]
