"""WideSearch-style table-aggregation tasks generated from a world.

Three kinds, each a question, a gold table computed from the world tables and an
``evaluation`` in the WideSearch shape:

* ``children`` — every child row of one parent ("all models of Samsung"), with the child's
  label, up to three attributes and the URL of its wiki page (``url_match``);
* ``ranking``  — the top rows of a rank column, with rank, label and the ranked value;
* ``window``   — the rows whose date falls in a quarter, with label, date and attributes.

Gold cells are rendered exactly as the corpus states them (:func:`render_value`); the
evaluation pipeline follows the cell type: strings ``norm_str`` + ``exact_match``, numbers
``extract_number`` + ``number_near`` (1% tolerance, ranks exact), dates ``norm_date`` +
``date_near``, URLs ``url_match``. Each task records its provenance (table, row keys and
source column of every gold column) so :func:`check_solvable` can prove, through
``corpus_facts``, that every gold cell is stated by some page and that every gold row has
at least one required cell that no lead states (so no snippet reveals it: agents must
open pages).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from worldforge.corpus.pages import label_column, pretty, render_value, singular, slug
from worldforge.spec import models as M
from worldforge.synth import column_rng
from worldforge.tasks.io import Task

__all__ = ["generate_tasks", "check_solvable"]


def _cell_type(frame: pl.DataFrame, col: str) -> str:
    dt = frame.schema[col]
    if dt == pl.Date:
        return "date"
    if dt in (pl.Int64, pl.Float64):
        return "number"
    return "string"


def _pipeline(kind: str, exact_number: bool = False) -> dict:
    if kind == "date":
        return {"preprocess": ["norm_date"], "metric": ["date_near"]}
    if kind == "number":
        return {"preprocess": ["extract_number"], "metric": ["number_near"], "criterion": 0.0 if exact_number else 0.01}
    if kind == "url":
        return {"preprocess": [], "metric": ["url_match"]}
    return {"preprocess": ["norm_str"], "metric": ["exact_match"]}


class _Gen:
    def __init__(self, spec: M.WorldSpec, tables: dict[str, pl.DataFrame], pages: pl.DataFrame, facts: pl.DataFrame, scenario: str | None, seed: int):
        self.spec, self.tables, self.scenario = spec, tables, scenario
        self.rng = column_rng(seed, spec.world, scenario or "", "tasks")
        self.title = spec.title or spec.world
        # wiki URL of each row: the entity page that states its label
        ent = pages.filter(pl.col("page_type") == "entity").select("url")
        lead_label = facts.join(ent, on="url").filter(pl.col("section") == "lead")
        self.wiki: dict[tuple[str, str], str] = {}
        for r in lead_label.iter_rows(named=True):
            t = r["table_name"]
            # a row's own wiki page (other wiki pages name it too, as a parent)
            if r["column_name"] == label_column(spec.tables[t]) and f"/wiki/{slug(t)}/" in r["url"]:
                self.wiki[(t, r["row_key"])] = r["url"]
        self.tasks: list[Task] = []

    def attributes(self, t: str, k: int) -> list[str]:
        table = self.spec.tables[t]
        lc = label_column(table)
        frame = self.tables[t]
        cols = [
            c for c, col in table.columns.items()
            if c not in (table.primary_key, lc) and col.kind != "reference" and frame[c].null_count() == 0
            and not (frame.schema[c] == pl.String and (frame[c].str.strip_chars() == "").any())  # no empty gold cells
        ]
        numbers = [c for c in cols if _cell_type(frame, c) == "number"]
        others = [c for c in cols if c not in numbers]
        picked = self.rng.sample(numbers, min(len(numbers), max(1, k - 1))) if numbers else []
        rest = [c for c in others if c not in picked]
        picked += self.rng.sample(rest, min(len(rest), k - len(picked)))
        return [c for c in table.columns if c in picked]  # declared order

    def labelled(self, t: str) -> bool:
        """Rows of ``t`` have their own, distinct labels (a task's unique column)."""
        table = self.spec.tables[t]
        lc = label_column(table)
        return lc != table.primary_key and self.tables[t][lc].n_unique() == self.tables[t].height

    def add(self, kind: str, t: str, rows: list[dict], columns: list[tuple[str, str, str]], unique: list[str], question: str) -> None:
        """columns: (task column, source column or "@url", cell type)."""
        pk = self.spec.tables[t].primary_key
        gold = []
        for r in rows:
            g = {}
            for name, src, _ in columns:
                g[name] = self.wiki.get((t, str(r[pk])), "") if src == "@url" else render_value(r[src])
            gold.append(g)
        names = [c[0] for c in columns]
        evaluation = {
            "unique_columns": unique,
            "required": names,
            "eval_pipeline": {name: _pipeline(ctype, exact_number=(src in self._rank_cols(t))) for name, src, ctype in columns},
        }
        iid = f"{self.spec.world}{'_' + self.scenario if self.scenario else ''}_{kind}_{len(self.tasks) + 1:02d}"
        fmt = (
            f"\n\nOutput one Markdown table with exactly these columns, in this order: {', '.join(names)}. "
            "Write dates as \"Mon DD, YYYY\" (for example: Feb 01, 2029) and numbers without units."
        )
        self.tasks.append(Task(
            instance_id=iid, question=question + fmt, evaluation=evaluation, gold=gold, language="en",
            extra={
                "world": self.spec.world, "scenario": self.scenario, "kind": kind,
                "provenance": {"table": t, "row_keys": [str(r[pk]) for r in rows], "columns": {n: s for n, s, _ in columns}},
            },
        ))

    def _rank_cols(self, t: str) -> set[str]:
        return {c for c, col in self.spec.tables[t].columns.items() if isinstance(col, M.RankColumn)}

    def children(self, limit: int) -> None:
        pairs = [(t, ref, col) for t, table in self.spec.tables.items() for ref, col in table.references.items()
                 if self.labelled(t) and label_column(self.spec.tables[col.parent]) != self.spec.tables[col.parent].primary_key]
        for t, ref, col in pairs:
            parent = self.spec.tables[col.parent]
            ppk = parent.primary_key
            counts = self.tables[t].group_by(ref).len().filter(pl.col("len").is_between(3, 25))
            keys = sorted(counts[ref].to_list())
            for key in self.rng.sample(keys, min(limit, len(keys))):
                prow = self.tables[col.parent].filter(pl.col(ppk) == key).row(0, named=True)
                plabel = render_value(prow[label_column(parent)])
                rows = self.tables[t].filter(pl.col(ref) == key).to_dicts()
                lc = label_column(self.spec.tables[t])
                attrs = self.attributes(t, 3)
                cols = [(lc, lc, "string")] + [(a, a, _cell_type(self.tables[t], a)) for a in attrs] + [("wiki_url", "@url", "url")]
                q = (f"In {self.title}, as of {render_value(self.spec.as_of_date)}: find every {singular(t)} "
                     f"that belongs to {plabel} ({singular(col.parent)}). "
                     f"For each one, give its {lc}, " + ", ".join(pretty(a) for a in attrs) + " and the URL of its wiki page.")
                self.add("children", t, rows, cols, [lc], q)

    def rankings(self, limit: int) -> None:
        for t, table in self.spec.tables.items():
            lc = label_column(table)
            if not self.labelled(t):
                continue
            for rc, col in table.columns.items():
                if not isinstance(col, M.RankColumn) or limit <= 0:
                    continue
                frame = self.tables[t]
                if col.within:
                    groups = sorted(frame[col.within].unique().to_list())
                    g = self.rng.choice(groups)
                    frame = frame.filter(pl.col(col.within) == g)
                    wcol = table.columns[col.within]
                    scope = f" of {render_value(self.tables[wcol.parent].filter(pl.col(self.spec.tables[wcol.parent].primary_key) == g).row(0, named=True)[label_column(self.spec.tables[wcol.parent])])}" if isinstance(wcol, M.ReferenceColumn) else f" with {pretty(col.within)} {render_value(g)}"
                else:
                    scope = ""
                n = min(10, frame.height)
                rows = frame.sort(rc).head(n).to_dicts()
                cols = [(rc, rc, "number"), (lc, lc, "string"), (col.of, col.of, _cell_type(self.tables[t], col.of))]
                order = "highest first" if col.descending else "lowest first"
                q = (f"In {self.title}, as of {render_value(self.spec.as_of_date)}: list the top {n} {pretty(t)}{scope} "
                     f"ranked by {pretty(col.of)} ({order}), with their {rc}, {lc} and {pretty(col.of)}.")
                self.add("ranking", t, rows, cols, [lc], q)
                limit -= 1

    def windows(self, limit: int) -> None:
        for t, table in self.spec.tables.items():
            lc = label_column(table)
            frame = self.tables[t]
            dates = [c for c in table.columns if frame.schema[c] == pl.Date and "birth" not in c]
            if not self.labelled(t) or not dates or limit <= 0:
                continue
            dc = dates[0]
            quarters = frame.group_by(pl.col(dc).dt.year().alias("y"), pl.col(dc).dt.quarter().alias("q")).len().filter(pl.col("len").is_between(3, 15)).sort("y", "q")
            if quarters.height == 0:
                continue
            y, qn, _ = self.rng.choice(quarters.rows())
            start, end = date(y, 3 * qn - 2, 1), (date(y + 1, 1, 1) if qn == 4 else date(y, 3 * qn + 1, 1))
            rows = frame.filter((pl.col(dc) >= start) & (pl.col(dc) < end)).sort(dc, table.primary_key).to_dicts()
            attrs = [a for a in self.attributes(t, 2) if a != dc]
            cols = [(lc, lc, "string"), (dc, dc, "date")] + [(a, a, _cell_type(self.tables[t], a)) for a in attrs]
            q = (f"In {self.title}: list every {singular(t)} whose {pretty(dc)} falls in Q{qn} {y} "
                 f"(from {render_value(start)} up to, not including, {render_value(end)}), with its {lc}, {pretty(dc)}" + "".join(f", {pretty(a)}" for a in attrs) + ".")
            self.add("window", t, rows, cols, [lc], q)
            limit -= 1


def generate_tasks(
    spec: M.WorldSpec,
    tables: dict[str, pl.DataFrame],
    pages: pl.DataFrame,
    facts: pl.DataFrame,
    scenario: str | None = None,
    seed: int | None = None,
    per_kind: int = 3,
) -> list[Task]:
    """Tasks from a world's tables, whose answers its corpus states.

    Args:
        spec: the spec the tables satisfy.
        tables: the world's (or scenario's) tables.
        pages, facts: its corpus (``read_corpus``), used for wiki URLs.
        scenario: the scenario the tables belong to (enters ids).
        seed: default the spec's seed; the same inputs and seed give the same tasks.
        per_kind: at most this many tasks per kind and source.

    Returns:
        Tasks with ``extra`` = ``{world, scenario, kind, provenance}``.
    """
    g = _Gen(spec, tables, pages, facts, scenario, spec.seed if seed is None else seed)
    g.children(per_kind)
    g.rankings(per_kind)
    g.windows(per_kind)
    return g.tasks


def check_solvable(task: Task, pages: pl.DataFrame, facts: pl.DataFrame) -> list[str]:
    """Why a task cannot be solved inside its corpus (empty list: solvable).

    Every gold cell must be stated by at least one page (``corpus_facts``; a URL cell must
    be a page of the corpus), and every gold row must have at least one required cell that
    is stated only in page bodies, never in a lead (from which snippets are cut).
    """
    prov = task.extra["provenance"]
    t = prov["table"]
    urls = set(pages["url"].to_list())
    sections: dict[tuple[str, str], set[str]] = {}
    for r in facts.filter(pl.col("table_name") == t).select("row_key", "column_name", "section").iter_rows():
        sections.setdefault((r[0], r[1]), set()).add(r[2])
    problems = []
    for key, gold in zip(prov["row_keys"], task.gold):
        hidden = False
        for name, src in prov["columns"].items():
            if src == "@url":
                if gold[name] not in urls:
                    problems.append(f"row {key}: URL {gold[name]!r} is not a page of the corpus")
                continue
            found = sections.get((key, src))
            if not found:
                problems.append(f"row {key}: no page states {t}.{src}")
            elif found == {"body"}:
                hidden = True
        if not hidden:
            problems.append(f"row {key}: every required cell is stated in some lead (a snippet could reveal it)")
    return problems
