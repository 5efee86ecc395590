"""What a spec's pages will say, before a thousand worlds are built from it (``worldforge spec preview SPEC``).

:func:`preview_spec` generates the spec's tables (in memory, a fraction of a second) and reads them the way the
corpus does: per table, what its rows are taken to be (:func:`~worldforge.corpus.kinds.table_kinds`: a person, an
event, a measurement, a thing), the genres those rows get pages of, one sentence per column as an encyclopedia
article states it for a sample row, and every relation of the table — a plain reference, a role (two references
to one parent: a match's home and away team), a junction (two references with cardinalities), a hierarchy (a
reference to the table itself) or an optional reference (``null_share``) — with the sentence or heading pages say
it with. A user reads it to fix a label ("has 1960 of birth") or a missing role before building.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from worldforge.corpus.builder import CorpusBuilder
from worldforge.corpus.kinds import GENRES_BY_KIND
from worldforge.corpus.lexicon import possessive
from worldforge.corpus.planner import sentence_case
from worldforge.spec import models as M
from worldforge.synth import build_world

__all__ = ["ColumnPreview", "RelationPreview", "TablePreview", "preview_spec"]


@dataclass(frozen=True)
class ColumnPreview:
    """One column: its identifier, the label pages use, how pages read it (``number``, ``date``, ``category`` ...;
    :class:`~worldforge.corpus.vocab.ColumnInfo`), its unit, and the sentence an article states it with for the sample
    row (``""`` when pages state it only in tables: a key, a name, a reference, an empty cell)."""

    column: str
    label: str
    kind: str
    unit: str | None
    sentence: str


@dataclass(frozen=True)
class RelationPreview:
    """One reference of a table: its column, the parent table, its shape (``reference``, ``role``, ``junction``,
    ``hierarchy`` or ``optional``; a role or hierarchy that is also optional says both, ``role, optional``), what
    bounds it (cardinality, hierarchy bounds, null share) and how pages say it for the sample row."""

    column: str
    parent: str
    shape: str
    bounds: str
    says: str


@dataclass(frozen=True)
class TablePreview:
    """One table as pages will present it: its noun and plural, its kind, rows generated, the genres its rows get
    pages of, its columns and its relations, for a sample row (``sample``: its label)."""

    table: str
    noun: str
    plural: str
    kind: str
    rows: int
    genres: list[str]
    sample: str
    columns: list[ColumnPreview] = field(default_factory=list)
    relations: list[RelationPreview] = field(default_factory=list)


def _bounds(col: M.ReferenceColumn) -> str:
    parts = []
    if col.cardinality is not None:
        parts.append(f"{col.cardinality.min}–{col.cardinality.max} per {col.parent} row")
    if col.hierarchy is not None:
        h = col.hierarchy
        parts += [f"{k.replace('_', ' ')} {v}" for k, v in (("max_depth", h.max_depth), ("max_children", h.max_children), ("roots", h.roots)) if v is not None]
    if col.null_share:
        parts.append(f"{col.null_share:.0%} without a parent")
    return "; ".join(parts) or "any parent"


def preview_spec(spec: M.WorldSpec, seed: int | None = None) -> list[TablePreview]:
    """Every table of ``spec`` as its pages will present it (see the module docstring), parents first.

    Args:
        spec: a validated world spec.
        seed: the seed to generate the sample tables with (default: the spec's).

    Returns:
        One :class:`TablePreview` a table, in the spec's order.

    Raises:
        SpecError, GenerationError: as :func:`~worldforge.synth.build_world` (the spec cannot be built).
    """
    tables = build_world(spec, seed)
    b = CorpusBuilder(spec, tables, None, spec.seed if seed is None else seed)
    try:
        style = b.sites["wiki"].style
        out = []
        for t, table in spec.tables.items():
            info, pk = b.info[t], table.primary_key
            rows = b.rows[t]
            # the sample: the row with the most cells filled (so that every column has a sentence where one can)
            row = max(rows, key=lambda r: sum(v is not None for v in r.values())) if rows else {}
            label = b.labels[t][row[pk]] if row else ""
            kind = b.kind(t)
            preview = TablePreview(t, info.noun, info.plural, kind, len(rows), sorted(GENRES_BY_KIND.get(kind, ())), label)
            for c, ci in info.columns.items():
                sentence = ""
                if row and ci.kind not in ("key", "name", "reference") and not ci.compose_only and row.get(c) is not None:
                    said, _ = b.prose(random.Random(f"{spec.seed}|{t}|{c}"), t, row, [c], style, "body")
                    sentence = " ".join(said)
                kind_read = "composes the name" if ci.compose_only else ci.kind  # never stated on its own, not even in the infobox
                preview.columns.append(ColumnPreview(c, ci.label, kind_read, ci.unit.text if ci.unit else None, sentence))
            for ref, col in table.references.items():
                preview.relations.append(RelationPreview(ref, col.parent, table.reference_shape(t, ref), _bounds(col), _says(b, t, ref, col, row)))
            out.append(preview)
        return out
    finally:
        b.close()


def _says(b: CorpusBuilder, t: str, ref: str, col: M.ReferenceColumn, row: dict) -> str:
    """How pages say the sample row's parent through ``ref`` (and, for a hierarchy, where the parent lists it)."""
    info = b.info[t]
    key = row.get(ref) if row else None
    if key is None:
        return "no parent for this row: pages say nothing of it (never 'none')"
    plabel = b.labels[col.parent][key]
    heading = f"listed on {possessive(plabel)} article under '{info.section(ref)}'"
    if ref in info.roles:
        return f"\"Its {info.roles[ref]} is {plabel}.\" (lead and infobox); {heading}"
    return f"named in the lead of its article ('{sentence_case(info.noun)} of {plabel}'); {heading}"

