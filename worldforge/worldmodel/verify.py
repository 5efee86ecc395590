"""A rule verifier for rendered observations: every stated world fact is checked against DuckDB.

A world model that renders search pages can invent facts. :class:`FactVerifier` reads the
world's tables (or a scenario's) and finds, in a Markdown observation, the claims it can
check:

* **tables** — a key/value table (an infobox) states columns of the page's subject (the
  entity named in the ``# title``, else the first entity named); a wide table states, per
  row, columns of the entity in that row; a side-by-side table (entities as headers) states
  each column of each entity. A cell under a name column that names no world entity is an
  *unknown entity*.
* **prose** — a sentence that names a column by its label (``launch price``, ``announced``) states
  the first value of that column's type after the mention (``its price stands at 399``), about the
  entity the sentence names nearest before the mention (else the sentence's first, else the
  last entity named earlier); "has 6 points": a number right before the label is its value. A
  sentence that makes a derived claim ("of the 12 models", "above the average of $483", "higher
  than that of X, at 4,000 mAh", "up from 14 in 2029", "45 days after") relates several rows and
  is not read for values: the corpus check recomputes its claim instead.

Columns are named as pages name them (:mod:`worldforge.corpus.vocab` labels). A claim is
checked by type: a number must denote the cell in the column's unit, allowing only the rounding
its own digits show (``$2.65 billion`` for 2,650 million USD,
:func:`~worldforge.corpus.quantity.denotes`); a date must be the same day in any of the sites'
formats; categorical text (at most 40 distinct values) is contradicted when it names another
value of the column but not the true one; other text must be equal in table cells. Anything else
is not a checkable claim and is not counted. The corpus itself passes with no contradiction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import polars as pl

from worldforge.corpus.quantity import Unit, denotes, parse_date, render_value
from worldforge.corpus.vocab import table_info
from worldforge.errors import WarehouseError
from worldforge.warehouse import read_world

_NUM = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?![\d])")
_MONTHS = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_DATE = re.compile(r"\b(?:(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? (\d{1,2}), (\d{4})|(\d{4})-(\d{2})-(\d{2})"
                   r"|(\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (\d{4}))\b", re.I)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z*\[]|[a-z]+ [A-Z])|\n+")  # a sentence may open with a lower-case brand ("vivo Lumen 10")
_MAX_CATEGORIES = 40
_LEADING_COUNT = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?) $")
_VALUE = r"[^;]*?(?=,\s|;|\.\s|\.$|$)"  # a value up to the end of its clause (a comma inside 18,625,000 ends nothing)
_DERIVED = re.compile("|".join((
    r"\b(?:of|among|for|across|in|under|belonging to|listed under) (?:the|all|all the|its|their) \d[\d,]*(?= )",  # a group's size
    r"\bone of \d[\d,]* [^.;]*",                                     # "one of 5 residents of X whose role is engineer"
    r"\b(?:average|median) of [^;]*?(?= for | across | among |[.;]\s|$)",  # a group's statistic
    r"\b(?:a )?combined [^;.]*? of " + _VALUE + r"|\badding up to " + _VALUE + r"|\bcome to [^;]*? in all",  # a total of related rows
    r"\d+(?:\.\d+)?% of the [^,;.]*",                                  # a share of a group's total
    r"\b(?:than|as|twice|half) (?:that|those) of [^,;]*(?:, (?:at|which is|which are) " + _VALUE + r")?|\bthan [A-Z][^,;(]*(?:\([^)]*\))?",
    r"\b[Cc]ompared with [^,;]*, (?:whose [^;]*?|at [^;]*?), ",        # the peer named first, with its value ("at 1,204 m, ")
    r"\b(?:more|fewer|less|higher|lower|larger|smaller|longer|shorter|deeper|shallower|heavier|lighter|bigger|greater) [^.;]*? than\b"
    r"|\bas (?:many|much) [^.;]*? as\b",                                # "more days on market than realme X", "twice as many ... as X"
    r"\b(?:up|down) (?:\w+ places? )?from [^;]*? in \d{4}|\bunchanged (?:from|since) [^;]*? in \d{4}",  # the base world's value
    r"\b\w+ (?:days?|months?|years?) (?:before|after)\b",              # a gap between two dates
    r"\b\d+(?:st|nd|rd|th)-(?:highest|lowest|earliest|latest|largest|smallest|longest|shortest|deepest|shallowest|heaviest|"
    r"lightest|most|fewest)\b",                                          # a rank: "the 15th-lowest", "the 12th-most"
    r"\b\d[\d,]* [a-z][\w -]* (?:on record|in total|are listed under|belong to)\b",  # a count of related rows
)))
"""Phrases of derived claims (:mod:`worldforge.corpus.claims`: group sizes and statistics, totals, shares, a peer's value,
a previous year's value, date gaps, counts of related rows): a sentence with one relates several rows, so the prose
reader takes no value from it."""


@dataclass(frozen=True)
class Contradiction:
    """A stated value that disagrees with the world (``expected`` is the row's rendered value)."""

    entity: str
    table: str
    row_key: str
    column: str
    stated: str
    expected: str
    where: str


@dataclass
class Verdict:
    """The verifier's finding on one observation: claims checked and contradictions."""

    checked: int = 0
    contradictions: list[Contradiction] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No claim was contradicted."""
        return not self.contradictions

    def summary(self) -> str:
        """One line for logs and rejection reasons: claims checked, and the first contradiction with how many more."""
        if self.ok:
            return f"{self.checked} claim(s) checked, none contradicted"
        c = self.contradictions[0]
        more = f" (+{len(self.contradictions) - 1} more)" if len(self.contradictions) > 1 else ""
        return f"{len(self.contradictions)} of {self.checked} claim(s) contradicted, e.g. {c.entity} {c.column.replace('_', ' ')}: stated {c.stated!r}, the world says {c.expected!r}{more}"


@dataclass(frozen=True)
class _Col:
    table: str
    name: str
    kind: str  # number | date | category | text | label
    categories: frozenset[str] = frozenset()
    unit: Unit | None = None


def _parse_date(text: str) -> date | None:
    m = _DATE.search(text)
    return parse_date(m.group(0)) if m else None


class FactVerifier:
    """Checks observations against one world (or one of its scenarios).

    Args:
        world_file: the world's DuckDB file.
        scenario: check against a scenario's tables instead.

    Raises:
        WarehouseError: the file is not a world, or has no such scenario.
    """

    def __init__(self, world_file: str | Path, scenario: str | None = None):
        wf = read_world(world_file)
        if scenario is not None and scenario not in wf.scenarios:
            raise WarehouseError(f"{world_file}: no scenario {scenario!r} (has: {', '.join(wf.scenarios) or 'none'})")
        tables = wf.scenarios[scenario] if scenario else wf.tables
        self.spec = wf.spec
        self.entities: dict[str, list[tuple[str, dict]]] = {}
        self.columns: dict[str, dict[str, _Col]] = {}  # table -> label (lower case) -> column
        self.label_cols: dict[str, str] = {}
        self.label_headers: set[str] = set()  # headers of a column of entity names ("phone model", "model number")
        self.rows: dict[tuple[str, str], dict] = {}  # (table, row key) -> row, for grounding prompts
        for t, spec_t in wf.spec.tables.items():
            frame = tables.get(t)
            if frame is None:
                continue
            info = table_info(wf.spec, t, frame)
            lc = info.label_column
            pk = spec_t.primary_key
            cols: dict[str, _Col] = {}
            for c in spec_t.columns:
                if c == pk or c in spec_t.references:
                    continue
                dtype = frame.schema[c]
                if c == lc:
                    kind = "label"
                elif dtype in (pl.Int64, pl.Int32, pl.Float64, pl.Float32):
                    kind = "number"
                elif dtype == pl.Date:
                    kind = "date"
                else:
                    kind = "text"
                cats: frozenset[str] = frozenset()
                if kind == "text":
                    values = {render_value(v).lower() for v in frame[c].drop_nulls().unique().to_list()}
                    if len(values) <= _MAX_CATEGORIES:
                        kind, cats = "category", frozenset(values)
                cols[info.columns[c].label.lower()] = _Col(t, c, kind, cats, info.columns[c].unit)
                if info.columns[c].event:  # a date is also named by its event: "was announced on <date>"
                    cols.setdefault(info.columns[c].event.lower(), cols[info.columns[c].label.lower()])
            self.columns[t] = cols
            for row in frame.to_dicts():
                row["__key__"] = str(row[pk])
                self.rows[(t, row["__key__"])] = row
                if lc != pk:
                    self.entities.setdefault(render_value(row[lc]).lower(), []).append((t, row))
            if lc != pk:
                self.label_cols[t] = lc
                self.label_headers.update({info.noun.lower(), info.columns[lc].label.lower(), t.replace("_", " ")})
        names = sorted(self.entities, key=len, reverse=True)
        # a name inside a code is no mention ("ZTE-008" names no brand)
        self._entity_re = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in names) + r")(?!\w|-\w)", re.I) if names else None
        all_cols = sorted({p for cols in self.columns.values() for p in cols}, key=len, reverse=True)
        self._column_re = re.compile(r"(?<!\w)(" + "|".join(re.escape(p) for p in all_cols) + r")(?!\w)", re.I) if all_cols else None

    # -- public -------------------------------------------------------------------------
    def verify(self, text: str) -> Verdict:
        """Check every claim in a Markdown observation. Never raises on odd text."""
        verdict = Verdict()
        text = _LINK.sub(r"\1", text)
        subject = self._subject(text)
        last: str | None = subject
        prose: list[str] = []
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].lstrip().startswith("|"):
                block = []
                while i < len(lines) and lines[i].lstrip().startswith("|"):
                    block.append(lines[i])
                    i += 1
                self._table(block, subject, verdict)
                continue
            prose.append(lines[i])
            i += 1
        for sentence in _SENT.split("\n".join(prose)):
            last = self._sentence(sentence, last, verdict)
        return verdict

    # -- claims -------------------------------------------------------------------------
    def _find_entities(self, text: str) -> list[tuple[int, str]]:
        if self._entity_re is None:
            return []
        return [(m.start(), m.group(1).lower()) for m in self._entity_re.finditer(text)]

    def _subject(self, text: str) -> str | None:
        for line in text.splitlines():
            if line.startswith("# "):
                found = self._find_entities(line[2:].split(" - ")[0])
                if found:
                    return found[0][1]
                break
        found = self._find_entities(text)
        return found[0][1] if found else None

    def _column_of(self, entity: str, field_text: str) -> list[tuple[str, dict, _Col]]:
        """The rows named ``entity`` (labels need not be unique) with the column a field label
        names (the longest column name that prefixes it)."""
        f = " ".join(field_text.lower().replace("*", "").split())
        out = []
        for t, row in self.entities.get(entity, []):
            best = None
            for p, col in self.columns[t].items():
                if (f == p or f.startswith(p + " ")) and (best is None or len(p) > len(best[0])):
                    best = (p, col)
            if best:
                out.append((t, row, best[1]))
        return out

    def _check(self, entity: str, field_text: str, stated: str, where: str, verdict: Verdict, in_table: bool) -> None:
        """Count the claim; a contradiction when no row of that name agrees with it."""
        outcomes = [(t, row, col, self._agrees(row, col, stated, in_table)) for t, row, col in self._column_of(entity, field_text)]
        outcomes = [o for o in outcomes if o[3] is not None]
        if not outcomes:
            return
        verdict.checked += 1
        if not any(o[3] for o in outcomes):
            t, row, col, _ = outcomes[0]
            verdict.contradictions.append(Contradiction(entity, t, row["__key__"], col.name, stated.strip(), render_value(row[col.name]), where))

    @staticmethod
    def _agrees(row: dict, col: _Col, stated: str, in_table: bool) -> bool | None:
        """Whether ``stated`` agrees with the row's cell; None when it states no value of the column's type."""
        if col.kind == "label":
            return None
        actual = row[col.name]
        if actual is None:
            return None
        expected = render_value(actual)
        if col.kind == "number":
            text = _DATE.sub(" ", stated)
            return denotes(text, actual, col.unit) if _NUM.search(text) else None
        if col.kind == "date":
            d = _parse_date(stated)
            real = actual.date() if isinstance(actual, datetime) else actual if isinstance(actual, date) else None
            return None if d is None or real is None else d == real
        if col.kind == "category":
            low = stated.lower()
            if re.search(rf"(?<!\w){re.escape(expected.lower())}(?!\w)", low):
                return True
            others = [c for c in col.categories if c and re.search(rf"(?<!\w){re.escape(c)}(?!\w)", low)]
            return False if others else None
        return (stated.strip().lower() == expected.lower()) if in_table else None

    def _table(self, block: list[str], subject: str | None, verdict: Verdict) -> None:
        rows = [[c.strip().replace("**", "") for c in line.strip().strip("|").split("|")] for line in block]  # a bold row is no other entity
        rows = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) or not c for c in r)] if len(rows) > 1 else rows
        if len(rows) < 2:
            return
        header, body = rows[0], rows[1:]
        header_entities = [self._find_entities(h) for h in header[1:]]
        if header_entities and all(len(e) == 1 and e[0][1] == h.lower().strip("* ") for e, h in zip(header_entities, header[1:])):
            for r in body:  # side by side: entities across, fields down
                for e, cell in zip(header_entities, r[1:]):
                    self._check(e[0][1], r[0], cell, f"table row {r[0]!r}", verdict, True)
            return
        if len(header) == 2 and (not header[1] or (not self._find_entities(header[0]) and not self._has_label_header(header))) and all(len(r) >= 2 for r in body):
            if subject is not None:  # key/value infobox of the page's subject
                for r in body:
                    self._check(subject, r[0], r[1], f"infobox {r[0]!r}", verdict, True)
            return
        label_idx = next((j for j, h in enumerate(header) if self._is_label_header(h)), None)
        for r in body:
            ents = [(j, self._find_entities(c)) for j, c in enumerate(r)]
            owner = next((found[0][1] for j, found in ents if found and found[0][0] == 0 and len(found[0][1]) == len(r[j].strip("* ").strip())), None)
            if owner is None:
                if label_idx is not None and label_idx < len(r) and r[label_idx].strip():
                    verdict.checked += 1
                    verdict.contradictions.append(Contradiction(r[label_idx], "?", "?", header[label_idx].lower(), r[label_idx], "(no such entity)", "unknown entity in a table"))
                continue
            for h, cell in zip(header, r):
                self._check(owner, h, cell, f"table row of {owner!r}", verdict, True)

    def _is_label_header(self, h: str) -> bool:
        h = h.lower().strip("* ")
        return h in self.label_headers and h not in ("", "name")

    def _has_label_header(self, header: list[str]) -> bool:
        return any(self._is_label_header(h) for h in header)

    def _sentence(self, sentence: str, last: str | None, verdict: Verdict) -> str | None:
        if _DERIVED.search(sentence):  # a derived claim's sentence relates rows (ranks, peers, totals): no value is read from it
            ents = self._find_entities(sentence)
            return ents[-1][1] if ents else last
        ents = self._find_entities(sentence)
        if self._column_re is not None:
            for m in self._column_re.finditer(sentence):
                before = [e for pos, e in ents if pos < m.start()]
                entity = before[-1] if before else (ents[0][1] if ents else last)
                if entity is None:
                    continue
                found = self._column_of(entity, m.group(1))
                if not found or re.search(r"\bby\s+$", sentence[: m.start()]):  # "ranks No. 4 by shipments": a criterion, not a value
                    continue
                after = sentence[m.end():]
                lead = _LEADING_COUNT.search(sentence[: m.start()])
                if lead and found[0][2].kind == "number":  # "has 6 points, 2 wins": the number before the label is its value
                    after = lead.group(1)
                # the value of a mention is in its own clause: "ranks No. 2 by shipments, and its price is $399" states no shipments
                after = re.split(r",\s(?!\d)|;\s|\s(?:and|but|while|whose)\s", after, maxsplit=1)[0]
                for e_pos, e in ents:  # entity names carry digits ("Lumen 6"); never read them as values
                    if e_pos >= m.end():
                        after = after.replace(sentence[e_pos: e_pos + len(e)], " ")
                stated = self._value_text(found[0][2], after)
                if stated is not None:
                    self._check(entity, m.group(1), stated, f"sentence {sentence.strip()[:80]!r}", verdict, False)
        return ents[-1][1] if ents else last

    def _value_text(self, col: _Col, text: str) -> str | None:
        if col.kind == "date":
            m = _DATE.search(text)
            return m.group(0) if m else None
        if col.kind == "number":
            stripped = _DATE.sub(" ", text)
            m = _NUM.search(stripped)
            return stripped[max(0, m.start() - 3): m.end() + 12] if m else None
        if col.kind == "category":
            return text if any(re.search(rf"(?<!\w){re.escape(c)}(?!\w)", text.lower()) for c in col.categories if c) else None
        return None


_VERIFIERS: dict[tuple[str, str | None, int], FactVerifier] = {}


def verifier_for(world_file: str | Path, scenario: str | None = None) -> FactVerifier:
    """A cached :class:`FactVerifier` (rebuilt when the file changes)."""
    p = Path(world_file)
    key = (str(p.resolve()), scenario, p.stat().st_mtime_ns)
    if key not in _VERIFIERS:
        _VERIFIERS[key] = FactVerifier(p, scenario)
    return _VERIFIERS[key]


def verify_observation(world_file: str | Path, text: str, scenario: str | None = None) -> Verdict:
    """Shorthand for ``verifier_for(world_file, scenario).verify(text)``."""
    return verifier_for(world_file, scenario).verify(text)


__all__ = ["Contradiction", "FactVerifier", "Verdict", "verifier_for", "verify_observation"]
