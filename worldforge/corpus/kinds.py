"""What a table's rows are — people, events, periodic measurements or things — and which genres fit each kind.

A web writes about a thing by what it is. A launch, a match or a signed deal makes news; a person gets a
profile; a daily snow observation, a storm logged at a lighthouse or an album's chart run is a *measurement*:
a row designated by its parent and a date, one of many, which a statistics portal lists in its dataset, an
archive in its timeline and the parent's encyclopedia article among its children, but which no newsroom
announces, no news site reports ("Sources confirmed that Mont Silence observation of 6 February 2036 was
observed on 6 February 2036"), no rumour blog gives a successor and no forum asks about.

:func:`table_kinds` reads the kind of every table from what the spec and :mod:`~worldforge.corpus.vocab`
already know, in this order:

1. ``person``: the rows are people (:func:`~worldforge.corpus.lexicon.person_table`).
2. ``measurement``: the head noun of the row noun names a record of something measured, counted or listed
   (``observation``, ``reading``, ``chart entry``, ``visitor count``, ``visitation record``; in a table without
   a name column, or whose names repeat between rows ("Race 3" of every boat), also ``listing``, ``review``, ``standing`` and a parent's routine operations: ``flight``,
   ``trip``, ``port call``, ``sale``), unless a word before it names an event (``launch record``: an event; but a
   ``race result`` is an outcome of the race, a measurement).
3. ``event``: the head noun names an event (``launch``, ``match``, ``award``, ``deal``, ``rescue``).
4. ``measurement``: in a table without a name column, the date the rows are designated by has a verb of
   measuring (``was observed``, ``was logged``, ``was reported``).
5. ``measurement``: a table without a name column whose rows are designated by their parent and a date, three
   or more per parent.
6. ``product``: a thing whose names carry a model number (three in five or more of its names have a word and then a
   number: "vivo Lumen 6 Ultra", "Brecho Explorer 2"; never a code such as "GOR-314" or the noun and a number,
   "Berth 545").
7. ``thing``: anything else (a lighthouse, a seed variety, a library).

:data:`GENRES_BY_KIND` says which genres each kind gets; :func:`fits` asks it.

================ ==============================================================================
kind             genres
================ ==============================================================================
person           encyclopedia, news, press_release, ranking, profile, comparison, forum, dataset,
                 timeline (no rumour: people have no successors)
event            every genre but the rumour (a concert, an award or an exhibition has no successor)
product          every genre: a *versioned* thing (most of its names carry a model number: "vivo Lumen 6
                 Ultra"), the one kind a rumour blog gives a successor
thing            every genre but the rumour (a library, an estate or a farm has no successor)
measurement      encyclopedia (and a link from the parent's article), ranking, dataset, timeline: no news,
                 press release, rumour, forum thread, fact sheet or side-by-side comparison of its own (two
                 race results of a boat are no buyer's choice)
================ ==============================================================================
"""

from __future__ import annotations

import re

import polars as pl

from worldforge.corpus.vocab import TableInfo
from worldforge.spec import models as M

__all__ = ["GENRES_BY_KIND", "KINDS", "ORGANISATION_NOUNS", "fits", "is_organisation", "table_kind", "table_kinds"]

KINDS = ("person", "event", "measurement", "product", "thing")
"""The kinds of rows a table can hold."""

_ALL = frozenset({"encyclopedia", "news", "press_release", "ranking", "profile", "comparison", "forum", "dataset", "timeline", "rumor"})
GENRES_BY_KIND: dict[str, frozenset[str]] = {
    "person": _ALL - {"rumor"},
    "event": _ALL - {"rumor"},  # a concert or an exhibition has no successor
    "product": _ALL,
    "thing": _ALL - {"rumor"},
    "measurement": _ALL - {"news", "press_release", "rumor", "forum", "comparison", "profile"},
}
"""The page types each kind of row may get (the module docstring's table)."""

# head nouns of records of something measured or counted, in any table
_MEASUREMENT_HEADS = {"observation", "measurement", "reading", "statistic", "statistics", "tally", "census", "snapshot", "sample",
                      "yield", "output", "harvest", "forecast"}
# head nouns that name such a record after a modifier ("chart run", "visitation record", "visitor count", "quarterly
# result"): alone, a "record" may be an album, a "week" a fashion event, a "run" a production
_MODIFIED_HEADS = {"record", "week", "run", "entry", "count", "report", "result"}
# head nouns of records only in a table without a name column, whose rows are called by their parent and a date or an
# ordinal: listings, reviews, standings, and the routine operations of a parent (a route's flights, a bike's trips)
_DESIGNATED_HEADS = {"listing", "offer", "review", "rating", "standing", "placement", "bestseller", "constituent", "membership",
                     "position", "result", "entry", "report", "count", "ranking", "price", "quote", "figure", "log",
                     "flight", "departure", "operation", "trip", "ride", "journey", "call", "stop", "sale", "transaction",
                     "purchase", "sailing", "voyage", "lot", "shipment", "consignment", "booking", "visit", "check", "inspection"}
_EVENT_NOUNS = {
    "launch", "liftoff", "match", "fixture", "game", "pairing", "bout", "show", "catwalk", "performance", "set", "slot", "concert",
    "gig", "award", "prize", "honour", "honor", "accolade", "medal", "grant", "approval", "decision", "filing", "deal", "contract",
    "lease", "order", "discovery", "detection", "birth", "newborn", "premiere", "race", "tournament", "festival", "conference",
    "mission", "expedition", "release", "drop", "round", "financing", "raise", "acquisition", "merger", "signing", "announcement",
    "opening", "closure", "election", "event", "rescue", "incident", "accident", "outbreak", "competition", "cup", "campaign",
    "recall", "strike", "eruption", "earthquake", "ceremony", "summit", "debut", "episode", "screening", "exhibition", "auction",
    "marathon", "regatta", "rally", "fair", "expo", "convention", "gala", "derby", "triathlon", "hackathon", "meetup", "parade",
    "workshop", "seminar", "symposium", "congress", "webinar", "lecture",
}
# head nouns of an outcome of an event, never the event itself ("race result", "match score", "league standing")
_OUTCOME_HEADS = {"result", "score", "standing", "ranking", "placing", "finish", "time", "split"}
# verbs of measuring: a row dated by one of them is an observation ("was observed", "was logged")
_MEASURING_VERBS = {"observed", "measured", "recorded", "logged", "reported", "sampled", "counted", "read", "taken", "surveyed",
                    "weighed", "tallied", "charted", "checked", "metered", "monitored", "estimated", "polled", "quoted"}


def table_kind(spec: M.WorldSpec, t: str, info: TableInfo, frame: pl.DataFrame | None, person: bool,
               parent_rows: int | None = None) -> str:
    """The kind of one table's rows (one of :data:`KINDS`; the rules of the module docstring).

    Args:
        spec: the world's spec.
        t: the table.
        info: how pages present it (:func:`~worldforge.corpus.vocab.table_info`): its noun, columns, designation.
        frame: its generated rows, for the rows per parent (``None``: the rule on rows per parent is skipped).
        person: its rows are people (:func:`~worldforge.corpus.lexicon.person_table`).
        parent_rows: the number of rows of its first parent table, for the rows per parent.

    Returns:
        ``person``, ``event``, ``measurement`` or ``thing``; never raises.
    """
    if person:
        return "person"
    words = info.noun.lower().replace("-", " ").split()
    if not words:
        return "thing"
    head, mods = words[-1], words[:-1]
    # a table whose names repeat between parents ("Race 3" of every boat, "v1.1" of every model) numbers its rows within
    # them, as a designation does: its rows are records, read by the rules of a nameless table
    designated = info.designation is not None or (frame is not None and info.label_column in frame.columns and frame.height > 0
                                                  and frame[info.label_column].n_unique() < 0.9 * frame.height)
    recorded = head in _MEASUREMENT_HEADS or (mods and head in _MODIFIED_HEADS) or (designated and head in _DESIGNATED_HEADS)
    if recorded and (not any(w in _EVENT_NOUNS for w in mods) or head in _OUTCOME_HEADS):
        return "measurement"  # a "race result" is one entrant's outcome of the race, not the race
    if head in _EVENT_NOUNS or recorded:  # "launch record": a record of an event is the event
        return "event"
    if not designated:
        return "thing"
    dates = [c for c, ci in info.columns.items() if ci.kind == "date" and "{" + c + "}" in info.designation]
    if any((info.columns[c].event or "").split()[-1:] == [v] for c in dates for v in _MEASURING_VERBS):
        return "measurement"  # "{lighthouse_id} storm of {logged_on}": a storm as the lighthouse logged it
    if dates and spec.tables[t].references and frame is not None and parent_rows and frame.height / parent_rows >= 3:
        return "measurement"
    return "thing"


def table_kinds(spec: M.WorldSpec, tables: dict[str, pl.DataFrame], infos: dict[str, TableInfo], person: dict[str, bool]) -> dict[str, str]:
    """The kind of every table of a world (:func:`table_kind`), by table name.

    Args:
        spec: the world's spec.
        tables: its generated tables.
        infos: how pages present each table.
        person: whether each table's rows are people.

    Returns:
        ``{table: kind}`` for every table of the spec.
    """
    out = {}
    for t, table in spec.tables.items():
        ref = next(iter(table.references.values()), None)
        parent_rows = tables[ref.parent].height if ref is not None and ref.parent in tables else None
        out[t] = table_kind(spec, t, infos[t], tables.get(t), person[t], parent_rows)
        if out[t] == "thing" and _versioned(infos[t], tables.get(t), spec.tables[t].primary_key):
            out[t] = "product"
    return out


_MODEL_NUMBER = re.compile(r"^[^\d]*[A-Za-z]{2,}[^\d]* \d+[A-Za-z]?\b")


def _versioned(info: TableInfo, frame: pl.DataFrame | None, pk: str) -> bool:
    """Three in five or more of a named table's names have a word and then a number ("Lumen 6 Ultra"), and the number
    follows more than the row noun alone ("Berth 545" is a berth numbered 545, not a model)."""
    if frame is None or info.label_column == pk or info.label_column not in frame.columns or not frame.height:
        return False
    noun = info.noun.lower()
    names = [str(v) for v in frame[info.label_column].to_list() if v is not None]
    versioned = sum(1 for n in names if _MODEL_NUMBER.match(n) and n.lower().split(" ")[0] != noun)
    # a model's name is its own: "Race 3" of every boat, "Patch 1.2" of every game are numbered entries, not products
    return versioned >= 0.6 * len(names) and len(set(names)) >= 0.9 * len(names)


ORGANISATION_NOUNS = frozenset({
    "agency", "airline", "association", "atelier", "authority", "bank", "brand", "brewery", "business", "carrier", "chain", "club",
    "co-op", "collective", "college", "company", "conglomerate", "consortium", "cooperative", "corporation", "council",
    "developer", "distillery", "distributor", "employer", "enterprise", "federation", "firm", "foundation", "fund", "group",
    "house", "institute", "insurer", "label", "laboratory", "lab", "league", "lender", "maison", "maker", "manufacturer",
    "ministry", "network", "nonprofit", "operator", "orchestra", "organisation", "organization", "outfit", "partnership",
    "producer", "publisher", "retailer", "school", "startup", "studio", "supplier", "syndicate", "system", "team", "union",
    "university", "vendor", "winery", "charity", "trust", "society", "ensemble", "company", "broadcaster", "studio",
})
"""Head nouns of rows that are organisations: they issue press releases and have executives to quote (a brewery, a
record label, a library system), unlike a mountain hut, a museum's department or a wine appellation."""


def is_organisation(noun: str) -> bool:
    """Whether rows called ``noun`` are organisations (the head noun, its last word, is one of :data:`ORGANISATION_NOUNS`)."""
    words = noun.lower().split()
    return bool(words) and words[-1] in ORGANISATION_NOUNS


def fits(kind: str, genre: str) -> bool:
    """Whether rows of ``kind`` get pages of ``genre`` (a ``page_type``) of their own (:data:`GENRES_BY_KIND`)."""
    return genre in GENRES_BY_KIND.get(kind, _ALL)
