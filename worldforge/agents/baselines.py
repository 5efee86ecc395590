"""Naive search agents, the floor a task's difficulty is measured against.

WideSearch reports how far real agents are from a complete table (item-F1 ≈ 0.3–0.5 for the
best). A generated task is hard in the same way when a shallow strategy fails on it while the
oracle (:mod:`worldforge.agents.oracle`) reaches 1.0. Two shallow strategies, both through the
environment's tools and both reading pages with the oracle's own readers (so they lose only
for lack of strategy, never for lack of parsing):

* ``snippets`` — one ``web_search`` with the question as the query; one answer row per result
  whose title names a row, its cells read from the result's snippet where the snippet states
  them (``<label> ... <value>``);
* ``top3`` — the same search, then ``web_extractor`` on the top three results; rows from every
  Markdown table whose header names the task's columns, and one row from each encyclopedia
  infobox.

Neither follows links, pages through results, resolves clues or computes aggregates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from worldforge.agents.oracle import Oracle, OracleFailed, cell_text, infobox, link, markdown_tables, read
from worldforge.simenv.env import MAX_QUERY_CHARS, SearchEnv
from worldforge.tasks.io import Task
from worldforge.tasks.scorer import Score, render_markdown_table, score_table

__all__ = ["BASELINES", "BaselineRun", "run_baseline"]

BASELINES = ("snippets", "top3")
"""The naive strategies, by name."""

_BLOCK = re.compile(r"^\[(\d+)\] (\S+)\nTitle: (.*)\nSnippet: (.*)$", re.M)


@dataclass(frozen=True)
class BaselineRun:
    """A baseline's answer, its score and the number of tool calls it made."""

    answer: str
    score: Score
    calls: int


def _query(task: Task) -> str:
    return task.question.split("\n\nPlease output")[0].replace("*", "")[:MAX_QUERY_CHARS]


def _title_label(title: str) -> str:
    return re.split(r" - | \| |: ", title)[0].strip()


def _row(task: Task, label: str, values: dict[str, str]) -> dict[str, str]:
    """An answer row: the unique column is the label, every other column read from ``values`` (by page label)."""
    plan = task.extra.get("plan", {})
    out = {}
    for c in plan.get("columns", []):
        f, name = c["field"], c["name"]
        if name in task.unique_columns or f.get("read") == "@name" and f.get("of") == "row":
            out[name] = label
        elif f.get("read") in values:
            try:
                out[name] = cell_text(read(values[f["read"]], f))
            except (TypeError, ValueError):
                out[name] = ""
        else:
            out[name] = ""
    return out


def _snippet_values(task: Task, snippet: str) -> dict[str, str]:
    """``{page label: text}`` for each task column whose label the snippet names, the text after the label."""
    out = {}
    for c in task.extra.get("plan", {}).get("columns", []):
        label = c["field"].get("read", "")
        if label.startswith("@"):
            continue
        m = re.search(rf"{re.escape(label)}\W+(?:\w+\W+){{0,3}}?([$€£]?\d[\d,.]*(?:\s\w+)?|\w+ \d{{1,2}}, \d{{4}})", snippet, re.I)
        if m:
            out[label] = m.group(1)
    return out


def run_baseline(env: SearchEnv, task: Task, strategy: str) -> BaselineRun:
    """Answer ``task`` in ``env`` with a naive strategy (:data:`BASELINES`) and score it.

    Raises:
        ValueError: an unknown strategy.
    """
    if strategy not in BASELINES:
        raise ValueError(f"unknown baseline {strategy!r} (choose from {', '.join(BASELINES)})")
    agent = Oracle(env, retries=1)
    rows: dict[str, dict[str, str]] = {}
    try:
        obs = agent.call("web_search", query=_query(task))
        results = [(m.group(2), m.group(3), m.group(4)) for m in _BLOCK.finditer(obs.text)]
    except OracleFailed:
        results = []
    if strategy == "snippets":
        for _url, title, snippet in results:
            label = _title_label(title)
            rows.setdefault(label, _row(task, label, _snippet_values(task, snippet)))
    else:
        for url, title, _snippet in results[:3]:
            try:
                text = agent.page(url)
            except OracleFailed:
                continue
            if "/wiki/" in url:
                label = _title_label(title)
                rows.setdefault(label, _row(task, label, infobox(text)))
                continue
            for header, body in markdown_tables(text):
                if len(header) < 3:
                    continue
                for r in body:
                    label = link(r[1] if header[0].lower() == "rank" and len(r) > 1 else r[0])[0]
                    values = {h: v for h, v in zip(header, r)}
                    rows.setdefault(label, _row(task, label, values))
    answer = render_markdown_table(task.required, list(rows.values())) if rows else "I could not find the answer."
    return BaselineRun(answer, score_table(answer, task), len(agent.steps))
