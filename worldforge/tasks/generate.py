"""WideSearch-style table-aggregation tasks generated from a world, as wide and deep as the real ones.

Each task is a natural-language question, a gold table computed from the world's tables, an
``evaluation`` in the WideSearch shape (``unique_columns``, ``required``, per-column
``preprocess``/``metric``/``criterion``), a *plan* (``extra["plan"]``: how the answer follows from
what pages say, which the oracle agent executes through the environment) and a *provenance*
(the table cells every gold row is computed from). Nine kinds:

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
scenario_diff  (scenarios) how attributes changed between the base world and the time-shifted scenario
============== =====================================================================================

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

import math
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

import polars as pl

from worldforge.corpus.pages import slug
from worldforge.corpus.quantity import Style, format_value, render_value
from worldforge.corpus.vocab import ColumnInfo, TableInfo, row_labels, table_info
from worldforge.spec import models as M
from worldforge.synth import column_rng
from worldforge.tasks.io import Task, norm_column
from worldforge.tasks.phrasing import Phrasing, join_words

__all__ = ["KINDS", "CorpusCells", "check_solvable", "generate_tasks"]

KINDS = ("lookup", "filter", "join", "aggregate", "top_k", "ranking", "window", "deep_wide", "scenario_diff")
"""Task kinds, in generation order."""

_STYLE = Style("mdy_long", "symbol", False)  # how questions write values: every digit, "March 5, 2029", "$1,099"
_ATTR_KINDS = ("number", "share", "rank", "date", "category", "bool", "text")


@dataclass(frozen=True)
class Field:
    """Where a task column or a condition reads its value.

    Attributes:
        of: ``row`` (the listed row), ``parent`` (the row's parent through ``ref``), ``base`` (the listed row in
            the base world, for scenario comparisons) or ``group`` (an aggregate's group).
        table: the table holding the column.
        column: the column identifier, ``@name`` for the row's label, ``@url`` for its encyclopedia page.
        ref: for ``parent``, the reference column of the row's table.
    """

    of: str
    table: str
    column: str
    ref: str | None = None


@dataclass(frozen=True)
class Column:
    """One task column: its header, its source, its cell type, and an aggregate when it has one."""

    name: str
    field: Field
    ctype: str  # string | number | date | url
    agg: str | None = None  # count | sum | mean | max | min
    exact: bool = False


def _pipeline(c: Column) -> dict:
    if c.ctype == "date":
        return {"preprocess": ["norm_date"], "metric": ["date_near"]}
    if c.ctype == "number":
        return {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.0 if c.exact else 0.01}
    if c.ctype == "url":
        return {"preprocess": [], "metric": ["url_match"]}
    return {"preprocess": ["norm_str"], "metric": ["exact_match"]}


def _nice(x: float) -> float:
    """``x`` rounded to two significant digits (thresholds people write: 430, 4,900, 0.15)."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    step = 10 ** (math.floor(math.log10(abs(x))) - 1)
    return round(round(x / step) * step, 10)


def _round2(x: float) -> float:
    return round(x + 0.0, 2)


def _an(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


class _Gen:
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
        arch = facts.filter(pl.col("scope") == "world").join(pages.filter(pl.col("page_type") == "dataset").select("url"), on="url")
        self.archived: dict[str, set[str]] = {}
        for t, c in arch.select("table_name", "column_name").unique().iter_rows():
            self.archived.setdefault(t, set()).add(c)
        self.tasks: list[Task] = []

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
        """``(reference column, parent table)`` of ``t`` whose parent rows have labels."""
        return [(ref, col.parent) for ref, col in self.spec.tables[t].references.items() if self.labelled(col.parent)]

    def attributes(self, t: str, kinds: tuple[str, ...] = _ATTR_KINDS) -> list[str]:
        """Columns usable as task cells: of those kinds, never null, never an empty string, never compose-only (declared order)."""
        frame = self.tables[t]
        out = []
        for c in self.info[t].attributes(kinds):
            if frame[c].null_count():
                continue
            if frame.schema[c] == pl.String and (frame[c].str.strip_chars() == "").any():
                continue
            out.append(c)
        return out

    def numbers(self, t: str) -> list[str]:
        """Numeric columns of ``t`` with more than three distinct values (bounds, orders, aggregates)."""
        return [c for c in self.attributes(t, ("number", "share")) if self.tables[t][c].n_unique() > 3]

    def categories(self, t: str) -> list[str]:
        """Category columns of ``t`` with 2-12 values (filters and groups)."""
        return [c for c in self.attributes(t, ("category",)) if 2 <= self.tables[t][c].n_unique() <= 12]

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
        return format_value(value, ci.unit, _STYLE) if ci.kind in ("number", "share", "rank", "date", "bool") else str(value)

    # -- columns and cells -------------------------------------------------------------------
    def name_col(self, t: str) -> Column:
        """The task column of a row's label (the unique column)."""
        return Column(_cap(self.info[t].noun), Field("row", t, "@name"), "string")

    def attr_col(self, t: str, c: str) -> Column:
        """The task column of an attribute of the row."""
        return Column(self.header(t, c), Field("row", t, c), self.ctype(t, c), exact=self.ci(t, c).kind == "rank")

    def parent_col(self, t: str, ref: str, pt: str, c: str = "@name") -> Column:
        """The task column of the row's parent label, or of a parent attribute ``c``."""
        noun = self.info[pt].noun
        name = _cap(noun) if c == "@name" else f"{_cap(noun)} {self.ci(pt, c).label}" + (f" ({self.ci(pt, c).unit.header()})" if self.ci(pt, c).unit and self.ci(pt, c).unit.header() else "")
        ctype = "string" if c == "@name" else self.ctype(pt, c)
        return Column(name, Field("parent", pt, c, ref), ctype, exact=c != "@name" and self.ci(pt, c).kind == "rank")

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
            "eval_pipeline": {norm_column(c.name): _pipeline(c) for c in columns},
        }
        iid = f"{self.spec.world}{'_' + self.scenario if self.scenario else ''}_{kind}_{len(self.tasks) + 1:02d}"
        plan = {"table": t, "noun": self.info[t].noun, "plural": self.info[t].plural,
                "columns": [{"name": norm_column(c.name), "field": self.field_plan(c.field), "agg": c.agg, "type": c.ctype} for c in columns],
                **plan}
        cells = sorted({tuple(x) for rc in row_cells for x in rc} | {tuple(x) for x in (inputs or [])}, key=str)
        self.tasks.append(Task(
            instance_id=iid, question=question.strip() + self.ph.requirements(names), evaluation=evaluation, gold=gold, language="en",
            extra={
                "world": self.spec.world, "scenario": self.scenario, "kind": kind, "plan": plan,
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
            out.update(read=_cap(ci.label), unit=ci.unit.text if ci.unit else None, kind=self.ctype(f.table, f.column))
        if f.of == "parent":
            out["noun"] = self.info[f.table].noun
        return out

    def cond_plan(self, t: str, c: str, op: str, value: Any) -> dict:
        """A condition as the plan states it (dates in ISO form)."""
        v = value.isoformat() if isinstance(value, date) else list(value) if isinstance(value, tuple) else value
        if isinstance(v, list):
            v = [x.isoformat() if isinstance(x, date) else x for x in v]
        return {"field": self.field_plan(Field("row", t, c)), "op": op, "value": v}

    def heads(self, cols: list[Column], det: str = "") -> str:
        """Task columns as words in a sentence, in a varied order (``its price, launch date and segment``)."""
        return self.ph.attrs([_prose(c.name) for c in cols], det)

    def as_of(self) -> str:
        """The world's as-of date as questions write it."""
        return self.words_date(self.spec.as_of_date)

    @staticmethod
    def words_date(d: date) -> str:
        """A date as questions write it (``March 5, 2029``)."""
        return format_value(d, None, _STYLE)

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

    # -- kinds ---------------------------------------------------------------------------------
    def lookup(self, limit: int) -> None:
        """Every child of one parent (the largest families first), or every row of a small top-level table; 5-8 columns."""
        families = []
        for t in self._labelled_tables():
            for ref, pt in self.parents(t)[:1]:
                families += [(-n, t, key, ref, pt) for key, n in self.tables[t].group_by(ref).len().rows() if n >= 5]
        small = [t for t in self._labelled_tables() if not self.parents(t) and self.tables[t].height <= 40 and t in self.has_dataset]
        made = 0
        for t in small[:1]:
            attrs = self.pick_attrs(t, self.rng.randint(4, 6))
            if len(attrs) >= 3:
                info = self.info[t]
                cols = [self.name_col(t)] + [self.attr_col(t, a) for a in attrs] + [self.url_col(t)]
                rows = sorted(self.rows[t], key=lambda r: self.label(t, r))
                n, w = len(rows), self.ph.world
                q = self.ph.preface() + self.ph.pick([
                    f"{self.ph.request()} a table of all {n} {info.plural} in {w} with {self.heads(cols[1:-1], 'their')}, and the URL of each one's encyclopedia article.",
                    f"How do the {n} {info.plural} of {w} compare? For every one of them, give {self.heads(cols[1:-1], 'the')}, and link its encyclopedia article.",
                    f"List each of the {n} {info.plural} in {w} with {self.heads(cols[1:-1], 'its')}; add the URL of its encyclopedia article as the last column.",
                    f"There are {n} {info.plural} in {w}. For each one I need {self.heads(cols[1:-1], 'the')}, plus the address of its encyclopedia article.",
                ])
                self.add("lookup", t, rows, cols, q, {"rows": {"from": "dataset"}})
                made += 1
        fams = sorted(families, key=lambda x: (x[0], x[1], str(x[2])))
        used: set = set()
        for i, (n, t, key, ref, pt) in enumerate(fams):
            if made >= limit or (t, key) in used:
                continue
            keys = [key]
            if -n < 15:  # a small family: ask for two parents' children at once, as wide tasks do
                other = next((f for f in fams[i + 1:] if f[1] == t and (t, f[2]) not in used), None)
                if other is not None:
                    keys.append(other[2])
            used.update((t, k) for k in keys)
            attrs = self.pick_attrs(t, self.rng.randint(4, 6))
            if len(attrs) < 3:
                continue
            info = self.info[t]
            cols = [self.name_col(t)] + [self.attr_col(t, a) for a in attrs] + [self.url_col(t)]
            if len(keys) > 1:
                cols.insert(1, self.parent_col(t, ref, pt))
            plabels = [self.names[pt][k].text for k in keys]
            rows = sorted((r for r in self.rows[t] if r[ref] in keys), key=lambda r: self.label(t, r))
            who = join_words(plabels)
            pdesc = f"two {self.info[pt].plural}" if len(keys) > 1 else _an(self.info[pt].noun)
            w, many = self.ph.world, len(keys) > 1
            q = self.ph.preface() + self.ph.pick([
                f"{self.ph.request()} a complete list of the {info.plural} of {who} ({pdesc}) in {w}, as of {self.as_of()}. "
                f"For each {info.noun}, give {self.heads(cols[1:-1], 'its')}, and the URL of its encyclopedia article.",
                f"What {info.plural} {'do' if many else 'does'} {who} have in {w}? List every one with {self.heads(cols[1:-1], 'its')}, and link its encyclopedia article.",
                f"List all {info.plural} of {who} in {w}. The columns I need: {self.heads(cols[1:-1])}, plus the URL of the {info.noun}'s encyclopedia article.",
                f"{who} {'are' if many else 'is'} {pdesc} in {w}. Which {info.plural} belong to {'them' if many else 'it'}? "
                f"Give {self.heads(cols[1:-1], 'the')} of each, with the URL of its encyclopedia page.",
                f"Every {info.noun} of {who} in {w}, please, with {self.heads(cols[1:-1], 'its')}, plus a link to its encyclopedia article.",
            ])
            plan = {"rows": {"from": "children", "parents": [{"slug": slug(pt), "label": x} for x in plabels], "section": _cap(info.plural)}}
            self.add("lookup", t, rows, cols, q, plan)
            made += 1

    def _by_family(self) -> list[str]:
        """Labelled tables with a labelled parent, those with the largest families (children per parent) first."""
        def size(t: str) -> float:
            ref = self.parents(t)[0][0]
            return self.tables[t].height / max(1, self.tables[t][ref].n_unique())
        return sorted((t for t in self._labelled_tables() if self.parents(t)), key=lambda t: (-size(t), t))

    def _labelled_tables(self, min_rows: int = 1) -> list[str]:
        """Tables whose rows have distinct labels, the largest first."""
        return sorted((t for t in self.spec.tables if self.labelled(t) and self.tables[t].height >= min_rows), key=lambda t: (-self.tables[t].height, t))

    def _threshold(self, t: str, c: str, share: float) -> tuple[str, float] | None:
        """A round bound on a numeric column that ``share`` of the rows meet (``>=`` on the top, ``<=`` on the bottom)."""
        vals = sorted(float(v) for v in self.tables[t][c].to_list())
        if self.rng.random() < 0.6:
            v = _nice(vals[int(len(vals) * (1 - share))])
            return (">=", v) if v > vals[0] else None
        v = _nice(vals[int(len(vals) * share)])
        return ("<=", v) if v < vals[-1] else None

    def _bound(self, t: str, c: str, op: str, v: Any) -> str:
        """A numeric bound as words: ``at least 4 stars``, ``120 rooms or fewer``, ``at most $1,099``."""
        val = self.words(t, c, v)
        label = self.ci(t, c).label
        if label.startswith("number of ") and re.fullmatch(r"[\d.,]+", val):
            val = f"{val} {label.removeprefix('number of ')}"  # "number of hotels" >= 3: "at least 3 hotels"
        if op == ">=":
            return self.rng.choice([f"at least {val}", f"{val} or more", f"no less than {val}"])
        return self.rng.choice([f"at most {val}", f"no more than {val}", f"{val} or less"])

    def _cond_words(self, t: str, c: str, op: str, v: Any) -> str:
        """A condition as a clause on several rows: ``whose star rating is at least 4 stars``, ``with at least 3 hotels``,
        ``whose segment is luxury or upscale``, ``that were announced between ... (both included)``."""
        ci = self.ci(t, c)
        label = ci.label
        if op in (">=", "<="):
            bound = self._bound(t, c, op, v)
            return f"with {bound}" if label.startswith("number of ") else f"whose {label} {_is(label)} {bound}"
        if op == "in":
            return f"whose {label} {_is(label)} {join_words([str(x) for x in v], 'or')}"
        if op == "between":
            a, b = v
            span = f"between {self.words_date(a)} and {self.words_date(b)} (both included)"
            return f"that {_were(ci.event)} {span}" if ci.event else f"whose {label} falls {span}"
        return f"whose {label} {_is(label)} {v}"

    def _criterion(self, t: str, c: str, op: str, v: Any) -> str:
        """A condition as a criterion in a list: ``star rating: at least 4 stars``, ``segment: luxury or upscale``."""
        label = self.ci(t, c).label
        if op in (">=", "<="):
            return f"{label}: {self._bound(t, c, op, v)}"
        if op == "in":
            return f"{label}: {join_words([str(x) for x in v], 'or')}"
        if op == "between":
            return f"{label}: between {self.words_date(v[0])} and {self.words_date(v[1])}"
        return f"{label}: {v}"

    def _clue(self, t: str, c: str, op: str, v: Any) -> str:
        """A clue about one row: ``its star rating is between 4 and 5 stars``, ``it was founded in March 2030``."""
        ci = self.ci(t, c)
        label = ci.label
        if op == "in":
            return f"its {label} {_is(label)} {v[0]}"
        if ci.kind == "date":
            month = v[0].strftime("%B %Y")
            return f"it {ci.event} in {month}" if ci.event else f"its {label} falls in {month}"
        lo, hi = self.words(t, c, v[0]), self.words(t, c, v[1])
        if label.startswith("number of "):
            return f"it has between {lo} and {hi} {label.removeprefix('number of ')}" if re.fullmatch(r"[\d.,]+", hi) else f"it has between {lo} and {hi}"
        return f"its {label} {_is(label)} between {lo} and {hi}"

    def _match(self, row: dict, c: str, op: str, v: Any) -> bool:
        x = row[c]
        if op == ">=":
            return x >= v
        if op == "<=":
            return x <= v
        if op == "in":
            return x in v
        if op == "between":
            return v[0] <= x <= v[1]
        return x == v

    def filter(self, limit: int) -> None:
        """Rows that meet 1-3 conditions on their attributes; 8-60 rows."""
        tables = [t for t in self._labelled_tables(30) if self.numbers(t) and t in self.has_dataset]
        for i in range(limit * 4):
            if not tables or sum(x.extra["kind"] == "filter" for x in self.tasks) >= limit:
                return
            t = tables[i % len(tables)]
            info = self.info[t]
            conds: list[tuple[str, str, Any]] = []
            nums, cats = self.numbers(t), self.categories(t)
            n_cond = self.rng.choice((1, 2, 2, 3))
            for c in self.rng.sample(nums, min(len(nums), 2)):
                th = self._threshold(t, c, self.rng.choice((0.3, 0.4, 0.5, 0.6)))
                if th:
                    conds.append((c, th[0], th[1]))
            if cats and (n_cond >= 2 or not conds):
                c = self.rng.choice(cats)
                vals = sorted(set(self.tables[t][c].to_list()), key=str)
                k = self.rng.choice((1, 2)) if len(vals) > 2 else 1
                conds.append((c, "in", tuple(sorted(self.rng.sample(vals, k), key=str))))
            conds = conds[:n_cond]
            if not conds:
                continue
            rows = [r for r in self.rows[t] if all(self._match(r, c, op, v) for c, op, v in conds)]
            if not max(5, min(15, self.tables[t].height // 6)) <= len(rows) <= 60:
                continue
            rows.sort(key=lambda r: self.label(t, r))
            cond_cols = [c for c, _, _ in conds]
            extra = self.pick_attrs(t, self.rng.randint(2, 4), exclude=tuple(cond_cols))
            cols = [self.name_col(t)] + [self.attr_col(t, c) for c in dict.fromkeys(cond_cols + extra)]
            words = join_words([self._cond_words(t, c, op, v) for c, op, v in conds])
            crit = "; ".join(self._criterion(t, c, op, v) for c, op, v in conds)
            w, each = self.ph.world, "each one's"
            q = self.ph.preface() + self.ph.pick([
                f"{self.ph.request()} a list of every {info.noun} in {w} {words}. Give {self.heads(cols[1:], each)}.",
                f"Which {info.plural} in {w} are there {words}? List all of them with {self.heads(cols[1:], 'their')}.",
                f"Find all {info.plural} of {w} (as of {self.as_of()}) {words}, and give {self.heads(cols[1:], 'their')}.",
                f"Criteria: {crit}. List every {info.noun} of {w} that meets {'all of them' if len(conds) > 1 else 'it'}, with {self.heads(cols[1:], 'its')}.",
                f"I'm screening the {info.plural} of {w}. Keep only those {words}, and for each one report {self.heads(cols[1:], 'the')}.",
                f"For every {info.noun} in {w} {words}, I need {self.heads(cols[1:], 'the')}.",
                f"Considering only {info.plural} {words}: which ones does {w} have? Give {self.heads(cols[1:], 'their')}.",
            ])
            plan = {"rows": {"from": "dataset"}, "where": [self.cond_plan(t, c, op, v) for c, op, v in conds]}
            self.add("filter", t, rows, cols, q, plan, inputs=self.all_rows_inputs(t, cond_cols))

    def _date_span(self, t: str, dc: str, lo: int, hi: int) -> tuple[date, date, list[dict]] | None:
        """A span of one to eight consecutive quarters holding ``lo``-``hi`` rows (fewer when the table is small)."""
        frame = self.tables[t]
        lo = max(3, min(lo, frame.height // 4))
        counts = dict(((y, q), n) for y, q, n in frame.group_by(pl.col(dc).dt.year().alias("y"), pl.col(dc).dt.quarter().alias("q")).len().rows())
        if not counts:
            return None
        first, last = min(counts), max(counts)
        qs, (y, q) = [], first
        while (y, q) <= last:
            qs.append(((y, q), counts.get((y, q), 0)))
            y, q = (y + 1, 1) if q == 4 else (y, q + 1)
        spans = []
        for i in range(len(qs)):
            for j in range(i, min(i + 8, len(qs))):
                n = sum(x[1] for x in qs[i:j + 1])
                if lo <= n <= hi and qs[i][1] and qs[j][1]:
                    spans.append((qs[i][0], qs[j][0]))
        if not spans:
            return None
        (y0, q0), (y1, q1) = self.rng.choice(spans)
        start = date(y0, 3 * q0 - 2, 1)
        end = date(y1 + (q1 == 4), 1 if q1 == 4 else 3 * q1 + 1, 1)
        end = date.fromordinal(end.toordinal() - 1)
        rows = [r for r in self.rows[t] if start <= r[dc] <= end]
        return start, end, rows

    def join(self, limit: int) -> None:
        """Rows in a date range with their parent and 1-2 of the parent's attributes."""
        made = 0
        for t in self._labelled_tables(10):
            dc = self.event(t)
            if dc is None or made >= limit or t not in self.has_dataset:
                continue
            for ref, pt in self.parents(t)[:1]:
                pattrs = [c for c in self.attributes(pt) if self.ci(pt, c).kind != "text"]
                if not pattrs:
                    continue
                for _ in range(limit):
                    span = self._date_span(t, dc, 15, 45)
                    if span is None or made >= limit:
                        break
                    start, end, rows = span
                    rows.sort(key=lambda r: (r[dc], self.label(t, r)))
                    pa = self.rng.sample(pattrs, min(len(pattrs), self.rng.choice((1, 2))))
                    own = self.pick_attrs(t, 2, exclude=(dc,))
                    cols = ([self.name_col(t), self.attr_col(t, dc), self.parent_col(t, ref, pt)] + [self.parent_col(t, ref, pt, c) for c in pa]
                            + [self.attr_col(t, c) for c in own])
                    info, pinfo = self.info[t], self.info[pt]
                    cond = self._cond_words(t, dc, "between", (start, end))
                    w, dl, pn = self.ph.world, self.ci(t, dc).label, pinfo.noun
                    pwords = self.ph.attrs([self.ci(pt, c).label for c in pa])
                    ownw = self.ph.attrs([self.ci(t, c).label for c in own])
                    q = self.ph.preface() + self.ph.pick([
                        f"{self.ph.request()} a table of the {info.plural} in {w} {cond}. For each, give the {dl}, its {pn} and that {pn}'s {pwords}"
                        + (f", plus the {ownw} of the {info.noun}." if own else "."),
                        f"Which {info.plural} of {w} {cond.removeprefix('that ') if self.ci(t, dc).event else 'have ' + _an(dl) + cond.split(' falls', 1)[1]}? "
                        f"For each one I need its {dl}, the {pn} it belongs to and that {pn}'s {pwords}" + (f", as well as its {ownw}." if own else "."),
                        f"I'm looking at the period from {self.words_date(start)} to {self.words_date(end)}. Give all {info.plural} of {w} {cond}, "
                        f"each with its {dl}, its {pn} and the {pn}'s {pwords}" + (f"; add the {info.noun}'s own {ownw}." if own else "."),
                        f"List all {info.plural} in {w} {cond}, each with its {pn}. Columns: the {info.noun}, its {dl}, its {pn}, the {pn}'s {pwords}"
                        + (f", and the {info.noun}'s {ownw}." if own else "."),
                    ])
                    plan = {"rows": {"from": "dataset"}, "where": [self.cond_plan(t, dc, "between", (start, end))]}
                    self.add("join", t, rows, cols, q, plan, inputs=self.all_rows_inputs(t, [dc]))
                    made += 1

    def aggregate(self, limit: int) -> None:
        """Per group (a parent or a category): count, total, average and maximum of a numeric attribute."""
        made = 0
        for t in self._labelled_tables():
            nums = self.numbers(t)
            if not nums or made >= limit or t not in self.has_dataset:
                continue
            groups: list[tuple[str, str, str | None]] = [("parent", pt, ref) for ref, pt in self.parents(t)]
            groups += [("category", c, None) for c in self.categories(t) if _noun_like(self.ci(t, c).label)]  # "for every segment", never "for every based in"
            for how, g, ref in self.rng.sample(groups, len(groups)):
                if made >= limit:
                    break
                c = self.rng.choice(nums)
                ci = self.ci(t, c)
                info = self.info[t]
                key_of = (lambda r: r[ref]) if how == "parent" else (lambda r, g=g: r[g])
                buckets: dict[Any, list[dict]] = {}
                for r in self.rows[t]:
                    buckets.setdefault(key_of(r), []).append(r)
                if not 3 <= len(buckets) <= 60:
                    continue
                unit = f" ({ci.unit.header()})" if ci.unit and ci.unit.header() else ""
                if how == "parent":
                    gname = _cap(self.info[g].noun)
                    glabel = {k: self.names[g][k].text for k in buckets}
                    gfield = Field("parent", g, "@name", ref)
                else:
                    gname = _cap(self.ci(t, g).label)
                    glabel = {k: render_value(k) for k in buckets}
                    gfield = Field("row", t, g)
                fns = ["count", self.rng.choice(("sum", "mean") if ci.additive else ("mean", "min")), "max"]  # totals only of what adds up
                cols = [Column(gname, Field("group", t, "@group"), "string"),
                        Column(f"Number of {info.plural}", Field("row", t, "@name"), "number", "count", exact=True)]
                words = {"sum": f"Total {ci.label}", "mean": f"Average {ci.label}", "max": f"Highest {ci.label}", "min": f"Lowest {ci.label}"}
                cols += [Column(words[f] + unit, Field("row", t, c), "number", f, exact=f in ("max", "min")) for f in fns[1:]]
                pk = self.spec.tables[t].primary_key
                gold, row_cells, keys = [], [], []
                for k in sorted(buckets, key=lambda k: glabel[k]):
                    rs = buckets[k]
                    vals = [float(r[c]) for r in rs]
                    total = math.fsum(vals)  # exactly rounded: the same whatever order a solver adds the values in
                    agg = {"sum": _round2(total), "mean": _round2(total / len(vals)), "max": max(vals), "min": min(vals)}
                    gold.append({norm_column(cols[0].name): glabel[k], norm_column(cols[1].name): str(len(rs)),
                                 **{norm_column(col.name): render_value(agg[col.agg]) for col in cols[2:]}})
                    cells = []
                    for r in rs:
                        cells += self.value(t, r, gfield)[1] + [(t, str(r[pk]), c, None)]
                    row_cells.append(cells)
                    keys.append(rs[0])
                by = f"{self.info[g].noun}" if how == "parent" else self.ci(t, g).label
                aggs = join_words([words[f][:1].lower() + words[f][1:] for f in fns[1:]])  # "time on Mars" keeps its capital
                w = self.ph.world
                q = self.ph.preface() + self.ph.pick([
                    f"For every {by} in {w}, how many {info.plural} are there, and what are the {aggs} across them? One row per {by}.",
                    f"{self.ph.request()} a summary of the {info.plural} of {w} by {by}: the number of {info.plural}, the {aggs} for each {by}.",
                    f"Group the {info.plural} of {w} by {by}. For each group, report how many {info.plural} it has and the {aggs}.",
                    f"I need a breakdown of {w} by {by}: per {by}, the count of {info.plural}, the {aggs}.",
                    f"How are the {info.plural} of {w} distributed by {by}? Give, for each {by}, the number of {info.plural} and the {aggs}.",
                ]) + self.ph.rounding([x for f, x in (("mean", "averages"), ("sum", "totals")) if f in fns])
                plan = {"rows": {"from": "dataset"}, "group": self.field_plan(gfield)}
                self.add("aggregate", t, keys, cols, q, plan, gold=gold, row_cells=row_cells)
                made += 1

    def top_k(self, limit: int) -> None:
        """The k rows with the highest (or lowest) value of an attribute, optionally within one category."""
        made = 0
        for t in self._labelled_tables():
            nums = self.numbers(t)
            if not nums or self.tables[t].height < 20 or t not in self.has_dataset:
                continue
            for _ in range(limit * 2):
                if made >= limit:
                    return
                c = self.rng.choice(nums)
                desc = self.rng.random() < 0.75
                rows = list(self.rows[t])
                cat = None
                cats = self.categories(t)
                if cats and self.rng.random() < 0.5:
                    cc = self.rng.choice(cats)
                    v = self.rng.choice(sorted(set(self.tables[t][cc].to_list()), key=str))
                    sub = [r for r in rows if r[cc] == v]
                    if len(sub) >= 12:
                        rows, cat = sub, (cc, v)
                k = min(self.rng.choice((10, 15, 20)), len(rows) - 1)
                rows.sort(key=lambda r: r[c], reverse=desc)
                if rows[k - 1][c] == rows[k][c]:
                    continue  # a tie at the cut would make the top k ambiguous
                top = rows[:k]
                positioned = len({r[c] for r in top}) == k  # no tie inside: positions are well defined
                info, ci = self.info[t], self.ci(t, c)
                extra = self.pick_attrs(t, 3, exclude=(c,) + ((cat[0],) if cat else ()))
                cols = ([Column("Position", Field("row", t, "@position"), "number", exact=True)] if positioned else []) + [self.name_col(t), self.attr_col(t, c)]
                cols += [self.attr_col(t, a) for a in extra]
                which = "highest" if desc else "lowest"
                scope = f" whose {self.ci(t, cat[0]).label} is {cat[1]}" if cat else ""
                w, lab = self.ph.world, ci.label
                xw = self.ph.attrs([self.ci(t, a).label for a in extra])
                lx = join_words([lab, xw])  # "price and screen size, battery capacity and segment", or the ranked value alone
                num = self.ph.pick(["Number them from 1 and give", "Number them 1 to " + str(k) + " and give"]) if positioned else "Give"
                q = self.ph.preface() + self.ph.pick([
                    f"{self.rng.choice(('Compile', 'List', 'Give me', 'I need'))} the top {k} {info.plural}{scope} in {w} by {lab} ({which} first), as of {self.as_of()}. {num} each one's {lx}.",
                    f"Which {k} {info.plural}{scope} of {w} have the {which} {lab}? {'Rank them from 1, ' + which + ' first, and give' if positioned else 'Give'} "
                    f"the {join_words([lab] + [self.ci(t, a).label for a in extra])} of each.",
                    f"I'm after the {k} {info.plural}{scope} with the {which} {lab} in {w} (as of {self.as_of()}). "
                    f"{num} their {lx}.",
                    f"Rank the {info.plural}{scope} of {w} by {lab}, {which} first, and keep the first {k}. {num} each one's {lx}.",
                ])
                gold, row_cells = [], []
                for i, r in enumerate(top, 1):
                    g = {"position": str(i)} if positioned else {}
                    cells = []
                    for col in cols[1:] if positioned else cols:
                        v, used = self.value(t, r, col.field)
                        g[norm_column(col.name)] = render_value(v)
                        cells += used
                    gold.append(g)
                    row_cells.append(cells)
                where = [self.cond_plan(t, cat[0], "in", (cat[1],))] if cat else []
                plan = {"rows": {"from": "dataset"}, "where": where, "order": {"field": self.field_plan(Field("row", t, c)), "desc": desc}, "limit": k}
                inputs = self.all_rows_inputs(t, [c] + ([cat[0]] if cat else []))
                self.add("top_k", t, top, cols, q, plan, unique=[cols[1 if positioned else 0].name], gold=gold, row_cells=row_cells, inputs=inputs)
                made += 1

    def ranking(self, limit: int) -> None:
        """The top of a rank column as the ranking site publishes it (its page's title names it)."""
        made = 0
        for t, table in self.spec.tables.items():
            if not self.labelled(t):
                continue
            for rc, col in table.columns.items():
                if not isinstance(col, M.RankColumn) or made >= limit:
                    continue
                frame = self.tables[t]
                info = self.info[t]
                scope, page_scope = "", ""
                if col.within:
                    groups = sorted(frame[col.within].unique().to_list())
                    g = self.rng.choice(groups)
                    frame = frame.filter(pl.col(col.within) == g)
                    wcol = table.columns[col.within]
                    if isinstance(wcol, M.ReferenceColumn):
                        pl_ = self.names[wcol.parent][g].text
                        scope = page_scope = f" of {pl_}"
                    else:
                        scope, page_scope = f" with {self.ci(t, col.within).label} {render_value(g)}", f" ({render_value(g)})"
                title = f"{_cap(info.plural)}{page_scope} ranked by {self.ci(t, col.of).label}"
                if title not in self.titles:
                    continue
                n = min(10, frame.height)
                rows = frame.sort(rc).head(n).to_dicts()
                cols = [self.attr_col(t, rc), self.name_col(t), self.attr_col(t, col.of)]
                order = "highest first" if col.descending else "lowest first"
                w, by, rl = self.ph.world, self.ci(t, col.of).label, self.ci(t, rc).label
                q = self.ph.preface() + self.ph.pick([
                    f"List the top {n} {info.plural}{scope} in {w} ranked by {by} ({order}), as of {self.as_of()}, with their {rl}, name and {by}.",
                    f"Which {n} {info.plural}{scope} of {w} come first when ranked by {by} ({order})? Give each one's {rl}, name and {by}.",
                    f"{self.ph.request()} the published ranking of {info.plural}{scope} by {by} in {w}: the first {n} places, with {rl}, {info.noun} and {by}.",
                    f"What are the first {n} places of the {by} ranking of {info.plural}{scope} in {w} ({order})? For each, the {rl}, the {info.noun} and its {by}.",
                ])
                plan = {"rows": {"from": "ranking", "title": title}, "limit": n}
                self.add("ranking", t, rows, cols, q, plan, unique=[cols[1].name])
                made += 1

    def window(self, limit: int) -> None:
        """Rows whose event date falls in one or two quarters, with their date and attributes (timeline pages)."""
        made = 0
        for t in self._labelled_tables(10):
            dc = self.event(t)
            if dc is None:
                continue
            for _ in range(limit):
                if made >= limit:
                    return
                span = self._date_span(t, dc, 15, 45)
                if span is None:
                    break
                start, end, rows = span
                rows.sort(key=lambda r: (r[dc], self.label(t, r)))
                attrs = self.pick_attrs(t, self.rng.randint(2, 4), exclude=(dc,))
                cols = [self.name_col(t), self.attr_col(t, dc)] + [self.attr_col(t, a) for a in attrs]
                for ref, pt in self.parents(t)[:1]:
                    cols.insert(1, self.parent_col(t, ref, pt))
                info = self.info[t]
                quarters = []
                y, q = start.year, (start.month - 1) // 3 + 1
                while date(y, 3 * q - 2, 1) <= end:
                    quarters.append((y, q))
                    y, q = (y + 1, 1) if q == 4 else (y, q + 1)
                qwords = " and ".join(f"Q{q} {y}" for y, q in quarters) if len(quarters) <= 2 else f"Q{quarters[0][1]} {quarters[0][0]} through Q{quarters[-1][1]} {quarters[-1][0]}"
                filled = {(r[dc].year, (r[dc].month - 1) // 3 + 1) for r in rows}  # a quarter without rows has no timeline page
                ev = self.ci(t, dc).event
                what = f"that {_were(ev)} in {qwords}" if ev else f"whose {self.ci(t, dc).label} falls in {qwords}"
                what_one = f"that {ev} in {qwords}" if ev else what
                in_period = f"that {_were(ev)} in that period" if ev else f"whose {self.ci(t, dc).label} falls in that period"
                w, span = self.ph.world, f"{self.words_date(start)} to {self.words_date(end)}"
                q = self.ph.preface(0.2) + self.ph.pick([
                    f"{self.ph.request()} a timeline of every {info.noun} in {w} {what_one} ({span}), with {self.heads(cols[1:], 'its')}.",
                    f"Which {info.plural} of {w} {_were(ev) + ' in ' + qwords if ev else 'have ' + _an(self.ci(t, dc).label) + ' in ' + qwords}? "
                    f"List each with {self.heads(cols[1:], 'its')}.",
                    f"I'm writing a quarterly review of {w} covering {qwords} ({span}). List every {info.noun} {what_one}, with {self.heads(cols[1:], 'the')}.",
                    f"For {qwords}, give me all {info.plural} of {w} {in_period}: {self.heads(cols[1:], 'their')}.",
                ])
                ci = self.ci(t, dc)
                prefix = f"{_cap(info.plural)} that {ci.event.replace('was ', 'were ')}: " if ci.event else f"{_cap(info.plural)} by {ci.label}: "
                plan = {"rows": {"from": "timeline", "titles": [f"{prefix}Q{q} {y}" for y, q in quarters if (y, q) in filled]}}
                if not all(x in self.titles for x in plan["rows"]["titles"]):
                    break  # the corpus has no timeline of this table
                self.add("window", t, rows, cols, q, plan)
                made += 1

    def deep_wide(self, limit: int) -> None:
        """Every child of a parent the question describes only by clues on the parent's attributes."""
        made = 0
        for t in self._by_family():
            for ref, pt in self.parents(t)[:1]:
                clue_cols = [c for c in self.attributes(pt, ("number", "share", "rank", "category", "date")) if self.tables[pt][c].n_unique() > 1]
                if len(clue_cols) < 2 or self.tables[pt].height < 3 or pt not in self.has_dataset:
                    continue
                counts = dict(self.tables[t].group_by(ref).len().rows())
                cands = sorted((k for k, n in counts.items() if n >= 5), key=str)  # group_by order is not stable
                for key in self.rng.sample(cands, len(cands)):
                    if made >= limit:
                        return
                    prow = self.by_key[pt][key]
                    clues = self._clues(pt, prow, clue_cols)
                    if clues is None:
                        continue
                    info, pinfo = self.info[t], self.info[pt]
                    rows = sorted((r for r in self.rows[t] if r[ref] == key), key=lambda r: self.label(t, r))
                    attrs = self.pick_attrs(t, self.rng.randint(4, 5))
                    cols = [self.name_col(t)] + [self.attr_col(t, a) for a in attrs]
                    clue_list = [self._clue(pt, c, op, v) for c, op, v in clues]
                    self.rng.shuffle(clue_list)
                    w, pn = self.ph.world, pinfo.noun
                    q = self.ph.pick([
                        f"In {w} there is exactly one {pn} with all of these traits: {'; '.join(clue_list)}. "
                        f"First identify that {pn}, then list every one of its {info.plural} with {self.heads(cols[1:], 'the')}.",
                        f"One {pn} of {w} fits every clue below.\n" + "\n".join(f"- {x[:1].upper() + x[1:]}" for x in clue_list)
                        + f"\nWork out which {pn} it is, then give me all of its {info.plural} with {self.heads(cols[1:], 'their')}.",
                        f"I'm trying to pin down {_an(pn)} in {w}: {join_words(clue_list)}. Once you know which {pn} this is, "
                        f"compile every {info.noun} it has, with {self.heads(cols[1:], 'the')}.",
                        f"Find the {pn} of {w} for which {join_words(clue_list)}. Then list each of its {info.plural} with {self.heads(cols[1:], 'their')}.",
                    ])
                    plan = {"rows": {"from": "children", "section": _cap(info.plural),
                                     "parent": {"slug": slug(pt), "resolve": {"plural": pinfo.plural, "table": pt,
                                                                               "where": [self.cond_plan(pt, c, op, v) for c, op, v in clues]}}}}
                    inputs = self.all_rows_inputs(pt, [c for c, _, _ in clues])
                    self.add("deep_wide", t, rows, cols, q, plan, inputs=inputs)
                    made += 1

    def _clues(self, pt: str, prow: dict, cols: list[str]) -> list[tuple[str, str, Any]] | None:
        """2-3 conditions (bounds and categories, never the exact value of a number) that only ``prow`` meets."""
        for _ in range(12):
            picked = self.rng.sample(cols, min(len(cols), self.rng.choice((2, 3))))
            clues = []
            for c in picked:
                v, kind = prow[c], self.ci(pt, c).kind
                if kind == "category":
                    clues.append((c, "in", (v,)))
                elif kind == "date":
                    clues.append((c, "between", (date(v.year, v.month, 1), _month_end(v))))
                else:
                    x = float(v)
                    lo, hi = _nice(x * 0.9) if x > 0 else x - 1, _nice(x * 1.1) if x > 0 else x + 1
                    if kind == "rank" or self.tables[pt].schema[c] in (pl.Int64, pl.Int32):
                        lo, hi = math.floor(lo), math.ceil(hi)
                    if not lo <= x <= hi:
                        continue
                    clues.append((c, "between_num", (lo, hi)))
            match = [r for r in self.rows[pt] if all(self._match_clue(r, c, op, v) for c, op, v in clues)]
            if len(match) == 1 and len(clues) >= 2:
                return [(c, "between" if op == "between_num" else op, v) for c, op, v in clues]
        return None

    def _match_clue(self, r: dict, c: str, op: str, v: Any) -> bool:
        return v[0] <= r[c] <= v[1] if op in ("between", "between_num") else self._match(r, c, op, v)

    def scenario_diff(self, limit: int) -> None:
        """How attributes changed between the base world and this scenario, for the children of one parent."""
        if self.scenario is None or self.base is None:
            return
        made = 0
        base_year = self.base_spec.as_of_date.year if self.base_spec else None
        for t in self._by_family() + [t for t in self._labelled_tables() if not self.parents(t)]:
            pk = self.spec.tables[t].primary_key
            changed = [c for c in sorted(self.archived.get(t, ())) if c in self.attributes(t)]
            changed = [c for c in self.attributes(t) if c in changed]  # declared order
            if not changed:
                continue
            base_keys = set(self.base[t][pk].to_list())
            parents = self.parents(t)
            groups: list[tuple[str, Any]] = []
            if parents:
                ref, pt = parents[0]
                counts = self.tables[t].group_by(ref).len().sort("len", ref, descending=[True, False]).rows()
                groups = [(ref, k) for k, n in counts if n >= 5]
            elif self.tables[t].height <= 40 and t in self.has_dataset:
                groups = [(None, None)]
            for ref, key in groups[:limit]:
                if made >= limit:
                    return
                rows = sorted((r for r in self.rows[t] if (ref is None or r[ref] == key) and r[pk] in base_keys), key=lambda r: self.label(t, r))
                if len(rows) < 3:
                    continue
                cs = changed[:2]
                cols = [self.name_col(t)]
                own = self.pick_attrs(t, 3 - len(cs), exclude=tuple(changed))  # the rest of the row, as it is now
                for c in cs:
                    ci = self.ci(t, c)
                    unit = f" ({ci.unit.header()})" if ci.unit and ci.unit.header() else ""
                    cols += [Column(f"{_cap(ci.label)} in {base_year}{unit}", Field("base", t, c), self.ctype(t, c), exact=ci.kind == "rank"),
                             Column(f"{_cap(ci.label)} in {self.spec.as_of_date.year}{unit}", Field("row", t, c), self.ctype(t, c), exact=ci.kind == "rank")]
                cols += [self.attr_col(t, a) for a in own]
                info = self.info[t]
                plabel = self.names[parents[0][1]][key].text if ref else ""
                scope = f"of {plabel} " if ref else ""
                cw = join_words([self.ci(t, c).label for c in cs])
                ow = self.ph.attrs([self.ci(t, a).label for a in own])
                w = self.ph.world
                q = self.ph.pick([
                    f"{w} is observed as of {self.as_of()}. For every {info.noun} {scope}that already existed in {base_year}, "
                    f"compare its {cw} as published in {base_year} with the value as of {self.as_of()}" + (f", and give its current {ow}" if own else "") + ".",
                    f"How did the {cw} of the {info.plural} {scope}in {w} change between {base_year} and {self.as_of()}? "
                    f"Cover every {info.noun} that already existed in {base_year}" + (f", and add its current {ow}." if own else "."),
                    f"I'm writing a report on {w} that compares {base_year} with today ({self.as_of()}). For each {info.noun} {scope}that existed in {base_year}, "
                    f"I need its {cw} then and now" + (f", plus its current {ow}." if own else "."),
                ])
                rows_plan: dict[str, Any] = ({"from": "children", "parent": {"slug": slug(parents[0][1]), "label": plabel}, "section": _cap(info.plural)}
                                             if ref else {"from": "dataset"})
                plan = {"rows": rows_plan, "base": {"title": f"Archived dataset: {info.plural} as of {base_year}"}}
                self.add("scenario_diff", t, rows, cols, q, plan)
                made += 1


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _noun_like(label: str) -> bool:
    """A label that reads as a noun phrase (``segment``, ``type of trip``), not a predicate (``based in``, ``has a spa``)."""
    words = label.split()
    return bool(words) and words[-1] not in ("in", "of", "at", "on", "by", "for", "to", "from", "with") and words[0] not in ("is", "has", "was", "based")


def _is(label: str) -> str:
    """The verb agreeing with a label: ``points are``, ``player rating is``."""
    last = label.split()[-1] if label.split() else label
    return "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3 else "is"


def _were(event: str) -> str:
    """An event verb for several rows: ``was announced`` -> ``were announced``."""
    return "were " + event[4:] if event.startswith("was ") else event


def _month_end(d: date) -> date:
    first_next = date(d.year + (d.month == 12), d.month % 12 + 1, 1)
    return date.fromordinal(first_next.toordinal() - 1)


def _prose(name: str) -> str:
    """A column header as words in a sentence: ``Launch price (USD)`` -> ``launch price``."""
    words = re.sub(r" \([^()]*\)$", "", name)
    return words if words[:2].isupper() else words[:1].lower() + words[1:]


def generate_tasks(
    spec: M.WorldSpec,
    tables: dict[str, pl.DataFrame],
    pages: pl.DataFrame,
    facts: pl.DataFrame,
    scenario: str | None = None,
    seed: int | None = None,
    per_kind: int = 4,
    base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None,
) -> list[Task]:
    """Tasks from a world's tables, whose answers its corpus states.

    Args:
        spec: the spec the tables satisfy.
        tables: the world's (or scenario's) tables.
        pages, facts: its corpus (``read_corpus``: encyclopedia URLs, archived columns).
        scenario: the scenario the tables belong to (enters ids).
        seed: default the spec's seed; the same inputs and seed give the same tasks.
        per_kind: at most this many tasks per kind.
        base: for a scenario, the base world's ``(spec, tables)`` (``scenario_diff`` tasks).

    Returns:
        Tasks with ``extra`` = ``{world, scenario, kind, plan, provenance}``.
    """
    g = _Gen(spec, tables, pages, facts, scenario, spec.seed if seed is None else seed,
             base[1] if base else None, base[0] if base else None)
    for kind in KINDS:  # a scenario repeats its world's kinds less often; its own kind is scenario_diff
        getattr(g, kind)(per_kind if scenario is None or kind == "scenario_diff" else max(1, per_kind // 2))
    return g.tasks


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
