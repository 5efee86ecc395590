"""WideSearch-style table-aggregation tasks generated from a world, as wide and deep as the real ones.

What every kind reads and builds is :class:`~worldforge.tasks.context.TaskContext`; each kind is a
function of :mod:`worldforge.tasks.kinds`; this module runs them and checks that a task is solvable.

Each task is a natural-language question, a gold table computed from the world's tables, an
``evaluation`` in the WideSearch shape (``unique_columns``, ``required``, per-column
``preprocess``/``metric``/``criterion``), a *plan* (``extra["plan"]``: how the answer follows from
what pages say, which the oracle agent executes through the environment) and a *provenance*
(the table cells every gold row is computed from). Twelve kinds:

============== =====================================================================================
kind           the question asks for
============== =====================================================================================
lookup         every child of one parent (or every row of a small table) with 5-8 attributes
filter         the rows that meet 1-3 conditions on their attributes (numeric bounds, categories)
join           rows in a date range with their parent and the parent's attributes
aggregate      per group (a parent or a category): count, total, average and maximum of an attribute
top_k          the k rows with the highest (or lowest) value of an attribute, optionally in a category
ranking        the top of a rank column, as the ranking sites publish it
window         the rows whose event falls in a span of one or two quarters
deep_wide      every child of a parent that the question describes only by clues (DeepWideSearch):
               the clues must be resolved first, then the wide table compiled
parent_filter  the rows of a child table whose parent meets a condition (every model of the brands whose
               market share is at least 5%), with the parent and the parent's value: two tables
top_parents    every child of the k parents with the highest (or lowest) value of a parent attribute (every
               player of the 5 teams with the most points): the parents are ranked first, then listed
nested         every grandchild of one to three named grandparents (every player of the teams of a league),
               with the middle row, its rows screened by a condition when there are too many: three tables
scenario_diff  (scenarios) how attributes changed between the base world and the time-shifted scenario
============== =====================================================================================

How many tasks of each kind follows the world (:func:`~worldforge.tasks.kinds.supported`: three per table,
family or chain the kind can vary over, 4-6 a kind), so a world of a few tables still gets 30 or more; a kind stops
earlier when it would repeat a selection of rows. Cross-table kinds keep gold tables at 15-60 rows.

Task columns are named as people name them: the column's label with its unit (``Launch price
(USD)``, :mod:`worldforge.corpus.vocab`), never its identifier. Gold cells are canonical
(:func:`~worldforge.corpus.quantity.render_value`: ``Mar 05, 2029``, ``1099``); computed cells
(averages, totals) are rounded to two decimals. The evaluation pipeline follows the cell type:
strings ``norm_str`` + ``exact_match``, numbers ``extract_number`` + ``number_near`` (1% relative
tolerance; exact for ranks, positions and counts), dates ``norm_date`` + ``date_near``, URLs
``url_match``. :func:`check_solvable` proves through ``corpus_facts`` that every cell a task needs
is stated by some page of its corpus and that every gold row needs a cell no lead states (so no
search snippet gives a row away).
"""

from __future__ import annotations

import polars as pl

from worldforge.spec import models as M
from worldforge.tasks.context import TaskContext
from worldforge.tasks.io import Task
from worldforge.tasks.kinds import KIND_MAKERS, supported

__all__ = ["KINDS", "CorpusCells", "check_solvable", "generate_tasks"]

KINDS = ("lookup", "filter", "join", "aggregate", "top_k", "ranking", "window", "deep_wide", "parent_filter", "top_parents",
         "nested", "scenario_diff")
"""Task kinds, in generation order (each one's function: :data:`worldforge.tasks.kinds.KIND_MAKERS`)."""


def generate_tasks(
    spec: M.WorldSpec,
    tables: dict[str, pl.DataFrame],
    pages: pl.DataFrame,
    facts: pl.DataFrame,
    scenario: str | None = None,
    seed: int | None = None,
    per_kind: int | None = None,
    base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None,
) -> list[Task]:
    """Tasks from a world's tables, whose answers its corpus states.

    Args:
        spec: the spec the tables satisfy.
        tables: the world's (or scenario's) tables.
        pages, facts: its corpus (``read_corpus``: encyclopedia URLs, archived columns).
        scenario: the scenario the tables belong to (enters ids).
        seed: default the spec's seed; the same inputs and seed give the same tasks.
        per_kind: at most this many tasks per kind; default: as many as the world supports
            (:func:`~worldforge.tasks.kinds.supported`, 2-6 a kind).
        base: for a scenario, the base world's ``(spec, tables)`` (``scenario_diff`` tasks).

    Returns:
        Tasks with ``extra`` = ``{world, scenario, kind, plan, provenance}``.
    """
    ctx = TaskContext(spec, tables, pages, facts, scenario, spec.seed if seed is None else seed,
                      base[1] if base else None, base[0] if base else None)
    for kind in KINDS:  # a scenario repeats its world's kinds less often; its own kind is scenario_diff
        limit = supported(ctx, kind) if per_kind is None else per_kind
        KIND_MAKERS[kind](ctx, limit if scenario is None or kind == "scenario_diff" else max(1, limit // 2))
    return ctx.tasks


class CorpusCells:
    """What :func:`check_solvable` looks up in one corpus, built once for all of its tasks.

    Attributes:
        urls: the corpus's page URLs.
        sections: ``{(table, row key, column, scope or ""): {sections stating it}}`` from ``corpus_facts``.
    """

    __slots__ = ("sections", "urls")

    def __init__(self, pages: pl.DataFrame, facts: pl.DataFrame) -> None:
        self.urls: set[str] = set(pages["url"].to_list())
        grouped = (
            facts.lazy()
            .select("table_name", "row_key", "column_name", pl.col("scope").fill_null(""), "section")
            .group_by("table_name", "row_key", "column_name", "scope")
            .agg(pl.col("section").unique())
            .collect()
        )
        self.sections: dict[tuple[str, str, str, str], set[str]] = {
            (t, k, c, s): set(secs) for t, k, c, s, secs in grouped.iter_rows()
        }


def check_solvable(task: Task, pages: pl.DataFrame, facts: pl.DataFrame, cells: CorpusCells | None = None) -> list[str]:
    """Why a task cannot be solved inside its corpus (empty list: solvable).

    Every cell the task is computed from (``provenance.cells``: ``[table, row key, column, scope]``)
    must be stated by at least one page (``corpus_facts``, same scope), every URL cell must be a page
    of the corpus, and every gold row must be computed from at least one cell that is stated only in
    page bodies, never in a lead (from which snippets are cut).

    ``cells``: ``CorpusCells(pages, facts)`` when many tasks of one corpus are checked (built here otherwise).
    """
    prov = task.extra["provenance"]
    if cells is None:
        cells = CorpusCells(pages, facts)
    urls, sections = cells.urls, cells.sections
    problems = []
    for t, k, c, s in prov["cells"]:
        if (t, k, c, s or "") not in sections:
            problems.append(f"row {k}: no page states {t}.{c}" + (f" (scope {s})" if s else ""))
    url_cols = [name for name, p in task.evaluation["eval_pipeline"].items() if "url_match" in p["metric"]]
    for i, gold in enumerate(task.gold):
        for name in url_cols:
            if gold.get(name) not in urls:
                problems.append(f"row {i + 1}: URL {gold.get(name)!r} is not a page of the corpus")
        cells = [tuple(x.split("|")) for x in prov["rows"][i]]
        if cells and not any(sections.get(x) == {"body"} for x in cells):
            problems.append(f"row {i + 1}: every required cell is stated in some lead (a snippet could reveal it)")
    return problems
