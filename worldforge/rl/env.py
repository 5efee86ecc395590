"""One reinforcement-learning environment over the episode service.

:class:`SearchWorldEnv` is the in-process episode TRL's ``environment_factory`` and the OpenEnv server
wrap; it opens, steps, rewards and logs its episodes through the one episode service
(:class:`~worldforge.serving.episodes.EpisodeService`), as the HTTP and MCP sessions, Search-R1's
``/retrieve`` and the ``verifiers`` tool server do: an
episode is one task in one fictional world: a WideSearch-style table or a BrowseComp-style deep question
(:mod:`worldforge.tasks.deep`; :data:`FAMILIES`). The policy calls ``web_search``,
``web_extractor`` and ``dict_memory`` (answered by :class:`~worldforge.simenv.env.SearchEnv`,
perturbations and leakage control included) and ends the episode with :meth:`submit`. A table is
scored against the task's gold table (:func:`~worldforge.tasks.scorer.score_table`): the **reward** is
the task's item-F1 (WideSearch's ``f1_by_item``), optionally shaped (:class:`RewardConfig`); a deep
question's response is graded by its ``Exact Answer:`` line, and the reward is its correctness (1 or 0). Finished episodes go to the episode log like any other session
(agent ``rl``), so RL rollouts become trajectories for the world model too.

Worlds open lazily: a world's tasks, corpus and index are read on the first episode that needs
them and kept in bounded least-recently-used caches (``WORLDFORGE_OPEN_WORLDS``), so one
process can sample episodes across a whole catalog.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from worldforge.runtime import apply_settings
from worldforge.serving.episodes import FAMILIES, EpisodeService, check_family, find_task, is_deep, world_tasks
from worldforge.simenv.env import EpisodeOver, Observation, SearchEnv
from worldforge.simenv.perturbations import PerturbationConfig, parse_perturbations
from worldforge.simenv.reward import RewardConfig
from worldforge.simenv.tools import EPISODE_TOOLS, SEARCH_TOOLS, SUBMIT
from worldforge.tasks.io import Task
from worldforge.warehouse.cache import open_worlds_set
from worldforge.warehouse.layout import Warehouse, WarehouseLike

__all__ = ["FAMILIES", "EpisodeOver", "RewardConfig", "check_family", "is_deep", "submit_hint", "SUBMIT_SCHEMA", "SearchWorldEnv", "parse_perturbations", "scripted_answer", "world_tasks"]

SUBMIT_SCHEMA: dict = SUBMIT.openai_schema()
"""The ``submit`` tool as an OpenAI function-tool schema (beside :data:`~worldforge.simenv.env.TOOL_SCHEMAS`; declared in
:mod:`worldforge.simenv.tools`)."""


def submit_hint(task: Task) -> str:
    """How an episode of ``task`` ends: the table, or the Explanation / Exact Answer / Confidence response, through ``submit``."""
    if is_deep(task):
        return "Submit your response, in that format, with the submit tool; that ends the episode."
    return "Submit the table with the submit tool; that ends the episode."


_KEY = "episode"
"""The key of a :class:`SearchWorldEnv`'s one open episode in its service (the episode id may change under it)."""


class SearchWorldEnv:
    """A search agent's episode in a fictional world, rewarded by the task's F1.

    Constructible with no arguments (trainers call environment factories with none), so this
    constructor is one of worldforge's edges: without ``warehouse`` it resolves the configured one
    (:meth:`~worldforge.warehouse.layout.Warehouse.configured`, ``WORLDFORGE_WAREHOUSE``). One instance
    runs one episode at a time and can be reset any number of times; instances are independent (one per concurrent rollout).

    Example::

        env = SearchWorldEnv()
        print(env.reset(world="smartphones_2029", task="smartphones_2029_lookup_01"))
        env.web_search(query="Motorola Aura 10 Lite")
        reward = env.submit("| Model | Brand | ... |\\n|---|---|---|\\n| Motorola Aura 10 Lite | Motorola | ... |")

    Args:
        warehouse: the warehouse, or its folder (``None``: the configured one).
        reward: how the score becomes the reward (default: the plain item-F1).
        record: log finished episodes to ``<warehouse>/episodes.log.jsonl`` (the episode store).
        agent: the ``agent`` of the recorded episodes.
        max_tool_calls: tool calls an episode may make; the next call is answered with an error
            observation and counted (``None``: no limit).

    Attributes:
        done: the episode has ended (submitted or closed).
        session: the running :class:`~worldforge.simenv.env.SearchEnv` (``None`` before the first reset).
        task: the running episode's task.
    """

    def __init__(self, warehouse: WarehouseLike | None = None, reward: RewardConfig | None = None, record: bool = True,
                 agent: str = "rl", max_tool_calls: int | None = None):
        if not open_worlds_set():  # the world caches' bound, once a process: a trainer's process has no other edge
            apply_settings()  # (a server applied it at its start; a settings read per session cost OpenEnv 9% of its steps/s)
        self.warehouse = Warehouse.configured(warehouse)
        self.reward_config = reward or RewardConfig()
        self.record, self.agent, self.max_tool_calls = record, agent, max_tool_calls
        self.episodes = EpisodeService(self.warehouse, agent=agent, max_sessions=1, record=record)
        """The episode service that opens, steps, rewards and logs this env's episodes (one open at a time)."""
        self.session: SearchEnv | None = None
        self.task: Task | None = None
        self.done = True

    # -- episodes -------------------------------------------------------------------------
    def reset(self, world: str, task: str, scenario: str | None = None, seed: int = 0,
              perturbations: str | dict | PerturbationConfig | None = None, episode_id: str | None = None) -> str:
        """Start an episode: the task ``task`` of world ``world``, a wide table or a deep question.

        An episode still running is ended first (logged unfinished, when it took a step).

        Args:
            world: the world name (``<warehouse>/<world>.duckdb`` with corpus and tasks built).
            task: the task's ``instance_id``, or a deep question's id (the episode then ends with a BrowseComp-format
                response, rewarded by its correctness).
            scenario: search this scenario's corpus (default: the task's own scenario, if any).
            seed: seeds every perturbation decision.
            perturbations: see :func:`~worldforge.simenv.perturbations.parse_perturbations` (default: none).
            episode_id: the episode's id in the episode store (default: ``rl-<random hex>``); it
                also seeds the perturbation decisions, with ``seed``.

        Returns:
            The initial observation: the task's question, the columns the answer needs, and
            the tools (name and description).

        Raises:
            WarehouseError: no such world, or it has no tasks or corpus.
            WorldforgeError: no such task or scenario, or invalid perturbations.
        """
        self._finish()
        found = find_task(world, world_tasks(world, self.warehouse, "both"), task)  # a missing world, or one without tasks: WarehouseError
        session = self.episodes.environment(world, task=found, scenario=scenario, seed=seed, perturbations=perturbations,
                                            session_id=episode_id or f"rl-{uuid.uuid4().hex}", max_tool_calls=self.max_tool_calls)
        self.episodes.add(session, _KEY)
        self.session = session
        self.task, self.done = session.task, False
        return self.initial_observation()

    def initial_observation(self, tools: bool = True) -> str:
        """The running task's question and answer format, with the tools listed when ``tools``."""
        if self.task is None:
            raise EpisodeOver("no episode: call reset(world=..., task=...) first")
        text = f"{self.task.question}\n\n{submit_hint(self.task)}"
        if tools:
            listed = "\n".join(f"- {tool.name}: {tool.description}" for tool in EPISODE_TOOLS)
            text += f"\n\nTools:\n{listed}"
        return text

    @property
    def reward(self) -> float | None:
        """The episode's reward (``None`` until :meth:`submit`)."""
        result = self.session.result if self.session is not None else None
        return result.value if result is not None else None

    @property
    def info(self) -> dict[str, Any]:
        """What :meth:`submit` measured: ``f1_by_item``, ``f1_by_row``, their precision/recall,
        ``by_column`` (item-F1 per required column), ``notes``, ``tool_calls``, ``format_ok``,
        ``reward``; ``{}`` before it."""
        result = self.session.result if self.session is not None else None
        return result.info if result is not None else {}

    @property
    def answer(self) -> str:
        """The submitted answer (``""`` before :meth:`submit`)."""
        return self.session.answer if self.session is not None else ""

    @property
    def tool_calls(self) -> int:
        """Tool calls of the running (or last) episode."""
        return self.session.turn if self.session is not None else 0

    # -- tools ----------------------------------------------------------------------------
    def step(self, name: str, arguments: dict | None = None) -> Observation:
        """Answer one tool call of the running episode (``web_search``, ``web_extractor``, ``dict_memory``).

        Returns:
            The :class:`~worldforge.simenv.env.Observation` (malformed calls and an exhausted
            ``max_tool_calls`` are error observations).

        Raises:
            EpisodeOver: no episode is running.
        """
        if self.done or self.session is None:
            raise EpisodeOver("the episode is over: call reset(world=..., task=...) to start another")
        return self.episodes.step(_KEY, {"name": name, "arguments": arguments or {}})

    # web_search, web_extractor, dict_memory: generated from their declaration below the class

    def submit(self, answer: str) -> float:
        """End the episode with ``answer`` (one Markdown table) and return its reward.

        The reward (see :class:`RewardConfig`) is kept on :attr:`reward`, the scores on
        :attr:`info`; the episode is logged (agent :attr:`agent`) when ``record``.

        Raises:
            EpisodeOver: no episode is running.
            EpisodeNotLogged: the episode log cannot be written (the reward stays on :attr:`reward`;
                the episode is kept and logged at the next reset or close).
        """
        if self.done or self.session is None or self.task is None:
            raise EpisodeOver("the episode is over: call reset(world=..., task=...) to start another")
        result = self.episodes.submit(_KEY, answer, self.reward_config)
        self.done = True
        self.episodes.close(_KEY)  # logged, finished
        return result.value

    def close(self) -> None:
        """End a running episode (logged unfinished when it took a step); the env stays usable."""
        self._finish()

    # -- recording ------------------------------------------------------------------------
    def _finish(self) -> None:
        """End the running episode: closed through the service, logged unfinished when it took a step. An
        episode whose log write failed before is logged again here (the service keeps it until then).

        Raises:
            EpisodeNotLogged: the episode log cannot be written; the episode is kept and logged at the
                next reset or close, and this env's episode is over either way.
        """
        try:
            if (not self.done and self.session is not None) or self.episodes.unlogged:
                self.episodes.close(_KEY)
        finally:
            self.done = True


for _tool in SEARCH_TOOLS:  # the search tools' methods: the declared signature and docstring, answered by step()
    setattr(SearchWorldEnv, _tool.name, _tool.method(lambda env, name, arguments: env.step(name, arguments).text, owner=SearchWorldEnv))


class _ToolSession:
    """What :class:`~worldforge.agents.oracle.Oracle` steps: any ``call(name, arguments) -> text``."""

    def __init__(self, call: Callable[[str, dict], str]):
        self.call = call

    def step(self, call: dict) -> Observation:
        """Make the tool call through ``call``; a text starting ``Error`` is an error observation."""
        text = self.call(call["name"], dict(call.get("arguments") or {}))
        return Observation(text, call["name"], error=text.startswith("Error"))


def scripted_answer(task: Task, call: Callable[[str, dict], str], retries: int = 8) -> str:
    """The scripted oracle's answer to ``task``, found through any tool interface.

    The oracle (:func:`~worldforge.agents.oracle.solve`) executes the task's plan with
    ``web_search`` / ``web_extractor`` calls made through ``call`` — an in-process env, a TRL
    tool method, an OpenEnv client or an HTTP session — so every entry point is checked with
    the same agent. Error observations (text starting ``Error``) are retried.

    Args:
        task: the task (with its plan, as stored by ``worldforge tasks export``).
        call: ``call(tool name, arguments dict) -> observation text``.
        retries: attempts per tool call.

    Returns:
        The answer as one Markdown table (the task's required columns), or a sentence saying
        the oracle could not find it; for a deep question (:func:`is_deep`), the BrowseComp-format
        response (Explanation / Exact Answer / Confidence, :func:`~worldforge.agents.oracle.answer_deep`).
    """
    from worldforge.agents.oracle import answer_deep, solve

    if is_deep(task):
        from worldforge.tasks.deep import question_of

        return answer_deep(_ToolSession(call), question_of(task), retries).response  # type: ignore[arg-type]
    return solve(_ToolSession(call), task, retries).answer  # type: ignore[arg-type]
