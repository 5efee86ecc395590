"""The ``openai`` backend: any OpenAI-compatible chat endpoint, first of all ``vllm serve``.

Requests go out asynchronously with at most ``concurrency`` in flight. Retries with
exponential backoff on connection errors, timeouts, 408/409/429 and 5xx are the ``openai``
client's own (``max_retries``); a request that still fails is recorded as a
:class:`~worldforge.llm.base.Failure` with the last error, never raised. :meth:`load` checks
the server once (``GET /models``) and raises a :class:`~worldforge.llm.base.BackendError`
naming the URL when it is unreachable.

Structured output uses ``response_format={"type": "json_schema", ...}``, which vLLM serves
with its structured-outputs backend (guidance, xgrammar).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from pydantic import Field, PrivateAttr

from worldforge.llm.base import (
    BackendError,
    Completion,
    Failure,
    GenerationParams,
    GenerationResult,
    OnResult,
    WorldModelBackend,
    WorldModelRequest,
    missing_extra,
    record,
)
from worldforge.settings import get_settings

log = logging.getLogger(__name__)


class OpenAIBackend(WorldModelBackend):
    """A client of an OpenAI-compatible server.

    Attributes:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (default ``WORLDFORGE_VLLM_URL``).
        model: the served model name; empty means the first model ``/models`` lists.
        api_key: sent as a bearer token (vLLM ignores it unless started with ``--api-key``).
        concurrency: requests in flight at most.
        timeout_s: seconds per attempt.
        max_retries: retries per request after the first attempt.
        extra_body: server-specific request fields (vLLM: ``ignore_eos``, ``min_tokens``, ``top_k`` ...).
    """

    kind = "openai"
    supports_json_schema = True

    base_url: str = Field(default_factory=lambda: get_settings().vllm_url)
    api_key: str = "EMPTY"
    concurrency: int = Field(32, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(3, ge=0)
    extra_body: dict = Field(default_factory=dict)
    _loaded: bool = PrivateAttr(False)

    def _client(self, max_retries: int | None = None, timeout: float | None = None):
        try:
            import openai
        except ImportError:  # pragma: no cover - a core dependency
            raise missing_extra("openai", self.kind) from None
        extra: dict[str, Any] = {}
        try:  # aiohttp as the transport: less client CPU per request at high concurrency (openai[aiohttp])
            extra["http_client"] = openai.DefaultAioHttpClient()
        except (AttributeError, RuntimeError, ImportError):  # pragma: no cover - without the extra
            pass
        return openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key,
            max_retries=self.max_retries if max_retries is None else max_retries,
            timeout=self.timeout_s if timeout is None else timeout, **extra,
        )

    def load(self) -> None:
        """Check the server once (``GET /models``) and settle the model: the first one served when ``model`` is empty. Idempotent.

        Raises:
            BackendError: the server is unreachable or answers with an HTTP error, serves no model, or does not
                serve ``model``.
        """
        if self._loaded:
            return
        models = _run(self._models())
        if not self.model:
            if not models:
                raise BackendError(f"the server at {self.base_url} serves no model")
            self.model = models[0]
        elif self.model not in models:
            raise BackendError(f"the server at {self.base_url} does not serve {self.model!r}; it serves: {', '.join(models)}")
        self._loaded = True

    async def _models(self) -> list[str]:
        import openai

        client = self._client(max_retries=2, timeout=10.0)
        try:
            return [m.id async for m in client.models.list()]
        except openai.APIConnectionError as exc:
            raise BackendError(f"cannot reach the world-model server at {self.base_url} ({exc.__cause__ or exc}); start one with `vllm serve MODEL` or pass --base-url") from None
        except openai.APIStatusError as exc:
            raise BackendError(f"the server at {self.base_url} answered GET /models with HTTP {exc.status_code}: {exc.message}") from None
        finally:
            await client.close()

    def unload(self) -> None:
        """Forget the server check; nothing else is held (every batch opens its own client)."""
        self._loaded = False

    def _generate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        return _run(self._agenerate(requests, n, params, on_result))

    async def _agenerate(self, requests: list[WorldModelRequest], n: int, params: GenerationParams, on_result: OnResult | None) -> GenerationResult:
        import openai

        result = GenerationResult()
        client = self._client()
        gate = asyncio.Semaphore(self.concurrency)
        kwargs: dict[str, Any] = {"model": self.model, "n": n, "temperature": params.temperature, "top_p": params.top_p, "max_tokens": params.max_tokens}
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        if params.json_schema is not None:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": "world_model_reply", "schema": params.json_schema, "strict": True}}

        async def one(req: WorldModelRequest) -> None:
            async with gate:
                try:
                    resp = await client.chat.completions.create(messages=list(req.messages), **kwargs)
                except openai.APIStatusError as exc:
                    outcome: list[Completion] | Failure = Failure(request_id=req.id, reason=f"HTTP {exc.status_code}: {_short(exc.message)}", attempts=self._attempts(exc.status_code))
                except openai.APITimeoutError:
                    outcome = Failure(request_id=req.id, reason=f"timeout after {self.timeout_s:g} s", attempts=self.max_retries + 1)
                except openai.APIConnectionError as exc:
                    outcome = Failure(request_id=req.id, reason=f"connection error: {_short(str(exc.__cause__ or exc))}", attempts=self.max_retries + 1)
                except (openai.OpenAIError, ValueError) as exc:  # malformed reply bodies and the like
                    outcome = Failure(request_id=req.id, reason=f"{type(exc).__name__}: {_short(str(exc))}")
                else:
                    usage = resp.usage
                    choices = sorted(resp.choices, key=lambda c: c.index)
                    outcome = [
                        Completion(
                            request_id=req.id, index=i, text=c.message.content or "", finish_reason=c.finish_reason,
                            prompt_tokens=usage.prompt_tokens if usage else 0,
                            completion_tokens=(usage.completion_tokens if usage and i == 0 else 0),
                        )
                        for i, c in enumerate(choices)
                    ]
                    if len(outcome) != n:
                        outcome = Failure(request_id=req.id, reason=f"the server returned {len(outcome)} choices, expected {n}")
                record(result, req, outcome, on_result)

        try:
            await asyncio.gather(*(one(r) for r in requests))
        finally:
            await client.close()
        return result

    def _attempts(self, status: int) -> int:
        return self.max_retries + 1 if status in (408, 409, 429) or status >= 500 else 1


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _run(coro):
    """``asyncio.run`` that also works when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
