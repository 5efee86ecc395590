"""Search-corpus pages generated from a world's rows, with cell-level provenance.

Six page types, each on its own plausible fictional site of the world:

=========== ====================================== =========================================
type        one page per                           states
=========== ====================================== =========================================
entity      row of every table (wiki-like)         every column in an infobox, parents and
                                                   children as links
ranking     rank column (per group with ``within``) rank, label and ranked value of each row
news        row of a table with a date column      the event date in the lead, 2–3 attributes
comparison  pair of sibling rows with numbers      numeric attributes side by side
forum       about a third of the rows (Q&A)        one attribute in an answer
timeline    table and quarter of its first date    labels and dates of the rows in the quarter
=========== ====================================== =========================================

Every page has a stable URL, a title, a date (``published``, or none for wikis), a Markdown
body whose first paragraph is its *lead*, and its provenance: the ``(table, row key,
column, value text)`` cells it states, each marked ``lead`` or ``body``. Search snippets are
cut from leads only (:mod:`worldforge.corpus.index`), so a ``body`` fact never shows in a
snippet and an agent has to open the page for it. Pages never contradict the tables: each
value is rendered from the row by :func:`render_value` and
:func:`~worldforge.corpus.store.check_corpus` re-reads every fact against DuckDB.

Text variety comes from seeded templates and Faker (authors, forum users); the same world,
scenario and seed give the same corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import polars as pl

from worldforge.spec import models as M
from worldforge.synth import column_rng

__all__ = ["Fact", "Page", "build_pages", "render_value", "label_column", "pretty", "singular", "slug"]


@dataclass(frozen=True)
class Fact:
    """One table cell a page states."""

    table_name: str
    row_key: str
    column_name: str
    value_text: str
    section: str  # "lead" or "body"


@dataclass
class Page:
    """One generated page and the table cells it states (a ``corpus_pages`` row and its ``corpus_facts``).

    Attributes:
        url: the stable URL (the page's key).
        world: the world name.
        scenario: the scenario, or ``None`` for the world itself.
        page_type: ``entity``, ``ranking``, ``news``, ``comparison``, ``forum`` or ``timeline``.
        title: the page title.
        published: the publication date, or ``None`` (wiki and timeline pages).
        lead: the first paragraph, the only text search snippets are cut from.
        body_md: the Markdown body, starting with the lead.
        facts: the cells the page states, each marked ``lead`` or ``body``.
    """

    url: str
    world: str
    scenario: str | None
    page_type: str
    title: str
    published: date | None
    lead: str
    body_md: str
    facts: list[Fact] = field(default_factory=list)


def render_value(value: Any) -> str:
    """The text a page uses for a cell: dates as ``Mon DD, YYYY``, whole floats without ``.0``."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, date):
        return value.strftime("%b %d, %Y")
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def page_markdown(page) -> str:
    """A stored page (a ``corpus_pages`` row as a mapping) as ``web_extractor`` returns it:
    ``# title``, the publication line when dated, then the Markdown body."""
    published = f"*Published {render_value(page['published'])}*\n\n" if page["published"] else ""
    return f"# {page['title']}\n\n{published}{page['body_md']}"


def pretty(column: str) -> str:
    """``launch_price_usd`` -> ``launch price usd``."""
    return column.replace("_", " ")


def label_column(table: M.TableSpec) -> str:
    """The column that names a row: ``name``, else a ``*_name``/``handle``/``title``/``code``
    column, else the first format column, else the primary key."""
    cols = table.columns
    for c in cols:
        if c == "name":
            return c
    for c in cols:
        if c.endswith("_name") or c in ("handle", "title", "code"):
            return c
    for c, col in cols.items():
        if col.kind == "format":
            return c
    return table.primary_key


def slug(text: str) -> str:
    """``Nova X 2029!`` -> ``nova-x-2029``: lower case, every run of other characters a ``-``; ``x`` when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def singular(table: str) -> str:
    """``supply_flights`` -> ``supply flight``, ``categories`` -> ``category``."""
    word = table.replace("_", " ")
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ses"):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


class _Builder:
    def __init__(self, spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None, seed: int):
        self.spec, self.tables, self.scenario, self.seed = spec, tables, scenario, seed
        self.slug = slug(spec.world)
        self.title = spec.title or spec.world.replace("_", " ")
        self.as_of = spec.as_of_date
        self.rows = {t: f.to_dicts() for t, f in tables.items()}
        self.by_key = {t: {r[spec.tables[t].primary_key]: r for r in rows} for t, rows in self.rows.items()}
        self.labels: dict[str, dict[Any, str]] = {}
        for t, table in spec.tables.items():
            lc = label_column(table)
            pk = table.primary_key
            self.labels[t] = {
                r[pk]: (render_value(r[lc]) if lc != pk else f"{singular(t).title()} #{r[pk]}") for r in self.rows[t]
            }
        self.pages: list[Page] = []
        self.urls: set[str] = set()
        from faker import Faker

        self.fake = Faker("en_US", use_weighting=False)
        self.fake.seed_instance(column_rng(seed, spec.world, scenario or "", "corpus").getrandbits(64))

    # -- helpers ------------------------------------------------------------------------
    def rng(self, *names: str):
        return column_rng(self.seed, self.spec.world, self.scenario or "", *names)

    def url(self, site: str, path: str) -> str:
        scen = f"/{self.scenario}" if self.scenario else ""
        base = f"https://{site}{scen}/{path}"
        url, n = base, 2
        while url in self.urls:
            url, n = f"{base}-{n}", n + 1
        self.urls.add(url)
        return url

    def entity_url(self, t: str, key: Any) -> str:
        return self._entity_urls[(t, key)]

    def fact(self, t: str, row: dict, col: str, section: str) -> tuple[str, Fact]:
        text = render_value(row[col])
        pk = self.spec.tables[t].primary_key
        return text, Fact(t, str(row[pk]), col, text, section)

    def unit(self, t: str, col: str) -> str:
        u = self.spec.tables[t].columns[col].unit
        return f" {u}" if u else ""

    def add(self, page: Page) -> None:
        # a value stated in the lead is a lead fact even when the body repeats it
        lead_cells = {(f.table_name, f.row_key, f.column_name) for f in page.facts if f.section == "lead"}
        seen, facts = set(), []
        for f in page.facts:
            key = (f.table_name, f.row_key, f.column_name)
            if key in seen or (f.section == "body" and key in lead_cells):
                continue
            seen.add(key)
            facts.append(f)
        page.facts = facts
        self.pages.append(page)

    def numeric_columns(self, t: str) -> list[str]:
        table = self.spec.tables[t]
        frame = self.tables[t]
        return [
            c for c, col in table.columns.items()
            if c != table.primary_key and col.kind != "reference" and frame.schema[c] in (pl.Int64, pl.Float64)
        ]

    def date_columns(self, t: str) -> list[str]:
        table = self.spec.tables[t]
        return [c for c in table.columns if self.tables[t].schema[c] == pl.Date and "birth" not in c]

    # -- page types ---------------------------------------------------------------------
    def entities(self) -> None:
        self._entity_urls: dict[tuple[str, Any], str] = {}
        for t in self.spec.tables:
            for key, label in self.labels[t].items():
                self._entity_urls[(t, key)] = self.url(f"{self.slug}pedia.org", f"wiki/{slug(t)}/{slug(label)}")
        children = {t: [(c, ref) for c, tab in self.spec.tables.items() for ref, col in tab.references.items() if col.parent == t] for t in self.spec.tables}
        for t, table in self.spec.tables.items():
            lc = label_column(table)
            pk = table.primary_key
            kind = singular(t)
            rng = self.rng("entity", t)
            for row in self.rows[t]:
                label = self.labels[t][row[pk]]
                facts: list[Fact] = []
                if lc != pk:
                    facts.append(self.fact(t, row, lc, "lead")[1])
                lead = f"**{label}** is a {kind} in *{self.title}*."
                for ref, col in table.references.items():
                    plabel = self.labels[col.parent][row[ref]]
                    plc = label_column(self.spec.tables[col.parent])
                    lead += f" {rng.choice(['It belongs to', 'It is part of', 'It is listed under'])} [{plabel}]({self.entity_url(col.parent, row[ref])})."
                    if plc != self.spec.tables[col.parent].primary_key:
                        prow = self.by_key[col.parent][row[ref]]
                        facts.append(self.fact(col.parent, prow, plc, "lead")[1])
                lines = [lead, "", f"| {kind} | |", "|---|---|"]
                for c, col in table.columns.items():
                    if c in (pk, lc) or col.kind == "reference":
                        continue
                    text, f = self.fact(t, row, c, "body")
                    if row[c] is None:
                        continue
                    lines.append(f"| {pretty(c)} | {text}{self.unit(t, c)} |")
                    facts.append(f)
                for child, ref in children[t]:
                    kids = [r for r in self.rows[child] if r[ref] == row[pk]]
                    if not kids:
                        continue
                    cpk = self.spec.tables[child].primary_key
                    clc = label_column(self.spec.tables[child])
                    lines += ["", f"## {pretty(child).capitalize()}", ""]
                    for k in kids:
                        lines.append(f"- [{self.labels[child][k[cpk]]}]({self.entity_url(child, k[cpk])})")
                        if clc != cpk:
                            facts.append(self.fact(child, k, clc, "body")[1])
                self.add(Page(self.entity_url(t, row[pk]), self.spec.world, self.scenario, "entity", f"{label} - {self.title} wiki", None, lead, "\n".join(lines), facts))

    def rankings(self) -> None:
        for t, table in self.spec.tables.items():
            pk = table.primary_key
            lc = label_column(table)
            for rc, col in table.columns.items():
                if not isinstance(col, M.RankColumn):
                    continue
                groups: dict[Any, list[dict]] = {}
                for row in self.rows[t]:
                    groups.setdefault(row[col.within] if col.within else None, []).append(row)
                for g, rows in groups.items():
                    rows = sorted(rows, key=lambda r: r[rc])
                    scope = ""
                    if col.within:
                        parent = table.columns[col.within]
                        scope = f" of {self.labels[parent.parent][g]}" if isinstance(parent, M.ReferenceColumn) else f" ({render_value(g)})"
                    title = f"{pretty(t).capitalize()}{scope} ranked by {pretty(col.of)}"
                    lead = f"The {len(rows)} {pretty(t)}{scope} in *{self.title}*, ranked by {pretty(col.of)} as of {render_value(self.as_of)}."
                    lines = [lead, "", f"| Rank | {singular(t).title()} | {pretty(col.of).capitalize()} |", "|---|---|---|"]
                    facts = []
                    for r in rows:
                        rt, f1 = self.fact(t, r, rc, "body")
                        vt, f2 = self.fact(t, r, col.of, "body")
                        label = self.labels[t][r[pk]]
                        lines.append(f"| {rt} | [{label}]({self.entity_url(t, r[pk])}) | {vt}{self.unit(t, col.of)} |")
                        facts += [f1, f2] + ([self.fact(t, r, lc, "body")[1]] if lc != pk else [])
                    url = self.url(f"top{self.slug.replace('-', '')}.com", f"rankings/{slug(title)}")
                    self.add(Page(url, self.spec.world, self.scenario, "ranking", title, self.as_of, lead, "\n".join(lines), facts))

    def news(self) -> None:
        verbs = {"announced": "is announced", "launch_date": "launches", "arrival_date": "arrives", "start_date": "gets under way",
                 "founded": "is founded", "season_start": "kicks off its season", "commissioned": "is commissioned",
                 "listed_on": "goes on sale", "end_date": "wraps up", "launch": "lifts off"}
        for t, table in self.spec.tables.items():
            dates = self.date_columns(t)
            if not dates:
                continue
            pk = table.primary_key
            lc = label_column(table)
            nums = self.numeric_columns(t)
            rng = self.rng("news", t)
            for row in self.rows[t]:
                dc = dates[0]
                if row[dc] is None:
                    continue
                label = self.labels[t][row[pk]]
                verb = verbs.get(dc, f"reaches its {pretty(dc)}")
                dtext, dfact = self.fact(t, row, dc, "lead")
                published = min(row[dc] + timedelta(days=rng.randint(0, 3)), self.as_of) if isinstance(row[dc], date) else None
                title = rng.choice([f"{label} {verb}", f"{label} {verb} on {dtext}", f"Report: {label} {verb}"])
                lead = f"{label} {verb} on {dtext}, {rng.choice(['sources confirmed', 'according to a statement', 'officials said', 'the team announced'])}."
                facts = [dfact] + ([self.fact(t, row, lc, "lead")[1]] if lc != pk else [])
                body = [lead, ""]
                for c in rng.sample(nums, min(len(nums), rng.randint(2, 3))):
                    text, f = self.fact(t, row, c, "body")
                    if row[c] is None:
                        continue
                    value = f"{text}{self.unit(t, c)}"
                    template = rng.randrange(3)  # choose first: only the chosen sentence calls Faker
                    if template == 0:
                        body.append(f"Its {pretty(c)} stands at {value}.")
                    elif template == 1:
                        body.append(f"Figures seen by this outlet put the {pretty(c)} at {value}.")
                    else:
                        body.append(f"{self.fake.first_name()} {self.fake.last_name()}, an analyst at {self.fake.company()}, noted a {pretty(c)} of {value}.")
                    facts.append(f)
                body += ["", f"*By {self.fake.first_name()} {self.fake.last_name()}*"]
                url = self.url(f"{self.slug}-daily.com", f"{row[dc].year}/{row[dc].month:02d}/{slug(title)}")
                self.add(Page(url, self.spec.world, self.scenario, "news", title, published, lead, "\n".join(body), facts))

    def timelines(self) -> None:
        """One page per table and quarter listing the rows whose first date falls in it."""
        for t, table in self.spec.tables.items():
            dates = self.date_columns(t)
            pk = table.primary_key
            if not dates or label_column(table) == pk:
                continue
            dc = dates[0]
            quarters: dict[tuple[int, int], list[dict]] = {}
            for row in self.rows[t]:
                d = row[dc]
                if d is not None:
                    quarters.setdefault((d.year, (d.month - 1) // 3 + 1), []).append(row)
            for (y, q), rows in sorted(quarters.items()):
                rows = sorted(rows, key=lambda r: (r[dc], r[pk]))
                title = f"{pretty(t).capitalize()} by {pretty(dc)}: Q{q} {y}"
                lead = f"Every {singular(t)} in *{self.title}* whose {pretty(dc)} falls in Q{q} {y}."
                lines = [lead, ""]
                facts = []
                for r in rows:
                    dtext, f = self.fact(t, r, dc, "body")
                    lines.append(f"- [{self.labels[t][r[pk]]}]({self.entity_url(t, r[pk])}): {dtext}")
                    facts += [f, self.fact(t, r, label_column(table), "body")[1]]
                url = self.url(f"archive.{self.slug}.org", f"{slug(t)}/{y}-q{q}")
                self.add(Page(url, self.spec.world, self.scenario, "timeline", title, None, lead, "\n".join(lines), facts))

    def comparisons(self) -> None:
        for t, table in self.spec.tables.items():
            nums = self.numeric_columns(t)
            if len(nums) < 2 or label_column(table) == table.primary_key:
                continue
            pk = table.primary_key
            rows = self.rows[t]
            rng = self.rng("comparison", t)
            for i in range(0, len(rows) - 1, 2):
                a, b = rows[i], rows[i + 1]
                la, lb = self.labels[t][a[pk]], self.labels[t][b[pk]]
                cols = rng.sample(nums, min(len(nums), 4))
                title = f"{la} vs {lb}: {', '.join(pretty(c) for c in cols[:2])} compared"
                lead = f"How does {la} compare with {lb}? We put the two side by side."
                lines = [lead, "", f"| | {la} | {lb} |", "|---|---|---|"]
                facts = [self.fact(t, a, label_column(table), "lead")[1], self.fact(t, b, label_column(table), "lead")[1]]
                for c in cols:
                    ta, fa = self.fact(t, a, c, "body")
                    tb, fb = self.fact(t, b, c, "body")
                    lines.append(f"| {pretty(c)}{self.unit(t, c)} | {ta} | {tb} |")
                    facts += [f for f, v in ((fa, a[c]), (fb, b[c])) if v is not None]
                url = self.url(f"versus-{self.slug}.net", f"{slug(la)}-vs-{slug(lb)}")
                self.add(Page(url, self.spec.world, self.scenario, "comparison", title, self.as_of, lead, "\n".join(lines), facts))

    def forum(self) -> None:
        for t, table in self.spec.tables.items():
            nums = self.numeric_columns(t) + self.date_columns(t)
            if not nums:
                continue
            pk = table.primary_key
            rng = self.rng("forum", t)
            for row in self.rows[t]:
                if rng.random() > 0.34:
                    continue
                c = rng.choice(nums)
                if row[c] is None:
                    continue
                label = self.labels[t][row[pk]]
                text, f = self.fact(t, row, c, "body")
                asker, answerer = self.fake.user_name(), self.fake.user_name()
                title = f"What is the {pretty(c)} of {label}?"
                lead = f"**{asker}** asks: {rng.choice(['Does anyone know', 'Quick question:', 'I keep wondering'])} what the {pretty(c)} of {label} is?"
                body = [lead, "", f"> **{answerer}** replied: {rng.choice(['It is', 'Last I checked it was', 'Pretty sure it is'])} {text}{self.unit(t, c)}.",
                        "", f"> **{asker}**: {rng.choice(['Thanks!', 'Great, that helps.', 'Cheers.'])}"]
                facts = [f] + ([self.fact(t, row, label_column(table), "lead")[1]] if label_column(table) != pk else [])
                url = self.url(f"forum.{self.slug}.io", f"t/{slug(title)}")
                self.add(Page(url, self.spec.world, self.scenario, "forum", title, self.as_of, lead, "\n".join(body), facts))


def build_pages(spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None = None, seed: int | None = None) -> list[Page]:
    """All pages of a world's (or a scenario's) corpus.

    Args:
        spec: the spec the tables satisfy (a scenario's spec for a scenario).
        tables: the world's (or scenario's) tables.
        scenario: the scenario name (None for the world itself); it enters URLs.
        seed: text-variety seed (default: the spec's).

    Returns:
        Pages with their facts, in a deterministic order.
    """
    b = _Builder(spec, tables, scenario, spec.seed if seed is None else seed)
    b.entities()
    b.rankings()
    b.news()
    b.timelines()
    b.comparisons()
    b.forum()
    return b.pages
