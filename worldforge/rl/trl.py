"""TRL's ``GRPOTrainer(environment_factory=...)`` over the search worlds, and its prompt dataset.

TRL (>= 1.0, ``trl.GRPOTrainer``; see the ``environment_factory`` argument's docstring) calls the
factory with no arguments, once per concurrent rollout, and uses the instance like this:

* every public method but ``reset`` and ``get_reward`` is a **tool**: its name, typed signature and
  Google-style docstring become the tool's JSON schema (``transformers.utils.get_json_schema``),
  rendered by the chat template; a tool's return value is the tool message, an exception becomes
  ``{"error": ...}``;
* ``reset(**row)`` gets the whole dataset row (``prompt`` included) before each rollout; the text
  it returns is appended to the row's last user message;
* ``get_reward()`` is called once per finished rollout: the environment owns the reward, logged
  under the class name (``rewards/SearchWorldToolEnv/mean``).

:class:`SearchWorldToolEnv` is that contract over :class:`~worldforge.rl.env.SearchWorldEnv`:
the tools ``web_search``, ``web_extractor``, ``dict_memory`` and ``submit``; the reward is a wide
task's item-F1 (optionally shaped, :class:`~worldforge.rl.env.RewardConfig`) or a deep question's
correctness. :func:`prompt_dataset` builds the rows (one per task and seed, of either family or both) and :func:`write_prompt_dataset`
saves them for ``datasets.load_from_disk`` (``worldforge rl dataset``).

Example::

    from trl import GRPOConfig, GRPOTrainer
    from worldforge.rl.trl import make_env_factory, prompt_dataset

    trainer = GRPOTrainer(model="Qwen/Qwen3-0.6B", args=GRPOConfig(max_completion_length=2048),
                          train_dataset=prompt_dataset(worlds=["smartphones_2029"]),
                          environment_factory=make_env_factory(warehouse="warehouse"))
    trainer.train()
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.rl.env import EpisodeOver, RewardConfig, SearchWorldEnv, check_family, is_deep, parse_perturbations, world_tasks
from worldforge.simenv.tools import EPISODE_TOOLS
from worldforge.warehouse.atomic import atomic_dir
from worldforge.warehouse.layout import Warehouse, WarehouseLike

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = ["DEEP_INSTRUCTION", "INSTRUCTION", "SEARCH_INTRO", "SUBMITTED", "SearchWorldToolEnv", "TRLTools", "make_env_factory", "prompt_dataset", "prompt_rows", "write_prompt_dataset"]

SEARCH_INTRO = (
    "Answer the question below about a fictional world by searching its web with the tools "
    "(web_search finds pages, web_extractor reads one, dict_memory keeps notes)."
)
"""How every prompt row starts (the TRL rows and the verifiers tasks, :mod:`worldforge.rl.verifiers`); what follows says how to answer."""

INSTRUCTION = SEARCH_INTRO + " When you have the answer, call submit once with one Markdown table holding the columns the question asks for."
"""The user message of a wide task's prompt row; :meth:`SearchWorldToolEnv.reset` appends the task's question to it."""

DEEP_INSTRUCTION = SEARCH_INTRO + " The answer is one name, number or date. When you have it, call submit once with your response in the format the question gives."
"""The user message of a deep question's prompt row (:mod:`worldforge.tasks.deep`); its question brings BrowseComp's answer format."""

_ROW_FIELDS = ("world", "task", "scenario", "seed", "perturbations")


SUBMITTED = "Answer submitted; the episode is over."
"""What ``submit`` answers the policy (the reward is not shown)."""


class TRLTools:
    """The four tools in the shape TRL reads them: public methods with typed signatures and
    Google-style docstrings (``transformers.utils.get_json_schema``) that become the tool schemas.

    Subclasses answer :meth:`_call` (``tool name, arguments -> observation text``): in-process
    (:class:`SearchWorldToolEnv`) or over OpenEnv (:class:`~worldforge.rl.openenv.RemoteSearchWorld`),
    so both adapters show the policy the same tools.
    """

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        raise NotImplementedError

    # web_search, web_extractor, dict_memory, submit: generated from their declaration below the class


def _tool_call(tools: TRLTools, name: str, arguments: dict[str, Any]) -> str:
    if name == "submit":  # a policy's answer reaches the episode as text, whatever JSON type it came as
        answer = arguments.get("answer")
        arguments = {"answer": answer if isinstance(answer, str) else str(answer)}
    return tools._call(name, arguments)


for _tool in EPISODE_TOOLS:  # each tool's method: the declared signature and Google-style docstring, answered by _call
    setattr(TRLTools, _tool.name, _tool.method(_tool_call, owner=TRLTools))


class SearchWorldToolEnv(TRLTools):
    """One rollout's search episode, in the shape TRL's ``environment_factory`` expects.

    Constructible with no arguments (the core then resolves the configured warehouse, an edge like
    :class:`~worldforge.rl.env.SearchWorldEnv`); pass
    :func:`make_env_factory` to the trainer to choose the warehouse or the reward. The public
    methods are exactly TRL's: ``reset``, ``get_reward`` and the four tools; tools called with no
    episode running (before ``reset``, after ``submit``) return a text starting ``Error:``
    instead of raising.

    Args:
        warehouse: the warehouse, or its folder (``None``: the configured one).
        reward: how the score becomes the reward (default: the plain item-F1).
        record: log episodes to the episode store (agent ``agent``), like every other session.
        agent: the ``agent`` of the recorded episodes.
        max_tool_calls: tool calls an episode may make before tools answer with an error (``None``: no limit).
    """

    def __init__(self, warehouse: WarehouseLike | None = None, reward: RewardConfig | None = None, record: bool = True,
                 agent: str = "trl", max_tool_calls: int | None = None):
        self._env = SearchWorldEnv(warehouse, reward=reward, record=record, agent=agent, max_tool_calls=max_tool_calls)
        self._total_tool_calls = 0
        self._episodes = 0

    # -- read-only views (properties are not tools: TRL lists functions only) ----------------
    @property
    def core(self) -> SearchWorldEnv:
        """The wrapped :class:`~worldforge.rl.env.SearchWorldEnv` (its ``info`` holds the last episode's scores)."""
        return self._env

    @property
    def info(self) -> dict[str, Any]:
        """What the last ``submit`` measured (``f1_by_item``, ``f1_by_row``, ``by_column``, ``tool_calls``, ``reward``...); ``{}`` before one."""
        return self._env.info

    @property
    def total_tool_calls(self) -> int:
        """Tool calls (``submit`` excluded) over every episode this instance ran."""
        return self._total_tool_calls

    @property
    def episodes(self) -> int:
        """Episodes this instance started (``reset`` calls that succeeded)."""
        return self._episodes

    # -- TRL's contract ---------------------------------------------------------------------
    def reset(self, **row: Any) -> str:
        """Start the episode of one dataset row (TRL passes every column as a keyword).

        Args:
            **row: ``world`` and ``task`` (the task's ``instance_id`` or a deep question's id) are required; ``scenario``,
                ``seed`` (default 0) and ``perturbations`` (see
                :func:`~worldforge.rl.env.parse_perturbations`) are optional; other columns
                (``prompt``...) are ignored.

        Returns:
            ``"\\n\\n"`` and the task's question with its answer format, without the tool list
            (TRL renders the tools' schemas in the prompt); TRL appends it to the last user message.

        Raises:
            WorldforgeError: ``world`` or ``task`` is missing, or no such world, task or scenario,
                or invalid perturbations.
        """
        missing = [k for k in ("world", "task") if not row.get(k)]
        if missing:
            raise WorldforgeError(f"a prompt row needs {' and '.join(missing)} (columns: {', '.join(sorted(row)) or 'none'})")
        seed = row.get("seed")
        self._env.reset(world=str(row["world"]), task=str(row["task"]), scenario=row.get("scenario") or None,
                        seed=int(seed) if seed is not None else 0, perturbations=row.get("perturbations") or None)
        self._episodes += 1
        return "\n\n" + self._env.initial_observation(tools=False)

    def get_reward(self) -> float:
        """The finished rollout's reward: the submitted answer's reward (item-F1 by default; a deep question's correctness), 0.0
        when it never submitted.

        TRL calls it once per rollout, after the tool loop; an episode still running is ended here
        (logged unfinished when ``record``).
        """
        if not self._env.done:
            self._env.close()
        return float(self._env.reward) if self._env.reward is not None else 0.0

    # -- the tools (TRLTools) answered by the core ---------------------------------------------
    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        try:
            if tool == "submit":
                self._env.submit(arguments["answer"])
                return SUBMITTED
            text = self._env.step(tool, arguments).text
        except EpisodeOver as exc:
            return f"Error: {exc}"
        self._total_tool_calls += 1
        return text


def make_env_factory(warehouse: WarehouseLike, reward: RewardConfig | None = None, record: bool = True,
                     agent: str = "trl", max_tool_calls: int | None = None) -> Callable[[], SearchWorldToolEnv]:
    """A no-argument factory of configured :class:`SearchWorldToolEnv` instances, for ``environment_factory``.

    Trainers call the factory with no arguments; this binds the options with :func:`functools.partial`
    (the instances' class stays :class:`SearchWorldToolEnv`, the name TRL logs the reward under).

    Args:
        warehouse: the warehouse, or its folder.
        reward: the reward shaping (default: the plain item-F1).
        record: log episodes to the episode store.
        agent: the ``agent`` of the recorded episodes.
        max_tool_calls: tool calls an episode may make (``None``: no limit).

    Returns:
        ``factory()`` -> a new :class:`SearchWorldToolEnv`.
    """
    return functools.partial(SearchWorldToolEnv, warehouse=warehouse, reward=reward, record=record, agent=agent, max_tool_calls=max_tool_calls)


# -- the prompt dataset ---------------------------------------------------------------------------
def _worlds_with_tasks(warehouse: Warehouse, family: str = "wide") -> list[str]:
    worlds = []
    for path in warehouse.world_files():
        try:
            world_tasks(path.stem, warehouse, family)
        except WarehouseError:  # no tasks built (or not a world file): not an RL world
            continue
        worlds.append(path.stem)
    return worlds


def prompt_rows(warehouse: WarehouseLike, worlds: Sequence[str] | None = None, seeds: int = 1,
                perturbations: str | None = None, shuffle_seed: int | None = None, family: str = "wide") -> list[dict[str, Any]]:
    """The prompt rows of RL training: one per (world, task, seed).

    Each row is ``{"prompt": [{"role": "user", "content": INSTRUCTION or DEEP_INSTRUCTION}], "world", "task"
    (the task's instance_id or the deep question's id), "family" (``wide`` or ``deep``), "scenario" (the task's scenario
    or None), "seed" (0..seeds-1), "perturbations" (the spec as given, or None)}``; the other columns are what
    :meth:`SearchWorldToolEnv.reset` reads (TRL passes it the whole row). A wide row's reward is its item-F1, a deep
    row's its answer's correctness: with ``family="both"`` one dataset mixes them.

    Args:
        warehouse: the warehouse, or its folder.
        worlds: the worlds (default: every world of the warehouse that has tasks).
        seeds: rows per task, seeded 0..seeds-1 (the seed drives the episode's perturbations).
        perturbations: every row's perturbation schema (see :func:`~worldforge.rl.env.parse_perturbations`); checked here.
        shuffle_seed: shuffle the rows with this seed (default: world, task, seed order).
        family: ``wide``, ``deep`` or ``both`` (:data:`~worldforge.rl.env.FAMILIES`).

    Returns:
        The rows.

    Raises:
        WarehouseError: a named world does not exist or has no tasks of the family; no world of the warehouse has them.
        WorldforgeError: ``seeds`` < 1, no world named, an unknown family, or invalid ``perturbations``.
    """
    family = check_family(family)
    if seeds < 1:
        raise WorldforgeError(f"seeds must be at least 1 (got {seeds})")
    spec = perturbations if perturbations and perturbations.strip().lower() != "none" else None
    parse_perturbations(spec)  # a bad schema fails before anything is built
    wh = Warehouse.of(warehouse)
    if worlds is None:
        names = _worlds_with_tasks(wh, family)
        if not names:
            kind = "" if family == "both" else f"{family} "
            raise WarehouseError(f"no world in {wh} has {kind}tasks (build them with `worldforge tasks export --world WORLD DIR`)")
    else:
        names = list(dict.fromkeys(w.strip() for w in worlds if w.strip()))
        if not names:
            raise WorldforgeError("no world named")
    rows = []
    for world in names:
        for iid, task in sorted(world_tasks(world, wh, family).items()):
            deep = is_deep(task)
            for seed in range(seeds):
                rows.append({"prompt": [{"role": "user", "content": DEEP_INSTRUCTION if deep else INSTRUCTION}], "world": world, "task": iid,
                             "family": "deep" if deep else "wide", "scenario": task.extra.get("scenario"), "seed": seed, "perturbations": spec})
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(rows)
    return rows


def prompt_dataset(warehouse: WarehouseLike, worlds: Sequence[str] | None = None, seeds: int = 1,
                   perturbations: str | None = None, shuffle_seed: int | None = None, family: str = "wide") -> Dataset:
    """:func:`prompt_rows` as a Hugging Face ``datasets.Dataset`` (columns ``prompt``, ``world``, ``task``, ``family``, ``scenario``,
    ``seed``, ``perturbations``).

    Pass it as ``GRPOTrainer(train_dataset=...)`` beside ``environment_factory``; arguments and
    errors as :func:`prompt_rows`.

    Raises:
        WorldforgeError: as :func:`prompt_rows`, or the ``datasets`` package is not installed.
    """
    try:
        from datasets import Dataset, Features, List, Value
    except ImportError:  # pragma: no cover - depends on the install
        raise WorldforgeError("the prompt dataset needs the datasets package: pip install 'worldforge[rl]'") from None
    rows = prompt_rows(warehouse, worlds, seeds, perturbations, shuffle_seed, family)
    features = Features({"prompt": List({"role": Value("string"), "content": Value("string")}), "world": Value("string"),
                         "task": Value("string"), "family": Value("string"), "scenario": Value("string"), "seed": Value("int64"), "perturbations": Value("string")})
    return Dataset.from_list(rows, features=features)


def write_prompt_dataset(out_dir: str | Path, warehouse: WarehouseLike, worlds: Sequence[str] | None = None, seeds: int = 1,
                         perturbations: str | None = None, shuffle_seed: int | None = None, family: str = "wide") -> Dataset:
    """Build :func:`prompt_dataset` and save it to ``out_dir`` (``datasets.load_from_disk(out_dir)`` reads it back).

    The dataset is written to a temporary folder beside ``out_dir`` and renamed over it
    (:func:`~worldforge.warehouse.atomic.atomic_dir`): a failure leaves a previous dataset there untouched.

    Args:
        out_dir: the dataset folder (replaced).
        warehouse, worlds, seeds, perturbations, shuffle_seed, family: as :func:`prompt_rows`.

    Returns:
        The dataset written.

    Raises:
        WorldforgeError: as :func:`prompt_dataset` (nothing is written then).
    """
    dataset = prompt_dataset(warehouse, worlds, seeds, perturbations, shuffle_seed, family)
    with atomic_dir(out_dir) as tmp:
        dataset.save_to_disk(str(tmp))
    return dataset
