"""The web genres of a corpus, one function each: ``(builder) -> None``, adding that genre's pages.

Each function reads the world through a :class:`~worldforge.corpus.builder.CorpusBuilder` and hands
it every page it makes (:meth:`~worldforge.corpus.builder.CorpusBuilder.add`); :data:`GENRES` lists
them in the order :func:`~worldforge.corpus.generate.generate_pages` runs them, and :func:`references`
then gives each encyclopedia article the pages that cite the same row. What each genre states is
listed in :mod:`worldforge.corpus.generate`.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any

from worldforge.corpus.builder import CorpusBuilder, running
from worldforge.corpus.chrome import forum_replies
from worldforge.corpus.lexicon import PLACE_VPS, a_or_an, echoes, fill, is_absence, kind_of, possessive
from worldforge.corpus.page import Fact, Page, Site, cell_text, slug
from worldforge.corpus.planner import sentence_case
from worldforge.corpus.quantity import Style, format_value, render_value
from worldforge.corpus.vocab import ranking_order
from worldforge.spec import models as M

NEWS_NAMES = ("{T} Daily", "The {T} Wire", "{T} Insider", "{T} Times", "The {T} Ledger", "{T} Today", "{T} Dispatch", "{T} Report")
"""Who a news story quotes (news is reported speech); never a document the corpus has no page for ("a filing shows")."""
_RANKING_TOP = 50
"""Rows a ranking page lists at most (the rest of a rank column is stated in each row's encyclopedia infobox)."""
_CONTEXT_HEADINGS = ("In context", "Standing", "Comparison", "Among its peers", "How it compares", "Compared with its peers")
"""Headings of an article's derived-claims section (the first three also for a person)."""
_BYLINE_ROLES = ("staff writer", "correspondent", "senior reporter", "data editor")



# -- genres -------------------------------------------------------------------------
def _wiki_lead(b: CorpusBuilder, rng, t: str, label: str, what: str, parents: list[tuple[str, str, str]], n_siblings: int = 0) -> str:
    """An encyclopedia lead: what the row is and whose it is ("**Dunlap Bock** is a Bock beer of Brauerei Sanders."). A
    second parent gets a sentence of its own ("It is also a sale of Long Table."), never "a harvest of X and rye and Y"; a row with no
    parent is placed in the reference work. No "as recorded in", "catalogued in" or "filed under": a lead says what a
    thing is, and the work it belongs to is named once, plainly.

    ``parents``: ``(link, parent label, parent noun)`` of each parent outside a role, in reference order; ``n_siblings``:
    the rows that share the first parent, the row included."""
    a_what, plural, title = a_or_an(what), b.info[t].plural, b.title
    bold = f"**{label}**"
    if not parents:  # never "a brewery in *<title>*": the title is no place
        return f"{bold} is one of the {plural} of *{title}*." if what == b.info[t].noun else f"{bold} is {a_what}, one of the {plural} of *{title}*."
    (link, plabel, _), rest = parents[0], parents[1:]
    if plabel in label and rest and n_siblings > 1:  # the name says whose it is: the lead says its other parent, and how many
        lead = f"{bold} is {a_what} of {rest[0][0]}, one of the {n_siblings} {plural} of {link}."  # "a race result of Drew Wolfe, one of ..."
        rest = rest[1:]
    elif plabel in label:  # "Henson Hut stay of 1 May" says whose it is: the lead says how many there are
        lead = f"{bold} is one of the {n_siblings} {plural} of {link}." if n_siblings > 1 else f"{bold} is the only {what} of {link}."
    else:
        lead = f"{bold} is {a_what} of {link}."
    for link, _, _ in rest:  # "It is also a sale of Long Table.", never "Its coffee is Long Table."
        lead += f" It is also {a_what} of {link}."
    return lead


_WHERE = tuple(v for v in PLACE_VPS if v != "is from {value}")  # where a parent is; a person's origin places nothing


def _places(b: CorpusBuilder, t: str) -> list[str]:
    """The category columns of ``t`` that say where a row is ("is in {value}", "is on {value}"), sure ones only."""
    return [c for c in b.attributes(t, ("category",))
            if b.frame(t, c).prose and any(v in _WHERE for v in b.frame(t, c).vps)]


def _placed(b: CorpusBuilder, t: str, row: dict, style, skip: list[str]) -> tuple[str, object] | None:
    """``("in Frankfurt", fact)``: where a parent row is, by its first place column, for the lead of a child that has
    no place of its own (``skip``: the child's place columns: a hall in a city is not said twice); ``None`` when the
    parent has no place."""
    if skip:
        return None
    for c in _places(b, t):
        if isinstance(row.get(c), str) and not is_absence(row[c]):
            text, fact = b.say(t, row, c, style, "lead")
            vp = next(v for v in b.frame(t, c).vps if v in _WHERE)
            return fill(vp, text)[3:], fact
    return None


def encyclopedia(b: CorpusBuilder) -> None:
    """One article per row of every table: lead with category and parents, infobox, overview, children, see also."""
    site = b.sites["wiki"]
    b.wiki_urls: dict[tuple[str, Any], str] = {}
    for t in b.spec.tables:
        for key, label in b.labels[t].items():
            b.wiki_urls[(t, key)] = b.url(site, f"wiki/{slug(t)}/{slug(label)}")
    for t, table in b.spec.tables.items():
        pk, info = table.primary_key, b.info[t]
        rng = b.rng("encyclopedia", t)
        cats = b.attributes(t, ("category",))
        by_parent: dict[str, Counter] = {}
        for row in b.rows[t]:
            label = b.labels[t][row[pk]]
            facts = b.name_fact(t, row, "lead")
            claims: list = []
            what = info.noun
            # the lead names the kind of thing by its first category only where the lexicon knows how ("a Pils beer",
            # "a catamaran"); "a concert whose series is subscription" or "(status: on time)" is label glue: the
            # category is then an infobox row like any other
            cfr = b.frame(t, cats[0]) if cats else None
            in_lead = cfr is not None and kind_of(cfr, "") is not None and row[cats[0]] is not None and not is_absence(row[cats[0]])
            if in_lead:
                ctext, cfact = b.say(t, row, cats[0], site.style, "lead")
                what = kind_of(cfr, ctext)  # "Pils beer", "ro-ro ferry"
                facts.append(cfact)
            parents, roles, first_ref = [], [], None
            for ref, col in b.refs[t].items():
                if row[ref] is None:  # an optional reference left empty, a hierarchy's root: no parent, never "none"
                    continue
                prow = b.by_key[col.parent][row[ref]]
                plink = f"[{b.labels[col.parent][row[ref]]}]({b.wiki_url(col.parent, row[ref])})"
                facts += b.name_fact(col.parent, prow, "lead")
                if ref in info.roles:  # a game's White and Black: said with their roles, after the lead, and in the infobox
                    roles.append((info.roles[ref], plink))
                else:
                    if first_ref is None and not b.person[col.parent]:  # where the parent is: "a hall of [X] in Frankfurt"
                        where = _placed(b, col.parent, prow, site.style, skip=_places(b, t))
                        if where:
                            plink, wfact = f"{plink} {where[0]}", where[1]
                            facts.append(wfact)
                    parents.append((plink, b.labels[col.parent][row[ref]], b.info[col.parent].noun))
                    first_ref = first_ref or ref
            # the rows that share the parent the lead names (not the first reference: a role or an empty one comes first)
            shared = by_parent.setdefault(first_ref, Counter(r[first_ref] for r in b.rows[t])) if first_ref else None
            lead = _wiki_lead(b, rng, t, label, what, parents, shared[row[first_ref]] if shared else 0)
            if roles:
                lead += " " + sentence_case(" and ".join(f"its {r} is {p}" for r, p in roles)) + "."
            lines = [lead, "", f"| {sentence_case(info.noun)} | {cell_text(label)} |", "|---|---|"]
            lines += [f"| {sentence_case(r)} | {p} |" for r, p in roles]
            shown = []
            for c in b.attributes(t):  # compose-only columns are no infobox rows
                if row[c] is None or (in_lead and c == cats[0]) or b.col(t, c).compose_only:
                    continue
                text, f = b.say(t, row, c, site.style, "body")
                lines.append(f"| {sentence_case(b.col(t, c).label)} | {text} |")
                facts.append(f)
                shown.append(c)
            if in_lead:
                lines.append(f"| {sentence_case(b.col(t, cats[0]).label)} | {b.say(t, row, cats[0], site.style, 'lead')[0]} |")
            # the overview says what the lexicon is sure of (the rest stays in the infobox)
            prose_cols = [c for c in shown if b.col(t, c).kind != "bool" and b.frame(t, c).prose and not is_absence(row[c])]
            if prose_cols:
                said, pf = b.prose(rng, t, row, rng.sample(prose_cols, min(len(prose_cols), rng.randint(3, 5))), site.style, "body")
                if said:
                    lines += ["", rng.choice(("## Overview", "## Profile", "## Details", "## Summary")), "", " ".join(said)]
                    facts += pf
            # a person is named in full once, then by surname ("Veltroni's classical rating ..."), as biographies do
            parts = label.split()
            ref = (parts[-1] if len(parts) > 1 and parts[-1][:1].isupper() and parts[-1].isalpha() else label) if b.person[t] else "it"
            standing = b.context.standing(rng, t, row, running(site.style), ref)
            if standing.sentences:
                lines += ["", f"## {rng.choice(_CONTEXT_HEADINGS[:3] if b.person[t] else _CONTEXT_HEADINGS)}", "", " ".join(standing.sentences)]
                facts += standing.facts
                claims += standing.claims
            peers, tfacts = b.context.peer_table(rng, t, row, site.style)
            if peers:
                group = b.context.group_column(t)
                where = ""
                fk = b.context.record_parent(t)
                if not b.context.measures(t) and fk is not None:  # a record's siblings: "Awards of Casa Hewoklund"
                    where = f" of {b.labels[b.refs[t][fk].parent][row[fk]]}"
                elif group and isinstance(b.spec.tables[t].columns[group], M.ReferenceColumn):
                    where = " " + b.context.of_parent(t, group, row)
                elif group:
                    where = f" ({b.col(t, group).label}: {b.say(t, row, group, site.style, 'body')[0]})"
                lines += ["", f"## {sentence_case(info.plural)}{where}", ""] + peers
                facts += tfacts
            history = b.context.history(rng, t, row, running(site.style), ref)
            if history.sentences:
                title = "Since " + str(b.base[0].as_of_date.year) if b.base is not None and history.claims and history.claims[0].kind == "change" else "History"
                lines += ["", f"## {title}", "", " ".join(history.sentences)]
                facts += history.facts
                claims += history.claims
            for child, ref_col in b.children[t]:
                kids = [r for r in b.rows[child] if r[ref_col] == row[pk]]
                if not kids:
                    continue
                cpk = b.spec.tables[child].primary_key
                lines += ["", f"## {b.info[child].section(ref_col)}", ""]
                for k in kids:  # the list right under its heading (what readers of the section take), the summary after it
                    lines.append(f"- [{b.labels[child][k[cpk]]}]({b.wiki_url(child, k[cpk])})")
                    facts += b.name_fact(child, k, "body")
                summary = b.context.children(rng, t, row, running(site.style), label, only=child, via=ref_col)
                if summary.sentences:
                    lines += ["", " ".join(summary.sentences)]
                    facts += summary.facts
                    claims += summary.claims
            sibs = b.siblings(t, row)
            if sibs:
                see = rng.sample(sibs, min(3, len(sibs)))
                lines += ["", "## See also", ""] + [f"- [{b.labels[t][s[pk]]}]({b.wiki_url(t, s[pk])})" for s in see]
                for s in see:
                    facts += b.name_fact(t, s, "body")
            page = Page(b.wiki_url(t, row[pk]), b.spec.world, b.scenario, "encyclopedia", f"{label} - {site.name}",
                        None, lead, "\n".join(lines), facts, claims=claims)
            b.add(b.dress(page, site, "wiki", rng, [sentence_case(info.plural), label], background=rng.randint(7, 12)))

def news(b: CorpusBuilder) -> None:
    """A news story per row with a dated event, on one of the news sites."""
    for t, table in b.spec.tables.items():
        dc = b.event(t)
        if dc is None or not b.fits(t, "news") or not b.says_event(t, dc):  # a measurement is no news story, a date with no event neither
            continue
        pk = table.primary_key
        rng = b.rng("news", t)
        nums = [c for c in b.numbers(t) + b.attributes(t, ("category",)) if b.sure(t, c)]
        for row in b.rows[t]:
            if row[dc] is None:
                continue
            site = rng.choice(b.sites["news"])
            label = b.labels[t][row[pk]]
            dtext, dfact = b.say(t, row, dc, running(site.style), "lead")
            clause = b.event_clause(rng, t, row, dc, dtext)
            published = min(row[dc] + timedelta(days=rng.randint(0, 3)), b.as_of) if isinstance(row[dc], date) else None
            parent = b.parent_of(t, row)
            plabel = b.labels[parent[0]][parent[1][b.spec.tables[parent[0]].primary_key]] if parent else None
            # never "Google's Google Terra 2", nor "Brno Sinfonietta's Harry Hendricks joined Brno Sinfonietta"
            by = f"{possessive(plabel)} " if plabel and plabel not in label and plabel not in clause and rng.random() < 0.5 else ""
            dated = b.dated_subject(rng, t, row, dc, dtext)
            if dated:  # a designation that holds the date: "the Brecho Explorer launch took place on ...", said once
                name, clause = dated
                title_name = sentence_case(name)
            else:
                name = title_name = label
            short = clause.replace(f" on {dtext}", "") if b.frame(t, dc).event or dated else clause
            title = rng.choice([f"{by}{title_name} {clause}", f"{label}: what we know" if not dated else f"{title_name}: what we know",
                                f"{by}{title_name} {short}", f"Report: {name} {short}"])
            label = name  # how the lead calls the row
            ref = b.referent(t, row)
            # the lead states the event plainly: no "sources confirmed", "it is official", "earlier than many had
            # expected" — no source stands behind them, and the story reports a date, not a rumour
            leads = [f"{by}{label} {clause}.", f"{by}{label} {clause}."]
            if b.frame(t, dc).event or dated:
                leads += [f"On {dtext}, {by}{label} {short}."]
            if plabel and not by and plabel not in label and plabel not in clause:  # never "X, a musician of P, joined P on"
                leads += [f"{label}, {a_or_an(b.info[t].noun)} of {plabel}, {clause}."]
            lead = rng.choice(leads)
            lead = lead if lead.startswith((label, plabel or label)) and not dated else sentence_case(lead)  # a name keeps its own case
            label = b.labels[t][row[pk]]  # the row's own name again for the body
            ref.mentions = 1
            facts = [dfact] + b.name_fact(t, row, "lead") + (b.name_fact(parent[0], parent[1], "lead") if plabel and plabel in lead else [])
            body = [lead, ""]
            said, pf = b.prose(rng, t, row, rng.sample(nums, min(len(nums), rng.randint(2, 4))), site.style, "body", "news", ref=ref)
            if said:
                body.append(" ".join(said))
                facts += pf
            sibs = b.siblings(t, row)
            if sibs and rng.random() < 0.6:  # a related row: more entities than the one asked about
                s = rng.choice(sibs)
                # a story tells of what happened before it was written, never of a later event in the past tense
                if s[dc] is not None and (published is None or not isinstance(s[dc], date) or s[dc] <= published):
                    stext, sfact = b.say(t, s, dc, running(site.style), "body")
                    slink = f"[{b.labels[t][s[pk]]}]({b.wiki_url(t, s[pk])})"
                    sclause = b.event_clause(rng, t, s, dc, stext)
                    sdated = b.dated_subject(rng, t, s, dc, stext)
                    if sdated:  # "another [GRO-30F supply deal](...) was signed on ...": its date said once
                        sname, sclause = sdated
                        slink = f"the [{sname[4:]}]({b.wiki_url(t, s[pk])})"  # never "another X–Y pairing": its own players
                    # a sibling says what the two share: the parent ("Another beer of Brauerei Lutz, X, launched on ...")
                    of = f" of {plabel}" if plabel and plabel not in sclause else ""
                    body += ["", f"Another {b.info[t].noun}{of}, {slink}, {sclause}." if not sdated else sentence_case(f"{slink} {sclause}.")]
                    facts += [sfact] + b.name_fact(t, s, "body")
            context = b.context.news_context(b.rng("news-context", t, str(row[pk])), t, row, running(site.style), label)
            if context.sentences:  # where the row stands: a rank or a comparison, and in a scenario its change since the base year
                body += ["", " ".join(context.sentences)]
                facts += context.facts
            author = rng.choice(b.people)
            body += ["", f"*{author}, {rng.choice(_BYLINE_ROLES)}, {site.name}*"]
            path = f"{row[dc].year}/{row[dc].month:02d}/{slug(title)}" if isinstance(row[dc], date) else slug(title)
            page = Page(b.url(site, path), b.spec.world, b.scenario, "news", title, published, lead, "\n".join(body), facts,
                        claims=context.claims)
            b.add(b.dress(page, site, "news", rng, [sentence_case(b.info[t].plural)], background=rng.randint(6, 10),
                                comments=rng.randint(1, 7), subject=label))

def press_releases(b: CorpusBuilder) -> None:
    """Announcements of about half the dated rows by their top-level organisation's newsroom."""
    for t, table in b.spec.tables.items():
        dc = b.event(t)
        if dc is None or not table.references or b.info[t].label_column == table.primary_key or not b.fits(t, "press_release") \
                or not b.says_event(t, dc):
            continue
        pk = table.primary_key
        rng = b.rng("press", t)
        for row in b.rows[t]:
            parent = b.parent_of(t, row)
            # an organisation announces: the parent is a top-level table (it has no parent itself) whose rows are
            # organisations (a brewery, a label; never a mountain hut, a museum department or an appellation), and it
            # announces what is new (an event of the last year or to come), never a founding of 1933 "today"
            if parent is None or b.spec.tables[parent[0]].references or row[dc] is None or not b.organisation(parent[0]) \
                    or (isinstance(row[dc], date) and (b.as_of - row[dc]).days > 366) or rng.random() > 0.5:
                continue
            pt, prow = parent
            ppk = b.spec.tables[pt].primary_key
            plabel = b.labels[pt][prow[ppk]]
            site = Site(f"newsroom.{slug(plabel)}.com", f"{plabel} Newsroom", Style("mdy_long", "symbol", False))
            label = b.labels[t][row[pk]]
            dtext, dfact = b.say(t, row, dc, site.style, "lead")
            clause = b.event_clause(rng, t, row, dc, dtext)
            # the date once: never "August 30, 2030 — X today announced that Y was released on August 30, 2030"
            lead = rng.choice([f"{plabel} announced that {label} {clause}.",
                               f"{plabel} confirmed that {label} {clause}.",
                               f"FOR IMMEDIATE RELEASE — {label} {clause}, {plabel} announced."])
            facts = [dfact] + b.name_fact(t, row, "lead") + b.name_fact(pt, prow, "lead")
            body = [lead, ""]
            ref = b.referent(t, row)  # the paragraph names the row first: its figures are not the organisation's
            # a newsroom welcomes a person without disclosing their figures (a salary, an age): the quote and the organisation
            cols = [] if b.person[t] else rng.sample(b.numbers(t), min(len(b.numbers(t)), 3))
            said, pf = b.prose(rng, t, row, [c for c in cols if b.sure(t, c)], site.style, "body", "encyclopedia", ref=ref)
            if said:
                body += [" ".join(said), ""]
                facts += pf
            highlights = [c for c in cols if row[c] is not None]
            if highlights:
                body += [rng.choice(("**Highlights**", "**At a glance**", "**Key facts**")), ""]
                for c in highlights:
                    text, f = b.say(t, row, c, site.style, "body")
                    body.append(f"- {sentence_case(b.col(t, c).label)}: {text}")
                    facts.append(f)
                body.append("")
            exec_name = rng.choice(b.people)
            org = plabel if rng.random() < 0.4 else f"the {b.info[pt].noun}"
            role = rng.choice(("chief executive", "head of communications", "managing director", "chief operating officer", "programme lead"))
            if b.person[t]:  # people are welcomed, not called "an important step"
                quotes = [f"\u201cWe are delighted to have {label} with us,\u201d said {exec_name}, {role} at {org}.",
                          f"\u201c{label} brings experience the whole team will learn from,\u201d said {exec_name}, {role}.",
                          f"{exec_name}, {role} at {org}, called {label} \u201ca valued member of the team.\u201d"]
            else:
                quotes = [f"\u201cWe are proud of what the team has achieved with {label},\u201d said {exec_name}, {role} at {org}.",
                          f"\u201c{label} reflects years of careful work,\u201d said {exec_name}, {role}.",
                          f"{exec_name}, {role} at {org}, called {label} \u201can important step for everyone involved.\u201d"]
            body.append(rng.choice(quotes))
            about = ["", f"## About {plabel}", ""]
            pref = b.referent(pt, prow)  # the paragraph's first sentence names it
            pcols = [c for c in b.attributes(pt, ("number", "category")) if prow[c] is not None and b.sure(pt, c)][:3]
            psaid, pfacts = b.prose(rng, pt, prow, pcols, site.style, "body", "encyclopedia", ref=pref)
            # never "a brewery in *<the world's title>*": the title is no place; "X is a brewery." only when nothing else is said
            sent = " ".join(psaid or [f"{plabel} is {a_or_an(b.info[pt].noun)}."])
            facts += pfacts
            body += about + [sent, "", f"Media contact: press@{slug(plabel)}.com"]
            title = rng.choice([f"{plabel} announces {label}", f"{label}: an announcement from {plabel}", f"{plabel} confirms {label}"]
                               if plabel not in label else [f"Announcing {label}", f"{label}: official announcement", f"Introducing {label}"])
            published = min(row[dc], b.as_of) if isinstance(row[dc], date) else None
            page = Page(b.url(site, f"press/{slug(label)}"), b.spec.world, b.scenario, "press_release", title, published, lead,
                        "\n".join(body), facts)
            b.add(b.dress(page, site, "press", rng, ["Press releases"], background=rng.randint(5, 8)))

def rankings(b: CorpusBuilder) -> None:
    """A ranking page per rank column and group: rank, linked label and ranked value of every row."""
    site = b.sites["ranking"]
    for t, table in b.spec.tables.items():
        pk, info = table.primary_key, b.info[t]
        for rc, col in table.columns.items():
            if not isinstance(col, M.RankColumn):
                continue
            groups: dict[Any, list[dict]] = {}
            for row in b.rows[t]:
                groups.setdefault(row[col.within] if col.within else None, []).append(row)
            of = b.col(t, col.of)
            for g, rows in groups.items():
                if col.within and g is None and isinstance(table.columns[col.within], M.ReferenceColumn):
                    continue  # the rows without a parent are no group a ranking page lists
                rows = sorted(rows, key=lambda r: r[rc])
                scope = ""
                facts: list[Fact] = []
                if col.within:
                    parent = table.columns[col.within]
                    if isinstance(parent, M.ReferenceColumn):
                        scope = f" of {b.labels[parent.parent][g]}"
                        facts += b.name_fact(parent.parent, b.by_key[parent.parent][g], "lead")
                    else:
                        scope = f" ({render_value(g)})"
                title = f"{sentence_case(info.plural)}{scope} ranked by {of.label}{ranking_order(table, rc)}"
                lead = f"The {len(rows)} {info.plural}{scope} in *{b.title}*, ranked by {of.label} as of {format_value(b.as_of, None, site.style)}."
                if len(rows) > _RANKING_TOP:  # a ranking site publishes the top of a long list, as "top N" lists do
                    lead = (f"The top {_RANKING_TOP} of the {len(rows)} {info.plural}{scope} in *{b.title}*, ranked by {of.label} "
                            f"as of {format_value(b.as_of, None, site.style)}.")
                    rows = rows[:_RANKING_TOP]
                lines = [lead, "", f"| Rank | {sentence_case(info.noun)} | {sentence_case(of.label)} |", "|---|---|---|"]
                for r in rows:
                    rt, f1 = b.say(t, r, rc, site.style, "body")
                    vt, f2 = b.say(t, r, col.of, site.style, "body")
                    lines.append(f"| {rt} | [{b.labels[t][r[pk]]}]({b.wiki_url(t, r[pk])}) | {vt} |")
                    facts += [f1, f2] + b.name_fact(t, r, "body")
                url = b.url(site, f"rankings/{slug(title)}")
                rng = b.rng("ranking", t, rc, str(g))
                lines += ["", rng.choice(("*How we rank:* positions follow the figures published by each organisation; ties keep the order of the "
                                          "previous edition.", "*Methodology:* we compile the list from public records and update it when "
                                          "new figures appear.", "*Note:* rankings are refreshed as new data comes in; earlier editions are "
                                          "kept in our archive."))]
                page = Page(url, b.spec.world, b.scenario, "ranking", title, b.as_of, lead, "\n".join(lines), facts)
                b.add(b.dress(page, site, "ranking", rng, ["Rankings", sentence_case(info.plural)], background=rng.randint(6, 10) + len(rows) // 3))  # a long list gets a longer write-up

def profiles(b: CorpusBuilder) -> None:
    """A spec-sheet page per row with three or more attributes (some left out per page)."""
    site = b.sites["profile"]
    for t, table in b.spec.tables.items():
        attrs = b.attributes(t, ("number", "share", "date", "category", "bool"))
        if len(attrs) < 3 or b.info[t].label_column == table.primary_key:
            continue
        pk, info = table.primary_key, b.info[t]
        rng = b.rng("profile", t)
        for row in b.rows[t]:
            label = b.labels[t][row[pk]]
            shown = [c for c in attrs if row[c] is not None]
            shown = sorted(rng.sample(shown, max(3, len(shown) - rng.randint(0, 2))), key=attrs.index) if len(shown) > 3 else shown
            # "specifications" are a product's; anything else has key facts
            the = f"The {info.noun} " if not label.lower().startswith(info.noun.lower()) else ""  # never "The patch Patch 1.2"
            lead = rng.choice([f"{label}: full specifications and key facts.", f"{the}{label} at a glance: the key specifications.",
                               f"{label} — specifications and details."] if b.kind(t) == "product" else
                              [f"{label}: key facts.", f"{the}{label} at a glance.", f"{label} — facts and figures."])
            facts = b.name_fact(t, row, "lead")
            lines = [lead, "", "## Key specs", ""]
            for c in shown:
                text, f = b.say(t, row, c, site.style, "body")
                lines.append(f"- **{sentence_case(b.col(t, c).label)}:** {text}")
                facts.append(f)
            sayable = [c for c in shown if b.sure(t, c)]
            said, pf = b.prose(rng, t, row, rng.sample(sayable, min(len(sayable), rng.randint(2, 3))), site.style, "body")
            if said:
                lines += ["", rng.choice(("## Our take", "## In short", "## Overview", "## What stands out")), "", " ".join(said)]
                facts += pf
            parent = b.parent_of(t, row)
            if parent:
                ppk = b.spec.tables[parent[0]].primary_key
                lines += ["", f"More from [{b.labels[parent[0]][parent[1][ppk]]}]({b.wiki_url(parent[0], parent[1][ppk])})."]
                facts += b.name_fact(parent[0], parent[1], "body")
            page = Page(b.url(site, f"{slug(info.noun)}/{slug(label)}"), b.spec.world, b.scenario, "profile",
                        f"{label} specs | {site.name}", None, lead, "\n".join(lines), facts)
            b.add(b.dress(page, site, "profile", rng, [sentence_case(info.plural), label], background=rng.randint(6, 9), comments=rng.randint(0, 3),
                                subject=label))

def comparisons(b: CorpusBuilder) -> None:
    """Side-by-side pages of two or three consecutive rows' numeric attributes."""
    site = b.sites["compare"]
    for t, table in b.spec.tables.items():
        nums = b.numbers(t)
        if len(nums) < 2 or b.info[t].label_column == table.primary_key:
            continue
        pk = table.primary_key
        rows = b.rows[t]
        rng = b.rng("comparison", t)
        i = 0
        while i < len(rows) - 1:
            size = 3 if rng.random() < 0.3 and i + 2 < len(rows) else 2
            group = rows[i:i + size]
            i += size
            names = [b.labels[t][r[pk]] for r in group]
            cols = rng.sample(nums, min(len(nums), 4))
            title = f"{' vs '.join(names)}: {', '.join(b.col(t, c).label for c in cols[:2])} compared"
            lead = rng.choice([f"How do {', '.join(names[:-1])} and {names[-1]} compare? We put them side by side.",
                               f"{', '.join(names[:-1])} or {names[-1]}? Here is how they stack up.",
                               f"We compared {', '.join(names[:-1])} and {names[-1]} on the figures that matter."])
            lines = [lead, "", "| | " + " | ".join(cell_text(n) for n in names) + " |", "|---|" + "---|" * len(group)]
            facts = [f for r in group for f in b.name_fact(t, r, "lead")]
            for c in cols:
                cells = []
                for r in group:
                    text, f = b.say(t, r, c, site.style, "body")
                    cells.append(text if r[c] is not None else "—")
                    if r[c] is not None:
                        facts.append(f)
                lines.append(f"| {sentence_case(b.col(t, c).label)} | " + " | ".join(cells) + " |")
            url = b.url(site, "-vs-".join(slug(n) for n in names))
            verdict = []
            for r in group:  # a sentence per contender, from the figures of the table
                sayable = [c for c in cols if b.sure(t, c)]
                said, _ = b.prose(rng, t, r, rng.sample(sayable, min(len(sayable), 2)), site.style, "body", "news")
                verdict += said[:1]  # its values are the table's cells, stated (and registered) there already
            if verdict:
                lines += ["", rng.choice(("## The verdict", "## How they differ", "## Bottom line")), "", " ".join(verdict)]
            if b.kind(t) == "product":  # only a buyer chooses between products; nobody "chooses" between two ports or wardens
                lines += ["", rng.choice(("Which one is right for you depends on what you value most; the table only shows the published figures.",
                                          "Our verdict: there is no clear winner, and the right choice depends on your priorities."))]
            page = Page(url, b.spec.world, b.scenario, "comparison", title, b.as_of, lead, "\n".join(lines), facts)
            b.add(b.dress(page, site, "compare", rng, ["Compare", sentence_case(b.info[t].plural)], background=rng.randint(5, 9),
                                comments=rng.randint(0, 4), subject=names[0]))

def forum(b: CorpusBuilder) -> None:
    """Q&A threads about one or two attributes of about a third of the rows."""
    site = b.sites["forum"]
    for t, table in b.spec.tables.items():
        cols = [c for c in b.numbers(t) + b.attributes(t, ("date",)) if b.sure(t, c)]
        if not cols or not b.fits(t, "forum"):  # nobody asks a forum about one reading of a measurement
            continue
        pk = table.primary_key
        rng = b.rng("forum", t)
        for row in b.rows[t]:
            if rng.random() > 0.34:
                continue
            c = rng.choice(cols)
            if row[c] is None or b.restates(t, row, c):  # never "When was X award of 20 April 2040 awarded?"
                continue
            label = b.labels[t][row[pk]]
            asker, answerer = rng.sample(b.users, 2)
            question = b.ask(rng, t, c, label)
            title = question if rng.random() < 0.7 else rng.choice([f"Question about {label}", f"{label} — need help", f"Help: {label}"])
            lead = f"**{asker}** {rng.choice(['asks', 'wrote', 'posted'])}: {rng.choice(['', 'Quick one. ', 'Sorry if this was asked before. ', 'Hi all! '])}{question}"
            ref = b.referent(t, row)
            ref.mentions = 1
            said, facts = b.prose(rng, t, row, [c], site.style, "body", "forum", ref=ref)
            body = [lead, "", f"> **{answerer}** replied: {' '.join(said)}"]
            facts += b.name_fact(t, row, "lead")
            others = [o for o in cols if o != c and row[o] is not None and not b.restates(t, row, o)]
            if others and rng.random() < 0.4:
                more, mf = b.prose(rng, t, row, [rng.choice(others)], site.style, "body", "forum", ref=ref)
                if more:
                    text = " ".join(more)
                    lead_in = rng.choice(["Also, ", "Adding to that: ", "And ", ""])
                    if lead_in and text.startswith(("It ", "The ", "Pretty ", "From ", "Last ", "If ", "Going ", "According ", "IIRC ")):
                        text = text if text[1:2].isupper() else text[:1].lower() + text[1:]  # "IIRC" stays, never "iIRC"
                    body += ["", f"> **{rng.choice(b.users)}**: {lead_in}{text}"]
                    facts += mf
            body += forum_replies(rng, b.users, rng.randint(2, 6))
            body += ["", f"> **{asker}**: {rng.choice(['Thanks!', 'Great, that helps.', 'Cheers.', 'Perfect, thank you.', 'Appreciated.'])}"]
            url = b.url(site, f"t/{slug(title)}")
            page = Page(url, b.spec.world, b.scenario, "forum", title, b.as_of, lead, "\n".join(body), facts)
            b.add(b.dress(page, site, "forum", rng, ["Forums", sentence_case(b.info[t].plural)], background=rng.randint(4, 7)))

def datasets(b: CorpusBuilder, per_page: int = 20) -> None:
    """One statistics-portal dataset per labelled table: every row with its parent and up to six columns."""
    site = b.sites["data"]
    for t in b.spec.tables:  # a nameless table's too: its designations ("Sensor 12") tell its rows apart in a list
        cols = b.attributes(t, ("number", "share", "date", "category", "bool"))[:6]
        _dataset_pages(b, b, t, cols, site, f"Dataset: {b.info[t].plural} in {b.title}", slug(t), None, per_page)

def _dataset_pages(b: CorpusBuilder, src: CorpusBuilder, t: str, cols: list[str], site: Site, title0: str, path: str, scope: str | None,
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
    root = f"https://{site.domain}{'/' + b.scenario if b.scenario else ''}/{path}"
    for p in range(pages):
        chunk = rows[p * per_page:(p + 1) * per_page]
        title = title0 + (f" (page {p + 1} of {pages})" if pages > 1 else "")
        lead = ((lead0 or f"Open data on the {len(rows)} {info.plural} of *{b.title}*, one row per {info.noun}")
                + (f"; page {p + 1} of {pages}." if pages > 1 else "."))
        head = [sentence_case(info.noun)] + ([sentence_case(src.info[parent_ref[1].parent].noun)] if parent_ref else []) + [sentence_case(src.col(t, c).label) for c in cols]
        lines = [lead, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        facts: list[Fact] = []
        for r in chunk:
            label = src.labels[t][r[pk]]
            wiki = b.wiki_urls.get((t, r[pk]))
            cells = [f"[{cell_text(label)}]({wiki})" if wiki and b.labels[t].get(r[pk]) == label else cell_text(label)]
            facts += src.name_fact(t, r, "body", scope)
            if parent_ref and r[parent_ref[0]] is None:  # no parent: an empty cell
                cells.append("")
            elif parent_ref:
                pt = parent_ref[1].parent
                cells.append(cell_text(src.labels[pt][r[parent_ref[0]]]))
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
        url = b.url(site, f"{path}/page-{p + 1}")
        rng = b.rng("dataset", path, str(p))
        about = ["", rng.choice(("## About this dataset", "## Dataset notes", "## Metadata")), ""]
        for c in cols:
            desc = src.spec.tables[t].columns[c].description
            desc = None if desc and any(ch.isdigit() for ch in desc) else desc  # a figure in a note could read as a world fact
            ci = src.col(t, c)
            about.append(f"- **{sentence_case(ci.label)}**: {desc.rstrip('.') if desc else 'as published by the source'}"
                         + (f" (unit: {ci.unit.text})" if ci.unit is not None and ci.unit.kind not in ("share",) else "") + ".")
        about += ["", rng.choice(("License: open data, free to reuse with attribution.", "Licence: reuse permitted with attribution to the publisher.",
                                  "Terms: free for research and non-commercial use; please cite the portal.")),
                  "", rng.choice(("Downloads: CSV · JSON · XLSX", "Formats: CSV, JSON", "Export: CSV · Parquet · API")),
                  "", rng.choice(("Values are as reported by each organisation and may be revised.",
                                  "Report an error in this dataset through the feedback form.",
                                  "Some figures are provisional and are updated as new returns arrive."))]
        lines += about
        page = Page(url, b.spec.world, b.scenario, "dataset", title, b.as_of, lead, "\n".join(lines), facts)
        b.add(b.dress(page, site, "data", rng, ["Datasets", sentence_case(info.plural)], background=rng.randint(5, 8) + len(chunk) // 3))  # a long list gets a longer write-up

def timelines(b: CorpusBuilder) -> None:
    """One page per table and quarter listing the rows whose event date falls in it."""
    site = b.sites["archive"]
    for t, table in b.spec.tables.items():
        dc = b.event(t)
        pk, info = table.primary_key, b.info[t]
        if dc is None or (info.label_column == pk and b.kind(t) != "measurement"):
            continue
        quarters: dict[tuple[int, int], list[dict]] = {}
        for row in b.rows[t]:
            d = row[dc]
            if d is not None:
                quarters.setdefault((d.year, (d.month - 1) // 3 + 1), []).append(row)
        ci = b.col(t, dc)
        echo = bool(ci.event) and b.kind(t) == "measurement" and echoes(info.noun, ci.event)
        fr = b.frame(t, dc)
        event = ci.event or next((v[: -len(" on {value}")] for v in fr.vps if v.endswith(" on {value}")), None) if fr.event else ci.event
        for (y, q), rows in sorted(quarters.items()):
            rows = sorted(rows, key=lambda r: (r[dc], r[pk]))
            if echo:  # never "Observations that were observed"
                title = f"{sentence_case(info.plural)} by date: Q{q} {y}"
                lead = f"Every {info.noun} in *{b.title}* dated in Q{q} {y}, in date order."
            elif event:  # "Every trainset ... that was built in Q3 2020", never "whose built falls in"
                that = "who" if b.person[t] else "that"  # "Every beekeeper ... who joined in Q1 2006"
                title = f"{sentence_case(info.plural)} {that} {event.replace('was ', 'were ')}: Q{q} {y}"
                lead = f"Every {info.noun} in *{b.title}* {that} {event} in Q{q} {y}, in date order."
            else:
                title = f"{sentence_case(info.plural)} by {ci.label}: Q{q} {y}"
                lead = f"Every {info.noun} in *{b.title}* whose {ci.label} falls in Q{q} {y}, in date order."
            trng = b.rng("timeline-intro", t, str(y), str(q))
            lines = [lead, "", trng.choice((
                "Entries are compiled from announcements and public records and are added as they are confirmed; links lead to each "
                "entry's encyclopedia article.",
                "This page is part of our quarterly timelines. Dates are those of the official records; where sources disagree, the "
                "record kept by the organisation itself is used.",
                "Use the links to read more about each entry. Earlier and later quarters are listed in the archive's index.",
                "The list below is maintained by volunteers and checked against published sources at the end of each quarter.")), ""]
            facts: list[Fact] = []
            for r in rows:
                if b.restates(t, r, dc):  # "Sparks Point Light storm of 21 February 2032" says its date already
                    lines.append(f"- [{b.labels[t][r[pk]]}]({b.wiki_url(t, r[pk])})")
                    facts += b.name_fact(t, r, "body")
                    continue
                dtext, f = b.say(t, r, dc, site.style, "body")
                lines.append(f"- [{b.labels[t][r[pk]]}]({b.wiki_url(t, r[pk])}): {dtext}")
                facts += [f] + b.name_fact(t, r, "body")
            url = b.url(site, f"{slug(t)}/{y}-q{q}")
            rng = b.rng("timeline", t, str(y), str(q))
            page = Page(url, b.spec.world, b.scenario, "timeline", title, None, lead, "\n".join(lines), facts)
            b.add(b.dress(page, site, "archive", rng, ["Timelines", sentence_case(info.plural), str(y)], background=rng.randint(5, 8) + len(rows) // 3))  # a long list gets a longer write-up


def rumors(b: CorpusBuilder) -> None:
    """Near misses: a page about a successor that does not exist, whose title names a real row."""
    site = b.sites["rumor"]
    for t, table in b.spec.tables.items():
        dc = b.event(t)
        if not table.references or b.info[t].label_column == table.primary_key or b.person[t] or not b.fits(t, "rumor"):
            continue  # people have no successors, a measurement no follow-up
        pk = table.primary_key
        rng = b.rng("rumor", t)
        for row in b.rows[t]:
            if rng.random() > 0.12:
                continue
            label = b.labels[t][row[pk]]
            title = rng.choice([f"Rumor: a successor to {label} is in the works", f"{label} successor spotted?", f"Leak: what comes after {label}"])
            lead = rng.choice([f"Word is that a successor to {label} is being prepared. Nothing is confirmed.",
                               f"Our sources hint at a follow-up to {label}, though nobody will say so on the record.",
                               f"A tipster claims that something new is coming after {label}. Take it with a grain of salt."])
            facts = b.name_fact(t, row, "lead")
            body = [lead, ""]
            if dc and row[dc] is not None and b.says_event(t, dc):
                dtext, f = b.say(t, row, dc, running(site.style), "body")
                body.append(f"{label} {b.event_clause(rng, t, row, dc, dtext)}.")  # the known fact, plainly: no "so a successor would not be unusual"
                facts.append(f)
            body += ["", rng.choice(["*Treat this as speculation until an official announcement.*", "*Unconfirmed. We will update this post.*",
                                     "*This is a rumor; none of it has been confirmed.*"])]
            page = Page(b.url(site, f"{slug(label)}-successor"), b.spec.world, b.scenario, "rumor", title, b.as_of, lead,
                        "\n".join(body), facts)
            b.add(b.dress(page, site, "rumor", rng, ["Leaks"], background=rng.randint(5, 8), comments=rng.randint(1, 6), subject=label))

def archive(b: CorpusBuilder) -> None:
    """A scenario's past: news pages dated in the base year that state the base world's values."""
    if b.base is None:
        return
    bspec, btables = b.base
    site = Site(f"archive.{b.sites['news'][0].domain}", f"{b.sites['news'][0].name} archive", b.sites["news"][0].style)
    base = CorpusBuilder(bspec, btables, None, b.seed)
    for t, table in bspec.tables.items():
        dc = base.event(t)
        if dc is None or base.info[t].label_column == table.primary_key or not base.says_event(t, dc):
            continue
        pk = table.primary_key
        rng = b.rng("archive", t)
        nums = [c for c in base.numbers(t) if base.sure(t, c)]
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
            said, pf = b.prose(rng, t, row, rng.sample(nums, min(len(nums), 2)), site.style, "body", "news", ref=ref, scope="world", base=base)
            if said:
                body.append("At the time, " + said[0][:1].lower() + said[0][1:] if said[0].startswith(("It ", "The ")) else said[0])
                body += said[1:]
                facts += pf
            body += ["", f"*This article is from {row[dc].year} and is kept for the record; figures may have changed since.*"]
            page = Page(b.url(site, f"{row[dc].year}/{slug(label)}"), b.spec.world, b.scenario, "news", title,
                        row[dc], lead, "\n".join(body), facts)
            b.add(b.dress(page, site, "news", rng, ["Archive", str(row[dc].year)], background=rng.randint(5, 8)))
    _snapshots(b, base)
    base.close()  # its caches hold facts in a reference cycle with it (CorpusBuilder.close)

def _snapshots(b: CorpusBuilder, base: CorpusBuilder) -> None:
    """A scenario's archived datasets: per labelled table, the base world's values of the columns that changed since."""
    site = b.sites["archive"]
    year = base.as_of.year
    for t, table in base.spec.tables.items():
        pk = table.primary_key
        if base.info[t].label_column == pk or t not in b.by_key:
            continue
        now = b.by_key[t]
        changed = [c for c in base.attributes(t, ("number", "share", "date", "category", "bool"))
                   if any(k in now and now[k].get(c) != r[c] for k, r in base.by_key[t].items())]
        changed = sorted(changed, key=lambda c: base.col(t, c).kind == "date")[:6]
        if not changed:
            continue
        info = base.info[t]
        _dataset_pages(b, base, t, changed, site, f"Archived dataset: {info.plural} as of {year}", f"snapshot-{year}/{slug(t)}", "world",
                           lead0=f"A snapshot of the {info.plural} of *{base.title}* as published in {year}, kept for the record; "
                                 f"{len(base.rows[t])} rows")




def references(b: CorpusBuilder) -> None:
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


GENRES = (encyclopedia, news, press_releases, rankings, profiles, comparisons, forum, datasets, timelines, rumors, archive)
"""The genres, in the order a corpus is built (URLs and seeds depend on it)."""
