"""Deep questions with one short answer (BrowseComp-style), built from chains of hops across a world's tables.

A wide task asks for a table; a *deep* question asks for one entity name, number or date that only a
chain of lookups reaches, as BrowseComp (Wei et al., 2025, arXiv 2504.12516) and BrowseComp-Plus
(Chen et al., 2025, arXiv 2508.06600) do. The entity the chain starts from is never named: it is
described by two or three blurred clues (a range instead of a value, a month instead of a day, a
category), and the clues fit exactly one row. Two chains:

=================== ===== ===========================================================================
pattern             hops  the question asks for
=================== ===== ===========================================================================
``parent``          2-3   the described row -> its parent -> the parent's name, or one of its attributes
``extreme_child``   3-4   the described parent -> its children -> the one with the highest (lowest)
                          value of a number -> its name, or another of its attributes
=================== ===== ===========================================================================

Every question carries a *plan* in the wide tasks' plan language (one row, one column), which the
oracle (:mod:`worldforge.simenv.oracle`) executes through the environment's tools alone, and a SQL query
over the world file that :func:`verify_deep` runs in DuckDB: it must return exactly one row, the answer.
Evidence pages are the pages whose ``corpus_facts`` state a cell of the chain; gold pages state the answer.

Answers are graded as BrowseComp grades them (:func:`grade_response`): the response ends with
``Explanation: / Exact Answer: / Confidence:`` (:data:`ANSWER_FORMAT`, BrowseComp's query template); a judge
backend (:class:`~worldforge.tasks.judge.LLMJudge`) compares the exact answer with the gold when one is given,
else a normalised exact match does (names: case, spaces and ``*`` ignored; numbers within 1%, ranks and
counts exactly; dates as the same day), and the grade says which was used.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import duckdb
import polars as pl

from worldforge.corpus.pages import slug
from worldforge.corpus.quantity import render_value
from worldforge.tasks.context import Column, Field, TaskContext, eval_pipeline
from worldforge.tasks.io import Task, norm_column
from worldforge.tasks.kinds import _by_family, _clue, _clues
from worldforge.tasks.metrics import date_near, exact_match, extract_number, norm_date, norm_str
from worldforge.tasks.phrasing import capitalized, join_words, verb_is, with_article
from worldforge.warehouse.duck import quote_ident, quote_str

__all__ = ["ANSWER_FORMAT", "DEEP_DDL", "DeepGrade", "DeepQuestion", "as_task", "build_deep_questions", "corpus_deep_questions", "deep_questions", "frame", "grade_response", "matches", "parse_response", "prompt",
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
        pattern: ``parent`` or ``extreme_child``.
        hops: table-to-table steps plus the final read (2-4).
        plan: the oracle's plan (the wide tasks' plan language: one row, one column).
        sql: the DuckDB query over the world file whose only row is the answer (:func:`verify_deep`).
        cells: the chain's cells ``[table, key, column, scope]`` (clues, links, answer).
        answer_cells: the cells stating the answer.
        evidence_urls: pages stating any cell of the chain (BrowseComp-Plus' evidence documents).
        gold_urls: pages stating the answer (its gold documents).
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


class _Builder:
    """The deep questions of one corpus, from its :class:`TaskContext` and ``corpus_facts``."""

    def __init__(self, ctx: TaskContext, facts: pl.DataFrame):
        self.ctx = ctx
        from worldforge.warehouse import scenario_schema

        self.schema = scenario_schema(ctx.scenario) if ctx.scenario else "main"
        self.urls: dict[tuple, list[str]] = {}
        for url, t, k, c in facts.select("url", "table_name", "row_key", "column_name").unique().sort("url").iter_rows():
            self.urls.setdefault((t, k, c), []).append(url)
        self.made: list[DeepQuestion] = []

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
            chain: list[tuple], extra_plan: dict | None = None) -> bool:
        """Keep one question (``False``: not kept, its answer is written in it)."""
        ctx = self.ctx
        value, used = ctx.value(t, row, col.field)
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
                "columns": [{"name": norm_column(col.name), "field": ctx.field_plan(col.field), "agg": None, "type": col.ctype}],
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
            ref, pt = ctx.parents(t)[0]
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
                clues = _clues(ctx, t, row, clue_cols)
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
                sql = (f"SELECT p.{target} FROM {self.table(t)} c JOIN {self.table(pt)} p ON c.{quote_ident(ref)} = p.{quote_ident(ppk)} "
                       f"WHERE {' AND '.join(_sql_clue('c', cc, op, v) for cc, op, v in clues)}")
                chain = [(t, str(row[pk]), cc, None) for cc, _, _ in clues] + [(t, str(row[pk]), ref, None)]
                limit -= self.add("parent", 2 if ask_name else 3, t, row, col, self.parent_question(t, pt, clues, None if ask_name else c),
                                  {"from": "dataset"}, sql, chain, {"where": [ctx.cond_plan(t, cc, op, v) for cc, op, v in clues]})

    def person(self, t: str) -> bool:
        """Rows of ``t`` are people (named by Faker person names, or a person noun): clues say "they", not "it"."""
        from worldforge.corpus.lexicon import person_table
        from worldforge.corpus.vocab import faker_person

        info = self.ctx.info[t]
        return person_table(info.noun, faker_person(self.ctx.spec.tables[t].columns.get(info.label_column)))

    def describe(self, t: str, clues: list[tuple]) -> list[str]:
        """The clues as clauses about the row (``its launch price is between $380 and $470``; a person's ``their``)."""
        out = [_clue(self.ctx, t, c, op, v) for c, op, v in clues]
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
        unit = f" (in {ci.unit.header()})" if ci.unit and ci.unit.header() and ci.kind in ("number", "share") else ""
        return f"What {verb_is(ci.label)} the {ci.label} of {whose}{unit}?"

    def parent_question(self, t: str, pt: str, clues: list[tuple], c: str | None) -> str:
        """The wording of a ``parent`` question: the row of ``t`` by its clues, then the ask about its parent in ``pt``
        (its name when ``c`` is ``None``, else column ``c``)."""
        ctx = self.ctx
        noun, pnoun, w = ctx.info[t].noun, ctx.info[pt].noun, ctx.ph.world
        clue_list = self.describe(t, clues)
        final = self.ask(pt, c, f"{'their' if self.person(t) else 'its'} {pnoun}")
        return ctx.ph.pick([
            f"In {w} there is exactly one {noun} that fits all of these clues: {'; '.join(clue_list)}. {final}",
            f"One {noun} of {w} fits every clue below.\n" + _bullets(clue_list) + f"\n{final}",
            f"I'm trying to identify {with_article(noun)} in {w}: {join_words(clue_list)}. {final}",
            f"Think of the {noun} of {w} for which {join_words(clue_list)}. {final}",
        ])

    # -- the described parent -> its children -> the one with the most ... -> its name or an attribute --
    def extreme_questions(self, limit: int) -> None:
        """Add up to ``limit`` ``extreme_child`` questions: a parent described by clues, its child with the strictly
        highest (or lowest) value of a number, asked for that child's name (3 hops) or another number or date (4 hops)."""
        ctx = self.ctx
        for t in _by_family(ctx):
            if limit <= 0:
                return
            ref, pt = ctx.parents(t)[0]
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


def _bullets(clauses: list[str]) -> str:
    """Clauses as a Markdown list, one a line, each capitalised."""
    return "\n".join(f"- {capitalized(x)}" for x in clauses)


def _personal(clue: str) -> str:
    """A clue about a person: ``its role is ...`` -> ``their role is ...``, ``it was born ...`` -> ``they were born ...``,
    ``it has ...`` -> ``they have ...``."""
    for a, b in (("its ", "their "), ("it was ", "they were "), ("it has ", "they have "), ("it ", "they ")):
        if clue.startswith(a):
            return b + clue[len(a):]
    return clue


def deep_questions(ctx: TaskContext, facts: pl.DataFrame, limit: int = 24) -> list[DeepQuestion]:
    """Up to ``limit`` deep questions of one corpus: about half each pattern (the other fills in when one runs short).

    Args:
        ctx: the corpus's :class:`TaskContext` (its seeded stream: the same inputs give the same questions).
        facts: the corpus's ``corpus_facts`` (evidence and gold pages).

    Returns:
        The questions, numbered in order; not yet verified against the file (:func:`verify_deep`).
    """
    b = _Builder(ctx, facts)
    b.parent_questions(limit // 2)
    b.extreme_questions(limit - len(b.made))
    if len(b.made) < limit:
        b.parent_questions(limit - len(b.made))
    return b.made


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
                       "evidence_urls": q.evidence_urls, "gold_urls": q.gold_urls})


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
                        x.get("plan") or {}, "", evidence_urls=list(x.get("evidence_urls") or []), gold_urls=list(x.get("gold_urls") or []))


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
          q.sql, json.dumps(q.cells), json.dumps(q.answer_cells), json.dumps(q.evidence_urls), json.dumps(q.gold_urls)) for q in questions],
        schema={"question_id": pl.String, "world": pl.String, "scenario": pl.String, "pattern": pl.String, "hops": pl.Int64,
                "question": pl.String, "answer": pl.String, "answer_type": pl.String, "exact": pl.Boolean, "plan_json": pl.String,
                "sql": pl.String, "cells_json": pl.String, "answer_cells_json": pl.String, "evidence_urls_json": pl.String,
                "gold_urls_json": pl.String},
        orient="row",
    )


def corpus_deep_questions(spec, tables: dict[str, pl.DataFrame], pages: pl.DataFrame, facts: pl.DataFrame, scenario: str | None = None,
                          base: tuple | None = None, limit: int = 24) -> list[DeepQuestion]:
    """The deep questions of one corpus (the world's, or a scenario's with ``base`` = the world's ``(spec, tables)``),
    from its own seeded stream (``"deep"``: the wide tasks' stream is left as it was); not yet verified."""
    from worldforge.synth import column_rng
    from worldforge.tasks.phrasing import Phrasing

    ctx = TaskContext(spec, tables, pages, facts, scenario, spec.seed, base[1] if base else None, base[0] if base else None)
    ctx.rng = column_rng(spec.seed, spec.world, scenario or "", "deep")
    ctx.ph = Phrasing(ctx.rng, ctx.title)
    return deep_questions(ctx, facts, limit)


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
    from worldforge.corpus.store import read_corpus
    from worldforge.warehouse import read_world
    from worldforge.warehouse.duck import open_readonly

    wf = read_world(path)
    questions: list[DeepQuestion] = []
    for scen, spec, tables in wf.sources(include_scenarios):
        pages, facts = read_corpus(path, scen, dressed=False)
        questions += corpus_deep_questions(spec, tables, pages, facts, scen, (wf.spec, wf.tables) if scen else None, limit)
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
                         json.loads(r["evidence_urls_json"]), json.loads(r["gold_urls_json"])) for r in rows]


DEEP_DDL = """
DROP TABLE IF EXISTS deep_questions;
CREATE TABLE deep_questions (question_id VARCHAR PRIMARY KEY, world VARCHAR NOT NULL, scenario VARCHAR, pattern VARCHAR NOT NULL,
  hops INTEGER NOT NULL, question VARCHAR NOT NULL USING COMPRESSION zstd, answer VARCHAR NOT NULL, answer_type VARCHAR NOT NULL,
  exact BOOLEAN NOT NULL, plan_json VARCHAR NOT NULL USING COMPRESSION zstd, sql VARCHAR NOT NULL USING COMPRESSION zstd,
  cells_json VARCHAR NOT NULL USING COMPRESSION zstd, answer_cells_json VARCHAR NOT NULL, evidence_urls_json VARCHAR NOT NULL USING COMPRESSION zstd,
  gold_urls_json VARCHAR NOT NULL USING COMPRESSION zstd);
COMMENT ON TABLE deep_questions IS 'BrowseComp-style questions with one answer (a 2-4 hop chain over this world), each verified unique by its sql.';
"""
"""The ``deep_questions`` table of a world file (one row per question, :func:`frame`'s columns)."""
