"""What every task kind reads and builds: a world's vocabulary, task columns and cells, one finished task.

:class:`TaskContext` holds one world's (or scenario's) tables and corpus as the task kinds
(:mod:`worldforge.tasks.kinds`) read them: how each row and column is called, which pages exist,
the columns of a task (:class:`Column`, reading a :class:`Field`) with the WideSearch evaluation
pipeline of their cell type (:func:`eval_pipeline`), and :meth:`TaskContext.add`, which turns rows,
columns, a question and a plan into a :class:`~worldforge.tasks.io.Task` with its gold table and
provenance.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from worldforge.corpus.generate import slug
from worldforge.corpus.lexicon import plural_noun
from worldforge.corpus.quantity import Style, format_value, render_value
from worldforge.corpus.vocab import ColumnInfo, TableInfo, role_noun, row_labels, table_info
from worldforge.spec import models as M
from worldforge.synth import column_rng
from worldforge.tasks.io import Task, norm_column
from worldforge.tasks.phrasing import Phrasing, capitalized, header_words
from worldforge.tasks.plans import plan_hops

QUESTION_STYLE = Style("mdy_long", "symbol", False)
"""How questions write values: every digit, ``March 5, 2029``, ``$1,099``."""
ATTR_KINDS = ("number", "share", "rank", "date", "category", "bool", "text")
"""The column kinds a task lists as attributes of a row."""


@dataclass(frozen=True)
class Field:
    """Where a task column or a condition reads its value.

    Attributes:
        of: ``row`` (the listed row), ``parent`` (the row's parent through ``ref``), ``ancestor`` (the row reached by
            following a self-reference ``ref`` ``steps`` times up a hierarchy: the line manager's line manager),
            ``base`` (the listed row in the base world, for scenario comparisons) or ``group`` (an aggregate's group).
        table: the table holding the column.
        column: the column identifier, ``@name`` for the row's label, ``@url`` for its encyclopedia page.
        ref: for ``parent``, the reference column of the row's table.
        role: for ``parent``, the part the parent plays when the row's table has several references to its table
            (``White``: :attr:`~worldforge.corpus.vocab.TableInfo.roles`), read from the row's infobox; for
            ``ancestor``, the self-reference's role (``line manager``).
        steps: for ``ancestor``, how many times the self-reference is followed (2: the line manager's line manager).
    """

    of: str
    table: str
    column: str
    ref: str | None = None
    role: str | None = None
    steps: int = 1


@dataclass(frozen=True)
class Column:
    """One task column: its header, its source, its cell type, and an aggregate when it has one."""

    name: str
    field: Field
    ctype: str  # string | number | date | url
    agg: str | None = None  # count | sum | mean | max | min
    exact: bool = False


def eval_pipeline(c: Column) -> dict:
    """The WideSearch ``eval_pipeline`` entry of a column, by its cell type (preprocess, metric, criterion)."""
    if c.ctype == "date":
        return {"preprocess": ["norm_date"], "metric": ["date_near"]}
    if c.ctype == "number":
        return {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.0 if c.exact else 0.01}
    if c.ctype == "url":
        return {"preprocess": [], "metric": ["url_match"]}
    return {"preprocess": ["norm_str"], "metric": ["exact_match"]}


class TaskContext:
    """One world's (or scenario's) tables and corpus as the task kinds read them, and the tasks made so far.

    Built once per :func:`~worldforge.tasks.generate.generate_tasks` call; each kind
    (:mod:`worldforge.tasks.kinds`) asks it how rows and columns are called (its vocabulary), builds
    columns and cells from it, and hands it each finished task (:meth:`add`), in order, from one seeded
    random stream (``rng``), so the same inputs and seed give the same tasks.
    """

    def __init__(self, spec: M.WorldSpec, tables: dict[str, pl.DataFrame], pages: pl.DataFrame, facts: pl.DataFrame,
                 scenario: str | None, seed: int, base: dict[str, pl.DataFrame] | None, base_spec: M.WorldSpec | None):
        self.spec, self.tables, self.scenario = spec, tables, scenario
        self.base, self.base_spec = base, base_spec
        self.rng = column_rng(seed, spec.world, scenario or "", "tasks")
        self.title = spec.title or spec.world.replace("_", " ")
        self.info: dict[str, TableInfo] = {t: table_info(spec, t, tables[t]) for t in spec.tables}
        self.ph = Phrasing(self.rng, self.title)
        self.rows = {t: tables[t].to_dicts() for t in spec.tables}
        self.by_key = {t: {r[spec.tables[t].primary_key]: r for r in self.rows[t]} for t in spec.tables}
        # how every row is called (its name, or its table's designation) and the cells that label states
        self.names = row_labels(spec, tables, self.info)
        # each row's own encyclopedia page: the page under /wiki/<table>/ whose title starts with the row's label
        enc = pages.filter(pl.col("page_type") == "encyclopedia").select("url", "title")
        self.wiki: dict[tuple[str, str], str] = {}
        by_label = {t: {lab.text: str(k) for k, lab in labs.items()} for t, labs in self.names.items()}
        for url, title in enc.iter_rows():
            for t in self.info:
                key = by_label[t].get(title.rsplit(" - ", 1)[0]) if f"/wiki/{slug(t)}/" in url else None
                if key is not None:
                    self.wiki.setdefault((t, key), url)
        # the list pages the corpus has (a table without them gets no task that reads them)
        titles = set(pages["title"].to_list())
        self.has_dataset = {t for t in self.info if any(x.startswith(f"Dataset: {self.info[t].plural} in ") for x in titles)}
        self.titles = titles
        # the base-world columns the scenario's archived datasets state, per table
        arch = facts.filter(pl.col("scope") == "world").join(pages.filter(pl.col("page_type") == "dataset").select("url", "title"), on="url")
        self.archived: dict[str, set[str]] = {}
        for t, c, title in arch.select("table_name", "column_name", "title").unique().iter_rows():
            if t in self.info and title.startswith(f"Archived dataset: {self.info[t].plural} as of "):  # the table's own archive, not
                self.archived.setdefault(t, set()).add(c)  # its rows named as parents in another table's
        self.tasks: list[Task] = []
        self._memo: dict[tuple, list[str]] = {}  # attributes, numbers, categories: asked for again and again by every kind

    # -- the world's vocabulary --------------------------------------------------------------
    def ci(self, t: str, c: str) -> ColumnInfo:
        """How pages present column ``c`` of table ``t``."""
        return self.info[t].columns[c]

    def labelled(self, t: str) -> bool:
        """Rows of ``t`` have their own, distinct labels (a task's unique column): names, or designations."""
        return len({lab.text for lab in self.names[t].values()}) == self.tables[t].height

    def label(self, t: str, row: dict) -> str:
        """How pages call a row of ``t`` (its name, or its designation)."""
        return self.names[t][row[self.spec.tables[t].primary_key]].text

    def label_cells(self, t: str, row: dict) -> list[tuple[str, str, str, None]]:
        """The cells a row's label states ``(table, key, column, None)``."""
        return [(ct, ck, cc, None) for ct, ck, cc, _ in self.names[t][row[self.spec.tables[t].primary_key]].cells]

    def parents(self, t: str) -> list[tuple[str, str]]:
        """``(reference column, parent table)`` of ``t`` whose parent rows have labels and that every row of ``t`` has (an
        optional reference left empty, or a hierarchy's roots, would make rows without a parent: no task walks those)."""
        return [(ref, col.parent) for ref, col in self.spec.tables[t].references.items()
                if self.labelled(col.parent) and col.parent != t and not self.tables[t][ref].null_count()]

    def attributes(self, t: str, kinds: tuple[str, ...] = ATTR_KINDS) -> list[str]:
        """Columns usable as task cells: of those kinds, never null, never an empty string, never compose-only (declared order)."""
        if ("attributes", t, kinds) in self._memo:
            return list(self._memo["attributes", t, kinds])
        frame = self.tables[t]
        # a column headed as the row's own name column or its parent's is no task column ("Medal" of a medal)
        taken = {norm_column(capitalized(self.info[t].noun))}
        taken |= {norm_column(capitalized(self.parent_noun(t, ref, col.parent)[0])) for ref, col in self.spec.tables[t].references.items()}
        out = []
        for c in self.info[t].attributes(kinds):
            if frame[c].null_count() or norm_column(self.header(t, c)) in taken:
                continue
            if frame.schema[c] == pl.String and (frame[c].str.strip_chars() == "").any():
                continue
            out.append(c)
        self._memo["attributes", t, kinds] = out
        return list(out)

    def numbers(self, t: str) -> list[str]:
        """Numeric columns of ``t`` with more than three distinct values (bounds, orders, aggregates)."""
        if ("numbers", t) not in self._memo:
            self._memo["numbers", t] = [c for c in self.attributes(t, ("number", "share")) if self.tables[t][c].n_unique() > 3]
        return list(self._memo["numbers", t])

    def categories(self, t: str) -> list[str]:
        """Category columns of ``t`` with 2-12 values (filters and groups)."""
        if ("categories", t) not in self._memo:
            self._memo["categories", t] = [c for c in self.attributes(t, ("category",)) if 2 <= self.tables[t][c].n_unique() <= 12]
        return list(self._memo["categories", t])

    def event(self, t: str) -> str | None:
        """The dated event of ``t``: the first date column with a verb, else the first date (birth dates excluded)."""
        dates = [c for c in self.attributes(t, ("date",)) if "birth" not in c]
        with_verb = [c for c in dates if self.ci(t, c).event]
        return (with_verb or dates or [None])[0]

    def header(self, t: str, c: str) -> str:
        """The task column header of ``t.c``: its label with its unit."""
        return self.ci(t, c).header()

    def ctype(self, t: str, c: str) -> str:
        """The gold cell type of ``t.c``: ``date``, ``number`` or ``string``."""
        kind = self.ci(t, c).kind
        return "date" if kind == "date" else "number" if kind in ("number", "share", "rank") else "string"

    def words(self, t: str, c: str, value: Any) -> str:
        """A value as the question writes it (``$1,099``, ``March 5, 2029``, ``flagship``)."""
        ci = self.ci(t, c)
        return format_value(value, ci.unit, QUESTION_STYLE) if ci.kind in ("number", "share", "rank", "date", "bool") else str(value)

    # -- columns and cells -------------------------------------------------------------------
    def name_col(self, t: str) -> Column:
        """The task column of a row's label (the unique column)."""
        return Column(capitalized(self.info[t].noun), Field("row", t, "@name"), "string")

    def attr_col(self, t: str, c: str) -> Column:
        """The task column of an attribute of the row."""
        return Column(self.header(t, c), Field("row", t, c), self.ctype(t, c), exact=self.ci(t, c).kind == "rank")

    def role(self, t: str, ref: str) -> str | None:
        """The part ``t``'s parent through ``ref`` plays (``White``), when ``t`` has several references to that table."""
        return self.info[t].roles.get(ref)

    def parent_noun(self, t: str, ref: str, pt: str) -> tuple[str, str]:
        """How a question calls ``t``'s parent through ``ref``: ``(noun, plural)`` (``White player``, ``home team``)."""
        role = self.role(t, ref)
        if role is None:
            return self.info[pt].noun, self.info[pt].plural
        noun = role_noun(role, self.info[pt].noun)
        return noun, plural_noun(noun)

    def section(self, t: str, ref: str) -> str:
        """The heading under which a parent's article lists its rows of ``t`` through ``ref`` (``Games as White``)."""
        return self.info[t].section(ref)

    def parent_col(self, t: str, ref: str, pt: str, c: str = "@name") -> Column:
        """The task column of the row's parent label, or of a parent attribute ``c`` (by the parent's role, if it has one)."""
        noun = self.parent_noun(t, ref, pt)[0]
        name = capitalized(noun) if c == "@name" else f"{capitalized(noun)} {self.ci(pt, c).label}" + (f" ({self.ci(pt, c).unit.header()})" if self.ci(pt, c).unit and self.ci(pt, c).unit.header() else "")
        ctype = "string" if c == "@name" else self.ctype(pt, c)
        return Column(name, Field("parent", pt, c, ref, self.role(t, ref)), ctype, exact=c != "@name" and self.ci(pt, c).kind == "rank")

    def url_col(self, t: str) -> Column:
        """The task column of the row's encyclopedia URL (``url_match``)."""
        return Column("Encyclopedia URL", Field("row", t, "@url"), "url")

    def value(self, t: str, row: dict, f: Field) -> tuple[Any, list[tuple[str, str, str, str | None]]]:
        """A field's value for a row and the cells it is read from ``(table, key, column, scope)``."""
        pk = self.spec.tables[t].primary_key
        if f.of == "parent":
            prow = self.by_key[f.table][row[f.ref]]
            ppk = self.spec.tables[f.table].primary_key
            if f.column == "@name":
                return self.label(f.table, prow), self.label_cells(f.table, prow) + self.label_cells(t, row)
            return prow[f.column], [(f.table, str(prow[ppk]), f.column, None)] + self.label_cells(t, row)
        if f.of == "ancestor":  # up a hierarchy: each step's reference and the label of the row it leads to
            cells, cur = self.label_cells(t, row), row
            for _ in range(f.steps):
                cells.append((t, str(cur[pk]), f.ref, None))
                cur = self.by_key[t][cur[f.ref]]
                cells += self.label_cells(t, cur)
            if f.column == "@name":
                return self.label(t, cur), cells
            return cur[f.column], [(t, str(cur[pk]), f.column, None)] + cells
        if f.of == "base":
            brow = self.base[t].filter(pl.col(pk) == row[pk]).row(0, named=True)
            return brow[f.column], [(t, str(row[pk]), f.column, "world")]
        if f.column == "@url":
            return self.wiki.get((t, str(row[pk])), ""), []
        if f.column == "@name":
            return self.label(t, row), self.label_cells(t, row)
        return row[f.column], [(t, str(row[pk]), f.column, None)]

    # -- one task ------------------------------------------------------------------------------
    def add(self, kind: str, t: str, rows: list[dict], columns: list[Column], question: str, plan: dict,
            unique: list[str] | None = None, gold: list[dict] | None = None, row_cells: list[list] | None = None,
            inputs: list | None = None) -> None:
        """Store a task whose gold rows are ``rows`` of ``t`` read through ``columns`` (or the given ``gold``)."""
        pk = self.spec.tables[t].primary_key
        if gold is None:
            gold, row_cells = [], []
            for r in rows:
                g, cells = {}, []
                for c in columns:
                    v, used = self.value(t, r, c.field)
                    g[norm_column(c.name)] = render_value(v) if c.field.column != "@url" else v
                    cells += used
                gold.append(g)
                row_cells.append(cells)
        names = [c.name for c in columns]
        unique = unique or [names[0]]
        evaluation = {
            "unique_columns": [norm_column(u) for u in unique],
            "required": [norm_column(n) for n in names],
            "eval_pipeline": {norm_column(c.name): eval_pipeline(c) for c in columns},
        }
        iid = f"{self.spec.world}{'_' + self.scenario if self.scenario else ''}_{kind}_{len(self.tasks) + 1:02d}"
        plan = {"table": t, "noun": self.info[t].noun, "plural": self.info[t].plural,
                "columns": [{"name": norm_column(c.name), "field": self.field_plan(c.field), "agg": c.agg, "type": c.ctype} for c in columns],
                **plan}
        cells = sorted({tuple(x) for rc in row_cells for x in rc} | {tuple(x) for x in (inputs or [])}, key=str)
        self.tasks.append(Task(
            instance_id=iid, question=question.strip() + self.ph.requirements(names), evaluation=evaluation, gold=gold, language="en",
            extra={
                "world": self.spec.world, "scenario": self.scenario, "kind": kind, "plan": plan, "hops": plan_hops(plan), "oracle_calls": None,
                "provenance": {"table": t, "row_keys": [str(r[pk]) for r in rows], "cells": [list(c) for c in cells],
                               "rows": [sorted({"|".join((*x[:3], x[3] or "")) for x in rc}) for rc in row_cells]},
            },
        ))

    def field_plan(self, f: Field) -> dict:
        """A field as the oracle reads it from pages: the page's label for the column, its unit and kind."""
        out: dict[str, Any] = {"of": f.of, "table": f.table, "slug": slug(f.table)}
        if f.column.startswith("@"):  # @name, @url, @group, @position
            out["read"] = f.column
        else:
            ci = self.ci(f.table, f.column)
            out.update(read=capitalized(ci.label), unit=ci.unit.text if ci.unit else None, kind=self.ctype(f.table, f.column))
        if f.of in ("parent", "ancestor"):
            out["noun"] = self.info[f.table].noun
            if f.role:
                out["role"] = f.role
        if f.of == "ancestor":
            out["steps"] = f.steps
        return out

    def cond_plan(self, t: str, c: str, op: str, value: Any) -> dict:
        """A condition as the plan states it (dates in ISO form)."""
        v = value.isoformat() if isinstance(value, date) else list(value) if isinstance(value, tuple) else value
        if isinstance(v, list):
            v = [x.isoformat() if isinstance(x, date) else x for x in v]
        return {"field": self.field_plan(Field("row", t, c)), "op": op, "value": v}

    def heads(self, cols: list[Column], det: str = "") -> str:
        """Task columns as words in a sentence, in a varied order (``its price, launch date and segment``)."""
        return self.ph.attrs([header_words(c.name) for c in cols], det)

    def as_of(self) -> str:
        """The world's as-of date as questions write it."""
        return self.words_date(self.spec.as_of_date)

    @staticmethod
    def words_date(d: date) -> str:
        """A date as questions write it (``March 5, 2029``)."""
        return format_value(d, None, QUESTION_STYLE)

    def pick_attrs(self, t: str, k: int, exclude: tuple[str, ...] = ()) -> list[str]:
        """``k`` attributes of ``t`` (numbers first, then dates and categories), in declared order."""
        pool = [c for c in self.attributes(t) if c not in exclude and self.ci(t, c).kind != "text"]
        nums = [c for c in pool if self.ctype(t, c) == "number"]
        picked = self.rng.sample(nums, min(len(nums), max(1, k - 2)))
        rest = [c for c in pool if c not in picked]
        picked += self.rng.sample(rest, min(len(rest), k - len(picked)))
        return [c for c in pool if c in picked]

    def all_rows_inputs(self, t: str, cols: list[str]) -> list:
        """The cells a task reads from every row of ``t``: the label and ``cols`` (filters read all rows)."""
        pk = self.spec.tables[t].primary_key
        return [cell for r in self.rows[t] for cell in self.label_cells(t, r) + [(t, str(r[pk]), c, None) for c in cols]]

