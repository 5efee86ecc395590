"""``worldforge record mcp``: an MCP proxy that records ``tools/list`` and every ``tools/call``.

Built on the official ``mcp`` SDK: the proxy is a low-level :class:`mcp.server.Server` whose
``tools/list`` and ``tools/call`` handlers forward to an upstream MCP server through an
:class:`mcp.Client` — over streamable HTTP (``--upstream URL``) or by launching it over stdio
(``--command "server cmd"``) — and record what passed. Agents reach the proxy over streamable
HTTP (``http://HOST:PORT/mcp``; ``GET /health`` is the proxy's own) or, with ``--serve stdio``,
as a stdio server they launch.

Each downstream MCP session (the ``Mcp-Session-Id`` of streamable HTTP, or the one stdio
connection) gets its own upstream session — stateful servers (the project's search server gives
each session its own environment) see one agent per session — and its own recording session:
``tools/list`` is recorded once, each ``tools/call`` as soon as its result (or error) arrives,
appended to an fsync'd segment (:class:`~worldforge.recording.sink.RecordingSink`, kind ``mcp``).
A session is stored — the recording document in ``WAREHOUSE/recordings/mcp/`` and its turns in
``WAREHOUSE/trajectories.duckdb``, source ``record-mcp`` — when it has been idle for
``idle_timeout`` seconds, when the stdio connection ends, or when the proxy stops (SIGTERM,
Ctrl-C); a proxy killed with ``kill -9`` leaves segments that the next start stores.
Upstream errors are forwarded unchanged (an ``isError`` result as is, a JSON-RPC error as an
error) and recorded with ``is_error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from worldforge.recording.sink import RecordingSink, now_iso
from worldforge.runtime import return_large_blocks
from worldforge.serving.sessions import SessionRegistry
from worldforge.warehouse.layout import Warehouse, WarehouseLike

log = logging.getLogger(__name__)

DEFAULT_IDLE_S = 300.0


def upstream_target(upstream: str | None, command: str | None) -> Any:
    """What :class:`mcp.Client` connects to: the URL, or ``StdioServerParameters`` of the command.

    Raises:
        ValueError: neither or both given, a URL that is not ``http(s)://``, or an empty command.
    """
    from mcp.client.stdio import StdioServerParameters

    if (upstream is None) == (command is None):
        raise ValueError("give exactly one of --upstream URL (streamable HTTP) or --command 'server cmd' (stdio)")
    if upstream is not None:
        if not upstream.startswith(("http://", "https://")):
            raise ValueError(f"--upstream must be an http(s):// URL of an MCP endpoint, got {upstream!r}")
        return upstream
    argv = shlex.split(command or "")
    if not argv:
        raise ValueError("--command is empty")
    return StdioServerParameters(command=argv[0], args=argv[1:])


def result_text(result: Any) -> str:
    """The text parts of a ``CallToolResult`` joined by newlines (other parts named by their type)."""
    parts = []
    for c in getattr(result, "content", None) or []:
        text = getattr(c, "text", None)
        parts.append(text if isinstance(text, str) else f"[{getattr(c, 'type', 'content')}]")
    return "\n".join(parts)


class UpstreamSession:
    """One upstream MCP client session, owned by a task of its own (anyio scopes must be left by the
    task that entered them), serving the calls handed to it in order."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.queue: asyncio.Queue = asyncio.Queue()
        self.ready: asyncio.Future = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        from mcp import Client

        try:
            async with Client(self.target) as client:
                self.ready.set_result(None)
                while (item := await self.queue.get()) is not None:
                    fn, fut = item
                    try:
                        fut.set_result(await fn(client))
                    except Exception as exc:  # noqa: BLE001 - handed to the caller
                        fut.set_exception(exc)
        except Exception as exc:  # noqa: BLE001
            if not self.ready.done():
                self.ready.set_exception(exc)
            else:
                log.warning("upstream session ended: %s", exc)

    async def call(self, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        """Run ``fn(client)`` on the upstream session and return its result (or raise its error)."""
        await self.ready
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((fn, fut))
        return await fut

    async def close(self) -> None:
        """End the upstream session (waits for its task)."""
        await self.queue.put(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.task, 30)


class McpRecorder:
    """The proxy's sessions: downstream key → (recording session id, upstream session), kept in a
    :class:`~worldforge.serving.sessions.SessionRegistry`.

    A session is idle only with no request in flight, counted from when the last one was
    answered, so a slow upstream call never has its session stored (and split in two) under it.

    Args:
        target: the upstream (a URL or stdio parameters, as ``mcp.Client`` takes them).
        sink: where the recordings go.
        upstream_label: the upstream as recorded in each session's ``start`` event.
        max_sessions: sessions open at most; a request that needs one more is refused.
    """

    def __init__(self, target: Any, sink: RecordingSink, upstream_label: str, max_sessions: int = 10_000) -> None:
        self.target, self.sink, self.label = target, sink, upstream_label
        self.sessions: SessionRegistry[dict] = SessionRegistry(max_sessions)
        """Downstream key → ``{"sid": recording session id, "up": UpstreamSession}``."""
        self.tools_recorded: set[str] = set()

    @contextlib.asynccontextmanager
    async def _using(self, key: str) -> AsyncIterator[tuple[str, UpstreamSession]]:
        """The session of ``key`` (opened on first use), marked in use for the block.

        A new session is registered first and only then given its recording and upstream
        connection, so a refused one leaves neither behind (no ``await`` in between: no other
        request can see it half made).

        Raises:
            SessionLimit: a new session is needed and ``max_sessions`` are open.
        """
        with self.sessions.using(key, dict) as (entry, _):
            if not entry.value:
                sid = self.sink.new_session_id("mcp")
                self.sink.append(sid, {"event": "start", "at": now_iso(), "upstream": self.label})
                entry.value.update(sid=sid, up=UpstreamSession(self.target))
            yield entry.value["sid"], entry.value["up"]

    async def list_tools(self, key: str, params: Any) -> Any:
        """Forward ``tools/list``; the first answer of a session is recorded."""
        async with self._using(key) as (sid, up):
            cursor = getattr(params, "cursor", None)
            result = await up.call(lambda c: c.list_tools(cursor=cursor, cache_mode="bypass") if cursor else c.list_tools())
            if sid not in self.tools_recorded:
                self.tools_recorded.add(sid)
                tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]
                await asyncio.to_thread(self.sink.append, sid, {"event": "tools", "at": now_iso(), "tools": tools})
            return result

    async def call_tool(self, key: str, name: str, arguments: dict | None) -> Any:
        """Forward ``tools/call`` and record it with its result (or the upstream's error, re-raised)."""
        async with self._using(key) as (sid, up):
            started = now_iso()
            try:
                result = await up.call(lambda c: c.call_tool(name, arguments or {}))
            except Exception as exc:
                await asyncio.to_thread(self.sink.append, sid, {"event": "call", "name": name, "arguments": arguments or {},
                                                              "result_text": f"{type(exc).__name__}: {exc}", "is_error": True,
                                                              "started_at": started, "ended_at": now_iso()})
                raise
            await asyncio.to_thread(self.sink.append, sid, {"event": "call", "name": name, "arguments": arguments or {},
                                                          "result_text": result_text(result), "is_error": bool(getattr(result, "is_error", False)),
                                                          "started_at": started, "ended_at": now_iso()})
            return result

    async def close(self, key: str, idle_s: float | None = None) -> None:
        """Store one session's recording and end its upstream session.

        Args:
            key: the downstream session.
            idle_s: close it only if it is still idle for this many seconds (the reaper: a
                request that came meanwhile keeps it open); ``None``: close it now (shutdown).
        """
        entry = self.sessions.pop(key) if idle_s is None else self.sessions.pop_if_idle(key, idle_s)
        if entry is None or not entry.value:
            return
        sid, up = entry.value["sid"], entry.value["up"]
        await up.close()
        try:
            closed = await asyncio.to_thread(self.sink.close, sid)
        except Exception as exc:  # the segment stays open: the next start recovers it
            log.error("recording %s not stored (%s); its segment stays open for recovery", sid, exc)
            return
        if closed is not None:
            log.info("stored %s: %d trajectories, %d turns", sid, closed.trajectories, closed.turns)

    def idle(self, idle_s: float) -> list[str]:
        """Keys of the sessions with no request in flight whose last request was answered ``idle_s`` seconds ago or more."""
        return self.sessions.idle(idle_timeout=idle_s)

    async def close_all(self) -> None:
        """Store every open session."""
        for key in self.sessions.keys():
            await self.close(key)


def http_session_key(ctx: Any) -> str:
    """The downstream session of a streamable HTTP request: its ``Mcp-Session-Id`` (requests of a
    client that keeps no session share one recording, stored when it goes idle)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    sid = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{sid}" if sid else "http:no-session"


def create_mcp_proxy(recorder: McpRecorder, session_key: Callable[[Any], str] = http_session_key) -> Any:
    """The proxy's low-level MCP server, whose ``tools/list`` and ``tools/call`` go through ``recorder``.

    Args:
        recorder: the sessions and their recordings.
        session_key: the downstream session of a request context (stdio: one constant key).
    """
    from mcp.server import Server

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        return await recorder.list_tools(session_key(ctx), params)

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        return await recorder.call_tool(session_key(ctx), params.name, params.arguments)

    return Server("worldforge-record-mcp", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def serve_mcp_proxy(upstream: str | None, command: str | None, warehouse: WarehouseLike,
                    serve: str = "http", host: str | None = None, port: int | None = None,
                    idle_timeout: float = DEFAULT_IDLE_S, on_ready: Callable[[str], None] | None = None) -> None:
    """Run the recording MCP proxy until SIGTERM/SIGINT (or, with ``serve="stdio"``, until stdin closes).

    Args:
        upstream: the upstream's streamable HTTP endpoint (``http://HOST:PORT/mcp``); or
        command: the upstream server's command line, launched over stdio.
        warehouse: where recordings and the trajectory store live (a Warehouse or its folder).
        serve: ``http`` (streamable HTTP on ``host:port``, path ``/mcp``) or ``stdio``.
        host, port: where to listen over HTTP (default ``WORLDFORGE_HOST``, loopback; port 8101).
        idle_timeout: seconds without a request before a session is stored.
        on_ready: called with the proxy's endpoint (or ``stdio``) before serving.

    Raises:
        ValueError: bad flags (before anything listens or is launched).
    """
    target = upstream_target(upstream, command)
    if serve not in ("http", "stdio"):
        raise ValueError(f"--serve must be http or stdio, got {serve!r}")
    if idle_timeout <= 0:
        raise ValueError(f"--idle-timeout must be positive, got {idle_timeout}")
    from worldforge.settings import get_settings

    settings = get_settings()
    sink = RecordingSink(Warehouse.of(warehouse), "mcp", max_record_mb=settings.max_record_mb, store_memory_mb=settings.store_memory_mb)
    recorder = McpRecorder(target, sink, upstream or command or "")
    if serve == "stdio":
        asyncio.run(_serve_stdio(create_mcp_proxy(recorder, lambda ctx: "stdio"), recorder, on_ready))
        return
    server = create_mcp_proxy(recorder)
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    host, port = host or settings.host, port or 8101
    mcp_app = server.streamable_http_app(streamable_http_path="/mcp", session_idle_timeout=idle_timeout * 4)
    sweep = max(0.2, min(5.0, idle_timeout / 4))

    async def reaper() -> None:
        while True:
            await asyncio.sleep(sweep)
            for key in recorder.idle(idle_timeout):
                await recorder.close(key, idle_timeout)  # closing one awaits: the next is checked again

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        recovered = await asyncio.to_thread(sink.recover)
        if recovered:
            log.warning("recovered %d recordings left open by a previous proxy", len(recovered))
        task = asyncio.create_task(reaper())
        try:
            async with server.session_manager.run():
                yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await recorder.close_all()
            await asyncio.to_thread(sink.recover)

    async def health(request: Any) -> Any:
        return JSONResponse({"status": "ok", "open_sessions": len(recorder.sessions), "upstream": recorder.label})

    app = Starlette(routes=[Route("/health", health), Mount("/", app=mcp_app)], lifespan=lifespan)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/mcp")
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    uvicorn.run(app, host=host, port=port, log_level="warning")


async def _serve_stdio(server: Any, recorder: McpRecorder, on_ready: Callable[[str], None] | None) -> None:
    from mcp.server.stdio import stdio_server

    recovered = await asyncio.to_thread(recorder.sink.recover)
    if recovered:
        log.warning("recovered %d recordings left open by a previous proxy", len(recovered))
    if on_ready is not None:
        on_ready("stdio")
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)  # stop serving, then store the session below
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except asyncio.CancelledError:
        pass
    finally:
        await recorder.close_all()
