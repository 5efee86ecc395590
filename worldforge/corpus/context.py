"""An entity in its context: the paragraphs that relate a row to its group, its peers, its related rows and its past.

Encyclopedia and news articles say where a row stands, not only what it holds: "the second-highest
population of the 4 habitats of Tharsis", "above the average of 3,120 for the 4 habitats", "31.2% of
their combined population", "a higher population than Gale Ring", "up from 3,870 in 2029", "45 days
after it was announced". :class:`ContextWriter` plans those sentences for one row from the world's
tables and returns them with the stated cells (:class:`~worldforge.corpus.page.Fact`) and the derived
claims (:class:`~worldforge.corpus.claims.Claim`) they make; every claim phrase is written verbatim into
the sentence, so the corpus check can find it and recompute it.

Content selection, per row: the group is the row's first labelled parent (the whole table for a table
without one, up to :data:`MAX_ROOT_GROUP` rows); numeric columns are eligible when at least three
rows of the group have a value and the row's is not tied (ranks) or differs (comparisons);
totals, shares and averages only of additive columns, medians of the others; calendar years and
rank columns are never ranked or averaged. Children get a count, a total of an additive column and
the highest and lowest of a numeric one; a scenario row gets the changes since the base world; a
row with two event dates (or an event date and its parent's) gets the gap between them.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from worldforge.corpus.claims import Claim, date_span, group_stat, span_text
from worldforge.corpus.lexicon import (
    ORDINAL_HEADS,
    PLACE_VPS,
    a_or_an,
    base_verb,
    fill,
    is_absence,
    is_plural_label,
    kind_of,
    plural_noun,
    possessive,
    singular_of_plural,
)
from worldforge.corpus.page import Fact, cell_text
from worldforge.corpus.planner import sentence_case
from worldforge.corpus.quantity import Style, format_value
from worldforge.spec import models as M

__all__ = ["MAX_ROOT_GROUP", "ContextWriter", "Passage"]

MAX_ROOT_GROUP = 80
"""A table without a parent is one group when it has at most this many rows (a rank among 500 rows says little)."""

_ORD_WORDS = ("", "", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


_FRONT = ("at", "with", "of", "compared", "for", "that", "this", "together", "between", "taken", "in", "its", "it", "on", "by", "across",
          "all", "the", "measured", "set", "they", "summed", "together", "no", "there")


def _of(ref: str, label: str) -> str:
    """A row's attribute as a noun phrase: ``its launch price``, ``Brodick's maximum draught``; of a description, the
    "of" genitive: ``the adult fare of the Uig–Oban sailing of 5 June 2034``, never "... 5 June 2034's adult fare"."""
    return f"the {label} of {ref}" if ref.startswith(("the ", "The ")) else f"{possessive(ref)} {label}"


def _owned(ref: str, label: str, vtext: str, be: str) -> str:
    """A row's value as the subject of a sentence: ``its launch price of $1,099``; a plural count as people write it,
    ``London Ravens' 12 wins``, never ``London Ravens' wins of 12``."""
    if ref.startswith(("the ", "The ")):
        return f"{_of(ref, label)} ({vtext})"
    if be == "are" and re.fullmatch(r"[\d.,]+", vtext) and vtext != "1":  # "its 1 reprints" would be wrong: "its reprints of 1"
        return f"{possessive(ref)} {vtext} {label}"
    return f"{possessive(ref)} {label} of {vtext}"

def _sentence(text: str) -> str:
    """A sentence from a clause: a template's first word capitalised, a row's name kept as written ("vivo Edge 11").
    No attribution or connective is added ("On the latest figures, ...", "Put another way, ..."): no source stands behind
    them, and they join sentences with no relation between them."""
    head = text.split(" ", 1)[0]
    return (sentence_case(text) if head in _FRONT else text) + "."  # a name is written as it is, even "melody40" or "rye"


@lru_cache(maxsize=1024)
def _is(label: str) -> str:
    """``is`` or ``are`` after a label as a subject ("its draws are", "its lifts open are", "its roster size is")."""
    from worldforge.corpus.lexicon import singular_of_plural

    first = label.split(" ", 1)[0]
    return "are" if is_plural_label(label) or (first != label and singular_of_plural(first) is not None) else "is"


_LENGTH_HEADS = {"length", "duration", "time", "run", "runtime", "span", "distance", "route", "tenure", "wait", "delay", "lifespan"}
_SIZE_HEADS = {"area", "size", "capacity", "output", "production", "budget", "footprint", "volume", "population", "collection", "diameter"}
_DEPTH_HEADS = {"depth", "draught", "draft"}
_WEIGHT_HEADS = {"weight", "mass"}


@lru_cache(maxsize=4096)
def _scale(label: str) -> tuple[str, str, str, str]:
    """``(highest, lowest, higher, lower)`` as a writer says them of ``label``: a count "most"/"fewest" ("the most tickets
    sold", never "the highest tickets sold"), a length "longest", an area "largest", a draught "deepest", a weight
    "heaviest"; anything else "highest"/"lowest"."""
    if _countlike(label):
        return "most", "fewest", "more", "fewer"
    words = label.lower().split()
    head = next((words[i - 1] for i, w in enumerate(words) if i and w in ("of", "per", "from", "in", "at", "by")), words[-1] if words else "")
    if head in _LENGTH_HEADS:
        return "longest", "shortest", "longer", "shorter"
    if head in _SIZE_HEADS:
        return "largest", "smallest", "larger", "smaller"
    if head in _DEPTH_HEADS:
        return "deepest", "shallowest", "deeper", "shallower"
    if head in _WEIGHT_HEADS:
        return "heaviest", "lightest", "heavier", "lighter"
    return "highest", "lowest", "higher", "lower"


_BY_VP = re.compile(r"(?:is|was) [a-z]+ by \{value\}")


def _modifier(value: str, noun: str) -> bool:
    """Whether a category value reads as a modifier before the row's plural ("blue pistes", "borage harvests", "Hollow
    Fire deployments"): one or two words, no figure, and not the row's own noun ("firefighter firefighters")."""
    words = value.split()
    return 1 <= len(words) <= 2 and not any(ch.isdigit() for ch in value) and words[-1].lower() != noun.lower().split()[-1] \
        and all(w.replace("-", "").replace("'", "").isalpha() for w in words)


def _kind_named(value: str, noun: str) -> bool:
    """A category value that names a kind of the row by the row's own head noun ("feature update" of an update)."""
    words = value.split()
    return 2 <= len(words) <= 3 and words[-1].lower() == noun.lower().split()[-1] and not any(ch.isdigit() for ch in value)


@lru_cache(maxsize=4096)
def _countlike(label: str) -> bool:
    """A label that counts things (``passengers``, ``tickets sold``, ``languages spoken``, ``loans in 2032``): it reads as
    a noun after "the most"/"with 4", never after a possessive ("its tickets sold are ...")."""
    words = label.lower().split()
    if not words or words[0] in ("number", "count"):
        return bool(words)
    from worldforge.corpus.lexicon import is_participle, singular_of_plural

    # the head before a preposition or a time ("rescues this season", "hours a week": rescues, hours)
    head = next((words[:i] for i, w in enumerate(words) if i and w in ("in", "per", "of", "from", "at", "on", "this", "last", "next", "a", "each")),
                words)
    if len(head) > 1 and is_participle(head[-1]):
        head = head[:-1]
    return bool(head) and (head[-1].endswith("s") or head[-1] in ("people", "children", "men", "women")) \
        and singular_of_plural(head[-1]) is not None  # "people vaccinated": "the most people vaccinated"


@lru_cache(maxsize=4096)
def _ordx(pos: int, n: int, high: str = "highest", low: str = "lowest") -> str:
    """``highest``, ``second-highest``, ``lowest``, ``third-lowest``: a position counted from the nearer end."""
    if pos == 1:
        return high
    if pos == n:
        return low
    up, down = pos, n + 1 - pos
    k, word = (up, high) if up <= down else (down, low)
    from worldforge.corpus.vocab import ordinal

    return f"{_ORD_WORDS[k] if k < len(_ORD_WORDS) else ordinal(k)}-{word}"


@dataclass
class Passage:
    """A part of a context paragraph: its sentences, the cells they state and the claims they make."""

    sentences: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)

    def extend(self, other: "Passage") -> None:
        """Append another paragraph part's sentences, facts and claims."""
        self.sentences += other.sentences
        self.facts += other.facts
        self.claims += other.claims


class ContextWriter:
    """Derived-claim sentences about the rows of one corpus (a :class:`~worldforge.corpus.builder.CorpusBuilder`).

    Group statistics are computed once per (table, group column, column) and reused by every row.
    """

    def __init__(self, b):
        self.b = b
        self._members: dict[tuple[str, str | None], dict[Any, list[dict]]] = {}
        self._kids: dict[tuple[str, str], dict[Any, list[dict]]] = {}
        self._group_cols: dict[str, str | None | bool] = {}
        self._worded: dict[tuple[str, str], bool] = {}
        self._stats: dict[tuple, tuple[list, list[dict]]] = {}
        self._measures: dict[str, list[str]] = {}
        self._keys: dict[tuple, tuple[list[dict], list[str]]] = {}
        self._refs: dict[str, dict] = {}
        self._base_rows: dict[str, dict] | None = None  # a scenario's base world, by table and key (read once)
        self._stats2: dict[tuple, tuple[float, float, float, bool]] = {}

    # -- the world's structure ---------------------------------------------------------------------
    def group_column(self, t: str) -> str | None | bool:
        """The column that groups ``t``'s rows: its first reference to a labelled parent whose groups have a median of
        three rows or more; else ``None`` for the whole table (at most :data:`MAX_ROOT_GROUP` rows); else a category
        column with groups of three to :data:`MAX_ROOT_GROUP` rows (median); else ``False``: no group."""
        if t in self._group_cols:  # False (no group) is a cached answer too
            return self._group_cols[t]
        b = self.b
        got = None if 3 <= len(b.rows[t]) <= MAX_ROOT_GROUP else False
        roles = b.info[t].roles
        for ref, col in sorted(self.refs(t).items(), key=lambda rc: rc[0] in roles):  # a plain parent first, then a role
            if col.parent == t or any(r[ref] is None for r in b.rows[t]):
                continue  # rows without a parent (an optional reference, a hierarchy's roots) would make a group of their own
            if b.info[col.parent].label_column != b.spec.tables[col.parent].primary_key:
                sizes: dict[Any, int] = {}
                for r in b.rows[t]:
                    sizes[r[ref]] = sizes.get(r[ref], 0) + 1
                if sorted(sizes.values())[len(sizes) // 2] >= 3:  # groups of one or two rows: no rank says anything
                    got = ref
                    break
        if got is False:  # a large table without usable parents: its rows grouped by a category ("Series A rounds")
            for c in b.attributes(t, ("category",)):
                if not self.worded(t, c):
                    continue
                sizes = {}
                for r in b.rows[t]:
                    if isinstance(r.get(c), str):
                        sizes[r[c]] = sizes.get(r[c], 0) + 1
                if len(sizes) >= 2 and 3 <= sorted(sizes.values())[len(sizes) // 2] <= MAX_ROOT_GROUP:
                    got = c
                    break
        self._group_cols[t] = got
        return got

    def worded(self, t: str, c: str) -> bool:
        """Whether a category's values are words a sentence can say ("senior firefighter", "Pils"), not codes ("M",
        "F", "B2"): "the 55 runners whose sex is M" is no sentence."""
        got = self._worded.get((t, c))
        if got is None:
            values = {r[c] for r in self.b.rows[t] if isinstance(r.get(c), str)}
            got = self._worded[(t, c)] = bool(values) and all(len(v.strip()) > 2 or " " in v.strip() for v in values)
        return got

    def members(self, t: str, group: str | None, row: dict) -> list[dict]:
        """The rows of ``t`` in ``row``'s group (``row`` included), in table order."""
        got = self._members.get((t, group))
        if got is None:
            got = self._members[(t, group)] = {}
            for r in self.b.rows[t]:
                got.setdefault(r[group] if group else None, []).append(r)
        return got.get(row[group] if group else None, [])

    def kids(self, child: str, fk: str, key: Any) -> list[dict]:
        """The rows of ``child`` whose ``fk`` is ``key``."""
        got = self._kids.get((child, fk))
        if got is None:
            got = self._kids[(child, fk)] = {}
            for r in self.b.rows[child]:
                got.setdefault(r[fk], []).append(r)
        return got.get(key, [])

    def _sorted(self, t: str, group: str | None, row: dict, c: str) -> tuple[list, list[dict]]:
        """``(sorted values, member rows)`` of the group's rows that have a value of ``c`` (once per group and column)."""
        key = (t, group, row[group] if group else None, c)
        got = self._stats.get(key)
        if got is None:
            members = [m for m in self.members(t, group, row) if m.get(c) is not None]
            got = self._stats[key] = (sorted(m[c] for m in members), members)
        return got

    def refs(self, t: str) -> dict[str, M.ReferenceColumn]:
        """The reference columns of ``t`` (the spec's property, built once)."""
        got = self._refs.get(t)
        if got is None:
            got = self._refs[t] = self.b.refs[t]
        return got

    def _stat(self, t: str, group: str | None, row: dict, c: str) -> tuple[float, float, float, bool]:
        """``(sum, mean, median, no value below zero)`` of the group's values of ``c`` (once per group and column)."""
        vals, members = self._sorted(t, group, row, c)
        key = (t, group, row[group] if group else None, c)
        got = self._stats2.get(key)
        if got is None:
            total = sum(vals)
            got = self._stats2[key] = (total, total / len(vals) if vals else 0.0, group_stat(vals, "median") if vals else 0.0,
                                       not vals or vals[0] >= 0)
        return got

    def measures(self, t: str) -> list[str]:
        """Columns of ``t`` a claim may rank, compare or total: numbers and shares, never a rank column or a calendar year."""
        if t in self._measures:
            return self._measures[t]
        b = self.b
        out = self._measures[t] = []
        for c in b.attributes(t, ("number", "share")):
            ci = b.col(t, c)
            if ci.compose_only or (ci.unit is not None and ci.unit.kind == "year") or ci.label.split(" ")[-1] in ("here", "there", "now") \
                    or (ci.unit is None and ci.label.split(" ")[-1] in ORDINAL_HEADS) \
                    or (b.person[t] and ci.label.split(" ")[-1] == "age") \
                    or (not b.frame(t, c).prose and b.frame(t, c).noun is None):  # "with a round of 5, it is above the median"
                continue  # a calendar year is no amount; "bikes based here" is no noun phrase to rank by; a person is 31, never "has an
                # age of 31 years below the median"; "days after launch", a label that is no noun and no sure phrase, ranks nothing
            out.append(c)
        return out

    def _group_phrase(self, t: str, group: str | None, row: dict, n: int, rng=None) -> tuple[str, list[Fact]]:
        """``the 4 habitats of Tharsis``, or ``all 14 brands`` for a whole table (with ``rng``: ``the 14 brands on record``
        ...), and the parent's name facts."""
        b = self.b
        plural = b.info[t].plural if n != 1 else b.info[t].noun
        if group is None:
            return (rng.choice((f"all {n} {plural}", f"the {n} {plural} on record", f"the {n} {plural} listed")) if rng else f"all {n} {plural}"), []
        if not isinstance(b.spec.tables[t].columns[group], M.ReferenceColumn):  # a category: "the 40 rounds whose round type is Series A"
            ctext, cfact = b.say(t, row, group, Style(), "body")
            fr = b.frame(t, group)
            place = next((v for v in fr.vps if v in PLACE_VPS), None) if fr.prose else None
            if place is not None:  # "the 5 runners from Sweden", never "whose nationality is Sweden"
                return f"the {n} {plural} {fill(place, ctext)[3:]}", [cfact]
            by = next((v for v in fr.vps if _BY_VP.fullmatch(v)), None) if fr.prose else None
            if by is not None:  # "the 12 elevators made by TK Elevator"
                return f"the {n} {plural} {fill(by, ctext).split(' ', 1)[1]}", [cfact]
            if _modifier(ctext, b.info[t].noun):  # "the 17 Hollow Fire deployments", "the 53 spring blossom harvests"
                return f"the {n} {ctext} {plural}", [cfact]
            if _kind_named(ctext, b.info[t].noun):  # "feature update": "the 44 feature updates"
                head = ctext.split()
                return f"the {n} {' '.join(head[:-1] + [plural_noun(head[-1]) if n != 1 else head[-1]])}", [cfact]
            return f"the {n} {plural} whose {b.col(t, group).label} is {ctext}", [cfact]
        pt = b.spec.tables[t].columns[group].parent
        prow = b.by_key[pt][row[group]]
        # "of", plainly: "listed under", "belonging to" read as a database's words ("the 5 estates listed under Lirac"), and
        # "in" puts a row inside a person ("the 3 apiaries in Mercedes Lucero") or a pool's water
        return f"the {n} {plural} {self.of_parent(t, group, row)}", b.name_fact(pt, prow, "body")

    def of_parent(self, t: str, ref: str, row: dict, prep: str = "of") -> str:
        """The rows of ``t`` that share ``row``'s parent through ``ref``, as a phrase after their plural: ``of Rovers``
        (or another ``prep``), and for a parent in a role ``with Rovers as home team`` (never "of Rovers": its away
        matches are others)."""
        b = self.b
        plabel = b.labels[b.spec.tables[t].columns[ref].parent][row[ref]]
        role = b.info[t].roles.get(ref)
        return f"with {plabel} as {role}" if role else f"{prep} {plabel}"

    def _cells(self, t: str, rows: list[dict], cols: tuple[str, ...], scope: str | None = None) -> list[list]:
        """The basis's cells as one block ``[table, [row keys], [columns], scope]``: every (row, column) pair of it (the
        key list of a group is built once and shared by the claims on it)."""
        pk = self.b.spec.tables[t].primary_key
        ident = (t, id(rows), len(rows))
        keys = self._keys.get(ident)
        if keys is None or keys[0] is not rows:
            keys = self._keys[ident] = (rows, [str(r[pk]) for r in rows])
        return [[t, keys[1], [c for c in cols if c], scope]]

    def _key(self, t: str, row: dict) -> str:
        return str(row[self.b.spec.tables[t].primary_key])

    # -- sentences ---------------------------------------------------------------------------------
    def rank(self, rng, t: str, row: dict, c: str, style: Style, subject: str | None = None, group: str | None | bool = None) -> Passage | None:
        """"X has the second-highest <label> of the 4 <plural> of P, at <value>." (``None`` when the row is tied or
        the group has fewer than three values)."""
        b = self.b
        group = self.group_column(t) if group is None else group
        if group is False or row.get(c) is None:
            return None
        vals, members = self._sorted(t, group, row, c)
        n, v = len(vals), row[c]
        below, above = bisect_left(vals, v), bisect_right(vals, v)
        if n < 3 or above - below > 1:
            return None
        pos = 1 + n - above
        label = b.col(t, c).label
        phrase, pfacts = self._group_phrase(t, group, row, n, rng)
        vtext, vfact = b.say(t, row, c, style, "body")
        name = subject or b.mention(t, row[b.spec.tables[t].primary_key])
        high, low, _, _ = _scale(label)
        ordx = _ordx(pos, n, high, low)
        if label.split()[0] in (high, low):  # "the highest highest beer rating", "the second-lowest highest point"
            return None
        if label.startswith("number of ") and len(label) > 10:
            label = label[len("number of "):]  # "the most sessions", never "the most number of sessions"
        # the row has the rank, as a writer puts it: never "The third-longest piste length of the 14 pistes of X belongs to
        # Y", "X's total piste length is the third-longest of the 15 resorts" (a length among resorts) or "ranks eighth-highest of"
        shapes = [
            (f"{name} has the {ordx} {label} of {phrase}, at {vtext}", f"the {ordx} {label} of {phrase}"),
            (f"of {phrase}, {name} has the {ordx} {label} ({vtext})", f"the {ordx} {label} ("),
        ]
        text, claim_text = rng.choice(shapes)
        if claim_text.endswith("("):  # the count is in the fronted phrase: the claim is the whole clause
            claim_text = f"{phrase}, {name} has the {ordx} {label}"
        cells = self._cells(t, members, (c, group or ""))
        claim = Claim("rank", t, self._key(t, row), c, claim_text, {"of": t, "by": c, "group": group or None, "label": label, "cells": cells})
        return Passage([_sentence(text)], pfacts + [vfact] + b.name_fact(t, row, "body"), [claim])

    def versus_group(self, rng, t: str, row: dict, c: str, style: Style, ref: str) -> Passage | None:
        """"Its <label> of <value> is above the average of <mean> for the 4 <plural> of P" (the median for a column that
        cannot be added), and for an additive column its share of the group total."""
        b = self.b
        group = self.group_column(t)
        if group is False or row.get(c) is None:
            return None
        vals, members = self._sorted(t, group, row, c)
        n = len(members)
        if n < 3:
            return None
        ci = b.col(t, c)
        stat = "mean" if ci.additive else "median"
        total, mean, median, nonneg = self._stat(t, group, row, c)
        exact = mean if stat == "mean" else median
        decimals = 2 if ci.unit is not None and ci.unit.kind == "money" else 1 if abs(exact) >= 10 else 2  # "$29.99", never "$30"
        s = round(exact, decimals)
        if abs(row[c] - exact) <= 0.5 * 10 ** -decimals:  # too close to call at the precision written
            return None
        stext = format_value(int(s) if float(s).is_integer() else s, ci.unit, style)
        vtext, vfact = b.say(t, row, c, style, "body")
        if stext == vtext:  # written alike ("$2.65 million" both): "above the average of" what it reads as
            return None
        phrase, pfacts = self._group_phrase(t, group, row, n, rng)
        side = "above" if row[c] > exact else "below"
        word = "average" if stat == "mean" else "median"
        claim_text = f"{side} the {word} of {stext} for {phrase}"
        own = f"{_of(ref, ci.label)}"
        be = _is(ci.label)
        # the figure is above the average, not the row: never "With 13 days at sea, V20160 is below the median", "At 2,677 m,
        # its top elevation ..." or "... sits above"
        shapes = [f"{_owned(ref, ci.label, vtext, be)} {be} {claim_text}", f"{own} ({vtext}) {be} {claim_text}"]
        if ci.label.startswith("number of ") or _countlike(ci.label):  # "with 5 keepers, it is below ...", never "its number of
            shapes = [f"with {a_label(ci.label, vtext)}, {ref} is {claim_text}"]  # keepers of 5" or "its tickets sold are below ..."
        cells = self._cells(t, members, (c, group or ""))
        basis = {"of": t, "by": c, "group": group or None, "stat": stat, "additive": ci.additive, "round": decimals, "label": ci.label,
                 "cells": cells}
        out = Passage([_sentence(rng.choice(shapes))], pfacts + [vfact], [Claim("average", t, self._key(t, row), c, claim_text, basis)])
        if ci.additive and total > 0 and row[c] > 0 and nonneg and rng.random() < 0.7:  # no share of a net
            pct = 100 * row[c] / total
            ptext = f"{pct:.1f}%" if pct < 99.95 else "100%"
            share_text = (f"{ptext} of the {ci.label[len('number of '):]} of {phrase}" if ci.label.startswith("number of ")
                          else f"{ptext} of the {ci.label} of {phrase}" if ci.label.split()[0] in ("combined", "total")
                          else f"{ptext} of the combined {ci.label} of {phrase}")  # never "the combined combined attendance"
            shapes = [f"{ref} accounts for {share_text}"]  # never "That is ..."/"This makes up ...": a pronoun with no antecedent
            out.sentences.append(_sentence(rng.choice(shapes)))
            out.claims.append(Claim("share", t, self._key(t, row), c, share_text, {**basis, "stat": None}))
        return out

    def peer(self, rng, t: str, row: dict, c: str, style: Style, ref: str) -> Passage | None:
        """"Its <label> (<value>) is higher than that of S (<value>)": a comparison with a named row of the same group."""
        b = self.b
        group = self.group_column(t)
        if group is False or row.get(c) is None:
            return None
        pk = b.spec.tables[t].primary_key
        peers = [m for m in self.members(t, group, row) if m.get(c) is not None and m[pk] != row[pk] and m[c] != row[c]]
        if not peers:
            return None
        s = rng.choice(peers)
        v, w = row[c], s[c]
        if w > 0 and 2 * w < v <= 3 * w:  # "more than twice" undersells 31 against 3: past three times, plainly "more"
            cmp = "more than twice"
        elif v > 0 and w > 0 and w / 3 <= v < w / 2:
            cmp = "less than half"
        else:
            cmp = "higher" if v > w else "lower"
        sname = b.mention(t, s[pk])
        ci = b.col(t, c)
        vtext, vfact = b.say(t, row, c, style, "body")
        wtext, wfact = b.say(t, s, c, style, "body")
        if vtext == wtext:  # written alike: "higher than that of X" would contradict what the reader sees
            return None
        be, that = _is(ci.label), "those" if _is(ci.label) == "are" else "that"
        _, _, more, less = _scale(ci.label)
        if ci.label.startswith("number of ") or _countlike(ci.label):  # "with 5 keepers, it has more keepers than X (3)",
            things = ci.label[len("number of "):] if ci.label.startswith("number of ") else ci.label  # never "its number of keepers"
            more = {"higher": "more", "lower": "fewer", "more than twice": "more than twice as many", "less than half": "less than half as many"}[cmp]
            claim_text = f"{more} {things} than {sname}" if cmp in ("higher", "lower") else f"{more} {things} as {sname}"
            # each figure beside its own row: never "X has fewer shipments than Y: 2.01 million against 2.03 million", which
            # a reader (and the world model's verifier) takes as Y's figure
            text = f"with {a_label(ci.label, vtext)}, {ref} has {claim_text}, at {wtext}"
        elif cmp in ("higher", "lower"):
            cmp = more if cmp == "higher" else less  # "longer than", "larger than", "deeper than"
            claim_text = f"{cmp} than {that} of {sname}"
            # each figure once, beside its row: never "At €68,645, X's salary is higher than that of Y, at €55,082" (two
            # "at"s) or "Compared with Y, at €2.89, X's price is higher at €8.90"
            shapes = [f"{_of(ref, ci.label)} ({vtext}) {be} {claim_text}, at {wtext}",
                      f"{_owned(ref, ci.label, vtext, be)} {be} {claim_text}, which is {wtext}"]
            text = rng.choice(shapes)

        else:
            claim_text = f"{cmp} {that} of {sname}"
            text = rng.choice([f"{_of(ref, ci.label)}, {vtext}, {be} {claim_text}, at {wtext}",
                               f"{_owned(ref, ci.label, vtext, be)} {be} {claim_text}, {'which is' if be == 'is' else 'at'} {wtext}",
                               f"{_of(ref, ci.label)} ({vtext}) {be} {claim_text}, {'which is' if be == 'is' else 'at'} {wtext}"])
        claim = Claim("peer", t, self._key(t, row), c, claim_text,
                      {"of": t, "by": c, "peer": str(s[pk]), "label": ci.label, "cells": self._cells(t, [row, s], (c,))})
        return Passage([_sentence(text)], [vfact, wfact] + b.name_fact(t, s, "body"), [claim])

    def membership(self, rng, t: str, row: dict) -> Passage | None:
        """"X is one of the 4 <plural> of P": the size of the row's group, a count claim about the parent."""
        b = self.b
        group = self.group_column(t)
        if not group:
            return None
        if not isinstance(b.spec.tables[t].columns[group], M.ReferenceColumn):  # a category: "one of the 34 awards whose guide is X"
            members = self.members(t, group, row)
            phrase, pfacts = self._group_phrase(t, group, row, len(members), rng)
            name = b.mention(t, row[b.spec.tables[t].primary_key])
            claim_text = f"one of {phrase}"
            text = f"{name} is {claim_text}"  # never "is listed as", "counts as": hedges on a plain fact
            basis = {"child": t, "same": [group], "cells": self._cells(t, members, (group,))}
            return Passage([_sentence(text)], pfacts, [Claim("count", t, self._key(t, row), group, claim_text, basis)])
        n = len(self.members(t, group, row))
        if n < 2:
            return None
        pt = b.spec.tables[t].columns[group].parent
        prow = b.by_key[pt][row[group]]
        phrase, pfacts = self._group_phrase(t, group, row, n, rng)
        name = b.mention(t, row[b.spec.tables[t].primary_key])
        if b.labels[pt][prow[b.spec.tables[pt].primary_key]] in name:
            return None  # "Domaine Watts vintage of 1 August 2029 is one of the vintages of Domaine Watts" says nothing
        claim_text = f"one of {phrase}"
        text = f"{name} is {claim_text}"
        cells = self._cells(t, self.members(t, group, row), (group,))
        claim = Claim("count", pt, str(prow[b.spec.tables[pt].primary_key]), b.spec.tables[pt].primary_key, claim_text,
                      {"child": t, "fk": group, "cells": cells})
        return Passage([_sentence(text)], pfacts, [claim])

    def children(self, rng, t: str, row: dict, style: Style, ref: str, only: str | None = None, via: str | None = None) -> Passage:
        """What a row's related rows add up to: their count, a total of an additive column, the highest and lowest of a
        numeric one (rank claims about the children themselves). ``only`` keeps one child table, ``via`` one of its
        references (a player's games as White, not as Black)."""
        b = self.b
        out = Passage()
        pk = b.spec.tables[t].primary_key
        for child, fk in b.children[t]:
            if (only is not None and child != only) or (via is not None and fk != via):
                continue
            kids = self.kids(child, fk, row[pk])
            if len(kids) < 2:
                continue
            cplural = b.info[child].plural
            role = b.info[child].roles.get(fk)
            if fk in b.info[child].self_refs:  # a hierarchy: "Jade Douglas is the line manager of 4 staff members"
                claim_text = f"{len(kids)} {cplural}"
                text = f"{ref} is the {role} of {claim_text}"
            else:
                claim_text = f"{len(kids)} {cplural}" + (f" as {role}" if role else "")
                text = rng.choice([f"{ref} has {claim_text}", f"{ref} has {claim_text} in all"] + ([] if role else [f"{claim_text} belong to {ref}"]))
            cells = self._cells(child, kids, (fk,))
            out.sentences.append(_sentence(text))
            out.claims.append(Claim("count", t, str(row[pk]), pk, claim_text, {"child": child, "fk": fk, "cells": cells}))
            cols = self.measures(child)
            additive = [c for c in cols if b.col(child, c).additive and all(k.get(c) is not None for k in kids)]
            if additive:
                c = rng.choice(additive)
                ci = b.col(child, c)
                total = round(math.fsum(k[c] for k in kids), 6)  # never "$41.400000000000006"
                ttext = format_value(total, ci.unit, style)
                label = ci.label
                if label.startswith("number of "):
                    things = label[len("number of "):]
                    *lead, last = things.split()
                    if total == 1 and singular_of_plural(last):  # "a combined total of 1 sequel", never "1 sequels"
                        things = " ".join([*lead, singular_of_plural(last)])
                    if ttext.endswith(f" {things.split()[-1]}") or ttext.endswith(f" {singular_of_plural(things.split()[-1]) or things}"):
                        things = " ".join(things.split()[:-1])  # the unit says it: "1,952 holds", never "1,952 holds holds"
                    amount = rng.choice([f"a combined total of {ttext} {things}", f"{things} that come to {ttext} in all"]) if things \
                        else f"a combined total of {ttext}"
                    text = rng.choice([f"together they have {amount}", f"between them, they have {amount}", f"taken together, they have {amount}",
                                       f"they account for {amount}"])
                else:
                    amount = rng.choice([f"combined {label} of {ttext}" if is_plural_label(label) else f"a combined {label} of {ttext}",
                                         f"{label} adding up to {ttext}" if is_plural_label(label) else a_or_an(f"{label} adding up to {ttext}")])
                    text = rng.choice([f"together they have {amount}", f"between them, they have {amount}", f"taken together, they have {amount}"])
                out.sentences.append(_sentence(text))
                out.claims.append(Claim("total", t, str(row[pk]), pk, amount,
                                        {"child": child, "fk": fk, "of": child, "by": c, "label": label, "cells": self._cells(child, kids, (c, fk))}))
            ranked = [c for c in cols if c not in additive[:1]] or cols
            if ranked:
                c = rng.choice(ranked)
                vals = [k for k in kids if k.get(c) is not None]
                if len(vals) >= 3:
                    top = max(vals, key=lambda k: k[c])
                    said = self.rank(rng, child, top, c, style, group=fk)
                    if said:
                        out.extend(said)
                    low = min(vals, key=lambda k: k[c])
                    if low is not top and rng.random() < 0.6:
                        said = self.rank(rng, child, low, c, style, group=fk)
                        if said:
                            out.extend(said)
            break  # one child table a paragraph
        return out

    def spread(self, rng, t: str, row: dict, c: str, style: Style) -> Passage | None:
        """The group's range by a column, its two ends named: "Across the 18 residents of P, S has the highest <label>
        (<value>) and R the lowest (<value>)" (rank claims about S and R; ``None`` when ``row`` is one of them, which its
        own rank says better, or an end is tied)."""
        b = self.b
        group = self.group_column(t)
        if group is False:
            return None
        members = [m for m in self.members(t, group, row) if m.get(c) is not None]
        if len(members) < 4:
            return None
        hi, lo = max(members, key=lambda m: m[c]), min(members, key=lambda m: m[c])
        pk = b.spec.tables[t].primary_key
        if row[pk] in (hi[pk], lo[pk]) or sum(1 for m in members if m[c] in (hi[c], lo[c])) > 2:
            return None
        n, label = len(members), b.col(t, c).label
        phrase, pfacts = self._group_phrase(t, group, row, n, rng)
        hname, lname = b.mention(t, hi[pk]), b.mention(t, lo[pk])
        htext, hfact = b.say(t, hi, c, style, "body")
        ltext, lfact = b.say(t, lo, c, style, "body")
        high, low, _, _ = _scale(label)
        if label.split()[0] in (high, low):  # "has the highest highest point": a superlative label is said in tables
            return None
        if label.startswith("number of ") and len(label) > 10:
            label = label[len("number of "):]
        hclaim, lclaim = f"the {high} {label} of {phrase}", f"{lname} the {low}"
        text = rng.choice([f"{hname} has {hclaim}, {htext}, and {lclaim}, {ltext}",
                           f"for comparison, {hname} has {hclaim}, at {htext}, and {lclaim}, at {ltext}",
                           f"at the top, {hname} has {hclaim}, at {htext}; at the bottom, {lclaim}, at {ltext}",
                           f"{hname} has {hclaim}, {htext}, while {lclaim}, {ltext}"])
        cells = self._cells(t, members, (c, group or ""))
        basis = {"of": t, "by": c, "group": group or None, "label": label, "cells": cells}
        return Passage([_sentence(text)], pfacts + [hfact, lfact] + b.name_fact(t, hi, "body") + b.name_fact(t, lo, "body"),
                    [Claim("rank", t, str(hi[pk]), c, hclaim, basis), Claim("rank", t, str(lo[pk]), c, lclaim, basis)])

    def kind_count(self, rng, t: str, row: dict, style: Style, ref: str, skip: int = 0) -> Passage | None:
        """"It is one of 5 residents of P whose role is engineer": the rows of the group that share the row's category
        (the first category column that tells some rows apart, after ``skip`` such columns)."""
        b = self.b
        group = self.group_column(t)
        cats = [c for c in b.attributes(t, ("category",)) if isinstance(row.get(c), str) and "|" not in row[c] and not is_absence(row[c])
                and self.worded(t, c)]
        if group is False or not cats:
            return None
        members = self.members(t, group, row)
        for c in cats:
            k = sum(1 for m in members if m.get(c) == row[c])
            if 2 <= k < len(members):
                if skip == 0:
                    break
                skip -= 1
        else:
            return None
        ctext, cfact = b.say(t, row, c, style, "body")
        fk = group and isinstance(b.spec.tables[t].columns[group], M.ReferenceColumn)
        where = self.of_parent(t, group, row) if fk else "on record"
        if group and not fk:
            return None  # its group is already its category
        clabel = b.col(t, c).label
        kind = kind_of(b.frame(t, c), ctext)
        place_vp = next((v for v in b.frame(t, c).vps if v in PLACE_VPS), None) if b.frame(t, c).prose else None
        by_vp = next((v for v in b.frame(t, c).vps if _BY_VP.fullmatch(v)), None) if b.frame(t, c).prose else None
        if place_vp is not None:  # "one of 6 mountain huts in Italy", never "whose country is Italy"
            claim_text = f"one of {k} {b.info[t].plural}{' ' + where if fk else ''} {fill(place_vp, ctext)[3:]}"
        elif by_vp is not None:  # "one of 12 elevators of X made by TK Elevator", never "whose manufacturer is TK Elevator"
            claim_text = f"one of {k} {b.info[t].plural}{' ' + where if fk else ''} {fill(by_vp, ctext).split(' ', 1)[1]}"
        elif _modifier(ctext, b.info[t].noun) and (kind is None or kind.lower() == b.info[t].noun.lower()):
            claim_text = f"one of {k} {ctext} {b.info[t].plural} {where}"  # "one of 5 blue pistes of X", "one of 58 borage harvests"
        elif _kind_named(ctext, b.info[t].noun) and ctext.lower() != b.info[t].noun.lower():
            words = ctext.split()  # "one of 44 feature updates of X", never "whose update type is feature update"
            claim_text = f"one of {k} {' '.join(words[:-1] + [plural_noun(words[-1])])} {where}"
        elif kind is not None and not ctext[:1].isdigit() and kind.lower() != b.info[t].noun.lower():
            # "one of 4 Pils beers of X", never "one of 2 2-in-1 notebooks" nor "one of 8 firefighters" for the rank "firefighter"
            kinds = kind.split(" ")
            kinds[-1] = plural_noun(kinds[-1]) if k != 1 else kinds[-1]
            claim_text = f"one of {k} {' '.join(kinds)} {where}"
            if ctext not in claim_text:  # "ro-ro ferries" would lose the stated "ro-ro ferry": the plain form keeps it
                claim_text = f"one of {k} {b.info[t].plural} {where} whose {clabel} is {ctext}"
        else:  # never "that share the farming method organic" or "with on time as their status"
            claim_text = f"one of {k} {b.info[t].plural} {where} whose {clabel} is {ctext}"
        text = f"{ref} is {claim_text}"
        pfacts = self._group_phrase(t, group, row, k)[1]
        basis = {"child": t, "same": [c] + ([group] if group else []), "cells": self._cells(t, members, (c, group or ""))}
        return Passage([_sentence(text)], pfacts + [cfact], [Claim("count", t, self._key(t, row), c, claim_text, basis)])

    def parent_standing(self, rng, t: str, row: dict, style: Style) -> Passage | None:
        """Where the row's parents stand in their own groups ("Vienna Ravens has the third-lowest points of the 10 teams of
        League X"): what the groups a row belongs to look like (a junction row has two parents)."""
        b = self.b
        out = Passage()
        for ref, col in list(self.refs(t).items())[:2]:
            prow = b.by_key[col.parent].get(row[ref])
            if prow is None or b.info[col.parent].label_column == b.spec.tables[col.parent].primary_key:
                continue
            said = self._parent_standing(rng, col.parent, prow, style, most=1 if out.sentences else 2)
            if said:
                out.extend(said)
        return out if out.sentences else None

    def _parent_standing(self, rng, pt: str, prow: dict, style: Style, most: int = 2) -> Passage | None:
        """Up to ``most`` sentences on one parent: its rank by a measure, then its place against its group's average."""
        cols = [c for c in self.measures(pt) if prow.get(c) is not None]
        rng.shuffle(cols)
        pname = self.b.labels[pt][prow[self.b.spec.tables[pt].primary_key]]
        out = Passage()
        for c in cols:
            said = self.rank(rng, pt, prow, c, style) if not out.claims else self.versus_group(rng, pt, prow, c, style, pname)
            if said:
                out.extend(said)
                if len(out.sentences) >= most:
                    break
        return out if out.sentences else None

    def peer_table(self, rng, t: str, row: dict, style: Style, most: int = 6) -> tuple[list[str], list[Fact]]:
        """A table of the row and its group's nearest rows by one measure (the row in bold), up to ``most`` rows and
        three more columns: ``(Markdown lines, facts)``; empty when the group has fewer than three rows."""
        b = self.b
        group = self.group_column(t)
        cols = [c for c in self.measures(t) if row.get(c) is not None]
        if not cols:
            return self._record_table(t, row, style, most)
        if group is False:
            return [], []
        members = [m for m in self.members(t, group, row) if m.get(cols[0]) is not None]
        if len(members) < 3:
            return [], []
        pk = b.spec.tables[t].primary_key
        by = cols[0]
        ranked = sorted(members, key=lambda m: (-m[by], str(m[pk])))
        i = next(j for j, m in enumerate(ranked) if m[pk] == row[pk])
        lo = max(0, min(i - most // 2, len(ranked) - most))
        window = ranked[lo:lo + most]
        show = cols[:3] + [c for c in b.attributes(t, ("category",))[:1] if all(isinstance(m.get(c), str) for m in window)]
        refs = [r_ for r_, col in self.refs(t).items() if r_ != group
                and b.info[col.parent].label_column != b.spec.tables[col.parent].primary_key][:1]
        if len(show) + len(refs) < 2:  # a two-column table would read as an infobox
            return [], []
        show = refs + show  # a junction row's other parent first: "Sales records of Netherlands | Model | Registrations"
        head = [sentence_case(b.info[t].noun)] + [sentence_case(b.info[t].roles.get(c) or b.info[b.spec.tables[t].columns[c].parent].noun) if c in refs
                                                  else sentence_case(b.col(t, c).label) for c in show]
        return self._table(t, window, row, show, head, style, refs)

    def record_parent(self, t: str) -> str | None:
        """The reference a record's siblings are listed by ("Awards of Casa Hewoklund"): the first to another table, in
        no role; ``None`` when there is none."""
        roles = self.b.info[t].roles
        return next((r for r, col in self.refs(t).items() if col.parent != t and r not in roles), None)

    def _record_table(self, t: str, row: dict, style: Style, most: int) -> tuple[list[str], list[Fact]]:
        """For a row without measures (an award, an observation): its parent's rows of the same table in date order, with
        their date and categories (the row in bold)."""
        b = self.b
        fk = self.record_parent(t)
        dc = b.event(t)
        if fk is None or dc is None or row[fk] is None:
            return [], []
        pk = b.spec.tables[t].primary_key
        sibs = sorted((m for m in self.kids(t, fk, row[fk]) if m.get(dc) is not None), key=lambda m: (m[dc], str(m[pk])))
        if len(sibs) < 2:
            return [], []
        i = next((j for j, m in enumerate(sibs) if m[pk] == row[pk]), 0)
        lo = max(0, min(i - most // 2, len(sibs) - most))
        show = [dc] + [c for c in b.attributes(t, ("category",)) if c != fk][:3]
        if len(show) < 2:
            return [], []
        head = [sentence_case(b.info[t].noun)] + [sentence_case(b.col(t, c).label) for c in show]
        return self._table(t, sibs[lo:lo + most], row, show, head, style)

    def _table(self, t: str, rows: list[dict], row: dict, show: list[str], head: list[str], style: Style,
               refs: tuple[str, ...] | list[str] = ()) -> tuple[list[str], list[Fact]]:
        """A Markdown table of ``rows`` (``row`` in bold) with the columns ``show`` (a reference column as its parent's
        label), and the facts it states: ``(lines, facts)``."""
        b = self.b
        pk = b.spec.tables[t].primary_key
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        facts: list[Fact] = []
        for m in rows:
            name = b.labels[t][m[pk]]
            cells = [f"**{name}**" if m[pk] == row[pk] else name]
            facts += b.name_fact(t, m, "body")
            for c in show:
                if m.get(c) is None:
                    cells.append("")
                elif c in refs:
                    pt = b.spec.tables[t].columns[c].parent
                    cells.append(cell_text(b.labels[pt][m[c]]))
                    facts += b.name_fact(pt, b.by_key[pt][m[c]], "body")
                else:
                    text, f = b.say(t, m, c, style, "body")
                    cells.append(text)
                    facts.append(f)
            lines.append("| " + " | ".join(cells) + " |")
        return lines, facts

    def event_phrase(self, t: str, dc: str) -> str | None:
        """The verb phrase of a date column's event ("was announced", "entered service"): the column's event verb, else
        the first of its frame's phrases that ends "on <date>"."""
        ev = self.b.col(t, dc).event
        if ev:
            return ev
        vp = next((v for v in self.b.frame(t, dc).vps if v.endswith(" on {value}")), None)
        return vp[: -len(" on {value}")] if vp else None

    def timing(self, rng, t: str, row: dict, style: Style, ref: str) -> Passage | None:
        """"<ref> launched on <date>, the second-earliest of the 6 <plural> of P": the row's event among its group's."""
        b = self.b
        group = self.group_column(t)
        dc = b.event(t)
        event = self.event_phrase(t, dc) if dc else None
        if group is False or dc is None or not _past_event(event) or not isinstance(row.get(dc), date):
            return None
        members = [m for m in self.members(t, group, row) if isinstance(m.get(dc), date)]
        n, v = len(members), row[dc]
        if n < 3 or sum(1 for m in members if m[dc] == v) > 1:
            return None
        pos = 1 + sum(1 for m in members if m[dc] > v)
        phrase, pfacts = self._group_phrase(t, group, row, n, rng)
        dtext, dfact = b.say(t, row, dc, style, "body")
        claim_text = f"the {_ordx(pos, n, 'latest', 'earliest')} of {phrase}"
        if b.person[t]:  # a person is the second-earliest of the musicians "to join", never "which makes it ..."
            head, _, rest = event.partition(" ")
            claim_text += f" to be {rest}" if head in ("was", "were") and rest else f" to {base_verb(head)}{' ' + rest if rest else ''}"
            joined = b.joined(t, row, b.frame(t, dc))  # "joined Basel Chamber Orchestra on ...", never "joined on"
            said = next((v[: -len(" on {value}")] for v in joined.vps if v.endswith(" on {value}")), event) if joined is not b.frame(t, dc) else event
            text = rng.choice([f"{ref} {said} on {dtext}, {claim_text}", f"{ref} {said} on {dtext}: {claim_text}"])
        else:
            text = rng.choice([f"{ref} {event} on {dtext}, {claim_text}", f"{ref} {event} on {dtext}: {claim_text}",
                               f"{ref} {event} on {dtext}, which makes it {claim_text}"]
                              + ([f"on {dtext}, {ref} {event}, {claim_text}"] if ref not in ("it", "It") else []))  # never "On <date>, it launched"
        if b.restates(t, row, dc):  # its designation holds the date: never say it twice
            text, dfact = rng.choice([f"by date, {ref} is {claim_text}", f"in order of date, {ref} ranks as {claim_text}"]), None
        cells = self._cells(t, members, (dc, group or ""))
        return Passage([_sentence(text)], pfacts + ([dfact] if dfact else []),
                    [Claim("rank", t, self._key(t, row), dc, claim_text, {"of": t, "by": dc, "group": group or None, "cells": cells})])

    def changes(self, rng, t: str, row: dict, style: Style, ref: str, limit: int = 3) -> Passage:
        """A scenario row against the base world: "its <label> is <value>, up from <base value> in <base year>"."""
        b = self.b
        out = Passage()
        if b.base is None:
            return out
        bspec, btables = b.base
        pk = b.spec.tables[t].primary_key
        base_rows = self._base_rows
        if base_rows is None:
            base_rows = self._base_rows = {bt: {r[bspec.tables[bt].primary_key]: r for r in f.to_dicts()} for bt, f in btables.items()}
        before = base_rows.get(t, {}).get(row[pk])
        if before is None:
            return out
        year = bspec.as_of_date.year
        cols = [c for c in b.attributes(t, ("number", "share", "rank")) if c in before and before[c] is not None and row.get(c) is not None
                and not b.col(t, c).compose_only and not (b.col(t, c).unit is not None and b.col(t, c).unit.kind == "year")]
        changed = [c for c in cols if before[c] != row[c]]
        for c in rng.sample(changed, min(limit, len(changed))):
            ci = b.col(t, c)
            vtext, vfact = b.say(t, row, c, style, "body")
            btext = format_value(before[c], ci.unit, style)
            if ci.kind == "rank":
                moved = before[c] - row[c]
                places = abs(moved)
                ptext = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}.get(places, str(places))
                from worldforge.corpus.vocab import ordinal
                claim_text = f"{'up' if moved > 0 else 'down'} {ptext} place{'s' if places != 1 else ''} from {ordinal(before[c])} in {year}"
                text = rng.choice([f"{ref} is now {ordinal(row[c])} by {ci.label}, {claim_text}",
                                   f"by {ci.label}, {ref} stands {ordinal(row[c])}, {claim_text}"])
                bfact = Fact(t, str(row[pk]), c, ordinal(before[c]), "body", "world")
                vfact = Fact(t, str(row[pk]), c, ordinal(row[c]), "body")
            else:
                claim_text = f"{'up' if row[c] > before[c] else 'down'} from {btext} in {year}"
                text = rng.choice([f"{ref} now has {a_label(ci.label, vtext)}, {claim_text}"] if ci.label.startswith("number of ") else [f"{_of(ref, ci.label)} is {vtext}, {claim_text}",
                                   f"{_of(ref, ci.label)} is now {vtext}, {claim_text}",
                                   f"at {vtext}, {_of(ref, ci.label)} is {claim_text}"])
                bfact = Fact(t, str(row[pk]), c, btext, "body", "world")
            out.sentences.append(_sentence(text))
            out.facts += [vfact, bfact]
            out.claims.append(Claim("change", t, str(row[pk]), c, claim_text,
                                    {"of": t, "by": c, "year": year, "rank": ci.kind == "rank", "label": ci.label,
                                     "cells": [[t, [str(row[pk])], [c], None], [t, [str(row[pk])], [c], "world"]]}))
        return out

    def gaps(self, rng, t: str, row: dict, style: Style, ref: str, dated: str | None = None) -> Passage:
        """Time between a row's two event dates ("was released 45 days after it was announced"), or between its event
        and its parent's ("was announced three years after Xiaomi was founded")."""
        b = self.b
        out = Passage()
        pk = b.spec.tables[t].primary_key
        dates = [c for c in b.attributes(t, ("date",)) if _past_event(b.col(t, c).event) and isinstance(row.get(c), date)]
        pairs: list[tuple[str, dict, str, Callable[[], str]]] = []
        if len(dates) >= 2:
            a, z = sorted(dates[:2], key=lambda c: row[c])
            if row[a] != row[z] and _gerund_event(b.col(t, a).event):
                pairs.append((a, row, z, lambda a=a: _gerund_event(b.col(t, a).event)))
        parent = b.parent_of(t, row)
        if dates and parent is not None:
            pt, prow = parent
            pdates = [c for c in b.attributes(pt, ("date",)) if _past_event(b.col(pt, c).event) and isinstance(prow.get(c), date)]
            if pdates and prow[pdates[0]] != row[dates[0]]:
                pname = b.labels[pt][prow[b.spec.tables[pt].primary_key]]
                pairs.append((pdates[0], prow, dates[0], lambda pt=pt, pc=pdates[0], pname=pname: f"{pname} {b.col(pt, pc).event}"))
        for a, arow, z, after in pairs:
            at = t if arow is row else parent[0]
            n, unit, rel = date_span(arow[a], row[z])
            claim_text = f"{span_text(n, unit)} {rel} {after()}"
            ztext, zfact = b.say(t, row, z, style, "body")
            event = b.col(t, z).event
            said_date = True
            if z == dated or b.restates(t, row, z):  # the date was just given, or the designation holds it
                text = rng.choice([f"that was {claim_text}", f"this came {claim_text}"]) if z == dated else f"{ref} {event} {claim_text}"
                said_date = False
            else:
                text = rng.choice([f"{ref} {event} on {ztext}, {claim_text}", f"on {ztext}, {claim_text}, {ref} {event}"])
            facts = ([zfact] if said_date else []) + (b.name_fact(at, arow, "body") if arow is not row else [])
            out.sentences.append(_sentence(text))
            out.facts += facts
            out.claims.append(Claim("gap", t, str(row[pk]), z, claim_text,
                                    {"from": [at, str(arow[b.spec.tables[at].primary_key]), a], "to": [t, str(row[pk]), z],
                                     "cells": [[at, [str(arow[b.spec.tables[at].primary_key])], [a], None], [t, [str(row[pk])], [z], None]]}))
        return out

    # -- a paragraph -------------------------------------------------------------------------------
    def standing(self, rng, t: str, row: dict, style: Style, ref: str, most: int = 6) -> Passage:
        """The row among its group: membership and its kind within the group, ranks, a comparison with the group's
        average or median and with a named peer, and the group's range by another column."""
        out = Passage()
        for said in (self.membership(rng, t, row), self.kind_count(rng, t, row, style, ref)):
            if said:
                out.extend(said)
        cols = [c for c in self.measures(t) if row.get(c) is not None]
        rng.shuffle(cols)
        designated = self.b.info[t].label_column == self.b.spec.tables[t].primary_key  # a long designation is said once
        plans = (((self.rank, self.peer), (self.versus_group,)), ((self.peer, self.rank), (self.spread,)), ((self.versus_group, self.rank),),
                 ((self.spread, self.peer),))
        if len(cols) == 1:  # one measure: its rank, the group's average and a named peer, all three (a row with one figure)
            plans = (((self.rank,), (self.versus_group,), (self.peer,)),)
        ends = Passage()  # the group's range names two other rows: it comes after every sentence that says "its"
        for c, plan in zip(cols, plans):
            for options in plan:  # one sentence of each part of the plan, the first option that has something to say
                for make in options:
                    if make == self.rank:
                        said = make(rng, t, row, c, style, subject=ref if designated else None)
                    else:
                        said = make(rng, t, row, c, style) if make == self.spread else make(rng, t, row, c, style, ref)
                    if said:
                        (ends if make == self.spread else out).extend(said)
                        break
            if len(out.claims) + len(ends.claims) >= most:
                break
        out.extend(ends)
        if len(out.claims) < most:
            said = self.kind_count(rng, t, row, style, ref, skip=1)
            if said:
                said.sentences = [s_.replace(f"{sentence_case(ref)} is one of", f"{sentence_case(ref)} is also one of", 1) for s_ in said.sentences]
                out.extend(said)
        b = self.b
        for ref, col in list(self.refs(t).items())[:2]:  # each parent in its own group (a junction row has two)
            prow = b.by_key[col.parent].get(row[ref])
            if prow is not None and b.info[col.parent].label_column != b.spec.tables[col.parent].primary_key:
                said = self.membership(rng, col.parent, prow)
                if said:
                    out.extend(said)
        said = self.parent_standing(rng, t, row, style)
        if said:
            out.extend(said)
        return out

    def news_context(self, rng, t: str, row: dict, style: Style, name: str) -> Passage:
        """A news story's context paragraph: in a scenario the row's change since the base year, and where it stands in
        its group by one measure (a rank, or a comparison with the group's average or median or with a named peer)."""
        out = self.changes(rng, t, row, style, name, limit=1)
        cols = [c for c in self.measures(t) if row.get(c) is not None]
        rng.shuffle(cols)
        for c in cols:
            said = self.rank(rng, t, row, c, style) or self.versus_group(rng, t, row, c, style, name) or self.peer(rng, t, row, c, style, name)
            if said:
                out.extend(said)
                break
        return out

    def history(self, rng, t: str, row: dict, style: Style, ref: str) -> Passage:
        """The row over time: changes since the base world (a scenario), when its event came among its group's, the
        gaps between its dates and its parent's."""
        out = self.changes(rng, t, row, style, ref)
        said = self.timing(rng, t, row, style, ref)
        if said:
            out.extend(said)
        out.extend(self.gaps(rng, t, row, style, ref, dated=said.claims[0].column_name if said else None))
        parent = self.b.parent_of(t, row)
        if parent is not None:  # the parent's own history, and its other rows of this table when the group did not say so
            pt, prow = parent
            pname = self.b.labels[pt][prow[self.b.spec.tables[pt].primary_key]]
            said = self.timing(rng, pt, prow, style, pname)
            if said:
                out.extend(said)
            fk = next(ref_ for ref_, col in self.refs(t).items() if col.parent == pt)
            if self.group_column(t) != fk:
                out.extend(self.children(rng, pt, prow, style, pname, only=t, via=fk))
        return out


@lru_cache(maxsize=8192)
def a_label(label: str, vtext: str) -> str:
    """``a tower height of 45 m`` (``45 keepers`` for a label that counts things: ``number of keepers``)."""
    from worldforge.corpus.lexicon import fill

    if label.startswith("number of "):
        things = label[len("number of "):]
        if not re.fullmatch(r"[\d.,]+", vtext):  # the value carries its unit ("78 people"): never "78 people employees"
            return vtext
        return fill("{value} " + things, vtext)
    if _countlike(label) and not re.fullmatch(r"[\d.,]+", vtext):  # "with 4,312 tickets", never "tickets sold of 4,312 tickets"
        words = label.split()
        tail = next((" ".join(words[i:]) for i, w in enumerate(words) if i and (w in ("per", "in", "on", "at", "during", "a", "this", "last", "each") or w.endswith("ed")
                                                                                 or w in ("sold", "spoken", "built", "held", "won"))), "")
        return f"{vtext} {tail}" if tail and tail not in vtext else vtext  # "139 customers per day", "4,312 tickets sold"
    if is_plural_label(label) or _countlike(label):
        if vtext.replace(",", "").replace(".", "").isdigit():
            return fill("{value} " + label, vtext)  # "with 1 star", "with 1 rescue this season", never "with a stars of 1"
        return f"{label} of {vtext}"  # "with registrations of 850 vehicles"
    return f"{a_or_an(label)} of {vtext}"


def _past_event(event: str | None) -> bool:
    """An event verb in the past ("was announced", "launched"), not a birth (an age is no history) nor a future
    ("is due", "expires")."""
    if not event or "born" in event:
        return False
    head = event.split(" ", 1)[0]
    return head in ("was", "were") or head.endswith("ed") or head in ("began", "flew", "first", "kicked", "opened", "won", "became")


@lru_cache(maxsize=1024)
def _gerund_event(event: str | None) -> str | None:
    """``was announced`` -> ``being announced``, ``launched`` -> ``launching``, ``opened its season`` -> ``opening its
    season``; ``None`` when the verb has no such form."""
    if not event:
        return None
    head, _, rest = event.partition(" ")
    if head in ("was", "were"):
        return f"being {rest}"
    from lemminflect import getInflection, getLemma

    lemma = getLemma(head, upos="VERB")
    if not lemma or lemma[0] == head:
        return None
    ing = getInflection(lemma[0], "VBG")
    return f"{ing[0]}{' ' + rest if rest else ''}" if ing else None
