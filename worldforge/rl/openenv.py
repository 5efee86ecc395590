"""The search-world environment with OpenEnv's server/client conventions (``openenv-core``).

OpenEnv (``openenv.core``) splits an environment into typed models (:class:`SearchAction`,
:class:`SearchObservation`, :class:`SearchState`), a server-side ``Environment`` with the
Gym-style contract ``reset(seed, episode_id, **kwargs) -> Observation``,
``step(action) -> Observation`` and the ``state`` property (:class:`SearchWorldEnvironment`),
the FastAPI app OpenEnv's own :func:`openenv.core.env_server.create_app` builds around it
(:func:`create_openenv_app`: ``/ws`` persistent sessions, ``/reset``, ``/step``, ``/state``,
``/schema``, ``/metadata``, ``/health``), and an ``EnvClient`` a trainer imports
(:class:`SearchWorldClient`).

Every tool call goes through the core, :class:`~worldforge.rl.env.SearchWorldEnv`: an episode is
one task of one world, the actions are its tools (``web_search``, ``web_extractor``,
``dict_memory``) and ``submit``, whose observation carries the reward (the task's item-F1 as
the core computes it) and ``done=True``.

Episodes run over the WebSocket (``/ws``, what :class:`SearchWorldClient` uses): each connection
gets its own environment instance. OpenEnv's HTTP ``/reset`` and ``/step`` create a fresh
environment per request, so they serve one-shot calls (a reset's question), not episodes.

Example::

    from worldforge.rl.openenv import SearchAction, SearchWorldClient

    with SearchWorldClient(base_url="http://127.0.0.1:8001").sync() as env:
        result = env.reset(task="smartphones_2029-lookup-0")
        result = env.step(SearchAction(tool="web_search", arguments={"query": "Aurora X2"}))
        result = env.step(SearchAction(tool="submit", arguments={"answer": "| model |\\n|---|\\n| Aurora X2 |"}))
        print(result.reward, result.done)

For TRL's ``GRPOTrainer(environment_factory=...)``, :class:`RemoteSearchWorld` wraps the client in
the tool-method shape TRL expects (``reset(**row)``, one method per tool, ``get_reward``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable, Literal, Optional

from fastapi import FastAPI, Request, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server import Action, ConcurrencyConfig, Environment, Observation, State, create_app
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field

from worldforge.errors import WorldforgeError
from worldforge.rl.env import EpisodeOver, RewardConfig, SearchWorldEnv, check_family, world_tasks
from worldforge.rl.trl import SUBMITTED, TRLTools
from worldforge.runtime import apply_settings, relaxed_gc, return_large_blocks
from worldforge.serving.sessions import DEFAULT_IDLE_S
from worldforge.simenv.tools import EPISODE_TOOLS
from worldforge.warehouse.layout import Warehouse, WarehouseLike

__all__ = [
    "DEFAULT_MAX_SESSIONS", "TOOLS", "RemoteSearchWorld", "SearchAction", "SearchObservation", "SearchState", "SearchWorldClient",
    "SearchWorldEnvironment", "create_openenv_app", "serve",
]

TOOLS: list[dict] = [tool.openai_schema() for tool in EPISODE_TOOLS]
"""The episode's tools as OpenAI function-tool schemas: ``web_search``, ``web_extractor``, ``dict_memory``, ``submit``."""

TOOL_NAMES = tuple(tool.name for tool in EPISODE_TOOLS)
"""The tools' names, the values :attr:`SearchAction.tool` accepts."""

DEFAULT_MAX_SESSIONS = 64
"""Concurrent WebSocket sessions (one environment each) a server accepts by default."""


class SearchAction(Action):
    """One tool call of an episode (OpenEnv ``Action``; unknown fields are rejected).

    Attributes:
        tool: ``web_search``, ``web_extractor``, ``dict_memory``, or ``submit`` (ends the episode).
        arguments: the tool's arguments as in :data:`TOOLS` (``{"query": ...}``, ``{"url": ...}``,
            ``{"operation": ..., "dict": ..., "key_list": ...}``, ``{"answer": "<Markdown table>"}``).
            Malformed arguments of the three search tools are answered with an error
            observation by the core; ``submit`` without a string ``answer`` is one too.
    """

    tool: Literal[TOOL_NAMES]  # type: ignore[valid-type]  # the declared names, one Literal
    arguments: dict[str, Any] = Field(default_factory=dict)


class SearchObservation(Observation):
    """What the environment returns (OpenEnv ``Observation``: ``done``, ``reward``, ``metadata``).

    On reset: the task's question and the tools (``tool`` is ``None``). After a tool call: its
    observation. After ``submit``: ``done=True``, ``reward`` = the core's reward (item-F1 by
    default) and ``info`` = the scores. OpenEnv's wire format carries ``done`` and ``reward``
    beside the observation and drops ``metadata``, so everything a client needs is in fields.

    Attributes:
        text: the observation text (the question and tool list on reset).
        tool: the tool that answered (``None`` on reset).
        error: the call failed (malformed, unknown URL, a perturbation, a spent budget).
        fired: perturbation decisions that fired on this call (``{"kind", "detail"}``).
        tools: on reset, :data:`TOOLS`; empty otherwise.
        task_text: on reset, the question and answer format without the tool list (what a
            TRL-style adapter appends to its prompt, whose tools the chat template renders).
        info: on ``submit``, the core's scores (``f1_by_item``, ``f1_by_row``, precision/recall,
            ``by_column``, ``notes``, ``tool_calls``, ``format_ok``, ``reward``); empty otherwise.
    """

    text: str = ""
    tool: Optional[str] = None
    error: bool = False
    fired: list[dict] = Field(default_factory=list)
    tools: list[dict] = Field(default_factory=list)
    task_text: str = ""
    info: dict[str, Any] = Field(default_factory=dict)


class SearchState(State):
    """The running episode (OpenEnv ``State``: ``episode_id``, ``step_count``).

    Attributes:
        world, task, scenario: the episode's world, task ``instance_id`` and scenario (``None`` before a reset).
        question: the task's question.
        seed: the seed of the episode's perturbations.
        tool_calls: tool calls the core counted (``submit`` excluded).
        done: the episode has ended (submitted), or none was started.
        reward: the episode's reward once submitted.
    """

    world: Optional[str] = None
    task: Optional[str] = None
    scenario: Optional[str] = None
    question: str = ""
    seed: int = 0
    tool_calls: int = 0
    done: bool = True
    reward: Optional[float] = None


class SearchWorldEnvironment(Environment[SearchAction, SearchObservation, SearchState]):
    """OpenEnv ``Environment`` over the core :class:`~worldforge.rl.env.SearchWorldEnv`.

    Constructible with no arguments (OpenEnv's server calls its factory with none): without a
    warehouse the core resolves the configured one (an edge, like :class:`~worldforge.rl.env.SearchWorldEnv`).
    Each instance owns one core environment, so instances are independent and the server gives every WebSocket session its own
    (``SUPPORTS_CONCURRENT_SESSIONS``).

    Args:
        world: the world ``reset`` uses when it is given none.
        warehouse: the warehouse, or its folder (``None``: the configured one).
        reward: how the core turns the score into the reward (default: the plain item-F1).
        max_tool_calls: tool calls an episode may make (see :class:`~worldforge.rl.env.SearchWorldEnv`).
        record: log finished episodes to the warehouse's episode log (agent ``openenv``).
    """

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True
    """OpenEnv then runs every session's calls on one shared worker thread instead of a thread per
    session. A step is Python under the GIL, so 64 threads gained nothing and contended for it:
    with one thread the server spent 1.6 ms of CPU a tool step instead of 2.0 (64 sessions,
    ``bench/rl.py``'s episodes)."""

    def __init__(self, world: str | None = None, warehouse: WarehouseLike | None = None, reward: RewardConfig | None = None,
                 max_tool_calls: int | None = None, record: bool = True):
        super().__init__()
        self.world = world
        self.core = SearchWorldEnv(warehouse, reward=reward, record=record, agent="openenv", max_tool_calls=max_tool_calls)
        self._state = SearchState()

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, world: Optional[str] = None,
              task: Optional[str] = None, scenario: Optional[str] = None, perturbations: Any = None,
              family: Optional[str] = None, **kwargs: Any) -> SearchObservation:
        """Start an episode (OpenEnv's ``reset(seed, episode_id, **kwargs)``; a running one is ended first).

        Args:
            seed: seeds the perturbations (default 0); with no ``task``, it also picks the task.
            episode_id: the episode's id in :attr:`state` and in the episode store (default: the
                core session's ``rl-<hex>`` id).
            world: the world (default: the environment's ``world``).
            task: the task's ``instance_id`` or a deep question's id (default: the ``seed``-th of the world's sorted
                task ids of ``family``, modulo their number, so a group of rollouts with one seed shares its task).
            scenario: search this scenario's corpus (default: the task's own).
            perturbations: ``None``/``"none"``, ``"default"``, a schema (dict or JSON), or an
                instruction in words (:func:`~worldforge.rl.env.parse_perturbations`).
            family: where a reset with no ``task`` draws it: ``wide`` (default), ``deep`` or ``both``
                (:data:`~worldforge.rl.env.FAMILIES`). A deep question's reward is its answer's correctness.

        Returns:
            The question and the tools, ``done=False``, ``reward=None``.

        Raises:
            WorldforgeError: an unknown argument, no world given, or what the core raises (no
                such world, task or scenario; invalid perturbations). On the server these reach
                the client through OpenEnv's error reply (``RuntimeError("Server error: ...")``).
        """
        if kwargs:
            raise WorldforgeError(f"reset got unknown argument(s) {sorted(kwargs)}: it takes seed, episode_id, world, task, scenario, "
                                  "perturbations, family")
        world = world or self.world
        if not world:
            raise WorldforgeError("reset needs world=... (the server was started with no default world)")
        seed = 0 if seed is None else int(seed)
        family = check_family(family or "wide")  # checked even when a task is named
        if task is None:
            ids = sorted(world_tasks(world, self.core.warehouse, family))
            task = ids[seed % len(ids)]
        text = self.core.reset(world, task, scenario=scenario, seed=seed, perturbations=perturbations, episode_id=episode_id)
        session = self.core.session
        assert session is not None and self.core.task is not None
        self._state = SearchState(episode_id=episode_id or session.session_id, step_count=0, world=world, task=task,
                                  scenario=session.scenario, question=self.core.task.question, seed=seed, done=False)
        return SearchObservation(text=text, tools=TOOLS, task_text=self.core.initial_observation(tools=False),
                                 metadata={"world": world, "task": task})

    def step(self, action: SearchAction, timeout_s: Optional[float] = None, **kwargs: Any) -> SearchObservation:
        """Answer one action (OpenEnv's ``step``): a search tool through the core, or ``submit``.

        Returns:
            The tool's observation (``reward=None``, ``done=False``), or for ``submit`` the
            reward and ``done=True`` with the scores in ``info``.

        Raises:
            EpisodeOver: no episode is running (before ``reset`` or after ``submit``).
        """
        if self.core.done:
            raise EpisodeOver("the episode is over: reset(task=...) to start another")
        self._state.step_count += 1
        if action.tool == "submit":
            answer = action.arguments.get("answer")
            if not isinstance(answer, str):
                return SearchObservation(text='Error: submit needs {"answer": "<the table, or the response>"}', tool="submit", error=True)
            reward = self.core.submit(answer)
            self._state.done, self._state.reward, self._state.tool_calls = True, reward, self.core.tool_calls
            return SearchObservation(text=SUBMITTED, tool="submit", done=True, reward=reward,
                                     info=dict(self.core.info))
        obs = self.core.step(action.tool, action.arguments)
        self._state.tool_calls = self.core.tool_calls
        return SearchObservation(text=obs.text, tool=obs.tool, error=obs.error, fired=list(obs.fired))

    async def step_async(self, action: SearchAction, timeout_s: Optional[float] = None, **kwargs: Any) -> SearchObservation:
        """:meth:`step` as OpenEnv's server calls it (on its event loop, in place of ``step`` on a worker thread).

        A search tool's step is local CPU work of about a third of a millisecond (the world's index and corpus are in
        memory since ``reset``), less than the hop to a worker thread and back, so it runs inline. ``submit`` scores
        the answer and writes the episode to the episode store (disk), so it, and a step after the episode is over,
        still go to a worker thread.
        """
        if action.tool == "submit" or self.core.done:
            return await asyncio.to_thread(self.step, action, timeout_s, **kwargs)
        return self.step(action, timeout_s, **kwargs)

    @property
    def state(self) -> SearchState:
        """The running (or last) episode (OpenEnv's ``state``)."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description shown at ``/metadata``."""
        return EnvironmentMetadata(
            name="worldforge-search", version="1.0.0",
            description="WideSearch-style tables and BrowseComp-style deep questions in a fictional world: web_search / web_extractor / "
                        "dict_memory, then submit a Markdown table (reward = the task's item-F1) or a one-answer response (reward = its correctness).",
        )

    def close(self) -> None:
        """End a running episode (logged unfinished when it took a step)."""
        self.core.close()


class _QuietDisconnect:
    """ASGI middleware: a WebSocket session whose client left first ends quietly.

    OpenEnv's ``/ws`` handler closes the socket in its ``finally`` and catches only ``RuntimeError``, but Starlette raises
    ``WebSocketDisconnect`` for a close sent after the client's: uvicorn logged that as "Exception in ASGI application", a
    traceback on the server's log for every session a client ended (and the formatting cost CPU on a busy server).
    """

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            pass


def create_openenv_app(world: str | None, warehouse: WarehouseLike,
                       max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float = DEFAULT_IDLE_S,
                       reward: RewardConfig | None = None, max_tool_calls: int | None = None, record: bool = True) -> FastAPI:
    """The FastAPI app built by OpenEnv's ``create_app`` over :class:`SearchWorldEnvironment`.

    Routes are OpenEnv's (``/ws``, ``/reset``, ``/step``, ``/state``, ``/schema``,
    ``/metadata``, ``/health``, ``/mcp``). A :class:`~worldforge.errors.WorldforgeError` raised by
    an HTTP route (an unknown world or task on ``/reset``) is answered ``400 {"error": message}``;
    over the WebSocket OpenEnv answers it with its own error message (code ``EXECUTION_ERROR``)
    and the session stays open.

    Args:
        world: the default world of ``reset``.
        warehouse: the warehouse, or its folder.
        max_sessions: concurrent WebSocket sessions (one environment each).
        idle_timeout: seconds before an idle session is closed.
        reward, max_tool_calls, record: as :class:`SearchWorldEnvironment`.

    Raises:
        WarehouseError: ``world`` is given and does not exist or has no tasks.
    """
    warehouse = Warehouse.of(warehouse)
    if world:
        world_tasks(world, warehouse)  # fail before anything listens
    factory = functools.partial(SearchWorldEnvironment, world=world, warehouse=warehouse, reward=reward,
                                max_tool_calls=max_tool_calls, record=record)
    app = create_app(factory, SearchAction, SearchObservation, env_name="worldforge-search",
                     concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout))
    app.add_middleware(_QuietDisconnect)

    @app.exception_handler(WorldforgeError)
    async def user_error(request: Request, exc: WorldforgeError) -> JSONResponse:
        message = str(exc)
        if isinstance(exc, EpisodeOver):
            message += " (HTTP /reset and /step each use a fresh environment: run episodes over the WebSocket /ws, as EnvClient does)"
        return JSONResponse({"error": message}, status_code=400)

    return app


def serve(world: str | None, warehouse: WarehouseLike, host: str | None = None, port: int | None = None,
          max_sessions: int = DEFAULT_MAX_SESSIONS, idle_timeout: float | None = None, record: bool = True,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve :func:`create_openenv_app` with uvicorn until interrupted (``worldforge serve openenv``).

    Args:
        world, warehouse, max_sessions, idle_timeout, record: as :func:`create_openenv_app`.
        host, port: where to listen (default ``WORLDFORGE_HOST`` / ``WORLDFORGE_OPENENV_PORT``).
        on_ready: called with the base URL once the socket listens.

    Raises:
        WarehouseError: the world is missing or has no tasks (before anything listens).
    """
    import uvicorn

    settings = apply_settings()
    host, port = host or settings.host, port or settings.openenv_port
    api = create_openenv_app(world, warehouse, max_sessions=max_sessions, record=record,
                             idle_timeout=idle_timeout if idle_timeout is not None else settings.session_idle_s)
    url = f"http://{host}:{port}"

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets=sockets)
            if on_ready is not None and self.started:
                on_ready(url)

    # no permessage-deflate: compressing each observation cost the server a tenth of its time, for a
    # link that is loopback or a data-centre network
    return_large_blocks()  # freed large blocks go back to the OS at once (see worldforge.runtime)
    with relaxed_gc():  # the collector walks the open worlds' objects: 7% of the server's CPU at CPython's default
        _Server(uvicorn.Config(api, host=host, port=port, log_level="warning", ws_per_message_deflate=False)).run()


class SearchWorldClient(EnvClient[SearchAction, SearchObservation, SearchState]):
    """OpenEnv ``EnvClient`` of a ``worldforge serve openenv`` server (one WebSocket session per client).

    Async like every ``EnvClient`` (``await env.reset(...)``); ``.sync()`` gives OpenEnv's
    blocking wrapper. ``reset`` takes :meth:`SearchWorldEnvironment.reset`'s arguments
    (``task=``, ``world=``, ``seed=``, ``scenario=``, ``perturbations=``); a server-side error
    (an unknown task) raises ``RuntimeError("Server error: <message> (code: EXECUTION_ERROR)")``.

    Args:
        base_url: the server's URL (``http://127.0.0.1:8001``; ``ws://`` works too).
        (the rest: as :class:`openenv.core.env_client.EnvClient`)
    """

    async def call(self, tool: str, **arguments: Any) -> StepResult[SearchObservation]:
        """One tool call: ``await env.call("web_search", query="...")`` (``env.call(...)`` on the sync wrapper)."""
        return await self.step(SearchAction(tool=tool, arguments=arguments))  # type: ignore[arg-type]

    def _step_payload(self, action: SearchAction | dict) -> dict[str, Any]:
        """The action as the server's JSON (a dict is validated as a :class:`SearchAction` first)."""
        if isinstance(action, dict):
            action = SearchAction.model_validate(action)
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[SearchObservation]:
        """OpenEnv's ``{"observation", "reward", "done"}`` as a :class:`StepResult` of :class:`SearchObservation`."""
        obs = SearchObservation(**payload.get("observation", {}), reward=payload.get("reward"), done=bool(payload.get("done", False)))
        return StepResult(observation=obs, reward=payload.get("reward"), done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> SearchState:
        """The server's state JSON as a :class:`SearchState`."""
        return SearchState(**payload)


class RemoteSearchWorld(TRLTools):
    """The served environment as a TRL ``environment_factory`` environment (one WebSocket session each).

    TRL (``GRPOTrainer(environment_factory=...)``) calls ``reset(**dataset_row)`` before a rollout,
    exposes the tools (:class:`~worldforge.rl.trl.TRLTools`, the same as the in-process adapter's), and calls ``get_reward()`` once the rollout ends.
    Each tool call is one OpenEnv ``step`` through :class:`SearchWorldClient`; a server-side error
    (a call after ``submit``) comes back as an ``Error: ...`` observation, as the core's errors do.

    Example::

        from functools import partial
        trainer = GRPOTrainer(..., environment_factory=partial(RemoteSearchWorld, "http://127.0.0.1:8001"))

    Args:
        base_url: the ``worldforge serve openenv`` server.
    """

    def __init__(self, base_url: str):
        self._client = SearchWorldClient(base_url=base_url).sync()
        self._reward: float | None = None

    def reset(self, **row: Any) -> str:
        """Start the row's episode: ``world``, ``task`` (or ``instance_id``; a deep question's id too), optional ``seed``,
        ``scenario``, ``perturbations``, ``family``; other fields (``prompt`` ...) are ignored.

        Returns:
            ``"\n\n"`` and the question with its answer format (TRL appends it to the prompt's
            last message; the tools reach the model through the chat template).

        Raises:
            RuntimeError: the server refused the reset (an unknown world or task).
        """
        args = {k: row[k] for k in ("world", "seed", "scenario", "perturbations", "family") if row.get(k) is not None}
        task = row.get("task") or row.get("instance_id")
        if task is not None:
            args["task"] = task
        self._reward = None
        return "\n\n" + self._client.reset(**args).observation.task_text

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        try:
            result = self._client.step(SearchAction(tool=tool, arguments=arguments))  # type: ignore[arg-type]
        except RuntimeError as exc:
            return f"Error: {exc}"
        if result.done:
            self._reward = result.reward
        return result.observation.text

    def get_reward(self) -> float:
        """The episode's reward (the core's: item-F1, or a deep question's correctness); 0.0 when nothing was submitted."""
        return float(self._reward) if self._reward is not None else 0.0

    def __del__(self) -> None:
        try:
            self._client.close()
        except Exception:  # best effort at interpreter shutdown
            pass
