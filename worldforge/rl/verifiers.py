"""The worlds as a ``verifiers`` environment (Prime Intellect's ``verifiers`` >= 0.4, its ``verifiers.v1`` stack).

``verifiers`` (``PrimeIntellect-ai/verifiers``; what ``prime-rl`` and ``vf-eval`` load) builds an
environment from a **taskset** plugin: an installed module whose ``__all__`` exports one
``vf.Taskset`` subclass (and optionally one ``vf.Env`` subclass), found by id —
``vf-eval worldforge-search`` imports the module ``worldforge_search``, which re-exports this
module's classes. The pieces:

* :class:`WorldforgeTaskset` — the tasks: every wide task (WideSearch-style table, rewarded by
  item-F1) and/or deep question (BrowseComp-style, one answer, rewarded by correctness) of the
  chosen worlds, one ``vf.Task`` each (:class:`WorldTask`);
* :class:`WorldToolset` — the tools: ``web_search``, ``web_extractor`` and ``dict_memory``, generated
  from their one declaration (:data:`~worldforge.simenv.tools.SEARCH_TOOLS`) and answered by an episode
  of the episode service (:class:`~worldforge.serving.episodes.EpisodeService`) per rollout (perturbations
  and leakage control included), closed and logged to the episode store (agent ``verifiers``) when it has
  been idle for ``idle_s``, when it is evicted, and when verifiers stops the server. It is an MCP server
  shared by every rollout of an environment worker
  (``Taskset.toolsets``); each rollout's world, task, seed and perturbations reach it through the
  rollout's state (:class:`EpisodeState`, set by :meth:`WorldTask.setup`);
* the rubric — :meth:`WorldTask.reward` grades the policy's final reply (no ``submit`` tool: the episode
  ends when the model answers without a tool call): a wide task's Markdown table by item-F1
  (WideSearch's ``f1_by_item``), a deep question's ``Exact Answer:`` line by correctness
  (:func:`~worldforge.simenv.reward.reward_of`, the reward every other entry point gives);
* :class:`WorldforgeEnv` — the single-agent env with this toolkit's defaults: the ``null`` harness
  (verifiers' own chat loop with MCP tools, no shell), the ``subprocess`` runtime (no sandbox
  provider), ``max_turns`` 32.

:func:`load_environment` builds the environment in Python; ``vf-eval`` builds the same one from flags::

    vf-eval worldforge-search --env.taskset.warehouse warehouse --env.taskset.kind deep \\
        --env.taskset.worlds '["smartphones_2029"]' --env.agent.max-turns 24 \\
        --model Qwen/Qwen3-8B --client.base-url http://127.0.0.1:8000/v1 --client.api-key-var OPENAI_API_KEY \\
        -n 20 --no-push --no-rich

Needs the ``verifiers`` extra (``verifiers==0.4.0`` and ``uv``) in a venv of its own: verifiers pins
``mcp==2.0.0`` and ``openai<3``, older than worldforge's MCP server needs. ``make verifiers`` builds
``.venv-verifiers`` (worldforge without the model stack); run ``.venv-verifiers/bin/vf-eval`` with that
venv's ``bin`` on ``PATH``: the ``null`` harness runs its chat program (a PEP 723 script) with ``uv``,
whose packages come from the package index once, then from uv's cache.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from typing import Any, Literal

from pydantic import Field, field_validator

from worldforge.errors import WorldforgeError

try:
    import verifiers.v1 as vf
except ImportError:  # pragma: no cover - depends on the install
    raise WorldforgeError("the verifiers environment needs verifiers 0.4 in its own venv (it pins mcp==2.0.0): "
                          "`make verifiers`, then run .venv-verifiers/bin/vf-eval") from None
from worldforge.rl.env import check_family, parse_perturbations, world_tasks
from worldforge.rl.trl import SEARCH_INTRO, prompt_rows
from worldforge.serving.episodes import EpisodeService
from worldforge.serving.sessions import SessionLimit
from worldforge.simenv.env import SearchEnv
from worldforge.simenv.tools import SEARCH_TOOLS
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)

__all__ = ["EpisodeState", "ENV_ID", "WorldTask", "WorldTaskConfig", "WorldTaskData", "WorldToolset", "WorldToolsetConfig",
           "WorldforgeEnv", "WorldforgeEnvConfig", "WorldforgeTaskset", "WorldforgeTasksetConfig", "load_environment"]

ENV_ID = "worldforge-search"
"""The taskset id ``vf-eval`` and ``prime-rl`` load (the installed module ``worldforge_search``)."""

DEFAULT_MAX_TURNS = 32
"""Model turns an episode may take by default (each turn may call several tools)."""

WIDE_PROMPT = SEARCH_INTRO + (" When you have the answer, reply with one Markdown table holding the columns the question asks for, "
                               "and call no more tools.")
"""What a wide task's prompt starts with (its question follows)."""

DEEP_PROMPT = SEARCH_INTRO + " The answer is one name, number or date. When you have it, reply in the format the question gives, and call no more tools."
"""What a deep question's prompt starts with (its question, with BrowseComp's answer format, follows)."""


class EpisodeState(vf.State):
    """One rollout's episode, shared by the host and the tool server (verifiers' per-rollout state channel).

    Attributes:
        session: the episode's session id (the rollout's trace id; it seeds the perturbation decisions with ``seed``).
        world, task, scenario: what the session searches and for which task (``task``: an ``instance_id`` or a deep question's id).
        seed: seeds the perturbation decisions.
        perturbations: the perturbation schema (:func:`~worldforge.rl.env.parse_perturbations`), ``None`` for none.
    """

    session: str = ""
    world: str = ""
    task: str = ""
    scenario: str | None = None
    seed: int = 0
    perturbations: str | None = None


class WorldToolsetConfig(vf.SharedToolsetConfig):
    """The tool server's config (it reaches the server process as JSON).

    Attributes:
        warehouse: the warehouse folder, absolute (set from the taskset's: the server runs in its own working folder).
        max_sessions: episodes the server keeps open; beyond it the least recently used idle one is closed and
            logged (the server cannot tell when a rollout ends). Keep it above the rollouts in flight (``vf-eval -c``,
            128 by default): a closed episode that calls again starts over, its notes and step count lost.
        idle_s: seconds after a rollout's last tool call before its episode is closed and logged (a rollout ends
            with a reply without a tool call, which the tool server never sees); ``None``: ``WORLDFORGE_SESSION_IDLE_S``
            (600 s), the expiry of every other entry point. A rollout that calls again after it has a new episode id.
        record: log the rollouts' episodes in the episode store (agent ``verifiers``).
    """

    warehouse: str = ""
    max_sessions: int = Field(512, ge=1)
    idle_s: float | None = Field(None, gt=0)
    record: bool = True


REAP_EVERY_S = 5.0
"""How often the tool server closes and logs the episodes idle for ``idle_s`` (seconds)."""


class WorldToolset(vf.Toolset[WorldToolsetConfig, EpisodeState]):
    """The search tools of every rollout of one environment worker: one MCP server over one
    :class:`~worldforge.serving.episodes.EpisodeService` (agent ``verifiers``), an episode per rollout,
    opened on the rollout's first call. The tools' names, arguments and descriptions are their declaration's
    (:data:`~worldforge.simenv.tools.SEARCH_TOOLS`), unprefixed, as in every other entry point.
    A tool error (unknown URL, malformed call, an injected fault) is an observation starting ``Error``.

    A call runs in a worker thread (the server's event loop keeps serving the other rollouts); one
    episode's calls run one at a time, in arrival order. An episode is closed and logged to the
    episode store when it has been idle for ``idle_s``, when it is evicted, and when the server stops
    cleanly; the logged episodes are recorded in the store every :data:`REAP_EVERY_S` seconds."""

    TOOL_PREFIX = None

    async def setup(self) -> None:
        """Open the warehouse and the episode service (the worlds open lazily, on their first episode);
        start the reaper, and close every episode when the server stops."""
        from worldforge.runtime import apply_settings

        settings = apply_settings()
        self.warehouse = Warehouse.configured(self.config.warehouse or None)
        record = self.config.record
        if record and not os.access(self.warehouse.root, os.W_OK):
            log.warning("the warehouse %s cannot be written: the rollouts' episodes are not logged", self.warehouse.root)
            record = False
        idle = self.config.idle_s if self.config.idle_s is not None else settings.session_idle_s
        self.episodes = EpisodeService(self.warehouse, agent="verifiers", idle_timeout=idle,
                                       max_sessions=self.config.max_sessions, evict=True, record=record)

        async def reaper() -> None:
            while True:
                await asyncio.sleep(REAP_EVERY_S)
                await asyncio.to_thread(self.reap)

        task = asyncio.get_running_loop().create_task(reaper())
        self._exit_stack.callback(self.stop)
        self._exit_stack.callback(task.cancel)
        served = os.environ.get("MCP_PORT_FILE") or os.environ.get("MCP_PORT")  # verifiers' launcher started this process
        if served and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._stop_on(sig)

    def _stop_on(self, sig: signal.Signals) -> None:
        """Log every open episode when ``sig`` ends the server. verifiers stops its tool server with SIGTERM;
        uvicorn shuts down, puts this handler back and raises the signal again, so it runs once the last
        call is answered; it then passes the signal on (the process ends as it would have)."""
        previous = signal.getsignal(sig)

        def handler(signum: int, frame: Any) -> None:
            for other in (signal.SIGTERM, signal.SIGINT):  # a second signal while the episodes are logged waits
                signal.signal(other, signal.SIG_IGN)
            try:
                self.stop()
            finally:
                signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
                signal.raise_signal(signum)

        signal.signal(sig, handler)

    def reap(self) -> int:
        """Close and log the idle episodes, then record the episode log in the store; returns how many closed. Never raises."""
        closed = self.episodes.reap()
        self.episodes.flush()
        return closed

    def stop(self) -> None:
        """Close and log every open episode and record them in the store (the server stopping)."""
        self.episodes.shutdown()

    def _open(self, st: EpisodeState) -> SearchEnv:
        """The rollout ``st``'s new episode (its first call).

        Raises:
            WorldforgeError: a world, task or scenario the warehouse does not have, invalid perturbations.
        """
        return self.episodes.environment(st.world, task=st.task, scenario=st.scenario, seed=st.seed, perturbations=st.perturbations,
                                         session_id=f"verifiers:{st.session}")

    def answer(self, st: EpisodeState, name: str, arguments: dict[str, Any]) -> str:
        """One tool call of the rollout ``st``: the observation's text (a problem is an observation starting ``Error``)."""
        if not st.session or not st.world or not st.task:
            return "Error: this rollout has no episode (its task did not set world, task and session)"
        try:
            return self.episodes.step(st.session, {"name": name, "arguments": arguments}, lambda: self._open(st)).text
        except SessionLimit:
            return f"Error: the search service is busy with {self.config.max_sessions} rollouts; retry in a few seconds."
        except WorldforgeError as exc:
            return f"Error: {exc}"


def _install_tools() -> None:
    import inspect

    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for declared in SEARCH_TOOLS:
        async def call(name: str, arguments: dict[str, Any], self: WorldToolset) -> str:
            return await asyncio.to_thread(self.answer, self.state, name, arguments)  # the state is read on the loop

        fn = declared.function(call, leading=[self_param])
        fn.__qualname__ = f"WorldToolset.{declared.name}"
        setattr(WorldToolset, declared.name, vf.tool(fn))


_install_tools()


class WorldTaskData(vf.TaskData):
    """One task as verifiers carries it (it rides on the trace).

    Attributes:
        world, task, family, scenario: the task (``task``: the ``instance_id`` or deep question id; ``family``: ``wide`` or ``deep``).
        question: the task's question (the prompt is the instruction, then this).
        seed, perturbations: the episode's perturbations (:func:`~worldforge.rl.env.parse_perturbations`; ``None``: none).
    """

    world: str
    task: str
    family: Literal["wide", "deep"]
    scenario: str | None = None
    question: str = ""
    seed: int = 0
    perturbations: str | None = None


class WorldTaskConfig(vf.TaskConfig):
    """Run-time knobs of every task: the warehouse the rubric reads the gold from (set from the taskset's) and
    the rules it scores a wide task's table by (``worldforge`` or ``widesearch``, WideSearch's official
    scorer; ``--env.taskset.task.rules widesearch`` on ``vf-eval``)."""

    warehouse: str = ""
    rules: str = Field("worldforge", pattern="^(worldforge|widesearch)$")


class WorldTask(vf.Task[WorldTaskData, EpisodeState, WorldTaskConfig]):
    """One episode: sets the rollout's :class:`EpisodeState` for the tool server, then grades the final reply."""

    async def setup(self, trace: vf.Trace) -> None:
        """Name the episode in the rollout's state (the tool server reads it on every call)."""
        d = self.data
        trace.state.session, trace.state.world, trace.state.task = trace.id, d.world, d.task
        trace.state.scenario, trace.state.seed, trace.state.perturbations = d.scenario, d.seed, d.perturbations

    def _graded(self, trace: vf.Trace) -> Any:
        from worldforge.simenv.reward import RewardConfig, reward_of

        task = world_tasks(self.data.world, Warehouse.configured(self.config.warehouse or None), "both").get(self.data.task)
        if task is None:
            raise WorldforgeError(f"world {self.data.world!r} has no task {self.data.task!r}")
        calls = sum(len(m.tool_calls or []) for m in trace.assistant_messages)
        return reward_of(trace.last_reply, task, calls, RewardConfig(rules=self.config.rules))

    @vf.reward(weight=1.0)
    async def reward(self, trace: vf.Trace) -> float:
        """The final reply's reward: a wide task's item-F1 against its gold table, a deep question's correctness (1 or 0)."""
        return self._graded(trace).value

    @vf.metric
    async def scores(self, trace: vf.Trace) -> dict[str, float]:
        """``f1_by_row``, ``precision_by_item``, ``recall_by_item``, ``format_ok`` and ``tool_calls`` of the final reply."""
        graded = self._graded(trace)
        info = graded.info
        return {"f1_by_row": float(info["f1_by_row"]), "precision_by_item": float(info["precision_by_item"]),
                "recall_by_item": float(info["recall_by_item"]), "format_ok": float(graded.format_ok), "tool_calls": float(graded.tool_calls)}


class WorldforgeTasksetConfig(vf.TasksetConfig):
    """Which tasks load (``--env.taskset.*`` on ``vf-eval``).

    Attributes:
        warehouse: the warehouse folder (default: the configured one, ``WORLDFORGE_WAREHOUSE``).
        worlds: the worlds (default: every world of the warehouse that has tasks of ``kind``).
        kind: ``wide``, ``deep`` or ``both`` (:data:`~worldforge.rl.env.FAMILIES`).
        perturbations: every episode's perturbations (``none``, ``default``, a JSON schema, or words).
        seeds: episodes per task, seeded 0..seeds-1 (the seed and the rollout's id drive the perturbation decisions).
        tools: the tool server's config.
        task: every task's config.
    """

    warehouse: str | None = None
    worlds: list[str] | None = None
    kind: str = "wide"
    perturbations: str | None = None
    seeds: int = Field(1, ge=1)
    tools: WorldToolsetConfig = WorldToolsetConfig()
    task: WorldTaskConfig = WorldTaskConfig()

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        try:
            return check_family(value)
        except WorldforgeError as exc:  # a config error: vf-eval shows it as one line
            raise ValueError(str(exc)) from None

    @field_validator("perturbations")
    @classmethod
    def _valid_perturbations(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() == "none":
            return None
        try:
            parse_perturbations(value)
        except WorldforgeError as exc:
            raise ValueError(str(exc)) from None
        return value


class WorldforgeTaskset(vf.Taskset[WorldTask, WorldforgeTasksetConfig]):
    """The tasks of the chosen worlds and family, in (world, task id, seed) order.

    Raises (on :meth:`load`):
        WarehouseError: a named world does not exist or has no tasks of the family; no world has them.
        WorldforgeError: an unknown family or invalid perturbations.
    """

    @classmethod
    def toolsets(cls, config: WorldforgeTasksetConfig) -> list[vf.Toolset]:
        """The one shared tool server, reading the taskset's warehouse (an absolute path: the server runs in its own folder)."""
        warehouse = str(Warehouse.configured(config.warehouse).root.resolve())
        return [WorldToolset(config.tools.model_copy(update={"warehouse": warehouse}))]

    def load(self) -> list[WorldTask]:
        """One :class:`WorldTask` per (world, task, seed), the rows of :func:`~worldforge.rl.trl.prompt_rows` in its order;
        its prompt is :data:`WIDE_PROMPT` or :data:`DEEP_PROMPT`, then the question."""
        cfg = self.config
        wh = Warehouse.configured(cfg.warehouse)
        task_config = cfg.task.model_copy(update={"warehouse": str(wh.root.resolve())})
        tasks = {}
        out = []
        for row in prompt_rows(wh, cfg.worlds, cfg.seeds, cfg.perturbations, family=cfg.kind):
            world, tid = row["world"], row["task"]
            if world not in tasks:
                tasks[world] = world_tasks(world, wh, cfg.kind)
            question = tasks[world][tid].question
            data = WorldTaskData(id=f"{tid}@{row['seed']}" if cfg.seeds > 1 else tid, name=tid, world=world, task=tid, family=row["family"],
                                 scenario=row["scenario"], question=question, seed=row["seed"], perturbations=row["perturbations"],
                                 prompt=f"{DEEP_PROMPT if row['family'] == 'deep' else WIDE_PROMPT}\n\n{question}")
            out.append(WorldTask(data, task_config))
        return out


class WorldforgeEnvConfig(vf.SingleAgentEnvConfig):
    """The single-agent env with worldforge's defaults: the ``null`` harness (a chat loop with the MCP tools,
    no shell), the ``subprocess`` runtime, :data:`DEFAULT_MAX_TURNS` turns (``--env.agent.*`` overrides each)."""

    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime=vf.SubprocessConfig(), max_turns=DEFAULT_MAX_TURNS)


class WorldforgeEnv(vf.Env[WorldforgeEnvConfig]):
    """One agent plays each task (verifiers' ``SingleAgentEnv`` under :class:`WorldforgeEnvConfig`)."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        """The episode: the one seat plays the task."""
        await agents.agent.run(task)


def load_environment(worlds: list[str] | str | None = None, kind: str = "wide", perturbations: str | None = None,
                     max_turns: int | None = DEFAULT_MAX_TURNS, warehouse: str | None = None, seeds: int = 1) -> vf.Env:
    """The environment over the worlds' tasks, as ``vf.load_environment`` builds it for ``vf-eval worldforge-search``.

    Args:
        worlds: world names, a list or comma-separated (default: every world of the warehouse with tasks of ``kind``).
        kind: ``wide`` (tables, reward item-F1), ``deep`` (one answer, reward correctness) or ``both``.
        perturbations: ``none``/``None``, ``default``, a JSON schema, or an instruction in words.
        max_turns: model turns an episode may take (``None``: no limit).
        warehouse: the warehouse folder (default: the configured one).
        seeds: episodes per task, seeded 0..seeds-1.

    Returns:
        The ``vf.Env`` (its ``taskset`` holds the tasks; ``vf-eval`` or ``prime-rl`` run it).

    Raises:
        WorldforgeError: an unknown ``kind`` or invalid perturbations.
    """
    names = [w.strip() for w in worlds.split(",") if w.strip()] if isinstance(worlds, str) else worlds
    kind = check_family(kind)
    parse_perturbations(perturbations)
    config = WorldforgeEnvConfig.model_validate({
        "taskset": {"id": ENV_ID, "warehouse": warehouse, "worlds": names, "kind": kind, "perturbations": perturbations, "seeds": seeds},
        "agent": {"max_turns": max_turns},
    })
    return vf.load_environment(config)


if __name__ == "__main__":  # the tool server's process (verifiers starts it as `python -m worldforge.rl.verifiers`)
    WorldToolset.run()
