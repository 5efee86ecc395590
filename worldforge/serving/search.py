"""Serving the simulated search environment over HTTP (FastAPI) and MCP (streamable HTTP).

HTTP endpoints (JSON):

=========================== ===========================================================
``GET  /health``            liveness and the number of open sessions
``GET  /tools``             the tools as OpenAI function-tool schemas
``POST /sessions``          ``{world?, scenario?, task_id?, seed?, perturbations?, instruction?}``
                            → ``{session_id, observation, tools}``
``POST /sessions/{id}/step`` a tool call: ``{"name", "arguments"}``, an OpenAI ``tool_calls[i]``
                            object, or ``{"tool_call": ...}`` → ``{observation, error,
                            perturbations, revealed, turn}``
``POST /sessions/{id}/submit`` ``{"answer": "<Markdown table>", "reward"?: {...}}`` → ``{reward,
                            info, done, turn}``: ends a task's episode with its reward
                            (:func:`~worldforge.simenv.reward.reward_of`; 409 without a task
                            or after a submit; later steps are error observations)
``POST /sessions/{id}/reset`` start the episode over (the episode so far is logged first, and
                            the next one gets its own episode id)
``DELETE /sessions/{id}``   close the session; its episode is logged before the reply
``POST /batch``             ``{"calls": [{"op": "open", ...}, {"op": "step", "session_id",
                            "name", "arguments"}, {"op": "submit", "session_id", "answer"},
                            {"op": "close", "session_id"}, ...]}`` → ``{"results": [{"status",
                            ...}, ...]}``: many sessions' calls in one request, in order, each
                            answered as its single endpoint would (its status inside; a
                            refused call as ``{"status", "error": "<why>"}``, where a step's
                            ``error`` is the tool's own flag: read ``status`` first; an open's
                            reply has no ``tools``). A call nests as deep as a single body may.
                            The closes of a batch are logged together (one ``fsync``). A
                            vectorised rollout sends one batch per tick, so the per-request
                            cost of HTTP is paid once for all its environments
=========================== ===========================================================

A malformed tool call is an error *observation* (status 200), as a real tool would answer;
only protocol mistakes get 4xx, always with a JSON body ``{"error": "..."}``: an unknown
session, world, scenario or task (404), a body that is not UTF-8 JSON or is nested deeper than
:data:`~worldforge.serving.http.MAX_JSON_DEPTH` levels (400), a field of the wrong type or an instruction longer than
:data:`~worldforge.simenv.perturbations.MAX_INSTRUCTION_CHARS` characters (422), a body over
:data:`~worldforge.serving.http.MAX_BODY_BYTES` (413, refused before it is read). Lone surrogates in JSON strings
(``"\\ud800"``) become their escape text. Sessions expire
after ``idle_timeout`` seconds without a call. A session that closes or expires is written to
the append-only episode log ``<warehouse>/episodes.log.jsonl`` (``fsync``-ed before the close
is answered; 503 if it cannot be written, the episode then kept in memory and retried), and a
background flush records the log in the episode store ``<warehouse>/episodes/`` every second (agent
``http``); a restart replays what a crash left in the log, and a stopping server closes and
records its open sessions.

The MCP server (official ``mcp`` SDK) is mounted on the same port at ``/mcp`` and exposes
exactly ``web_search``, ``web_extractor`` and ``dict_memory``; each MCP session gets its own
:class:`~worldforge.simenv.env.SearchEnv`, closed (and recorded, agent ``mcp``) when the
client deletes the MCP session, or when idle for ``idle_timeout`` seconds (the SDK's
transport expires then too); at most ``max_sessions`` of each kind are open. Both bind to 127.0.0.1 by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field, ValidationError
from starlette.concurrency import run_in_threadpool

from worldforge.errors import WorldforgeError, validation_problems
from worldforge.runtime import apply_settings, relaxed_gc, return_large_blocks
from worldforge.serving.episodes import EpisodeNotLogged, EpisodeService, NoSuchSession, UnknownTarget
from worldforge.serving.http import (
    MAX_BODY_BYTES,
    MAX_JSON_DEPTH,
    BodyLimit,
    NotJSON,
    RequestError,
    SafeJSONResponse,
    error,
    json_errors,
    parse_body,
    release_memory,
)
from worldforge.serving.sessions import DEFAULT_IDLE_S, Session
from worldforge.simenv.env import TOOL_SCHEMAS, EpisodeOver, SearchEnv
from worldforge.simenv.perturbations import MAX_INSTRUCTION_CHARS, PerturbationConfig, from_instruction, parse_perturbations
from worldforge.simenv.reward import RewardConfig
from worldforge.simenv.tools import SEARCH_TOOLS
from worldforge.trajectories.model import storable
from worldforge.warehouse.layout import Warehouse, WarehouseLike

log = logging.getLogger(__name__)

SEED_RANGE = (-(2**63), 2**63 - 1)
"""Seeds are stored as BIGINT."""


def _optional_str(body: dict, name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise RequestError(422, f"'{name}' must be a string, not {type(value).__name__}")
    return value or None


def _seed(body: dict) -> int:
    value = body.get("seed", 0)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,19}", value.strip()):
        value = int(value)  # "7" was accepted before: still is
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError(422, f"'seed' must be an integer, not {type(value).__name__}")
    if not SEED_RANGE[0] <= value <= SEED_RANGE[1]:
        raise RequestError(422, f"'seed' must be between {SEED_RANGE[0]} and {SEED_RANGE[1]}")
    return value


def new_session(body: Any, world: str, episodes: EpisodeService) -> SearchEnv:
    """A session from a ``POST /sessions`` body, every field checked before it exists (run it off the event loop).

    Raises:
        RequestError: a body that is not an object (400); a field of the wrong type, an instruction too
            long or not understood, invalid perturbations (422); an unknown world, scenario or task (404).
        WorldforgeError: the session cannot be built (400).
    """
    if not isinstance(body, dict):
        raise RequestError(400, "the body must be a JSON object")
    w = _optional_str(body, "world") or world
    scenario, task_id, seed = _optional_str(body, "scenario"), _optional_str(body, "task_id"), _seed(body)
    instruction = body.get("instruction")
    try:
        if instruction:
            if not isinstance(instruction, str):
                raise RequestError(422, f"'instruction' must be a string, not {type(instruction).__name__}")
            if len(instruction) > MAX_INSTRUCTION_CHARS:
                raise RequestError(422, f"'instruction' has {len(instruction)} characters; at most {MAX_INSTRUCTION_CHARS} are accepted")
            config = from_instruction(instruction)
        else:
            config = parse_perturbations(body.get("perturbations"))
    except WorldforgeError as exc:
        raise RequestError(422, str(exc)) from None
    try:
        return episodes.environment(w, task=task_id, scenario=scenario, seed=seed, perturbations=config)
    except UnknownTarget as exc:
        raise RequestError(404, str(exc)) from None


def _observation_json(env: SearchEnv, obs) -> dict[str, Any]:
    return {"observation": obs.text, "error": obs.error, "perturbations": obs.fired, "revealed": obs.revealed,
            "leaks_blocked": obs.leaks_blocked, "turn": env.turn}


def build_mcp(world: str, episodes: EpisodeService, perturbations: PerturbationConfig | None = None, seed: int = 0) -> MCPServer:
    """The MCP server: the three tools, one episode of ``episodes`` per MCP session.

    A stateful (2025-11-25) MCP session is identified by its ``mcp-session-id``. The
    stateless protocol (2026-07-28) has no session, so each tool also takes an optional
    ``session_id`` argument; calls without either share the server's default session.
    The episodes expire when idle, and :func:`create_app` closes one when its MCP session is
    deleted (:class:`McpSessionEnd`), logging it.
    """
    server = MCPServer(name="worldforge-search", instructions=f"Simulated web search over the fictional world {world!r}.")

    def answer(name: str, arguments: dict[str, Any], ctx: Context, session_id: str | None = None) -> str:
        key = (ctx.headers or {}).get("mcp-session-id") or session_id or "default"
        try:  # in use for the whole call (tools run in worker threads), its steps one at a time
            return episodes.step(key, {"name": name, "arguments": arguments},
                                 lambda: episodes.environment(world, perturbations=perturbations, seed=seed)).text
        except NoSuchSession:  # the MCP session ended while this call waited: its episode is logged without it
            return "Error: this MCP session was closed; start a new one."

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    session_param = inspect.Parameter("session_id", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=Annotated[
        str | None, Field(description="The episode's session, for clients of the stateless protocol (no mcp-session-id header).")])
    for tool in SEARCH_TOOLS:  # the declared tools, with the stateless protocol's session_id after their arguments
        server.add_tool(tool.function(answer, leading=[ctx_param], trailing=[session_param]), name=tool.name, description=tool.description)
    return server


class McpSessionEnd:
    """ASGI middleware: a ``DELETE`` of an MCP session (the protocol's session end, header
    ``mcp-session-id``) closes its episode in ``episodes``, logging it in the ``fsync``-ed episode
    log, *before* the request goes on to the MCP transport: a session end that was answered is
    durable. When the log cannot take the episode the ``DELETE`` is answered 503 with the reason
    (the episode is kept in memory and retried; the MCP session stays, so the client may send its
    ``DELETE`` again). That ``DELETE`` logs the kept episode again, and is answered 503 again while
    the log still fails: it reaches the transport (a success) only once the episode is in the log."""

    def __init__(self, app: Any, episodes: EpisodeService):
        self.app, self.episodes = app, episodes

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """Before a ``DELETE`` close the session it names; then pass the request on."""
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            sid = next((v for k, v in scope.get("headers", []) if k == b"mcp-session-id"), None)
            if sid:
                try:
                    await run_in_threadpool(self.episodes.close, sid.decode("latin-1"))
                except EpisodeNotLogged as exc:  # kept and retried by the flush
                    await error(503, str(exc))(scope, receive, send)
                    return
        await self.app(scope, receive, send)


INLINE_STEP_BYTES = 2048
"""A step whose body has at most this many bytes, on a session no other request is stepping, is
answered on the event loop (it costs about a millisecond: a thread hop would cost as much and
halve the throughput on two cores); larger calls (up to 20 queries of 1,000 characters) and
calls that must wait for their session run in worker threads, so they cannot stall the others."""

MAX_BATCH_CALLS = 1024
"""The most calls one ``POST /batch`` may carry (its body is bounded by :data:`~worldforge.serving.http.MAX_BODY_BYTES` too)."""

BATCH_OPS = ("open", "step", "submit", "close")
"""The calls of ``POST /batch``: the single endpoints' work, one result each."""

FLUSH_INTERVAL_S = 1.0
"""How often the server records the episode log in the episode store (seconds)."""


def session_routes(world: str, episodes: EpisodeService) -> APIRouter:
    """The HTTP session protocol as a router over ``episodes`` (the module docstring's table, ``/health`` aside):
    ``/tools``, ``/sessions`` and its ``step``, ``submit``, ``reset`` and ``DELETE``, and ``/batch``.

    Every endpoint translates its body into one call of the :class:`~worldforge.serving.episodes.EpisodeService`
    and its answer or error into JSON; an unknown session is 404, an episode that cannot be logged 503.
    """
    router = APIRouter()

    async def raw_body(request: Request) -> bytes:
        return await request.body()  # BodyLimit raises RequestError(413) past MAX_BODY_BYTES

    @router.get("/tools")
    def tools() -> list[dict]:
        return TOOL_SCHEMAS

    def open_from(body: Any) -> dict:
        try:
            env = new_session(body, world, episodes)
        except RequestError:
            raise
        except (WorldforgeError, ValueError) as exc:
            raise RequestError(400, str(exc)) from None
        try:
            episodes.add(env)
        except WorldforgeError as exc:  # too many open sessions
            raise RequestError(400, str(exc)) from None
        return {"session_id": env.session_id, "observation": env.reset()}

    def open_session(raw: bytes) -> dict:
        return {**open_from(parse_body(raw)), "tools": TOOL_SCHEMAS}

    @router.post("/sessions")
    async def create(request: Request) -> Response:
        raw = await raw_body(request)
        return SafeJSONResponse(await run_in_threadpool(open_session, raw), status_code=201)

    @contextlib.contextmanager
    def session(sid: str) -> Iterator[Session[SearchEnv]]:
        """The session ``sid``, in use for the whole request (a slow body upload included): it cannot
        expire under the request. A close may still take it out meanwhile: each call checks
        :meth:`~worldforge.serving.episodes.EpisodeService.still_open` once it holds the lock."""
        try:
            with episodes.using(sid) as item:
                yield item
        except NoSuchSession as exc:
            raise RequestError(404, str(exc)) from None

    def still_open(item: Session[SearchEnv]) -> SearchEnv:
        try:
            return episodes.still_open(item)
        except NoSuchSession as exc:
            raise RequestError(404, str(exc)) from None

    def step_inline(env: SearchEnv, raw: bytes) -> dict:
        try:
            body = parse_body(raw)
        except NotJSON:
            call: Any = raw.decode("utf-8")  # the tool call itself is not JSON: an error observation
        else:
            call = body.get("tool_call", body) if isinstance(body, dict) else body
        return _observation_json(env, env.step(call))

    def step_session(item: Session[SearchEnv], raw: bytes) -> dict:
        with item.lock:
            return step_inline(still_open(item), raw)

    @router.post("/sessions/{sid}/step")
    async def step(sid: str, request: Request) -> Response:
        with session(sid) as item:
            raw = await raw_body(request)
            if len(raw) <= INLINE_STEP_BYTES and item.lock.acquire(blocking=False):
                try:  # a small call (a search of a few queries: about a millisecond) is answered on the loop
                    return SafeJSONResponse(step_inline(still_open(item), raw))
                finally:
                    item.lock.release()
            return SafeJSONResponse(await run_in_threadpool(step_session, item, raw))

    def submit_answer(item: Session[SearchEnv], raw: bytes) -> dict:
        return submit_from(item, parse_body(raw))

    def submit_from(item: Session[SearchEnv], body: Any) -> dict:
        if not isinstance(body, dict) or not isinstance(body.get("answer"), str):
            raise RequestError(422, "the body must be {\"answer\": \"<one Markdown table>\"} (optional \"reward\": {metric, format_reward, tool_call_penalty, rules})")
        try:
            config = RewardConfig.model_validate(body.get("reward") or {})
        except ValidationError as exc:
            problems = validation_problems(exc)
            raise RequestError(422, f"invalid 'reward': {problems}") from None
        with item.lock:
            env = still_open(item)
            try:
                result = env.submit(body["answer"], config)
            except EpisodeOver as exc:
                raise RequestError(409, str(exc)) from None
            return {"reward": result.value, "info": result.info, "done": True, "turn": env.turn}

    def batch_call(call: Any, closing: list[tuple[int, str, SearchEnv]], i: int) -> dict:
        """One call of a ``/batch``: its result (``status`` and the single endpoint's fields); a close is
        taken out at once (later calls on it get 404) and logged with the batch's other closes."""
        if not isinstance(call, dict):
            raise RequestError(422, f"each call must be a JSON object, not {type(call).__name__}")
        op = call.get("op")
        if op == "open":
            return {"status": 201, **open_from({k: v for k, v in call.items() if k != "op"})}
        if op not in BATCH_OPS:
            raise RequestError(422, f"'op' must be one of {', '.join(BATCH_OPS)}, not {op!r}")
        sid = call.get("session_id")
        if not isinstance(sid, str):
            raise RequestError(422, f"a {op!r} call needs a 'session_id' string")
        if op == "close":
            envs = episodes.take_closing(sid)
            if not envs:
                raise RequestError(404, f"no session {sid!r}")
            closing.extend((i, sid, env) for env in envs)
            return {"status": 204}
        with session(sid) as item:
            if op == "submit":
                return {"status": 200, **submit_from(item, call)}
            tool_call = call["tool_call"] if "tool_call" in call else {k: v for k, v in call.items() if k not in ("op", "session_id")}
            with item.lock:
                env = still_open(item)
                return {"status": 200, **_observation_json(env, env.step(tool_call))}

    def run_batch(raw: bytes) -> dict:
        body = parse_body(raw, envelope=2)  # a call may nest as deep as a single endpoint's body
        calls = body.get("calls") if isinstance(body, dict) else None
        if not isinstance(calls, list):
            raise RequestError(422, 'the body must be {"calls": [{"op": "open" | "step" | "submit" | "close", ...}, ...]}')
        if len(calls) > MAX_BATCH_CALLS:
            raise RequestError(422, f"the batch has {len(calls)} calls; at most {MAX_BATCH_CALLS} are accepted")
        results: list[dict] = []
        closing: list[tuple[int, str, SearchEnv]] = []
        try:
            for i, call in enumerate(calls):
                try:
                    results.append(batch_call(call, closing, i))
                except RequestError as exc:
                    results.append({"status": exc.status, "error": storable(exc.message)})
        finally:  # the sessions taken out are logged whatever happened after (nothing is lost)
            keys: dict[str, list[SearchEnv]] = {}
            for _, sid, env in closing:
                keys.setdefault(sid, []).append(env)
            try:
                episodes.retire([env for _, _, env in closing], keys)  # every closed episode in the log, one fsync, before the reply
            except EpisodeNotLogged as exc:  # kept in memory and retried by the flush, as a single close's
                for i, _, env in closing:
                    if episodes.loggable(env):  # a session with nothing to log closed (204), as DELETE says
                        results[i] = {"status": 503, "error": str(exc)}
        return {"results": results}

    @router.post("/batch")
    async def batch(request: Request) -> Response:
        raw = await raw_body(request)
        return SafeJSONResponse(await run_in_threadpool(run_batch, raw))

    @router.post("/sessions/{sid}/submit")
    async def submit(sid: str, request: Request) -> Response:
        with session(sid) as item:
            raw = await raw_body(request)
            return SafeJSONResponse(await run_in_threadpool(submit_answer, item, raw))

    @router.post("/sessions/{sid}/reset")
    def reset(sid: str) -> Response:
        try:
            observation = episodes.restart(sid)  # the episode so far is logged; the next one gets its own id
        except NoSuchSession as exc:
            return error(404, str(exc))
        except EpisodeNotLogged as exc:
            return error(503, str(exc))
        return SafeJSONResponse({"observation": observation})

    @router.delete("/sessions/{sid}")
    def close(sid: str) -> Response:
        try:
            if not episodes.close(sid):  # the episode is in the (fsync-ed) episode log before the reply
                return error(404, f"no session {sid!r}")
        except EpisodeNotLogged as exc:
            return error(503, str(exc))
        return Response(status_code=204)

    return router


def create_app(
    world: str,
    warehouse: WarehouseLike,
    idle_timeout: float = DEFAULT_IDLE_S,
    max_sessions: int = 10_000,
    mcp: bool = True,
    record: bool = True,
) -> FastAPI:
    """The HTTP app (and the MCP endpoint at ``/mcp``) for one default world.

    Two :class:`~worldforge.serving.episodes.EpisodeService` instances hold the episodes (agent
    ``http`` and ``mcp``); :func:`session_routes` and :func:`build_mcp` are their protocol adapters.
    ``record=False`` keeps closed sessions out of the episode store (load tests).

    Raises:
        WarehouseError: the world or its corpus is missing (checked at start-up).
    """
    wh = Warehouse.of(warehouse)
    SearchEnv(world, warehouse=wh)  # fail at start-up, with a clear error, if the world cannot be searched
    sessions = EpisodeService(wh, agent="http", idle_timeout=idle_timeout, max_sessions=max_sessions, record=record)
    mcp_sessions = EpisodeService(wh, agent="mcp", idle_timeout=idle_timeout, max_sessions=max_sessions, record=record)
    mcp_server = build_mcp(world, mcp_sessions) if mcp else None
    mcp_app = (mcp_server.streamable_http_app(streamable_http_path="/mcp", session_idle_timeout=idle_timeout, max_sessions=max_sessions)
               if mcp_server else None)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        from worldforge.trajectories.episodes import settle_episode_log

        await asyncio.to_thread(settle_episode_log, wh)  # replay what a crash left in the episode log

        async def reaper() -> None:
            reap_every, last_reap = max(1.0, min(10.0, idle_timeout / 2)), time.monotonic()
            peak = 0
            while True:
                await asyncio.sleep(FLUSH_INTERVAL_S)
                try:
                    if time.monotonic() - last_reap >= reap_every:
                        last_reap = time.monotonic()
                        await asyncio.to_thread(sessions.reap)
                        await asyncio.to_thread(mcp_sessions.reap)
                    recorded = await asyncio.to_thread(mcp_sessions.flush)
                    recorded += await asyncio.to_thread(sessions.flush)  # never raises; logs and keeps what failed
                    open_now = len(sessions) + len(mcp_sessions)
                    if recorded or open_now < peak // 2:  # a store update, or half the sessions of the last peak gone
                        await asyncio.to_thread(release_memory)
                        peak = open_now
                    peak = max(peak, open_now)
                except Exception:  # the reaper must outlive any error
                    log.exception("session reaper")

        task = asyncio.create_task(reaper())
        try:
            if mcp_server is not None:
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            task.cancel()
            for s in (sessions, mcp_sessions):  # a stopping server closes its sessions: nothing is lost
                s.shutdown()

    app = FastAPI(title="worldforge simulated search", lifespan=lifespan)
    app.state.sessions = sessions
    app.state.mcp_sessions = mcp_sessions
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> Response:
        return error(exc.status, exc.message)

    json_errors(app)

    @app.get("/health")
    def health() -> dict:
        logs = [sessions.health(), mcp_sessions.health()]
        bad = next((h for h in logs if h["episode_log"] != "ok"), logs[0])
        out = {"status": "ok" if bad["episode_log"] == "ok" else "degraded", "world": world, "sessions": len(sessions),
               "mcp_sessions": len(mcp_sessions), **bad, "episodes_waiting": sum(h["episodes_waiting"] for h in logs)}
        return out  # 200 while degraded: searches and extracts are still served; closes that cannot be stored are 503

    app.include_router(session_routes(world, sessions))
    if mcp_app is not None:
        app.mount("/", McpSessionEnd(mcp_app, mcp_sessions))
    return app


__all__ = ["FLUSH_INTERVAL_S", "MAX_BODY_BYTES", "MAX_JSON_DEPTH", "BodyLimit", "EpisodeNotLogged", "McpSessionEnd", "RequestError",
           "build_mcp", "create_app", "json_errors", "new_session", "parse_body", "serve", "session_routes"]


def serve(world: str, warehouse: WarehouseLike, host: str | None = None, port: int | None = None,
          idle_timeout: float | None = None, record: bool = True, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve :func:`create_app` with uvicorn until interrupted (``worldforge serve search``).

    Args:
        world, warehouse, record: as :func:`create_app`.
        idle_timeout: seconds before an idle session expires (default ``WORLDFORGE_SESSION_IDLE_S``).
        host, port: where to listen (default ``WORLDFORGE_HOST`` / ``WORLDFORGE_SEARCH_PORT``).
        on_ready: called with the base URL once the app is built, before serving.

    Raises:
        WarehouseError: the world or its corpus is missing (before anything listens).
    """
    import uvicorn

    settings = apply_settings()
    host, port = host or settings.host, port or settings.search_port
    api = create_app(world, warehouse, idle_timeout=idle_timeout if idle_timeout is not None else settings.session_idle_s, record=record)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}")
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    with relaxed_gc():  # the collector walks the open worlds' objects: 7% of a busy server's CPU at CPython's default
        uvicorn.run(api, host=host, port=port, log_level="warning")
