"""The simulated search environment: ``web_search``, ``web_extractor`` and ``dict_memory``.

Tool formats are those of the Qwen-AgentWorld search domain (DESIGN.md §4), answered from a
world's corpus instead of the live web:

* ``web_search`` — ``{"query": str}`` or ``{"queries": [str, ...]}`` (optional ``page``):
  10 results per query as ``[n] <url>`` / ``Title:`` / ``Snippet:`` / ``Date:`` blocks
  separated by blank lines. A URL keeps its number for the rest of the session.
* ``web_extractor`` — ``{"url": str}``: the page as Markdown; the same URL always extracts
  to the same text; an unknown URL gives a 404 error observation.
* ``dict_memory`` — ``{"operation": add|update|retrieve|retrieve_all|remove|remove_all,
  "dict": {...} | "key_list": [...]}`` with the reference reply strings.

Malformed calls (unknown tool, missing or mistyped argument, invalid JSON) return an error
observation, never an exception. With a task attached, *leakage control* applies: a query
that names none of the task's target entities never gets a snippet that states a gold cell
(such snippets are replaced, and the decision is logged). Every snippet's revealed facts
are logged, so leakage is measured, not assumed.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from worldforge.corpus.generate import page_markdown
from worldforge.corpus.index import search as corpus_search
from worldforge.corpus.quantity import render_value
from worldforge.corpus.store import ServedPages, served_corpus
from worldforge.errors import WarehouseError, WorldforgeError
from worldforge.simenv.perturbations import DEFAULT_MIX, PerturbationConfig, decision_rng
from worldforge.simenv.reward import Reward, RewardConfig, reward_of
from worldforge.simenv.tools import DICT_MEMORY, SEARCH_TOOLS
from worldforge.tasks.io import Task
from worldforge.trajectories.episodes import Episode, Observation
from worldforge.trajectories.model import storable
from worldforge.warehouse.cache import FileCache
from worldforge.warehouse.layout import Warehouse

TOOLS = tuple(tool.name for tool in SEARCH_TOOLS)
"""The search tools' names (declared in :mod:`worldforge.simenv.tools`)."""
_OPERATIONS = next(p.enum for p in DICT_MEMORY.params if p.name == "operation")
RESULTS_PER_QUERY = 10
MAX_QUERIES = 20
"""Queries one ``web_search`` call may batch; more is an error observation (one call stays cheap)."""
MAX_QUERY_CHARS = 1000
"""Characters one query may have; a longer one is an error observation."""

TOOL_SCHEMAS: list[dict] = [tool.openai_schema() for tool in SEARCH_TOOLS]
"""The search tools as OpenAI function-tool JSON schemas (:meth:`~worldforge.simenv.tools.Tool.openai_schema`)."""


class SearchResult(NamedTuple):
    """One result as shown to the agent (after perturbations and leakage control).

    Attributes:
        n: the URL's number in the session (``[n]`` in ``web_search``; kept for the session).
        url, title, snippet: the page's URL and title, and the snippet shown.
        published: the page's date (ISO) or ``None``.
        score: the BM25 score of the page for the query (tantivy).
    """

    n: int
    url: str
    title: str
    snippet: str
    published: str | None
    score: float


@dataclass(frozen=True)
class SearchPage:
    """One query's page of results (:meth:`SearchEnv.search_page`).

    Attributes:
        results: the results shown, best first.
        pages: pages the results span (0 when there are none).
        message: instead of results, what the agent reads ("No results found for ...").
    """

    results: list[SearchResult]
    pages: int
    message: str | None = None


@dataclass(frozen=True)
class _Corpus:
    pages: ServedPages  # url -> the page as served, dressed on first access
    lead_facts: dict[str, list[tuple[str, str, str, str]]]
    labels: tuple[str, ...]
    labels_lower: tuple[str, ...]  # the labels lower-cased, in the same order
    page_rows: dict[str, list[tuple[str, str]]]  # url -> (table, row key) of every row it states
    titles: tuple[str, ...] = ()  # encyclopedia titles without their site ("Farm 12 of Renvelka 4"): the probe's queries
    # when no lead states a label (a world whose rows are all designated by number)
    named: dict[str, frozenset[str]] = field(default_factory=dict)  # lower-cased question -> the labels it names (filled by SearchEnv)

    def labels_in(self, question: str) -> frozenset[str]:
        """The labels a lower-cased question names (contains), worked out once per question: a task's
        sessions (the oracle's clean and perturbed episodes, the leakage probe) share it."""
        got = self.named.get(question)
        if got is None:
            if len(self.named) >= 4096:  # bounded: a long-running server sees many questions
                self.named.clear()
            got = self.named[question] = frozenset(label for label, low in zip(self.labels, self.labels_lower) if low in question)
        return got


_CORPORA: FileCache[_Corpus] = FileCache()
"""Loaded corpora by ``(world file, scenario)``, while the file is unchanged (at most ``WORLDFORGE_OPEN_WORLDS``)."""


def _corpus(path: Path, scenario: str | None) -> _Corpus:
    return _CORPORA.get(path, scenario, lambda: _load_corpus(path, scenario))


def _load_corpus(path: Path, scenario: str | None) -> _Corpus:
    pages, facts = served_corpus(path, scenario)  # each page dressed when an agent first opens it
    lead = facts.filter(facts["section"] == "lead")
    lead_facts: dict[str, list] = {}
    for url, t, k, c, v in lead.select("url", "table_name", "row_key", "column_name", "value_text").iter_rows():
        lead_facts.setdefault(url, []).append((t, k, c, v))
    labels = tuple(sorted({v for facts_ in lead_facts.values() for (_, _, _, v) in facts_ if len(v) > 3}, key=len, reverse=True))
    page_rows: dict[str, list[tuple[str, str]]] = {}
    for url, t, k in facts.select("url", "table_name", "row_key").unique(maintain_order=True).iter_rows():
        page_rows.setdefault(url, []).append((t, k))
    titles = () if labels else tuple(sorted({t.rsplit(" - ", 1)[0] for t in pages.titles("encyclopedia")}))
    return _Corpus(pages, lead_facts, labels, tuple(x.lower() for x in labels), page_rows, titles)


class EpisodeOver(WorldforgeError):
    """A call that needs a running episode came when there is none (no task attached, no reset
    yet, or the answer already submitted)."""


def _date(iso: str | None) -> str:
    return render_value(date.fromisoformat(iso)) if iso else "N/A"


class ObservationRenderer(Protocol):
    """What renders an observation through a world model (:class:`worldforge.worldmodel.render.LLMSearchRenderer`).

    ``render(env, call, grounded)`` may replace ``grounded.text`` (in place) with a verified
    rendering, and returns an object whose ``as_dict()`` describes the decision (kept on
    :attr:`Observation.rendering`).
    """

    def render(self, env: SearchEnv, call: dict, grounded: Observation) -> Any:
        """Render ``grounded`` for ``call`` in ``env``; the returned object has ``as_dict() -> dict``."""
        ...


class SearchEnv:
    """One agent session in a world's simulated web.

    Args:
        world: the world name (``<warehouse>/<world>.duckdb`` with a corpus).
        scenario: search a scenario's corpus instead.
        task: attach a task: leakage control then keeps unrelated snippets from stating its gold cells.
        perturbations: the schema in force (:data:`NO_PERTURBATIONS` by default).
        seed: the seed of every perturbation decision.
        warehouse: the warehouse.
        session_id: a stable id (default: random); decisions depend on it.
        episode: the number of episodes run before (for scheduled rates).
        renderer: render ``web_search``/``web_extractor`` observations through a world model
            (:class:`worldforge.worldmodel.render.LLMSearchRenderer`), verified against the world;
            default: the grounded templates.
        max_tool_calls: tool calls an episode may make; later calls are error observations
            (counted and recorded; ``None``: no limit).

    Raises:
        WarehouseError: the world or its corpus is missing.
    """

    def __init__(
        self,
        world: str,
        scenario: str | None = None,
        task: Task | None = None,
        perturbations: PerturbationConfig | None = None,
        seed: int = 0,
        *,
        warehouse: Warehouse,
        session_id: str | None = None,
        episode: int = 0,
        renderer: ObservationRenderer | None = None,
        max_tool_calls: int | None = None,
    ):
        self.world, self.scenario, self.task, self.seed, self.warehouse = world, scenario, task, seed, warehouse
        self.perturbations = perturbations or PerturbationConfig()
        self.session_id = session_id or uuid.uuid4().hex
        self.episode = episode
        self.renderer = renderer
        self.max_tool_calls = max_tool_calls
        path = self.warehouse.world(world)
        if not path.is_file():
            raise WarehouseError(f"{path}: no such world (build it with `worldforge world build` and `worldforge corpus build`)")
        self.corpus = _corpus(path, scenario)
        self.gold_cells: set[tuple[str, str, str]] = set()
        self.targets: tuple[str, ...] = ()
        if task is not None:
            prov = task.extra.get("provenance", {})
            # the cells the gold rows are read from (an aggregate's inputs too): no unrelated query may reveal them
            self.gold_cells = {tuple(x.split("|")[:3]) for cells in prov.get("rows", []) for x in cells}
            gold_labels = {row[c] for row in task.gold for c in task.unique_columns}
            question = task.question.lower()
            named = self.corpus.labels_in(question)
            self.targets = tuple(sorted({x.lower() for x in gold_labels | named if x}))
        self.reset()

    # -- session state ------------------------------------------------------------------
    def reset(self) -> str:
        """Start the episode over: numbering, extracted pages, memory, history and a submitted answer are cleared."""
        self.turn = 0
        self.answer = ""
        self.result: Reward | None = None
        self.history: list[tuple[dict, Observation]] = []
        self.numbers: dict[str, int] = {}
        self.extracted: list[str] = []
        self.memory: dict[str, Any] = {}
        return f"Session {self.session_id} ready. Tools: {', '.join(TOOLS)}."

    def step(self, tool_call: Any) -> Observation:
        """Answer one tool call (``{"name", "arguments"}``, an OpenAI tool call, or its JSON text)."""
        self.turn += 1
        call, problem = _normalise_call(tool_call)
        if problem:
            obs = Observation(f"Error: {problem}", str((call or {}).get("name", "?")), error=True)
            call = {"name": obs.tool, "arguments": {"raw": str(tool_call)[:2000]}}
        elif self.result is not None:
            assert call is not None
            obs = Observation("Error: the episode is over (an answer was submitted); reset the session to start another.", call["name"], error=True)
        elif self.max_tool_calls is not None and self.turn > self.max_tool_calls:
            assert call is not None
            obs = Observation(f"Error: the tool-call budget of this episode ({self.max_tool_calls}) is spent; submit your answer.", call["name"], error=True)
        else:
            assert call is not None
            obs = self._answer(call["name"], call["arguments"])
        self.history.append((call, obs))
        return obs

    def submit(self, answer: str, reward: RewardConfig | None = None) -> Reward:
        """End the episode with ``answer`` (one Markdown table), scored against the attached task.

        Later tool calls are error observations until :meth:`reset`. The answer and its
        :class:`~worldforge.simenv.reward.Reward` are kept (:attr:`answer`, :attr:`result`) and
        recorded with the episode.

        Args:
            answer: the final answer; its first Markdown table is scored.
            reward: how the score becomes the reward (default: the plain item-F1).

        Raises:
            EpisodeOver: the session has no task, or an answer was already submitted.
        """
        if self.task is None:
            raise EpisodeOver("this session has no task to answer: open it with a task (task_id) to submit")
        if self.result is not None:
            raise EpisodeOver("an answer was already submitted; reset the session to start another episode")
        self.answer = answer if isinstance(answer, str) else str(answer)
        self.result = reward_of(self.answer, self.task, self.turn, reward)
        return self.result

    def _answer(self, name: str, args: dict) -> Observation:
        obs = Observation("", name)
        err = self.transient_error(obs) if name in ("web_search", "web_extractor") else None
        if err:
            obs.text, obs.error = err, True
            return obs
        if name == "web_search":
            self._web_search(args, obs)
        elif name == "web_extractor":
            self._web_extractor(args, obs)
        else:
            self._dict_memory(args, obs)
        if self.renderer is not None and name != "dict_memory" and not obs.error and not obs.text.startswith("No results"):
            obs.rendering = self.renderer.render(self, {"name": name, "arguments": args}, obs).as_dict()
        return obs

    # -- perturbations ------------------------------------------------------------------
    def _fires(self, kind: str, slot: int = 0) -> bool:
        p = self.perturbations.get(kind)
        if p is None:
            return False
        return decision_rng(self.seed, self.session_id, self.turn, kind, slot).random() < p.rate_at(self.episode)

    def transient_error(self, obs: Observation) -> str | None:
        """This turn's ``transient_error`` decision: the error text the tool answers with (the
        decision logged in ``obs.fired``), or ``None`` when the call goes through."""
        if not self._fires("transient_error"):
            return None
        p = self.perturbations.get("transient_error")
        kind = decision_rng(self.seed, self.session_id, self.turn, "transient_error", 1).choice(p.error_kinds)  # type: ignore[union-attr]
        obs.fired.append({"kind": "transient_error", "detail": kind})
        return {
            "rate_limit": "Error: 429 Too Many Requests: rate limit exceeded. Retry after a few seconds.",
            "timeout": "Error: the request timed out after 30 seconds.",
            "http_5xx": "Error: 503 Service Unavailable: the server is temporarily unable to handle the request.",
        }[kind]

    # -- tools --------------------------------------------------------------------------
    def _web_search(self, args: dict, obs: Observation) -> None:
        if "query" in args and "queries" in args:
            obs.text, obs.error = "Error: give either 'query' or 'queries', not both.", True
            return
        if "queries" in args:
            queries = args["queries"]
            if not isinstance(queries, list) or not queries or not all(isinstance(q, str) and q.strip() for q in queries):
                obs.text, obs.error = "Error: 'queries' must be a non-empty list of non-empty strings.", True
                return
        elif isinstance(args.get("query"), str) and args["query"].strip():
            queries = [args["query"]]
        else:
            obs.text, obs.error = "Error: web_search needs 'query' (a non-empty string) or 'queries' (a list of strings).", True
            return
        if len(queries) > MAX_QUERIES:
            obs.text, obs.error = f"Error: at most {MAX_QUERIES} queries per call (got {len(queries)}).", True
            return
        if any(len(q) > MAX_QUERY_CHARS for q in queries):
            obs.text, obs.error = f"Error: a query may have at most {MAX_QUERY_CHARS} characters.", True
            return
        page = args.get("page", 1)
        if not isinstance(page, int) or isinstance(page, bool) or page < 1:
            obs.text, obs.error = "Error: 'page' must be a positive integer.", True
            return
        sections = []
        for slot, q in enumerate(queries):
            if len(queries) > 1 and self._fires("partial_batch", slot):
                obs.fired.append({"kind": "partial_batch", "detail": q})
                sections.append(f'Results for "{q}":\nError: this query failed (503 Service Unavailable). Please retry it.')
                continue
            body = self._one_query(q, page, slot, obs)
            sections.append(f'Results for "{q}":\n{body}' if len(queries) > 1 else body)
        obs.text = "\n\n".join(sections)

    def _one_query(self, query: str, page: int, slot: int, obs: Observation) -> str:
        found = self.search_page(query, page, slot, obs)
        if found.message:
            return found.message
        text = "\n\n".join(f"[{r.n}] {r.url}\nTitle: {r.title}\nSnippet: {r.snippet}\nDate: {_date(r.published)}" for r in found.results)
        if found.pages > 1:
            text += f'\n\nPage {page} of {found.pages}. Call web_search with "page": {page + 1} for more.' if page < found.pages else f"\n\nPage {page} of {found.pages}."
        return text

    def search_page(self, query: str, page: int = 1, slot: int = 0, obs: Observation | None = None, k: int = RESULTS_PER_QUERY) -> SearchPage:
        """One query's results as data, after the perturbations and leakage control of this session.

        This is the search every entry point shares: ``web_search`` renders it as text, the
        Search-R1 ``/retrieve`` endpoint as documents. It does not count a turn; the caller's
        :meth:`step` does (``web_search``), or the caller counts its own.

        Args:
            query: free text.
            page: the result page (1-based), when the ``pagination`` perturbation pages results.
            slot: the query's position in a batch (seeds per-query decisions).
            obs: the observation that collects what fired and what was revealed (default: a fresh one).
            k: results per page without pagination (``web_search``: 10).

        Returns:
            A :class:`SearchPage`: the results shown (URL numbers kept for the session), the
            number of pages, or a ``message`` ("No results found ...") instead of results.
        """
        obs = obs if obs is not None else Observation("", "web_search")
        if self._fires("empty_results", slot):
            obs.fired.append({"kind": "empty_results", "detail": query})
            return SearchPage([], 0, f'No results found for "{query}".')
        hits = corpus_search(self.world, query, k, self.warehouse, self.scenario)
        if not hits:
            return SearchPage([], 0, f'No results found for "{query}".')
        if self._fires("stale_ranking", slot):
            hits = list(hits)
            decision_rng(self.seed, self.session_id, self.turn, "stale_ranking", 100 + slot).shuffle(hits)
            obs.fired.append({"kind": "stale_ranking", "detail": query})
        pagination = self.perturbations.get("pagination")
        size = pagination.page_size if pagination is not None and self._fires("pagination", slot) else k
        if size < k:
            obs.fired.append({"kind": "pagination", "detail": f"{size} per page"})
        pages = max(1, -(-len(hits) // size))
        if page > pages:
            return SearchPage([], pages, f'No more results for "{query}" (there are {pages} page(s)).')
        shown = hits[(page - 1) * size: page * size]
        related = not self.targets or any(t in query.lower() for t in self.targets)
        results = []
        for i, h in enumerate(shown):
            n = self.numbers.setdefault(h.url, len(self.numbers) + 1)
            snippet = h.snippet
            facts = [f for f in self.corpus.lead_facts.get(h.url, []) if f[3] in snippet]
            if not related and any((t, k_, c) in self.gold_cells for t, k_, c, _ in facts):
                snippet = "Open the page for the details."
                obs.leaks_blocked += 1
                facts = []
            elif self._fires("snippet_withhold", 1000 * slot + i) and facts:
                cut = min(snippet.find(f[3]) for f in facts if f[3] in snippet)
                snippet = (snippet[:cut].rstrip() + " …") if cut > 0 else "…"
                facts = [f for f in facts if f[3] in snippet]
                obs.fired.append({"kind": "snippet_withhold", "detail": h.url})
            obs.revealed += [{"url": h.url, "table": t, "row_key": k_, "column": c, "value": v} for t, k_, c, v in facts]
            results.append(SearchResult(n, h.url, h.title, snippet, h.published, h.score))
        return SearchPage(results, pages)

    def _web_extractor(self, args: dict, obs: Observation) -> None:
        url = args.get("url")
        if not isinstance(url, str) or not url.strip():
            obs.text, obs.error = "Error: web_extractor needs 'url' (a string).", True
            return
        page = self.corpus.pages.get(url.strip())
        if page is None:
            obs.text, obs.error = f"Error: failed to fetch {url}: 404 Not Found.", True
            return
        self.extracted.append(page["url"])
        obs.text = page_markdown(page)

    def _dict_memory(self, args: dict, obs: Observation) -> None:
        op = args.get("operation")
        items, keys = args.get("dict"), args.get("key_list")
        if op in ("add", "update"):
            if not isinstance(items, dict) or not items:
                obs.text, obs.error = f"Error: '{op}' needs 'dict', a non-empty object.", True
                return
            if op == "update" and (missing := [k for k in items if k not in self.memory]):
                obs.text, obs.error = f"Key not found: {missing}", True
                return
            self.memory.update(items)
            verb = "added items of" if op == "add" else "updated items of"
            where = "to" if op == "add" else "in"
            obs.text = f"Successfully {verb} {list(items)} {where} memory."
        elif op in ("retrieve", "remove"):
            if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
                obs.text, obs.error = f"Error: '{op}' needs 'key_list', a non-empty list of strings.", True
                return
            found = [k for k in keys if k in self.memory]
            if not found:
                obs.text = "Key not found"
                return
            if op == "retrieve":
                obs.text = json.dumps({k: self.memory[k] for k in found}, ensure_ascii=False)
            else:
                for k in found:
                    del self.memory[k]
                obs.text = f"Successfully removed items of {found} from memory."
        elif op == "retrieve_all":
            obs.text = json.dumps(self.memory, ensure_ascii=False) if self.memory else "Memory is empty."
        elif op == "remove_all":
            self.memory.clear()
            obs.text = "Successfully cleared all memory."
        else:
            obs.text, obs.error = f"Error: 'operation' must be one of {', '.join(_OPERATIONS)}.", True


def _decoded(text: str | bytes) -> Any:
    """JSON text as values whose strings are valid UTF-8 (:func:`~worldforge.trajectories.model.storable`:
    an escaped lone surrogate, ``"\\ud800"``, becomes its escape text, as the servers' bodies do).

    Raises:
        json.JSONDecodeError: not JSON. ValueError: an integer of more than 4,300 digits.
        RecursionError: nested too deeply to read.
    """
    return _storable_tree(json.loads(text))


def _storable_tree(value: Any) -> Any:
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(k): _storable_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable_tree(v) for v in value]
    return value


def _unreadable(exc: Exception, what: str) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{what} not valid JSON ({exc.msg} at column {exc.colno})."
    if isinstance(exc, RecursionError):
        return f"{what} nested too deeply to read."
    return f"{what} not usable JSON ({exc})."


def _normalise_call(tool_call: Any) -> tuple[dict | None, str | None]:
    """``{"name", "arguments": dict}`` from the accepted shapes, or a problem in words (never raises:
    JSON text nested too deeply, an integer of thousands of digits and lone surrogates included)."""
    if isinstance(tool_call, (str, bytes)):
        try:
            tool_call = _decoded(tool_call)
        except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
            return None, _unreadable(exc, "the tool call is")
    if not isinstance(tool_call, dict):
        return None, 'a tool call is a JSON object {"name": ..., "arguments": {...}}.'
    if "function" in tool_call and isinstance(tool_call["function"], dict):  # OpenAI tool_calls[i]
        tool_call = tool_call["function"]
    name = tool_call.get("name")
    if not isinstance(name, str):
        return None, "the tool call has no 'name'."
    if name not in TOOLS:
        return {"name": name}, f"unknown tool {name!r}. Available tools: {', '.join(TOOLS)}."
    args = tool_call.get("arguments", {})
    if isinstance(args, str):
        try:
            args = _decoded(args) if args.strip() else {}
        except (ValueError, RecursionError) as exc:
            return {"name": name}, _unreadable(exc, f"the arguments of {name} are")
    if not isinstance(args, dict):
        return {"name": name}, f"the arguments of {name} must be a JSON object."
    return {"name": name, "arguments": args}, None


def leakage_probe(env: SearchEnv, queries: int = 8) -> tuple[int, int]:
    """Probe an env with a task attached: search for entities that are not its targets.

    Returns:
        ``(gold cells revealed by those snippets, queries sent)``; the first must be 0.
    """
    if env.task is None:
        raise ValueError("leakage_probe needs an env with a task attached")
    # a label is another entity's when no target is a substring of it (a label equal to a target included);
    # one alternation of the escaped targets answers "any target in it" in a single scan per label
    pool = env.corpus.labels or env.corpus.titles  # labels no lead states: the rows' article titles
    if env.targets:
        hit = re.compile("|".join(re.escape(t) for t in env.targets)).search
        others = [label for label in pool if hit(label.lower()) is None]
    else:
        others = list(pool)
    step = max(1, len(others) // queries)
    leaked = sent = 0
    for label in others[::step][:queries]:
        obs = env.step({"name": "web_search", "arguments": {"query": label}})
        sent += 1
        leaked += sum((r["table"], r["row_key"], r["column"]) in env.gold_cells for r in obs.revealed)
    return leaked, sent


NO_PERTURBATIONS = PerturbationConfig()
__all__ = ["DEFAULT_MIX", "NO_PERTURBATIONS", "EpisodeOver", "Observation", "ObservationRenderer", "SearchEnv", "episode_of", "SearchPage", "SearchResult", "TOOLS", "TOOL_SCHEMAS", "leakage_probe"]


def episode_of(env: SearchEnv, agent: str, finished: bool = True) -> Episode:
    """The :class:`Episode` of a session: its steps, its task, and the answer submitted with its scores (if any)."""
    score = env.result.score if env.result is not None else None
    return Episode(episode_id=env.session_id, world=env.world, scenario=env.scenario,
                   task_id=env.task.instance_id if env.task else None, question=env.task.question if env.task else "",
                   seed=env.seed, perturbations_json=env.perturbations.model_dump_json(), agent=agent,
                   steps=list(env.history), answer=env.answer, finished=finished,
                   f1_by_row=score.f1_by_row if score else None, f1_by_item=score.f1_by_item if score else None)
