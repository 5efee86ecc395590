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
import errno
import inspect
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field, ValidationError
from starlette.concurrency import run_in_threadpool

from worldforge.errors import WorldforgeError, validation_problems
from worldforge.runtime import relaxed_gc, return_large_blocks
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
from worldforge.serving.sessions import Session, SessionRegistry
from worldforge.settings import get_settings
from worldforge.simenv.env import TOOL_SCHEMAS, EpisodeOver, SearchEnv
from worldforge.simenv.perturbations import MAX_INSTRUCTION_CHARS, PerturbationConfig, from_instruction, parse_perturbations
from worldforge.simenv.reward import RewardConfig
from worldforge.simenv.tools import SEARCH_TOOLS
from worldforge.tasks.store import tasks_by_id
from worldforge.trajectories.model import storable
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.duck import open_readonly
from worldforge.warehouse.layout import Warehouse, WarehouseLike

log = logging.getLogger(__name__)

SEED_RANGE = (-(2**63), 2**63 - 1)
"""Seeds are stored as BIGINT."""


class EpisodeNotLogged(Exception):
    """A closed session's episode could not be written to the episode log; it is kept in memory
    and retried by :meth:`Sessions.flush` (the close is answered 503)."""


class Sessions:
    """The search server's open sessions (a :class:`~worldforge.serving.sessions.SessionRegistry`
    of :class:`SearchEnv`) and what a session leaves when it closes: its episode.

    A session that closes or expires with at least one step is written to the episode log
    (:func:`worldforge.trajectories.episodes.log_episodes`, ``fsync``-ed) before :meth:`close`
    returns; :meth:`flush` then fills the episode store from the log. Each session has a lock:
    its steps run in worker threads, one at a time, and a session whose lock is held is in use,
    so it never expires under a step however long the step takes.

    Args:
        idle_timeout: seconds without a call before a session expires.
        max_sessions: open sessions at most; :meth:`add` refuses more.
        record: write closed sessions to the episode log (``False``: load tests).
        warehouse: the warehouse of the log and the store.
        agent: the ``agent`` of the recorded episodes (``http``, ``mcp``).
    """

    def __init__(self, idle_timeout: float, max_sessions: int, record: bool = True, *, warehouse: WarehouseLike, agent: str = "http"):
        self.record, self.agent = record, agent
        self.warehouse = Warehouse.of(warehouse)
        self.registry: SessionRegistry[SearchEnv] = SessionRegistry(max_sessions, idle_timeout)
        self._lock = threading.Lock()
        self.finished: list[SearchEnv] = []
        """Closed sessions whose episode could not be logged yet (retried by :meth:`flush`)."""
        self.unlogged: dict[str, SearchEnv] = {}
        """The sessions of :attr:`finished` that a close answered 503, by the id the close named: a
        close of that id again is no success until the episode is logged (:meth:`take_closing`)."""
        self.log_problem: str | None = None
        """Why the last write of the episode log failed (one line naming the path); ``None`` once one succeeds."""
        self.log_full: bool | None = None
        """Whether that failure was a lack of space (``ENOSPC``, a quota)."""

    def retire(self, envs: list[SearchEnv], keys: dict[str, list[SearchEnv]] | None = None) -> None:
        """Log the episodes of closed sessions, all with one ``fsync`` (called without the lock held).

        ``keys``: the ids whose close is answered by this call, each with its sessions among ``envs``;
        when the log fails they are remembered in :attr:`unlogged`, so that a close of the same id
        again is answered 503 until the episode is logged, never as a success.

        Raises:
            EpisodeNotLogged: the log could not be written; the sessions wait in :attr:`finished`.
        """
        from worldforge.trajectories import episodes

        envs = [env for env in envs if self.loggable(env)]
        if not envs:
            return
        try:
            episodes.log_episodes(self.warehouse, [self._episode(env) for env in envs])
        except Exception as exc:
            problem = self._log_failed(exc)
            log.error("%d episode(s) not logged, kept for the next flush: %s", len(envs), problem)
            with self._lock:
                self.finished.extend(envs)
                for key, closed in (keys or {}).items():
                    for env in closed:
                        if self.loggable(env):
                            self.unlogged[key] = env
            raise EpisodeNotLogged(f"the episode could not be stored: {problem}; it is kept and retried") from None
        self.log_problem = self.log_full = None
        if self.unlogged:
            logged = {id(env) for env in envs}
            with self._lock:
                for key in [k for k, env in self.unlogged.items() if id(env) in logged]:
                    del self.unlogged[key]

    def _log_failed(self, exc: Exception) -> str:
        """Note why the episode log could not be written (for ``/health``) and return it as one line."""
        path = self.warehouse.episode_log
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            problem, self.log_full = f"the episode log {path} cannot grow: {os.strerror(exc.errno)}", True
        else:
            problem, self.log_full = f"the episode log {path} cannot be written ({type(exc).__name__}: {exc})", False
        self.log_problem = problem.splitlines()[0] if problem else problem
        return self.log_problem

    def health(self) -> dict[str, Any]:
        """The episode log's state for ``/health``: ``{"episode_log": "ok" | "full" | "failing",
        "episode_log_error"?: one line naming the path, "episodes_waiting": closed sessions kept in
        memory until the log takes them}``. ``full``: the last write found no space (ENOSPC or a
        quota); it turns ``ok`` at the next write that succeeds (the flush retries every second)."""
        state = "ok" if self.log_problem is None else "full" if self.log_full else "failing"
        out: dict[str, Any] = {"episode_log": state, "episodes_waiting": len(self.finished)}
        if self.log_problem is not None:
            out["episode_log_error"] = self.log_problem
        return out

    def loggable(self, env: SearchEnv) -> bool:
        """Whether closing ``env`` logs an episode: recording is on and it took a step or was answered."""
        return self.record and bool(env.history or env.result is not None)

    def flush(self) -> int:
        """Log the sessions waiting in :attr:`finished`, then record the episode log in
        the episode store (:func:`~worldforge.trajectories.episodes.drain_episode_log`); never raises
        (a failure is logged and retried at the next flush).

        Returns:
            How many episodes were recorded in the store.
        """
        from worldforge.trajectories import episodes

        with self._lock:
            waiting, self.finished = self.finished, []
        with contextlib.suppress(EpisodeNotLogged):
            self.retire(waiting)
        try:
            return episodes.drain_episode_log(self.warehouse).recorded
        except Exception:
            log.exception("could not record the episode log of %s; it is kept for the next flush", self.warehouse)
            return 0

    def _episode(self, env: SearchEnv):
        from worldforge.simenv.env import episode_of

        # a task's episode is finished when its answer was submitted; a session without a task when it closes
        return episode_of(env, self.agent, finished=env.result is not None or env.task is None)

    def restart(self, key: str, env: SearchEnv) -> None:
        """Log a session's episode so far (when it took a step or was answered) and give the session
        a new episode id, before its :meth:`SearchEnv.reset` starts the next episode under ``key``.

        Raises:
            EpisodeNotLogged: the log could not be written; the session is left as it was.
        """
        from worldforge.trajectories import episodes

        if self.record and (env.history or env.result is not None):
            try:
                episodes.log_episodes(self.warehouse, [self._episode(env)])
            except Exception as exc:
                problem = self._log_failed(exc)
                log.error("the episode of session %s was not logged before its reset: %s", key, problem)
                raise EpisodeNotLogged(f"the episode could not be stored: {problem}; the session was not reset") from None
            self.log_problem = self.log_full = None
        env.session_id = f"{key}-{uuid.uuid4().hex[:12]}"

    def __len__(self) -> int:
        return len(self.registry)

    def add(self, env: SearchEnv, key: str | None = None) -> None:
        """Register a new session under ``key`` (default: its ``session_id``), expiring idle ones first.

        Raises:
            SessionLimit: ``max_sessions`` sessions are already open.
        """
        self.reap()
        self.registry.open(key or env.session_id, env)

    def take(self, sid: str) -> SearchEnv | None:
        """Take session ``sid`` out of the registry (a step in flight on it finishes first) without
        logging it: the caller hands it to :meth:`retire`, with others (one ``fsync`` for a batch
        of closes). ``None`` when there is no such session."""
        session = self.registry.pop(sid)
        if session is None:
            return None
        with session.lock:  # a step in flight finishes first, so the episode is complete
            return session.value

    def take_closing(self, sid: str) -> list[SearchEnv]:
        """What a close of ``sid`` must log before it is answered: the open session :meth:`take`
        takes out, and the episode of an earlier close of ``sid`` that was answered 503 and still
        waits in :attr:`finished` (taken out of it, so the caller's :meth:`retire` logs it now or
        puts it back). Empty when there is no such session and nothing of it waits."""
        envs = []
        with self._lock:
            waiting = self.unlogged.get(sid)
            if waiting is not None:  # not in finished: a flush is logging it right now; logging it twice is harmless (one per episode id in the store)
                self.finished = [env for env in self.finished if env is not waiting]
                envs.append(waiting)
        env = self.take(sid)
        if env is not None:
            envs.append(env)
        return envs

    def close(self, sid: str) -> bool:
        """Close session ``sid``; when it took a step its episode is in the episode log on return.
        A close of a session whose earlier close was answered 503 logs that episode again: it is
        a success only once the episode is in the log.

        Returns:
            ``False`` when there is no such session (and no episode of it waits to be logged).

        Raises:
            EpisodeNotLogged: the log could not be written (the episode is kept and retried).
        """
        envs = self.take_closing(sid)
        if not envs:
            return False
        self.retire(envs, {sid: envs})
        return True

    def close_all(self) -> int:
        """Close every open session (server shutdown); returns how many. Never raises."""
        taken = self.registry.pop_all()
        with contextlib.suppress(EpisodeNotLogged):
            self.retire([s.value for s in taken])
        return len(taken)

    def reap(self) -> int:
        """Expire idle sessions (never one with a step in flight), logging their episodes; returns how many. Never raises."""
        stale = self.registry.pop_idle()
        with contextlib.suppress(EpisodeNotLogged):
            self.retire([s.value for s in stale])
        return len(stale)


def _task(warehouse: WarehouseLike, world: str, task_id: str):
    task = tasks_by_id(Warehouse.of(warehouse).world(world)).get(task_id)
    if task is None:
        raise RequestError(404, f"world {world!r} has no task {task_id!r}")
    return task


_SCENARIOS: FileCache[frozenset[str]] = FileCache()


def world_names(warehouse: WarehouseLike) -> set[str]:
    """The worlds of a warehouse: the names ``<world>`` of its ``<world>.duckdb`` files (not the stores)."""
    return {p.name.removesuffix(".duckdb") for p in Warehouse.of(warehouse).world_files()}


def _is_world(warehouse: WarehouseLike, name: str) -> bool:
    """Whether ``<name>.duckdb`` is a world of the warehouse: one ``stat``, not a listing of the
    warehouse (a catalog holds thousands of worlds)."""
    wh = Warehouse.of(warehouse)
    try:
        path = wh.world(name)
    except WorldforgeError:  # a store's name
        return False
    return path.parent == wh.root and path.is_file()  # no path out of the warehouse ("../x"); a NUL byte: False


def scenario_names(warehouse: WarehouseLike, world: str) -> frozenset[str]:
    """The scenarios of a world that have a corpus (``_corpus.scenario``), cached while the file is unchanged."""
    path = Warehouse.of(warehouse).world(world)

    def load() -> frozenset[str]:
        con = open_readonly(path)
        try:
            tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'").fetchall()}
            rows = con.execute("SELECT DISTINCT scenario FROM _corpus WHERE scenario IS NOT NULL").fetchall() if "_corpus" in tables else []
        finally:
            con.close()
        return frozenset(r[0] for r in rows)

    return _SCENARIOS.get(path, "scenarios", load)


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


def new_session(body: Any, world: str, warehouse: WarehouseLike) -> SearchEnv:
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
    if instruction:
        if not isinstance(instruction, str):
            raise RequestError(422, f"'instruction' must be a string, not {type(instruction).__name__}")
        if len(instruction) > MAX_INSTRUCTION_CHARS:
            raise RequestError(422, f"'instruction' has {len(instruction)} characters; at most {MAX_INSTRUCTION_CHARS} are accepted")
        try:
            config = from_instruction(instruction)
        except WorldforgeError as exc:
            raise RequestError(422, str(exc)) from None
    else:
        try:
            config = parse_perturbations(body.get("perturbations"))
        except WorldforgeError as exc:
            raise RequestError(422, str(exc)) from None
    if not _is_world(warehouse, w):
        raise RequestError(404, f"no world {w!r} in this warehouse")
    task = _task(warehouse, w, task_id) if task_id else None
    scenario = scenario or (task.extra.get("scenario") if task else None)
    if scenario is not None and scenario not in scenario_names(warehouse, w):
        raise RequestError(404, f"world {w!r} has no scenario {scenario!r}")
    return SearchEnv(w, scenario, task, config, seed, warehouse=warehouse)


def _observation_json(env: SearchEnv, obs) -> dict[str, Any]:
    return {"observation": obs.text, "error": obs.error, "perturbations": obs.fired, "revealed": obs.revealed,
            "leaks_blocked": obs.leaks_blocked, "turn": env.turn}


def build_mcp(world: str, warehouse: WarehouseLike, perturbations: PerturbationConfig | None = None, seed: int = 0,
              sessions: Sessions | None = None) -> MCPServer:
    """The MCP server: the three tools, one SearchEnv per MCP session.

    A stateful (2025-11-25) MCP session is identified by its ``mcp-session-id``. The
    stateless protocol (2026-07-28) has no session, so each tool also takes an optional
    ``session_id`` argument; calls without either share the server's default session.
    The environments live in ``sessions`` (agent ``mcp``): they expire when idle, and
    :func:`create_app` closes one when its MCP session is deleted, recording its episode.
    """
    server = MCPServer(name="worldforge-search", instructions=f"Simulated web search over the fictional world {world!r}.")
    sessions = sessions if sessions is not None else Sessions(get_settings().session_idle_s, 10_000, record=False, warehouse=warehouse, agent="mcp")

    def answer(name: str, arguments: dict[str, Any], ctx: Context, session_id: str | None = None) -> str:
        key = (ctx.headers or {}).get("mcp-session-id") or session_id or "default"
        # in use for the whole call (tools run in worker threads), its steps one at a time
        with sessions.registry.using(key, lambda: SearchEnv(world, perturbations=perturbations, seed=seed, warehouse=warehouse)) as (entry, _):
            with entry.lock:
                if entry.closed:  # the MCP session ended while this call waited: its episode is logged without it
                    return "Error: this MCP session was closed; start a new one."
                return entry.value.step({"name": name, "arguments": arguments}).text

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    session_param = inspect.Parameter("session_id", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=Annotated[
        str | None, Field(description="The episode's session, for clients of the stateless protocol (no mcp-session-id header).")])
    for tool in SEARCH_TOOLS:  # the declared tools, with the stateless protocol's session_id after their arguments
        server.add_tool(tool.function(answer, leading=[ctx_param], trailing=[session_param]), name=tool.name, description=tool.description)
    return server


class McpSessionEnd:
    """ASGI middleware: a ``DELETE`` of an MCP session (the protocol's session end, header
    ``mcp-session-id``) closes its environment in ``sessions``, recording its episode in the
    ``fsync``-ed episode log, *before* the request goes on to the MCP transport: a session end
    that was answered is durable. When the log cannot take the episode the ``DELETE`` is answered
    503 with the reason (the episode is kept in memory and retried; the MCP session stays, so the
    client may send its ``DELETE`` again). That ``DELETE`` logs the kept episode again, and is
    answered 503 again while the log still fails: it reaches the transport (a success) only once
    the episode is in the log."""

    def __init__(self, app: Any, sessions: Sessions):
        self.app, self.sessions = app, sessions

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        """Before a ``DELETE`` close the session it names; then pass the request on."""
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            sid = next((v for k, v in scope.get("headers", []) if k == b"mcp-session-id"), None)
            if sid:
                try:
                    await run_in_threadpool(self.sessions.close, sid.decode("latin-1"))
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


def create_app(
    world: str,
    warehouse: WarehouseLike,
    idle_timeout: float | None = None,
    max_sessions: int = 10_000,
    mcp: bool = True,
    record: bool = True,
) -> FastAPI:
    """The HTTP app (and the MCP endpoint at ``/mcp``) for one default world.

    ``record=False`` keeps closed sessions out of the episode store (load tests).

    Raises:
        WarehouseError: the world or its corpus is missing (checked at start-up).
    """
    wh = Warehouse.of(warehouse)
    SearchEnv(world, warehouse=wh)  # fail at start-up, with a clear error, if the world cannot be searched
    idle_timeout = idle_timeout or get_settings().session_idle_s
    sessions = Sessions(idle_timeout, max_sessions, record, warehouse=wh, agent="http")
    mcp_sessions = Sessions(idle_timeout, max_sessions, record, warehouse=wh, agent="mcp")
    mcp_server = build_mcp(world, wh, sessions=mcp_sessions) if mcp else None
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
                s.close_all()
                s.flush()

    app = FastAPI(title="worldforge simulated search", lifespan=lifespan)
    app.state.sessions = sessions
    app.state.mcp_sessions = mcp_sessions
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)

    @app.exception_handler(RequestError)
    async def refused(request: Request, exc: RequestError) -> Response:
        return error(exc.status, exc.message)

    json_errors(app)

    async def raw_body(request: Request) -> bytes:
        return await request.body()  # BodyLimit raises RequestError(413) past MAX_BODY_BYTES

    @app.get("/health")
    def health() -> dict:
        logs = [sessions.health(), mcp_sessions.health()]
        bad = next((h for h in logs if h["episode_log"] != "ok"), logs[0])
        out = {"status": "ok" if bad["episode_log"] == "ok" else "degraded", "world": world, "sessions": len(sessions),
               "mcp_sessions": len(mcp_sessions), **bad, "episodes_waiting": sum(h["episodes_waiting"] for h in logs)}
        return out  # 200 while degraded: searches and extracts are still served; closes that cannot be stored are 503

    @app.get("/tools")
    def tools() -> list[dict]:
        return TOOL_SCHEMAS

    def open_from(body: Any) -> dict:
        try:
            env = new_session(body, world, wh)
        except RequestError:
            raise
        except (WorldforgeError, ValueError) as exc:
            raise RequestError(400, str(exc)) from None
        try:
            sessions.add(env)
        except WorldforgeError as exc:  # too many open sessions
            raise RequestError(400, str(exc)) from None
        return {"session_id": env.session_id, "observation": env.reset()}

    def open_session(raw: bytes) -> dict:
        return {**open_from(parse_body(raw)), "tools": TOOL_SCHEMAS}

    @app.post("/sessions")
    async def create(request: Request) -> Response:
        raw = await raw_body(request)
        return SafeJSONResponse(await run_in_threadpool(open_session, raw), status_code=201)

    @contextlib.contextmanager
    def session(sid: str) -> Iterator[Session[SearchEnv]]:
        """The session ``sid`` (its environment and step lock), in use for the whole request (a slow
        body upload included): it cannot expire under the request. A close may still take it out
        meanwhile: each call checks :func:`still_open` once it holds the lock."""
        try:
            item, _ = sessions.registry.acquire(sid)
        except KeyError:
            raise RequestError(404, f"no session {sid!r} (closed or expired)") from None
        try:
            yield item
        finally:
            sessions.registry.release(item)

    def still_open(item: Session[SearchEnv]) -> SearchEnv:
        """The session's environment, called with its lock held; 404 when a close took the session out
        while this call waited (its episode is logged without the call, so the call must not run)."""
        if item.closed:
            raise RequestError(404, f"no session {item.key!r} (closed while this call waited)")
        return item.value

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

    @app.post("/sessions/{sid}/step")
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
            envs = sessions.take_closing(sid)
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
                sessions.retire([env for _, _, env in closing], keys)  # every closed episode in the log, one fsync, before the reply
            except EpisodeNotLogged as exc:  # kept in memory and retried by the flush, as a single close's
                for i, _, env in closing:
                    if sessions.loggable(env):  # a session with nothing to log closed (204), as DELETE says
                        results[i] = {"status": 503, "error": str(exc)}
        return {"results": results}

    @app.post("/batch")
    async def batch(request: Request) -> Response:
        raw = await raw_body(request)
        return SafeJSONResponse(await run_in_threadpool(run_batch, raw))

    @app.post("/sessions/{sid}/submit")
    async def submit(sid: str, request: Request) -> Response:
        with session(sid) as item:
            raw = await raw_body(request)
            return SafeJSONResponse(await run_in_threadpool(submit_answer, item, raw))

    @app.post("/sessions/{sid}/reset")
    def reset(sid: str) -> Response:
        with session(sid) as item, item.lock:
            env = still_open(item)
            try:
                sessions.restart(sid, env)  # the episode so far is logged; the next one gets its own id
            except EpisodeNotLogged as exc:
                return error(503, str(exc))
            return SafeJSONResponse({"observation": env.reset()})

    @app.delete("/sessions/{sid}")
    def close(sid: str) -> Response:
        try:
            if not sessions.close(sid):  # the episode is in the (fsync-ed) episode log before the reply
                return error(404, f"no session {sid!r}")
        except EpisodeNotLogged as exc:
            return error(503, str(exc))
        return Response(status_code=204)

    if mcp_app is not None:
        app.mount("/", McpSessionEnd(mcp_app, mcp_sessions))
    return app


__all__ = ["FLUSH_INTERVAL_S", "MAX_BODY_BYTES", "MAX_JSON_DEPTH", "BodyLimit", "EpisodeNotLogged", "McpSessionEnd", "RequestError", "Sessions", "build_mcp", "create_app", "json_errors", "new_session", "parse_body", "serve"]


def serve(world: str, warehouse: WarehouseLike, host: str | None = None, port: int | None = None,
          idle_timeout: float | None = None, record: bool = True, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve :func:`create_app` with uvicorn until interrupted (``worldforge serve search``).

    Args:
        world, warehouse, idle_timeout, record: as :func:`create_app`.
        host, port: where to listen (default ``WORLDFORGE_HOST`` / ``WORLDFORGE_SEARCH_PORT``).
        on_ready: called with the base URL once the app is built, before serving.

    Raises:
        WarehouseError: the world or its corpus is missing (before anything listens).
    """
    import uvicorn

    settings = get_settings()
    host, port = host or settings.host, port or settings.search_port
    api = create_app(world, warehouse, idle_timeout=idle_timeout, record=record)
    if on_ready is not None:
        on_ready(f"http://{host}:{port}")
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    with relaxed_gc():  # the collector walks the open worlds' objects: 7% of a busy server's CPU at CPython's default
        uvicorn.run(api, host=host, port=port, log_level="warning")
