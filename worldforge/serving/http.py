"""The HTTP plumbing every worldforge server shares (the search server, Search-R1's ``/retrieve``).

* :class:`BodyLimit`: a body over :data:`MAX_BODY_BYTES` is answered 413, before it is read when
  its ``Content-Length`` says so;
* :func:`parse_body`: a body as JSON, its strings made storable (lone surrogates become their
  escape text), nesting bounded by :data:`MAX_JSON_DEPTH`;
* :func:`json_errors`: every error as ``{"error": "..."}`` with its status; an unexpected exception
  as a 500 that names only its type;
* :class:`SafeJSONResponse`: a JSON reply that cannot fail on text;
* :func:`release_memory`: freed heap handed back to the OS after a burst of sessions.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
from collections.abc import Callable
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from worldforge.trajectories.model import storable

MAX_BODY_BYTES = 1 << 20
"""The largest request body (1 MiB); a larger one is answered 413 without being read."""
MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects a request body may have."""

class RequestError(Exception):
    """A request the server refuses: answered ``status`` with ``{"error": message}``."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class NotJSON(RequestError):
    """The body is UTF-8 text but not JSON (a tool call as text becomes an error observation)."""


class SafeJSONResponse(JSONResponse):
    """A JSON response that cannot fail on text: a lone surrogate is written as its ``\\uXXXX`` escape."""

    def render(self, content: Any) -> bytes:
        """The JSON bytes (UTF-8; lone surrogates escaped, which JSON allows).

        orjson writes them (a 1 MB ``/retrieve`` answer in about 1 ms where the standard library takes
        13; NaN and infinities, which JSON lacks, become ``null``); what it refuses (a lone surrogate,
        an integer past 64 bits, a non-string key) goes through :mod:`json`.
        """
        try:
            return orjson.dumps(content)
        except TypeError:
            return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


def error(status: int, message: str) -> JSONResponse:
    """``{"error": message}`` with an HTTP status."""
    return SafeJSONResponse({"error": storable(message)}, status_code=status)


def _no_constants(name: str) -> Any:
    raise RequestError(400, f"the body is not JSON ({name} is not a JSON number)")


def _clean(value: Any, depth: int = 1, limit: int = MAX_JSON_DEPTH) -> Any:
    """``value`` with its strings made :func:`storable`; raises when nested deeper than ``limit``."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, (dict, list)):
        if depth > limit:
            raise RequestError(400, f"the body is nested deeper than {limit} levels")
        if isinstance(value, dict):
            return {storable(k): _clean(v, depth + 1, limit) for k, v in value.items()}
        return [_clean(v, depth + 1, limit) for v in value]
    return value


def parse_body(raw: bytes, envelope: int = 0) -> Any:
    """A request body as JSON: ``{}`` when empty; strings :func:`storable`.

    ``envelope``: levels of nesting the endpoint wraps around what a single call would carry (a
    batch's ``{"calls": [...]}`` adds 2), allowed on top of :data:`MAX_JSON_DEPTH`.

    Raises:
        NotJSON: UTF-8 text that is not JSON.
        RequestError: not UTF-8, nested deeper than :data:`MAX_JSON_DEPTH`, a number out of range (400).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(400, f"the body is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        return {}
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise NotJSON(400, f"the body is not JSON ({exc.msg})") from None
    except RecursionError:
        raise RequestError(400, f"the body is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise RequestError(400, f"the body is not usable JSON ({exc})") from None
    return _clean(value, limit=MAX_JSON_DEPTH + envelope)


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is answered 413 (a ``Content-Length`` over it
    before anything is read; a streamed body as soon as the running count passes it)."""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """Check the declared length, then count the body as the app reads it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", []) if k == b"content-length"), None)
        if declared is not None:
            try:
                length = int(declared)
            except ValueError:
                await error(400, "the Content-Length header is not a number")(scope, receive, send)
                return
            if length > self.limit:
                await error(413, f"the body has {length} bytes; at most {self.limit} are accepted")(scope, receive, send)
                return
        seen = 0

        async def counted() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise RequestError(413, f"the body has more than {self.limit} bytes; at most {self.limit} are accepted")
            return message

        await self.app(scope, counted, send)


def release_memory() -> None:
    """Hand freed heap memory back to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    Closed sessions free their objects, but glibc keeps the freed pages of its per-thread
    arenas mapped, so the server's RSS would stay at its peak after a burst of sessions or an
    update of the episode store (DuckDB loads the store's key indexes). The reaper calls this
    after each store update and once half the sessions of the last peak have closed.
    """
    gc.collect()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


_LIBC = _libc()


def json_errors(app: FastAPI) -> None:
    """Answer every HTTP error of ``app`` as ``{"error": "..."}`` with its status (its headers kept),
    and an unexpected exception as a 500 that names only its type (the server logs the traceback)."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        response = error(exc.status_code, str(exc.detail))
        response.headers.update(exc.headers or {})
        return response

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:  # logged by the server with its traceback
        return error(500, f"internal error ({type(exc).__name__}); the request was not completed")
