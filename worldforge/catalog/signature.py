"""Schema signatures: what makes two world specs the same layout to an agent."""

from __future__ import annotations

import hashlib
import json

from worldforge.spec.models import ReferenceColumn, WorldSpec


def schema_layout(spec: WorldSpec) -> list[list]:
    """The spec's layout: ``[[table, [column, ...], [[reference column, parent table], ...]], ...]``, sorted.

    Table names, column names and key relations; values, row counts, seeds and years are not part of it.
    """
    layout = []
    for tname, table in spec.tables.items():
        refs = sorted([c, col.parent] for c, col in table.columns.items() if isinstance(col, ReferenceColumn))
        layout.append([tname, sorted(table.columns), refs])
    return sorted(layout)


def schema_signature(spec: WorldSpec) -> str:
    """SHA-256 (hex, first 16 characters) of :func:`schema_layout`: equal for two specs exactly when they
    have the same table names, column names and key relations."""
    canon = json.dumps(schema_layout(spec), separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()[:16]
