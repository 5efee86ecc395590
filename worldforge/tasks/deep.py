"""Deep questions with one short answer (BrowseComp-style), built from chains of hops across a world's tables.

A wide task asks for a table; a *deep* question asks for one entity name, number or date that only a
chain of lookups reaches, as BrowseComp (Wei et al., 2025, arXiv 2504.12516) and BrowseComp-Plus
(Chen et al., 2025, arXiv 2508.06600) do. The entity a chain starts from is rarely named: it is
described by two or three blurred clues (a range instead of a value, a month instead of a day, a
category), and the clues fit exactly one row. Nine patterns (:data:`PATTERNS`); a corpus gets an equal
share of each its tables allow, then more of any that can make them:

==================== ===== ==========================================================================
pattern              hops  the question asks for
==================== ===== ==========================================================================
``identify``         2     the described row -> another of its attributes (multi-constraint identification)
``parent``           2-3   the described row -> its parent -> the parent's name, or one of its attributes
``extreme_child``    3-4   the described parent -> its children -> the one with the highest (lowest)
                           value of a number -> its name, or another of its attributes
``aggregate``        3     the described parent -> how many of its children meet a condition (a bound, a
                           category), or the combined value of an additive column over them
``exclusion``        3-4   the described parent -> all of its children but one share a category or meet
                           a bound -> the one that does not: its name, or another attribute
``comparative``      3-4   a named row -> the one row (of its parent, or of its table) higher or lower
                           on one column and earlier or later on another -> its name or an attribute
``temporal``         3-5   the described row -> its parent -> the sibling whose event came next after
                           its own -> that row's name, or another attribute; in a scenario also a row
                           described by what the base world's archive said of it (a value that has
                           changed since) -> that value now
``two_entity``       4-6   two described rows -> the parent both chains meet at -> its name, an
                           attribute, or its child with the highest (lowest) value of a number
``event_anchored``   2-4   a row dated by a news report or press release (the day of its event, a
                           category when the day is shared) -> its parent's name or an attribute (no
                           parent: another of its own attributes)
``hierarchy``        3-6   the described row -> up a self-reference 2 to 4 times (the line manager of
                           the line manager of ...) -> that row's name, or one of its attributes
==================== ===== ==========================================================================

Hops count the chain's steps: resolving a description (or a named row), each table-to-table link,
the step that selects among several rows (the next, the highest, the odd one out), and the final read.

Every question carries a *plan* in the wide tasks' plan language (one row, one column), which the
oracle (:mod:`worldforge.agents.oracle`) executes through the environment's tools alone, and a SQL query
over the world file that :func:`verify_deep` runs in DuckDB: it must return exactly one row, the answer.
Evidence pages are the pages whose ``corpus_facts`` state a cell of the chain; gold pages state the answer.

Answers are graded as BrowseComp grades them (:func:`grade_response`): the response ends with
``Explanation: / Exact Answer: / Confidence:`` (:data:`ANSWER_FORMAT`, BrowseComp's query template); a judge
backend (:class:`~worldforge.tasks.judge.LLMJudge`) compares the exact answer with the gold when one is given,
else a normalised exact match does (names: case, spaces and ``*`` ignored; numbers within 1%, ranks and
counts exactly; dates as the same day), and the grade says which was used.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import duckdb
import polars as pl

from worldforge.corpus.claims import read as read_claim
from worldforge.corpus.generate import slug
from worldforge.corpus.lexicon import is_absence
from worldforge.corpus.quantity import render_value
from worldforge.tasks.context import Column, Field, TaskContext, eval_pipeline
from worldforge.tasks.io import Task, norm_column
from worldforge.tasks.kinds import _blur, _bound, _by_family, _clue, _clues, _labelled_tables, _match, _match_clue, _year_like, nice_number
from worldforge.tasks.metrics import date_near, exact_match, extract_number, norm_date, norm_str
from worldforge.tasks.phrasing import capitalized, join_words, verb_is, with_article
from worldforge.warehouse.duck import quote_ident, quote_str

__all__ = ["ANSWER_FORMAT", "DEEP_DDL", "PATTERNS", "DeepGrade", "DeepQuestion", "as_task", "build_deep_questions", "corpus_deep_questions", "deep_questions", "frame", "grade_response", "matches", "parse_response", "prompt",
           "question_of", "read_deep_questions", "verify_deep"]

ANSWER_FORMAT = (
    "Your response should be in the following format:\n"
    "Explanation: {your explanation for your final answer}\n"
    "Exact Answer: {your succinct, final answer}\n"
    "Confidence: {your confidence score between 0% and 100% for your answer}"
)
"""BrowseComp's answer format (its ``QUERY_TEMPLATE``), appended to a deep question by :func:`prompt`."""


@dataclass
class DeepQuestion:
    """One deep question and everything needed to answer, verify and grade it.

    Attributes:
        question_id: ``<world>[_<scenario>]_deep_NN``.
        world, scenario: where it is asked (``scenario`` ``None``: the base world).
        question: the question, without the answer format (:func:`prompt` adds it).
        answer: the gold answer as text (a label, or the cell's canonical text: ``Mar 05, 2029``, ``1099``).
        answer_type: ``name``, ``number`` or ``date``.
        exact: a number that must match exactly (a whole number: a rank, a count, a year); other numbers match within 1%.
        pattern: one of :data:`PATTERNS`.
        hops: the chain's steps (2-6; the module's table).
        plan: the oracle's plan (the wide tasks' plan language: one row, one column).
        sql: the DuckDB query over the world file whose only row is the answer (:func:`verify_deep`).
        cells: the chain's cells ``[table, key, column, scope]`` (clues, links, answer).
        answer_cells: the cells stating the answer.
        evidence_urls: pages stating any cell of the chain (BrowseComp-Plus' evidence documents).
        gold_urls: pages stating the answer (its gold documents).
        oracle_calls: the tool calls the oracle made to answer it in a clean session (recorded by the oracle step,
            :func:`~worldforge.agents.oracle.run_oracle_suite`; ``None`` before it ran): a measure of its cost.
    """

    question_id: str
    world: str
    scenario: str | None
    question: str
    answer: str
    answer_type: str
    exact: bool
    pattern: str
    hops: int
    plan: dict
    sql: str
    cells: list[list] = field(default_factory=list)
    answer_cells: list[list] = field(default_factory=list)
    evidence_urls: list[str] = field(default_factory=list)
    gold_urls: list[str] = field(default_factory=list)
    oracle_calls: int | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict of every attribute."""
        return asdict(self)


def prompt(q: DeepQuestion) -> str:
    """The question as an agent gets it: the question, a blank line, then :data:`ANSWER_FORMAT`."""
    return f"{q.question}\n\n{ANSWER_FORMAT}"


# -- generation ----------------------------------------------------------------------------------


def _sql_value(v: Any) -> str:
    if isinstance(v, date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(v)
    return quote_str(str(v))


def _sql_clue(alias: str, c: str, op: str, v: Any) -> str:
    col = f"{alias}.{quote_ident(c)}"
    if op == "in":
        return f"{col} IN ({', '.join(_sql_value(x) for x in v)})"
    return f"{col} BETWEEN {_sql_value(v[0])} AND {_sql_value(v[1])}"


def plain_parents(ctx: TaskContext, t: str) -> list[tuple[str, str]]:
    """``(reference, parent table)`` of ``t`` whose reference plays no role (:attr:`~worldforge.corpus.vocab.TableInfo.roles`):
    the parents a question's chain walks as "its <parent>"."""
    return [(ref, pt) for ref, pt in ctx.parents(t) if ref not in ctx.info[t].roles]


class _Builder:
    """The deep questions of one corpus, from its :class:`TaskContext` and ``corpus_facts``."""

    def __init__(self, ctx: TaskContext, facts: pl.DataFrame, pages: pl.DataFrame | None = None, claims: pl.DataFrame | None = None):
        self.ctx = ctx
        from worldforge.warehouse import scenario_schema

        self.schema = scenario_schema(ctx.scenario) if ctx.scenario else "main"
        self.urls: dict[tuple, list[str]] = {}
        for url, t, k, c in facts.select("url", "table_name", "row_key", "column_name").unique().sort("url").iter_rows():
            self.urls.setdefault((t, k, c), []).append(url)
        self.made: list[DeepQuestion] = []
        # the ranks pages claim: {(table, row key): [(column, group column or None, highest first?, position)]}
        self.claimed: dict[tuple[str, str], list[tuple[str, str | None, bool, int]]] = {}
        self._ranks: dict[tuple, dict[Any, int]] = {}
        if claims is not None and claims.height:
            ranked = claims.filter((pl.col("kind") == "rank") & pl.col("scope").is_null()).select("table_name", "row_key", "column_name",
                                                                                                "value_text", "basis")
            for t, k, c, text, basis in ranked.unique().sort("table_name", "row_key", "column_name", "value_text").iter_rows():
                b = json.loads(basis or "{}")
                if b.get("of") != t or b.get("by") != c or t not in ctx.info:
                    continue
                reading = read_claim(text, b.get("label"))
                if reading.position and reading.extreme:
                    self.claimed.setdefault((t, k), []).append((c, b.get("group"), reading.extreme == "high", reading.position))
        # the cells news reports and press releases state: {(table, column): {row key: page type}} (news first)
        self.reported: dict[tuple[str, str], dict[str, str]] = {}
        if pages is not None:
            kinds = pages.filter(pl.col("page_type").is_in(["news", "press_release"])).select("url", "page_type")
            stated = facts.filter(pl.col("kind") == "value") if "kind" in facts.columns else facts
            for t, k, c, ptype in (stated.join(kinds, on="url").select("table_name", "row_key", "column_name", "page_type")
                                   .unique().sort("table_name", "row_key", "column_name", "page_type").iter_rows()):
                got = self.reported.setdefault((t, c), {})
                if got.get(k) != "news":
                    got[k] = ptype

    def table(self, t: str) -> str:
        """``t`` qualified by the corpus's schema (``main``, or the scenario's), quoted for the verification SQL."""
        return f"{quote_ident(self.schema)}.{quote_ident(t)}"

    def named(self, t: str) -> str | None:
        """The name column of ``t`` when its rows are called by it (so a name answer is one cell), else ``None``."""
        ctx = self.ctx
        lc = ctx.info[t].label_column
        if lc == ctx.spec.tables[t].primary_key or lc not in ctx.tables[t].columns or not ctx.labelled(t):
            return None
        return lc if all(ctx.label(t, r) == str(r[lc]) for r in ctx.rows[t]) else None

    def answerable(self, t: str, exclude: set[str]) -> list[str]:
        """Attributes of ``t`` a question may ask for: numbers, dates and categories not used as clues."""
        return [c for c in self.ctx.attributes(t, ("number", "share", "rank", "date", "category")) if c not in exclude]

    def add(self, pattern: str, hops: int, t: str, row: dict, col: Column, question: str, plan_rows: dict, sql: str,
            chain: list[tuple], extra_plan: dict | None = None, computed: tuple[Any, list[tuple]] | None = None) -> bool:
        """Keep one question (``False``: not kept, its answer is written in it, or it repeats one already made).

        ``computed``: ``(value, cells)`` of an answer computed over several rows (a count), instead of ``col`` read on ``row``.
        """
        ctx = self.ctx
        value, used = computed if computed is not None else ctx.value(t, row, col.field)
        if any(q.question == question or q.sql == sql for q in self.made) or is_absence(value):
            return False  # a repeat, or an answer that is an absence ("none"): no page states it as a fact to find
        answer = str(value) if col.field.column == "@name" else render_value(value)
        if len(answer) > 3 and not answer.replace(".", "").isdigit() and answer.lower() in question.lower():
            return False  # a clue happens to state the answer ("its home country is Finland"): not asked
        kind = {"date": "date", "number": "number"}.get(col.ctype, "name")  # a label or a category is a name
        exact = col.exact or (kind == "number" and isinstance(value, int))  # a count, a year, a rank: the number itself
        answer_cells = [list(x) for x in (used[:1] if col.field.of == "parent" and col.field.column != "@name" else
                                          [u for u in used if u[0] == col.field.table] or used)]
        cells = sorted({tuple(x) for x in chain} | {tuple(x) for x in used}, key=str)
        evidence = sorted({u for x in cells for u in self.urls.get(tuple(x[:3]), [])})
        gold = sorted({u for x in answer_cells for u in self.urls.get(tuple(x[:3]), [])})
        plan = {"table": t, "table_slug": slug(t), "noun": ctx.info[t].noun, "plural": ctx.info[t].plural,
                "columns": [{"name": norm_column(col.name), "field": ctx.field_plan(col.field), "agg": col.agg, "type": col.ctype}],
                "rows": plan_rows, **(extra_plan or {})}
        qid = f"{ctx.spec.world}{'_' + ctx.scenario if ctx.scenario else ''}_deep_{len(self.made) + 1:02d}"
        self.made.append(DeepQuestion(qid, ctx.spec.world, ctx.scenario, question, answer, kind, exact, pattern, hops, plan, sql,
                                      [list(x) for x in cells], answer_cells, evidence, gold))
        return True

    # -- the described row -> its parent -> the parent's name or an attribute ---------------------
    def parent_questions(self, limit: int) -> None:
        """Add up to ``limit`` ``parent`` questions: a row of a table with a dataset page, described by clues that fit it
        alone (:func:`~worldforge.tasks.kinds._clues`), asked for its parent's name (2 hops) or an attribute (3 hops)."""
        ctx = self.ctx
        for t in _by_family(ctx):
            if limit <= 0 or t not in ctx.has_dataset:
                continue
            plain = plain_parents(ctx, t)
            roles = [(r, p) for r, p in ctx.parents(t) if r in ctx.info[t].roles]
            if not plain and not roles:
                continue
            # a game's White or Black player, a match's home team: half the time when the table has roles
            ref, pt = ctx.rng.choice(roles) if roles and (not plain or ctx.rng.random() < 0.5) else plain[0]
            clue_cols = [c for c in ctx.attributes(t, ("number", "share", "rank", "category", "date")) if ctx.tables[t][c].n_unique() > 1]
            if len(clue_cols) < 2:
                continue
            pname = self.named(pt)
            pattrs = self.answerable(pt, set())
            rows = sorted(ctx.rows[t], key=lambda r: ctx.label(t, r))
            for row in ctx.rng.sample(rows, min(len(rows), 3 * limit)):
                if limit <= 0:
                    break
                if row.get(ref) is None or row[ref] not in ctx.by_key[pt]:
                    continue
                clues = self.claimed_clues(t, row, clue_cols) or _clues(ctx, t, row, clue_cols)
                if clues is None:
                    continue
                ask_name = pname is not None and (not pattrs or ctx.rng.random() < 0.4)
                if not ask_name and not pattrs:
                    continue
                c = None if ask_name else ctx.rng.choice(pattrs)
                col = ctx.parent_col(t, ref, pt, "@name" if ask_name else c)
                pk, ppk = ctx.spec.tables[t].primary_key, ctx.spec.tables[pt].primary_key
                target = quote_ident(pname if ask_name else c)
                # one row per described row that fits the clues: the question says there is exactly one
                sql = (f"SELECT p.{target} FROM {self.ranked(t, clues)} c JOIN {self.table(pt)} p ON c.{quote_ident(ref)} = p.{quote_ident(ppk)} "
                       f"WHERE {self.where_sql('c', clues)}")
                chain = [(t, str(row[pk]), cc, None) for cc, _, _ in clues] + [(t, str(row[pk]), ref, None)]
                limit -= self.add("parent", 2 if ask_name else 3, t, row, col, self.parent_question(t, pt, clues, None if ask_name else c, ref),
                                  {"from": "dataset"}, sql, chain, {"where": self.where(t, clues)})

    # -- the described row -> its ancestor up a hierarchy (2-4 steps) -> the ancestor's name or an attribute ------
    def hierarchy_questions(self, limit: int) -> None:
        """Add up to ``limit`` ``hierarchy`` questions: a row of a table with a self-reference (a staff member and their
        line manager), described by clues that fit it alone, asked for the name (3-5 hops) or an attribute (4-6 hops)
        of the row 2 to 4 steps up ("the line manager of the line manager of that staff member")."""
        ctx = self.ctx
        tables = [t for t in ctx.spec.tables if ctx.info[t].self_refs and t in ctx.has_dataset and ctx.labelled(t)]
        for t in tables:  # a world without a hierarchy draws nothing here: the other patterns' stream is untouched
            for ref in sorted(ctx.info[t].self_refs):
                role = ctx.info[t].roles[ref]
                pk, name = ctx.spec.tables[t].primary_key, self.named(t)
                clue_cols = [c for c in ctx.attributes(t, ("number", "share", "rank", "category", "date")) if ctx.tables[t][c].n_unique() > 1]
                pattrs = self.answerable(t, set())
                if len(clue_cols) < 2:
                    continue

                def depth(r: dict) -> int:
                    n = 0
                    while r[ref] is not None and n < 4:
                        r, n = ctx.by_key[t][r[ref]], n + 1
                    return n

                rows = sorted((r for r in ctx.rows[t] if depth(r) >= 2), key=lambda r: ctx.label(t, r))
                for row in ctx.rng.sample(rows, min(len(rows), 4 * limit)):
                    if limit <= 0:
                        return
                    clues = _clues(ctx, t, row, [c for c in clue_cols if c != ref])
                    if clues is None:
                        continue
                    steps = ctx.rng.randint(2, depth(row))
                    ask_name = name is not None and (not pattrs or ctx.rng.random() < 0.5)
                    if not ask_name and not pattrs:
                        continue
                    c = None if ask_name else ctx.rng.choice(pattrs)
                    col = Column(capitalized(role) if ask_name else ctx.header(t, c), Field("ancestor", t, "@name" if ask_name else c, ref, role, steps),
                                 "string" if ask_name else ctx.ctype(t, c), exact=not ask_name and ctx.ci(t, c).kind == "rank")
                    target = quote_ident(name if ask_name else c)
                    joins = " ".join(f"JOIN {self.table(t)} a{i + 1} ON {'c' if i == 0 else f'a{i}'}.{quote_ident(ref)} = a{i + 1}.{quote_ident(pk)}"
                                     for i in range(steps))
                    sql = f"SELECT a{steps}.{target} FROM {self.ranked(t, clues)} c {joins} WHERE {self.where_sql('c', clues)}"
                    chain = [(t, str(row[pk]), cc, None) for cc, _, _ in clues]
                    noun, w = ctx.info[t].noun, ctx.ph.world
                    that = "that person" if self.person(t) else f"that {noun}"
                    whose = "the " + " of the ".join([role] * steps) + f" of {that}"
                    clue_list = self.describe(t, clues)
                    final = self.ask(t, c, whose)
                    q = ctx.ph.pick([
                        f"In {w} there is exactly one {noun} that fits all of these clues: {'; '.join(clue_list)}. {final}",
                        f"One {noun} of {w} fits every clue below.\n" + _bullets(clue_list) + f"\n{final}",
                        f"I'm trying to identify {with_article(noun)} in {w}: {join_words(clue_list)}. {final}",
                    ])
                    limit -= self.add("hierarchy", 1 + steps + (0 if ask_name else 1), t, row, col, q, {"from": "dataset"}, sql, chain,
                                      {"where": self.where(t, clues)})

    def person(self, t: str) -> bool:
        """Rows of ``t`` are people (named by Faker person names, or a person noun): clues say "they", not "it"."""
        from worldforge.corpus.lexicon import person_table
        from worldforge.corpus.vocab import faker_person

        info = self.ctx.info[t]
        return person_table(info.noun, faker_person(self.ctx.spec.tables[t].columns.get(info.label_column)))

    def describe(self, t: str, clues: list[tuple]) -> list[str]:
        """The clues as clauses about the row (``its launch price is between $380 and $470``; a person's ``their``)."""
        out = [self.rank_words(t, c, v) if op == "rank" else _clue(self.ctx, t, c, op, v) for c, op, v in clues]
        if self.person(t):
            out = [_personal(x) for x in out]
        self.ctx.rng.shuffle(out)
        return out

    def ask(self, t: str, c: str | None, whose: str) -> str:
        """``What is the name of <whose>?`` (or another wording) / ``What is the <label> of <whose> (in <unit>)?``."""
        ctx = self.ctx
        if c is None:
            return ctx.ph.pick([f"What is the name of {whose}?", f"Name {whose}.", f"Give the name of {whose}."])
        ci = ctx.ci(t, c)
        if ci.kind == "date" and ci.event and ci.event.startswith("was "):  # "When was that station established?"
            return f"When was {whose} {ci.event.removeprefix('was ')}?"
        unit = f" (in {ci.unit.header()})" if ci.unit and ci.unit.header() and ci.kind in ("number", "share") else ""
        if ci.label.startswith("number of ") and not unit:  # "How many readings does that station have?"
            return f"How many {ci.label.removeprefix('number of ')} does {whose} have?"
        return f"What {verb_is(ci.label)} the {ci.label} of {whose}{unit}?"

    def parent_question(self, t: str, pt: str, clues: list[tuple], c: str | None, ref: str | None = None) -> str:
        """The wording of a ``parent`` question: the row of ``t`` by its clues, then the ask about its parent in ``pt``
        through ``ref`` (its name when ``c`` is ``None``, else column ``c``; a parent in a role by its role: "its home team")."""
        ctx = self.ctx
        noun, w = ctx.info[t].noun, ctx.ph.world
        pnoun = ctx.parent_noun(t, ref, pt)[0] if ref else ctx.info[pt].noun
        clue_list = self.describe(t, clues)
        final = self.ask(pt, c, f"{'their' if self.person(t) else 'its'} {pnoun}")
        return ctx.ph.pick([
            f"In {w} there is exactly one {noun} that fits all of these clues: {'; '.join(clue_list)}. {final}",
            f"One {noun} of {w} fits every clue below.\n" + _bullets(clue_list) + f"\n{final}",
            f"I'm trying to identify {with_article(noun)} in {w}: {join_words(clue_list)}. {final}",
            f"Think of the {noun} of {w} for which {join_words(clue_list)}. {final}",
        ])

    # -- the described parent -> its children -> the one with the most ... -> its name or an attribute --
    def extreme_child_questions(self, limit: int) -> None:
        """Add up to ``limit`` ``extreme_child`` questions: a parent described by clues, its child with the strictly
        highest (or lowest) value of a number, asked for that child's name (3 hops) or another number or date (4 hops)."""
        ctx = self.ctx
        for t in _by_family(ctx):
            if limit <= 0:
                return
            if not plain_parents(ctx, t):  # a match's home and away team: no chain walks a role yet
                continue
            ref, pt = plain_parents(ctx, t)[0]
            clue_cols = [c for c in ctx.attributes(pt, ("number", "share", "rank", "category", "date")) if ctx.tables[pt][c].n_unique() > 1]
            nums = [c for c in ctx.numbers(t) if ctx.ci(t, c).kind != "share"]
            if len(clue_cols) < 2 or ctx.tables[pt].height < 3 or pt not in ctx.has_dataset or not nums:
                continue
            name = self.named(t)
            pk, ppk = ctx.spec.tables[t].primary_key, ctx.spec.tables[pt].primary_key
            counts = dict(ctx.tables[t].group_by(ref).len().rows())
            cands = sorted((k for k, n in counts.items() if n >= 3 and k in ctx.by_key[pt]), key=str)
            for key in ctx.rng.sample(cands, len(cands)):
                if limit <= 0:
                    return
                prow = ctx.by_key[pt][key]
                clues = _clues(ctx, pt, prow, clue_cols)
                if clues is None:
                    continue
                kids = [r for r in ctx.rows[t] if r[ref] == key]
                by = ctx.rng.choice(nums)
                desc = ctx.rng.random() < 0.7
                values = sorted((r[by] for r in kids), reverse=desc)
                if values[0] is None or len(values) > 1 and values[0] == values[1]:
                    continue  # a tie: no single answer
                top = next(r for r in kids if r[by] == values[0])
                # never a rank: the child with the highest value is too often ranked 1 ("its national rank" -> 1)
                others = [c for c in self.answerable(t, {by}) if ctx.ci(t, c).kind in ("date", "number")]
                ask_name = name is not None and (not others or ctx.rng.random() < 0.5)
                if not ask_name and not others:
                    continue
                c = None if ask_name else ctx.rng.choice(others)
                col = ctx.name_col(t) if ask_name else ctx.attr_col(t, c)
                agg = "max" if desc else "min"
                target = quote_ident(name if ask_name else c)
                sql = (f"WITH p AS (SELECT * FROM {self.table(pt)} p WHERE {' AND '.join(_sql_clue('p', cc, op, v) for cc, op, v in clues)}), "
                       f"k AS (SELECT c.* FROM {self.table(t)} c JOIN p ON c.{quote_ident(ref)} = p.{quote_ident(ppk)}) "
                       f"SELECT k.{target} FROM k WHERE k.{quote_ident(by)} = (SELECT {agg}({quote_ident(by)}) FROM k) "
                       f"AND (SELECT count(*) FROM p) = 1")  # exactly one parent fits the clues, and one child holds the extreme
                chain = [(pt, str(prow[ppk]), cc, None) for cc, _, _ in clues] + [(t, str(r[pk]), by, None) for r in kids] \
                    + [(t, str(r[pk]), ref, None) for r in kids]
                info, pinfo = ctx.info[t], ctx.info[pt]
                plan_rows = {"from": "children", "section": capitalized(info.plural),
                             "parent": {"slug": slug(pt), "resolve": {"plural": pinfo.plural, "table": pt,
                                                                       "where": [ctx.cond_plan(pt, cc, op, v) for cc, op, v in clues]}}}
                order = {"order": {"field": ctx.field_plan(Field("row", t, by)), "desc": desc}, "limit": 1}
                limit -= self.add("extreme_child", 3 if ask_name else 4, t, top, col, self.extreme_question(t, pt, clues, by, desc, c),
                                  plan_rows, sql, chain, order)

    def extreme_question(self, t: str, pt: str, clues: list[tuple], by: str, desc: bool, c: str | None) -> str:
        """The wording of an ``extreme_child`` question: the parent in ``pt`` by its clues, its child in ``t`` with the
        highest (``desc``) or lowest ``by``, then the ask (its name when ``c`` is ``None``, else column ``c``)."""
        ctx = self.ctx
        info, pnoun, w = ctx.info[t], ctx.info[pt].noun, ctx.ph.world
        clue_list = self.describe(pt, clues)
        label = ctx.ci(t, by).label
        most = "highest" if desc else "lowest"
        whose = f"the {info.noun} of that {pnoun} with the {most} {label}"
        final = self.ask(t, c, whose)
        return ctx.ph.pick([
            f"In {w} exactly one {pnoun} matches all of these: {join_words(clue_list)}. Among its {info.plural}, consider the one whose "
            f"{label} {verb_is(label)} the {most}. {self.ask(t, c, 'that ' + info.noun)}",
            f"One {pnoun} of {w} fits every clue below.\n" + _bullets(clue_list) + f"\n{final}",
            f"Find the {pnoun} of {w} for which {join_words(clue_list)}. {final}",
        ])

    # -- shared by the patterns below --------------------------------------------------------------
    def clue_cols(self, t: str, exclude: tuple[str, ...] = ()) -> list[str]:
        """Columns of ``t`` a clue may blur: numbers, shares, ranks, categories and dates with more than one value."""
        ctx = self.ctx
        return [c for c in ctx.attributes(t, ("number", "share", "rank", "category", "date"))
                if c not in exclude and ctx.tables[t][c].n_unique() > 1]

    def where(self, t: str, clues: list[tuple]) -> list[dict]:
        """Clues as plan conditions (a rank clue: ``op`` ``rank``, its position, order and the group it ranks in)."""
        ctx, out = self.ctx, []
        for c, op, v in clues:
            if op != "rank":
                out.append(ctx.cond_plan(t, c, op, v))
                continue
            group, desc, pos = v
            gplan = None
            if group is not None:
                pt = ctx.spec.tables[t].references[group].parent
                gplan = {"of": "parent", "table": pt, "slug": slug(pt), "read": "@name", "noun": ctx.info[pt].noun,
                         "listed": capitalized(ctx.info[pt].noun)}
            out.append({"field": ctx.field_plan(Field("row", t, c)), "op": "rank", "value": {"position": pos, "desc": desc, "group": gplan}})
        return out

    @staticmethod
    def where_sql(alias: str, clues: list[tuple]) -> str:
        """Clues as the verification SQL's conditions on ``alias`` (a rank clue reads the column :meth:`ranked` adds)."""
        return " AND ".join(f"{alias}.{quote_ident(_rank_name(c, v))} = {v[2]}" if op == "rank" else _sql_clue(alias, c, op, v)
                            for c, op, v in clues)

    def ranked(self, t: str, clues: list[tuple]) -> str:
        """``t`` for the verification SQL, with a column per rank clue holding each row's rank in its group
        (``rank()``: rows that tie share a rank, and the next rank is skipped, as the pages count)."""
        extra = [f"rank() OVER ({'PARTITION BY ' + quote_ident(v[0]) + ' ' if v[0] else ''}ORDER BY {quote_ident(c)} {'DESC' if v[1] else 'ASC'}) "
                 f"AS {quote_ident(_rank_name(c, v))}" for c, op, v in clues if op == "rank"]
        return f"(SELECT *, {', '.join(extra)} FROM {self.table(t)})" if extra else self.table(t)

    def rank_of(self, t: str, c: str, group: str | None, desc: bool) -> dict[Any, int]:
        """Each row's rank (by primary key) in its group by ``c`` (1: the highest when ``desc``; ties share a rank)."""
        key = (t, c, group, desc)
        got = self._ranks.get(key)
        if got is None:
            ctx = self.ctx
            pk = ctx.spec.tables[t].primary_key
            groups: dict[Any, list] = {}
            for r in ctx.rows[t]:
                groups.setdefault(r[group] if group else None, []).append(r[c])
            got = self._ranks[key] = {r[pk]: 1 + sum((x > r[c]) if desc else (x < r[c]) for x in groups[r[group] if group else None])
                                      for r in ctx.rows[t]}
        return got

    def claimed_clues(self, t: str, row: dict, cols: list[str]) -> list[tuple] | None:
        """Half the time, when a page claims the row's rank in its group or table ("the second-lowest launch price of the
        13 models under Sony"): that rank as a clue, and one blurred clue that, with it, fits the row alone; else ``None``."""
        ctx = self.ctx
        pk = ctx.spec.tables[t].primary_key
        parents = {ref for ref, _ in plain_parents(ctx, t)}  # a rank within a role's group ("with X as sender comet") is no clue yet
        whole = set(ctx.attributes(t, ("number", "share", "rank", "date")))  # never null: every row has a rank
        usable = [(c, g, desc, pos) for c, g, desc, pos in self.claimed.get((t, str(row[pk])), [])
                  if c in whole and (g is None or g in parents) and self.rank_of(t, c, g, desc)[row[pk]] == pos]
        if not usable or ctx.rng.random() < 0.5:
            return None
        c, g, desc, pos = ctx.rng.choice(usable)
        ranks = self.rank_of(t, c, g, desc)
        pool = [r for r in ctx.rows[t] if ranks[r[pk]] == pos]
        others = [x for x in cols if x != c]
        for oc in ctx.rng.sample(others, len(others)):
            b = _blur(ctx, t, oc, row[oc])
            if b is not None and [r for r in pool if _match_clue(ctx, r, *b)] == [row]:
                return [(c, "rank", (g, desc, pos)), (oc, "between" if b[1] == "between_num" else b[1], b[2])]
        return None

    def rank_words(self, t: str, c: str, v: tuple) -> str:
        """A rank clue as the pages word it: ``it has the second-lowest launch price of the models of its brand``,
        ``it has the most readings of all the stations``, ``it was the third-earliest of the models of its brand to be
        announced``."""
        ctx = self.ctx
        group, desc, pos = v
        ci, info = ctx.ci(t, c), ctx.info[t]
        nth = "" if pos == 1 else f"{_ORDINAL_WORDS.get(pos, f'{pos}th')}-"
        scope = (f"of the {info.plural} of {self.its(t)} {ctx.info[ctx.spec.tables[t].references[group].parent].noun}" if group
                 else f"of all the {info.plural}")
        if ci.kind == "date":
            most = "latest" if desc else "earliest"
            if ci.event and ci.event.startswith("was "):
                return f"it was the {nth}{most} {scope} to be {ci.event.removeprefix('was ')}"
            return f"its {ci.label} is the {nth}{most} {scope}"
        if ci.label.startswith("number of "):
            return f"it has the {nth}{'most' if desc else 'fewest'} {ci.label.removeprefix('number of ')} {scope}"
        return f"it has the {nth}{'highest' if desc else 'lowest'} {ci.label} {scope}"

    def resolve(self, pt: str, clues: list[tuple]) -> dict:
        """The plan's parent described by clues (resolved on its table's dataset)."""
        return {"slug": slug(pt), "resolve": {"plural": self.ctx.info[pt].plural, "table": pt, "where": self.where(pt, clues)}}

    def its(self, t: str) -> str:
        """The possessive for a row of ``t``: ``their`` for people, else ``its``."""
        return "their" if self.person(t) else "its"

    def intro(self, t: str, clues: list[tuple]) -> str:
        """``In <world> exactly one <noun> fits these clues: ... .`` (worded in one of several ways), ending where the next
        sentence starts (after a space, or a line break after a list)."""
        ctx = self.ctx
        noun, w, cl = ctx.info[t].noun, ctx.ph.world, self.describe(t, clues)
        return ctx.ph.pick([
            f"In {w} exactly one {noun} fits all of these clues: {'; '.join(cl)}. ",
            f"One {noun} of {w} fits every clue below.\n" + _bullets(cl) + "\n",
            f"Think of the {noun} of {w} for which {join_words(cl)}. ",
            f"I'm trying to identify {with_article(noun)} in {w}: {join_words(cl)}. ",
        ])

    def family(self, t: str) -> tuple[str, str, list] | None:
        """``(reference column, parent table, parent keys with 3+ children, shuffled)`` of ``t`` when its parents can be
        described by clues (a dataset page, two clue columns, three rows), else ``None``."""
        ctx = self.ctx
        if not plain_parents(ctx, t):
            return None
        ref, pt = plain_parents(ctx, t)[0]
        if len(self.clue_cols(pt)) < 2 or ctx.tables[pt].height < 3 or pt not in ctx.has_dataset:
            return None
        counts = dict(ctx.tables[t].group_by(ref).len().rows())
        cands = sorted((k for k, n in counts.items() if n >= 3 and k in ctx.by_key[pt]), key=str)
        return ref, pt, ctx.rng.sample(cands, len(cands))

    def have(self, t: str, c: str, op: str, v: Any) -> str:
        """A bound as a predicate: ``have a launch price of at least $500``, ``have at least 14 readings``."""
        label = self.ctx.ci(t, c).label
        bound = _bound(self.ctx, t, c, op, v)
        if _year_like(self.ctx, t, c):  # "a year founded of 2004 or later", never "of no less than 2,004"
            bound = f"{int(v)} or {'later' if op in ('>=', '>') else 'earlier'}"
        if label.startswith("number of "):
            return f"have {bound}"
        return f"have {label} of {bound}" if verb_is(label) == "are" else f"have {with_article(label)} of {bound}"

    # -- exactly one row by its clues -> one of its other attributes ---------------------------------
    def identify_questions(self, limit: int) -> int:
        """``identify``: a row described by 2-3 clues that fit it alone, asked for another of its attributes (2 hops)."""
        ctx, made = self.ctx, 0
        for t in _labelled_tables(ctx, 8):
            cols = self.clue_cols(t)
            if made >= limit or t not in ctx.has_dataset or len(cols) < 2:
                continue
            pk = ctx.spec.tables[t].primary_key
            rows = sorted(ctx.rows[t], key=lambda r: ctx.label(t, r))
            for row in ctx.rng.sample(rows, min(len(rows), 3 * limit)):
                if made >= limit:
                    break
                clues = self.claimed_clues(t, row, cols) or _clues(ctx, t, row, cols)
                if clues is None:
                    continue
                used = {c for c, _, _ in clues}
                asks = [c for c in self.answerable(t, used) if ctx.tables[t][c].n_unique() > 1]
                if not asks:
                    continue
                c = ctx.rng.choice(asks)
                sql = f"SELECT c.{quote_ident(c)} FROM {self.ranked(t, clues)} c WHERE {self.where_sql('c', clues)}"
                q = f"{self.intro(t, clues)}{self.ask(t, c, 'this ' + ctx.info[t].noun)}"
                chain = [(t, str(row[pk]), cc, None) for cc in used]
                made += self.add("identify", 2, t, row, ctx.attr_col(t, c), q, {"from": "dataset"}, sql, chain, {"where": self.where(t, clues)})
        return made

    # -- the described parent -> how many of its children ... / their combined ... --------------------
    def aggregate_questions(self, limit: int) -> int:
        """``aggregate``: a parent described by clues, asked how many of its children meet a condition (a bound on a
        number, or a category), or the combined value of an additive column over them (3 hops)."""
        ctx, made = self.ctx, 0
        for t in _by_family(ctx):
            fam = self.family(t)
            if fam is None or made >= limit:
                continue
            ref, pt, cands = fam
            pk, ppk = ctx.spec.tables[t].primary_key, ctx.spec.tables[pt].primary_key
            nums, cats = ctx.numbers(t), ctx.categories(t)
            for key in cands:
                if made >= limit:
                    break
                prow = ctx.by_key[pt][key]
                clues = _clues(ctx, pt, prow, self.clue_cols(pt))
                kids = [r for r in ctx.rows[t] if r[ref] == key]
                if clues is None or len(kids) < 4:
                    continue
                info = ctx.info[t]
                additive = [c for c in nums if ctx.ci(t, c).additive]
                parent_sql = f"FROM {self.table(pt)} p WHERE {self.where_sql('p', clues)}"
                link = f"c.{quote_ident(ref)} = p.{quote_ident(ppk)}"
                chain = [(pt, str(prow[ppk]), cc, None) for cc, _, _ in clues] + [(t, str(r[pk]), ref, None) for r in kids]
                if additive and ctx.rng.random() < 0.3:  # the combined value of an additive column
                    c = ctx.rng.choice(additive)
                    vals = [r[c] for r in kids]
                    total = sum(vals) if all(isinstance(v, int) for v in vals) else round(math.fsum(float(v) for v in vals), 2)
                    ci = ctx.ci(t, c)
                    unit = f" (in {ci.unit.header()})" if ci.unit and ci.unit.header() else ""
                    col = Column(f"Combined {ci.label}", Field("row", t, c), "number", agg="sum", exact=isinstance(total, int))
                    agg_sql = f"sum(c.{quote_ident(c)})" if isinstance(total, int) else f"round(sum(c.{quote_ident(c)}), 2)"
                    sql = f"SELECT (SELECT {agg_sql} FROM {self.table(t)} c WHERE {link}) {parent_sql}"
                    ask = f"What {verb_is(ci.label)} the combined {ci.label} of {self.its(pt)} {info.plural}{unit}?"
                    cells = [(t, str(r[pk]), c, None) for r in kids]
                    where: list[dict] = []
                    answer = total
                else:
                    cond = self.count_condition(t, kids, nums, cats)
                    if cond is None:
                        continue
                    c, op, v = cond
                    n = sum(_match(ctx, r, c, op, v) for r in kids)
                    col = Column(f"Number of {info.plural}", Field("row", t, "@name"), "number", agg="count", exact=True)
                    sql = f"SELECT (SELECT count(*) FROM {self.table(t)} c WHERE {link} AND {_sql_cond('c', c, op, v)}) {parent_sql}"
                    pred = self.have(t, c, op, v) if op != "in" else f"have {v[0]} as their {ctx.ci(t, c).label}"
                    ask = ctx.ph.pick([f"How many of {self.its(pt)} {info.plural} {pred}?",
                                       f"Of {self.its(pt)} {info.plural}, how many {pred}?"])
                    cells = [(t, str(r[pk]), c, None) for r in kids]
                    where = [ctx.cond_plan(t, c, op, v)]
                    answer = n
                q = f"{self.intro(pt, clues)}{ask}"
                rows_plan = {"from": "children", "section": capitalized(info.plural), "parent": self.resolve(pt, clues)}
                made += self.add("aggregate", 3, t, prow, col, q, rows_plan, sql, chain + cells, {"where": where}, computed=(answer, cells))
        return made

    def count_condition(self, t: str, kids: list[dict], nums: list[str], cats: list[str]) -> tuple[str, str, Any] | None:
        """A condition that some but not all of ``kids`` meet: a category value, or a round bound near their median."""
        ctx = self.ctx
        for _ in range(6):
            if cats and ctx.rng.random() < 0.4:
                c = ctx.rng.choice(cats)
                v = ctx.rng.choice(sorted({r[c] for r in kids}, key=str))
                cond = (c, "in", (v,))
            elif nums:
                c = ctx.rng.choice(nums)
                vals = sorted(float(r[c]) for r in kids)
                th = nice_number(vals[len(vals) // 2])
                cond = (c, ">=" if ctx.rng.random() < 0.6 else "<=", th)
            else:
                return None
            n = sum(_match(ctx, r, *cond) for r in kids)
            if 1 <= n < len(kids):
                return cond
        return None

    # -- the described parent -> the only child that is not ... -------------------------------------
    def exclusion_questions(self, limit: int) -> int:
        """``exclusion``: a parent described by clues, all of whose children but one share a category value or meet a
        bound; asked for the one that does not: its name (3 hops) or another attribute (4 hops)."""
        ctx, made = self.ctx, 0
        for t in _by_family(ctx):
            fam = self.family(t)
            if fam is None or made >= limit:
                continue
            ref, pt, cands = fam
            pk, ppk = ctx.spec.tables[t].primary_key, ctx.spec.tables[pt].primary_key
            name = self.named(t)
            for key in cands:
                if made >= limit:
                    break
                prow = ctx.by_key[pt][key]
                kids = [r for r in ctx.rows[t] if r[ref] == key]
                odd = self.odd_one(t, kids)
                clues = _clues(ctx, pt, prow, self.clue_cols(pt)) if odd else None
                if clues is None:
                    continue
                c, op, v, row = odd
                others = [x for x in self.answerable(t, {c}) if ctx.ci(t, x).kind in ("number", "date")]
                ask_name = name is not None and (not others or ctx.rng.random() < 0.6)
                if not ask_name and not others:
                    continue
                a = None if ask_name else ctx.rng.choice(others)
                info = ctx.info[t]
                col = ctx.name_col(t) if ask_name else ctx.attr_col(t, a)
                target = quote_ident(name if ask_name else a)
                if op == "not_in":
                    rule, keep = f"share the same {ctx.ci(t, c).label}, {v[0]}", f"NOT ({_sql_cond('k', c, 'in', v)})"
                else:  # "<" or ">": the one below (above) the bound all the others reach
                    rule = self.have(t, c, ">=" if op == "<" else "<=", v)
                    keep = _sql_cond("k", c, op, v)
                sql = (f"WITH p AS (SELECT * FROM {self.table(pt)} p WHERE {self.where_sql('p', clues)}), "
                       f"k AS (SELECT c.* FROM {self.table(t)} c JOIN p ON c.{quote_ident(ref)} = p.{quote_ident(ppk)}) "
                       f"SELECT k.{target} FROM k WHERE {keep} AND (SELECT count(*) FROM p) = 1")
                chain = [(pt, str(prow[ppk]), cc, None) for cc, _, _ in clues] + [(t, str(r[pk]), c, None) for r in kids] \
                    + [(t, str(r[pk]), ref, None) for r in kids]
                q = ctx.ph.pick([
                    f"{self.intro(pt, clues)}All of {self.its(pt)} {info.plural} but one {rule}. {self.ask(t, a, 'the odd one out')}",
                    f"{self.intro(pt, clues)}Every one of {self.its(pt)} {info.plural} except one {rule.replace('have ', 'has ', 1).replace('share ', 'shares ', 1)}. "
                    f"{self.ask(t, a, 'the exception')}",
                ])
                rows_plan = {"from": "children", "section": capitalized(info.plural), "parent": self.resolve(pt, clues)}
                where = [{"field": ctx.field_plan(Field("row", t, c)), "op": op, "value": list(v) if op == "not_in" else v}]
                made += self.add("exclusion", 3 if ask_name else 4, t, row, col, q, rows_plan, sql, chain, {"where": where})
        return made

    def odd_one(self, t: str, kids: list[dict]) -> tuple[str, str, Any, dict] | None:
        """``(column, op, value, the odd child)``: a category all of ``kids`` but one share (``not_in``), or a round bound
        all but one reach (``<``: the odd one is below it; ``>``: above), with at least three children."""
        ctx = self.ctx
        if len(kids) < 3:
            return None
        opts = []
        for c in ctx.categories(t):
            vals = [r[c] for r in kids]
            common = max(set(vals), key=lambda x: (vals.count(x), str(x)))
            if vals.count(common) == len(vals) - 1:
                opts.append((c, "not_in", (common,), next(r for r in kids if r[c] != common)))
        for c in ctx.numbers(t):
            whole = ctx.tables[t].schema[c] in (pl.Int64, pl.Int32)
            vals = sorted(float(r[c]) for r in kids)
            # a whole-number column's bound is one of its values ("at least 2 wins", never "at least 0.5")
            low = vals[1] if whole else nice_number((vals[0] + vals[1]) / 2)
            if vals[0] < low <= vals[1]:
                opts.append((c, "<", int(low) if whole else low, next(r for r in kids if float(r[c]) == vals[0])))
            high = vals[-2] if whole else nice_number((vals[-1] + vals[-2]) / 2)
            high = int(high) if whole else high
            if vals[-2] <= high < vals[-1]:
                opts.append((c, ">", high, next(r for r in kids if float(r[c]) == vals[-1])))
        return ctx.rng.choice(opts) if opts else None

    # -- a named row -> the one row that compares with it in two ways -----------------------------------
    def comparative_questions(self, limit: int) -> int:
        """``comparative``: the one row (of the same parent as a named row, or of the whole table) with a higher or lower
        value than the named row on one column and an earlier or later one on another; asked for its name (3 hops)
        or another attribute (4 hops)."""
        ctx, made = self.ctx, 0
        for t in _labelled_tables(ctx, 8):
            if made >= limit or t not in ctx.has_dataset:
                continue
            cols = [c for c in ctx.numbers(t) + [d for d in ctx.attributes(t, ("date",)) if ctx.tables[t][d].n_unique() > 3]
                    if ctx.ci(t, c).kind != "rank"]
            if len(cols) < 2:
                continue
            name, pk = self.named(t), ctx.spec.tables[t].primary_key
            if name is None:  # a row known by a designation ("Ridge Station reading of 26 February 2035") names no anchor
                continue
            parents = plain_parents(ctx, t)
            rows = sorted(ctx.rows[t], key=lambda r: ctx.label(t, r))
            for _ in range(12 * limit):
                if made >= limit:
                    break
                a = ctx.rng.choice(rows)
                x, y = ctx.rng.sample(cols, 2)
                gx, gy = ctx.rng.random() < 0.5, ctx.rng.random() < 0.5
                same = bool(parents) and ctx.rng.random() < 0.6
                ref = parents[0][0] if same else None
                pool = [r for r in rows if ref is None or r[ref] == a[ref]]
                hits = [r for r in pool if (r[x] > a[x] if gx else r[x] < a[x]) and (r[y] > a[y] if gy else r[y] < a[y])]
                if len(hits) != 1:
                    continue
                row = hits[0]
                others = [c for c in self.answerable(t, {x, y}) if ctx.ci(t, c).kind in ("number", "date", "category")]
                ask_name = name is not None and (not others or ctx.rng.random() < 0.6)
                if not ask_name and not others:
                    continue
                c = None if ask_name else ctx.rng.choice(others)
                col = ctx.name_col(t) if ask_name else ctx.attr_col(t, c)
                target = quote_ident(name if ask_name else c)
                alabel = ctx.label(t, a)
                conds = [f"r.{quote_ident(x)} {'>' if gx else '<'} a.{quote_ident(x)}", f"r.{quote_ident(y)} {'>' if gy else '<'} a.{quote_ident(y)}"]
                if same:
                    conds.append(f"r.{quote_ident(ref)} = a.{quote_ident(ref)}")
                sql = (f"SELECT r.{target} FROM {self.table(t)} r, {self.table(t)} a WHERE a.{quote_ident(pk)} = {_sql_value(a[pk])} "
                       f"AND {' AND '.join(conds)}")
                info = ctx.info[t]
                c1, c2 = self.compared(t, x, gx, alabel), self.compared(t, y, gy, "them" if self.person(t) else "it")
                if same:
                    pnoun = ctx.info[parents[0][1]].noun
                    scope = f"Among the {info.plural} of the same {pnoun} as {alabel} in {ctx.ph.world}, exactly one {c1} and {c2}."
                else:
                    scope = f"Exactly one {info.noun} of {ctx.ph.world} {c1} and {c2}."
                q = ctx.ph.pick([f"{scope} {self.ask(t, c, 'that ' + info.noun)}",
                                 f"{scope} {self.ask(t, c, 'the ' + info.noun + ' in question')}"])
                anchor = {"label": alabel, "table_slug": slug(t), "plural": info.plural}
                where = [{"field": ctx.field_plan(Field("row", t, cc)), "op": ">" if g else "<",
                          "value": {"anchor": "a", "field": ctx.field_plan(Field("row", t, cc))}} for cc, g in ((x, gx), (y, gy))]
                rows_plan = ({"from": "children", "section": capitalized(info.plural), "parent": {"anchor": "a", "slug": slug(parents[0][1])}}
                             if same else {"from": "dataset"})
                chain = [(t, str(a[pk]), x, None), (t, str(a[pk]), y, None), (t, str(row[pk]), x, None), (t, str(row[pk]), y, None)]
                made += self.add("comparative", 3 if ask_name else 4, t, row, col, q, rows_plan, sql, chain, {"anchors": {"a": anchor}, "where": where})
        return made

    def compared(self, t: str, c: str, greater: bool, other: str) -> str:
        """``has a higher launch price than X``, ``has fewer readings than X``, ``was announced later than X``."""
        ci = self.ctx.ci(t, c)
        if ci.kind == "date":
            when = "later" if greater else "earlier"
            return f"{ci.event} {when} than {other}" if ci.event else f"has a {when} {ci.label} than {other}"
        if ci.label.startswith("number of "):
            return f"has {'more' if greater else 'fewer'} {ci.label.removeprefix('number of ')} than {other}"
        more = "higher" if greater else "lower"
        return f"has {more} {ci.label} than {other}" if verb_is(ci.label) == "are" else f"has a {more} {ci.label} than {other}"

    # -- the described row -> its parent -> the sibling dated next after it ----------------------------
    def temporal_questions(self, limit: int) -> int:
        """``temporal``: a row described by clues, then the row of the same parent whose event came next after its own
        (a strictly later date, the earliest such); asked for that row's name (4 hops) or another attribute (5 hops)."""
        ctx = self.ctx
        made = self.archive_questions((limit + 1) // 2) if ctx.scenario else 0  # across the base world and the scenario
        for t in _by_family(ctx):
            dc = ctx.event(t)
            if made >= limit or dc is None or t not in ctx.has_dataset:
                continue
            if not plain_parents(ctx, t):  # a match's home and away team: no chain walks a role yet
                continue
            ref, pt = plain_parents(ctx, t)[0]
            cols = self.clue_cols(t, (dc,))
            if len(cols) < 2:
                continue
            name, pk = self.named(t), ctx.spec.tables[t].primary_key
            rows = sorted(ctx.rows[t], key=lambda r: ctx.label(t, r))
            for x in ctx.rng.sample(rows, min(len(rows), 4 * limit)):
                if made >= limit:
                    break
                later = sorted((r for r in rows if r[ref] == x[ref] and r[dc] > x[dc]), key=lambda r: r[dc])
                if not later or len(later) > 1 and later[0][dc] == later[1][dc]:
                    continue  # the last of its family, or two dated the same day next
                clues = _clues(ctx, t, x, cols)
                if clues is None:
                    continue
                row = later[0]
                others = [c for c in self.answerable(t, {dc}) if ctx.ci(t, c).kind in ("number", "date", "category")]
                ask_name = name is not None and (not others or ctx.rng.random() < 0.5)
                if not ask_name and not others:
                    continue
                c = None if ask_name else ctx.rng.choice(others)
                col = ctx.name_col(t) if ask_name else ctx.attr_col(t, c)
                target = quote_ident(name if ask_name else c)
                d = quote_ident(dc)
                sql = (f"WITH x AS (SELECT * FROM {self.table(t)} c WHERE {self.where_sql('c', clues)}), "
                       f"s AS (SELECT c.* FROM {self.table(t)} c JOIN x ON c.{quote_ident(ref)} = x.{quote_ident(ref)} WHERE c.{d} > x.{d}) "
                       f"SELECT s.{target} FROM s WHERE s.{d} = (SELECT min({d}) FROM s) AND (SELECT count(*) FROM x) = 1")
                info, pnoun, ci = ctx.info[t], ctx.info[pt].noun, ctx.ci(t, dc)
                whose = (f"the next {info.noun} of {self.its(t)} {pnoun} that {ci.event} after {'them' if self.person(t) else 'it'}" if ci.event
                         else f"the {info.noun} of {self.its(t)} {pnoun} whose {ci.label} comes next after {self.its(t)} own")
                q = f"{self.intro(t, clues)}{self.ask(t, c, whose)}"
                fd = ctx.field_plan(Field("row", t, dc))
                anchor = {"table_slug": slug(t), "plural": info.plural, "where": self.where(t, clues)}
                rows_plan = {"from": "children", "section": capitalized(info.plural), "parent": {"anchor": "x", "slug": slug(pt)}}
                extra = {"anchors": {"x": anchor}, "where": [{"field": fd, "op": ">", "value": {"anchor": "x", "field": fd}}],
                         "order": {"field": fd, "desc": False}, "limit": 1}
                chain = [(t, str(x[pk]), cc, None) for cc, _, _ in clues] + [(t, str(x[pk]), ref, None), (t, str(x[pk]), dc, None)] \
                    + [(t, str(r[pk]), dc, None) for r in later] + [(t, str(r[pk]), ref, None) for r in later]
                made += self.add("temporal", 4 if ask_name else 5, t, row, col, q, rows_plan, sql, chain, extra)
        return made

    # -- (a scenario) the row as the base world's archive described it -> its value now -----------------
    def archive_questions(self, limit: int) -> int:
        """``temporal`` in a time-shifted scenario: a row described by a value the base world's archived dataset gave
        it (one that has changed since: "its launch price was between $380 and $470 in 2029") and by clues as it is
        now, asked for that column's value now (3 hops: the archive, the current dataset, the answer)."""
        ctx, made = self.ctx, 0
        if ctx.scenario is None or ctx.base is None or ctx.base_spec is None:
            return 0
        year = ctx.base_spec.as_of_date.year
        for t in _labelled_tables(ctx, 8):
            arch = [c for c in ctx.attributes(t, ("number", "share", "category")) if c in ctx.archived.get(t, set())]
            if made >= limit or not arch or t not in ctx.has_dataset or t not in ctx.base:
                continue
            pk = ctx.spec.tables[t].primary_key
            base = {r[pk]: r for r in ctx.base[t].to_dicts()}
            rows = sorted((r for r in ctx.rows[t] if r[pk] in base), key=lambda r: ctx.label(t, r))
            for row in ctx.rng.sample(rows, min(len(rows), 4 * limit)):
                if made >= limit:
                    break
                brow = base[row[pk]]
                changed = [c for c in arch if brow[c] is not None and brow[c] != row[c]]
                past = _blur(ctx, t, c := ctx.rng.choice(changed), brow[c]) if changed else None
                if past is None or _match_clue(ctx, row, *past):  # the range must tell then from now
                    continue
                now = self.now_clues(t, row, past, base, exclude=(c,))
                if now is None:
                    continue
                pc, pop, pv = past
                pop = "between" if pop == "between_num" else pop
                then = _past(self.describe(t, [(pc, pop, pv)])[0], year)
                clauses = self.describe(t, now) + [then]
                ctx.rng.shuffle(clauses)
                info, ci = ctx.info[t], ctx.ci(t, c)
                unit = f" (in {ci.unit.header()})" if ci.unit and ci.unit.header() and ci.kind in ("number", "share") else ""
                ask = f"What {verb_is(ci.label)} {self.its(t)} {ci.label} as of {ctx.as_of()}{unit}?"
                noun, w = info.noun, ctx.ph.world
                q = ctx.ph.pick([
                    f"In {w} exactly one {noun} fits all of these clues: {'; '.join(clauses)}. {ask}",
                    f"One {noun} of {w} fits every clue below.\n" + _bullets(clauses) + f"\n{ask}",
                    f"I'm trying to identify {with_article(noun)} in {w}: {join_words(clauses)}. {ask}",
                ])
                base_table = f"{quote_ident('main')}.{quote_ident(t)}"
                sql = (f"SELECT c.{quote_ident(c)} FROM {self.table(t)} c JOIN {base_table} b ON b.{quote_ident(pk)} = c.{quote_ident(pk)} "
                       f"WHERE {_sql_clue('b', pc, pop, pv)} AND {self.where_sql('c', now)}")
                where = [{"field": ctx.field_plan(Field("base", t, pc)), "op": pop, "value": ctx.cond_plan(t, pc, pop, pv)["value"]}] \
                    + self.where(t, now)
                chain = [(t, str(row[pk]), pc, "world")] + [(t, str(row[pk]), cc, None) for cc, _, _ in now]
                extra = {"where": where, "base": {"title": f"Archived dataset: {info.plural} as of {year}"}}
                made += self.add("temporal", 3, t, row, ctx.attr_col(t, c), q, {"from": "dataset"}, sql, chain, extra)
        return made

    def now_clues(self, t: str, row: dict, past: tuple, base: dict, exclude: tuple[str, ...]) -> list[tuple] | None:
        """1-2 blurred clues on ``row`` as it is now that, with the ``past`` clue on the base world's rows, fit it alone."""
        ctx = self.ctx
        pk = ctx.spec.tables[t].primary_key
        cols = self.clue_cols(t, exclude)
        pool = [r for r in ctx.rows[t] if r[pk] in base and _match_clue(ctx, base[r[pk]], *past)]
        for _ in range(8):
            picked = ctx.rng.sample(cols, min(len(cols), ctx.rng.choice((1, 2))))
            clues = [b for b in (_blur(ctx, t, cc, row[cc]) for cc in picked) if b is not None]
            if clues and [r for r in pool if all(_match_clue(ctx, r, *x) for x in clues)] == [row]:
                return [(cc, "between" if op == "between_num" else op, v) for cc, op, v in clues]
        return None

    # -- two described rows -> the parent they share -> its name, an attribute, or its extreme child ---
    def two_entity_questions(self, limit: int) -> int:
        """``two_entity``: two rows, each described by clues that fit it alone (of one child table or two), whose chains
        meet at the parent they share; asked for that parent's name (4 hops), an attribute (5 hops), or the name of its
        child with the highest or lowest value of a number (6 hops)."""
        ctx, made = self.ctx, 0
        kids_of: dict[str, list[tuple[str, str]]] = {}
        for t in _labelled_tables(ctx):
            for ref, pt in plain_parents(ctx, t)[:1]:
                if t in ctx.has_dataset and len(self.clue_cols(t)) >= 2:
                    kids_of.setdefault(pt, []).append((t, ref))
        for pt, kids in sorted(kids_of.items()):
            if made >= limit:
                break
            ppk = ctx.spec.tables[pt].primary_key
            pname = self.named(pt)
            pattrs = [c for c in self.answerable(pt, set()) if ctx.tables[pt][c].n_unique() > 1]
            keys = sorted(ctx.by_key[pt], key=str)
            for key in ctx.rng.sample(keys, min(len(keys), 4 * limit)):
                if made >= limit:
                    break
                (t1, r1), (t2, r2) = ctx.rng.choice(kids), ctx.rng.choice(kids)
                a_rows = [r for r in ctx.rows[t1] if r[r1] == key]
                b_rows = [r for r in ctx.rows[t2] if r[r2] == key]
                if not a_rows or not b_rows or (t1 == t2 and len(a_rows) < 2):
                    continue
                a = ctx.rng.choice(a_rows)
                b = ctx.rng.choice([r for r in b_rows if r is not a])
                ca, cb = _clues(ctx, t1, a, self.clue_cols(t1)), _clues(ctx, t2, b, self.clue_cols(t2))
                if ca is None or cb is None:
                    continue
                prow = ctx.by_key[pt][key]
                chains = [{"plural": ctx.info[t].plural, "table_slug": slug(t), "where": self.where(t, cl)} for t, cl in ((t1, ca), (t2, cb))]
                meet = (f"p.{quote_ident(ppk)} IN (SELECT c.{quote_ident(r1)} FROM {self.table(t1)} c WHERE {self.where_sql('c', ca)}) AND "
                        f"p.{quote_ident(ppk)} IN (SELECT c.{quote_ident(r2)} FROM {self.table(t2)} c WHERE {self.where_sql('c', cb)})")
                chain = [(t, str(r[ctx.spec.tables[t].primary_key]), cc, None) for t, r, cl in ((t1, a, ca), (t2, b, cb)) for cc, _, _ in cl] \
                    + [(t1, str(a[ctx.spec.tables[t1].primary_key]), r1, None), (t2, str(b[ctx.spec.tables[t2].primary_key]), r2, None)]
                n1, n2, pnoun = ctx.info[t1].noun, ctx.info[t2].noun, ctx.info[pt].noun
                d1, d2 = self.describe(t1, ca), self.describe(t2, cb)
                first = f"one {n1} {join_words(_relative(d1))}"
                second = f"another {n2} {join_words(_relative(d2))}" if t1 == t2 else f"one {n2} {join_words(_relative(d2))}"
                setup = ctx.ph.pick([f"In {ctx.ph.world} there is {first}, and {second}. Both belong to the same {pnoun}.",
                                     f"Two chains in {ctx.ph.world} lead to the same {pnoun}: {first}, and {second}."])
                roll = ctx.rng.random()
                ext = self.extreme_of(pt, prow) if roll < 0.35 else None
                if ext is not None:  # the shared parent's child with the highest (lowest) value: 6 hops
                    t3, ref3, by, desc, top = ext
                    k3 = self.named(t3)
                    sql = (f"WITH p AS (SELECT * FROM {self.table(pt)} p WHERE {meet}), "
                           f"k AS (SELECT c.* FROM {self.table(t3)} c JOIN p ON c.{quote_ident(ref3)} = p.{quote_ident(ppk)}) "
                           f"SELECT k.{quote_ident(k3)} FROM k WHERE k.{quote_ident(by)} = (SELECT {'max' if desc else 'min'}({quote_ident(by)}) FROM k) "
                           f"AND (SELECT count(*) FROM p) = 1")
                    label = ctx.ci(t3, by).label
                    most = "highest" if desc else "lowest"
                    q = f"{setup} {self.ask(t3, None, f'the {ctx.info[t3].noun} of that {pnoun} with the {most} {label}')}"
                    rows_plan = {"from": "children", "section": capitalized(ctx.info[t3].plural), "parent": {"common": chains, "slug": slug(pt)}}
                    kids3 = [r for r in ctx.rows[t3] if r[ref3] == key]
                    pk3 = ctx.spec.tables[t3].primary_key
                    chain3 = chain + [(t3, str(r[pk3]), by, None) for r in kids3] + [(t3, str(r[pk3]), ref3, None) for r in kids3]
                    made += self.add("two_entity", 6, t3, top, ctx.name_col(t3), q, rows_plan, sql, chain3,
                                     {"order": {"field": ctx.field_plan(Field("row", t3, by)), "desc": desc}, "limit": 1})
                    continue
                ask_name = pname is not None and (not pattrs or roll < 0.6)
                if not ask_name and not pattrs:
                    continue
                c = None if ask_name else ctx.rng.choice(pattrs)
                col = ctx.name_col(pt) if ask_name else ctx.attr_col(pt, c)
                sql = f"SELECT p.{quote_ident(pname if ask_name else c)} FROM {self.table(pt)} p WHERE {meet}"
                q = f"{setup} {self.ask(pt, c, 'that ' + pnoun)}"
                made += self.add("two_entity", 4 if ask_name else 5, pt, prow, col, q, {"from": "common", "slug": slug(pt), "chains": chains}, sql, chain)
        return made

    def extreme_of(self, pt: str, prow: dict) -> tuple[str, str, str, bool, dict] | None:
        """``(child table, reference, number, highest?, the child)``: a named child of ``prow`` holding the strictly highest
        (lowest) value of one of its numbers among its siblings, when one does."""
        ctx = self.ctx
        ppk = ctx.spec.tables[pt].primary_key
        for t in _labelled_tables(ctx):
            for ref, p in plain_parents(ctx, t)[:1]:
                if p != pt or self.named(t) is None:
                    continue
                kids = [r for r in ctx.rows[t] if r[ref] == prow[ppk]]
                nums = [c for c in ctx.numbers(t) if ctx.ci(t, c).kind != "share"]
                if len(kids) < 3 or not nums:
                    continue
                by, desc = ctx.rng.choice(nums), ctx.rng.random() < 0.7
                vals = sorted((r[by] for r in kids), reverse=desc)
                if vals[0] != vals[1]:
                    return t, ref, by, desc, next(r for r in kids if r[by] == vals[0])
        return None

    # -- a row a news report dates -> its parent -> the parent's name or an attribute -------------------
    def event_anchored_questions(self, limit: int) -> int:
        """``event_anchored``: a row identified by the day of its event as a news report or press release states it (and,
        when that day is shared, a category), asked for its parent's name (3 hops) or an attribute (4 hops); a row
        without a parent, for another of its own attributes (2 hops)."""
        ctx, made = self.ctx, 0
        for t in _labelled_tables(ctx):
            dc = ctx.event(t)
            if made >= limit or dc is None or not ctx.ci(t, dc).event or t not in ctx.has_dataset:
                continue
            parents = plain_parents(ctx, t)[:1]
            ref, pt = parents[0] if parents else (None, None)
            pk = ctx.spec.tables[t].primary_key
            reported = self.reported.get((t, dc), {})
            cats = ctx.categories(t)
            rows = sorted((r for r in ctx.rows[t] if str(r[pk]) in reported), key=lambda r: ctx.label(t, r))
            for row in ctx.rng.sample(rows, min(len(rows), 3 * limit)):
                if made >= limit:
                    break
                if pt is not None and row.get(ref) not in ctx.by_key[pt]:
                    continue
                day = row[dc]
                clues = [(dc, "between", (day, day))]
                same = [r for r in ctx.rows[t] if r[dc] == day]
                for c in ctx.rng.sample(cats, len(cats)):
                    if len(same) == 1:
                        break
                    clues.append((c, "in", (row[c],)))
                    same = [r for r in same if r[c] == row[c]]
                if len(same) != 1:
                    continue
                used = {c for c, _, _ in clues}
                if pt is not None:
                    pname, pattrs = self.named(pt), self.answerable(pt, set())
                    ask_name = pname is not None and (not pattrs or ctx.rng.random() < 0.4)
                    if not ask_name and not pattrs:
                        continue
                    c = None if ask_name else ctx.rng.choice(pattrs)
                    col, hops = ctx.parent_col(t, ref, pt, "@name" if ask_name else c), 3 if ask_name else 4
                    ppk = ctx.spec.tables[pt].primary_key
                    sql = (f"SELECT p.{quote_ident(pname if ask_name else c)} FROM {self.table(t)} c JOIN {self.table(pt)} p "
                           f"ON c.{quote_ident(ref)} = p.{quote_ident(ppk)} WHERE {self.where_sql('c', clues)}")
                    ask = self.ask(pt, c, f"{self.its(t)} {ctx.info[pt].noun}")
                else:
                    own = [x for x in self.answerable(t, used) if ctx.tables[t][x].n_unique() > 1]
                    if not own:
                        continue
                    c = ctx.rng.choice(own)
                    col, hops = ctx.attr_col(t, c), 2
                    sql = f"SELECT c.{quote_ident(c)} FROM {self.table(t)} c WHERE {self.where_sql('c', clues)}"
                    ask = self.ask(t, c, f"that {ctx.info[t].noun}")
                noun, ev = ctx.info[t].noun, ctx.ci(t, dc).event
                source = "a press release" if reported[str(row[pk])] == "press_release" else ctx.rng.choice(["a news report", "a news story"])
                more = [_clue(ctx, t, cc, op, v) for cc, op, v in clues[1:]]
                if self.person(t):
                    more = [_personal(m) for m in more]
                said = f"{ev} on {ctx.words_date(day)}" + (f", and {join_words(more)}" if more else "")
                q = ctx.ph.pick([
                    f"According to {source}, {with_article(noun)} of {ctx.ph.world} {said}. {ask}",
                    f"{capitalized(source)} confirmed that {with_article(noun)} of {ctx.ph.world} {said}. {ask}",
                ])
                chain = [(t, str(row[pk]), cc, None) for cc, _, _ in clues] + ([(t, str(row[pk]), ref, None)] if ref else [])
                made += self.add("event_anchored", hops, t, row, col, q, {"from": "dataset"}, sql, chain, {"where": self.where(t, clues)})
        return made


def _bullets(clauses: list[str]) -> str:
    """Clauses as a Markdown list, one a line, each capitalised."""
    return "\n".join(f"- {capitalized(x)}" for x in clauses)


def _relative(clauses: list[str]) -> list[str]:
    """Clues about a row as relative clauses after its noun: ``its price is ...`` -> ``whose price is ...``,
    ``it was announced ...`` -> ``that was announced ...``, ``they were born ...`` -> ``who was born ...``."""
    out = []
    for x in clauses:
        for a, b in (("its ", "whose "), ("their ", "whose "), ("it has ", "that has "), ("it ", "that "), ("they were ", "who was "),
                     ("they have ", "who has "), ("they ", "who ")):
            if x.startswith(a):
                x = b + x[len(a):]
                break
        out.append(x)
    return out


_ORDINAL_WORDS = {2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth", 9: "ninth", 10: "tenth"}


def _rank_name(c: str, v: tuple) -> str:
    """The verification SQL's column holding a rank clue's ranks (``_rank_<column>_<group>_<d|a>``)."""
    return f"_rank_{c}_{v[0] or 'all'}_{'d' if v[1] else 'a'}"


def _past(clue: str, year: int) -> str:
    """A clue about a row as it was in ``year``: ``its price is between ...`` -> ``its price was between ... in 2029``."""
    for a, b in ((" is ", " was "), (" are ", " were "), ("it has ", "it had "), ("they have ", "they had ")):
        if a in clue:
            return clue.replace(a, b, 1) + f" in {year}"
    return f"{clue} in {year}"


def _sql_cond(alias: str, c: str, op: str, v: Any) -> str:
    """A condition (``>=``, ``<=``, ``>``, ``<``, ``in``, ``between``) on ``alias.c`` as SQL."""
    if op in ("in", "between"):
        return _sql_clue(alias, c, op, v)
    return f"{alias}.{quote_ident(c)} {op} {_sql_value(v)}"


def _personal(clue: str) -> str:
    """A clue about a person: ``its role is ...`` -> ``their role is ...``, ``it was born ...`` -> ``they were born ...``,
    ``it has ...`` -> ``they have ...``."""
    for a, b in (("its ", "their "), ("it was ", "they were "), ("it has ", "they have "), ("it ", "they ")):
        if clue.startswith(a):
            return b + clue[len(a):]
    return clue


def deep_questions(ctx: TaskContext, facts: pl.DataFrame, limit: int = 24, pages: pl.DataFrame | None = None,
                   claims: pl.DataFrame | None = None) -> list[DeepQuestion]:
    """Up to ``limit`` deep questions of one corpus, spread over the patterns (:data:`PATTERNS`): an equal share each
    first, then one more of each in turn while any pattern can make one.

    Args:
        ctx: the corpus's :class:`TaskContext` (its seeded stream: the same inputs give the same questions).
        facts: the corpus's ``corpus_facts`` (evidence and gold pages).
        limit: at most this many questions.
        pages: the corpus's pages (``page_type``: which facts news reports and press releases state, for
            ``event_anchored``); without them that pattern makes none.
        claims: the corpus's derived claims (:func:`~worldforge.corpus.store.read_claims`): the ranks pages claim
            become clues as the pages word them ("it has the second-lowest launch price of the models of its brand");
            without them every clue is a blurred value.

    Returns:
        The questions, numbered in order; not yet verified against the file (:func:`verify_deep`).
    """
    b = _Builder(ctx, facts, pages, claims)
    makers = [getattr(b, f"{name}_questions") for name in PATTERNS]  # each pattern's method is named after it
    share = max(1, limit // len(makers))
    for make in makers:
        make(min(share, limit - len(b.made)))
    while len(b.made) < limit:
        before = len(b.made)
        for make in makers:
            if len(b.made) < limit:
                make(1)
        if len(b.made) == before:
            break
    return b.made


PATTERNS = ("identify", "parent", "extreme_child", "aggregate", "exclusion", "comparative", "temporal", "two_entity", "event_anchored",
            "hierarchy")
"""The deep question patterns, in the order each gets its share (see the module's table)."""

def verify_deep(con: duckdb.DuckDBPyConnection, questions: list[DeepQuestion]) -> dict[str, str]:
    """Run each question's SQL on the world file: it must return exactly one row, whose text is the answer.

    Args:
        con: a read-only connection to the world file (:func:`~worldforge.warehouse.duck.open_readonly`).
        questions: the questions to check.

    Returns:
        ``{question_id: problem}`` for each question that fails (none: every answer is unique and right).
    """
    problems = {}
    together = _answers_together(con, questions)
    for i, q in enumerate(questions):
        if together is not None:
            rows = together.get(i, [])
        else:
            try:
                rows = con.execute(q.sql).fetchall()
            except duckdb.Error as exc:
                problems[q.question_id] = f"its query failed: {str(exc).splitlines()[0]}"
                continue
        if len(rows) != 1:
            problems[q.question_id] = f"{len(rows)} rows answer it in DuckDB, not one"
            continue
        got = rows[0][0]
        text = str(got) if q.answer_type == "name" else render_value(got)
        if text != q.answer:
            problems[q.question_id] = f"DuckDB answers {text!r}, the question's answer is {q.answer!r}"
    return problems


def _answers_together(con: duckdb.DuckDBPyConnection, questions: list[DeepQuestion]) -> dict[int, list[tuple]] | None:
    """Every question's rows from one query (``UNION ALL BY NAME``: question ``i``'s first column as ``v<i>``, so each
    keeps its own type), ``{i: rows}``; ``None`` when that query fails (each question then runs alone, to name the
    one that fails). One query instead of one a question: about 35 against 75 ms for a catalog world's 48."""
    if not questions:
        return {}
    sql = " UNION ALL BY NAME ".join(f'SELECT {i} AS q, a AS "v{i}" FROM ({q.sql}) AS t(a)' for i, q in enumerate(questions))
    try:
        cur = con.execute(sql)
        at = {d[0]: j for j, d in enumerate(cur.description)}
        got: dict[int, list[tuple]] = {}
        for row in cur.fetchall():
            got.setdefault(row[at["q"]], []).append((row[at[f"v{row[at['q']]}"]],))
    except duckdb.Error:
        return None
    return got


def as_task(q: DeepQuestion) -> Task:
    """The question as a one-row, one-column :class:`~worldforge.tasks.io.Task` (``kind`` ``deep``): what the environments,
    the oracle and the trainers' entry points take. Its question is :func:`prompt`'s; ``extra`` keeps the answer,
    its type, the plan and the evidence and gold pages."""
    col = q.plan["columns"][0]["name"]
    ctype = {"number": "number", "date": "date"}.get(q.answer_type, "string")
    pipeline = eval_pipeline(Column(col, Field("row", q.plan.get("table", ""), "@answer"), ctype, exact=q.exact))
    return Task(instance_id=q.question_id, question=prompt(q),
                evaluation={"unique_columns": [col], "required": [col], "eval_pipeline": {col: pipeline}},
                gold=[{col: q.answer}], language="en",
                extra={"world": q.world, "scenario": q.scenario, "kind": "deep", "plan": q.plan, "answer": q.answer,
                       "answer_type": q.answer_type, "exact": q.exact, "pattern": q.pattern, "hops": q.hops,
                       "evidence_urls": q.evidence_urls, "gold_urls": q.gold_urls, "oracle_calls": q.oracle_calls})


def question_of(task: Task) -> DeepQuestion:
    """The deep question a task made by :func:`as_task` carries (what grading needs: answer, type, exactness, plan).

    Raises:
        ValueError: the task is not a deep question.
    """
    x = task.extra
    if x.get("kind") != "deep" or "answer" not in x:
        raise ValueError(f"task {task.instance_id} is not a deep question")
    return DeepQuestion(task.instance_id, x.get("world", ""), x.get("scenario"), task.question.split("\n\n" + ANSWER_FORMAT)[0],
                        str(x["answer"]), x.get("answer_type", "name"), bool(x.get("exact")), x.get("pattern", ""), int(x.get("hops", 0)),
                        x.get("plan") or {}, "", evidence_urls=list(x.get("evidence_urls") or []), gold_urls=list(x.get("gold_urls") or []),
                        oracle_calls=x.get("oracle_calls"))


# -- grading -------------------------------------------------------------------------------------

_EXACT = re.compile(r"^\W*exact\s+answer\W*:[ \t]*([^\n]*?)[ \t]*$", re.I | re.M)
_CONFIDENCE = re.compile(r"^\W*confidence\W*:[ \t]*([\d.]+)[ \t]*(%?)", re.I | re.M)


def parse_response(response: str) -> tuple[str | None, float | None]:
    """``(exact answer, confidence in [0, 1])`` of a BrowseComp-format response; ``None`` for what it lacks.

    The last ``Exact Answer:`` line counts, its answer on that line (an empty one is no answer); a confidence
    written with ``%`` is a percentage, one without is a fraction when at most 1, else a percentage.
    """
    answers = _EXACT.findall(response or "")
    conf = _CONFIDENCE.findall(response or "")
    c = None
    if conf:
        number, percent = conf[-1]
        try:
            c = float(number)
            c = min(1.0, c / 100.0 if percent or c > 1 else c)
        except ValueError:
            c = None
    answer = answers[-1].strip().strip("*").strip() if answers else ""
    return answer or None, c


@dataclass(frozen=True)
class DeepGrade:
    """A graded response.

    Attributes:
        correct: the exact answer states the gold answer.
        extracted: the response's exact answer (``None``: the response has no ``Exact Answer:`` line).
        confidence: its stated confidence in [0, 1], or ``None``.
        method: ``judge`` (a judge backend decided) or ``exact`` (the normalised exact match).
    """

    correct: bool
    extracted: str | None
    confidence: float | None
    method: str


_EDGE = " \t.,;:!?\"'`“”‘’()[]"


def _number_of(text: str) -> tuple[float | None, bool]:
    """The first number of a text (thousands separators dropped) and whether a ``%`` follows it."""
    got = extract_number(text)
    if got == "NULL":
        return None, False
    try:
        return float(got.rstrip("%")), got.endswith("%")
    except ValueError:
        return None, False


def matches(extracted: str, answer: str, answer_type: str, exact: bool = False) -> bool:
    """The normalised exact match of an answer.

    Names: equal ignoring case, spaces, ``*`` and the punctuation or quotes around them. Numbers: the first number
    of each within 1% (``exact``: equal), a ``%`` after the answer's number read either way (``72.3%`` for 72.3 or
    for 0.723). Dates: the same day, in any written form.
    """
    if answer_type == "number":
        got, percent = _number_of(extracted)
        want, _ = _number_of(answer)
        if got is None or want is None:
            return False
        tolerance = 0.0 if exact else 0.01
        return any(abs(g - want) <= abs(want) * tolerance + 1e-9 for g in ([got, got / 100.0] if percent else [got]))
    if answer_type == "date":
        a, b = norm_date(extracted), norm_date(answer)
        return a == b and date_near(extracted, answer) == 1.0
    return exact_match(norm_str(extracted.strip(_EDGE)), norm_str(answer.strip(_EDGE))) == 1.0


def grade_response(response: str, q: DeepQuestion, judge=None) -> DeepGrade:
    """Grade a response to a deep question.

    Args:
        response: the agent's final message (BrowseComp's format; a response without ``Exact Answer:`` is wrong).
        q: the question.
        judge: an :class:`~worldforge.tasks.judge.LLMJudge` (or any callable ``(responses, targets, criterion) ->
            [1.0 | 0.0 | None]``); ``None``, or a judge without a verdict: the normalised exact match.

    Returns:
        The grade, with the method used.
    """
    extracted, confidence = parse_response(response)
    if extracted is None:
        return DeepGrade(False, None, confidence, "exact")
    if judge is not None:
        verdict = judge([extracted], [q.answer], f"the same {q.answer_type} as the reference answer (one {q.answer_type})")[0]
        if verdict is not None:
            return DeepGrade(verdict == 1.0, extracted, confidence, "judge")
    return DeepGrade(matches(extracted, q.answer, q.answer_type, q.exact), extracted, confidence, "exact")


def frame(questions: list[DeepQuestion]) -> pl.DataFrame:
    """The questions as a frame (one row each; lists and the plan as JSON text)."""
    import json

    return pl.DataFrame(
        [(q.question_id, q.world, q.scenario, q.pattern, q.hops, q.question, q.answer, q.answer_type, q.exact, json.dumps(q.plan),
          q.sql, json.dumps(q.cells), json.dumps(q.answer_cells), json.dumps(q.evidence_urls), json.dumps(q.gold_urls), q.oracle_calls)
         for q in questions],
        schema={"question_id": pl.String, "world": pl.String, "scenario": pl.String, "pattern": pl.String, "hops": pl.Int64,
                "question": pl.String, "answer": pl.String, "answer_type": pl.String, "exact": pl.Boolean, "plan_json": pl.String,
                "sql": pl.String, "cells_json": pl.String, "answer_cells_json": pl.String, "evidence_urls_json": pl.String,
                "gold_urls_json": pl.String, "oracle_calls": pl.Int64},
        orient="row",
    )


def corpus_deep_questions(spec, tables: dict[str, pl.DataFrame], pages: pl.DataFrame, facts: pl.DataFrame, scenario: str | None = None,
                          base: tuple | None = None, limit: int = 24, claims: pl.DataFrame | None = None) -> list[DeepQuestion]:
    """The deep questions of one corpus (the world's, or a scenario's with ``base`` = the world's ``(spec, tables)``),
    from its own seeded stream (``"deep"``: the wide tasks' stream is left as it was); not yet verified. ``claims``:
    the corpus's derived claims (:func:`~worldforge.corpus.store.read_claims`), whose ranks become clues."""
    from worldforge.synth import column_rng
    from worldforge.tasks.phrasing import Phrasing

    ctx = TaskContext(spec, tables, pages, facts, scenario, spec.seed, base[1] if base else None, base[0] if base else None)
    ctx.rng = column_rng(spec.seed, spec.world, scenario or "", "deep")
    ctx.ph = Phrasing(ctx.rng, ctx.title)
    return deep_questions(ctx, facts, limit, pages, claims)


def build_deep_questions(path, limit: int = 24, include_scenarios: bool = True) -> tuple[list[DeepQuestion], dict[str, str]]:
    """The deep questions of a world file (the world's corpus and each scenario's), verified against the file
    (:func:`~worldforge.tasks.store.build_tasks` makes and stores them with the wide tasks; this only makes them).

    Args:
        path: the world file (its corpus built).
        limit: at most this many questions per corpus.
        include_scenarios: also ask in each stored scenario (its tables and corpus).

    Returns:
        ``(questions, problems)``: every question made, and ``{question_id: problem}`` for those DuckDB does not
        answer with exactly their answer (:func:`verify_deep`; empty when all are sound).

    Raises:
        WarehouseError: the file is not a world or has no corpus.
    """
    from worldforge.corpus.store import read_claims, read_corpus
    from worldforge.warehouse import read_world
    from worldforge.warehouse.duck import open_readonly

    wf = read_world(path)
    questions: list[DeepQuestion] = []
    for scen, spec, tables in wf.sources(include_scenarios):
        pages, facts = read_corpus(path, scen, dressed=False)
        questions += corpus_deep_questions(spec, tables, pages, facts, scen, (wf.spec, wf.tables) if scen else None, limit,
                                           read_claims(path, scen))
    with open_readonly(path) as con:
        problems = verify_deep(con, questions)
    return questions, problems


def read_deep_questions(path, scenario: str | None = None, all_scenarios: bool = False) -> list[DeepQuestion]:
    """The deep questions stored in a world file (``deep_questions``: the world's, a scenario's, or all), in id order.

    Raises:
        WarehouseError: the file is missing, or has no deep questions yet (built before them: rebuild its tasks).
    """
    import json

    from worldforge.warehouse.duck import reading_store

    where, params = ("", []) if all_scenarios else (("WHERE scenario IS NULL", []) if scenario is None else ("WHERE scenario = ?", [scenario]))
    with reading_store(path, "world with deep questions (run `worldforge tasks export` or materialize search_tasks)") as con:
        rows = con.sql(f"SELECT * FROM deep_questions {where} ORDER BY question_id", params=params).pl().to_dicts()
    return [DeepQuestion(r["question_id"], r["world"], r["scenario"], r["question"], r["answer"], r["answer_type"], r["exact"], r["pattern"],
                         r["hops"], json.loads(r["plan_json"]), r["sql"], json.loads(r["cells_json"]), json.loads(r["answer_cells_json"]),
                         json.loads(r["evidence_urls_json"]), json.loads(r["gold_urls_json"]), r.get("oracle_calls")) for r in rows]


DEEP_DDL = """
DROP TABLE IF EXISTS deep_questions;
CREATE TABLE deep_questions (question_id VARCHAR PRIMARY KEY, world VARCHAR NOT NULL, scenario VARCHAR, pattern VARCHAR NOT NULL,
  hops INTEGER NOT NULL, question VARCHAR NOT NULL USING COMPRESSION zstd, answer VARCHAR NOT NULL, answer_type VARCHAR NOT NULL,
  exact BOOLEAN NOT NULL, plan_json VARCHAR NOT NULL USING COMPRESSION zstd, sql VARCHAR NOT NULL USING COMPRESSION zstd,
  cells_json VARCHAR NOT NULL USING COMPRESSION zstd, answer_cells_json VARCHAR NOT NULL, evidence_urls_json VARCHAR NOT NULL USING COMPRESSION zstd,
  gold_urls_json VARCHAR NOT NULL USING COMPRESSION zstd, oracle_calls INTEGER);
COMMENT ON TABLE deep_questions IS 'BrowseComp-style questions with one answer (a 2-6 hop chain over this world, in one of nine patterns), each verified unique by its sql.';
"""
"""The ``deep_questions`` table of a world file (one row per question, :func:`frame`'s columns)."""
