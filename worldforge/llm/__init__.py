"""World-model backends behind one protocol (:class:`WorldModelBackend`), with caching and retries.

Backends (``kind``): ``openai`` (any OpenAI-compatible server, first of all ``vllm serve``),
``vllm`` (in-process ``vllm.LLM``), ``transformers`` (``AutoModelForCausalLM``) and
``grounded`` (no model: observations replayed from the world's corpus, the local default;
it lives with the environment it replays, :mod:`worldforge.simenv.grounded`). Heavy packages
are imported only when a backend loads.

:data:`BACKENDS` names each kind's class by import path and :func:`backend_class` imports it
on first use, so this package imports nothing above it (the layering rule of the README).
"""

from __future__ import annotations

import importlib
from typing import Any

from worldforge.llm.base import BackendError, Completion, Failure, GenerationParams, GenerationResult, WorldModelBackend, WorldModelRequest
from worldforge.llm.cache import CachedBackend, KVCache
from worldforge.llm.local_backends import TransformersBackend, VLLMBackend
from worldforge.llm.openai_backend import OpenAIBackend
from worldforge.settings import get_settings

BACKENDS: dict[str, str] = {
    "openai": "worldforge.llm.openai_backend:OpenAIBackend",
    "vllm": "worldforge.llm.local_backends:VLLMBackend",
    "transformers": "worldforge.llm.local_backends:TransformersBackend",
    "grounded": "worldforge.simenv.grounded:GroundedBackend",
}
"""The backend class of each kind, as ``module:Class``."""


def backend_class(kind: str) -> type[WorldModelBackend]:
    """The class of a backend kind (imported on first use).

    Raises:
        BackendError: an unknown kind.
    """
    path = BACKENDS.get(kind)
    if path is None:
        raise BackendError(f"unknown world-model backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def make_backend(kind: str | None = None, **settings: Any) -> WorldModelBackend:
    """A backend by kind, with its settings (``model``, ``base_url``, ``concurrency`` ...).

    Args:
        kind: a key of :data:`BACKENDS`; ``None``: the one ``WORLDFORGE_ENV`` selects
            (``grounded`` locally, ``openai`` on ``gpu``; :class:`worldforge.settings.Settings`).
        settings: the backend's fields. ``None`` values are dropped, so CLI options pass through
            as they are; ``warehouse`` goes only to backends that read the world (``grounded``).
            Unset fields take their defaults from the settings (``base_url`` from
            ``WORLDFORGE_VLLM_URL``, ``model`` from ``WORLDFORGE_VLLM_MODEL``, ``warehouse`` from
            ``WORLDFORGE_WAREHOUSE``).

    Raises:
        BackendError: an unknown kind, or a setting the backend does not take.
    """
    kind = kind or get_settings().world_model_kind
    cls = backend_class(kind)
    settings = {k: v for k, v in settings.items() if v is not None}
    if "warehouse" not in cls.model_fields:
        settings.pop("warehouse", None)
    unknown = sorted(set(settings) - set(cls.model_fields))
    if unknown:
        raise BackendError(f"the {kind!r} backend does not take {', '.join(unknown)} (it takes: {', '.join(sorted(cls.model_fields))})")
    return cls(**settings)


__all__ = [
    "BACKENDS", "BackendError", "CachedBackend", "Completion", "Failure", "GenerationParams", "GenerationResult",
    "KVCache", "OpenAIBackend", "TransformersBackend", "VLLMBackend", "WorldModelBackend", "WorldModelRequest",
    "backend_class", "make_backend",
]
