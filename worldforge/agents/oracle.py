"""A scripted oracle agent: solves generated tasks through the environment's tools alone.

It reads only observations (search results and extracted Markdown pages), never the
tables, so an F1 of 1.0 proves a task is solvable *through the environment*. It executes
the task's plan (``task.extra["plan"]``, :mod:`worldforge.tasks.generate`), which says what
a careful agent would do, in terms of what pages show:

* **rows** — where the listed rows come from: a statistics portal's dataset (search its
  title, open page 1, follow "next page"), the section of a parent's encyclopedia article
  that lists its children (the parent named, or described by clues that are resolved on the
  parent table's dataset first: deep → wide), the archive's timeline pages of some quarters,
  or a ranking page;
* **values** — each column is read where pages state it: a dataset's column, else the
  infobox of the row's encyclopedia article, the parent's article (found through the link in
  the row's lead), or the scenario's archived dataset for base-year values; every value is
  read back with :func:`~worldforge.corpus.quantity.parse_value` (``$1.41 billion``,
  ``5 March 2029``);
* **where / order / limit / group** — conditions, sorting and aggregates computed on the
  values read.

Every failed call (a perturbation) is retried, up to ``retries`` times; paginated search
results are followed; pages are read once per session. The answer is one Markdown table in
the task's column order.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from worldforge.corpus.quantity import parse_unit, parse_value, render_value
from worldforge.corpus.vocab import singular
from worldforge.simenv.env import Observation, SearchEnv, leakage_probe
from worldforge.simenv.perturbations import DEFAULT_MIX, PerturbationConfig
from worldforge.tasks.deep import as_task, grade_response
from worldforge.tasks.io import Task
from worldforge.tasks.scorer import Score, render_markdown_table, score_table
from worldforge.tasks.store import read_tasks, record_oracle_calls
from worldforge.trajectories.episodes import Episode, record_episodes
from worldforge.warehouse.layout import Warehouse

_RESULT = re.compile(r"^\[(\d+)\] (\S+)\nTitle: (.*)$", re.M)
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_NEXT = re.compile(r"\[next page\]\((\S+)\)")
_PREVIOUS = re.compile(r"\[previous page\]\((\S+)\)")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


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


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every Markdown table of a page as ``(header cells, body rows)``; ``\\|`` inside a cell is kept as ``|``."""
    return [(list(header), [list(r) for r in body]) for header, body in _parsed_tables(text)]


@functools.lru_cache(maxsize=4096)
def _parsed_tables(text: str) -> tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...]:
    """:func:`markdown_tables` as immutable tuples, parsed once per page text: the oracle's sessions
    (clean and perturbed, every task of a world) read the same pages again and again."""
    out, block = [], []
    for line in text.splitlines() + [""]:
        if line.lstrip().startswith("|"):
            block.append(tuple(c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(line.strip().strip("|"))))
            continue
        if block:
            rows = [r for r in block if not all(re.fullmatch(r":?-{2,}:?", c) or not c for c in r)]
            if rows:
                out.append((rows[0], tuple(rows[1:])))
            block = []
    return tuple(out)


def link(cell: str) -> tuple[str, str | None]:
    """``[label](url)`` -> ``(label, url)``; plain text -> ``(text, None)``."""
    m = _LINK.fullmatch(cell.strip())
    return (m.group(1).replace("\\|", "|"), m.group(2)) if m else (cell.strip(), None)


def infobox(text: str) -> dict[str, str]:
    """``{key: value}`` of the two-cell rows of a page's tables (an encyclopedia infobox), header row included."""
    return dict(_infobox(text))


@functools.lru_cache(maxsize=4096)
def _infobox(text: str) -> tuple[tuple[str, str], ...]:
    box: dict[str, str] = {}
    for header, rows in _parsed_tables(text):
        for r in (header, *rows):
            if len(r) == 2:
                box.setdefault(r[0], r[1])
    return tuple(box.items())


def read(text: str, fplan: dict) -> Any:
    """A stated cell read back into the column's unit: a number, a ``date``, or the text."""
    kind = fplan.get("kind", "string")
    unit = parse_unit(fplan["unit"]) if fplan.get("unit") else None
    got = parse_value(text, unit, kind if kind in ("number", "date") else "text")
    return got[0] if isinstance(got, tuple) else got


def cell_text(value: Any) -> str:
    """A value as the answer writes it, in the gold tables' canonical form
    (:func:`~worldforge.corpus.quantity.render_value`: ``Mar 05, 2029``, ``1099``, ``6.1``); ``""`` for nothing read."""
    if value is None:
        return ""
    return render_value(round(value, 9) if isinstance(value, float) else value)


@dataclass
class _Row:
    label: str
    url: str | None
    known: dict[str, str] = field(default_factory=dict)  # header -> stated text, from a list page


class Oracle:
    """The scripted agent of one session: executes task plans and keeps every step it takes.

    Args:
        env: the session to act in.
        retries: attempts per tool call before giving up.
    """

    def __init__(self, env: SearchEnv, retries: int = 8):
        self.env, self.retries = env, retries
        self.steps: list[tuple[dict, Observation]] = []
        self.pages: dict[str, str] = {}
        self.world_title: str | None = None

    def call(self, name: str, **arguments) -> Observation:
        """Call a tool until it answers without failing, recording every attempt in :attr:`steps`.

        An error observation, a failed batch query (``this query failed``) and ``No results found`` count as
        failures (perturbations) and are retried.

        Raises:
            OracleFailed: all ``retries`` attempts (at least one) failed.
        """
        seen: Counter[str] = Counter()
        for _ in range(max(1, self.retries)):
            call = {"name": name, "arguments": arguments}
            obs = self.env.step(call)
            self.steps.append((call, obs))
            if not obs.error and "this query failed" not in obs.text and not obs.text.startswith("No results found"):
                return obs
            seen[obs.text[:120]] += 1
        # every distinct answer with its count: a page that 404s on each try reads apart from bad luck with transient errors
        raise OracleFailed(f"{name}({arguments}) kept failing ({sum(seen.values())} tries): "
                           + "; ".join(f"{n}x {text}" for text, n in seen.most_common()))

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

    def find(self, queries: list[str], accept) -> str:
        """The URL of the first result that ``accept(url, title)`` accepts, trying each query in turn.

        Raises:
            OracleFailed: no result of any query fits.
        """
        for query in queries:
            for url, title in self.results(query):
                if accept(url, title):
                    return url
        raise OracleFailed(f"no result of {queries[0]!r} fits")

    def page(self, url: str) -> str:
        """A page's Markdown as ``web_extractor`` returns it (read once per session)."""
        if url not in self.pages:
            self.pages[url] = self.call("web_extractor", url=url).text
        return self.pages[url]

    # -- finding rows ------------------------------------------------------------------------
    def dataset(self, title: str) -> list[_Row]:
        """Every row of a (paginated) dataset whose title starts with ``title``: page 1, then each "next page"."""
        queries = [title, f"{title} page 1"] + ([f"{title}{self.world_title}"] if self.world_title else [])
        try:
            url = self.find(queries, lambda u, t: t.startswith(title) and ("(page " not in t or "(page 1 of" in t))
        except OracleFailed:  # another page of it came up: back to page 1 by its "previous page" links, as a reader goes
            url = self.find(queries, lambda u, t: t.startswith(title))
            seen: set[str] = set()
            while (m := _PREVIOUS.search(self.page(url))) and url not in seen:
                seen.add(url)
                url = m.group(1)
        rows: list[_Row] = []
        seen = set()
        while url and url not in seen:
            seen.add(url)
            text = self.page(url)
            for header, body in markdown_tables(text)[:1]:
                for r in body:
                    label, wiki = link(r[0])
                    rows.append(_Row(label, wiki, dict(zip(header[1:], r[1:]))))
            m = _NEXT.search(text)
            url = m.group(1) if m else None
        return rows

    def article(self, label: str, table_slug: str) -> str:
        """The URL of a row's encyclopedia article, found by searching its label, then its label and what it is
        (``"Lava manufacturer"``: a maker whose models carry its name is outranked by their pages on its name alone)."""
        queries = [label, f"{label} encyclopedia", f"{label} {singular(table_slug.replace('-', '_'))}"]
        try:
            return self.find(queries, lambda u, t: f"/wiki/{table_slug}/" in u and t.startswith(label + " - "))
        except OracleFailed:
            # a designation its children's pages repeat ("Field 1" in "Route 1 of Field 1") is outranked by them: follow
            # the link to it from the first results, as a reader would
            for url, _ in self.results(label)[:3]:
                for lab, u in _LINK.findall(self.page(url)):
                    if lab == label and f"/wiki/{table_slug}/" in u:
                        return u
            raise

    def rows(self, plan: dict) -> list[_Row]:
        """The candidate rows of a plan (``plan['rows']``: dataset, children, timeline or ranking), before conditions.

        Children are listed on their parents' articles: of parents named (``parent``, ``parents``), described by clues
        (``parent.resolve``), or selected by a nested row source (``of``: its rows, ``where``, ``order`` and ``limit``,
        e.g. the top 5 parents of the parent table's dataset, or the children of a named grandparent).

        Raises:
            OracleFailed: a page the source needs is not found, or clues fit no parent or several.
        """
        src = plan["rows"]
        if src["from"] == "dataset":
            return self.dataset(f"Dataset: {plan['plural']} in ")
        if src["from"] == "children" and "parents" in src:  # the children of several named parents
            one = {k: v for k, v in src.items() if k != "parents"}
            return [r for p in src["parents"] for r in self.rows({**plan, "rows": {**one, "parent": p}})]
        if src["from"] == "common":  # the one row every chain's rows link to (two entities that meet)
            return self.common(src, plan)
        if src["from"] == "children" and "of" in src:  # the children of parents the plan selects: every parent of a
            # nested row source that meets its conditions, in its order, the first ``limit`` (a parent without children has none)
            sub = src["of"]
            sub_plan = {**plan, **sub, "table_slug": sub["slug"]}
            parents = [r for r in self.rows(sub_plan) if all(self.holds(r, c, sub_plan) for c in sub.get("where", []))]
            if "order" in sub:
                parents.sort(key=lambda r: self.value(r, sub["order"]["field"], sub_plan), reverse=sub["order"]["desc"])
            out = []
            for p in parents[: sub.get("limit") or None]:
                text = self.page(p.url or self.article(p.label, sub["slug"]))
                m = re.search(rf"^## {re.escape(src['section'])}\n\n((?:- .*\n?)+)", text, re.M)
                out += [_Row(lab, u) for lab, u in _LINK.findall(m.group(1))] if m else []
            return out
        if src["from"] == "children":
            parent = src["parent"]
            if "resolve" in parent:  # deep -> wide: find the one parent the clues describe
                res = parent["resolve"]
                cands = [r for r in self.dataset(f"Dataset: {res['plural']} in ") if all(self.holds(r, c) for c in res["where"])]
                if len(cands) != 1:
                    raise OracleFailed(f"{len(cands)} {res['plural']} fit the clues")
                url = cands[0].url or self.article(cands[0].label, parent["slug"])
            elif "anchor" in parent:  # the anchor's own parent: its siblings
                name = parent["anchor"]
                spec = plan["anchors"][name]
                url = self.parent_link(self.anchor(plan, name), spec["table_slug"], parent["slug"], parent.get("role"))[1]
            elif "common" in parent:  # the parent two chains meet at
                found = self.common({"slug": parent["slug"], "chains": parent["common"]}, plan)
                url = found[0].url or self.article(found[0].label, parent["slug"])
            else:
                url = self.article(parent["label"], parent["slug"])
            text = self.page(url)
            m = re.search(rf"^## {re.escape(src['section'])}\n\n((?:- .*\n?)+)", text, re.M)
            if not m:
                raise OracleFailed(f"no '{src['section']}' section on {url}")
            return [_Row(lab, u) for lab, u in _LINK.findall(m.group(1))]
        if src["from"] == "timeline":
            out = []
            for title in src["titles"]:
                url = self.find([title], lambda u, t, title=title: t == title)
                items = "\n".join(line for line in self.page(url).splitlines() if line.startswith("- ["))  # the list, not the page's chrome
                out += [_Row(lab, u) for lab, u in _LINK.findall(items)]
            return out
        if src["from"] == "ranking":
            url = self.find([src["title"]], lambda u, t: t == src["title"])
            out = []
            for _header, body in markdown_tables(self.page(url))[:1]:
                for r in body:
                    lab, u = link(r[1])
                    out.append(_Row(lab, u))
            return out
        raise OracleFailed(f"unknown row source {src['from']!r}")

    # -- reading values ------------------------------------------------------------------------
    def wiki(self, row: _Row, table_slug: str) -> str:
        """The row's encyclopedia article (searched by its label when no list page linked it)."""
        if row.url is None:
            row.url = self.article(row.label, table_slug)
        return self.page(row.url)

    def value(self, row: _Row, fplan: dict, plan: dict) -> Any:
        """A field of a row (:class:`worldforge.tasks.generate.Field` as planned), read from pages."""
        what = fplan["read"]
        if fplan["of"] == "row":
            if what == "@name":
                return row.label
            if what == "@url":
                self.wiki(row, fplan["slug"])
                return row.url
            if what in row.known:
                return read(row.known[what], fplan)
            box = infobox(self.wiki(row, fplan["slug"]))
            if what not in box:
                raise OracleFailed(f"no '{what}' on {row.url}")
            return read(box[what], fplan)
        if fplan["of"] == "parent":
            plabel, purl = self.parent_link(row, plan["table_slug"], fplan["slug"], fplan.get("role"))
            if what == "@name":
                return plabel
            box = infobox(self.page(purl))
            if what not in box:
                raise OracleFailed(f"no '{what}' on {purl}")
            return read(box[what], fplan)
        if fplan["of"] == "ancestor":  # up a hierarchy: the role's link in each article's infobox, ``steps`` times
            cur = row
            for _ in range(fplan["steps"]):
                cur = _Row(*self.parent_link(cur, fplan["slug"], fplan["slug"], fplan["role"]))
            if what == "@name":
                return cur.label
            box = infobox(self.wiki(cur, fplan["slug"]))
            if what not in box:
                raise OracleFailed(f"no '{what}' on {cur.url}")
            return read(box[what], fplan)
        if fplan["of"] == "base":
            base = self.base_rows(plan)
            if row.label not in base or what not in base[row.label]:
                raise OracleFailed(f"no archived '{what}' of {row.label}")
            return read(base[row.label][what], fplan)
        raise OracleFailed(f"unknown field source {fplan['of']!r}")

    def parent_link(self, row: _Row, table_slug: str, parent_slug: str, role: str | None = None) -> tuple[str, str]:
        """``(label, url)`` of a row's parent: the first link to the parent table's articles in the lead of the row's
        encyclopedia article; for a parent in a ``role`` (a game's White player), the link in the infobox row of
        that role.

        Raises:
            OracleFailed: the lead (or the role's infobox row) links no such article.
        """
        if role:
            cell = infobox(self.wiki(row, table_slug)).get(role[:1].upper() + role[1:])
            plabel, purl = link(cell) if cell else (None, None)
            if purl is None or f"/wiki/{parent_slug}/" not in purl:
                raise OracleFailed(f"no {role} linked from {row.url}")
            return plabel, purl
        lead = self.wiki(row, table_slug).split("\n|", 1)[0]
        found = [(lab, u) for lab, u in _LINK.findall(lead) if f"/wiki/{parent_slug}/" in u]
        if not found:
            raise OracleFailed(f"no {parent_slug} linked from {row.url}")
        return found[0]

    def anchor(self, plan: dict, name: str) -> _Row:
        """The row an anchor of the plan names (``plan["anchors"][name]``): a row named by its ``label``, or the one row
        of its table's dataset that meets its ``where`` (read once per plan).

        Raises:
            OracleFailed: no row, or several, meet the anchor's conditions.
        """
        got = plan.setdefault("_anchors", {})
        if name not in got:
            spec = plan["anchors"][name]
            if "label" in spec:
                got[name] = _Row(spec["label"], None)
            else:
                cands = [r for r in self.dataset(f"Dataset: {spec['plural']} in ") if all(self.holds(r, c, spec) for c in spec["where"])]
                if len(cands) != 1:
                    raise OracleFailed(f"{len(cands)} {spec['plural']} fit the clues of {name!r}")
                got[name] = cands[0]
        return got[name]

    def ranks(self, pool: list[_Row], cond: dict, plan: dict) -> dict[int, int]:
        """``{id(row): rank}`` of every row of ``pool`` in its group (``cond["value"]["group"]``: the row's parent, read
        from the list page's column when it has one, else from the row's article; ``None``: the whole pool) by the
        condition's field, highest first when ``desc``; rows that tie share a rank and the next is skipped."""
        spec = cond["value"]
        g = spec.get("group")
        groups: dict[str, list[tuple[int, Any]]] = {}
        for r in pool:
            if g is None:
                key = ""
            elif g.get("listed") in r.known:
                key = link(r.known[g["listed"]])[0]
            else:
                key = self.value(r, g, plan)
            groups.setdefault(key, []).append((id(r), self.value(r, cond["field"], plan)))
        out = {}
        for members in groups.values():
            for rid, v in members:
                out[rid] = 1 + sum((x > v) if spec["desc"] else (x < v) for _, x in members)
        return out

    def common(self, src: dict, plan: dict) -> list[_Row]:
        """The rows of a parent table that every chain of ``src["chains"]`` reaches: each chain's rows (its table's
        dataset, filtered by its ``where``) and their parents (linked from each row's lead); the parents all chains share.

        Raises:
            OracleFailed: the chains share no parent.
        """
        shared: dict[str, str] | None = None
        for chain in src["chains"]:
            rows = [r for r in self.dataset(f"Dataset: {chain['plural']} in ") if all(self.holds(r, c, chain) for c in chain["where"])]
            links = dict(self.parent_link(r, chain["table_slug"], src["slug"], chain.get("role")) for r in rows)
            shared = links if shared is None else {k: v for k, v in shared.items() if k in links}
        if not shared:
            raise OracleFailed("the chains share no row")
        return [_Row(label, url) for label, url in sorted(shared.items())]

    def base_rows(self, plan: dict) -> dict[str, dict[str, str]]:
        """``{label: {header: text}}`` of the scenario's archived dataset of the base year (read once per plan)."""
        if "_base" not in plan:
            plan["_base"] = {r.label: r.known for r in self.dataset(plan["base"]["title"])}
        return plan["_base"]

    def holds(self, row: _Row, cond: dict, plan: dict | None = None) -> bool:
        """Whether a row meets a planned condition (``>=``, ``<=``, ``>``, ``<``, ``in``, ``not_in``, ``between`` or
        equality) on values read from pages (``plan``: the task's, where the condition reads a parent's field). The value
        compared with is the condition's, or, when it is ``{"anchor": name, "field": ...}``, that field of the plan's
        anchor row (:meth:`anchor`)."""
        plan = plan or {}
        if cond["op"] == "rank":  # ranks computed over the plan's rows (:meth:`ranks`)
            return cond["_ranks"].get(id(row)) == cond["value"]["position"]
        v, op, want = self.value(row, cond["field"], plan), cond["op"], cond["value"]
        if isinstance(want, dict) and "anchor" in want:
            spec = plan["anchors"][want["anchor"]]
            want = self.value(self.anchor(plan, want["anchor"]), want["field"], spec)
        elif cond["field"].get("kind") == "date":
            want = [date.fromisoformat(w) for w in want] if isinstance(want, list) else date.fromisoformat(want)
        if op == ">=":
            return v >= want
        if op == "<=":
            return v <= want
        if op == ">":
            return v > want
        if op == "<":
            return v < want
        if op == "in":
            return str(v) in [str(w) for w in want]
        if op == "not_in":
            return str(v) not in [str(w) for w in want]
        if op == "between":
            return want[0] <= v <= want[1]
        return v == want

    # -- the plan ----------------------------------------------------------------------------------
    def solve(self, task: Task) -> list[dict[str, str]]:
        """Execute a task's plan: rows, conditions, order and limit or groups, then each column's value.

        Raises:
            OracleFailed: the task has no plan, or a page the plan needs is missing.
        """
        plan = dict(task.extra.get("plan") or {})
        if not plan:
            raise OracleFailed("the task has no plan")
        named = re.search(r"\*([^*\n]+)\*", task.question)  # the world's title, as every question names it: a search term too
        self.world_title = named.group(1) if named else None
        plan["table_slug"] = plan.get("table_slug") or plan["columns"][0]["field"]["slug"]  # a deep question's one column may be a parent's
        pool = self.rows(plan)
        for cond in plan.get("where", []):
            if cond["op"] == "rank":  # a rank in a group is read over the whole pool before any row is dropped
                cond["_ranks"] = self.ranks(pool, cond, plan)
        rows = [r for r in pool if all(self.holds(r, c, plan) for c in plan.get("where", []))]
        cols = plan["columns"]
        if "group" in plan or any(c["agg"] for c in cols):  # aggregates per group, or over every row when there is no group
            groups: dict[str, list[_Row]] = {}
            for r in rows:
                groups.setdefault(cell_text(self.value(r, plan["group"], plan)) if "group" in plan else "", []).append(r)
            out = []
            for g in sorted(groups):
                rec = {}
                for c in cols:
                    if c["agg"] is None:
                        rec[c["name"]] = g
                    elif c["agg"] == "count":
                        rec[c["name"]] = str(len(groups[g]))
                    else:
                        vals = [float(self.value(r, c["field"], plan)) for r in groups[g]]
                        total = math.fsum(vals)  # as the gold's: exactly rounded, independent of the order rows were read in
                        agg = {"sum": round(total, 2), "mean": round(total / len(vals), 2), "max": max(vals), "min": min(vals)}[c["agg"]]
                        rec[c["name"]] = cell_text(agg)
                out.append(rec)
            return out
        if "order" in plan:
            rows.sort(key=lambda r: self.value(r, plan["order"]["field"], plan), reverse=plan["order"]["desc"])
        if plan.get("limit"):
            rows = rows[: plan["limit"]]
        out = []
        for i, r in enumerate(rows, 1):
            out.append({c["name"]: str(i) if c["field"]["read"] == "@position" else cell_text(self.value(r, c["field"], plan)) for c in cols})
        return out


def solve(env: SearchEnv, task: Task, retries: int = 8) -> OracleRun:
    """Let the oracle answer a task in ``env``; returns its answer, score and steps."""
    oracle = Oracle(env, retries)
    try:
        rows = oracle.solve(task)
        failed = None if rows else "no rows"
    except OracleFailed as exc:
        rows, failed = [], str(exc)
    answer = render_markdown_table(task.required, rows) if rows else "I could not find the answer."
    return OracleRun(answer, score_table(answer, task), oracle.steps, failed)


@dataclass
class DeepRun:
    """The oracle's answer to a deep question: its BrowseComp-format response, the grade, its steps, why it failed (or ``None``)."""

    response: str
    grade: Any
    steps: list[tuple[dict, Observation]]
    failed: str | None = None


def answer_deep(env: SearchEnv, question: Any, retries: int = 8) -> DeepRun:
    """Let the oracle answer a deep question (:class:`~worldforge.tasks.deep.DeepQuestion`) in ``env`` through its tools
    alone: it executes the question's plan (one row, one column) and answers in BrowseComp's format, citing the pages
    it read; the response is graded by :func:`~worldforge.tasks.deep.grade_response` (normalised exact match)."""
    oracle = Oracle(env, retries)
    try:
        rows = oracle.solve(as_task(question))
        answer = next(iter(rows[0].values()), "") if len(rows) == 1 else ""
        failed = None if answer else f"{len(rows)} rows answer the plan, not one"
    except OracleFailed as exc:
        answer, failed = "", str(exc)
    read = list(oracle.pages)
    explanation = (f"Followed the clues through {len(read)} page(s): " + ", ".join(read[:6]) + (" ..." if len(read) > 6 else "")) if read else "No page fitted."
    response = f"Explanation: {explanation}\nExact Answer: {answer or 'unknown'}\nConfidence: {100 if answer else 0}%"
    return DeepRun(response, grade_response(response, question), oracle.steps, failed)


def oracle_episode(
    world: str,
    task: Task,
    warehouse: Warehouse,
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
        path: the episode store the episodes were recorded in (its folder).
        clean: one episode per task without perturbations (seed 1): each must reach F1 = 1.0.
        perturbed: one episode per task under :data:`~worldforge.simenv.perturbations.DEFAULT_MIX`
            (seed = the task's position): each must finish.
        probed: queries about other entities sent by :func:`~worldforge.simenv.env.leakage_probe`.
        leaked: gold cells those queries revealed (must be 0).
        deep: the deep questions answered through the tools, without perturbations (seed 1).
        deep_wrong: ``question_id -> the oracle's exact answer (or why it found none)`` for each it got wrong (must be empty).
        scenario_below: ``instance_id -> item-F1`` of the scenarios' tasks the oracle did not solve in a clean session
            (must be empty; run for their tool calls, not recorded as episodes).
    """

    path: Path
    clean: list[Episode]
    perturbed: list[Episode]
    probed: int
    leaked: int
    deep: int = 0
    scenario_below: dict[str, float] = field(default_factory=dict)
    deep_wrong: dict[str, str] = field(default_factory=dict)

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
        return all(e.f1_by_item == 1.0 for e in self.clean) and all(e.finished for e in self.perturbed) and not self.scenario_below

    @property
    def leak_free(self) -> bool:
        """The probe ran and no gold cell leaked."""
        return self.leaked == 0 and self.probed > 0


def run_oracle_suite(world: str, warehouse: Warehouse) -> OracleSuite:
    """Run the oracle on every stored task of a world, clean and perturbed, record the episodes
    in the episode store (``WAREHOUSE/episodes/<world>/``, a new part), probe every task for leakage, and store
    each task's and deep question's tool calls in a clean session on its record (``oracle_calls``,
    :func:`~worldforge.tasks.store.record_oracle_calls`).

    Raises:
        WarehouseError: the world has no tasks or no corpus yet.
    """
    every = read_tasks(warehouse.world(world), all_scenarios=True)
    tasks = [t for t in every if t.extra.get("scenario") is None]
    clean = [oracle_episode(world, t, warehouse, None, seed=1) for t in tasks]
    perturbed = [oracle_episode(world, t, warehouse, DEFAULT_MIX, seed=i) for i, t in enumerate(tasks)]
    path = record_episodes(warehouse, clean + perturbed)
    probes = [leakage_probe(SearchEnv(world, t.extra.get("scenario"), t, warehouse=warehouse, seed=5)) for t in tasks]
    deep_wrong, deep_calls = {}, {}
    questions = _stored_deep(warehouse.world(world))
    for q in questions:
        run = answer_deep(SearchEnv(world, q.scenario, as_task(q), warehouse=warehouse, seed=1), q)
        deep_calls[q.question_id] = len(run.steps)
        if not run.grade.correct:
            deep_wrong[q.question_id] = run.failed or f"answered {run.grade.extracted!r}, the answer is {q.answer!r}"
    # each task's cost for a curriculum: the tool calls of its clean episode, stored on its record; the scenarios' tasks
    # are solved once, clean, for theirs (and must reach F1 1.0 too)
    calls = {e.task_id: len(e.steps) for e in clean}
    scenario_below = {}
    for t in every:
        if t.extra.get("scenario") is None:
            continue
        run = solve(SearchEnv(world, t.extra["scenario"], t, warehouse=warehouse, seed=1), t)
        calls[t.instance_id] = len(run.steps)
        if run.score.f1_by_item != 1.0:
            scenario_below[t.instance_id] = run.score.f1_by_item or 0.0
    record_oracle_calls(warehouse.world(world), calls, deep_calls)
    return OracleSuite(path, clean, perturbed, probed=sum(p[1] for p in probes), leaked=sum(p[0] for p in probes),
                       deep=len(questions), deep_wrong=deep_wrong, scenario_below=scenario_below)


def _stored_deep(path: Path) -> list:
    """The world file's deep questions; none for a file built before they existed (its tasks not rebuilt since)."""
    from worldforge.errors import WarehouseError
    from worldforge.tasks.deep import read_deep_questions

    try:
        return read_deep_questions(path, all_scenarios=True)
    except WarehouseError:
        return []
