"""The task kinds, one function each: ``(context, limit) -> None``, adding at most ``limit`` tasks.

Each function reads the world through its :class:`~worldforge.tasks.context.TaskContext` and hands
every task it makes to :meth:`~worldforge.tasks.context.TaskContext.add`; :data:`KIND_MAKERS`
maps a kind's name (:data:`~worldforge.tasks.generate.KINDS`) to its function, and :func:`supported` says how
many tasks of a kind a world supports. The kinds and what
their questions ask for are listed in :mod:`worldforge.tasks.generate`.
"""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

import polars as pl

from worldforge.corpus.generate import slug
from worldforge.corpus.lexicon import is_absence
from worldforge.corpus.quantity import render_value
from worldforge.corpus.vocab import ranking_order
from worldforge.spec import models as M
from worldforge.tasks.context import Column, Field, TaskContext
from worldforge.tasks.io import norm_column
from worldforge.tasks.phrasing import capitalized, join_words, noun_like, plural_event, verb_is, with_article


def nice_number(x: float) -> float:
    """``x`` rounded to two significant digits (thresholds people write: 430, 4,900, 0.15)."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    step = 10 ** (math.floor(math.log10(abs(x))) - 1)
    return round(round(x / step) * step, 10)


def round2(x: float) -> float:
    """``x`` rounded to two decimals (``-0.0`` written ``0.0``)."""
    return round(x + 0.0, 2)


def month_end(d: date) -> date:
    """The last day of ``d``'s month."""
    first_next = date(d.year + (d.month == 12), d.month % 12 + 1, 1)
    return date.fromordinal(first_next.toordinal() - 1)


def lookup_tasks(ctx: TaskContext, limit: int) -> None:
    """Every child of one parent (the largest families first), or every row of a small top-level table; 5-8 columns."""
    families = []
    for t in _labelled_tables(ctx):
        for ref, pt in ctx.parents(t)[:1]:
            families += [(-n, t, key, ref, pt) for key, n in ctx.tables[t].group_by(ref).len().rows() if n >= 5]
    small = [t for t in _labelled_tables(ctx) if not ctx.parents(t) and ctx.tables[t].height <= 40 and t in ctx.has_dataset]
    made = 0
    for t in small[:1]:
        attrs = ctx.pick_attrs(t, ctx.rng.randint(4, 6))
        if len(attrs) >= 3:
            info = ctx.info[t]
            cols = [ctx.name_col(t)] + [ctx.attr_col(t, a) for a in attrs] + [ctx.url_col(t)]
            rows = sorted(ctx.rows[t], key=lambda r: ctx.label(t, r))
            n, w = len(rows), ctx.ph.world
            q = ctx.ph.preface() + ctx.ph.pick([
                f"{ctx.ph.request()} a table of all {n} {info.plural} in {w} with {ctx.heads(cols[1:-1], 'their')}, and the URL of each one's encyclopedia article.",
                f"How do the {n} {info.plural} of {w} compare? For every one of them, give {ctx.heads(cols[1:-1], 'the')}, and link its encyclopedia article.",
                f"List each of the {n} {info.plural} in {w} with {ctx.heads(cols[1:-1], 'its')}; add the URL of its encyclopedia article as the last column.",
                f"There are {n} {info.plural} in {w}. For each one I need {ctx.heads(cols[1:-1], 'the')}, plus the address of its encyclopedia article.",
            ])
            ctx.add("lookup", t, rows, cols, q, {"rows": {"from": "dataset"}})
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
        attrs = ctx.pick_attrs(t, ctx.rng.randint(4, 6))
        if len(attrs) < 3:
            continue
        info = ctx.info[t]
        cols = [ctx.name_col(t)] + [ctx.attr_col(t, a) for a in attrs] + [ctx.url_col(t)]
        if len(keys) > 1:
            cols.insert(1, ctx.parent_col(t, ref, pt))
        plabels = [ctx.names[pt][k].text for k in keys]
        rows = sorted((r for r in ctx.rows[t] if r[ref] in keys), key=lambda r: ctx.label(t, r))
        role = ctx.role(t, ref)
        who = join_words(plabels) + (f" as {role}" if role else "")
        pdesc = f"two {ctx.info[pt].plural}" if len(keys) > 1 else with_article(ctx.info[pt].noun)
        w, many = ctx.ph.world, len(keys) > 1
        q = ctx.ph.preface() + ctx.ph.pick([
            f"{ctx.ph.request()} a complete list of the {info.plural} of {who} ({pdesc}) in {w}, as of {ctx.as_of()}. "
            f"For each {info.noun}, give {ctx.heads(cols[1:-1], 'its')}, and the URL of its encyclopedia article.",
            f"What {info.plural} {'do' if many else 'does'} {who} have in {w}? List every one with {ctx.heads(cols[1:-1], 'its')}, and link its encyclopedia article.",
            f"List all {info.plural} of {who} in {w}. The columns I need: {ctx.heads(cols[1:-1])}, plus the URL of the {info.noun}'s encyclopedia article.",
            f"{who} {'are' if many else 'is'} {pdesc} in {w}. Which {info.plural} belong to {'them' if many else 'it'}? "
            f"Give {ctx.heads(cols[1:-1], 'the')} of each, with the URL of its encyclopedia page.",
            f"Every {info.noun} of {who} in {w}, please, with {ctx.heads(cols[1:-1], 'its')}, plus a link to its encyclopedia article.",
        ])
        plan = {"rows": {"from": "children", "parents": [{"slug": slug(pt), "label": x} for x in plabels], "section": ctx.section(t, ref)}}
        ctx.add("lookup", t, rows, cols, q, plan)
        made += 1

def _by_family(ctx: TaskContext) -> list[str]:
    """Labelled tables with a labelled parent, those with the largest families (children per parent) first."""
    def size(t: str) -> float:
        ref = ctx.parents(t)[0][0]
        return ctx.tables[t].height / max(1, ctx.tables[t][ref].n_unique())
    return sorted((t for t in _labelled_tables(ctx) if ctx.parents(t)), key=lambda t: (-size(t), t))

def _labelled_tables(ctx: TaskContext, min_rows: int = 1) -> list[str]:
    """Tables whose rows have distinct labels, the largest first."""
    return sorted((t for t in ctx.spec.tables if ctx.labelled(t) and ctx.tables[t].height >= min_rows), key=lambda t: (-ctx.tables[t].height, t))

def _threshold(ctx: TaskContext, t: str, c: str, share: float) -> tuple[str, float] | None:
    """A round bound on a numeric column that ``share`` of the rows meet (``>=`` on the top, ``<=`` on the bottom)."""
    vals = sorted(float(v) for v in ctx.tables[t][c].to_list())
    if ctx.rng.random() < 0.6:
        v = nice_number(vals[int(len(vals) * (1 - share))])
        return (">=", v) if v > vals[0] else None
    v = nice_number(vals[int(len(vals) * share)])
    return ("<=", v) if v < vals[-1] else None

def _bound(ctx: TaskContext, t: str, c: str, op: str, v: Any) -> str:
    """A numeric bound as words: ``at least 4 stars``, ``120 rooms or fewer``, ``at most $1,099``."""
    val = str(int(v)) if _year_like(ctx, t, c) else ctx.words(t, c, v)  # "founded in 1990 or later", never "1,990"
    label = ctx.ci(t, c).label
    if label.startswith("number of ") and re.fullmatch(r"[\d.,]+", val):
        val = f"{val} {label.removeprefix('number of ')}"  # "number of hotels" >= 3: "at least 3 hotels"
    if op == ">=":
        return ctx.rng.choice([f"at least {val}", f"{val} or more", f"no less than {val}"])
    return ctx.rng.choice([f"at most {val}", f"no more than {val}", f"{val} or less"])

def _cond_words(ctx: TaskContext, t: str, c: str, op: str, v: Any) -> str:
    """A condition as a clause on several rows: ``whose star rating is at least 4 stars``, ``with at least 3 hotels``,
    ``whose segment is luxury or upscale``, ``that were announced between ... (both included)``."""
    ci = ctx.ci(t, c)
    label = ci.label
    if op in (">=", "<="):
        bound = _bound(ctx, t, c, op, v)
        return f"with {bound}" if label.startswith("number of ") else f"whose {label} {verb_is(label)} {bound}"
    if op == "in":
        return f"whose {label} {verb_is(label)} {join_words([str(x) for x in v], 'or')}"
    if op == "between":
        a, b = v
        span = f"between {ctx.words_date(a)} and {ctx.words_date(b)} (both included)"
        return f"that {plural_event(ci.event)} {span}" if ci.event else f"whose {label} falls {span}"
    return f"whose {label} {verb_is(label)} {v}"

def _criterion(ctx: TaskContext, t: str, c: str, op: str, v: Any) -> str:
    """A condition as a criterion in a list: ``star rating: at least 4 stars``, ``segment: luxury or upscale``."""
    label = ctx.ci(t, c).label
    if op in (">=", "<="):
        return f"{label}: {_bound(ctx, t, c, op, v)}"
    if op == "in":
        return f"{label}: {join_words([str(x) for x in v], 'or')}"
    if op == "between":
        return f"{label}: between {ctx.words_date(v[0])} and {ctx.words_date(v[1])}"
    return f"{label}: {v}"

def _clue(ctx: TaskContext, t: str, c: str, op: str, v: Any) -> str:
    """A clue about one row: ``its star rating is between 4 and 5 stars``, ``it was founded in March 2030``."""
    ci = ctx.ci(t, c)
    label = ci.label
    if op == "in":
        if len(v) == 1 and is_absence(v[0]):  # "none" is an absence, as pages say it: "it has no FIDE title"
            return f"it has no {label}"
        return f"its {label} {verb_is(label)} {v[0]}"
    if ci.kind == "date":
        month = v[0].strftime("%B %Y")
        return f"it {ci.event} in {month}" if ci.event else f"its {label} falls in {month}"
    lo, hi = (str(v[0]), str(v[1])) if _year_like(ctx, t, c) else (ctx.words(t, c, v[0]), ctx.words(t, c, v[1]))  # a year as 1931, not 1,931
    if label.startswith("number of "):
        return f"it has between {lo} and {hi} {label.removeprefix('number of ')}" if re.fullmatch(r"[\d.,]+", hi) else f"it has between {lo} and {hi}"
    return f"its {label} {verb_is(label)} between {lo} and {hi}"

def _match(ctx: TaskContext, row: dict, c: str, op: str, v: Any) -> bool:
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

def filter_tasks(ctx: TaskContext, limit: int) -> None:
    """Rows that meet 1-3 conditions on their attributes; 8-60 rows."""
    tables = [t for t in _labelled_tables(ctx, 30) if ctx.numbers(t) and t in ctx.has_dataset]
    for i in range(limit * 4):
        if not tables or sum(x.extra["kind"] == "filter" for x in ctx.tasks) >= limit:
            return
        t = tables[i % len(tables)]
        info = ctx.info[t]
        conds: list[tuple[str, str, Any]] = []
        nums, cats = ctx.numbers(t), ctx.categories(t)
        n_cond = ctx.rng.choice((1, 2, 2, 3))
        for c in ctx.rng.sample(nums, min(len(nums), 2)):
            th = _threshold(ctx, t, c, ctx.rng.choice((0.3, 0.4, 0.5, 0.6)))
            if th:
                conds.append((c, th[0], th[1]))
        if cats and (n_cond >= 2 or not conds):
            c = ctx.rng.choice(cats)
            vals = sorted(set(ctx.tables[t][c].to_list()), key=str)
            k = ctx.rng.choice((1, 2)) if len(vals) > 2 else 1
            conds.append((c, "in", tuple(sorted(ctx.rng.sample(vals, k), key=str))))
        conds = conds[:n_cond]
        if not conds:
            continue
        rows = [r for r in ctx.rows[t] if all(_match(ctx, r, c, op, v) for c, op, v in conds)]
        if not max(5, min(15, ctx.tables[t].height // 6)) <= len(rows) <= 60:
            continue
        rows.sort(key=lambda r: ctx.label(t, r))
        cond_cols = [c for c, _, _ in conds]
        extra = ctx.pick_attrs(t, ctx.rng.randint(2, 4), exclude=tuple(cond_cols))
        cols = [ctx.name_col(t)] + [ctx.attr_col(t, c) for c in dict.fromkeys(cond_cols + extra)]
        words = join_words([_cond_words(ctx, t, c, op, v) for c, op, v in conds])
        crit = "; ".join(_criterion(ctx, t, c, op, v) for c, op, v in conds)
        w, each = ctx.ph.world, "each one's"
        q = ctx.ph.preface() + ctx.ph.pick([
            f"{ctx.ph.request()} a list of every {info.noun} in {w} {words}. Give {ctx.heads(cols[1:], each)}.",
            f"Which {info.plural} in {w} are there {words}? List all of them with {ctx.heads(cols[1:], 'their')}.",
            f"Find all {info.plural} of {w} (as of {ctx.as_of()}) {words}, and give {ctx.heads(cols[1:], 'their')}.",
            f"Criteria: {crit}. List every {info.noun} of {w} that meets {'all of them' if len(conds) > 1 else 'it'}, with {ctx.heads(cols[1:], 'its')}.",
            f"I'm screening the {info.plural} of {w}. Keep only those {words}, and for each one report {ctx.heads(cols[1:], 'the')}.",
            f"For every {info.noun} in {w} {words}, I need {ctx.heads(cols[1:], 'the')}.",
            f"Considering only {info.plural} {words}: which ones does {w} have? Give {ctx.heads(cols[1:], 'their')}.",
        ])
        plan = {"rows": {"from": "dataset"}, "where": [ctx.cond_plan(t, c, op, v) for c, op, v in conds]}
        ctx.add("filter", t, rows, cols, q, plan, inputs=ctx.all_rows_inputs(t, cond_cols))

def _date_span(ctx: TaskContext, t: str, dc: str, lo: int, hi: int, used: set | None = None) -> tuple[date, date, list[dict]] | None:
    """A span of one to eight consecutive quarters holding ``lo``-``hi`` rows (fewer when the table is small), never one
    of ``used`` (``(table, first quarter, last quarter)``, to which the span is added): no two tasks ask for the same rows."""
    frame = ctx.tables[t]
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
            if lo <= n <= hi and qs[i][1] and qs[j][1] and (t, qs[i][0], qs[j][0]) not in (used or ()):
                spans.append((n, qs[i][0], qs[j][0]))
    if not spans:
        return None
    # the wider half of the spans that fit: a wide task asks for many rows (WideSearch's tables run to dozens)
    wide = sorted(n for n, _, _ in spans)[len(spans) // 2]
    _, (y0, q0), (y1, q1) = ctx.rng.choice([s for s in spans if s[0] >= wide])
    if used is not None:
        used.add((t, (y0, q0), (y1, q1)))
    start = date(y0, 3 * q0 - 2, 1)
    end = date(y1 + (q1 == 4), 1 if q1 == 4 else 3 * q1 + 1, 1)
    end = date.fromordinal(end.toordinal() - 1)
    rows = [r for r in ctx.rows[t] if start <= r[dc] <= end]
    return start, end, rows

def join_tasks(ctx: TaskContext, limit: int) -> None:
    """Rows in a date range with their parent and 1-2 of the parent's attributes (spread over the tables, distinct spans)."""
    made, used = 0, set()
    tables = [t for t in _labelled_tables(ctx, 10) if ctx.event(t) and t in ctx.has_dataset and ctx.parents(t)]
    tables = [t for t in tables if ctx.tables[t].height >= 60] or tables[:1]  # spans of 15 rows or more
    for n_t, t in enumerate(tables):
        dc = ctx.event(t)
        quota = made + math.ceil((limit - made) / (len(tables) - n_t))  # this table's share of what is left
        for ref, pt in ctx.parents(t)[:1]:
            pattrs = [c for c in ctx.attributes(pt) if ctx.ci(pt, c).kind != "text"]
            if not pattrs:
                continue
            for _ in range(limit):
                span = _date_span(ctx, t, dc, 15, 45, used) if made < quota else None
                if span is None:
                    break
                start, end, rows = span
                rows.sort(key=lambda r: (r[dc], ctx.label(t, r)))
                pa = ctx.rng.sample(pattrs, min(len(pattrs), ctx.rng.choice((1, 2))))
                own = ctx.pick_attrs(t, 2, exclude=(dc,))
                cols = ([ctx.name_col(t), ctx.attr_col(t, dc), ctx.parent_col(t, ref, pt)] + [ctx.parent_col(t, ref, pt, c) for c in pa]
                        + [ctx.attr_col(t, c) for c in own])
                info = ctx.info[t]
                cond = _cond_words(ctx, t, dc, "between", (start, end))
                w, dl, pn = ctx.ph.world, ctx.ci(t, dc).label, ctx.parent_noun(t, ref, pt)[0]
                pwords = ctx.ph.attrs([ctx.ci(pt, c).label for c in pa])
                ownw = ctx.ph.attrs([ctx.ci(t, c).label for c in own])
                q = ctx.ph.preface() + ctx.ph.pick([
                    f"{ctx.ph.request()} a table of the {info.plural} in {w} {cond}. For each, give the {dl}, its {pn} and that {pn}'s {pwords}"
                    + (f", plus the {ownw} of the {info.noun}." if own else "."),
                    f"Which {info.plural} of {w} {cond.removeprefix('that ') if ctx.ci(t, dc).event else 'have ' + with_article(dl) + cond.split(' falls', 1)[1]}? "
                    f"For each one I need its {dl}, the {pn} it belongs to and that {pn}'s {pwords}" + (f", as well as its {ownw}." if own else "."),
                    f"I'm looking at the period from {ctx.words_date(start)} to {ctx.words_date(end)}. Give all {info.plural} of {w} {cond}, "
                    f"each with its {dl}, its {pn} and the {pn}'s {pwords}" + (f"; add the {info.noun}'s own {ownw}." if own else "."),
                    f"List all {info.plural} in {w} {cond}, each with its {pn}. Columns: the {info.noun}, its {dl}, its {pn}, the {pn}'s {pwords}"
                    + (f", and the {info.noun}'s {ownw}." if own else "."),
                ])
                plan = {"rows": {"from": "dataset"}, "where": [ctx.cond_plan(t, dc, "between", (start, end))]}
                ctx.add("join", t, rows, cols, q, plan, inputs=ctx.all_rows_inputs(t, [dc]))
                made += 1

def aggregate_tasks(ctx: TaskContext, limit: int) -> None:
    """Per group (a parent or a category): count, total, average and maximum of a numeric attribute."""
    made = 0
    for t in _labelled_tables(ctx):
        nums = ctx.numbers(t)
        if not nums or made >= limit or t not in ctx.has_dataset:
            continue
        groups: list[tuple[str, str, str | None]] = [("parent", pt, ref) for ref, pt in ctx.parents(t)]
        groups += [("category", c, None) for c in ctx.categories(t) if noun_like(ctx.ci(t, c).label)]  # "for every segment", never "for every based in"
        for how, g, ref in ctx.rng.sample(groups, len(groups)):
            if made >= limit:
                break
            c = ctx.rng.choice(nums)
            ci = ctx.ci(t, c)
            info = ctx.info[t]
            key_of = (lambda r: r[ref]) if how == "parent" else (lambda r, g=g: r[g])
            buckets: dict[Any, list[dict]] = {}
            for r in ctx.rows[t]:
                buckets.setdefault(key_of(r), []).append(r)
            if not 3 <= len(buckets) <= 60:
                continue
            unit = f" ({ci.unit.header()})" if ci.unit and ci.unit.header() else ""
            if how == "parent":
                gname = capitalized(ctx.parent_noun(t, ref, g)[0])
                glabel = {k: ctx.names[g][k].text for k in buckets}
                gfield = Field("parent", g, "@name", ref, ctx.role(t, ref))
            else:
                gname = capitalized(ctx.ci(t, g).label)
                glabel = {k: render_value(k) for k in buckets}
                gfield = Field("row", t, g)
            fns = ["count", ctx.rng.choice(("sum", "mean") if ci.additive else ("mean", "min")), "max"]  # totals only of what adds up
            cols = [Column(gname, Field("group", t, "@group"), "string"),
                    Column(f"Number of {info.plural}", Field("row", t, "@name"), "number", "count", exact=True)]
            words = {"sum": f"Total {ci.label}", "mean": f"Average {ci.label}", "max": f"Highest {ci.label}", "min": f"Lowest {ci.label}"}
            cols += [Column(words[f] + unit, Field("row", t, c), "number", f, exact=f in ("max", "min")) for f in fns[1:]]
            pk = ctx.spec.tables[t].primary_key
            gold, row_cells, keys = [], [], []
            for k in sorted(buckets, key=lambda k: glabel[k]):
                rs = buckets[k]
                vals = [float(r[c]) for r in rs]
                total = math.fsum(vals)  # exactly rounded: the same whatever order a solver adds the values in
                agg = {"sum": round2(total), "mean": round2(total / len(vals)), "max": max(vals), "min": min(vals)}
                gold.append({norm_column(cols[0].name): glabel[k], norm_column(cols[1].name): str(len(rs)),
                             **{norm_column(col.name): render_value(agg[col.agg]) for col in cols[2:]}})
                cells = []
                for r in rs:
                    cells += ctx.value(t, r, gfield)[1] + [(t, str(r[pk]), c, None)]
                row_cells.append(cells)
                keys.append(rs[0])
            by = ctx.parent_noun(t, ref, g)[0] if how == "parent" else ctx.ci(t, g).label
            aggs = join_words([words[f][:1].lower() + words[f][1:] for f in fns[1:]])  # "time on Mars" keeps its capital
            w = ctx.ph.world
            q = ctx.ph.preface() + ctx.ph.pick([
                f"For every {by} in {w}, how many {info.plural} are there, and what are the {aggs} across them? One row per {by}.",
                f"{ctx.ph.request()} a summary of the {info.plural} of {w} by {by}: the number of {info.plural}, the {aggs} for each {by}.",
                f"Group the {info.plural} of {w} by {by}. For each group, report how many {info.plural} it has and the {aggs}.",
                f"I need a breakdown of {w} by {by}: per {by}, the count of {info.plural}, the {aggs}.",
                f"How are the {info.plural} of {w} distributed by {by}? Give, for each {by}, the number of {info.plural} and the {aggs}.",
            ]) + ctx.ph.rounding([x for f, x in (("mean", "averages"), ("sum", "totals")) if f in fns])
            plan = {"rows": {"from": "dataset"}, "group": ctx.field_plan(gfield)}
            ctx.add("aggregate", t, keys, cols, q, plan, gold=gold, row_cells=row_cells)
            made += 1

def top_k_tasks(ctx: TaskContext, limit: int) -> None:
    """The k rows with the highest (or lowest) value of an attribute, optionally within one category."""
    made, seen = 0, set()
    tables = [t for t in _labelled_tables(ctx) if ctx.numbers(t) and ctx.tables[t].height >= 20 and t in ctx.has_dataset]
    for n_t, t in enumerate(tables):
        nums = ctx.numbers(t)
        quota = made + math.ceil((limit - made) / (len(tables) - n_t))  # spread over the tables
        for _ in range(limit * 2):
            if made >= quota:
                break
            c = ctx.rng.choice(nums)
            desc = ctx.rng.random() < 0.75
            rows = list(ctx.rows[t])
            cat = None
            cats = ctx.categories(t)
            if cats and ctx.rng.random() < 0.5:
                cc = ctx.rng.choice(cats)
                v = ctx.rng.choice(sorted(set(ctx.tables[t][cc].to_list()), key=str))
                sub = [r for r in rows if r[cc] == v]
                if len(sub) >= 12:
                    rows, cat = sub, (cc, v)
            k = min(ctx.rng.choice((10, 15, 20)), len(rows) - 1)
            rows.sort(key=lambda r: r[c], reverse=desc)
            if rows[k - 1][c] == rows[k][c] or (c, desc, cat) in seen:
                continue  # a tie at the cut would make the top k ambiguous; the same ranking twice is one task
            seen.add((c, desc, cat))
            top = rows[:k]
            positioned = len({r[c] for r in top}) == k  # no tie inside: positions are well defined
            info, ci = ctx.info[t], ctx.ci(t, c)
            extra = ctx.pick_attrs(t, 3, exclude=(c,) + ((cat[0],) if cat else ()))
            cols = ([Column("Position", Field("row", t, "@position"), "number", exact=True)] if positioned else []) + [ctx.name_col(t), ctx.attr_col(t, c)]
            cols += [ctx.attr_col(t, a) for a in extra]
            which = "highest" if desc else "lowest"
            scope = f" whose {ctx.ci(t, cat[0]).label} is {cat[1]}" if cat else ""
            w, lab = ctx.ph.world, ci.label
            xw = ctx.ph.attrs([ctx.ci(t, a).label for a in extra])
            lx = join_words([lab, xw])  # "price and screen size, battery capacity and segment", or the ranked value alone
            num = ctx.ph.pick(["Number them from 1 and give", "Number them 1 to " + str(k) + " and give"]) if positioned else "Give"
            q = ctx.ph.preface() + ctx.ph.pick([
                f"{ctx.rng.choice(('Compile', 'List', 'Give me', 'I need'))} the top {k} {info.plural}{scope} in {w} by {lab} ({which} first), as of {ctx.as_of()}. {num} each one's {lx}.",
                f"Which {k} {info.plural}{scope} of {w} have the {which} {lab}? {'Rank them from 1, ' + which + ' first, and give' if positioned else 'Give'} "
                f"the {join_words([lab] + [ctx.ci(t, a).label for a in extra])} of each.",
                f"I'm after the {k} {info.plural}{scope} with the {which} {lab} in {w} (as of {ctx.as_of()}). "
                f"{num} their {lx}.",
                f"Rank the {info.plural}{scope} of {w} by {lab}, {which} first, and keep the first {k}. {num} each one's {lx}.",
            ])
            gold, row_cells = [], []
            for i, r in enumerate(top, 1):
                g = {"position": str(i)} if positioned else {}
                cells = []
                for col in cols[1:] if positioned else cols:
                    v, used = ctx.value(t, r, col.field)
                    g[norm_column(col.name)] = render_value(v)
                    cells += used
                gold.append(g)
                row_cells.append(cells)
            where = [ctx.cond_plan(t, cat[0], "in", (cat[1],))] if cat else []
            plan = {"rows": {"from": "dataset"}, "where": where, "order": {"field": ctx.field_plan(Field("row", t, c)), "desc": desc}, "limit": k}
            inputs = ctx.all_rows_inputs(t, [c] + ([cat[0]] if cat else []))
            ctx.add("top_k", t, top, cols, q, plan, unique=[cols[1 if positioned else 0].name], gold=gold, row_cells=row_cells, inputs=inputs)
            made += 1

def ranking_tasks(ctx: TaskContext, limit: int) -> None:
    """The top of a rank column as the ranking site publishes it (its page's title names it)."""
    made = 0
    for t, table in ctx.spec.tables.items():
        if not ctx.labelled(t):
            continue
        for rc, col in table.columns.items():
            if not isinstance(col, M.RankColumn) or made >= limit:
                continue
            frame = ctx.tables[t]
            info = ctx.info[t]
            scope, page_scope = "", ""
            if col.within:
                sizes = frame[col.within].drop_nulls().value_counts()  # rows without a parent rank in no group a page lists
                groups = sorted(g for g, n in sizes.iter_rows() if n >= 3)  # never "which 1 crews of Berth 545 come first"
                if not groups:
                    continue
                g = ctx.rng.choice(groups)
                frame = frame.filter(pl.col(col.within) == g)
                wcol = table.columns[col.within]
                if isinstance(wcol, M.ReferenceColumn):
                    pl_ = ctx.names[wcol.parent][g].text
                    scope = page_scope = f" of {pl_}"
                else:
                    scope, page_scope = f" with {ctx.ci(t, col.within).label} {render_value(g)}", f" ({render_value(g)})"
            title = f"{capitalized(info.plural)}{page_scope} ranked by {ctx.ci(t, col.of).label}{ranking_order(table, rc)}"
            if title not in ctx.titles:
                continue
            n = min(10, frame.height)
            rows = frame.sort(rc).head(n).to_dicts()
            cols = [ctx.attr_col(t, rc), ctx.name_col(t), ctx.attr_col(t, col.of)]
            order = "highest first" if col.descending else "lowest first"
            w, by, rl = ctx.ph.world, ctx.ci(t, col.of).label, ctx.ci(t, rc).label
            q = ctx.ph.preface() + ctx.ph.pick([
                f"List the top {n} {info.plural}{scope} in {w} ranked by {by} ({order}), as of {ctx.as_of()}, with their {rl}, name and {by}.",
                f"Which {n} {info.plural}{scope} of {w} come first when ranked by {by} ({order})? Give each one's {rl}, name and {by}.",
                f"{ctx.ph.request()} the published ranking of {info.plural}{scope} by {by} in {w}: the first {n} places, with {rl}, {info.noun} and {by}.",
                f"What are the first {n} places of the {by} ranking of {info.plural}{scope} in {w} ({order})? For each, the {rl}, the {info.noun} and its {by}.",
            ])
            plan = {"rows": {"from": "ranking", "title": title}, "limit": n}
            ctx.add("ranking", t, rows, cols, q, plan, unique=[cols[1].name])
            made += 1

def _timeline_prefix(ctx: TaskContext, t: str) -> str:
    """How the titles of a table's timeline pages start (``Models that were announced: ``), before the quarter."""
    info, ci = ctx.info[t], ctx.ci(t, ctx.event(t))
    return f"{capitalized(info.plural)} that {ci.event.replace('was ', 'were ')}: " if ci.event else f"{capitalized(info.plural)} by {ci.label}: "

def window_tasks(ctx: TaskContext, limit: int) -> None:
    """Rows whose event date falls in one or two quarters, with their date and attributes (timeline pages; spread over
    the tables, distinct spans)."""
    made, used = 0, set()
    tables = [t for t in _labelled_tables(ctx, 10) if ctx.event(t) and _timeline_prefix(ctx, t) and
              any(x.startswith(_timeline_prefix(ctx, t)) for x in ctx.titles)]  # tables the archive has timelines of
    tables = [t for t in tables if ctx.tables[t].height >= 60] or tables[:1]  # spans of 15 rows or more
    for n_t, t in enumerate(tables):
        dc = ctx.event(t)
        quota = made + math.ceil((limit - made) / (len(tables) - n_t))
        for _ in range(limit):
            if made >= quota:
                break
            span = _date_span(ctx, t, dc, 15, 45, used)
            if span is None:
                break
            start, end, rows = span
            rows.sort(key=lambda r: (r[dc], ctx.label(t, r)))
            attrs = ctx.pick_attrs(t, ctx.rng.randint(2, 4), exclude=(dc,))
            cols = [ctx.name_col(t), ctx.attr_col(t, dc)] + [ctx.attr_col(t, a) for a in attrs]
            for ref, pt in ctx.parents(t)[:1]:
                cols.insert(1, ctx.parent_col(t, ref, pt))
            info = ctx.info[t]
            quarters = []
            y, q = start.year, (start.month - 1) // 3 + 1
            while date(y, 3 * q - 2, 1) <= end:
                quarters.append((y, q))
                y, q = (y + 1, 1) if q == 4 else (y, q + 1)
            qwords = " and ".join(f"Q{q} {y}" for y, q in quarters) if len(quarters) <= 2 else f"Q{quarters[0][1]} {quarters[0][0]} through Q{quarters[-1][1]} {quarters[-1][0]}"
            filled = {(r[dc].year, (r[dc].month - 1) // 3 + 1) for r in rows}  # a quarter without rows has no timeline page
            ev = ctx.ci(t, dc).event
            what = f"that {plural_event(ev)} in {qwords}" if ev else f"whose {ctx.ci(t, dc).label} falls in {qwords}"
            what_one = f"that {ev} in {qwords}" if ev else what
            in_period = f"that {plural_event(ev)} in that period" if ev else f"whose {ctx.ci(t, dc).label} falls in that period"
            w, span = ctx.ph.world, f"{ctx.words_date(start)} to {ctx.words_date(end)}"
            q = ctx.ph.preface(0.2) + ctx.ph.pick([
                f"{ctx.ph.request()} a timeline of every {info.noun} in {w} {what_one} ({span}), with {ctx.heads(cols[1:], 'its')}.",
                f"Which {info.plural} of {w} {plural_event(ev) + ' in ' + qwords if ev else 'have ' + with_article(ctx.ci(t, dc).label) + ' in ' + qwords}? "
                f"List each with {ctx.heads(cols[1:], 'its')}.",
                f"I'm writing a quarterly review of {w} covering {qwords} ({span}). List every {info.noun} {what_one}, with {ctx.heads(cols[1:], 'the')}.",
                f"For {qwords}, give me all {info.plural} of {w} {in_period}: {ctx.heads(cols[1:], 'their')}.",
            ])
            prefix = _timeline_prefix(ctx, t)
            plan = {"rows": {"from": "timeline", "titles": [f"{prefix}Q{q} {y}" for y, q in quarters if (y, q) in filled]}}
            if not all(x in ctx.titles for x in plan["rows"]["titles"]):
                break  # the corpus has no timeline of this table
            ctx.add("window", t, rows, cols, q, plan)
            made += 1

def deep_wide_tasks(ctx: TaskContext, limit: int) -> None:
    """Every child of a parent the question describes only by clues on the parent's attributes."""
    made = 0
    for t in _by_family(ctx):
        for ref, pt in ctx.parents(t)[:1]:
            clue_cols = [c for c in ctx.attributes(pt, ("number", "share", "rank", "category", "date")) if ctx.tables[pt][c].n_unique() > 1]
            if len(clue_cols) < 2 or ctx.tables[pt].height < 3 or pt not in ctx.has_dataset:
                continue
            counts = dict(ctx.tables[t].group_by(ref).len().rows())
            cands = sorted((k for k, n in counts.items() if n >= 5), key=str)  # group_by order is not stable
            for key in ctx.rng.sample(cands, len(cands)):
                if made >= limit:
                    return
                prow = ctx.by_key[pt][key]
                clues = _clues(ctx, pt, prow, clue_cols)
                if clues is None:
                    continue
                info, pinfo = ctx.info[t], ctx.info[pt]
                rows = sorted((r for r in ctx.rows[t] if r[ref] == key), key=lambda r: ctx.label(t, r))
                attrs = ctx.pick_attrs(t, ctx.rng.randint(4, 5))
                cols = [ctx.name_col(t)] + [ctx.attr_col(t, a) for a in attrs]
                clue_list = [_clue(ctx, pt, c, op, v) for c, op, v in clues]
                ctx.rng.shuffle(clue_list)
                w, pn = ctx.ph.world, pinfo.noun
                q = ctx.ph.pick([
                    f"In {w} there is exactly one {pn} with all of these traits: {'; '.join(clue_list)}. "
                    f"First identify that {pn}, then list every one of its {info.plural} with {ctx.heads(cols[1:], 'the')}.",
                    f"One {pn} of {w} fits every clue below.\n" + "\n".join(f"- {x[:1].upper() + x[1:]}" for x in clue_list)
                    + f"\nWork out which {pn} it is, then give me all of its {info.plural} with {ctx.heads(cols[1:], 'their')}.",
                    f"I'm trying to pin down {with_article(pn)} in {w}: {join_words(clue_list)}. Once you know which {pn} this is, "
                    f"compile every {info.noun} it has, with {ctx.heads(cols[1:], 'the')}.",
                    f"Find the {pn} of {w} for which {join_words(clue_list)}. Then list each of its {info.plural} with {ctx.heads(cols[1:], 'their')}.",
                ])
                plan = {"rows": {"from": "children", "section": ctx.section(t, ref),
                                 "parent": {"slug": slug(pt), "resolve": {"plural": pinfo.plural, "table": pt,
                                                                           "where": [ctx.cond_plan(pt, c, op, v) for c, op, v in clues]}}}}
                inputs = ctx.all_rows_inputs(pt, [c for c, _, _ in clues])
                ctx.add("deep_wide", t, rows, cols, q, plan, inputs=inputs)
                made += 1

def _clues(ctx: TaskContext, pt: str, prow: dict, cols: list[str]) -> list[tuple[str, str, Any]] | None:
    """2-3 conditions (bounds and categories, never the exact value of a number) that only ``prow`` meets."""
    for _ in range(12):
        picked = ctx.rng.sample(cols, min(len(cols), ctx.rng.choice((2, 3))))
        clues = [b for b in (_blur(ctx, pt, c, prow[c]) for c in picked) if b is not None]
        match = [r for r in ctx.rows[pt] if all(_match_clue(ctx, r, c, op, v) for c, op, v in clues)]
        if len(match) == 1 and len(clues) >= 2:
            return [(c, "between" if op == "between_num" else op, v) for c, op, v in clues]
    return None

def _blur(ctx: TaskContext, t: str, c: str, v: Any) -> tuple[str, str, Any] | None:
    """One blurred condition that value ``v`` of ``t.c`` meets: its category, the month of a date, a year give or take
    three, else a round range around the number (``between_num``); ``None`` when no round range holds it."""
    kind = ctx.ci(t, c).kind
    if kind == "category":
        return (c, "in", (v,))
    if kind == "date":
        return (c, "between", (date(v.year, v.month, 1), month_end(v)))
    if _year_like(ctx, t, c):  # "founded between 1931 and 1937", never a ±10% span of two centuries
        return (c, "between_num", (int(v) - 3, int(v) + 3))
    x = float(v)
    # at zero or below, whole numbers one past each side ("between -8 °C and -5 °C"), never x - 1 in binary
    # floating point ("between -7.659999999999999 °C and ...")
    lo, hi = (nice_number(x * 0.9), nice_number(x * 1.1)) if x > 0 else (math.floor(x) - 1, math.ceil(x) + 1)
    if kind == "rank" or ctx.tables[t].schema[c] in (pl.Int64, pl.Int32):
        lo, hi = math.floor(lo), math.ceil(hi)
    if kind == "rank":
        lo = max(lo, 1)  # ranks start at 1: never "between 0 and 2"
    elif lo < 0 <= ctx.tables[t][c].min():
        lo = 0  # a quantity that is never negative: "between 0 and 1 hour", never "between -1 hours and 1 hour"
    return (c, "between_num", (lo, hi)) if lo <= x <= hi else None

def _year_like(ctx: TaskContext, t: str, c: str) -> bool:
    """A whole-number column of calendar years (``year founded``): its label names a year and every value is 1000-2999."""
    if "year" not in ctx.ci(t, c).label.lower().split() or ctx.tables[t].schema[c] not in (pl.Int64, pl.Int32):
        return False
    col = ctx.tables[t][c]
    return bool(col.len()) and 1000 <= col.min() and col.max() <= 2999

def _match_clue(ctx: TaskContext, r: dict, c: str, op: str, v: Any) -> bool:
    return v[0] <= r[c] <= v[1] if op in ("between", "between_num") else _match(ctx, r, c, op, v)

def scenario_diff_tasks(ctx: TaskContext, limit: int) -> None:
    """How attributes changed between the base world and this scenario, for the children of one parent."""
    if ctx.scenario is None or ctx.base is None:
        return
    made = 0
    base_year = ctx.base_spec.as_of_date.year if ctx.base_spec else None
    for t in _by_family(ctx) + [t for t in _labelled_tables(ctx) if not ctx.parents(t)]:
        pk = ctx.spec.tables[t].primary_key
        changed = [c for c in sorted(ctx.archived.get(t, ())) if c in ctx.attributes(t)]
        changed = [c for c in ctx.attributes(t) if c in changed]  # declared order
        if not changed:
            continue
        base_keys = set(ctx.base[t][pk].to_list())
        parents = ctx.parents(t)
        groups: list[tuple[str, Any]] = []
        if parents:
            ref, pt = parents[0]
            counts = ctx.tables[t].group_by(ref).len().sort("len", ref, descending=[True, False]).rows()
            groups = [(ref, k) for k, n in counts if n >= 5]
        elif ctx.tables[t].height <= 40 and t in ctx.has_dataset:
            groups = [(None, None)]
        for ref, key in groups[:limit]:
            if made >= limit:
                return
            rows = sorted((r for r in ctx.rows[t] if (ref is None or r[ref] == key) and r[pk] in base_keys), key=lambda r: ctx.label(t, r))
            if len(rows) < 3:
                continue
            cs = changed[:2]
            cols = [ctx.name_col(t)]
            own = ctx.pick_attrs(t, 3 - len(cs), exclude=tuple(changed))  # the rest of the row, as it is now
            for c in cs:
                ci = ctx.ci(t, c)
                unit = f" ({ci.unit.header()})" if ci.unit and ci.unit.header() else ""
                cols += [Column(f"{capitalized(ci.label)} in {base_year}{unit}", Field("base", t, c), ctx.ctype(t, c), exact=ci.kind == "rank"),
                         Column(f"{capitalized(ci.label)} in {ctx.spec.as_of_date.year}{unit}", Field("row", t, c), ctx.ctype(t, c), exact=ci.kind == "rank")]
            cols += [ctx.attr_col(t, a) for a in own]
            info = ctx.info[t]
            plabel = ctx.names[parents[0][1]][key].text if ref else ""
            scope = f"of {plabel} " if ref else ""
            cw = join_words([ctx.ci(t, c).label for c in cs])
            ow = ctx.ph.attrs([ctx.ci(t, a).label for a in own])
            w = ctx.ph.world
            q = ctx.ph.pick([
                f"{w} is observed as of {ctx.as_of()}. For every {info.noun} {scope}that already existed in {base_year}, "
                f"compare its {cw} as published in {base_year} with the value as of {ctx.as_of()}" + (f", and give its current {ow}" if own else "") + ".",
                f"How did the {cw} of the {info.plural} {scope}in {w} change between {base_year} and {ctx.as_of()}? "
                f"Cover every {info.noun} that already existed in {base_year}" + (f", and add its current {ow}." if own else "."),
                f"I'm writing a report on {w} that compares {base_year} with today ({ctx.as_of()}). For each {info.noun} {scope}that existed in {base_year}, "
                f"I need its {cw} then and now" + (f", plus its current {ow}." if own else "."),
            ])
            rows_plan: dict[str, Any] = ({"from": "children", "parent": {"slug": slug(parents[0][1]), "label": plabel}, "section": ctx.section(t, ref)}
                                         if ref else {"from": "dataset"})
            plan = {"rows": rows_plan, "base": {"title": f"Archived dataset: {info.plural} as of {base_year}"}}
            ctx.add("scenario_diff", t, rows, cols, q, plan)
            made += 1



# -- kinds that span tables ------------------------------------------------------------------

def _families(ctx: TaskContext) -> list[tuple[str, str, str]]:
    """``(child table, reference column, parent table)`` of every labelled child whose parents are listed in a dataset
    (the parent table's rows can be screened or ranked there); the largest child tables first."""
    return [(t, ref, pt) for t in _labelled_tables(ctx, 10) for ref, pt in ctx.parents(t) if pt in ctx.has_dataset and pt != t]

def _parent_numbers(ctx: TaskContext, pt: str) -> list[str]:
    """Numeric attributes of a parent table to screen or rank its rows by (more than three distinct values)."""
    return [c for c in ctx.attributes(pt, ("number", "share")) if ctx.tables[pt][c].n_unique() > 3]

def _own_attrs(ctx: TaskContext, t: str, k: int) -> list[str]:
    """``k`` attributes of a listed row for a cross-table task, never a date whose label is a verb phrase (``released on``):
    those read well as headers, not as ``its released on``."""
    return ctx.pick_attrs(t, k, exclude=tuple(c for c in ctx.attributes(t, ("date",)) if ctx.ci(t, c).label.split()[-1] in ("on", "at", "in")))

def _children_of(ctx: TaskContext, t: str, ref: str, pt: str, keys: list) -> list[dict]:
    """The rows of ``t`` under the parents ``keys``, by parent label, then by their own label."""
    order = {k: ctx.names[pt][k].text for k in keys}
    return sorted((r for r in ctx.rows[t] if r[ref] in order), key=lambda r: (order[r[ref]], ctx.label(t, r)))

def _parent_condition(ctx: TaskContext, pt: str) -> tuple[str, str, Any] | None:
    """One condition on a parent table's rows: a round bound on a number, or one or two values of a category."""
    nums, cats = _parent_numbers(ctx, pt), ctx.categories(pt)
    if nums and (not cats or ctx.rng.random() < 0.65):
        c = ctx.rng.choice(nums)
        vals = sorted(set(ctx.tables[pt][c].to_list()))
        if len(vals) <= 8:  # a few distinct values (storage 64, 128, 256 GB): a bound people would write is one of them
            v = ctx.rng.choice(vals[1:-1])
            return c, ctx.rng.choice((">=", "<=")), v
        th = _threshold(ctx, pt, c, ctx.rng.choice((0.2, 0.3, 0.4, 0.5)))
        return (c, *th) if th else None
    if cats:
        c = ctx.rng.choice(cats)
        vals = sorted(set(ctx.tables[pt][c].to_list()), key=str)
        k = ctx.rng.choice((1, 2)) if len(vals) > 2 else 1
        return c, "in", tuple(sorted(ctx.rng.sample(vals, k), key=str))
    return None

def _with_parent_value(ctx: TaskContext, t: str, ref: str, pt: str, c: str) -> tuple[list[str], list[Column]]:
    """2-3 of the row's own attributes, and the task columns: the row, its parent, the parent's ``c``, then those
    attributes (no attributes: no columns)."""
    own = _own_attrs(ctx, t, ctx.rng.randint(2, 3))
    if not own:
        return [], []
    return own, [ctx.name_col(t), ctx.parent_col(t, ref, pt), ctx.parent_col(t, ref, pt, c)] + [ctx.attr_col(t, a) for a in own]

def parent_filter_tasks(ctx: TaskContext, limit: int) -> None:
    """The rows of a child table whose parent meets a condition, with the parent and the parent's value; 15-60 rows."""
    fams = _families(ctx)
    seen: set = set()
    made = 0
    for i in range(limit * 8):
        if made >= limit or not fams:
            return
        t, ref, pt = fams[i % len(fams)]
        cond = _parent_condition(ctx, pt)
        if cond is None:
            continue
        c, op, v = cond
        keys = [r[ctx.spec.tables[pt].primary_key] for r in ctx.rows[pt] if _match(ctx, r, c, op, v)]
        rows = _children_of(ctx, t, ref, pt, keys)
        if not 2 <= len(keys) < ctx.tables[pt].height or not 15 <= len(rows) <= 60 or (t, pt, frozenset(keys)) in seen:
            continue
        seen.add((t, pt, frozenset(keys)))
        own, cols = _with_parent_value(ctx, t, ref, pt, c)
        if not own:
            continue
        info, pinfo = ctx.info[t], ctx.info[pt]
        (pn, pp), w, n = ctx.parent_noun(t, ref, pt), ctx.ph.world, info.noun
        which = _cond_words(ctx, pt, c, op, v)
        cl = ctx.ci(pt, c).label
        ownw = ctx.ph.attrs([ctx.ci(t, a).label for a in own])
        q = ctx.ph.preface() + ctx.ph.pick([
            f"{ctx.ph.request()} a table of every {n} of the {pp} in {w} {which}. For each {n}, give its {pn}, that {pn}'s {cl}, and the {n}'s {ownw}.",
            f"Which {info.plural} in {w} belong to {pp} {which}? List every one of them with its {pn}, the {pn}'s {cl} and its own {ownw}.",
            f"Consider only the {pp} of {w} {which}. List all of their {info.plural}, each with the {pn} it belongs to, that {pn}'s {cl}, and its {ownw}.",
            f"I'm looking at the {pp} of {w} {which}. Give me every {n} they have: its {pn}, the {pn}'s {cl}, and the {n}'s {ownw}.",
            f"Across all {pp} in {w} {which}, list each of their {info.plural} with {ctx.heads(cols[1:], 'the')}.",
        ])
        plan = {"rows": {"from": "children", "section": ctx.section(t, ref),
                         "of": {"rows": {"from": "dataset"}, "plural": pinfo.plural, "slug": slug(pt), "table": pt,
                                "where": [ctx.cond_plan(pt, c, op, v)]}}}
        ctx.add("parent_filter", t, rows, cols, q, plan, inputs=ctx.all_rows_inputs(pt, [c]))
        made += 1

def top_parents_tasks(ctx: TaskContext, limit: int) -> None:
    """Every child of the k parents with the highest (or lowest) value of a parent attribute; 15-60 rows."""
    fams = [f for f in _families(ctx) if _parent_numbers(ctx, f[2])]
    seen: set = set()
    made = 0
    for i in range(limit * 8):
        if made >= limit or not fams:
            return
        t, ref, pt = fams[i % len(fams)]
        c = ctx.rng.choice(_parent_numbers(ctx, pt))
        desc = ctx.rng.random() < 0.7
        ppk = ctx.spec.tables[pt].primary_key
        ranked = sorted(ctx.rows[pt], key=lambda r: r[c], reverse=desc)
        for k in ctx.rng.sample((3, 4, 5, 6), 4):
            if k >= len(ranked) or ranked[k - 1][c] == ranked[k][c]:
                continue  # a tie at the cut would make the top k ambiguous
            keys = [r[ppk] for r in ranked[:k]]
            rows = _children_of(ctx, t, ref, pt, keys)
            if 15 <= len(rows) <= 60 and (t, pt, frozenset(keys)) not in seen:
                break
        else:
            continue
        seen.add((t, pt, frozenset(keys)))
        own, cols = _with_parent_value(ctx, t, ref, pt, c)
        if not own:
            continue
        info, pinfo = ctx.info[t], ctx.info[pt]
        (pn, pp), w, n, cl = ctx.parent_noun(t, ref, pt), ctx.ph.world, info.noun, ctx.ci(pt, c).label
        which = "highest" if desc else "lowest"
        ownw = ctx.ph.attrs([ctx.ci(t, a).label for a in own])
        q = ctx.ph.preface() + ctx.ph.pick([
            f"Take the {k} {pp} of {w} with the {which} {cl}. List every {n} of those {pp}, with its {pn}, that {pn}'s {cl} and the {n}'s {ownw}.",
            f"{ctx.ph.request()} every {n} of the {k} {pp} with the {which} {cl} in {w}, as of {ctx.as_of()}. "
            f"For each {n}, give its {pn}, the {pn}'s {cl} and its {ownw}.",
            f"Which {info.plural} belong to the {k} {pp} with the {which} {cl} in {w}? For each of them I need {ctx.heads(cols[1:], 'the')}.",
            f"Rank the {pp} of {w} by {cl}, {which} first, and keep the first {k}. Then list all of their {info.plural}, "
            f"each with its {pn}, that {pn}'s {cl}, and its {ownw}.",
            f"First find the {k} {pp} in {w} with the {which} {cl}; then give me each of their {info.plural} with {ctx.heads(cols[1:], 'the')}.",
        ])
        plan = {"rows": {"from": "children", "section": ctx.section(t, ref),
                         "of": {"rows": {"from": "dataset"}, "plural": pinfo.plural, "slug": slug(pt), "table": pt,
                                "order": {"field": ctx.field_plan(Field("row", pt, c)), "desc": desc}, "limit": k}}}
        ctx.add("top_parents", t, rows, cols, q, plan, inputs=ctx.all_rows_inputs(pt, [c]))
        made += 1

def nested_tasks(ctx: TaskContext, limit: int) -> None:
    """Every grandchild of one to three named grandparents (the rows of a table whose parent belongs to them), with
    the parent and, when the middle rows are screened by a condition, the parent's value; 15-60 rows."""
    chains = []
    for t in _labelled_tables(ctx, 10):
        for ref, mt in ctx.parents(t)[:1]:
            chains += [(t, ref, mt, mref, gt) for mref, gt in ctx.parents(mt)[:1] if len({t, mt, gt}) == 3]
    seen: set = set()
    made = 0
    for i in range(limit * 8):
        if made >= limit or not chains:
            return
        t, ref, mt, mref, gt = chains[i % len(chains)]
        mpk, gpk = ctx.spec.tables[mt].primary_key, ctx.spec.tables[gt].primary_key
        per_gp: dict[Any, list[dict]] = {}
        for m in ctx.rows[mt]:
            per_gp.setdefault(m[mref], []).append(m)
        gkeys = sorted((r[gpk] for r in ctx.rows[gt] if r[gpk] in per_gp), key=lambda k: ctx.names[gt][k].text)
        if not gkeys:
            return
        picked = []
        for g in ctx.rng.sample(gkeys, len(gkeys)):  # one grandparent, or two or three when each has few grandchildren
            picked.append(g)
            middles = [m for x in picked for m in per_gp[x]]
            rows = _children_of(ctx, t, ref, mt, [m[mpk] for m in middles])
            if len(rows) >= 15 or len(picked) == 3:
                break
        picked.sort(key=lambda k: ctx.names[gt][k].text)
        cond = None
        if len(rows) > 60:  # too many: keep the middle rows that meet a condition
            cond = _parent_condition(ctx, mt)
            if cond is None:
                continue
            middles = [m for m in middles if _match(ctx, m, *cond)]
            rows = _children_of(ctx, t, ref, mt, [m[mpk] for m in middles])
            if len(middles) < 2:
                continue
        sig = (t, frozenset(picked), cond)
        if not 15 <= len(rows) <= 60 or sig in seen:
            continue
        seen.add(sig)
        own = _own_attrs(ctx, t, ctx.rng.randint(2, 3))
        if not own:
            continue
        cols = [ctx.name_col(t), ctx.parent_col(t, ref, mt)] + ([ctx.parent_col(t, ref, mt, cond[0])] if cond else [])
        cols += [ctx.attr_col(t, a) for a in own]
        info, minfo, ginfo = ctx.info[t], ctx.info[mt], ctx.info[gt]
        glabels = [ctx.names[gt][g].text for g in picked]
        who, many, w = join_words(glabels), len(picked) > 1, ctx.ph.world
        about = (f"{who} are {('two', 'three')[len(picked) - 2]} {ginfo.plural} of {w}" if many else f"{who} is {with_article(ginfo.noun)} of {w}")
        mp, n, mn, its = minfo.plural, info.noun, minfo.noun, "their" if many else "its"
        where = f" {_cond_words(ctx, mt, *cond)}" if cond else ""
        mcol = f", that {mn}'s {ctx.ci(mt, cond[0]).label}" if cond else ""
        ownw = ctx.ph.attrs([ctx.ci(t, a).label for a in own])
        role = ctx.role(t, ref)
        only = f" Count only the {info.plural} in which the {mn} is the {ctx.parent_noun(t, ref, mt)[0]}." if role else ""
        q = ctx.ph.preface() + ctx.ph.pick([
            f"{about}. {ctx.ph.request()} a list of every {n} of {its} {mp}{where}. For each {n}, give the {mn} it belongs to{mcol} and its {ownw}.",
            f"Go through the {mp} of {who} in {w}{where}, and list all of their {info.plural}: each {n} with its {mn}{mcol} and its {ownw}.",
            f"{about}. Which {info.plural} belong to {its} {mp}{where}? Give every one of them with {ctx.heads(cols[1:], 'the')}.",
            f"For {who} in {w}, I need every {n} of {its} {mp}{where}, as of {ctx.as_of()}, with {ctx.heads(cols[1:], 'the')} of each.",
        ]) + only
        sub: dict[str, Any] = {"rows": {"from": "children", "section": ctx.section(mt, mref), "parents": [{"slug": slug(gt), "label": x} for x in glabels]},
                               "plural": mp, "slug": slug(mt), "table": mt}
        if cond:
            sub["where"] = [ctx.cond_plan(mt, *cond)]
        plan = {"rows": {"from": "children", "section": ctx.section(t, ref), "of": sub}}
        inputs = [cell for m in middles for cell in ctx.label_cells(mt, m)]
        if cond:
            inputs += [cell for g in picked for m in per_gp[g] for cell in ctx.label_cells(mt, m) + [(mt, str(m[mpk]), cond[0], None)]]
        ctx.add("nested", t, rows, cols, q, plan, inputs=inputs)
        made += 1


KIND_MAKERS = {
    "lookup": lookup_tasks, "filter": filter_tasks, "join": join_tasks, "aggregate": aggregate_tasks, "top_k": top_k_tasks,
    "ranking": ranking_tasks, "window": window_tasks, "deep_wide": deep_wide_tasks, "parent_filter": parent_filter_tasks,
    "top_parents": top_parents_tasks, "nested": nested_tasks, "scenario_diff": scenario_diff_tasks,
}
"""Each kind's function, by its name."""


def supported(ctx: TaskContext, kind: str) -> int:
    """How many tasks of ``kind`` the world supports: three per table, family, grouping or chain the kind can vary over,
    at least 4 and at most 6 (a world with one family still gets four of each kind it can make, a larger one six). Each
    kind stops earlier where its rows run out (no further distinct date span, threshold or set of parents): it never
    asks twice for the same rows."""
    labelled = _labelled_tables(ctx)
    if kind == "lookup":
        slots = sum(1 for t in labelled if not ctx.parents(t) and ctx.tables[t].height <= 40 and t in ctx.has_dataset)
        slots += sum(1 for t in labelled if ctx.parents(t))
    elif kind in ("filter", "top_k"):
        slots = sum(1 for t in _labelled_tables(ctx, 20) if ctx.numbers(t) and t in ctx.has_dataset)
    elif kind == "join":
        slots = sum(1 for t in _labelled_tables(ctx, 10) if ctx.event(t) and ctx.parents(t) and t in ctx.has_dataset)
    elif kind == "window":
        slots = sum(1 for t in _labelled_tables(ctx, 10) if ctx.event(t))
    elif kind == "aggregate":  # per-group tables are short: never more than four of them
        return 4
    elif kind == "deep_wide":
        slots = sum(1 for t in labelled if ctx.parents(t))
    elif kind in ("parent_filter", "top_parents"):
        slots = len(_families(ctx))
    elif kind == "nested":
        slots = sum(1 for t in _labelled_tables(ctx, 10) for _, mt in ctx.parents(t)[:1] if ctx.parents(mt))
    else:  # ranking (as many as the ranking pages), scenario_diff (the families of the scenario)
        slots = 1
    return max(4, min(6, 3 * slots))
