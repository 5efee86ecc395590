"""The state of one corpus being built, and what every genre asks of it.

:class:`CorpusBuilder` holds a world's (or scenario's) rows, its fictional sites (each writing values
in its own :class:`~worldforge.corpus.quantity.Style`), the URLs and pages made so far, and the
helpers every genre shares: a cell as a stated text with its fact, a row's label and referent, verb
frames and planned prose, the chrome recipe a page is dressed with.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import Any

import polars as pl

from worldforge.corpus.kinds import fits, is_organisation, table_kinds
from worldforge.corpus.lexicon import Frame, Referent, base_verb, echoes, frame_for, is_absence, is_past, is_plural, kind_of, names_a_thing, person_table
from worldforge.corpus.page import Fact, Page, Site, cell_text, slug
from worldforge.corpus.planner import Said, realise, sentence_case
from worldforge.corpus.quantity import Style, format_value, render_value
from worldforge.corpus.topic import spec_background
from worldforge.corpus.vocab import ColumnInfo, TableInfo, faker_person, row_labels, table_info
from worldforge.spec import models as M
from worldforge.synth import column_rng

NEWS_NAMES = ("{T} Daily", "The {T} Wire", "{T} Insider", "{T} Times", "The {T} Ledger", "{T} Today", "{T} Dispatch", "{T} Report")
"""The news sites' name patterns (``{T}``: the corpus's topic); three are drawn per corpus."""

def running(style: Style) -> Style:
    """A site's style for running text: a spec sheet lists ISO dates, zero-padded days and currency codes, and writes
    large amounts in full, and news lists abbreviate months; its sentences write "March 5, 2029", "£25,943" and
    "$100.4 million", as prose does."""
    fmt = {"iso": "mdy_long", "mdy_short": "mdy_long", "mdy_abbr": "mdy_long"}.get(style.date_format, style.date_format)
    return style._replace(date_format=fmt, money="symbol" if style.money == "code" else style.money, compact=True)


_ROLE_HEADS = {"role", "position", "rank", "job", "occupation", "profession", "title", "post", "function", "specialty", "speciality",
               "specialisation", "specialization", "grade", "level", "type", "status", "seniority"}
"""Heads of a person's category labels whose values describe the person ("the technician", "the seasonal lifeguard")."""

_JOINS = {"joined", "left", "entered", "rejoined"}
"""Event verbs that take an object: the row's parent ("joined Vienna Chamber Orchestra")."""


class CorpusBuilder:
    """One corpus being built: a world's (or scenario's) rows as the genres read them, its sites, and its pages so far.

    Built once per :func:`~worldforge.corpus.generate.generate_pages` call. The genres
    (:mod:`worldforge.corpus.genres`) ask it how rows and columns are called and written, for unique URLs,
    sentences (:meth:`prose`, over :mod:`worldforge.corpus.planner`), the site's chrome recipe
    (:meth:`dress`), and hand it each finished page (:meth:`add`). Every random choice comes from a stream
    seeded by world, scenario and purpose (:meth:`rng`).
    """

    def __init__(self, spec: M.WorldSpec, tables: dict[str, pl.DataFrame], scenario: str | None, seed: int,
                 base: tuple[M.WorldSpec, dict[str, pl.DataFrame]] | None = None):
        self.spec, self.tables, self.scenario, self.seed = spec, tables, scenario, seed
        self.base = base
        self.slug = slug(spec.site or spec.world)
        self.title = spec.title or spec.world.replace("_", " ")
        self.topic = sentence_case((spec.site or spec.world).split("_")[0])
        self.as_of = spec.as_of_date
        self.rows = {t: f.to_dicts() for t, f in tables.items()}
        self.info: dict[str, TableInfo] = {t: table_info(spec, t, tables[t]) for t in spec.tables}
        self.by_key = {t: {r[spec.tables[t].primary_key]: r for r in rows} for t, rows in self.rows.items()}
        # how each row is called: its name, or the designation of a table without a name column (vocab.row_labels)
        self.row_labels = row_labels(spec, tables, self.info)
        self.labels: dict[str, dict[Any, str]] = {t: {k: lab.text for k, lab in labs.items()} for t, labs in self.row_labels.items()}
        self.refs = {t: tab.references for t, tab in spec.tables.items()}  # the spec builds this dict anew on every access
        self.children = {t: [(c, ref) for c, tab in spec.tables.items() for ref, col in self.refs[c].items() if col.parent == t] for t in spec.tables}
        self._attrs: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        self.person = {t: person_table(self.info[t].noun, faker_person(spec.tables[t].columns.get(self.info[t].label_column))) for t in spec.tables}
        self._frames: dict[tuple[str, str], Frame] = {}
        self._name_facts: dict[tuple, list[Fact]] = {}
        self._said: dict[tuple, tuple[str, Fact]] = {}
        self._pks = {t: ts.primary_key for t, ts in spec.tables.items()}
        self._groups: dict[tuple[str, str], dict[Any, list[dict]]] = {}
        self.wiki_urls: dict[tuple[str, Any], str] = {}  # filled by the encyclopedia genre, read by the others
        self.topics = [sentence_case(self.info[t].plural) for t in spec.tables] + ["Latest", "Analysis", "Features", "Data", "Guides", "Archive"]
        self.pool_name = spec.archetype or re.sub(r"_\d{4}$", "", spec.world)
        # the archetype's or bundled world's pool file, else sentences about the spec's own topic (corpus.topic)
        self.background_pool, self.own_background = spec_background(spec, self.info, seed, self.pool_name)
        self.pages: list[Page] = []
        self.urls: set[str] = set()
        from worldforge.corpus.context import ContextWriter

        self.context = ContextWriter(self)  # derived claims: ranks, comparisons, totals, changes
        from faker import Faker

        fake = Faker("en_US", use_weighting=False)
        fake.seed_instance(column_rng(seed, spec.world, scenario or "", "corpus").getrandbits(64))
        self.users = [fake.user_name() for _ in range(240)]  # the corpus's commenters and forum members
        self.people = [f"{fake.first_name()} {fake.last_name()}" for _ in range(120)]  # its reporters and spokespeople
        rng = self.rng("sites")
        dates = ("mdy_short", "mdy_abbr", "mdy_long", "dmy_long", "iso")
        news_names = rng.sample(NEWS_NAMES, 3)
        self.sites = {
            "wiki": Site(f"{self.slug}pedia.org", f"{self.topic}pedia", Style(rng.choice(("mdy_long", "dmy_long")), "symbol", False)),
            "news": [Site(f"{slug(n.format(T=self.topic)).replace('-', '')}.com", n.format(T=self.topic),
                          Style(rng.choice(dates[:4]), rng.choice(("symbol", "symbol", "code", "prefixed")), rng.random() < 0.8)) for n in news_names],
            "ranking": Site(f"top{self.slug.replace('-', '')}.com", f"Top {self.topic}", Style("mdy_abbr", "symbol", False)),
            "profile": Site(f"{self.slug}-specs.com", f"{self.topic} Specs", Style("iso", rng.choice(("code", "symbol")), False)),
            "compare": Site(f"versus-{self.slug}.net", f"{self.topic} Versus", Style(rng.choice(dates[:4]), "symbol", False)),  # it writes prose
            "forum": Site(f"forum.{self.slug}.io", f"{self.topic} Forum", Style(rng.choice(dates[:4]), "symbol", True)),
            "data": Site(f"data.{self.slug}.org", f"{self.topic} Open Data", Style("iso", "code", False)),
            "archive": Site(f"archive.{self.slug}.org", f"{self.topic} Archive", Style("mdy_short", "symbol", False)),
            "rumor": Site(f"{self.slug}-leaks.com", f"{self.topic} Leaks", Style(rng.choice(dates[:4]), "symbol", True)),
        }

    # -- helpers ------------------------------------------------------------------------
    def rng(self, *names: str):
        """A random stream for one purpose of this corpus, seeded by world, scenario and ``names``."""
        return column_rng(self.seed, self.spec.world, self.scenario or "", *names)

    def close(self) -> None:
        """Drop everything the builder holds (its pages stay with whoever took them). Its helpers (the context writer,
        the chrome dresser) refer back to it, a reference cycle that would keep every page, fact and cache alive
        until CPython's cyclic collector walked them all; after this, reference counting frees them."""
        self.__dict__.clear()

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
        return self.wiki_urls[(t, key)]

    def col(self, t: str, c: str) -> ColumnInfo:
        """How pages present column ``c`` of table ``t``."""
        return self.info[t].columns[c]

    def say(self, t: str, row: dict, c: str, style: Style, section: str, scope: str | None = None) -> tuple[str, Fact]:
        """The text a page writes for one cell, and its fact (both immutable: remembered per cell, style, section and
        scope, since peer tables and comparisons state the same cells on many pages)."""
        pk = self._pks[t]
        key = (t, row[pk], c, style, section, scope)
        got = self._said.get(key)
        if got is None:
            info = self.col(t, c)
            value = row[c]
            text = cell_text(str(value)) if info.kind in ("name", "category", "text") and not isinstance(value, (int, float, date)) else format_value(value, info.unit, style)
            got = self._said[key] = (text, Fact(t, str(row[pk]), c, text, section, scope))
        return got

    def name_fact(self, t: str, row: dict, section: str, scope: str | None = None) -> list[Fact]:
        """The facts stating a row's label: its name cell, or the cells its designation states (the parent's
        label, the event date ...; none for a designation made of an ordinal alone)."""
        key = (t, row[self.spec.tables[t].primary_key], section, scope)
        got = self._name_facts.get(key)
        if got is None:  # Facts are immutable: one list per (row, section, scope), copied for the caller to extend
            lab = self.row_labels[t][key[1]]
            got = self._name_facts[key] = [Fact(ct, ck, cc, text, section, scope) for ct, ck, cc, text in lab.cells]
        return list(got)

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
        seen_claims: set[tuple] = set()
        page.claims = [c for c in page.claims if (c.kind, c.text, c.row_key) not in seen_claims and not seen_claims.add((c.kind, c.text, c.row_key))]
        self.pages.append(page)

    def attributes(self, t: str, kinds: tuple[str, ...] = ("number", "share", "rank", "date", "category", "bool", "text")) -> list[str]:
        """Columns a page can state about a row, in declared order (keys, names, references and compose-only columns excluded)."""
        got = self._attrs.get((t, kinds))
        if got is None:
            got = self._attrs[(t, kinds)] = self.info[t].attributes(kinds)
        return list(got)  # the caller's own list

    def numbers(self, t: str) -> list[str]:
        """Numeric and share columns of ``t`` (what comparisons and news figures state)."""
        return self.attributes(t, ("number", "share"))

    def event(self, t: str) -> str | None:
        """The first date column of a table with an event verb (else the first date column), for news."""
        dates = [c for c in self.attributes(t, ("date",)) if "birth" not in c]
        with_verb = [c for c in dates if self.col(t, c).event]
        return (with_verb or dates or [None])[0]

    def parent_of(self, t: str, row: dict) -> tuple[str, dict] | None:
        """The first labelled parent row of ``row`` as ``(table, row)``, or ``None``; a parent in a role (a sailing's port of
        departure, a match's home team) is none: "Vancouver's V20153" does not say whose it is."""
        for ref, col in self.refs[t].items():
            if ref in self.info[t].roles:
                continue
            prow = self.by_key[col.parent].get(row[ref])
            if prow is not None and self.info[col.parent].label_column != self.spec.tables[col.parent].primary_key:
                return col.parent, prow
        return None

    def kind(self, t: str) -> str:
        """What the rows of ``t`` are: ``person``, ``event``, ``measurement`` or ``thing``
        (:func:`~worldforge.corpus.kinds.table_kinds`, read once per corpus)."""
        kinds = self.__dict__.get("_kinds")
        if kinds is None:
            kinds = self._kinds = table_kinds(self.spec, self.tables, self.info, self.person)
        return kinds[t]

    def mention(self, t: str, key: Any) -> str:
        """How running text names a row: its label, and a designation that holds its date as the description it is,
        with "the" ("the Conrad Hut stay of 1 July 2036", never "that of Conrad Hut stay of 1 July 2036"); a name or a
        code ("MV Loch Knox", "H-10042", "Runway show 9 of Madrid Fashion Week") as it is."""
        lab = self.row_labels[t][key]
        return f"the {lab.text}" if lab.dated is not None and lab.text[:1].isupper() else lab.text

    def sure(self, t: str, c: str) -> bool:
        """Whether running text may state column ``c`` of ``t``: its frame says it (a verb phrase or a role's noun) and the
        lexicon is sure of it (:attr:`~worldforge.corpus.lexicon.Frame.prose`); other columns stay in tables."""
        fr = self.frame(t, c)
        return bool(fr.vps or fr.noun) and fr.prose

    def organisation(self, t: str) -> bool:
        """Whether the rows of ``t`` are organisations that announce and can be quoted (a brewery, a label)
        (:func:`~worldforge.corpus.kinds.is_organisation` of the row noun; never a person)."""
        return not self.person[t] and is_organisation(self.info[t].noun)

    def fits(self, t: str, genre: str) -> bool:
        """Whether rows of ``t`` get pages of ``genre`` (a page type) of their own: measurements get no news, press
        release, rumour or forum thread; people no rumour (:data:`~worldforge.corpus.kinds.GENRES_BY_KIND`)."""
        return fits(self.kind(t), genre)

    def restates(self, t: str, row: dict, c: str) -> bool:
        """Whether the row's label already states cell ``c`` (a designation holds its date, its parent's name ...):
        a sentence that names the row by it never states that cell again ("X observation of 6 February 2036 was
        observed on 6 February 2036")."""
        key = row[self.spec.tables[t].primary_key]
        return any(ct == t and ck == str(key) and cc == c for ct, ck, cc, _ in self.row_labels[t][key].cells)

    def dated_subject(self, rng, t: str, row: dict, c: str, text: str) -> tuple[str, str] | None:
        """``(subject, clause)`` for a sentence that states date ``c`` of a row whose designation holds that date:
        the designation without it and the event ("the Brecho Explorer launch", "took place on 12 March 2031";
        "the GRO-30F supply deal", "was signed on 6 May 2040"); ``None`` when the label does not state ``c``."""
        lab = self.row_labels[t][row[self.spec.tables[t].primary_key]]
        if lab.bare is None or lab.dated != c:
            return None
        clause = self.event_clause(rng, t, row, c, text)
        bare = re.sub(r"(?<=\w) (record|entry|log)\b", "", lab.bare, count=1) if self.kind(t) == "event" else lab.bare  # a launch lifts off, not its record
        nouns = {w[:5] for w in re.findall(r"[a-z]+", bare.lower()) if len(w) >= 4}
        verbs = [w for w in clause.split(" on ")[0].split() if w not in ("was", "were", "is", "has", "first", "last")]
        if not self.frame(t, c).event or any(w[:5] in nouns for w in verbs):  # never "the X launch launched on"
            clause = f"took place on {text}" if self.kind(t) == "event" else f"is dated {text}"
        return f"the {bare}", clause

    def siblings(self, t: str, row: dict) -> list[dict]:
        """Other rows of ``t`` with the same first parent as ``row``."""
        pk = self.spec.tables[t].primary_key
        for ref in self.refs[t]:
            groups = self._groups.get((t, ref))
            if groups is None:  # rows by their first parent, in table order: one pass per table instead of one per row
                groups = self._groups[(t, ref)] = {}
                for r in self.rows[t]:
                    groups.setdefault(r[ref], []).append(r)
            if row[ref] is None:  # no parent: no siblings either
                return []
            return [r for r in groups.get(row[ref], ()) if r[pk] != row[pk]]
        return []

    # -- prose -------------------------------------------------------------------------
    def frame(self, t: str, c: str) -> Frame:
        """How sentences state column ``c`` of ``t`` (:func:`~worldforge.corpus.lexicon.frame_for`, cached)."""
        key = (t, c)
        fr = self._frames.get(key)
        if fr is None:
            ci, col = self.col(t, c), self.spec.tables[t].columns[c]
            of = self.col(t, col.of).label if isinstance(col, M.RankColumn) else None
            values = tuple(sorted({str(r[c]) for r in self.rows[t] if isinstance(r.get(c), str) and not is_absence(r[c])})) \
                if ci.kind == "category" else ()
            fr = frame_for(ci.label, ci.kind, ci.unit.base if ci.unit else None, ci.unit.kind if ci.unit else None, name=c,
                           verb=getattr(col, "verb", None), event=ci.event, of_label=of, person=self.person[t],
                           noun_of_row=self.info[t].noun, role=faker_person(col), values=values)
            if fr.event and any(echoes(self.info[t].noun, v.split(" on ")[0]) for v in fr.vps):
                # "INS-00205 was inspected on": an inspection is carried out, a launch takes place, never echoing its noun
                fr = replace(fr, vps=("took place on {value}",) if self.kind(t) == "event" else ("was carried out on {value}",))
            if "is in {value}" in fr.vps and (self.kind(t) == "event" or is_organisation(self.info[t].noun)):
                # a publisher "is based in Italy", a tournament "is held in Sydney": never "The publisher is in Italy"
                where = "is held in {value}" if self.kind(t) == "event" else "is based in {value}"
                fr = replace(fr, vps=tuple(where if v == "is in {value}" else v for v in fr.vps))
            if self.kind(t) in ("event", "measurement") and len(fr.vps) > 1 and not getattr(col, "verb", None):
                # a past inspection "found 2 defects", never "has found": its events are over
                past = tuple(v for v in fr.vps if not (v.startswith("has ") and is_past(v.split(" ")[1])))
                fr = replace(fr, vps=past or fr.vps)
            self._frames[key] = fr
        return fr

    def referent(self, t: str, row: dict) -> Referent:
        """A fresh :class:`~worldforge.corpus.lexicon.Referent` for a row (no mention yet); its first category, when
        it is a lower-case word and the row is a person, describes it ("the technician")."""
        # a person's role, rank or job describes them ("the technician"); an instrument or a club does not ("the trumpet")
        cats = [c for c in self.attributes(t, ("category",)) if not self.person[t] or self.col(t, c).label.lower().split()[-1] in _ROLE_HEADS]
        kind = row.get(cats[0]) if cats else None
        # people only: "the technician" reads well, "the success launch record" does not
        kind = kind if self.person[t] and isinstance(kind, str) and kind[:1].islower() and len(kind.split()) <= 2 and "|" not in kind \
            and not is_absence(kind) \
            and not any(ch.isdigit() for ch in kind) else None  # "the medic", never "the level 2"
        if kind is not None and not names_a_thing(kind) and not kind.lower().endswith(self.info[t].noun.lower().split()[-1]):
            # "the seasonal lifeguard", never "the seasonal" or "the part-time"; "the coach-player", never "coach-player player"
            kind = f"{kind} {self.info[t].noun}" if len(kind.split()) + len(self.info[t].noun.split()) <= 3 else None
        return Referent(self.mention(t, row[self.spec.tables[t].primary_key]), self.info[t].noun, self.person[t], kind)

    def prose(self, rng, t: str, row: dict, cols: list[str], style: Style, section: str, voice: str = "encyclopedia",
              ref: Referent | None = None, scope: str | None = None, base: "CorpusBuilder | None" = None) -> tuple[list[str], list[Fact]]:
        """Sentences stating ``cols`` of ``row`` (sentence-planned, :func:`~worldforge.corpus.planner.realise`) and their facts.

        ``base``: the builder the row belongs to (the base world's for an archive page), default this one.
        """
        src = base or self
        style = running(style)
        items, facts = [], []
        for c in cols:
            if row.get(c) is None or src.restates(t, row, c):  # the row's name states it already
                continue
            fr = src.frame(t, c)
            if not (fr.vps or fr.noun) or not fr.prose or is_absence(row[c]):
                continue  # a frame the lexicon is not sure of, or "none" (an absence, never a word): tables only
            text, f = src.say(t, row, c, style, section, scope)
            if (kind_of(fr, text) or "").lower() == src.info[t].noun.lower():
                continue  # "Mayer is a firefighter" on a firefighter's page says nothing
            if isinstance(row[c], str) and len(row[c]) > 2 and row[c] in src.labels[t][row[src.spec.tables[t].primary_key]]:
                continue  # "Bilbao Philharmonic is in Bilbao": its name says it
            items.append(Said(src.joined(t, row, fr), text))
            facts.append(f)
        if not items:
            return [], []
        said = realise(rng, ref or src.referent(t, row), items, voice, first_by_name=ref is None or ref.mentions == 0)
        noun = src.info[t].noun
        # "The elevator is a passenger elevator": the noun once, the subject a pronoun
        said = [f"It {s[len(noun) + 5:]}" if s.startswith(f"The {noun} ") and f" {noun}" in s[len(noun) + 5:] else s for s in said]
        return said, facts

    def joined(self, t: str, row: dict, fr: Frame) -> Frame:
        """A frame whose event takes an object the row's parent names: "joined Vienna Chamber Orchestra on 18 April 2005",
        never "Sheryl Heath joined on 18 April 2005" (joined what?); ``fr`` itself for any other frame or a row without a
        parent."""
        if not fr.event or not any(v.split(" ", 1)[0] in _JOINS and v.endswith(" on {value}") for v in fr.vps):
            return fr
        parent = self.parent_of(t, row)
        if parent is None:
            return fr
        plabel = self.labels[parent[0]][parent[1][self.spec.tables[parent[0]].primary_key]].replace("{", "{{").replace("}", "}}")
        vps = tuple(f"{v.split(' ', 1)[0]} {plabel} on {{value}}" if v.split(" ", 1)[0] in _JOINS and v.endswith(" on {value}") else v
                    for v in fr.vps)
        return replace(fr, vps=vps)

    def says_event(self, t: str, dc: str) -> bool:
        """Whether a sentence can tell what happened on date ``dc`` of a row: its frame has a sure event verb ("was
        founded on", "launched on"), or the rows are events (they take place). Else only tables and timelines date
        the row: a news story, press release or archive note would read "Race 1 is dated 1 August 2034"."""
        fr = self.frame(t, dc)
        return bool(fr.vps) and fr.prose or self.kind(t) == "event"

    def event_clause(self, rng, t: str, row: dict, dc: str, dtext: str) -> str:
        """``<verb phrase> on <date>`` for a row's dated event: the frame's event verb, else a neutral phrase."""
        fr = self.joined(t, row, self.frame(t, dc))
        if fr.vps and fr.prose:
            return rng.choice(fr.vps).format(value=dtext)
        if self.kind(t) == "event":  # a concert with a "concert date": it takes place, it does not "have a concert date of"
            d = row.get(dc)
            return f"{'took' if isinstance(d, date) and d <= self.as_of else 'takes'} place on {dtext}"
        return f"is dated {dtext}"

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
        """What every page of this corpus shares when it is dressed (:class:`~worldforge.corpus.chrome.Dresser`): a pool
        made for this spec travels as ``background`` (the sentences), a pool file by its name alone."""
        own = {"background": list(self.background_pool)} if self.own_background else {}
        return {"users": self.users, "topics": self.topics, "pool": self.pool_name, **own, "year": self.as_of.year,
                "retrieved": render_value(self.as_of), "seed": self.seed}

    def ask(self, rng, t: str, c: str, name: str) -> str:
        """A forum question asking for column ``c`` of the row called ``name``: a count's frame asks "How many lifts
        does Mont Weber have?", a participle phrase's "How many rescues did Ian Boyle lead?"; any other column
        :meth:`question`."""
        fr = self.frame(t, c)
        vp = fr.vps[0] if fr.vps and not fr.noun else ""
        m = re.fullmatch(r"has \{value\} ([a-z][a-z ]*)", vp)
        if m and m.group(1).split()[0] in ("a", "an", "per", "each", "every"):  # "has {value} a week" of "16 hours": its unit counts
            unit = self.col(t, c).unit
            m = re.fullmatch(r"has \{value\} ([a-z][a-z ]*)", f"has {{value}} {unit.base} {m.group(1)}") \
                if unit is not None and unit.base and unit.base.isalpha() and is_plural(unit.base) else None
        if m and m.group(1).split()[0] not in ("on", "in", "of", "for", "at"):
            things = m.group(1)
            return rng.choice([f"How many {things} does {name} have?", f"Does anyone know how many {things} {name} has?",
                               f"Quick question: how many {things} does {name} have?", f"Anyone counted the {things} of {name}?"])
        m = re.fullmatch(r"([a-z]+) \{value\} ([a-z][a-z ]*)", vp)
        if m and m.group(1) not in ("has", "is", "counts", "lists") and is_past(m.group(1)) and m.group(2).split()[0] not in ("of", "on", "in"):
            things = m.group(2)
            return rng.choice([f"How many {things} did {name} {base_verb(m.group(1))}?", f"Does anyone know how many {things} {name} {m.group(1)}?",
                               f"Trying to find out how many {things} {name} {m.group(1)}. Anyone?"])
        return self.question(rng, t, c, name)

    def question(self, rng, t: str, c: str, name: str) -> str:
        """A forum question asking for column ``c`` of the row called ``name``."""
        fr, ci = self.frame(t, c), self.col(t, c)
        words = ci.label.lower().split()
        if fr.event and fr.vps:
            # the verb phrase before its date: "went on sale", never "went" (a phrasal verb has an "on" of its own)
            verb = rng.choice([v for v in fr.vps if v.endswith(" on {value}")] or [fr.vps[0]]).rsplit(" on ", 1)[0]
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

