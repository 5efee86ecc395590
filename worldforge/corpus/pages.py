"""Search-corpus pages generated from a world's rows: web genres with provenance for every stated value.

Each world gets its own fictional web: an encyclopedia, several news sites, a newsroom per
organisation that owns rows, a ranking site, a spec/profile site, a comparison site, a forum, a
statistics portal, an archive and a rumour blog. Every site writes values in its own
:class:`~worldforge.corpus.quantity.Style` (date format, money as ``$1,099`` or ``1,099 USD``,
large amounts in words or in full), and every genre has its own structure and several phrasings
per kind of fact, chosen by seed:

============== ================================= ===============================================
page_type      one page per                      states
============== ================================= ===============================================
encyclopedia   row of every table                 label, parents and category in the lead; every
                                                  column in an infobox, in full; children as links;
                                                  related rows under "See also"
news           row with a dated event             the event in the lead; 2-3 attributes in prose,
                                                  rounded as news does; a related row's fact
press_release  dated row of an organisation's     the announcement in the lead; attributes in full;
               child table (about half)           an "About <organisation>" paragraph
ranking        rank column (per group)            rank, label and ranked value of every row
profile        row with three or more attributes  a key-spec sheet in the site's own format
comparison     pair/triple of sibling rows        numeric attributes side by side
forum          about a third of the rows          one or two attributes in casual answers
dataset        table (paginated, 25 rows a page)  label (linked), parent and up to six columns of every row
timeline       table and quarter of its event     labels and dates of the rows in the quarter
rumor          some rows with a parent            a near miss: the row's name, nothing new
============== ================================= ===============================================

A scenario's corpus also gets *archive* news pages dated in the base year and *archived datasets*
(the base world's values of the columns that changed, page type ``dataset``), both stating base-world
values (facts with ``scope = 'world'``): a previous year's value, clearly dated in the past.

Every page has a stable URL, a title, a date (``published``, or none for reference pages), an
*article* whose first paragraph is its *lead*, a Markdown body that puts the article in its
site's chrome (navigation, breadcrumbs, background paragraphs, comments, related lists, footer:
:mod:`worldforge.corpus.chrome`), and its provenance: the ``(table, row key, column, stated
text)`` cells it states, each marked ``lead`` or ``body``, all inside the article. Prose is
planned and realised by :mod:`worldforge.corpus.planner` over the verb frames of
:mod:`worldforge.corpus.lexicon`: several facts a sentence, the row named first and then
referred to by pronoun, surname or description. Search snippets are cut
from leads only (:mod:`worldforge.corpus.index`), so a ``body`` fact never shows in a snippet.
Pages never contradict the tables: every stated text is written from the cell by
:func:`~worldforge.corpus.quantity.format_value`, and :func:`~worldforge.corpus.store.check_corpus`
reads each one back (:func:`~worldforge.corpus.quantity.denotes`) against DuckDB. Column
identifiers never appear in a page: columns are named by their labels (:mod:`worldforge.corpus.vocab`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import polars as pl

from worldforge.corpus.chrome import background_pool, forum_replies
from worldforge.corpus.lexicon import Frame, Referent, a_or_an, base_verb, frame_for, person_table, possessive
from worldforge.corpus.planner import Said, realise
from worldforge.corpus.planner import sentence_case as _cap  # one rule for a capital at a sentence start
from worldforge.corpus.quantity import Style, format_value, render_value
from worldforge.corpus.vocab import ColumnInfo, TableInfo, label_column, row_labels, singular, table_info
from worldforge.spec import models as M
from worldforge.synth import column_rng

__all__ = ["Fact", "Page", "build_pages", "label_column", "page_markdown", "served", "singular", "slug"]


@dataclass(frozen=True)
class Fact:
    """One table cell a page states.

    Attributes:
        table_name, row_key, column_name: the cell.
        value_text: the text the page states for it (in the site's style, verbatim in the body).
        section: ``lead`` (may show in a search snippet) or ``body``.
        scope: ``None`` when the cell is of the page's own corpus (the world or its scenario);
            ``world`` for a scenario page that states a base-world value (an archive page).
    """

    table_name: str
    row_key: str
    column_name: str
    value_text: str
    section: str
    scope: str | None = None


@dataclass
class Page:
    """One generated page and the table cells it states (a ``corpus_pages`` row and its ``corpus_facts``).

    Attributes:
        url: the stable URL (the page's key).
        world: the world name.
        scenario: the scenario, or ``None`` for the world itself.
        page_type: the genre (see the module docstring).
        title: the page title.
        published: the publication date, or ``None`` (reference pages).
        lead: the first paragraph, the only text search snippets are cut from.
        body_md: the Markdown body, starting with the lead.
        facts: the cells the page states, each marked ``lead`` or ``body``.
        site: the domain of the site that publishes it.
        chrome: how the site dresses the article when the page is served (a recipe for
            :class:`~worldforge.corpus.chrome.Dresser`: genre, site name, breadcrumbs, counts of background
            sentences and comments, a seed, cited URLs), or ``None`` for a bare page. ``body_md`` is the article
            alone (lead, prose, tables: every fact is stated there); the chrome is rendered on read.
        context: the corpus's chrome context (:meth:`_Builder.chrome_context`), one dict shared by all its pages;
            stored once per corpus in ``_corpus.chrome_context``.
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
    site: str = ""
    chrome: dict | None = None
    context: dict | None = field(default=None, repr=False, compare=False)

    def row(self) -> dict:
        """The page as a stored ``corpus_pages`` row (what :meth:`~worldforge.corpus.chrome.Dresser.render` reads)."""
        return {"url": self.url, "page_type": self.page_type, "title": self.title, "published": self.published,
                "body_md": self.body_md, "site": self.site, "chrome": self.chrome}


def page_markdown(page) -> str:
    """A stored page (a ``corpus_pages`` row as a mapping) as ``web_extractor`` returns it:
    ``# title``, the publication line when dated, then the Markdown body."""
    published = f"*Published {render_value(page['published'])}*\n\n" if page["published"] else ""
    return f"# {page['title']}\n\n{published}{page['body_md']}"


def slug(text: str) -> str:
    """``Nova X 2029!`` -> ``nova-x-2029``: lower case, every run of other characters a ``-``; ``x`` when nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


_PERSON_PROVIDERS = {"name", "first_name", "last_name", "name_male", "name_female", "first_name_male", "first_name_female",
                     "last_name_male", "last_name_female", "prefix", "suffix", "prefix_male", "prefix_female", "suffix_male",
                     "suffix_female", "name_nonbinary", "first_name_nonbinary", "last_name_nonbinary"}


def _faker_person(col: Any) -> bool:
    """A naming column made of Faker person names: the ``name`` provider, or a template whose every placeholder is
    a person-name provider (``{{first_name}} {{last_name}}``); ``{{color_name}} {{last_name}}`` names a thing."""
    if not isinstance(col, M.FakerColumn):
        return False
    if col.template:
        fields = re.findall(r"\{\{\s*(\w+)\s*\}\}", col.template)
        return bool(fields) and all(f in _PERSON_PROVIDERS for f in fields) and any("name" in f for f in fields)
    return (col.provider or "") in _PERSON_PROVIDERS and "name" in (col.provider or "")


@dataclass(frozen=True)
class Site:
    """One fictional site: its domain, its name as a publisher, and how it writes values."""

    domain: str
    name: str
    style: Style


_NEWS_NAMES = ("{T} Daily", "The {T} Wire", "{T} Insider", "{T} Times", "The {T} Ledger", "{T} Today", "{T} Dispatch", "{T} Report")
_SOURCES = ("sources confirmed", "according to a statement", "officials said", "a spokesperson said", "records show", "a filing shows")
_RANKING_TOP = 50
"""Rows a ranking page lists at most (the rest of a rank column is stated in each row's encyclopedia infobox)."""
_NEWS_OPENERS = ("Update:", "In brief:", "Confirmed:", "Just in:", "Catching up:", "From the wires:", "Quick take:", "For the record:",
                 "Worth knowing:", "This week:")
_PRESS_TRAILERS = (", the organisation said in a statement", ", in line with its published plans", ", as planned",
                   ", following months of preparation", ", according to the announcement", ", with further details to follow")
_BYLINE_ROLES = ("staff writer", "correspondent", "senior reporter", "data editor")


class _Builder:
    def __init__(self, spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None, seed: int,
                 base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None):
        self.spec, self.tables, self.scenario, self.seed = spec, tables, scenario, seed
        self.base = base
        self.slug = slug(spec.site or spec.world)
        self.title = spec.title or spec.world.replace("_", " ")
        self.topic = _cap((spec.site or spec.world).split("_")[0])
        self.as_of = spec.as_of_date
        self.rows = {t: f.to_dicts() for t, f in tables.items()}
        self.info: dict[str, TableInfo] = {t: table_info(spec, t, tables[t]) for t in spec.tables}
        self.by_key = {t: {r[spec.tables[t].primary_key]: r for r in rows} for t, rows in self.rows.items()}
        # how each row is called: its name, or the designation of a table without a name column (vocab.row_labels)
        self.row_labels = row_labels(spec, tables, self.info)
        self.labels: dict[str, dict[Any, str]] = {t: {k: lab.text for k, lab in labs.items()} for t, labs in self.row_labels.items()}
        self.children = {t: [(c, ref) for c, tab in spec.tables.items() for ref, col in tab.references.items() if col.parent == t] for t in spec.tables}
        self.person = {t: person_table(self.info[t].noun, _faker_person(spec.tables[t].columns.get(self.info[t].label_column))) for t in spec.tables}
        self._frames: dict[tuple[str, str], Frame] = {}
        self.topics = [_cap(self.info[t].plural) for t in spec.tables] + ["Latest", "Analysis", "Features", "Data", "Guides", "Archive"]
        self.pool_name = spec.archetype or re.sub(r"_\d{4}$", "", spec.world)
        self.background_pool = background_pool(self.pool_name)
        self.pages: list[Page] = []
        self.urls: set[str] = set()
        from faker import Faker

        fake = Faker("en_US", use_weighting=False)
        fake.seed_instance(column_rng(seed, spec.world, scenario or "", "corpus").getrandbits(64))
        self.users = [fake.user_name() for _ in range(240)]  # the corpus's commenters and forum members
        self.people = [f"{fake.first_name()} {fake.last_name()}" for _ in range(120)]  # its reporters and spokespeople
        rng = self.rng("sites")
        dates = ("mdy_short", "mdy_abbr", "mdy_long", "dmy_long", "iso")
        news_names = rng.sample(_NEWS_NAMES, 3)
        self.sites = {
            "wiki": Site(f"{self.slug}pedia.org", f"{self.topic}pedia", Style(rng.choice(("mdy_long", "dmy_long")), "symbol", False)),
            "news": [Site(f"{slug(n.format(T=self.topic)).replace('-', '')}.com", n.format(T=self.topic),
                          Style(rng.choice(dates[:4]), rng.choice(("symbol", "symbol", "code", "prefixed")), rng.random() < 0.8)) for n in news_names],
            "ranking": Site(f"top{self.slug.replace('-', '')}.com", f"Top {self.topic}", Style("mdy_abbr", "symbol", False)),
            "profile": Site(f"{self.slug}-specs.com", f"{self.topic} Specs", Style("iso", rng.choice(("code", "symbol")), False)),
            "compare": Site(f"versus-{self.slug}.net", f"{self.topic} Versus", Style(rng.choice(dates), "symbol", False)),
            "forum": Site(f"forum.{self.slug}.io", f"{self.topic} Forum", Style(rng.choice(dates[:4]), "symbol", True)),
            "data": Site(f"data.{self.slug}.org", f"{self.topic} Open Data", Style("iso", "code", False)),
            "archive": Site(f"archive.{self.slug}.org", f"{self.topic} Archive", Style("mdy_short", "symbol", False)),
            "rumor": Site(f"{self.slug}-leaks.com", f"{self.topic} Leaks", Style(rng.choice(dates[:4]), "symbol", True)),
        }

    # -- helpers ------------------------------------------------------------------------
    def rng(self, *names: str):
        """A random stream for one purpose of this corpus, seeded by world, scenario and ``names``."""
        return column_rng(self.seed, self.spec.world, self.scenario or "", *names)

    def url(self, site: Site, path: str) -> str:
        """A new, unique URL on ``site`` (``-2``, ``-3`` ... appended on a clash); scenario corpora get their own path."""
        scen = f"/{self.scenario}" if self.scenario else ""
        base = f"https://{site.domain}{scen}/{path}"
        url, n = base, 2
        while url in self.urls:
            url, n = f"{base}-{n}", n + 1
        self.urls.add(url)
        return url

    def wiki_url(self, t: str, key: Any) -> str:
        """The encyclopedia URL of row ``key`` of table ``t``."""
        return self._wiki_urls[(t, key)]

    def col(self, t: str, c: str) -> ColumnInfo:
        """How pages present column ``c`` of table ``t``."""
        return self.info[t].columns[c]

    def say(self, t: str, row: dict, c: str, style: Style, section: str, scope: str | None = None) -> tuple[str, Fact]:
        """The text a page writes for one cell, and its fact."""
        info = self.col(t, c)
        value = row[c]
        text = _cell(str(value)) if info.kind in ("name", "category", "text") and not isinstance(value, (int, float, date)) else format_value(value, info.unit, style)
        pk = self.spec.tables[t].primary_key
        return text, Fact(t, str(row[pk]), c, text, section, scope)

    def name_fact(self, t: str, row: dict, section: str, scope: str | None = None) -> list[Fact]:
        """The facts stating a row's label: its name cell, or the cells its designation states (the parent's
        label, the event date ...; none for a designation made of an ordinal alone)."""
        lab = self.row_labels[t][row[self.spec.tables[t].primary_key]]
        return [Fact(ct, ck, cc, text, section, scope) for ct, ck, cc, text in lab.cells]

    def add(self, page: Page) -> None:
        # a value stated in the lead is a lead fact even when the body repeats it
        """Keep a page, its facts deduplicated (a cell stated in the lead is a lead fact even when the body repeats it)."""
        lead_cells = {(f.table_name, f.row_key, f.column_name, f.scope) for f in page.facts if f.section == "lead"}
        seen, facts = set(), []
        for f in page.facts:
            key = (f.table_name, f.row_key, f.column_name, f.scope)
            if key in seen or (f.section == "body" and key in lead_cells):
                continue
            seen.add(key)
            facts.append(f)
        page.facts = facts
        self.pages.append(page)

    def attributes(self, t: str, kinds: tuple[str, ...] = ("number", "share", "rank", "date", "category", "bool", "text")) -> list[str]:
        """Columns a page can state about a row, in declared order (keys, names, references and compose-only columns excluded)."""
        return self.info[t].attributes(kinds)

    def numbers(self, t: str) -> list[str]:
        """Numeric and share columns of ``t`` (what comparisons and news figures state)."""
        return self.attributes(t, ("number", "share"))

    def event(self, t: str) -> str | None:
        """The first date column of a table with an event verb (else the first date column), for news."""
        dates = [c for c in self.attributes(t, ("date",)) if "birth" not in c]
        with_verb = [c for c in dates if self.col(t, c).event]
        return (with_verb or dates or [None])[0]

    def parent_of(self, t: str, row: dict) -> tuple[str, dict] | None:
        """The first labelled parent row of ``row`` as ``(table, row)``, or ``None``."""
        for ref, col in self.spec.tables[t].references.items():
            prow = self.by_key[col.parent].get(row[ref])
            if prow is not None and self.info[col.parent].label_column != self.spec.tables[col.parent].primary_key:
                return col.parent, prow
        return None

    def siblings(self, t: str, row: dict) -> list[dict]:
        """Other rows of ``t`` with the same first parent as ``row``."""
        pk = self.spec.tables[t].primary_key
        for ref in self.spec.tables[t].references:
            return [r for r in self.rows[t] if r[ref] == row[ref] and r[pk] != row[pk]]
        return []

    # -- prose -------------------------------------------------------------------------
    def frame(self, t: str, c: str) -> Frame:
        """How sentences state column ``c`` of ``t`` (:func:`~worldforge.corpus.lexicon.frame_for`, cached)."""
        key = (t, c)
        fr = self._frames.get(key)
        if fr is None:
            ci, col = self.col(t, c), self.spec.tables[t].columns[c]
            of = self.col(t, col.of).label if isinstance(col, M.RankColumn) else None
            fr = frame_for(ci.label, ci.kind, ci.unit.base if ci.unit else None, ci.unit.kind if ci.unit else None, name=c,
                           verb=getattr(col, "verb", None), event=ci.event, of_label=of, person=self.person[t])
            self._frames[key] = fr
        return fr

    def referent(self, t: str, row: dict) -> Referent:
        """A fresh :class:`~worldforge.corpus.lexicon.Referent` for a row (no mention yet); its first category, when
        it is a lower-case word and the row is a person, describes it ("the technician")."""
        cats = self.attributes(t, ("category",))
        kind = row.get(cats[0]) if cats else None
        # people only: "the technician" reads well, "the success launch record" does not
        kind = kind if self.person[t] and isinstance(kind, str) and kind[:1].islower() and len(kind.split()) <= 2 and "|" not in kind else None
        return Referent(self.labels[t][row[self.spec.tables[t].primary_key]], self.info[t].noun, self.person[t], kind)

    def prose(self, rng, t: str, row: dict, cols: list[str], style: Style, section: str, voice: str = "encyclopedia",
              ref: Referent | None = None, scope: str | None = None, base: "_Builder | None" = None) -> tuple[list[str], list[Fact]]:
        """Sentences stating ``cols`` of ``row`` (sentence-planned, :func:`~worldforge.corpus.planner.realise`) and their facts.

        ``base``: the builder the row belongs to (the base world's for an archive page), default this one.
        """
        src = base or self
        items, facts = [], []
        for c in cols:
            if row.get(c) is None:
                continue
            fr = src.frame(t, c)
            if not (fr.vps or fr.noun):
                continue
            text, f = src.say(t, row, c, style, section, scope)
            items.append(Said(fr, text))
            facts.append(f)
        if not items:
            return [], []
        return realise(rng, ref or src.referent(t, row), items, voice, first_by_name=ref is None or ref.mentions == 0), facts

    def event_clause(self, rng, t: str, row: dict, dc: str, dtext: str) -> str:
        """``<verb phrase> on <date>`` for a row's dated event: the frame's event verb, else a neutral phrase."""
        fr = self.frame(t, dc)
        if fr.vps:
            return rng.choice(fr.vps).format(value=dtext)
        return f"has {self.col(t, dc).label} {dtext}"

    def dress(self, page: Page, site: Site, genre: str, rng, crumbs: list[str], *, background: int = 0, comments: int = 0,
              subject: str = "") -> Page:
        """Give ``page`` its site's chrome recipe (navigation, breadcrumbs, background, comments, footer: rendered on
        read by :class:`~worldforge.corpus.chrome.Dresser`); a short article gets more background, so that pages run
        to a drawn length (330-450 words and up), as real ones do."""
        k = 0
        if background and self.background_pool:
            est = page.body_md.count(" ") + 130 + 28 * comments  # the article, header and footer, the comments
            k = max(background, (rng.randint(330, 450) - est) // 16 + 1)
        page.chrome = {"g": genre, "n": site.name, "c": crumbs, "s": subject, "b": k, "k": comments, "r": rng.getrandbits(31)}
        page.site = site.domain
        return page

    def chrome_context(self) -> dict:
        """What every page of this corpus shares when it is dressed (:class:`~worldforge.corpus.chrome.Dresser`)."""
        return {"users": self.users, "topics": self.topics, "pool": self.pool_name, "year": self.as_of.year,
                "retrieved": render_value(self.as_of), "seed": self.seed}

    def question(self, rng, t: str, c: str, name: str) -> str:
        """A forum question asking for column ``c`` of the row called ``name``."""
        fr, ci = self.frame(t, c), self.col(t, c)
        words = ci.label.lower().split()
        if fr.event and fr.vps:
            verb = rng.choice([v for v in fr.vps if v.endswith(" on {value}")] or [fr.vps[0]]).split(" on ")[0]
            head, _, rest = verb.partition(" ")
            if head in ("was", "is"):
                q = [f"When {head} {name} {rest}?", f"Does anyone know when {name} {head} {rest}?", f"Quick question: when {head} {name} {rest}?",
                     f"Can someone confirm the date {name} {head} {rest}?", f"Trying to pin down when {name} {head} {rest}. Anyone?"]
            else:
                base = base_verb(head)
                tail = f" {rest}" if rest else ""
                q = [f"When did {name} {base}{tail}?", f"Anyone know when {name} {head}{tail}?", f"Quick question: when did {name} {base}{tail}?",
                     f"Can someone confirm the date {name} {head}{tail}?", f"Trying to pin down when {name} {head}{tail}. Anyone?"]
        elif words[:2] == ["number", "of"]:
            things = " ".join(words[2:])
            q = [f"How many {things} does {name} have?", f"Anyone counted the {things} of {name}?", f"How many {things} are there at {name}?",
                 f"Does anyone have a count of {name}'s {things}?"]
        elif fr.noun:
            q = [f"What's the {ci.label} of {name}?", f"Does anyone know {name}'s {ci.label}?", f"{name}: {ci.label}?",
                 f"Looking for the {ci.label} of {name}", f"Anyone have the {ci.label} for {name}?", f"What {'are' if fr.plural else 'is'} {name}'s {ci.label}, exactly?",
                 f"Need the {ci.label} of {name} for a project, can anyone help?"]
        else:
            q = [f"Question about {name} ({ci.label})", f"Need a number for {name}: {ci.label}", f"Anyone have figures on {name}? ({ci.label})",
                 f"{name} \u2014 {ci.label}?"]
        return rng.choice(q)

    # -- genres -------------------------------------------------------------------------
    def wiki_lead(self, rng, t: str, label: str, what: str, parents: list[str]) -> str:
        """An encyclopedia lead sentence, composed from independent choices as editors vary them: where the
        parents go (a fronted phrase, a parenthesis, a prepositional phrase, a dash aside), the preposition, and
        how the reference work is cited ("in *X*", "as recorded in *X*", or not at all)."""
        a_what, plural, title = a_or_an(what), self.info[t].plural, self.title
        bold = f"**{label}**"
        closed = " whose " in what or "(" in what  # the clause ends the noun phrase: only a comma-set citation may follow
        src = rng.choice((f" in *{title}*", f" in *{title}*", f", as recorded in *{title}*", f" documented in *{title}*",
                          f" listed in *{title}*", f" covered by *{title}*", f" catalogued in *{title}*", "")
                         if not closed else (f", as recorded in *{title}*", f", as listed in *{title}*", ""))
        if not parents:
            return rng.choice([f"{bold} is {a_what}{src or ('' if closed else f' in *{title}*')}.", f"In *{title}*, {bold} is {a_what}.",
                               f"{bold} is one of the {plural}{src or f' of *{title}*'}." if what == self.info[t].noun else f"{bold} is {a_what}{src}.",
                               f"Among the {plural} of *{title}* is {bold}, {a_what}.",
                               f"{bold} is {a_what}{'' if closed else rng.choice((' on record', ' on file', ''))}{src}."])
        ps = " and ".join(parents)
        rel = rng.choice((f" of {ps}", f" under {ps}", f" belonging to {ps}", f" associated with {ps}", f" from {ps}",
                          f" filed under {ps}", f" linked to {ps}", f" that belongs to {ps}"))
        front = rng.choice(("Listed under", "Part of", "Filed under", "Belonging to", "Associated with", "Under"))
        shapes = [f"{front} {ps}, {bold} is {a_what}{src}.", f"{bold} ({ps}) is {a_what}{src}."]
        if closed:
            shapes += [f"In *{title}*, {bold} is {a_what}, listed under {ps}." if "(" in what else f"In *{title}*, {bold} ({ps}) is {a_what}."]
        else:
            shapes += [f"{bold} is {a_what}{rel}{src}.", f"{bold} is {a_what}{rel}{src}.", f"In *{title}*, {bold} is {a_what}{rel}.",
                       f"{bold} \u2014 {a_what}{rel} \u2014 appears in *{title}*.",
                       f"{bold} is one of the {plural} of {ps}{src}." if what == self.info[t].noun else f"{bold} is {a_what} among the {plural} of {ps}{src}.",
                       f"{bold} is {a_what}{src}, listed under {ps}." if src.startswith(" ") else f"{bold} is {a_what} listed under {ps}{src}."]
        return rng.choice(shapes)

    def encyclopedia(self) -> None:
        """One article per row of every table: lead with category and parents, infobox, overview, children, see also."""
        site = self.sites["wiki"]
        self._wiki_urls: dict[tuple[str, Any], str] = {}
        for t in self.spec.tables:
            for key, label in self.labels[t].items():
                self._wiki_urls[(t, key)] = self.url(site, f"wiki/{slug(t)}/{slug(label)}")
        for t, table in self.spec.tables.items():
            pk, info = table.primary_key, self.info[t]
            rng = self.rng("encyclopedia", t)
            cats = self.attributes(t, ("category",))
            for row in self.rows[t]:
                label = self.labels[t][row[pk]]
                facts = self.name_fact(t, row, "lead")
                what = info.noun
                if cats and row[cats[0]] is not None:
                    ctext, cfact = self.say(t, row, cats[0], site.style, "lead")
                    clabel = self.col(t, cats[0]).label
                    # "a flagship phone model", but never "a Philippines squad member": a proper name is no modifier
                    forms = [f"{info.noun} whose {clabel} is {ctext}", f"{info.noun} ({clabel}: {ctext})"]
                    what = rng.choice(forms + ([f"{ctext} {info.noun}"] * 2 if ctext[:1].islower() else []))
                    facts.append(cfact)
                parents = []
                for ref, col in table.references.items():
                    prow = self.by_key[col.parent][row[ref]]
                    parents.append(f"[{self.labels[col.parent][row[ref]]}]({self.wiki_url(col.parent, row[ref])})")
                    facts += self.name_fact(col.parent, prow, "lead")
                lead = self.wiki_lead(rng, t, label, what, parents)
                lines = [lead, "", f"| {_cap(info.noun)} | {_cell(label)} |", "|---|---|"]
                shown = []
                for c in self.attributes(t):  # compose-only columns are no infobox rows
                    if row[c] is None or c == (cats[0] if cats else None) or self.col(t, c).compose_only:
                        continue
                    text, f = self.say(t, row, c, site.style, "body")
                    lines.append(f"| {_cap(self.col(t, c).label)} | {text} |")
                    facts.append(f)
                    shown.append(c)
                if cats and row[cats[0]] is not None:
                    lines.append(f"| {_cap(self.col(t, cats[0]).label)} | {self.say(t, row, cats[0], site.style, 'lead')[0]} |")
                prose_cols = [c for c in shown if self.col(t, c).kind != "bool"]
                if prose_cols:
                    said, pf = self.prose(rng, t, row, rng.sample(prose_cols, min(len(prose_cols), rng.randint(2, 5))), site.style, "body")
                    if said:
                        lines += ["", rng.choice(("## Overview", "## Profile", "## Details", "## Summary")), "", " ".join(said)]
                        facts += pf
                for child, ref in self.children[t]:
                    kids = [r for r in self.rows[child] if r[ref] == row[pk]]
                    if not kids:
                        continue
                    cpk = self.spec.tables[child].primary_key
                    lines += ["", f"## {_cap(self.info[child].plural)}", ""]
                    for k in kids:
                        lines.append(f"- [{self.labels[child][k[cpk]]}]({self.wiki_url(child, k[cpk])})")
                        facts += self.name_fact(child, k, "body")
                sibs = self.siblings(t, row)
                if sibs:
                    see = rng.sample(sibs, min(3, len(sibs)))
                    lines += ["", "## See also", ""] + [f"- [{self.labels[t][s[pk]]}]({self.wiki_url(t, s[pk])})" for s in see]
                    for s in see:
                        facts += self.name_fact(t, s, "body")
                page = Page(self.wiki_url(t, row[pk]), self.spec.world, self.scenario, "encyclopedia", f"{label} - {site.name}",
                            None, lead, "\n".join(lines), facts)
                self.add(self.dress(page, site, "wiki", rng, [_cap(info.plural), label], background=rng.randint(7, 12)))

    def news(self) -> None:
        """A news story per row with a dated event, on one of the news sites."""
        for t, table in self.spec.tables.items():
            dc = self.event(t)
            if dc is None:
                continue
            pk = table.primary_key
            rng = self.rng("news", t)
            nums = self.numbers(t) + self.attributes(t, ("category",))
            for row in self.rows[t]:
                if row[dc] is None:
                    continue
                site = rng.choice(self.sites["news"])
                label = self.labels[t][row[pk]]
                dtext, dfact = self.say(t, row, dc, site.style, "lead")
                clause = self.event_clause(rng, t, row, dc, dtext)
                published = min(row[dc] + timedelta(days=rng.randint(0, 3)), self.as_of) if isinstance(row[dc], date) else None
                parent = self.parent_of(t, row)
                plabel = self.labels[parent[0]][parent[1][self.spec.tables[parent[0]].primary_key]] if parent else None
                by = f"{possessive(plabel)} " if plabel and plabel not in label and rng.random() < 0.5 else ""  # never "Google's Google Terra 2"
                short = clause.replace(f" on {dtext}", "") if self.frame(t, dc).event else clause
                title = rng.choice([f"{by}{label} {clause}", f"{label}: what we know", f"{by}{label} {short}", f"Report: {label} {short}",
                                    f"{label} {short}, {rng.choice(_SOURCES)}"])
                ref = self.referent(t, row)
                tail = rng.choice(("", "", "", f", {rng.choice(_SOURCES)}", f", {rng.choice(_SOURCES)}", ", a date that had been expected for some time",
                                   ", earlier than many had expected", ", according to people familiar with the matter", ", ending weeks of speculation"))
                said = rng.choice(("", "", f", {rng.choice(_SOURCES)}"))
                leads = [f"{by}{label} {clause}{tail}.", f"{by}{label} {clause}{tail}.",
                         f"{rng.choice(('Sources confirmed', 'Officials said', 'Records show', 'A filing shows', 'It has emerged'))} that {by}{label} {clause}.",
                         f"We can now confirm that {by}{label} {clause}.", f"It is official: {by}{label} {clause}{said}.",
                         f"{label}{', ' + rng.choice(('we can report', 'it emerged', 'we have learned')) + ',' if rng.random() < 0.5 else ''} {clause}{tail}."]
                if self.frame(t, dc).event:
                    leads += [f"On {dtext}, {by}{label} {short}{tail}.", f"It was on {dtext} that {by}{label} {short}{said}."]
                if plabel and not by and plabel not in label:
                    leads += [f"{label}, {a_or_an(self.info[t].noun)} of {plabel}, {clause}{tail}.", f"{plabel} said {label} {clause}.",
                              f"{plabel} confirmed that {label} {clause}{tail}."]
                lead = rng.choice(leads)
                if rng.random() < 0.5 and lead.startswith((label, by or label)):  # a news opener: "Update:", "In brief:" ...
                    lead = rng.choice(_NEWS_OPENERS) + " " + lead
                lead = lead if lead.startswith((label, plabel or label)) else _cap(lead)  # a name keeps its own case
                ref.mentions = 1
                facts = [dfact] + self.name_fact(t, row, "lead") + (self.name_fact(parent[0], parent[1], "lead") if plabel and plabel in lead else [])
                body = [lead, ""]
                said, pf = self.prose(rng, t, row, rng.sample(nums, min(len(nums), rng.randint(2, 4))), site.style, "body", "news", ref=ref)
                if said:
                    body.append(" ".join(said))
                    facts += pf
                sibs = self.siblings(t, row)
                if sibs and rng.random() < 0.6:  # a related row: more entities than the one asked about
                    s = rng.choice(sibs)
                    if s[dc] is not None:
                        stext, sfact = self.say(t, s, dc, site.style, "body")
                        slink = f"[{self.labels[t][s[pk]]}]({self.wiki_url(t, s[pk])})"
                        sclause = self.event_clause(rng, t, s, dc, stext)
                        who = "who" if self.person[t] else "which"
                        body += ["", rng.choice(("", "", "Context: ", "Worth noting: ")) + rng.choice([f"For comparison, {slink} {sclause}.", f"{slink}, by contrast, {sclause}.",
                                                 f"The story recalls {slink}, {who} {sclause}.", f"It is not the only one: {slink} {sclause}.",
                                                 f"Readers may remember {slink}, {who} {sclause}.", f"A similar case is {slink}, {who} {sclause}.",
                                                 f"Compare that with {slink}, {who} {sclause}.", f"Earlier coverage noted that {slink} {sclause}.",
                                                 f"{slink} is another example: it {sclause}." if not self.person[t] else
                                                 f"Another name in the same group, {slink}, {sclause}."])]
                        facts += [sfact] + self.name_fact(t, s, "body")
                author = rng.choice(self.people)
                body += ["", f"*{author}, {rng.choice(_BYLINE_ROLES)}, {site.name}*"]
                path = f"{row[dc].year}/{row[dc].month:02d}/{slug(title)}" if isinstance(row[dc], date) else slug(title)
                page = Page(self.url(site, path), self.spec.world, self.scenario, "news", title, published, lead, "\n".join(body), facts)
                self.add(self.dress(page, site, "news", rng, [_cap(self.info[t].plural)], background=rng.randint(6, 10),
                                    comments=rng.randint(1, 7), subject=label))

    def press_releases(self) -> None:
        """Announcements of about half the dated rows by their top-level organisation's newsroom."""
        for t, table in self.spec.tables.items():
            dc = self.event(t)
            if dc is None or not table.references or self.info[t].label_column == table.primary_key:
                continue
            pk = table.primary_key
            rng = self.rng("press", t)
            for row in self.rows[t]:
                parent = self.parent_of(t, row)
                # an organisation announces: the parent is a top-level table (it has no parent itself)
                if parent is None or self.spec.tables[parent[0]].references or row[dc] is None or rng.random() > 0.5:
                    continue
                pt, prow = parent
                ppk = self.spec.tables[pt].primary_key
                plabel = self.labels[pt][prow[ppk]]
                site = Site(f"newsroom.{slug(plabel)}.com", f"{plabel} Newsroom", Style("mdy_long", "symbol", False))
                label = self.labels[t][row[pk]]
                dtext, dfact = self.say(t, row, dc, site.style, "lead")
                clause = self.event_clause(rng, t, row, dc, dtext)
                lead = rng.choice([f"{dtext} — {plabel} today announced that {label} {clause}.",
                                   f"{plabel} announced today that {label} {clause}.",
                                   f"{dtext} — {plabel} is pleased to confirm that {label} {clause}.",
                                   f"{plabel} confirmed that {label} {clause}, marking a milestone for the organisation.",
                                   f"In a statement released today, {plabel} said that {label} {clause}.",
                                   f"FOR IMMEDIATE RELEASE — {label} {clause}, {plabel} announced.",
                                   f"{plabel} is sharing an update: {label} {clause}.",
                                   f"Today {plabel} can report that {label} {clause}."])
                if rng.random() < 0.5:
                    lead = lead[:-1] + rng.choice(_PRESS_TRAILERS) + "."
                facts = [dfact] + self.name_fact(t, row, "lead") + self.name_fact(pt, prow, "lead")
                body = [lead, ""]
                ref = self.referent(t, row)  # the paragraph names the row first: its figures are not the organisation's
                cols = rng.sample(self.numbers(t), min(len(self.numbers(t)), 3))
                said, pf = self.prose(rng, t, row, cols, site.style, "body", "encyclopedia", ref=ref)
                if said:
                    body += [" ".join(said), ""]
                    facts += pf
                highlights = [c for c in cols if row[c] is not None]
                if highlights:
                    body += [rng.choice(("**Highlights**", "**At a glance**", "**Key facts**")), ""]
                    for c in highlights:
                        text, f = self.say(t, row, c, site.style, "body")
                        body.append(f"- {_cap(self.col(t, c).label)}: {text}")
                        facts.append(f)
                    body.append("")
                exec_name = rng.choice(self.people)
                org = plabel if rng.random() < 0.4 else f"the {self.info[pt].noun}"
                role = rng.choice(("chief executive", "head of communications", "managing director", "chief operating officer", "programme lead"))
                if self.person[t]:  # people are welcomed, not called "an important step"
                    quotes = [f"\u201cWe are delighted to have {label} with us,\u201d said {exec_name}, {role} at {org}.",
                              f"\u201c{label} brings experience the whole team will learn from,\u201d said {exec_name}, {role}.",
                              f"{exec_name}, {role} at {org}, called {label} \u201ca valued member of the team.\u201d"]
                else:
                    quotes = [f"\u201cWe are proud of what the team has achieved with {label},\u201d said {exec_name}, {role} at {org}.",
                              f"\u201c{label} reflects years of careful work,\u201d said {exec_name}, {role}.",
                              f"{exec_name}, {role} at {org}, called {label} \u201can important step for everyone involved.\u201d"]
                body.append(rng.choice(quotes))
                about = ["", f"## About {plabel}", ""]
                pref = self.referent(pt, prow)
                pref.mentions = 1  # named by the first sentence of the paragraph
                pcols = [c for c in self.attributes(pt, ("number", "category")) if prow[c] is not None][:3]
                psaid, pfacts = self.prose(rng, pt, prow, pcols, site.style, "body", "encyclopedia", ref=pref)
                sent = " ".join([f"{plabel} is {a_or_an(self.info[pt].noun)} in *{self.title}*."] + psaid)
                facts += pfacts
                body += about + [sent, "", f"Media contact: press@{slug(plabel)}.com"]
                title = rng.choice([f"{plabel} announces {label}", f"{label}: an announcement from {plabel}", f"{plabel} confirms {label}"]
                                   if plabel not in label else [f"Announcing {label}", f"{label}: official announcement", f"Introducing {label}"])
                published = min(row[dc], self.as_of) if isinstance(row[dc], date) else None
                page = Page(self.url(site, f"press/{slug(label)}"), self.spec.world, self.scenario, "press_release", title, published, lead,
                            "\n".join(body), facts)
                self.add(self.dress(page, site, "press", rng, ["Press releases"], background=rng.randint(5, 8)))

    def rankings(self) -> None:
        """A ranking page per rank column and group: rank, linked label and ranked value of every row."""
        site = self.sites["ranking"]
        for t, table in self.spec.tables.items():
            pk, info = table.primary_key, self.info[t]
            for rc, col in table.columns.items():
                if not isinstance(col, M.RankColumn):
                    continue
                groups: dict[Any, list[dict]] = {}
                for row in self.rows[t]:
                    groups.setdefault(row[col.within] if col.within else None, []).append(row)
                of = self.col(t, col.of)
                for g, rows in groups.items():
                    rows = sorted(rows, key=lambda r: r[rc])
                    scope = ""
                    facts: list[Fact] = []
                    if col.within:
                        parent = table.columns[col.within]
                        if isinstance(parent, M.ReferenceColumn):
                            scope = f" of {self.labels[parent.parent][g]}"
                            facts += self.name_fact(parent.parent, self.by_key[parent.parent][g], "lead")
                        else:
                            scope = f" ({render_value(g)})"
                    title = f"{_cap(info.plural)}{scope} ranked by {of.label}"
                    lead = f"The {len(rows)} {info.plural}{scope} in *{self.title}*, ranked by {of.label} as of {format_value(self.as_of, None, site.style)}."
                    if len(rows) > _RANKING_TOP:  # a ranking site publishes the top of a long list, as "top N" lists do
                        lead = (f"The top {_RANKING_TOP} of the {len(rows)} {info.plural}{scope} in *{self.title}*, ranked by {of.label} "
                                f"as of {format_value(self.as_of, None, site.style)}.")
                        rows = rows[:_RANKING_TOP]
                    lines = [lead, "", f"| Rank | {_cap(info.noun)} | {_cap(of.label)} |", "|---|---|---|"]
                    for r in rows:
                        rt, f1 = self.say(t, r, rc, site.style, "body")
                        vt, f2 = self.say(t, r, col.of, site.style, "body")
                        lines.append(f"| {rt} | [{self.labels[t][r[pk]]}]({self.wiki_url(t, r[pk])}) | {vt} |")
                        facts += [f1, f2] + self.name_fact(t, r, "body")
                    url = self.url(site, f"rankings/{slug(title)}")
                    rng = self.rng("ranking", t, rc, str(g))
                    lines += ["", rng.choice(("*How we rank:* positions follow the figures published by each organisation; ties keep the order of the "
                                              "previous edition.", "*Methodology:* we compile the list from public records and update it when "
                                              "new figures appear.", "*Note:* rankings are refreshed as new data comes in; earlier editions are "
                                              "kept in our archive."))]
                    page = Page(url, self.spec.world, self.scenario, "ranking", title, self.as_of, lead, "\n".join(lines), facts)
                    self.add(self.dress(page, site, "ranking", rng, ["Rankings", _cap(info.plural)], background=rng.randint(6, 10) + len(rows) // 3))  # a long list gets a longer write-up

    def profiles(self) -> None:
        """A spec-sheet page per row with three or more attributes (some left out per page)."""
        site = self.sites["profile"]
        for t, table in self.spec.tables.items():
            attrs = self.attributes(t, ("number", "share", "date", "category", "bool"))
            if len(attrs) < 3 or self.info[t].label_column == table.primary_key:
                continue
            pk, info = table.primary_key, self.info[t]
            rng = self.rng("profile", t)
            for row in self.rows[t]:
                label = self.labels[t][row[pk]]
                shown = [c for c in attrs if row[c] is not None]
                shown = sorted(rng.sample(shown, max(3, len(shown) - rng.randint(0, 2))), key=attrs.index) if len(shown) > 3 else shown
                lead = rng.choice([f"{label}: full specifications and key facts.", f"Everything we know about {label}, in one sheet.",
                                   f"The {info.noun} {label} at a glance: the key specifications.", f"{label} — specifications and details."])
                facts = self.name_fact(t, row, "lead")
                lines = [lead, "", "## Key specs", ""]
                for c in shown:
                    text, f = self.say(t, row, c, site.style, "body")
                    lines.append(f"- **{_cap(self.col(t, c).label)}:** {text}")
                    facts.append(f)
                said, pf = self.prose(rng, t, row, rng.sample(shown, min(len(shown), rng.randint(2, 3))), site.style, "body")
                if said:
                    lines += ["", rng.choice(("## Our take", "## In short", "## Overview", "## What stands out")), "", " ".join(said)]
                    facts += pf
                parent = self.parent_of(t, row)
                if parent:
                    ppk = self.spec.tables[parent[0]].primary_key
                    lines += ["", f"More from [{self.labels[parent[0]][parent[1][ppk]]}]({self.wiki_url(parent[0], parent[1][ppk])})."]
                    facts += self.name_fact(parent[0], parent[1], "body")
                page = Page(self.url(site, f"{slug(info.noun)}/{slug(label)}"), self.spec.world, self.scenario, "profile",
                            f"{label} specs | {site.name}", None, lead, "\n".join(lines), facts)
                self.add(self.dress(page, site, "profile", rng, [_cap(info.plural), label], background=rng.randint(6, 9), comments=rng.randint(0, 3),
                                    subject=label))

    def comparisons(self) -> None:
        """Side-by-side pages of two or three consecutive rows' numeric attributes."""
        site = self.sites["compare"]
        for t, table in self.spec.tables.items():
            nums = self.numbers(t)
            if len(nums) < 2 or self.info[t].label_column == table.primary_key:
                continue
            pk = table.primary_key
            rows = self.rows[t]
            rng = self.rng("comparison", t)
            i = 0
            while i < len(rows) - 1:
                size = 3 if rng.random() < 0.3 and i + 2 < len(rows) else 2
                group = rows[i:i + size]
                i += size
                names = [self.labels[t][r[pk]] for r in group]
                cols = rng.sample(nums, min(len(nums), 4))
                title = f"{' vs '.join(names)}: {', '.join(self.col(t, c).label for c in cols[:2])} compared"
                lead = rng.choice([f"How do {', '.join(names[:-1])} and {names[-1]} compare? We put them side by side.",
                                   f"{', '.join(names[:-1])} or {names[-1]}? Here is how they stack up.",
                                   f"We compared {', '.join(names[:-1])} and {names[-1]} on the figures that matter."])
                lines = [lead, "", "| | " + " | ".join(_cell(n) for n in names) + " |", "|---|" + "---|" * len(group)]
                facts = [f for r in group for f in self.name_fact(t, r, "lead")]
                for c in cols:
                    cells = []
                    for r in group:
                        text, f = self.say(t, r, c, site.style, "body")
                        cells.append(text if r[c] is not None else "—")
                        if r[c] is not None:
                            facts.append(f)
                    lines.append(f"| {_cap(self.col(t, c).label)} | " + " | ".join(cells) + " |")
                url = self.url(site, "-vs-".join(slug(n) for n in names))
                verdict = []
                for r in group:  # a sentence per contender, from the figures of the table
                    said, _ = self.prose(rng, t, r, rng.sample(cols, min(len(cols), 2)), site.style, "body", "news")
                    verdict += said[:1]  # its values are the table's cells, stated (and registered) there already
                if verdict:
                    lines += ["", rng.choice(("## The verdict", "## How they differ", "## Bottom line")), "", " ".join(verdict)]
                lines += ["", rng.choice(("Which one is right for you depends on what you value most; the table only shows the published figures.",
                                          "Figures come from official sources where available. Spotted an error? Let us know.",
                                          "Our verdict: there is no clear winner, and the right choice depends on your priorities."))]
                page = Page(url, self.spec.world, self.scenario, "comparison", title, self.as_of, lead, "\n".join(lines), facts)
                self.add(self.dress(page, site, "compare", rng, ["Compare", _cap(self.info[t].plural)], background=rng.randint(5, 9),
                                    comments=rng.randint(0, 4), subject=names[0]))

    def forum(self) -> None:
        """Q&A threads about one or two attributes of about a third of the rows."""
        site = self.sites["forum"]
        for t, table in self.spec.tables.items():
            cols = [c for c in self.numbers(t) + self.attributes(t, ("date",)) if self.frame(t, c).vps or self.frame(t, c).noun]
            if not cols:
                continue
            pk = table.primary_key
            rng = self.rng("forum", t)
            for row in self.rows[t]:
                if rng.random() > 0.34:
                    continue
                c = rng.choice(cols)
                if row[c] is None:
                    continue
                label = self.labels[t][row[pk]]
                asker, answerer = rng.sample(self.users, 2)
                question = self.question(rng, t, c, label)
                title = question if rng.random() < 0.7 else rng.choice([f"Question about {label}", f"{label} — need help", f"Help: {label}"])
                lead = f"**{asker}** {rng.choice(['asks', 'wrote', 'posted'])}: {rng.choice(['', 'Quick one. ', 'Sorry if this was asked before. ', 'Hi all, '])}{question}"
                ref = self.referent(t, row)
                ref.mentions = 1
                said, facts = self.prose(rng, t, row, [c], site.style, "body", "forum", ref=ref)
                body = [lead, "", f"> **{answerer}** replied: {' '.join(said)}"]
                facts += self.name_fact(t, row, "lead")
                others = [o for o in cols if o != c and row[o] is not None]
                if others and rng.random() < 0.4:
                    more, mf = self.prose(rng, t, row, [rng.choice(others)], site.style, "body", "forum", ref=ref)
                    if more:
                        text = " ".join(more)
                        lead_in = rng.choice(["Also, ", "Adding to that: ", "And ", ""])
                        if lead_in and text.startswith(("It ", "The ", "Pretty ", "From ", "Last ", "If ", "Going ", "According ", "IIRC ")):
                            text = text[:1].lower() + text[1:]
                        body += ["", f"> **{rng.choice(self.users)}**: {lead_in}{text}"]
                        facts += mf
                body += forum_replies(rng, self.users, rng.randint(2, 6))
                body += ["", f"> **{asker}**: {rng.choice(['Thanks!', 'Great, that helps.', 'Cheers.', 'Perfect, thank you.', 'Appreciated.'])}"]
                url = self.url(site, f"t/{slug(title)}")
                page = Page(url, self.spec.world, self.scenario, "forum", title, self.as_of, lead, "\n".join(body), facts)
                self.add(self.dress(page, site, "forum", rng, ["Forums", _cap(self.info[t].plural)], background=rng.randint(4, 7)))

    def datasets(self, per_page: int = 20) -> None:
        """One statistics-portal dataset per labelled table: every row with its parent and up to six columns."""
        site = self.sites["data"]
        for t in self.spec.tables:
            if self.info[t].label_column == self.spec.tables[t].primary_key:
                continue
            cols = self.attributes(t, ("number", "share", "date", "category", "bool"))[:6]
            self.dataset_pages(self, t, cols, site, f"Dataset: {self.info[t].plural} in {self.title}", slug(t), None, per_page)

    def dataset_pages(self, src: "_Builder", t: str, cols: list[str], site: Site, title0: str, path: str, scope: str | None,
                      per_page: int = 20, lead0: str | None = None) -> None:
        """Paginated dataset pages of ``src``'s rows of ``t`` (``src`` is this builder, or the base world's for an archive).

        Each row gives its label (a link to this corpus's encyclopedia page of it, when there is one), its parent's
        label and ``cols``; pages link to the previous and next page.
        """
        table, info = src.spec.tables[t], src.info[t]
        pk = table.primary_key
        parent_ref = next(iter(table.references.items()), None)
        rows = sorted(src.rows[t], key=lambda r: src.labels[t][r[pk]])
        pages = max(1, -(-len(rows) // per_page))
        root = f"https://{site.domain}{'/' + self.scenario if self.scenario else ''}/{path}"
        for p in range(pages):
            chunk = rows[p * per_page:(p + 1) * per_page]
            title = title0 + (f" (page {p + 1} of {pages})" if pages > 1 else "")
            lead = ((lead0 or f"Open data on the {len(rows)} {info.plural} of *{self.title}*, one row per {info.noun}")
                    + (f"; page {p + 1} of {pages}." if pages > 1 else "."))
            head = [_cap(info.noun)] + ([_cap(src.info[parent_ref[1].parent].noun)] if parent_ref else []) + [_cap(src.col(t, c).label) for c in cols]
            lines = [lead, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            facts: list[Fact] = []
            for r in chunk:
                label = src.labels[t][r[pk]]
                wiki = self._wiki_urls.get((t, r[pk]))
                cells = [f"[{_cell(label)}]({wiki})" if wiki and self.labels[t].get(r[pk]) == label else _cell(label)]
                facts += src.name_fact(t, r, "body", scope)
                if parent_ref:
                    pt = parent_ref[1].parent
                    cells.append(_cell(src.labels[pt][r[parent_ref[0]]]))
                    facts += src.name_fact(pt, src.by_key[pt][r[parent_ref[0]]], "body", scope)
                for c in cols:
                    if r[c] is None:
                        cells.append("")
                        continue
                    text, f = src.say(t, r, c, site.style, "body", scope)
                    cells.append(text)
                    facts.append(f)
                lines.append("| " + " | ".join(cells) + " |")
            if pages > 1:
                nav = ([f"[previous page]({root}/page-{p})"] if p else []) + ([f"[next page]({root}/page-{p + 2})"] if p + 1 < pages else [])
                lines += ["", " · ".join(nav)]
            url = self.url(site, f"{path}/page-{p + 1}")
            rng = self.rng("dataset", path, str(p))
            about = ["", rng.choice(("## About this dataset", "## Dataset notes", "## Metadata")), ""]
            for c in cols:
                desc = src.spec.tables[t].columns[c].description
                desc = None if desc and any(ch.isdigit() for ch in desc) else desc  # a figure in a note could read as a world fact
                ci = src.col(t, c)
                about.append(f"- **{_cap(ci.label)}**: {desc.rstrip('.') if desc else 'as published by the source'}"
                             + (f" (unit: {ci.unit.text})" if ci.unit is not None and ci.unit.kind not in ("share",) else "") + ".")
            about += ["", rng.choice(("License: open data, free to reuse with attribution.", "Licence: reuse permitted with attribution to the publisher.",
                                      "Terms: free for research and non-commercial use; please cite the portal.")),
                      "", rng.choice(("Downloads: CSV · JSON · XLSX", "Formats: CSV, JSON", "Export: CSV · Parquet · API")),
                      "", rng.choice(("Values are as reported by each organisation and may be revised.",
                                      "Report an error in this dataset through the feedback form.",
                                      "Some figures are provisional and are updated as new returns arrive."))]
            lines += about
            page = Page(url, self.spec.world, self.scenario, "dataset", title, self.as_of, lead, "\n".join(lines), facts)
            self.add(self.dress(page, site, "data", rng, ["Datasets", _cap(info.plural)], background=rng.randint(5, 8) + len(chunk) // 3))  # a long list gets a longer write-up

    def timelines(self) -> None:
        """One page per table and quarter listing the rows whose event date falls in it."""
        site = self.sites["archive"]
        for t, table in self.spec.tables.items():
            dc = self.event(t)
            pk, info = table.primary_key, self.info[t]
            if dc is None or info.label_column == pk:
                continue
            quarters: dict[tuple[int, int], list[dict]] = {}
            for row in self.rows[t]:
                d = row[dc]
                if d is not None:
                    quarters.setdefault((d.year, (d.month - 1) // 3 + 1), []).append(row)
            ci = self.col(t, dc)
            for (y, q), rows in sorted(quarters.items()):
                rows = sorted(rows, key=lambda r: (r[dc], r[pk]))
                if ci.event:
                    title = f"{_cap(info.plural)} that {ci.event.replace('was ', 'were ')}: Q{q} {y}"
                    lead = f"Every {info.noun} in *{self.title}* that {ci.event} in Q{q} {y}, in date order."
                else:
                    title = f"{_cap(info.plural)} by {ci.label}: Q{q} {y}"
                    lead = f"Every {info.noun} in *{self.title}* whose {ci.label} falls in Q{q} {y}, in date order."
                trng = self.rng("timeline-intro", t, str(y), str(q))
                lines = [lead, "", trng.choice((
                    "Entries are compiled from announcements and public records and are added as they are confirmed; links lead to each "
                    "entry's encyclopedia article.",
                    "This page is part of our quarterly timelines. Dates are those of the official records; where sources disagree, the "
                    "record kept by the organisation itself is used.",
                    "Use the links to read more about each entry. Earlier and later quarters are listed in the archive's index.",
                    "The list below is maintained by volunteers and checked against published sources at the end of each quarter.")), ""]
                facts: list[Fact] = []
                for r in rows:
                    dtext, f = self.say(t, r, dc, site.style, "body")
                    lines.append(f"- [{self.labels[t][r[pk]]}]({self.wiki_url(t, r[pk])}): {dtext}")
                    facts += [f] + self.name_fact(t, r, "body")
                url = self.url(site, f"{slug(t)}/{y}-q{q}")
                rng = self.rng("timeline", t, str(y), str(q))
                page = Page(url, self.spec.world, self.scenario, "timeline", title, None, lead, "\n".join(lines), facts)
                self.add(self.dress(page, site, "archive", rng, ["Timelines", _cap(info.plural), str(y)], background=rng.randint(5, 8) + len(rows) // 3))  # a long list gets a longer write-up

    def rumors(self) -> None:
        """Near misses: a page about a successor that does not exist, whose title names a real row."""
        site = self.sites["rumor"]
        for t, table in self.spec.tables.items():
            dc = self.event(t)
            if not table.references or self.info[t].label_column == table.primary_key or self.person[t]:
                continue  # people have no successors
            pk = table.primary_key
            rng = self.rng("rumor", t)
            for row in self.rows[t]:
                if rng.random() > 0.12:
                    continue
                label = self.labels[t][row[pk]]
                title = rng.choice([f"Rumor: a successor to {label} is in the works", f"{label} successor spotted?", f"Leak: what comes after {label}"])
                lead = rng.choice([f"Word is that a successor to {label} is being prepared. Nothing is confirmed.",
                                   f"Our sources hint at a follow-up to {label}, though nobody will say so on the record.",
                                   f"A tipster claims that something new is coming after {label}. Take it with a grain of salt."])
                facts = self.name_fact(t, row, "lead")
                body = [lead, ""]
                if dc and row[dc] is not None:
                    dtext, f = self.say(t, row, dc, site.style, "body")
                    body.append(rng.choice([f"For reference, {label} {self.event_clause(rng, t, row, dc, dtext)}.",
                                            f"Recall that {label} {self.event_clause(rng, t, row, dc, dtext)}.",
                                            f"{label} {self.event_clause(rng, t, row, dc, dtext)}, so a successor would not be unusual."]))
                    facts.append(f)
                body += ["", rng.choice(["*Treat this as speculation until an official announcement.*", "*Unconfirmed. We will update this post.*",
                                         "*This is a rumor; none of it has been confirmed.*"])]
                page = Page(self.url(site, f"{slug(label)}-successor"), self.spec.world, self.scenario, "rumor", title, self.as_of, lead,
                            "\n".join(body), facts)
                self.add(self.dress(page, site, "rumor", rng, ["Leaks"], background=rng.randint(5, 8), comments=rng.randint(1, 6), subject=label))

    def archive(self) -> None:
        """A scenario's past: news pages dated in the base year that state the base world's values."""
        if self.base is None:
            return
        bspec, btables = self.base
        site = Site(f"archive.{self.sites['news'][0].domain}", f"{self.sites['news'][0].name} archive", self.sites["news"][0].style)
        base = _Builder(bspec, btables, None, self.seed)
        for t, table in bspec.tables.items():
            dc = base.event(t)
            if dc is None or base.info[t].label_column == table.primary_key:
                continue
            pk = table.primary_key
            rng = self.rng("archive", t)
            nums = base.numbers(t)
            for row in base.rows[t]:
                if row[dc] is None or not isinstance(row[dc], date) or rng.random() > 0.3:
                    continue
                label = base.labels[t][row[pk]]
                dtext, dfact = base.say(t, row, dc, site.style, "lead", scope="world")
                clause = base.event_clause(rng, t, row, dc, dtext)
                short = clause.replace(f" on {dtext}", "") if base.frame(t, dc).event else clause
                title = f"[{row[dc].year}] {label} {short}"
                lead = rng.choice([f"From our {row[dc].year} archive: {label} {clause}.", f"{row[dc].year}, from the archive: {label} {clause}."])
                facts = [dfact] + base.name_fact(t, row, "lead", scope="world")
                body = [lead, ""]
                ref = base.referent(t, row)
                ref.mentions = 1
                said, pf = self.prose(rng, t, row, rng.sample(nums, min(len(nums), 2)), site.style, "body", "news", ref=ref, scope="world", base=base)
                if said:
                    body.append("At the time, " + said[0][:1].lower() + said[0][1:] if said[0].startswith(("It ", "The ")) else said[0])
                    body += said[1:]
                    facts += pf
                body += ["", f"*This article is from {row[dc].year} and is kept for the record; figures may have changed since.*"]
                page = Page(self.url(site, f"{row[dc].year}/{slug(label)}"), self.spec.world, self.scenario, "news", title,
                            row[dc], lead, "\n".join(body), facts)
                self.add(self.dress(page, site, "news", rng, ["Archive", str(row[dc].year)], background=rng.randint(5, 8)))
        self.snapshots(base)

    def snapshots(self, base: "_Builder") -> None:
        """A scenario's archived datasets: per labelled table, the base world's values of the columns that changed since."""
        site = self.sites["archive"]
        year = base.as_of.year
        for t, table in base.spec.tables.items():
            pk = table.primary_key
            if base.info[t].label_column == pk or t not in self.by_key:
                continue
            now = self.by_key[t]
            changed = [c for c in base.attributes(t, ("number", "share", "date", "category", "bool"))
                       if any(k in now and now[k].get(c) != r[c] for k, r in base.by_key[t].items())]
            changed = sorted(changed, key=lambda c: base.col(t, c).kind == "date")[:6]
            if not changed:
                continue
            info = base.info[t]
            self.dataset_pages(base, t, changed, site, f"Archived dataset: {info.plural} as of {year}", f"snapshot-{year}/{slug(t)}", "world",
                               lead0=f"A snapshot of the {info.plural} of *{base.title}* as published in {year}, kept for the record; "
                                     f"{len(base.rows[t])} rows")


def build_pages(spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None = None, seed: int | None = None,
                base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None) -> list[Page]:
    """All pages of a world's (or a scenario's) corpus.

    Args:
        spec: the spec the tables satisfy (a scenario's spec for a scenario).
        tables: the world's (or scenario's) tables.
        scenario: the scenario name (None for the world itself); it enters URLs.
        seed: text-variety seed (default: the spec's).
        base: for a scenario, the base world's ``(spec, tables)``: archive pages state its values.

    Returns:
        Pages with their facts, in a deterministic order; each body is its article, the chrome a recipe, and every
        page holds the corpus's chrome context (:attr:`Page.context`, what :func:`served` dresses them with).
    """
    b = _Builder(spec, tables, scenario, spec.seed if seed is None else seed, base)
    b.encyclopedia()
    b.news()
    b.press_releases()
    b.rankings()
    b.profiles()
    b.comparisons()
    b.forum()
    b.datasets()
    b.timelines()
    b.rumors()
    b.archive()
    _references(b)
    ctx = b.chrome_context()
    for p in b.pages:
        p.context = ctx
    return b.pages


def served(pages: list[Page]) -> dict[str, str]:
    """``{url: body}`` of one corpus's pages (:func:`build_pages`) as ``web_extractor`` serves them: each article in
    its site's chrome, with the context the pages carry."""
    from worldforge.corpus.chrome import Dresser

    context = next((p.context for p in pages if p.context is not None), {})
    return {u: body for u, (body, _, _) in Dresser(context).render([p.row() for p in pages]).items()}


def _references(b: _Builder) -> None:
    """Give each encyclopedia article the pages it cites: the other sites' pages about the same row (news, press
    releases, profiles, forum threads), listed under "References" when the page is served."""
    about: dict[tuple[str, str], list[Page]] = {}
    for p in b.pages:
        if p.page_type in ("news", "press_release", "profile", "forum"):
            for f in p.facts:
                if f.section == "lead" and f.scope is None:
                    about.setdefault((f.table_name, f.row_key), []).append(p)
    for p in b.pages:
        if p.page_type != "encyclopedia" or not p.facts or p.chrome is None:
            continue
        lead = p.facts[0]
        cites = list({id(q): q for q in about.get((lead.table_name, lead.row_key), []) if q is not p}.values())[:4]
        if cites:
            p.chrome["refs"] = [q.url for q in cites]
