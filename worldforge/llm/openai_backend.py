"""The ``openai`` backend: any OpenAI-compatible chat endpoint, first of all ``vllm serve``.

Requests go out asynchronously with at most ``concurrency`` in flight. Retries with
exponential backoff on connection errors, timeouts, 408/409/429 and 5xx are the ``openai``
client's own (``max_retries``); a request that still fails is recorded as a
:class:`~worldforge.llm.base.Failure` with the last error, never raised. A 2xx reply that is
no chat completion (an HTML page from a proxy, a body cut short, a JSON list, null
``message`` or ``content``) is not retried: it is a failure ``malformed reply (<what>)``. :meth:`load` checks
the server once (``GET /models``) and raises a :class:`~worldforge.llm.base.BackendError`
naming the URL when it is unreachable or answers with something other than a model list.

Structured output uses ``response_format={"type": "json_schema", ...}``, which vLLM serves
with its structured-outputs backend (guidance, xgrammar).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
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

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
"""The OpenAI-compatible API root (a URL) when the caller gives none: ``vllm serve`` on this machine, its port 8000.
The edges (the CLI, the Dagster resources, the servers) pass ``WORLDFORGE_VLLM_URL`` instead."""


class OpenAIBackend(WorldModelBackend):
    """A client of an OpenAI-compatible server.

    Attributes:
        base_url: e.g. ``http://127.0.0.1:8000/v1`` (default :data:`DEFAULT_BASE_URL`; the edges pass ``WORLDFORGE_VLLM_URL``).
        model: the served model name; empty means the first model ``/models`` lists.
        api_key: sent as a bearer token (vLLM ignores it unless started with ``--api-key``).
        concurrency: requests in flight at most.
        timeout_s: seconds per attempt.
        max_retries: retries per request after the first attempt.
        extra_body: server-specific request fields (vLLM: ``ignore_eos``, ``min_tokens``, ``top_k`` ...).
    """

    kind = "openai"
    supports_json_schema = True

    base_url: str = DEFAULT_BASE_URL
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
            BackendError: the server is unreachable, answers with an HTTP error or a malformed model list, serves
                no model, or does not serve ``model``.
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
        except (openai.OpenAIError, ValueError, AttributeError, TypeError) as exc:  # a body that is no model list (an HTML page ...)
            raise BackendError(f"the server at {self.base_url} answered GET /models with a malformed reply, not a model list ({type(exc).__name__}); "
                               "is it an OpenAI-compatible server?") from None
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
                    raw = await client.chat.completions.with_raw_response.create(messages=list(req.messages), **kwargs)
                    outcome: list[Completion] | Failure = await _completions(req.id, raw, n)
                except openai.APIStatusError as exc:
                    outcome = Failure(request_id=req.id, reason=f"HTTP {exc.status_code}: {_short(exc.message)}", attempts=self._attempts(exc.status_code))
                except openai.APIConnectionError as exc:  # APITimeoutError included
                    if isinstance(exc, openai.APITimeoutError) and _is_timeout(_root_cause(exc)):
                        outcome = Failure(request_id=req.id, reason=f"timeout after {self.timeout_s:g} s", attempts=self.max_retries + 1)
                    else:  # the aiohttp transport reports a server that closed the connection as a (connect) timeout
                        cause = exc.__cause__ or exc
                        outcome = Failure(request_id=req.id, reason=f"connection error: {_short(str(cause) or type(cause).__name__)}", attempts=self.max_retries + 1)
                except (openai.OpenAIError, ValueError) as exc:
                    outcome = Failure(request_id=req.id, reason=f"{type(exc).__name__}: {_short(str(exc))}")
                record(result, req, outcome, on_result)

        try:
            await asyncio.gather(*(one(r) for r in requests))
        finally:
            await client.close()
        return result

    def _attempts(self, status: int) -> int:
        return self.max_retries + 1 if status in (408, 409, 429) or status >= 500 else 1


async def _completions(request_id: str, raw: Any, n: int) -> list[Completion] | Failure:
    """The ``n`` completions of a 2xx reply, or a :class:`Failure` saying how the reply is malformed.

    ``raw`` is the ``openai`` client's raw response (``with_raw_response``). The client parses the
    body without validating it, so a reply that is no chat completion (an HTML page from a proxy, a
    JSON list, a body cut short) or one with null fields is caught here. Reasons start with
    ``malformed reply (<what>)``, a stable reason class: ``HTML, status 200``, ``invalid JSON, status
    200``, ``not JSON, status 200``, ``JSON list, status 200``, ``no choices``, ``0 choices, expected
    1``, ``null message``, ``null content``; then a colon and the start of the body where it helps.
    """
    from openai.types.chat import ChatCompletion

    http = raw.http_response
    try:
        resp = raw.parse()
        if inspect.isawaitable(resp):  # the client's next major makes parse() a coroutine
            resp = await resp
    except ValueError:  # a JSON content type over a body that is not JSON
        resp = None

    def malformed(what: str, body: str | None = None) -> Failure:
        return Failure(request_id=request_id, reason=f"malformed reply ({what})" + (f": {_short(body[:1000])}" if body else ""))

    if not isinstance(resp, ChatCompletion):
        text = http.text
        return malformed(f"{_body_kind(text, http.headers.get('content-type', ''))}, status {http.status_code}", text)
    choices = resp.choices
    if not isinstance(choices, list):
        return malformed("no choices")
    if len(choices) != n:
        return malformed(f"{len(choices)} choices, expected {n}")
    usage = resp.usage
    out = []
    for i, c in enumerate(sorted(choices, key=lambda c: c.index if isinstance(getattr(c, "index", None), int) else 0)):
        message = getattr(c, "message", None)
        if message is None:
            return malformed("null message")
        if not isinstance(getattr(message, "content", None), str):
            return malformed("null content" if getattr(message, "content", None) is None else "content is not text")
        out.append(Completion(
            request_id=request_id, index=i, text=message.content, finish_reason=getattr(c, "finish_reason", None),
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) if i == 0 else 0,
        ))
    return out


def _body_kind(text: str, content_type: str) -> str:
    """What a body that is no chat completion is: ``HTML``, ``invalid JSON`` (under a JSON content type),
    ``not JSON``, or ``JSON <list | string | number | ...>``."""
    if text.lstrip().startswith("<"):
        return "HTML"
    try:
        data = json.loads(text)
    except ValueError:
        return "invalid JSON" if "json" in content_type else "not JSON"
    return "JSON " + {list: "list", str: "string", int: "number", float: "number", bool: "boolean", dict: "object"}.get(type(data), "null")


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost ``__cause__`` of an exception: the transport's own error under the client's."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _is_timeout(cause: BaseException) -> bool:
    """Whether a transport error is a timeout (``TimeoutError``, httpx's ``ReadTimeout`` ...) rather than a lost connection."""
    return isinstance(cause, TimeoutError) or "Timeout" in type(cause).__name__


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
