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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from worldforge.corpus.lexicon import _INTRANSITIVE
from worldforge.corpus.quantity import Unit, parse_unit
from worldforge.spec import models as M

__all__ = ["ColumnInfo", "TableInfo", "column_info", "derive_label", "label_column", "singular", "table_info"]

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
    """``supply_flights`` -> ``supply flight``, ``categories`` -> ``category``, ``statuses`` -> ``status``."""
    word = table.replace("_", " ")
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "uses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def label_column(table: M.TableSpec) -> str:
    """The column that names a row: ``name``, else a ``*_name``/``handle``/``title``/``code``
    column, else the first format column, else the primary key."""
    cols = table.columns
    if "name" in cols:
        return "name"
    for c in cols:
        if c.endswith("_name") or c in ("handle", "title", "code"):
            return c
    for c, col in cols.items():
        if col.kind == "format":
            return c
    return table.primary_key


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
    """

    name: str
    label: str
    unit: Unit | None
    kind: str
    event: str | None = None

    def header(self) -> str:
        """The column as a table header or a task column: the label, capitalised, with the unit in brackets."""
        head = self.label[:1].upper() + self.label[1:]
        return f"{head} ({self.unit.header()})" if self.unit is not None and self.unit.header() else head


@dataclass(frozen=True)
class TableInfo:
    """A table as pages present it: the noun for one row, its plural, the naming column and its columns."""

    name: str
    noun: str
    plural: str
    label_column: str
    columns: dict[str, ColumnInfo]


def _plural(noun: str) -> str:
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
    elif isinstance(col, M.ChoiceColumn) or (frame is not None and frame[name].n_unique() <= max(12, frame.height // 5)):
        kind = "category"
    else:
        kind = "text"
    event = None
    if kind == "date" and not col.label and re.fullmatch(r"[a-z]+ed", label):
        label = f"date {label}"  # "announced" -> "date announced", as infoboxes write it
    if kind == "date":
        event = _EVENTS.get(name)
        if event is None:
            stem = re.sub(r"_(on|at|date)$", "", name)
            event = _EVENTS.get(stem) or (f"was {stem.replace('_', ' ')}" if stem.endswith("ed") and "_" not in stem else None)
    if event is not None and event.startswith("was ") and event.split()[-1] in _INTRANSITIVE:
        event = event[4:]  # "was departed" -> "departed": an intransitive verb has no passive
    return ColumnInfo(name, label, unit, kind, event)


@lru_cache(maxsize=4096)
def _noun(table_name: str) -> str:
    return singular(table_name)


def table_info(spec: M.WorldSpec, table: str, frame: pl.DataFrame | None = None) -> TableInfo:
    """How pages present a table: its row noun (the spec's ``label`` or the singular of its name) and its columns."""
    t = spec.tables[table]
    noun = t.label or _noun(table)
    return TableInfo(table, noun, _plural(noun), label_column(t), {c: column_info(t, c, frame) for c in t.columns})
