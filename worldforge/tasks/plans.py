"""What a task's plan says about the task itself: how many dependent lookups its answer takes (``hops``).

A plan (``task.extra["plan"]``, :mod:`worldforge.tasks.generate`) says where an answer's rows come from and
where each column is read; the oracle (:mod:`worldforge.agents.oracle`) executes it. Its *hops* count the
lookups that each need the result of an earlier one, as the deep questions' hops do
(:mod:`worldforge.tasks.deep`), so wide tasks and deep questions can be ranked on one scale for a curriculum.
"""

from __future__ import annotations

__all__ = ["plan_hops"]

_CHAINED_PARENT = ("resolve", "anchor", "common", "top")
"""Ways a plan's parent is found by a lookup of its own before its article is read (clues, a named row, two chains,
a ranking of parents)."""


def plan_hops(plan: dict) -> int:
    """The dependent lookups of a wide task's plan (1-5).

    One for the listed rows (a dataset, a parent's article, the timeline pages, a ranking page); one more when the
    parent those rows hang from must itself be found first (described by clues, reached by two chains), and as many
    as finding them takes when the parents are the rows of a source of their own (``of``: the top 5 parents of a
    dataset, the children of a named grandparent);
    one when a column is read on each row's parent (a link from the row's article); one when a column is read in
    the base world's archived dataset; one when the answer aggregates rows (per group, or over all of them).

    Args:
        plan: the task's plan (``rows``, ``columns``, optional ``group``/``base``).

    Returns:
        The hop count, at least 1.
    """
    hops = _source_hops(plan.get("rows") or {})
    fields = [c.get("field") or {} for c in plan.get("columns") or []]
    if any(f.get("of") == "parent" for f in fields):
        hops += 1
    hops += max((f.get("steps", 1) for f in fields if f.get("of") == "ancestor"), default=0)
    if any(f.get("of") == "base" for f in fields):
        hops += 1
    if "group" in plan or any(c.get("agg") for c in plan.get("columns") or []):
        hops += 1
    return hops


def _source_hops(src: dict) -> int:
    """The lookups of a row source: one, one more for a parent found first, plus a nested source's own (``of``)."""
    hops = 1
    parent = src.get("parent") or {}
    if any(k in parent for k in _CHAINED_PARENT) or any(k in src for k in _CHAINED_PARENT):
        hops += 1
    if isinstance(src.get("of"), dict):
        hops += _source_hops(src["of"].get("rows") or {})
    return hops
