"""A scripted oracle agent: solves generated tasks through the environment's tools alone.

It reads only observations (search results and extracted Markdown pages), never the
tables, so an F1 of 1.0 proves a task is solvable *through the environment*:

* ``children`` — search the parent, open its wiki page, follow the links of the section
  that lists the children, open each child's page and read the infobox;
* ``ranking``  — search for the ranking page, open it, read its table;
* ``window``   — search for the timeline page of the quarter, open it, then each row's page.

Every failed call (a perturbation) is retried, up to ``retries`` times; paginated results
are followed. The answer is one Markdown table in the task's column order.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from worldforge.simenv.env import Observation, SearchEnv, leakage_probe
from worldforge.simenv.episodes import Episode, record_episodes
from worldforge.simenv.perturbations import DEFAULT_MIX, PerturbationConfig
from worldforge.tasks.io import Task
from worldforge.tasks.scorer import Score, render_markdown_table, score_table
from worldforge.tasks.store import read_tasks
from worldforge.warehouse.layout import resolve, world_path

_RESULT = re.compile(r"^\[(\d+)\] (\S+)\nTitle: (.*)$", re.M)
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)]+)\)")
_ROW = re.compile(r"^\| (.+?) \| (.*?) \|$", re.M)


class OracleFailed(Exception):
    """The oracle could not finish (a page it needs was not found)."""


@dataclass
class OracleRun:
    """What one oracle run produced.

    Attributes:
        answer: the Markdown table in the task's column order, or a give-up sentence when no rows were found.
        score: the answer's WideSearch score against the task's gold table.
        steps: ``(tool call, observation)`` pairs in order, failed attempts included.
        failed: why the oracle gave up, or ``None`` when it finished.
    """

    answer: str
    score: Score
    steps: list[tuple[dict, Observation]] = field(default_factory=list)
    failed: str | None = None


class Oracle:
    """The scripted agent of one session: solves the three task kinds and keeps every step it takes.

    Args:
        env: the session to act in.
        retries: attempts per tool call before giving up.
    """

    def __init__(self, env: SearchEnv, retries: int = 8):
        self.env, self.retries = env, retries
        self.steps: list[tuple[dict, Observation]] = []

    def call(self, name: str, **arguments) -> Observation:
        """Call a tool until it answers without failing, recording every attempt in :attr:`steps`.

        An error observation, a failed batch query (``this query failed``) and ``No results found`` count as
        failures (perturbations) and are retried.

        Raises:
            OracleFailed: all ``retries`` attempts (at least one) failed.
        """
        for _ in range(max(1, self.retries)):
            call = {"name": name, "arguments": arguments}
            obs = self.env.step(call)
            self.steps.append((call, obs))
            if not obs.error and "this query failed" not in obs.text and not obs.text.startswith("No results found"):
                return obs
        raise OracleFailed(f"{name}({arguments}) kept failing: {obs.text[:120]}")

    def results(self, query: str) -> list[tuple[str, str]]:
        """(url, title) of every result of a query, following pagination."""
        out, page = [], 1
        while True:
            obs = self.call("web_search", query=query, page=page) if page > 1 else self.call("web_search", query=query)
            out += [(m.group(2), m.group(3)) for m in _RESULT.finditer(obs.text)]
            more = re.search(r'Call web_search with "page": (\d+)', obs.text)
            if not more:
                return out
            page = int(more.group(1))

    def find(self, query: str, accept) -> str:
        """The URL of the first result of ``query`` that ``accept(url, title)`` accepts.

        Raises:
            OracleFailed: no result fits.
        """
        for url, title in self.results(query):
            if accept(url, title):
                return url
        raise OracleFailed(f"no result of {query!r} fits")

    def page(self, url: str) -> str:
        """A page's Markdown as ``web_extractor`` returns it."""
        return self.call("web_extractor", url=url).text

    @staticmethod
    def infobox(text: str) -> dict[str, str]:
        """``{key: value}`` of every two-cell Markdown table row (``| key | value |``) of a page."""
        return {k.strip(): v.strip() for k, v in _ROW.findall(text)}

    @staticmethod
    def title_label(text: str) -> str:
        """The entity label of a page: its ``# title`` cut at the last ``" - "`` (``<label> - <site> wiki`` -> ``<label>``)."""
        first = text.splitlines()[0].removeprefix("# ")
        return first.rsplit(" - ", 1)[0]

    def entity_row(self, url: str, task: Task, label_col: str) -> dict[str, str]:
        """The task's required columns read from an entity page: ``label_col`` from the title, ``wiki_url`` as the
        URL, every other column from the infobox (``""`` when absent)."""
        text = self.page(url)
        box = self.infobox(text)
        row = {}
        for col in task.required:
            if col == label_col:
                row[col] = self.title_label(text)
            elif col == "wiki_url":
                row[col] = url
            else:
                row[col] = box.get(col.replace("_", " "), "")
        return row

    # -- task kinds ---------------------------------------------------------------------
    def children(self, task: Task) -> list[dict[str, str]]:
        """Solve a ``children`` task: the parent's wiki page, the links of its section on the children, each child's page.

        Raises:
            OracleFailed: the question is not understood, or a page or section it needs is missing.
        """
        m = re.search(r"find every (.+?) that belongs to (.+) \(([^()]+)\)\. For each", task.question)
        if not m:
            raise OracleFailed("question not understood")
        child, parent = m.group(1), m.group(2)
        url = self.find(parent, lambda u, t: "/wiki/" in u and t.startswith(parent + " - "))
        text = self.page(url)
        section = re.search(rf"^## {re.escape(child.capitalize())}\w*\n\n((?:- .*\n?)+)", text, re.M)
        if not section:
            raise OracleFailed(f"no '{child}' section on {url}")
        label_col = task.unique_columns[0]
        return [self.entity_row(u, task, label_col) for _, u in _LINK.findall(section.group(1))]

    def ranking(self, task: Task) -> list[dict[str, str]]:
        """Solve a ``ranking`` task: the first ``n`` rows of the ranking page's table as rank, label and value (the task's three required columns).

        Raises:
            OracleFailed: the question is not understood, or the ranking page is not found.
        """
        m = re.search(r"list the top (\d+) (.+?) ranked by (.+?) \(", task.question)
        if not m:
            raise OracleFailed("question not understood")
        n, subject, by = int(m.group(1)), m.group(2), m.group(3)
        wanted = f"{subject[:1].upper()}{subject[1:]} ranked by {by}"
        url = self.find(wanted, lambda u, t: "/rankings/" in u and t == wanted)
        rows = []
        for line in self.page(url).splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 3 and cells[0].isdigit():
                label = _LINK.sub(r"\1", cells[1])
                rc, lc, of = task.required
                rows.append({rc: cells[0], lc: label, of: cells[2]})
        return rows[:n]

    def window(self, task: Task) -> list[dict[str, str]]:
        """Solve a ``window`` task: the quarter's timeline page, then the page of every entity it links.

        Raises:
            OracleFailed: the question is not understood, or the timeline page is not found.
        """
        m = re.search(r"list every (.+?) whose (.+?) falls in Q(\d) (\d{4})", task.question)
        if not m:
            raise OracleFailed("question not understood")
        thing, dcol, q, y = m.groups()
        suffix = f" by {dcol}: Q{q} {y}"
        url = self.find(f"{thing} {dcol} Q{q} {y}", lambda u, t: "archive." in u and t.endswith(suffix))
        links = _LINK.findall(self.page(url))
        label_col = task.unique_columns[0]
        return [self.entity_row(u, task, label_col) for _, u in links]


def solve(env: SearchEnv, task: Task, retries: int = 8) -> OracleRun:
    """Let the oracle answer a task in ``env``; returns its answer, score and steps."""
    oracle = Oracle(env, retries)
    kind = task.extra.get("kind")
    try:
        rows = getattr(oracle, kind)(task) if kind in ("children", "ranking", "window") else []
        failed = None if rows else f"no rows for kind {kind!r}"
    except OracleFailed as exc:
        rows, failed = [], str(exc)
    answer = render_markdown_table(task.required, rows) if rows else "I could not find the answer."
    return OracleRun(answer, score_table(answer, task), oracle.steps, failed)


def oracle_episode(
    world: str,
    task: Task,
    warehouse: str | Path | None = None,
    perturbations: PerturbationConfig | None = None,
    seed: int = 0,
    episode: int = 0,
) -> Episode:
    """Run the oracle on a task in a fresh session and return the episode to record."""
    config = perturbations or PerturbationConfig()
    scenario = task.extra.get("scenario")
    session = f"oracle-{task.instance_id}-{seed}-{episode}"
    env = SearchEnv(world, scenario=scenario, task=task, perturbations=config, seed=seed, warehouse=warehouse, session_id=session, episode=episode)
    run = solve(env, task)
    return Episode(
        episode_id=hashlib.sha1(f"{world}|{session}|{config.model_dump_json()}".encode()).hexdigest()[:16],
        world=world, scenario=scenario, task_id=task.instance_id, question=task.question, seed=seed,
        perturbations_json=config.model_dump_json(), agent="oracle", steps=run.steps, answer=run.answer,
        finished=run.failed is None, f1_by_row=run.score.f1_by_row, f1_by_item=run.score.f1_by_item,
    )


@dataclass(frozen=True)
class OracleSuite:
    """The oracle over every task of a world, clean and perturbed, and the leakage probe.

    Attributes:
        path: the episode store the episodes were recorded in.
        clean: one episode per task without perturbations (seed 1): each must reach F1 = 1.0.
        perturbed: one episode per task under :data:`~worldforge.simenv.perturbations.DEFAULT_MIX`
            (seed = the task's position): each must finish.
        probed: queries about other entities sent by :func:`~worldforge.simenv.env.leakage_probe`.
        leaked: gold cells those queries revealed (must be 0).
    """

    path: Path
    clean: list[Episode]
    perturbed: list[Episode]
    probed: int
    leaked: int

    @property
    def episodes(self) -> list[Episode]:
        """Every episode, clean ones first."""
        return self.clean + self.perturbed

    @property
    def fired(self) -> int:
        """Perturbation decisions that fired over the perturbed episodes."""
        return sum(len(obs.fired) for e in self.perturbed for _, obs in e.steps)

    @property
    def solved(self) -> bool:
        """Every clean episode reached F1 = 1.0 and every perturbed one finished."""
        return all(e.f1_by_item == 1.0 for e in self.clean) and all(e.finished for e in self.perturbed)

    @property
    def leak_free(self) -> bool:
        """The probe ran and no gold cell leaked."""
        return self.leaked == 0 and self.probed > 0


def run_oracle_suite(world: str, warehouse: str | Path | None = None) -> OracleSuite:
    """Run the oracle on every stored task of a world, clean and perturbed, record the episodes
    in the episode store, and probe every task for leakage.

    Raises:
        WarehouseError: the world has no tasks or no corpus yet.
    """
    wh = resolve(warehouse)
    tasks = read_tasks(world_path(wh, world))
    clean = [oracle_episode(world, t, wh, None, seed=1) for t in tasks]
    perturbed = [oracle_episode(world, t, wh, DEFAULT_MIX, seed=i) for i, t in enumerate(tasks)]
    path = record_episodes(wh, clean + perturbed)
    probes = [leakage_probe(SearchEnv(world, t.extra.get("scenario"), t, warehouse=wh, seed=5)) for t in tasks]
    return OracleSuite(path, clean, perturbed, probed=sum(p[1] for p in probes), leaked=sum(p[0] for p in probes))
