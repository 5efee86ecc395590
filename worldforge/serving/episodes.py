"""One owner of an agent episode's life: :class:`EpisodeService`.

Every entry point of the search environment — the HTTP session endpoints and ``/batch``, the MCP
tools, Search-R1's ``/retrieve``, the in-process :class:`~worldforge.rl.env.SearchWorldEnv` that
TRL and OpenEnv wrap, and the ``verifiers`` tool server — is a thin protocol adapter over one
service. The service

* **opens** an episode: a world, optionally a task (a wide table or a deep question) and a
  scenario, a seed and perturbations, every part checked (:meth:`EpisodeService.environment`);
* keeps the open episodes in one :class:`~worldforge.serving.sessions.SessionRegistry`, so every
  entry point obeys the same idle expiry, bound and eviction rules;
* **steps** an episode one call at a time (:meth:`EpisodeService.step`, :meth:`EpisodeService.stepping`),
  **submits** its answer and rewards it (:meth:`EpisodeService.submit`), **restarts** it
  (:meth:`EpisodeService.restart`);
* **closes** it and **logs** it, the same way wherever it ended (a close, an idle expiry, an
  eviction, a server stopping): an episode that took a step or was answered is written to the
  append-only episode log ``<warehouse>/episodes.log.jsonl`` (``fsync``-ed before the close
  returns), and :meth:`EpisodeService.flush` records the log in the episode store
  (:mod:`worldforge.trajectories.episodes`). A log that cannot be written keeps the episode in
  memory (:class:`EpisodeNotLogged`) until a flush logs it; a close of the same key is no success
  until then.

The environment itself, one episode's state, is :class:`~worldforge.simenv.env.SearchEnv`; an
adapter never builds one, nor logs one, by itself.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.serving.sessions import Session, SessionRegistry
from worldforge.simenv.env import Observation, SearchEnv, episode_of
from worldforge.simenv.perturbations import PerturbationConfig, parse_perturbations
from worldforge.simenv.reward import Reward, RewardConfig
from worldforge.tasks.io import Task
from worldforge.tasks.store import deep_by_id, tasks_by_id
from worldforge.trajectories.episodes import Episode
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.duck import open_readonly
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)

__all__ = ["FAMILIES", "EpisodeNotLogged", "EpisodeService", "NoSuchSession", "UnknownTarget", "check_family", "find_task", "is_deep",
           "scenario_names", "world_names", "world_tasks"]

FAMILIES = ("wide", "deep", "both")
"""The task families an episode can be drawn from: ``wide`` (WideSearch-style tables, rewarded by item-F1), ``deep``
(BrowseComp-style questions with one answer, :mod:`worldforge.tasks.deep`, rewarded by correctness), or ``both``."""


class EpisodeNotLogged(Exception):
    """A closed episode could not be written to the episode log; it is kept in memory and retried
    by :meth:`EpisodeService.flush` and by the next close of the same key (an HTTP close is answered 503)."""


class UnknownTarget(WorldforgeError):
    """An episode was asked for a world, task or scenario the warehouse does not have (HTTP 404)."""


class NoSuchSession(WorldforgeError):
    """No open session has the key (never opened, closed, expired, or closed while the call waited; HTTP 404)."""


def check_family(family: str) -> str:
    """``family`` normalised (stripped, lower case).

    Raises:
        WorldforgeError: it is not one of :data:`FAMILIES`.
    """
    name = (family or "").strip().lower()
    if name not in FAMILIES:
        raise WorldforgeError(f"unknown task family {family!r}: use one of {', '.join(FAMILIES)}")
    return name


def world_tasks(world: str, warehouse: Warehouse, family: str = "wide") -> Mapping[str, Task]:
    """A world's tasks by id (its scenarios' included), cached while the world file is unchanged
    (:func:`~worldforge.tasks.store.tasks_by_id`, :func:`~worldforge.tasks.store.deep_by_id`; read-only: shared by every caller).

    Args:
        world: the world name.
        warehouse: the warehouse.
        family: ``wide`` (the tables, by ``instance_id``), ``deep`` (the deep questions as tasks, ``extra["kind"] == "deep"``,
            by question id) or ``both`` (a world built before deep questions then has its wide tasks only).

    Raises:
        WarehouseError: the world file does not exist, or has no tasks of the family.
        WorldforgeError: an unknown family.
    """
    family = check_family(family)
    path = warehouse.world(world)
    if not path.is_file():
        raise WarehouseError(f"{path}: no such world (build it with `worldforge world run`)")
    if family == "wide":
        tasks = tasks_by_id(path)
    elif family == "deep":
        tasks = deep_by_id(path)
        if not tasks:
            raise WarehouseError(f"world {world!r} has no deep questions (a world built before them: rebuild its tasks with "
                                 "`worldforge world run --steps search_tasks`)")
    else:
        def both() -> Mapping[str, Task]:
            wide, deep = tasks_by_id(path), deep_by_id(path)
            return MappingProxyType({**wide, **deep}) if deep else wide

        tasks = _BOTH.get(path, "both", both)
    if not tasks:
        raise WarehouseError(f"world {world!r} has no {'' if family == 'both' else family + ' '}tasks "
                             "(build them with `worldforge world run --steps search_tasks`)")
    return tasks


_BOTH: FileCache[Mapping[str, Task]] = FileCache()


def find_task(world: str, tasks: Mapping[str, Task], task_id: str) -> Task:
    """The task ``task_id`` among a world's ``tasks`` (:func:`world_tasks`).

    Raises:
        UnknownTarget: the world has no such task (the message lists a few it has).
    """
    found = tasks.get(task_id)
    if found is None:
        shown = ", ".join(sorted(tasks)[:5])
        raise UnknownTarget(f"world {world!r} has no task {task_id!r} (it has {len(tasks)}: {shown}{', ...' if len(tasks) > 5 else ''})")
    return found


def is_deep(task: Task) -> bool:
    """Whether ``task`` is a deep question (:func:`~worldforge.tasks.deep.as_task`) rather than a wide table."""
    return task.extra.get("kind") == "deep"


_SCENARIOS: FileCache[frozenset[str]] = FileCache()


def world_names(warehouse: Warehouse) -> set[str]:
    """The worlds of a warehouse: the names ``<world>`` of its ``<world>.duckdb`` files (not the stores)."""
    return {p.name.removesuffix(".duckdb") for p in warehouse.world_files()}


def is_world(warehouse: Warehouse, name: str) -> bool:
    """Whether ``<name>.duckdb`` is a world of the warehouse: one ``stat``, not a listing of the
    warehouse (a catalog holds thousands of worlds)."""
    try:
        path = warehouse.world(name)
    except WorldforgeError:  # a store's name
        return False
    return path.parent == warehouse.root and path.is_file()  # no path out of the warehouse ("../x"); a NUL byte: False


def scenario_names(warehouse: Warehouse, world: str) -> frozenset[str]:
    """The scenarios of a world that have a corpus (``_corpus.scenario``), cached while the file is unchanged."""
    path = warehouse.world(world)

    def load() -> frozenset[str]:
        con = open_readonly(path)
        try:
            tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'").fetchall()}
            rows = con.execute("SELECT DISTINCT scenario FROM _corpus WHERE scenario IS NOT NULL").fetchall() if "_corpus" in tables else []
        finally:
            con.close()
        return frozenset(r[0] for r in rows)

    return _SCENARIOS.get(path, "scenarios", load)


class EpisodeService:
    """The open episodes of one entry point and everything that happens to them (module docstring).

    Each open episode is a :class:`~worldforge.simenv.env.SearchEnv` in :attr:`registry` under a key
    (a session id, an MCP session, a rollout id). Its calls run one at a time under the session's
    lock; a session whose lock is held is in use and never expires or is evicted under a call.

    Args:
        warehouse: the warehouse of the worlds, the episode log and the store.
        agent: the ``agent`` of the logged episodes (``http``, ``mcp``, ``rl``, ``verifiers``, ``retrieve``).
        idle_timeout: seconds without a call before an episode expires (``None``: never).
        max_sessions: open episodes at most.
        evict: what a full service does with a new episode: refuse it
            (:class:`~worldforge.serving.sessions.SessionLimit`, ``False``), or close and log the least
            recently used idle one (``True``: for protocols whose clients never say an episode ended).
        record: log closed episodes (``False``: load tests, and ``/retrieve``, see :mod:`worldforge.rl.retrieve`).
        clock: the registry's time source (``time.monotonic``); tests pass their own.

    Raises:
        ValueError: ``max_sessions < 1`` or a negative ``idle_timeout``.
    """

    def __init__(self, warehouse: Warehouse, *, agent: str, idle_timeout: float | None = None, max_sessions: int = 10_000,
                 evict: bool = False, record: bool = True, clock: Callable[[], float] = time.monotonic):
        self.warehouse = warehouse
        self.agent, self.record = agent, record
        self.registry: SessionRegistry[SearchEnv] = SessionRegistry(max_sessions, idle_timeout, evict=evict, clock=clock)
        self._closed_keys: OrderedDict[str, int] = OrderedDict()
        """How many episodes were closed under each recent key (at most ``4 * max_sessions`` keys): a key opened
        again gets a new episode id, so the store never replaces an earlier episode of the same key."""
        self._lock = threading.Lock()
        self.finished: list[SearchEnv] = []
        """Closed episodes that could not be logged yet (retried by :meth:`flush`)."""
        self.unlogged: dict[str, SearchEnv] = {}
        """The episodes of :attr:`finished` whose close was refused, by the key the close named: a close
        of that key again is no success until the episode is logged (:meth:`take_closing`)."""
        self.log_problem: str | None = None
        """Why the last write of the episode log failed (one line naming the path); ``None`` once one succeeds."""
        self.log_full: bool | None = None
        """Whether that failure was a lack of space (``ENOSPC``, a quota)."""

    def __len__(self) -> int:
        return len(self.registry)

    # -- opening ----------------------------------------------------------------------------
    def environment(self, world: str, *, task: str | Task | None = None, scenario: str | None = None, seed: int = 0,
                    perturbations: str | dict | PerturbationConfig | None = None, session_id: str | None = None,
                    max_tool_calls: int | None = None, task_scenario: bool = True) -> SearchEnv:
        """A new episode's environment, every part checked, not yet open (:meth:`add` opens it).

        Args:
            world: the world name (``<warehouse>/<world>.duckdb`` with its corpus).
            task: a task id (a wide task's ``instance_id`` or a deep question's id), a :class:`~worldforge.tasks.io.Task`,
                or ``None`` (free search, nothing to submit).
            scenario: search this scenario's corpus (default: the task's own scenario, if any, with ``task_scenario``).
            seed: seeds every perturbation decision.
            perturbations: :func:`~worldforge.simenv.perturbations.parse_perturbations` input (default: none).
            session_id: the episode's id in the episode store (default: random hex).
            max_tool_calls: tool calls the episode may make (``None``: no limit).
            task_scenario: without ``scenario``, search the task's own scenario (``False``: the world's corpus,
                as Search-R1's ``/retrieve`` does unless its server names a scenario).

        Raises:
            UnknownTarget: no such world, task or scenario.
            WorldforgeError: invalid perturbations.
            WarehouseError: the world's corpus is missing.
        """
        config = parse_perturbations(perturbations)
        if not is_world(self.warehouse, world):
            raise UnknownTarget(f"no world {world!r} in this warehouse (no such world file: build it with `worldforge world run`)")
        found: Task | None
        if isinstance(task, str):
            try:
                tasks = world_tasks(world, self.warehouse, "both")
            except WarehouseError as exc:
                raise UnknownTarget(f"world {world!r} has no task {task!r} ({exc})") from None
            found = find_task(world, tasks, task)
        else:
            found = task
        if scenario is None and task_scenario and found is not None:
            scenario = found.extra.get("scenario")
        if scenario is not None and scenario not in scenario_names(self.warehouse, world):
            raise UnknownTarget(f"world {world!r} has no scenario {scenario!r} with a corpus")
        return SearchEnv(world, scenario, found, config, seed, warehouse=self.warehouse, session_id=session_id,
                         max_tool_calls=max_tool_calls)

    def add(self, env: SearchEnv, key: str | None = None) -> None:
        """Open ``env`` under ``key`` (default: its ``session_id``), expiring idle episodes first; an
        evicting service closes (and logs) its least recently used idle episode when full.

        Raises:
            SessionLimit: the service does not evict and ``max_sessions`` episodes are open.
            WorldforgeError: another episode is open under ``key``.
        """
        self.reap()
        key = key or env.session_id
        session, taken = self.registry.open(key, env)
        self._retire_quietly(taken)
        if session.value is not env:
            raise WorldforgeError(f"an episode is already open under {key!r}; close it first")

    def _renamed(self, key: str, env: SearchEnv) -> SearchEnv:
        """``env``, its episode id suffixed ``-2``, ``-3``, ... when episodes were closed under ``key`` before."""
        closed = self._closed_keys.get(key, 0)
        if closed:
            env.session_id = f"{env.session_id}-{closed + 1}"
        return env

    def _note_closed(self, keys: list[str]) -> None:
        """Count an episode closed under each of ``keys`` (see :attr:`_closed_keys`)."""
        with self._lock:
            for key in keys:
                self._closed_keys[key] = self._closed_keys.pop(key, 0) + 1
            while len(self._closed_keys) > 4 * self.registry.max_sessions:
                self._closed_keys.popitem(last=False)

    def open(self, world: str, key: str | None = None, **options: Any) -> SearchEnv:
        """:meth:`environment` then :meth:`add`: the new episode, open under ``key`` (default: its id).

        Raises:
            as :meth:`environment` and :meth:`add`.
        """
        env = self.environment(world, **options)
        self.add(env, key)
        return env

    # -- using ------------------------------------------------------------------------------
    def acquire(self, key: str, factory: Callable[[], SearchEnv] | None = None) -> Session[SearchEnv]:
        """The session ``key``, in use until :meth:`release` (it cannot expire or be evicted meanwhile);
        opened with ``factory()`` when there is none and a factory is given (an evicting service then
        closes and logs the episode it evicts). A key opened again this way, after an episode under it
        was closed (an expiry, an eviction), gets a new episode id (``<id>-2``, ...) when the service logs
        episodes, so the store keeps both. For a use that does not fit one block; otherwise :meth:`using`.

        Raises:
            NoSuchSession: no session ``key`` and no ``factory``.
            SessionLimit: a new session is needed and the service is full (and does not evict, or
                every episode is in use).
        """
        try:
            renamed = factory if factory is None or not self.record else (lambda: self._renamed(key, factory()))  # ids matter to the store only
            item, taken = self.registry.acquire(key, renamed)
        except KeyError:
            raise NoSuchSession(f"no session {key!r} (closed or expired)") from None
        self._retire_quietly(taken)
        return item

    def release(self, item: Session[SearchEnv]) -> None:
        """End one use of a session (:meth:`acquire`): its idle clock counts from now."""
        self.registry.release(item)

    @contextlib.contextmanager
    def using(self, key: str, factory: Callable[[], SearchEnv] | None = None) -> Iterator[Session[SearchEnv]]:
        """:meth:`acquire` for the block, :meth:`release` on exit. A close may still take the session
        out meanwhile: take its lock and call :meth:`still_open` before touching its environment.

        Raises:
            as :meth:`acquire`.
        """
        item = self.acquire(key, factory)
        try:
            yield item
        finally:
            self.release(item)

    @staticmethod
    def still_open(item: Session[SearchEnv]) -> SearchEnv:
        """The session's environment, called with its lock held.

        Raises:
            NoSuchSession: a close took the session out while this call waited (its episode was
                logged without the call, so the call must not run).
        """
        if item.closed:
            raise NoSuchSession(f"no session {item.key!r} (closed while this call waited)")
        return item.value

    @contextlib.contextmanager
    def stepping(self, key: str, factory: Callable[[], SearchEnv] | None = None) -> Iterator[SearchEnv]:
        """The environment of session ``key``, its lock held for the block: one call at a time.

        Raises:
            NoSuchSession: as :meth:`using`, or the session was closed while this call waited.
        """
        with self.using(key, factory) as item, item.lock:
            yield self.still_open(item)

    def step(self, key: str, call: Any, factory: Callable[[], SearchEnv] | None = None) -> Observation:
        """Answer one tool call of episode ``key`` (``{"name", "arguments"}``, an OpenAI tool call, or its JSON text).

        A malformed call is an error observation, as a real tool would answer.

        Raises:
            NoSuchSession: as :meth:`stepping`.
        """
        with self.stepping(key, factory) as env:
            return env.step(call)

    def submit(self, key: str, answer: str, reward: RewardConfig | None = None) -> Reward:
        """End episode ``key``'s task with ``answer`` and reward it (:meth:`~worldforge.simenv.env.SearchEnv.submit`).

        The episode stays open (a later close logs it, finished).

        Raises:
            NoSuchSession: as :meth:`stepping`.
            EpisodeOver: the episode has no task, or its answer was already submitted.
        """
        with self.stepping(key) as env:
            return env.submit(answer, reward)

    def restart(self, key: str) -> str:
        """Log episode ``key`` so far (when it took a step or was answered) and start it over under a
        new episode id; returns the new episode's first observation.

        Raises:
            NoSuchSession: as :meth:`stepping`.
            EpisodeNotLogged: the log could not be written; the session is left as it was.
        """
        with self.stepping(key) as env:
            if self.loggable(env):
                try:
                    self._write([env])
                except Exception as exc:
                    problem = self._log_failed(exc)
                    log.error("the episode of session %s was not logged before its reset: %s", key, problem)
                    raise EpisodeNotLogged(f"the episode could not be stored: {problem}; the session was not reset") from None
            env.session_id = f"{key}-{uuid.uuid4().hex[:12]}"
            return env.reset()

    # -- closing and logging ------------------------------------------------------------------
    def loggable(self, env: SearchEnv) -> bool:
        """Whether closing ``env`` logs an episode: recording is on and it took a step or was answered."""
        return self.record and bool(env.history or env.result is not None)

    def episode(self, env: SearchEnv) -> Episode:
        """The :class:`~worldforge.trajectories.episodes.Episode` a closing ``env`` leaves: a task's
        episode is finished when its answer was submitted, a free search's when it closes."""
        return episode_of(env, self.agent, finished=env.result is not None or env.task is None)

    def _write(self, envs: list[SearchEnv]) -> None:
        from worldforge.trajectories import episodes

        episodes.log_episodes(self.warehouse, [self.episode(env) for env in envs])
        self.log_problem = self.log_full = None

    def retire(self, envs: list[SearchEnv], keys: dict[str, list[SearchEnv]] | None = None) -> None:
        """Log the episodes of closed sessions, all with one ``fsync`` (called without the lock held).

        ``keys``: the keys whose close is answered by this call, each with its sessions among ``envs``;
        when the log fails they are remembered in :attr:`unlogged`, so that a close of the same key
        again is refused until the episode is logged, never a success.

        Raises:
            EpisodeNotLogged: the log could not be written; the episodes wait in :attr:`finished`.
        """
        envs = [env for env in envs if self.loggable(env)]
        if not envs:
            return
        try:
            self._write(envs)
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
        if self.unlogged:
            logged = {id(env) for env in envs}
            with self._lock:
                for key in [k for k, env in self.unlogged.items() if id(env) in logged]:
                    del self.unlogged[key]

    def _retire_quietly(self, taken: list[Session[SearchEnv]]) -> None:
        """Log what an eviction or an expiry took out; a failure keeps the episodes for :meth:`flush`."""
        if taken:
            self._note_closed([s.key for s in taken])
            with contextlib.suppress(EpisodeNotLogged):
                self.retire([s.value for s in taken])

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
        "episode_log_error"?: one line naming the path, "episodes_waiting": closed episodes kept in
        memory until the log takes them}``. ``full``: the last write found no space (ENOSPC or a
        quota); it turns ``ok`` at the next write that succeeds (:meth:`flush` retries)."""
        state = "ok" if self.log_problem is None else "full" if self.log_full else "failing"
        out: dict[str, Any] = {"episode_log": state, "episodes_waiting": len(self.finished)}
        if self.log_problem is not None:
            out["episode_log_error"] = self.log_problem
        return out

    def flush(self) -> int:
        """Log the episodes waiting in :attr:`finished`, then record the episode log in the episode
        store (:func:`~worldforge.trajectories.episodes.drain_episode_log`); never raises (a failure is
        logged and retried at the next flush).

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

    def take(self, key: str) -> SearchEnv | None:
        """Take session ``key`` out (a call in flight on it finishes first) without logging it: the caller
        hands it to :meth:`retire`, with others (one ``fsync`` for a batch of closes). ``None`` when there is none."""
        session = self.registry.pop(key)
        if session is None:
            return None
        self._note_closed([key])
        with session.lock:  # a call in flight finishes first, so the episode is complete
            return session.value

    def take_closing(self, key: str) -> list[SearchEnv]:
        """What a close of ``key`` must log before it is answered: the open session :meth:`take`
        takes out, and the episode of an earlier close of ``key`` that was refused and still waits in
        :attr:`finished` (taken out of it, so the caller's :meth:`retire` logs it now or puts it
        back). Empty when there is no such session and nothing of it waits."""
        envs = []
        with self._lock:
            waiting = self.unlogged.get(key)
            if waiting is not None:  # not in finished: a flush is logging it right now; logging it twice is harmless (one per episode id in the store)
                self.finished = [env for env in self.finished if env is not waiting]
                envs.append(waiting)
        env = self.take(key)
        if env is not None:
            envs.append(env)
        return envs

    def close(self, key: str) -> bool:
        """Close episode ``key``; when it took a step or was answered it is in the episode log on return.
        A close of a key whose earlier close was refused logs that episode again: it is a success only
        once the episode is in the log.

        Returns:
            ``False`` when there is no such session (and no episode of it waits to be logged).

        Raises:
            EpisodeNotLogged: the log could not be written (the episode is kept and retried).
        """
        envs = self.take_closing(key)
        if not envs:
            return False
        self.retire(envs, {key: envs})
        return True

    def close_all(self) -> int:
        """Close every open episode (a server stopping); returns how many. Never raises."""
        taken = self.registry.pop_all()
        self._retire_quietly(taken)
        return len(taken)

    def shutdown(self) -> int:
        """Close every open episode and record the episode log in the store (the entry point stopping);
        returns how many were closed. Never raises."""
        closed = self.close_all()
        self.flush()
        return closed

    def reap(self) -> int:
        """Expire idle episodes (never one with a call in flight), logging them; returns how many. Never raises."""
        stale = self.registry.pop_idle()
        self._retire_quietly(stale)
        return len(stale)
