"""What a task's plan says about the task itself: how many dependent lookups its answer takes (``hops``).

A plan (``task.extra["plan"]``, :mod:`worldforge.tasks.generate`) says where an answer's rows come from and
where each column is read; the oracle (:mod:`worldforge.simenv.oracle`) executes it. Its *hops* count the
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
    parent those rows hang from must itself be found first (described by clues, ranked, or reached by two chains);
    one when a column is read on each row's parent (a link from the row's article); one when a column is read in
    the base world's archived dataset; one when the answer aggregates rows (per group, or over all of them).

    Args:
        plan: the task's plan (``rows``, ``columns``, optional ``group``/``base``).

    Returns:
        The hop count, at least 1.
    """
    src = plan.get("rows") or {}
    hops = 1
    parent = src.get("parent") or {}
    if any(k in parent for k in _CHAINED_PARENT) or any(k in src for k in _CHAINED_PARENT):
        hops += 1
    fields = [c.get("field") or {} for c in plan.get("columns") or []]
    if any(f.get("of") == "parent" for f in fields):
        hops += 1
    if any(f.get("of") == "base" for f in fields):
        hops += 1
    if "group" in plan or any(c.get("agg") for c in plan.get("columns") or []):
        hops += 1
    return hops
