"""``worldforge record openai``: an OpenAI-compatible proxy that records every chat exchange as a trajectory.

The agent points its ``base_url`` at the proxy (``http://HOST:PORT/v1``); the proxy forwards
each request to the upstream's OpenAI API root (``--upstream``, e.g. ``http://127.0.0.1:8000/v1``)
with httpx and records it (OpenAI Chat Completions API,
https://platform.openai.com/docs/api-reference/chat):

* ``POST /v1/chat/completions`` — non-streaming: the upstream's JSON answered as is; streaming
  (``"stream": true``): the upstream's server-sent events passed through chunk by chunk while
  the proxy accumulates the assistant message from the ``delta`` objects (``content`` and
  ``tool_calls`` fragments by ``index``: ``id``, ``function.name``, ``function.arguments``).
  Each call is one ``exchange`` event (request messages and tools, the assistant reply) appended
  to the session's segment (fsync'd) before the answer completes: a non-streamed answer is sent
  after the append; a streamed one holds back its end (the chunk with ``data: [DONE]`` and the end
  of the body) until the append. When the segment cannot be written, a non-streamed call is
  answered 503 naming the segment and the error, and a stream is cut before its end (the client
  sees no ``[DONE]``): an answer the client received in full is in its segment.
* ``GET /v1/models`` and every other ``/v1/*`` call — forwarded, not recorded.
* ``GET /health`` — ``{"status": "ok", "open_sessions": N}`` (the proxy's own).

Sessions: a request's ``X-Session-Id`` header names its session; without one, the request joins
the open session whose recorded conversation (messages + replies so far) is the longest prefix
of the request's messages — consecutive requests of one conversation — else it opens a new
session. The response carries the session id in its ``X-Session-Id`` header. The tool results
the agent sends back in its next request (``role: tool``) become the observations of the calls.

A session idle for ``idle_timeout`` seconds is closed: its recording is written to
``WAREHOUSE/recordings/openai/<session_id>.json`` and stored in ``WAREHOUSE/trajectories.duckdb``
(:class:`~worldforge.recording.sink.RecordingSink`). SIGTERM/SIGINT close every open session before
the process exits; on start, sessions left open by a killed proxy are recovered and stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request

from worldforge.recording.sink import RecordingSink, is_prefix, merge_conversation
from worldforge.runtime import return_large_blocks
from worldforge.serving.sessions import Session as RegistryEntry
from worldforge.serving.sessions import SessionLimit, SessionRegistry
from worldforge.warehouse.layout import Warehouse, WarehouseLike

log = logging.getLogger(__name__)

SESSION_HEADER = "x-session-id"
HOP_HEADERS = {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade",
               "proxy-authorization", "proxy-connection", "accept-encoding", SESSION_HEADER}
"""Request headers not forwarded upstream (hop-by-hop, recomputed, or the proxy's own)."""
DEFAULT_IDLE_S = 300.0
DEFAULT_MAX_SESSIONS = 10_000
"""Recording sessions a proxy keeps open at most; a request that needs one more is answered 503."""
_DONE = b"[DONE]"
"""The end of an OpenAI stream (``data: [DONE]``): from the chunk that completes it on, a stream waits for its exchange's fsync."""


@dataclass
class Session:
    """One open recording session: its conversation so far. Its last use and the exchanges in
    flight are kept by the table's :class:`~worldforge.serving.sessions.SessionRegistry` (an idle
    timeout never closes a session with an exchange in flight).

    Attributes:
        session_id: the file-name-safe id (segment and recording file names).
        key: the ``X-Session-Id`` header that names it, ``None`` for prefix-grouped sessions.
        conversation: the recorded messages (requests merged, replies appended).
    """

    session_id: str
    key: str | None
    conversation: list[dict] = field(default_factory=list)


class SessionTable:
    """The open sessions of one proxy and the grouping rule (header, else longest recorded prefix).

    Args:
        sink: where the sessions' segments and recordings go.
        upstream: the upstream's API root (recorded in each session's ``start`` event).
        max_sessions: sessions open at most; a request that needs one more is refused (503).
    """

    def __init__(self, sink: RecordingSink, upstream: str, max_sessions: int = DEFAULT_MAX_SESSIONS) -> None:
        self.sink = sink
        self.upstream = upstream
        self.registry: SessionRegistry[Session] = SessionRegistry(max_sessions)
        self.by_key: dict[str, str] = {}

    @property
    def open(self) -> dict[str, Session]:
        """The open sessions by session id (a snapshot)."""
        return {s.key: s.value for s in self.registry.sessions()}

    def session_for(self, messages: list[dict], key: str | None, model: str | None) -> tuple[Session, RegistryEntry]:
        """The session a request belongs to, opened (with its ``start`` event) when none matches,
        and marked in use: hand the entry back with :meth:`release` when the exchange is recorded.

        Raises:
            SessionLimit: a new session is needed and ``max_sessions`` are open.
        """
        sid: str | None = None
        if key:
            sid = self.by_key.get(key)
            sid = sid if sid in self.registry else None
        else:
            best = max(
                (s for s in self.registry.sessions() if s.value.key is None and s.value.conversation and is_prefix(s.value.conversation, messages)),
                key=lambda s: len(s.value.conversation), default=None,
            )
            sid = best.key if best is not None else None
        if sid is not None:
            with contextlib.suppress(KeyError):  # closed meanwhile by the reaper: open a new one
                entry, _ = self.registry.acquire(sid)
                return entry.value, entry
        session = Session(self.sink.new_session_id(key), key)
        entry, _ = self.registry.acquire(session.session_id, lambda: session)  # refused before anything is written
        try:
            self.sink.append(session.session_id, {"event": "start", "upstream": self.upstream, "model": model, "session_key": key})
        except BaseException:
            self.registry.pop(session.session_id)
            raise
        if key:
            self.by_key[key] = session.session_id
        return session, entry

    def release(self, entry: RegistryEntry) -> None:
        """End one exchange of a session (:meth:`session_for`): its idle clock counts from now."""
        self.registry.release(entry)

    def record(self, session: Session, request: dict, reply: dict | None, status: int) -> None:
        """Append one exchange to the session's segment (durable when this returns) and extend its conversation."""
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        self.sink.append(session.session_id, {
            "event": "exchange", "status": status, "stream": bool(request.get("stream")),
            "request": {"model": request.get("model"), "messages": messages, "tools": request.get("tools") or []},
            "reply": reply,
        })
        session.conversation = merge_conversation(session.conversation, messages) + ([reply] if reply else [])

    def detach(self, session_id: str, idle_s: float | None = None) -> Session | None:
        """Remove a session from the table (new requests no longer join it).

        Args:
            session_id: the session.
            idle_s: remove it only if it is still idle for this many seconds (the reaper);
                ``None``: remove it whatever it is doing (shutdown).

        Returns:
            The session removed; ``None`` when there is none or (``idle_s``) it is in use again.
        """
        entry = self.registry.pop(session_id) if idle_s is None else self.registry.pop_if_idle(session_id, idle_s)
        session = entry.value if entry is not None else None
        if session is not None and session.key and self.by_key.get(session.key) == session_id:
            del self.by_key[session.key]
        return session

    def idle(self, idle_s: float, now: float | None = None) -> list[str]:
        """Ids of the sessions with nothing in flight and no exchange for ``idle_s`` seconds."""
        return self.registry.idle(now, idle_timeout=idle_s)


class StreamAccumulator:
    """The assistant message of a streamed chat completion, rebuilt from its SSE ``data:`` chunks.

    Feed raw bytes with :meth:`feed`; :meth:`message` gives ``{"role": "assistant", "content",
    "tool_calls"?}`` of choice 0 (tool-call fragments joined by their ``index``).
    """

    def __init__(self) -> None:
        self._buf = b""
        self.content: list[str] = []
        self.calls: dict[int, dict] = {}
        self.finish_reason: str | None = None
        self.chunks = 0

    def feed(self, data: bytes) -> None:
        """Consume raw response bytes (any split: lines are reassembled)."""
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        try:
            chunk = json.loads(payload)
        except json.JSONDecodeError:
            return
        self.chunks += 1
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            for tc in delta.get("tool_calls") or []:
                call = self.calls.setdefault(int(tc.get("index", len(self.calls))), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    call["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    call["function"]["name"] += fn["name"]
                if fn.get("arguments"):
                    call["function"]["arguments"] += fn["arguments"]

    def message(self) -> dict | None:
        """The accumulated assistant message, ``None`` when no chunk arrived."""
        if self._buf.strip():
            self._line(self._buf.strip())
            self._buf = b""
        if not self.chunks:
            return None
        msg: dict[str, Any] = {"role": "assistant", "content": "".join(self.content)}
        if self.calls:
            msg["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        return msg


def _forward_headers(headers: Any) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in HOP_HEADERS}


def _error(status: int, message: str, kind: str) -> Any:
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def create_openai_proxy(upstream: str, warehouse: WarehouseLike, idle_timeout: float = DEFAULT_IDLE_S,
                        timeout_s: float = 600.0, sweep_s: float | None = None, transport: Any = None,
                        max_sessions: int = DEFAULT_MAX_SESSIONS, max_record_mb: float | None = None,
                        store_memory_mb: int | None = None) -> Any:
    """The recording proxy as a FastAPI app (see the module docs).

    Args:
        upstream: the upstream's OpenAI API root, e.g. ``http://127.0.0.1:8000/v1``.
        warehouse: where recordings and the trajectory store live (a Warehouse or its folder).
        idle_timeout: seconds without an exchange before a session is closed and stored.
        timeout_s: the upstream read timeout per request, seconds.
        sweep_s: how often idle sessions are looked for (default ``min(5, idle_timeout / 4)``).
        transport: an ``httpx.AsyncBaseTransport`` to reach the upstream (tests pass a mock).
        max_sessions: recording sessions open at most; a request that needs one more is answered
            503 (``server_error``) until one closes.
        max_record_mb, store_memory_mb: the trajectory store's limits while a recording is stored
            (see :class:`~worldforge.recording.sink.RecordingSink`; ``None``: the ingest's defaults).

    Returns:
        The app; ``app.state.table`` is its :class:`SessionTable`, ``app.state.sink`` its sink.

    Raises:
        ValueError: ``upstream`` is not an ``http(s)://`` URL or ``idle_timeout`` is not positive.
    """
    import httpx
    from fastapi.responses import Response, StreamingResponse
    from starlette.background import BackgroundTask

    if not upstream.startswith(("http://", "https://")):
        raise ValueError(f"--upstream must be an http(s):// URL (the upstream's OpenAI API root), got {upstream!r}")
    if idle_timeout <= 0:
        raise ValueError(f"--idle-timeout must be positive, got {idle_timeout}")
    upstream = upstream.rstrip("/")
    sink = RecordingSink(Warehouse.of(warehouse), "openai", max_record_mb=max_record_mb, store_memory_mb=store_memory_mb)
    table = SessionTable(sink, upstream, max_sessions)
    sweep = sweep_s if sweep_s is not None else max(0.2, min(5.0, idle_timeout / 4))
    client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=10.0), transport=transport)

    async def close_session(sid: str, idle_s: float | None = None) -> None:
        if table.detach(sid, idle_s) is None:  # gone, or (idle_s given) a request came for it meanwhile
            return
        try:
            closed = await asyncio.to_thread(sink.close, sid)
        except Exception as exc:  # the segment stays open: the next start recovers it
            log.error("recording %s not stored (%s); its segment stays open for recovery", sid, exc)
            return
        if closed is not None:
            log.info("stored %s: %d trajectories, %d turns%s", sid, closed.trajectories, closed.turns,
                     f" (quarantined: {closed.quarantined})" if closed.quarantined else "")

    async def reaper() -> None:
        while True:
            await asyncio.sleep(sweep)
            for sid in table.idle(idle_timeout):
                await close_session(sid, idle_timeout)  # closing one awaits: the next is checked again

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        recovered = await asyncio.to_thread(sink.recover)
        if recovered:
            log.warning("recovered %d recordings left open by a previous proxy", len(recovered))
        task = asyncio.create_task(reaper())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            for sid in table.registry.keys():
                await close_session(sid)
            await asyncio.to_thread(sink.recover)  # anything still open (an exchange cut short)
            await client.aclose()

    app = FastAPI(title="worldforge record openai", lifespan=lifespan)
    app.state.table, app.state.sink = table, sink

    @app.get("/health")
    async def health() -> dict:
        """The proxy's own liveness: ``{"status": "ok", "open_sessions": N, "upstream"}``."""
        return {"status": "ok", "open_sessions": len(table.registry), "upstream": upstream}

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Any:
        """Forward a chat completion (streaming or not) and record the exchange in its session."""
        raw = await request.body()
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the request body is not JSON", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "the request body needs a 'messages' list", "invalid_request_error")
        try:
            session, entry = table.session_for([m for m in body["messages"] if isinstance(m, dict)], request.headers.get(SESSION_HEADER), body.get("model"))
        except SessionLimit as exc:
            return _error(503, str(exc), "server_error")
        except OSError as exc:  # the new session's segment cannot be written: nothing is forwarded
            problem = f"a recording session could not be opened in {sink.segments.root} ({type(exc).__name__}: {exc})"
            log.error("%s", problem)
            return _error(503, problem, "server_error")
        headers = _forward_headers(request.headers)
        url = f"{upstream}/chat/completions"
        out_headers = {"X-Session-Id": session.session_id}

        def done(reply: dict | None, status: int) -> None:
            try:
                table.record(session, body, reply, status)
            finally:
                table.release(entry)

        def record_quietly(reply: dict | None, status: int) -> None:  # an answer that is an error anyway: a failed record is logged
            try:
                done(reply, status)
            except OSError as exc:
                log.error("the exchange could not be recorded in %s (%s: %s)", sink.segments.path(session.session_id), type(exc).__name__, exc)

        def unrecorded(exc: Exception) -> Any:
            problem = f"the exchange could not be recorded in {sink.segments.path(session.session_id)} ({type(exc).__name__}: {exc})"
            log.error("%s; the answer is withheld", problem)
            return _error(503, problem, "server_error")

        if not body.get("stream"):
            try:
                resp = await client.post(url, content=raw, headers=headers)
            except httpx.HTTPError as exc:
                record_quietly(None, 502)
                return _error(502, f"upstream {upstream} unreachable: {exc}", "upstream_error")
            except BaseException:  # cancelled, or a bug: the session must not stay in use for ever
                table.release(entry)
                raise
            reply = None
            if resp.status_code < 400:
                with contextlib.suppress(ValueError, AttributeError, IndexError, TypeError):
                    reply = resp.json()["choices"][0]["message"]
            try:
                done(reply, resp.status_code)  # in the fsync-ed segment before the answer leaves
            except OSError as exc:
                return unrecorded(exc)
            return Response(resp.content, status_code=resp.status_code, media_type=resp.headers.get("content-type"), headers=out_headers)

        try:
            upstream_req = client.build_request("POST", url, content=raw, headers=headers)
            resp = await client.send(upstream_req, stream=True)
        except httpx.HTTPError as exc:
            record_quietly(None, 502)
            return _error(502, f"upstream {upstream} unreachable: {exc}", "upstream_error")
        except BaseException:
            table.release(entry)
            raise
        acc = StreamAccumulator()
        finished = False

        def finish() -> None:
            nonlocal finished
            if not finished:
                finished = True
                done(acc.message() if resp.status_code < 400 else None, resp.status_code)

        async def relay() -> AsyncIterator[bytes]:
            # Chunks pass through as they come, except the end of the stream: from the chunk that holds
            # ``data: [DONE]`` on, they wait until the exchange is in the fsync-ed segment, and the body
            # ends after that too. A client that saw the end of the stream saw a durable exchange.
            held: list[bytes] = []
            tail = b""  # the last bytes seen, fewer than the marker's: a [DONE] split over any number of chunks is found
            try:
                async for chunk in resp.aiter_bytes():  # decoded: the content-encoding header is not passed on
                    acc.feed(chunk)
                    if held or _DONE in tail + chunk:
                        held.append(chunk)
                    else:
                        yield chunk
                    tail = (tail + chunk)[-(len(_DONE) - 1):]
            except BaseException:  # the client went away, or the upstream broke: record what was seen
                try:
                    finish()
                except OSError as exc:
                    log.error("the exchange could not be recorded in %s (%s: %s)", sink.segments.path(session.session_id), type(exc).__name__, exc)
                raise
            try:
                finish()
            except OSError as exc:  # cut the stream before its end: the client sees no [DONE] and no end of body
                log.error("the exchange could not be recorded in %s (%s: %s); the stream is cut before its end",
                          sink.segments.path(session.session_id), type(exc).__name__, exc)
                raise
            for chunk in held:
                yield chunk

        async def after() -> None:
            await resp.aclose()
            with contextlib.suppress(OSError):  # already logged, or the stream was cut
                finish()

        return StreamingResponse(relay(), status_code=resp.status_code, media_type=resp.headers.get("content-type", "text/event-stream"),
                                 headers=out_headers, background=BackgroundTask(after))

    @app.api_route("/v1/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
    async def forward(path: str, request: Request) -> Any:
        """Forward any other ``/v1/*`` call (``/v1/models`` included) to the upstream, unrecorded."""
        try:
            resp = await client.request(request.method, f"{upstream}/{path}", params=request.query_params,
                                        content=await request.body(), headers=_forward_headers(request.headers))
        except httpx.HTTPError as exc:
            return _error(502, f"upstream {upstream} unreachable: {exc}", "upstream_error")
        return Response(resp.content, status_code=resp.status_code, media_type=resp.headers.get("content-type"))

    return app


def serve_openai_proxy(upstream: str, warehouse: WarehouseLike, host: str | None = None, port: int | None = None,
                       idle_timeout: float = DEFAULT_IDLE_S, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve :func:`create_openai_proxy` with uvicorn until SIGTERM/SIGINT (``worldforge record openai``).

    Open sessions are stored before the process exits; sessions left open by a killed proxy are
    stored at start.

    Args:
        upstream, warehouse, idle_timeout: as :func:`create_openai_proxy`.
        host, port: where to listen (default ``WORLDFORGE_HOST``, loopback; port 8100).
        on_ready: called with the proxy's API root (``http://HOST:PORT/v1``) before serving.

    Raises:
        ValueError: a bad upstream URL or idle timeout (before anything listens).
    """
    import uvicorn

    from worldforge.settings import get_settings

    settings = get_settings()
    host, port = host or settings.host, port or 8100
    api = create_openai_proxy(upstream, warehouse, idle_timeout, max_record_mb=settings.max_record_mb,
                              store_memory_mb=settings.store_memory_mb)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/v1")
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    uvicorn.run(api, host=host, port=port, log_level="warning")
