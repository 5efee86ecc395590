"""What a column means to a reader: its label, unit, kind of value and, for a date, the event it dates.

Pages and task columns never show a column identifier (``launch_price_usd``, ``shipments_k``).
They use the column's ``label`` from the spec, or one derived from its name: the unit tokens
move into the unit (``_usd`` → USD, ``_k`` → thousand, ``_pct`` → percent, ``_gwh`` → GWh),
abbreviations are spelled out (``qty`` → quantity, ``avg`` → average) and the rest is read as
words (``launch_price_usd`` → "launch price", unit USD; ``value_musd`` → "value", unit
million USD; ``market_share_pct`` → "market share", unit percent).

A date column also gets the verb of its event: ``announced`` → "was announced", ``signed`` →
"was signed", ``launch_date`` → "launched", ``founded`` → "was founded", ``start_date`` →
"started"; any other date reads "<label>: <date>" or "its <label> fell on <date>".

A column is *additive* (:attr:`ColumnInfo.additive`) when the values of different rows can be
added up: counts, money totals, quantities, areas, populations. Ranks, shares, percents, dates,
means, rates, ratios, per-unit figures, grades, ratings, scores, depths, heights, ages,
temperatures, years, sizes and prices of a single item are not; the spec's ``additive`` wins, and
when unsure a column is not additive. A *compose-only* column (the parts of a generated name)
is never stated by pages nor asked by tasks.

A table without a name column is called by a *designation* (:func:`row_labels`): the spec's
template, or one derived from its first parent's label, the table's noun and the row's event date
("Brecho Explorer launch of 12 March 2031"), or a per-parent ordinal ("Launch 3 of Brecho
Explorer") where the date would not tell two rows apart. The few rows a dated designation still
leaves alike are told apart by what differs between them ("... chart run of 28 January 2027
(Billboard 200)", "... observation of 19 March 2036 (second that day)"), and each designation
knows the date it holds (:attr:`RowLabel.bare`), so that a sentence states that date once.
A date column named by a present-tense verb reads as a date: ``closes`` -> "closing date".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date
from functools import lru_cache
from typing import Any

import polars as pl

from worldforge.corpus.lexicon import INTRANSITIVE_VERBS, present_verb, singular_noun
from worldforge.corpus.quantity import CALENDAR_YEAR, Unit, format_date, parse_unit
from worldforge.spec import models as M

__all__ = [
    "ColumnInfo", "RowLabel", "TableInfo", "column_info", "derive_label", "faker_person", "is_additive", "is_calendar_year", "label_column", "ordinal",
    "reference_roles", "role_noun", "row_labels", "singular", "table_info",
]

# name tokens that are units: token -> unit text
_UNIT_TOKENS = {
    "usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY", "cny": "CNY", "inr": "INR", "chf": "CHF", "krw": "KRW",
    "musd": "million USD", "busd": "billion USD", "kusd": "thousand USD", "meur": "million EUR", "beur": "billion EUR",
    "pct": "percent", "percent": "percent", "gwh": "GWh", "mwh": "MWh", "kwh": "kWh", "twh": "TWh", "mw": "MW", "kw": "kW",
    "gw": "GW", "km": "km", "kg": "kg", "mah": "mAh", "gb": "GB", "tb": "TB", "mb": "MB", "cm": "cm", "mm": "mm",
    "kmh": "km/h", "mph": "mph", "days": "days", "hrs": "hours", "hours": "hours", "mins": "minutes", "min": "minutes",
    "sec": "seconds", "secs": "seconds", "years": "years", "yrs": "years", "tonnes": "tonnes", "kt": "thousand tonnes",
    "mt": "million tonnes", "t": "tonnes", "m3": "cubic meters", "in": "inch", "inch": "inch", "ft": "feet", "m2": "square meters", "sqm": "square meters",
    "ha": "hectares", "l": "liters", "ml": "ml", "g": "g", "mg": "mg", "kcal": "kcal", "c": "°C", "k": "thousand",
    "m": "million", "bn": "billion",
}
# scale tokens that combine with a unit given in the spec ("shipments_k", unit "thousand units")
_SCALE_TOKENS = {"k", "m", "bn"}
_WORDS = {
    "qty": "quantity", "avg": "average", "num": "number of", "no": "number of", "pop": "population", "yr": "year",
    "dob": "date of birth", "hq": "headquarters", "ceo": "CEO", "gdp": "GDP", "id": "ID", "url": "URL", "ev": "EV",
    "ai": "AI", "api": "API", "cpu": "CPU", "gpu": "GPU", "ram": "RAM", "ppl": "people", "pax": "passengers",
    "temp": "temperature", "cap": "capacity", "max": "maximum", "min": "minimum", "pts": "points", "cnt": "count",
    "addr": "address", "dept": "department", "mgr": "manager", "intl": "international", "est": "established",
}
# date columns: name -> the event's verb ("X <verb> on <date>")
_EVENTS = {
    "announced": "was announced", "founded": "was founded", "established": "was established", "signed": "was signed",
    "released": "was released", "published": "was published", "opened": "opened", "closed": "closed",
    "commissioned": "was commissioned", "launched": "launched", "completed": "was completed", "approved": "was approved",
    "registered": "was registered", "incorporated": "was incorporated", "listed": "was listed", "delivered": "was delivered",
    "launch": "launched", "launch_date": "launched", "release": "was released", "release_date": "was released",
    "arrival": "arrived", "arrival_date": "arrived", "departure": "departed", "departure_date": "departed",
    "start": "started", "start_date": "started", "end": "ended", "end_date": "ended", "birth_date": "was born",
    "born": "was born", "date_of_birth": "was born", "opening_date": "opened", "closing_date": "closed",
    "founding_date": "was founded", "premiere": "premiered", "premiere_date": "premiered", "debut": "debuted",
    "debut_date": "debuted", "signing_date": "was signed", "expiry_date": "expires", "expiration_date": "expires",
    "deadline": "is due", "due_date": "is due", "season_start": "opened its season", "kickoff": "kicked off",
    "first_flight": "first flew", "maiden_flight": "first flew", "inauguration": "was inaugurated",
}


def singular(table: str) -> str:
    """``supply_flights`` -> ``supply flight``, ``categories`` -> ``category``, ``statuses`` -> ``status``,
    ``lighthouses`` -> ``lighthouse``: the last word's singular by inflect (``data`` and ``media`` stay)."""
    words = table.replace("_", " ").split(" ")
    words[-1] = singular_noun(words[-1])
    return " ".join(words)


def label_column(table: M.TableSpec) -> str:
    """The column that names a row (:attr:`~worldforge.spec.models.TableSpec.name_column`): ``name``, else a
    ``*_name``/``handle``/``title``/``code`` column, else the first format column, else the primary key."""
    return table.name_column


def derive_label(name: str, unit: str | None = None) -> tuple[str, str | None]:
    """A readable label and the unit from a column name: ``("launch price", "USD")`` for ``launch_price_usd``.

    A unit given in the spec wins; a unit token in the name (``_usd``, ``_gwh``) is dropped from the
    label either way, and a scale token (``_k``) merges into a spec unit that lacks one.
    """
    tokens = name.split("_")
    name_unit = None
    while len(tokens) > 1 and tokens[-1] in _UNIT_TOKENS:
        tok = tokens.pop()
        name_unit = _UNIT_TOKENS[tok] if name_unit is None else f"{_UNIT_TOKENS[tok]} {name_unit}"
    if len(tokens) > 1 and tokens[0] in ("is", "has") and unit is None:
        tokens = tokens[1:]
    words = [_WORDS.get(t, t) for t in tokens]
    if "est" in tokens and len(tokens) > 1 and not {"year", "yr", "date", "founded"} & set(tokens):
        words = ["estimated"] + [w for t, w in zip(tokens, words) if t != "est"]  # "crew_size_est"; "year_est" is established
    label = " ".join(words).replace("number of of", "number of").strip()
    if unit is None and name_unit in ("thousand", "million", "billion"):
        unit = name_unit  # "population_k" without a unit: thousand (people, items ...)
    return label, unit or name_unit


@dataclass(frozen=True)
class ColumnInfo:
    """One column as pages and tasks present it.

    Attributes:
        name: the column identifier (never shown).
        label: the words for it ("launch price").
        unit: its unit (:func:`~worldforge.corpus.quantity.parse_unit`), ``None`` for unitless values.
        kind: ``key`` (primary key), ``name`` (the row's label), ``reference`` (a foreign key), ``date``,
            ``number``, ``rank``, ``share``, ``bool``, ``category`` (few distinct strings) or ``text``.
        event: for a date, the verb of its event ("was announced"), else ``None``.
        additive: values of different rows can be added up (a task may total them; :func:`is_additive`).
        compose_only: the column only composes another (never stated by pages, never asked by tasks).
    """

    name: str
    label: str
    unit: Unit | None
    kind: str
    event: str | None = None
    additive: bool = False
    compose_only: bool = False

    def header(self) -> str:
        """The column as a table header or a task column: the label, capitalised, with the unit in brackets."""
        head = self.label[:1].upper() + self.label[1:]
        unit = self.unit.header() if self.unit is not None else ""
        if not unit or self.label.lower().endswith(" " + unit.lower()):  # "Loan days", never "Loan days (days)"
            return head
        return f"{head} ({unit})"


@dataclass(frozen=True)
class TableInfo:
    """A table as pages present it: the noun for one row, its plural, the naming column and its columns.

    ``designation`` is the template rows of a table without a name column are called by (the spec's,
    or the derived one, :func:`row_labels`), ``None`` for a table with a name column.

    ``self_refs`` are the references of the table to itself (a hierarchy: a staff member's line manager).
    ``roles`` names the part each reference plays where the table has two or more references to one parent table (a
    game's ``white_id`` and ``black_id``, both players: ``{"white_id": "White", "black_id": "Black"}``; a match's home
    and away team): the reference column's label. A table's only reference to a parent has no role: pages and tasks
    call that parent by its noun.
    """

    name: str
    noun: str
    plural: str
    label_column: str
    columns: dict[str, ColumnInfo]
    designation: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    self_refs: frozenset[str] = frozenset()

    def section(self, ref: str | None = None) -> str:
        """The heading under which a parent's article lists rows of this table reached through ``ref``: ``Games``;
        ``Games as White`` through a reference with a role; ``Line manager of`` through a self-reference (a hierarchy:
        the rows this row is the line manager of)."""
        role = self.roles.get(ref) if ref else None
        if role and ref in self.self_refs:
            return f"{role[:1].upper() + role[1:]} of"
        head = self.plural[:1].upper() + self.plural[1:]
        return f"{head} as {role}" if role else head

    def attributes(self, kinds: tuple[str, ...] = ("number", "share", "rank", "date", "category", "bool", "text")) -> list[str]:
        """Columns of those kinds a page may state and a task may ask, in declared order (compose-only columns left out)."""
        return [c for c, ci in self.columns.items() if ci.kind in kinds and not ci.compose_only]


def _plural(noun: str) -> str:
    if noun.endswith(("series", "species", "news", "means", "headquarters", "aircraft", "sheep", "deer", "fish")):
        return noun  # "8 original series", never "serieses"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def column_info(table: M.TableSpec, name: str, frame: pl.DataFrame | None = None) -> ColumnInfo:
    """How pages present one column of a table (``frame``, the generated table, tells categories from free text)."""
    col = table.columns[name]
    label, unit_text = derive_label(name, col.unit)
    label = col.label or label
    unit = parse_unit(unit_text) if unit_text else None
    dtype = frame.schema[name] if frame is not None else None
    if name == table.primary_key:
        kind = "key"
    elif name == label_column(table):
        kind = "name"
    elif isinstance(col, M.ReferenceColumn):
        kind = "reference"
    elif dtype == pl.Date or isinstance(col, M.DateColumn):
        kind = "date"
    elif isinstance(col, M.RankColumn):
        kind = "rank"
    elif isinstance(col, M.ShareColumn):
        kind = "share"
        unit = unit or parse_unit("percent" if col.percent else "share")
    elif dtype == pl.Boolean:
        kind = "bool"
    elif dtype in (pl.Int64, pl.Float64, pl.Int32, pl.Float32):
        kind = "number"
        if unit is None and is_calendar_year(col, name, label, frame):
            unit = parse_unit(CALENDAR_YEAR)
    elif isinstance(col, M.ChoiceColumn) or (frame is not None and frame[name].n_unique() <= max(12, frame.height // 5)):
        kind = "category"
    else:
        kind = "text"
    event = None
    if kind in ("category", "text", "bool") and not col.unit:
        unit = None  # a unit token in a word's name is no unit of it: "trained_in" is no length in inches
    if kind == "date" and not col.label and re.fullmatch(r"[a-z]+ed", label):
        label = f"date {label}"  # "announced" -> "date announced", as infoboxes write it
    elif kind == "date" and not col.label and re.fullmatch(r"[a-z]+s", label) and present_verb(label):
        label = f"{_gerund(label)} date"  # "closes" -> "closing date": a column, never "its closes are ..."
    if kind == "date":
        event = _EVENTS.get(name)
        if event is None:
            stem = re.sub(r"_(on|at|date)$", "", name)
            event = _EVENTS.get(stem) or (f"was {stem.replace('_', ' ')}" if stem.endswith("ed") and "_" not in stem else None)
    if event is not None and event.startswith("was ") and event.split()[-1] in INTRANSITIVE_VERBS:
        event = event[4:]  # "was departed" -> "departed": an intransitive verb has no passive
    additive = is_additive(col, kind, label, unit)
    return ColumnInfo(name, label, unit, kind, event, additive, col.compose_only)


@lru_cache(maxsize=256)
def _gerund(verb: str) -> str:
    """``closes`` -> ``closing``, ``opens`` -> ``opening`` (lemminflect)."""
    from lemminflect import getInflection, getLemma

    lemma = getLemma(verb, upos="VERB")
    ing = getInflection(lemma[0], "VBG") if lemma else ()
    return ing[0] if ing else verb


_SINCE = frozenset({"founded", "established", "formed", "opened", "built", "launched", "incorporated", "inaugurated", "debut", "debuted"})
"""Words in a column's name or label that, when its values are whole numbers from 1000 to 2999, make it the year of that event."""


def is_calendar_year(col: M.ColumnSpec, name: str, label: str, frame: pl.DataFrame | None = None) -> bool:
    """Whether a unitless number column holds calendar years (``founded``, ``launch_year``, label ``year of birth``), which
    pages write ``1950``, not ``1,950``: its name or label says ``year`` (not ``years``, a duration) or names a founding
    event (:data:`_SINCE`), and its values are whole numbers from 1000 to 2999 (the generated ``frame``'s, else the spec's
    ``min``/``max`` of an ``int`` column; unknown values: not a year)."""
    words = set(re.findall(r"[a-z]+", f"{name.replace('_', ' ')} {label}".lower()))
    if "year" not in words and not words & _SINCE:
        return False
    if frame is not None and name in frame.columns:
        values = frame[name].drop_nulls()
        if values.dtype not in (pl.Int64, pl.Int32) and not (values.dtype in (pl.Float64, pl.Float32) and (values.round(0) == values).all()):
            return False
        lo, hi = values.min(), values.max()
    elif isinstance(col, M.NumberColumn) and col.dtype == "int":
        lo, hi = col.min, col.max
    else:
        return False
    return lo is not None and 1000 <= lo and hi <= 2999


_COLLECTIVE = {"staff": "staff member", "personnel": "staff member", "faculty": "faculty member", "workforce": "worker"}
"""Table names that are collective nouns: a row is one member ("every staff member", never "every staff")."""


@lru_cache(maxsize=4096)
def _noun(table_name: str) -> str:
    noun = singular(table_name)
    head = noun.rsplit(" ", 1)[-1]
    return noun[: len(noun) - len(head)] + _COLLECTIVE[head] if head in _COLLECTIVE else noun


def table_info(spec: M.WorldSpec, table: str, frame: pl.DataFrame | None = None) -> TableInfo:
    """How pages present a table: its row noun (the spec's ``label`` or the singular of its name) and its columns."""
    t = spec.tables[table]
    noun = t.label or _noun(table)
    cols = {c: column_info(t, c, frame) for c in t.columns}
    # two columns under one label ("power", and "power" in kW): pages must tell them apart. A declared label is kept (the
    # spec refuses two of them alike, or one that is another column's name); a derived one gives way to it and to the
    # labels before it, taking the column's name as words
    # the row's noun and its references' labels head infobox rows too ("Loan: Loan 3" beside a column loan_days read "loan")
    used: set[str] = {t.columns[c].label.lower() for c in cols if t.columns[c].label} | {noun.lower()}
    used |= {x.lower() for r, col in t.references.items() for x in (cols[r].label, spec.tables[col.parent].label or _noun(col.parent))
             if col.parent in spec.tables}
    for c, ci in cols.items():
        if t.columns[c].label or ci.kind == "reference":
            continue
        if ci.label.lower() in used and ci.kind not in ("key", "reference"):
            for other in (derive_label(c, t.columns[c].unit)[0], c.replace("_", " ")):
                if other.lower() not in used:
                    cols[c] = ci = replace(ci, label=other)
                    break
        used.add(ci.label.lower())
    lc = label_column(t)
    design = None
    if lc == t.primary_key:
        design = t.designation or _derived_designation(spec, table, noun, cols, frame)
    return TableInfo(table, noun, _plural(noun), lc, cols, design, reference_roles(table, t, cols),
                     frozenset(r for r, c in t.references.items() if c.parent == table))


def ranking_order(table: M.TableSpec, rank: str) -> str:
    """What a ranking page's title adds to tell two rank columns of one column apart (``, lowest first`` for the
    ascending one when the table ranks the same column, in the same groups, both ways), else nothing."""
    col = table.columns[rank]
    twin = any(isinstance(c, M.RankColumn) and n != rank and c.of == col.of and c.within == col.within
               for n, c in table.columns.items())
    return (", highest first" if col.descending else ", lowest first") if twin else ""


def reference_roles(name: str, table: M.TableSpec, cols: dict[str, ColumnInfo]) -> dict[str, str]:
    """``{reference column: role}`` of the references that share their parent table with another reference of the
    table, and of a reference to the table itself (:attr:`TableInfo.roles`); the role is the column's label (``home
    team`` for ``home_team_id``, ``line manager`` for a staff member's ``manager_id``)."""
    return {r: cols[r].label for r in table.references if table.reference_shape(name, r).startswith(("role", "hierarchy"))}


def role_noun(role: str, noun: str) -> str:
    """How a question calls a parent by its role: the role when it names a kind of thing (``home team`` for a team,
    ``buyer``), else the role before the parent's noun (``White player``)."""
    last = role.split()[-1].lower()
    if last == noun.split()[-1].lower() or last.endswith(("er", "or", "ist", "ant", "ent", "ee")):
        return role
    return f"{role} {noun}"


# -- additive or not -----------------------------------------------------------------------------
_NOT_ADDITIVE = re.compile(
    r"\b(rank|ranking|position|share|percent|percentage|pct|rate|rates|ratio|average|avg|mean|median|per|grade|rating|score|scores|"
    r"depth|height|tall|age|aged|temperature|temp|year|years|vintage|size|price|prices|fare|fee|index|speed|density|margin|"
    r"efficiency|elevation|altitude|latitude|longitude|diameter|width|length|duration|capacity|level|stars?|ph|abv|"
    r"minimum|maximum|min|max|highest|lowest|peak|record|distance|weight|resolution|frequency|version)\b",
)
_ADDITIVE = re.compile(
    r"\b(count|number|total|revenue|revenues|sales|sold|budget|funding|funds|raised|amount|spend|spending|spent|investment|"
    r"population|area|quantity|qty|shipments|shipped|units|volume|passengers|visitors|attendance|employees|staff|headcount|"
    r"students|enrolled|members|subscribers|users|downloads|streams|views|goals|wins|losses|draws|points|profit|income|"
    r"earnings|valuation|value|cost|costs|output|production|produced|generation|energy|emissions|sold|bookings|orders|"
    r"installations|deliveries|trips|rides|flights|hectares|tonnes|copies|episodes|titles|awards|medals|donations|grants|"
    r"rooms|beds|seats|cases|doses|patients|participants|enrollment|assets|debt|capitalisation|capitalization|cap)\b",
)
_SPAN = re.compile(r"\b(days|weeks|months|hours|minutes|years) (from|to|between|after|before|until)\b")
_NOT_ADDITIVE_UNITS = ("percent", "share", "°c", "°f", "out of", "stars", "km/h", "mph", "per ", "/", "inch", "years", "year")


def is_additive(col: M.ColumnSpec, kind: str, label: str, unit: Unit | None) -> bool:
    """Whether values of different rows of a column can be added up (a task may total them).

    The spec's ``additive`` wins. Otherwise only numbers can be: an aggregate is additive when its ``fn``
    is ``sum`` or ``count`` (never ``mean``/``min``/``max``); a label or unit that reads as a rank, share,
    percent, mean, rate, ratio, per-unit figure, grade, rating, score, depth, height, age, temperature,
    year, size or price of one item is not; one that reads as a count, a money total or a quantity is;
    anything else is not (when unsure, not additive).
    """
    if col.additive is not None:
        return col.additive
    if kind != "number":
        return False
    if isinstance(col, M.AggregateColumn):
        return col.fn in ("sum", "count")
    words = label.lower().replace("-", " ")
    unit_text = (unit.text if unit is not None else "").lower()
    if _NOT_ADDITIVE.search(words) and not words.startswith(("number of", "total ")):
        return False
    if words.endswith((" number", " no.")) or _SPAN.search(words):  # "edition number", "days from signing to delivery"
        return False
    if any(u in unit_text for u in _NOT_ADDITIVE_UNITS):
        return False
    if _ADDITIVE.search(words) or words.startswith("number of"):
        return True
    return bool(unit is not None and unit.kind in ("money",) and not _NOT_ADDITIVE.search(words))


# -- designations: how rows of a table without a name column are called --------------------------
_FIELD = re.compile(r"\{([^{}]*)\}")


def _event_column(cols: dict[str, ColumnInfo], frame: pl.DataFrame | None) -> str | None:
    """The dated event of a table: the first complete date column with a verb, else the first (birth dates excluded)."""
    dates = [c for c, ci in cols.items() if ci.kind == "date" and "birth" not in c and not ci.compose_only
             and (frame is None or frame[c].null_count() == 0)]
    with_verb = [c for c in dates if cols[c].event]
    return (with_verb or dates or [None])[0]


def _derived_designation(spec: M.WorldSpec, table: str, noun: str, cols: dict[str, ColumnInfo], frame: pl.DataFrame | None) -> str:
    """The designation of a nameless table: ``{ref} <noun> of {date}`` when parent and date tell (nearly all) rows apart, else an ordinal."""
    t = spec.tables[table]
    shapes = {r: t.reference_shape(table, r) for r in t.references}
    # the parent that names the row: a reference every row has, to another table, in no role (never one player of a game)
    ref = next((r for r, s in shapes.items() if s in ("reference", "junction")), None)
    dc = _event_column(cols, frame)
    head = noun[:1].upper() + noun[1:]
    # two parents in a pair of roles name the row together: "Rovers–United match of 18 October 2032", "Jędrasiak–Waloch game"
    by_parent: dict[str, list[str]] = {}
    for r, c in t.references.items():
        by_parent.setdefault(c.parent, []).append(r)
    pair = next((rs for rs in by_parent.values() if [shapes[r] for r in rs] == ["role", "role"]), None)
    if pair:
        tpl = f"{{{pair[0]}}}–{{{pair[1]}}} {noun}"
        if dc is not None and (frame is None or frame.select([*pair, dc]).n_unique() >= 0.9 * frame.height):
            return f"{tpl} of {{{dc}}}"
        if frame is None or frame.select(pair).n_unique() >= 0.9 * frame.height:
            return tpl
    if dc is not None:
        keys = [ref, dc] if ref else [dc]
        if frame is None or frame.select(keys).n_unique() >= 0.9 * frame.height:  # a rare repeat is told apart (row_labels)
            return f"{{{ref}}} {noun} of {{{dc}}}" if ref else f"{head} of {{{dc}}}"
    return f"{head} {{n}} of {{{ref}}}" if ref else f"{head} {{n}}"


def ordinal(n: int) -> str:
    """``1`` -> ``1st``, ``12`` -> ``12th``, ``23`` -> ``23rd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class RowLabel:
    """How pages and tasks call one row, and the cells that text states.

    Attributes:
        text: the label (``Nova X 2``, ``Brecho Explorer launch of 12 March 2031``).
        cells: ``(table, row key, column, stated text)`` of every cell the label states: the name column
            of a named row; the row's and its parents' cells a designation reads (a parent's label
            contributes its own cells). Empty for a designation made of an ordinal alone.
    """

    text: str
    cells: tuple[tuple[str, str, str, str], ...]
    bare: str | None = None
    """The designation without the row's own date it states, in running text's case (``Brecho Explorer launch``,
    ``storm``), for a sentence that then states the date: "the Brecho Explorer launch took place on ..."; ``None``
    when the label states no date of its row."""
    dated: str | None = None
    """The row's date column the designation states (what :attr:`bare` leaves out), or ``None``."""


_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def _designation_text(value: Any) -> str:
    if isinstance(value, date):
        return format_date(value, "dmy_long")
    from worldforge.corpus.quantity import render_value

    return render_value(value)


def row_labels(spec: M.WorldSpec, tables: dict[str, pl.DataFrame], infos: dict[str, TableInfo] | None = None) -> dict[str, dict[Any, RowLabel]]:
    """Every row's label, per table and primary key: its name column rendered, or its designation.

    Designations are unique per table. Rows a designation would not tell apart (an album's two chart runs that
    debut the same day) are told apart as a writer would: by what differs between them, in brackets (the other
    parent's label or a category: "Honey Pyshihoth chart run of 28 January 2027 (Billboard 200)"), else by their
    order ("... (second that day)" for a dated designation, "(second)" otherwise); never by a bare "(2)".
    ``{n}`` counts rows within their first parent (all rows when the table has no reference) in
    event-date order, then key order; ``{nth}`` writes it as ``3rd``.
    """
    from worldforge.corpus.quantity import render_value

    infos = infos or {t: table_info(spec, t, tables[t]) for t in spec.tables if t in tables}
    out: dict[str, dict[Any, RowLabel]] = {}
    for t in _parents_first(spec):
        if t not in tables:
            continue
        table, info = spec.tables[t], infos[t]
        pk, lc = table.primary_key, info.label_column
        rows = tables[t].to_dicts()
        if info.designation is None:
            out[t] = {}
            names = Counter(render_value(r[lc]) for r in rows)
            # a name that repeats between parents ("Race 3" of every boat, "v1.1" of every model) is said with its parent,
            # as a writer tells them apart: "Race 3 of Plover"
            ref = next((rf for rf, c in table.references.items() if c.parent in out and c.parent != t), None)
            for r in rows:
                name = render_value(r[lc])
                # a name of digits alone ("0045") reads as a number in a sentence: "Farm 0045", as a writer says it
                text = f"{info.noun[:1].upper() + info.noun[1:]} {name}" if re.fullmatch(r"[\d\W_]+", name) else name
                cells: tuple = ((t, str(r[pk]), lc, name),)
                parent = out[table.columns[ref].parent].get(r[ref]) if ref and names[name] > 1 and r.get(ref) is not None else None
                if parent is not None:
                    text, cells = f"{text} of {parent.text}", cells + parent.cells
                out[t][r[pk]] = RowLabel(text, cells)
            continue
        ref = next(iter(table.references), None)
        if ref is not None and f"{{{ref}}}" not in info.designation and f"{{{ref}." not in info.designation:
            ref = None  # numbered within a parent only when the designation names it ("Station 12", not "Station 1 (third)")
        dc = _event_column(info.columns, tables[t])
        order = sorted(rows, key=lambda r: ((r[dc] is None, r[dc]) if dc else (False, 0), r[pk]))
        counters: dict[Any, int] = {}
        nums: dict[Any, int] = {}
        for r in order:
            g = r[ref] if ref else None
            counters[g] = counters.get(g, 0) + 1
            nums[r[pk]] = counters[g]
        by_key = {rf: {pr[spec.tables[c.parent].primary_key]: pr for pr in tables[c.parent].to_dicts()}
                  for rf, c in table.references.items() if c.parent in tables and f"{{{rf}." in info.designation}
        # the row's own date the designation states, and the designation without it ("{rocket_id} launch")
        fields = _FIELD.findall(info.designation)
        dated = next((f for f in fields if f in info.columns and info.columns[f].kind == "date"), None)
        bare_tpl = re.sub(r"\s*\b(?:of|on|dated|from)?\s*\{" + re.escape(dated) + r"\}", "", info.designation).strip() if dated else None
        literal = not info.designation.startswith("{")
        drafts: dict[Any, tuple[str, list, str | None]] = {}
        for r in sorted(rows, key=lambda r: r[pk]):
            cells: list[tuple[str, str, str, str]] = []

            def fill(m: re.Match, r=r, cells=cells) -> str:
                f = m.group(1)
                if f in ("n", "nth"):
                    return str(nums[r[pk]]) if f == "n" else ordinal(nums[r[pk]])
                if "." in f:
                    rf, pcol = f.split(".", 1)
                    parent = table.columns[rf].parent
                    if r[rf] is None:  # no parent: nothing to say of it
                        return ""
                    prow = by_key[rf][r[rf]]
                    text = _designation_text(prow[pcol])
                    cells.append((parent, str(r[rf]), pcol, text))
                    return text
                if isinstance(table.columns[f], M.ReferenceColumn):
                    if r[f] is None:
                        return ""
                    plabel = out[table.columns[f].parent][r[f]]
                    cells.extend(plabel.cells)
                    return plabel.text
                text = _designation_text(r[f])
                cells.append((t, str(r[pk]), f, text))
                return text

            text = _FIELD.sub(fill, info.designation)
            first = fields[0] if fields and info.designation.startswith("{" + fields[0] + "}") else None
            if literal:  # a literal start is capitalised; a name keeps its own case ("vivo Edge 11")
                text = text[:1].upper() + text[1:]
            elif first in table.columns and isinstance(table.columns[first], M.ChoiceColumn) and text[:1].islower() and cells:
                # a category's word starts it ("yellow 7b on FJH-W02"): a designation is capitalised as a name is
                text = text[:1].upper() + text[1:]
                ct, ck, cc, ctext = cells[0]
                cells[0] = (ct, ck, cc, ctext[:1].upper() + ctext[1:])
            bare = _FIELD.sub(lambda m, r=r: fill(m, r, []), bare_tpl) if bare_tpl and r.get(dated) is not None else None
            if bare and literal:
                bare = bare[:1].lower() + bare[1:]  # "storm", as running text writes it after "the"
            drafts[r[pk]] = (text, cells, bare)
        labels: dict[Any, RowLabel] = {}
        for group in _same_text(drafts):
            tells = _telling_apart(spec, t, info, group, {k: r for r in rows for k in (r[pk],) if k in group}, fields, out) if len(group) > 1 else {}
            for i, k in enumerate(group):
                text, cells, bare = drafts[k]
                if len(group) > 1:
                    tag, tag_cells = tells.get(k) or (f"{_ORDINAL_WORDS[i] if i < len(_ORDINAL_WORDS) else ordinal(i + 1)}"
                                                      f"{' that day' if dated else ''}", [])
                    text, bare, cells = f"{text} ({tag})", (f"{bare} ({tag})" if bare else None), cells + tag_cells
                labels[k] = RowLabel(text, tuple(dict.fromkeys(cells)), bare, dated if bare else None)
        seen: dict[str, int] = {}
        for k in sorted(labels):  # a told-apart text that meets another row's: numbered, the last resort
            lab = labels[k]
            seen[lab.text] = seen.get(lab.text, 0) + 1
            if seen[lab.text] > 1:
                labels[k] = RowLabel(f"{lab.text} ({seen[lab.text]})", lab.cells, lab.bare, lab.dated)
        out[t] = labels
    return out


def _same_text(drafts: dict[Any, tuple[str, list, str | None]]) -> list[list[Any]]:
    """Row keys grouped by their drafted designation, in key order (a group of one for a unique text)."""
    groups: dict[str, list[Any]] = {}
    for k in sorted(drafts):
        groups.setdefault(drafts[k][0], []).append(k)
    return list(groups.values())


def _telling_apart(spec: M.WorldSpec, t: str, info: TableInfo, group: list[Any], rows: dict[Any, dict], used: list[str],
                   out: dict[str, dict[Any, RowLabel]]) -> dict[Any, tuple[str, list]]:
    """What tells rows of one designation apart, per key: ``(bracketed text, cells it states)`` of the first column
    the designation does not already state (another parent's label, or a category whose values are names:
    "Billboard 200", not "good") whose values differ on every row of the group; ``{}`` when none does."""
    table = spec.tables[t]
    pk = table.primary_key
    for c, ci in info.columns.items():
        if c in used or ci.compose_only or ci.kind not in ("reference", "category"):
            continue
        vals: dict[Any, tuple[str, list]] = {}
        for k in group:
            v = rows[k].get(c)
            if v is None:
                break
            if ci.kind == "reference":
                parent = table.columns[c].parent
                plabel = out.get(parent, {}).get(v)
                if plabel is None:
                    break
                vals[k] = (plabel.text, list(plabel.cells))
            else:
                text = _designation_text(v)
                if not text[:1].isupper():
                    break  # "(Billboard 200)", "(Electron)" tell rows apart; "(good)", "(success)" read as a verdict
                vals[k] = (text, [(t, str(rows[k][pk]), c, text)])
        if len(vals) == len(group) and len({v[0] for v in vals.values()}) == len(group):
            return vals
    return {}


def _parents_first(spec: M.WorldSpec) -> list[str]:
    """Tables in an order where every referenced table comes before the tables referring to it."""
    done: list[str] = []
    pending = list(spec.tables)
    while pending:
        for t in pending:
            if all(c.parent in done or c.parent == t or c.parent not in spec.tables for c in spec.tables[t].references.values()):
                done.append(t)
                pending.remove(t)
                break
        else:
            done += pending
            break
    return done


_PERSON_PROVIDERS = {"name", "first_name", "last_name", "name_male", "name_female", "first_name_male", "first_name_female",
                     "last_name_male", "last_name_female", "prefix", "suffix", "prefix_male", "prefix_female", "suffix_male",
                     "suffix_female", "name_nonbinary", "first_name_nonbinary", "last_name_nonbinary"}

_HONORIFICS = {"dr", "mr", "mrs", "ms", "mx", "prof", "sir", "dame", "jr", "sr", "lord", "lady", "rev",
               "van", "von", "de", "del", "della", "da", "di", "du", "le", "la", "der", "den", "ter", "bin", "al", "mac"}
"""Words a person's name template may hold besides its placeholders (titles, particles: "Dr. {{last_name}}",
"{{first_name}} van {{last_name}}")."""


def faker_person(col: Any) -> bool:
    """A naming column made of Faker person names: the ``name`` provider, or a template whose every placeholder is
    a person-name provider (``{{first_name}} {{last_name}}``); ``{{color_name}} {{last_name}}`` names a thing."""
    if not isinstance(col, M.FakerColumn):
        return False
    if col.template:
        fields = re.findall(r"\{\{\s*(\w+)\s*\}\}", col.template)
        words = re.findall(r"[A-Za-z]+", re.sub(r"\{\{\s*\w+\s*\}\}", " ", col.template))
        if any(w.lower() not in _HONORIFICS for w in words):
            return False  # "{{last_name}} Point Light" names a lighthouse, "Dr. {{last_name}}" a person
        return bool(fields) and all(f in _PERSON_PROVIDERS for f in fields) and any("name" in f for f in fields)
    return (col.provider or "") in _PERSON_PROVIDERS and "name" in (col.provider or "")
