"""Derived claims: what a page says about a row that is computed from cells rather than copied from one.

A stated value copies one cell ("its population is 4,210"). A *derived claim* relates a row to
others: its rank in a group, a comparison with a named peer or with the group's average or median,
its share of a group total, a count or total of related rows, a change since the base world, a
gap between two dates. Real pages are made of such sentences, and they are where readers (and
models) go wrong, so each one is registered with every cell it is computed from and checked by
recomputing it (the claim-verification view of text, as in FEVER, applied to the world's own
tables):

========  ===========================================================  =================================
kind      what the phrase asserts (example)                            recomputed from
========  ===========================================================  =================================
rank      position in a group by a column ("the second-highest         the column and the group key of
          population of the 4 habitats of Tharsis")                   every row in the group
peer      direction against a named row ("a higher population than     both rows' cells
          Gale Ring", "more than twice that of Gale Ring")
average   above/below the group's mean (additive columns) or median    the column of every row in the
          (others), with its value ("above the average of 3,120 for    group
          the 4 habitats of Tharsis")
share     percent of the group's total (additive columns only:         the column of every row in the
          "31.2% of the combined population of the 4 habitats")        group
count     rows related to a row ("4 habitats")                         the foreign key of every child row
total     the sum of an additive column over related rows ("a          the children's column and keys
          combined population of 12,480")
change    direction and previous value since the base world ("up      the cell in the scenario and in
          from 3,870 in 2029", "up two places from 5th in 2029")       the base world
gap       days, months or years between two dates ("45 days after      both date cells
          it was announced")
========  ===========================================================  =================================

Totals, shares and averages are only claimed of additive columns (:attr:`~worldforge.corpus.vocab.ColumnInfo.additive`);
other numeric columns are compared with the group's median. A claim is stored as a ``corpus_facts`` row of its own
kind (:func:`~worldforge.corpus.store.write_corpus`): ``value_text`` is the phrase, verbatim in the article,
``basis`` the JSON of its parameters and cells. :func:`read` reads the assertion back from the phrase alone
(ordinals, superlatives, comparatives, above/below, up/down, before/after, twice/half, counts and amounts) and
:meth:`ClaimWorld.verify` recomputes it from the tables: a reversed direction or a wrong rank is a contradiction
exactly as a wrong number is.
"""

from __future__ import annotations

import re
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from worldforge.corpus.quantity import Unit, parse_value

__all__ = ["CLAIM_KINDS", "CUE_WORDS", "Claim", "ClaimWorld", "Reading", "cue_counts", "cue_words", "date_span", "group_stat", "read", "span_text"]

CLAIM_KINDS = ("rank", "peer", "average", "share", "count", "total", "change", "gap")
"""The kinds of derived claim (the ``kind`` of their ``corpus_facts`` rows; stated values are ``value``)."""

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
             "tenth": 10, "eleventh": 11, "twelfth": 12}
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
            "eleven": 11, "twelve": 12}
_HIGH = ("highest", "largest", "biggest", "greatest", "most", "latest", "longest", "deepest", "heaviest")
_LOW = ("lowest", "smallest", "fewest", "least", "earliest", "shortest", "shallowest", "lightest")
_MORE = ("higher", "larger", "bigger", "greater", "more", "later", "longer", "deeper", "heavier")
_LESS = ("lower", "smaller", "fewer", "less", "earlier", "shorter", "shallower", "lighter")

CUE_WORDS = frozenset(_HIGH + _LOW + _MORE + _LESS + ("above", "below", "up", "down", "before", "after", "twice", "half", "unchanged",
                                                      "rose", "fell", "ahead", "behind", "top", "bottom", "increase", "decrease"))
"""Words that carry a derived claim's direction: a rewrite that adds or swaps one changes what a page claims."""

_ORD_RE = re.compile(r"\b(?:(" + "|".join(_ORDINALS) + r")|(\d+)(?:st|nd|rd|th))-(" + "|".join(_HIGH + _LOW) + r")\b")
_EXT_RE = re.compile(r"\b(" + "|".join(_HIGH + _LOW) + r")\b")
_CMP_RE = re.compile(r"\b(more than twice|less than half|" + "|".join(_MORE + _LESS) + r")\b")
_POS_RE = re.compile(r"\b(above|below) the (average|median) of (.+?) (?:for|across|among) ")
_DIR_RE = re.compile(r"\b(up|down) (?:(" + "|".join(_NUMBERS) + r"|\d+) places? )?from (.+?) in (\d{4})\b|\bunchanged (?:from|since) (.+?) in (\d{4})\b")
_SPAN_RE = re.compile(r"\b(" + "|".join(_NUMBERS) + r"|\d[\d,]*) (days?|months?|years?) (before|after)\b")
_COUNT_RE = re.compile(r"\b(?:of|among|across|for) (?:the|its|all|all the|their) (" + "|".join(_NUMBERS) + r"|\d[\d,]*) ")
_LEAD_COUNT_RE = re.compile(r"^(?:its |their |one of )?(" + "|".join(_NUMBERS) + r"|\d[\d,]*) ")
_SHARE_RE = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_TOTAL_RE = re.compile(r"\bcombined .+? of (.+?)$|\badding up to (.+?)$|\bcome to (.+?) in all$")
_CUE_RE = re.compile(r"\b(" + "|".join(sorted(CUE_WORDS, key=len, reverse=True)) + r")\b", re.I)


def _int(word: str) -> int:
    return _NUMBERS.get(word.lower()) or int(word.replace(",", ""))


@dataclass(frozen=True)
class Claim:
    """One derived claim a page makes about a row.

    Attributes:
        kind: one of :data:`CLAIM_KINDS`.
        table_name, row_key, column_name: the claim's subject cell (the row it is about, the column it measures;
            the row's key column for a count).
        text: the phrase as the page writes it, verbatim in the article (what :func:`read` reads back).
        basis: JSON-able parameters (``of``: the table measured, ``by``: its column, ``label``: its label, ``group``: the foreign key
            that forms the group or ``None`` for the whole table, ``peer``, ``child``/``fk``, ``stat``, ``year``,
            ``from``/``to``, ``round``: the decimals a written statistic was rounded to) and ``cells``: every cell it is computed from, as blocks ``[table, [row keys], [columns],
            scope]`` (each key with each column: a group's values and foreign keys in one block).
        section: ``lead`` or ``body``.
        scope: ``None`` (the page's own corpus) or ``world`` (a scenario page's claim about the base world).
    """

    kind: str
    table_name: str
    row_key: str
    column_name: str
    text: str
    basis: dict = field(hash=False, compare=False)
    section: str = "body"
    scope: str | None = None


@dataclass(frozen=True)
class Reading:
    """What a claim phrase asserts, read from its words alone (:func:`read`); ``None`` where it says nothing.

    Attributes:
        extreme: ``high`` (highest, largest, most ...) or ``low``.
        position: the rank an ordinal gives ("third-highest": 3; a bare superlative: 1).
        comparative: ``more`` (higher, larger, more ...) or ``less``.
        multiple: ``twice`` ("more than twice") or ``half`` ("less than half").
        relative: ``above`` or ``below`` the group's statistic; ``stat``: ``average`` or ``median``; ``amount``: its text.
        direction: ``up``, ``down`` or ``unchanged`` since a previous value (``amount``: its text, ``year``, ``places``).
        span: ``(n, unit, before|after)`` between two dates.
        count: the number of rows it says a group or a row has.
        percent: a share in percent.
    """

    extreme: str | None = None
    position: int | None = None
    comparative: str | None = None
    multiple: str | None = None
    relative: str | None = None
    stat: str | None = None
    amount: str | None = None
    direction: str | None = None
    year: int | None = None
    places: int | None = None
    span: tuple[int, str, str] | None = None
    count: int | None = None
    percent: float | None = None


def read(text: str, label: str | None = None) -> Reading:
    """The assertion of a claim phrase, from its direction words, ordinals, counts and amounts (no table is read).

    ``label``: the measured column's label, whose own words are not read as direction words ("total lower berths").

    Examples: ``"the second-highest population of the 4 habitats of Tharsis"`` -> ``extreme="high", position=2,
    count=4``; ``"up from 3,870 in 2029"`` -> ``direction="up", amount="3,870", year=2029``.
    """
    if label:
        text = re.sub(rf"\b{re.escape(label)}\b", "LABEL", text)
    got: dict[str, Any] = {}
    if m := _ORD_RE.search(text):
        got["position"] = _ORDINALS[m.group(1)] if m.group(1) else int(m.group(2))
        got["extreme"] = "high" if m.group(3) in _HIGH else "low"
    elif m := _EXT_RE.search(text):
        got["position"], got["extreme"] = 1, ("high" if m.group(1) in _HIGH else "low")
    if ("above" in text or "below" in text) and (m := _POS_RE.search(text)):
        got["relative"], got["stat"], got["amount"] = m.group(1), m.group(2), m.group(3)
    if (" from " in text or "unchanged" in text) and (m := _DIR_RE.search(text)):
        if m.group(1):
            got["direction"], got["amount"], got["year"] = m.group(1), m.group(3), int(m.group(4))
            if m.group(2):
                got["places"] = _int(m.group(2))
        else:
            got["direction"], got["amount"], got["year"] = "unchanged", m.group(5), int(m.group(6))
    if "direction" not in got and "relative" not in got and (m := _CMP_RE.search(text)):
        word = m.group(1)
        if word == "more than twice":
            got["comparative"], got["multiple"] = "more", "twice"
        elif word == "less than half":
            got["comparative"], got["multiple"] = "less", "half"
        else:
            got["comparative"] = "more" if word in _MORE else "less"
    if ("before" in text or "after" in text) and (m := _SPAN_RE.search(text)):
        got["span"] = (_int(m.group(1)), m.group(2).rstrip("s"), m.group(3))
    if m := _COUNT_RE.search(text):
        got["count"] = _int(m.group(1))
    elif m := _LEAD_COUNT_RE.search(text):
        got["count"] = _int(m.group(1))
    if "%" in text and (m := _SHARE_RE.search(text)):
        got["percent"] = float(m.group(1))
    if "amount" not in got and (m := _TOTAL_RE.search(text)):
        got["amount"] = next(g for g in m.groups() if g)
    return Reading(**got)


def cue_words(text: str) -> list[str]:
    """The :data:`CUE_WORDS` of ``text`` in order, lower-cased: what a rewrite may not add, swap or reorder."""
    return [m.group(1).lower() for m in _CUE_RE.finditer(text)]


def cue_counts(text: str) -> dict[str, int]:
    """``{cue word: occurrences}`` of :data:`CUE_WORDS` in ``text`` (lower-cased)."""
    out: dict[str, int] = {}
    for w in cue_words(text):
        out[w] = out.get(w, 0) + 1
    return out


def _months(d1: date, d2: date) -> int:
    """Whole calendar months from ``d1`` to a later ``d2``."""
    return (d2.year - d1.year) * 12 + d2.month - d1.month - (d2.day < d1.day)


def date_span(start: date, end: date) -> tuple[int, str, str]:
    """How a page says the gap from ``start`` to ``end``: ``(n, unit, relation)`` with ``relation`` ``after`` when
    ``end`` is later. Under 120 days in days, under two years in whole months, else in whole years (anniversaries:
    from 5 March 2020 to 4 March 2023 is 2 years)."""
    if isinstance(start, datetime):
        start = start.date()
    if isinstance(end, datetime):
        end = end.date()
    rel = "after" if end >= start else "before"
    a, b = (start, end) if end >= start else (end, start)
    days = (b - a).days
    if days < 120:
        return days, "day", rel
    months = _months(a, b)
    if months < 24:
        return months, "month", rel
    return months // 12, "year", rel


def span_text(n: int, unit: str) -> str:
    """``45 days``, ``1 month``, ``three years`` (counts under 13 in words, as editors write them)."""
    words = {v: k for k, v in _NUMBERS.items()}
    return f"{words.get(n, f'{n:,}')} {unit}{'' if n == 1 else 's'}"


def group_stat(values: list[float], stat: str) -> float:
    """The ``mean`` or ``median`` of ``values``."""
    return statistics.fmean(values) if stat == "mean" else statistics.median(values)


class ClaimWorld:
    """The tables a corpus's claims are recomputed from.

    Args:
        tables: ``{table: rows}`` of the page's own corpus (the world's or a scenario's), rows as dicts.
        keys: ``{table: primary key column}``.
        units: ``{(table, column): Unit or None}`` (how stated amounts are read back).
        base: for a scenario, the base world's ``{table: rows}`` (``change`` claims and ``scope = 'world'``).
    """

    def __init__(self, tables: Mapping[str, list[dict]], keys: Mapping[str, str], units: Mapping[tuple[str, str], Unit | None],
                 base: Mapping[str, list[dict]] | None = None):
        self.keys, self.units = keys, units
        self._by_key = {t: {str(r[keys[t]]): r for r in rows} for t, rows in tables.items()}
        self._base = {t: {str(r[keys[t]]): r for r in rows} for t, rows in (base or {}).items()}
        self._rows = tables
        self._groups: dict[tuple[str, str | None], dict[Any, list[dict]]] = {}
        self._sorted: dict[tuple, list] = {}
        self._tallies: dict[tuple, dict[tuple, int]] = {}
        self._kids: dict[tuple, dict[Any, list[dict]]] = {}

    def _members(self, t: str, group: str | None, row: dict) -> list[dict]:
        groups = self._groups.get((t, group))
        if groups is None:
            groups = self._groups[(t, group)] = {}
            for r in self._rows[t]:
                groups.setdefault(r[group] if group else None, []).append(r)
        return groups.get(row[group] if group else None, [])

    def _tally(self, scope: str | None, t: str, cols: tuple[str, ...]) -> dict[tuple, int]:
        """How many rows of ``t`` have each combination of values of ``cols`` (once per table and columns)."""
        key = (scope, t, cols)
        got = self._tallies.get(key)
        if got is None:
            got = self._tallies[key] = {}
            for r in (self._base if scope == "world" else self._by_key)[t].values():
                v = tuple(r[c] for c in cols)
                got[v] = got.get(v, 0) + 1
        return got

    def _children(self, scope: str | None, child: str, fk: str) -> dict[Any, list[dict]]:
        """The rows of ``child`` by their ``fk`` (once per table and key)."""
        key = (scope, child, fk)
        got = self._kids.get(key)
        if got is None:
            got = self._kids[key] = {}
            for r in (self._base if scope == "world" else self._by_key)[child].values():
                got.setdefault(r[fk], []).append(r)
        return got

    def _values(self, t: str, group: str | None, row: dict, c: str) -> list:
        """The group's non-null values of ``c``, sorted (computed once per group and column)."""
        key = (t, group, row[group] if group else None, c)
        got = self._sorted.get(key)
        if got is None:
            got = self._sorted[key] = sorted(m[c] for m in self._members(t, group, row) if m.get(c) is not None)
        return got

    def _amount(self, text: str | None, t: str, c: str) -> tuple[float, float] | None:
        if text is None:
            return None
        got = parse_value(text, self.units.get((t, c)), "number")
        return got if isinstance(got, tuple) else None

    def verify(self, claim: Claim) -> str | None:
        """Recompute ``claim`` from the tables and compare it with what its phrase asserts (:func:`read`).

        Returns:
            ``None`` when the phrase holds; otherwise the problem: ``no such row or column``, ``unreadable claim``
            (the phrase asserts nothing of its kind), ``wrong rank``, ``wrong direction``, ``wrong count``,
            ``wrong amount``, ``tied`` (a rank among equal values), ``wrong gap``, ``not additive``.
        """
        b = claim.basis
        r = read(claim.text, b.get("label"))
        rows = self._base if claim.scope == "world" else self._by_key
        t, c = b.get("of", claim.table_name), b.get("by", claim.column_name)
        try:
            if claim.kind == "gap":
                return self._gap(claim, r)
            if claim.kind == "count" and b.get("same"):  # rows of the subject's own table sharing its values of ``same``
                subject = rows[claim.table_name][claim.row_key]
                n = self._tally(claim.scope, claim.table_name, tuple(b["same"])).get(tuple(subject[c_] for c_ in b["same"]), 0)
                return None if r.count == n else ("unreadable claim" if r.count is None else "wrong count")
            if claim.kind in ("count", "total"):
                parent = rows[claim.table_name][claim.row_key]
                kids = self._children(claim.scope, b["child"], b["fk"]).get(parent[self.keys[claim.table_name]], [])
                if claim.kind == "count":
                    return None if r.count == len(kids) else ("unreadable claim" if r.count is None else "wrong count")
                vals = [k[c] for k in kids if k.get(c) is not None]
                got = self._amount(r.amount, t, c)
                if got is None:
                    return "unreadable claim"
                if r.count is not None and r.count != len(vals):
                    return "wrong count"
                return None if abs(got[0] - sum(vals)) <= got[1] + 1e-9 * max(1.0, abs(sum(vals))) else "wrong amount"
            row = rows[t][claim.row_key]
            value = row[c]
            if value is None:
                return "no such row or column"
            if claim.kind == "peer":
                other = rows[t][str(b["peer"])][c]
                if r.comparative is None or other is None:
                    return "unreadable claim"
                if r.multiple == "twice":
                    ok = value > 2 * other
                elif r.multiple == "half":
                    ok = value < other / 2
                else:
                    ok = value > other if r.comparative == "more" else value < other
                return None if ok else "wrong direction"
            if claim.kind == "change":
                before = self._base[t][claim.row_key][c]
                if r.direction is None or before is None:
                    return "unreadable claim"
                if r.year != b.get("year"):
                    return "wrong year"
                rank = b.get("rank", False)
                moved = (before - value) if rank else (value - before)  # a rank goes up as its number goes down
                want = "up" if moved > 0 else "down" if moved < 0 else "unchanged"
                if r.direction != want:
                    return "wrong direction"
                if r.places is not None and r.places != abs(before - value):
                    return "wrong amount"
                got = self._amount(r.amount, t, c)
                if got is None:
                    return "unreadable claim"
                return None if abs(got[0] - before) <= got[1] + 1e-9 * max(1.0, abs(before)) else "wrong amount"
            vals = self._values(t, b.get("group"), row, c)
            if claim.kind == "rank":
                if r.extreme is None:
                    return "unreadable claim"
                if r.count is not None and r.count != len(vals):
                    return "wrong count"
                below, above = bisect_left(vals, value), bisect_right(vals, value)
                if above - below > 1:
                    return "tied"
                pos = 1 + (len(vals) - above if r.extreme == "high" else below)
                return None if pos == r.position else "wrong rank"
            if r.count is not None and r.count != len(vals):
                return "wrong count"
            if claim.kind == "share":
                if not b.get("additive"):
                    return "not additive"
                total = sum(vals)
                if r.percent is None or not total:
                    return "unreadable claim"
                pct = 100 * value / total
                decimals = len(str(r.percent).split(".")[1]) if "." in str(r.percent) and not float(r.percent).is_integer() else 0
                return None if abs(pct - r.percent) <= 0.5 * 10 ** -decimals + 1e-9 else "wrong amount"
            if claim.kind == "average":
                stat = "mean" if r.stat == "average" else "median"
                if r.relative is None or r.stat is None:
                    return "unreadable claim"
                if stat == "mean" and not b.get("additive"):
                    return "not additive"
                s = group_stat(vals, stat)
                got = self._amount(r.amount, t, c)
                if got is None:
                    return "unreadable claim"
                slack = 0.5 * 10 ** -b["round"] if b.get("round") is not None else 0.0  # the statistic was rounded before it was written
                if abs(got[0] - s) > got[1] + slack + 1e-9 * max(1.0, abs(s)):
                    return "wrong amount"
                return None if (value > s if r.relative == "above" else value < s) else "wrong direction"
        except KeyError:
            return "no such row or column"
        return "unreadable claim"

    def _gap(self, claim: Claim, r: Reading) -> str | None:
        (t1, k1, c1), (t2, k2, c2) = claim.basis["from"], claim.basis["to"]
        rows = self._base if claim.scope == "world" else self._by_key
        start, end = rows[t1][str(k1)][c1], rows[t2][str(k2)][c2]
        if start is None or end is None:
            return "no such row or column"
        if r.span is None:
            return "unreadable claim"
        return None if date_span(start, end) == r.span else "wrong gap"

