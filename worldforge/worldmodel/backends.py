"""Which world-model backend a name means: the registry of backend kinds, and the configured world model.

The kinds: ``openai`` (any OpenAI-compatible server, first of all ``vllm serve``), ``vllm``
(in-process ``vllm.LLM``), ``transformers`` (``AutoModelForCausalLM``) and ``grounded`` (no model:
observations replayed from a world's corpus, :mod:`worldforge.worldmodel.grounded`). The registry sits
with the world model, above both :mod:`worldforge.llm` (the protocol and the model backends) and
:mod:`worldforge.simenv` (the environment the grounded backend replays), so neither imports the other.

:func:`make_backend` builds any backend from explicit settings (a judge, a server under test);
:func:`world_model` builds *the* world model, filling what is not given from the settings
(``WORLDFORGE_ENV``, ``WORLDFORGE_VLLM_URL``, ``WORLDFORGE_VLLM_MODEL``); the warehouse a ``grounded``
world model replays is passed in (``warehouse=``), never read from the settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from worldforge.llm import BackendError, OpenAIBackend, TransformersBackend, VLLMBackend, WorldModelBackend
from worldforge.worldmodel.grounded import GroundedBackend

if TYPE_CHECKING:
    from worldforge.settings import Settings

BACKENDS: dict[str, type[WorldModelBackend]] = {
    "openai": OpenAIBackend,
    "vllm": VLLMBackend,
    "transformers": TransformersBackend,
    "grounded": GroundedBackend,
}
"""The backend class of each kind."""


def make_backend(kind: str, **settings: Any) -> WorldModelBackend:
    """A backend by kind, with its settings (``model``, ``base_url``, ``concurrency`` ...).

    Args:
        kind: a key of :data:`BACKENDS`.
        settings: the backend's fields. ``None`` values are dropped, so CLI options pass through
            as they are; ``warehouse`` goes only to backends that read the world (``grounded``).

    Raises:
        BackendError: an unknown kind, or a setting the backend does not take.
    """
    cls = BACKENDS.get(kind)
    if cls is None:
        raise BackendError(f"unknown world-model backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    settings = {k: v for k, v in settings.items() if v is not None}
    if "warehouse" not in cls.model_fields:
        settings.pop("warehouse", None)
    unknown = sorted(set(settings) - set(cls.model_fields))
    if unknown:
        raise BackendError(f"the {kind!r} backend does not take {', '.join(unknown)} (it takes: {', '.join(sorted(cls.model_fields))})")
    return cls(**settings)


def world_model(kind: str | None = None, base_url: str | None = None, model: str | None = None, *, settings: Settings,
                **options: Any) -> WorldModelBackend:
    """The world model: :func:`make_backend` with what is not given taken from ``settings`` (the caller's, read at an edge).

    ``kind`` defaults to the one ``WORLDFORGE_ENV`` selects (``settings.world_model_kind``:
    ``grounded`` locally, ``openai`` on ``gpu``); an ``openai`` world model defaults to
    ``settings.vllm_url`` and ``settings.vllm_model`` (empty: the first model the server lists).
    ``options`` go to the backend (``warehouse``, ``concurrency`` ...).

    Raises:
        BackendError: as :func:`make_backend`.
    """
    s = settings
    kind = kind or s.world_model_kind
    if kind == "openai":
        base_url = base_url or s.vllm_url
        model = model or s.vllm_model or None
    return make_backend(kind, base_url=base_url, model=model, **options)
