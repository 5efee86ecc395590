"""Markdown tables for materialization metadata (rendered by worldforge's own table writer)."""

import polars as pl
from dagster import MetadataValue

from worldforge.tasks import render_markdown_table


def md_table(frame: pl.DataFrame, rows: int | None = None) -> MetadataValue:
    """A frame (its first ``rows`` rows) as a Markdown table; floats to 3 decimals."""
    head = frame if rows is None else frame.head(rows)
    cells = [{c: "" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)) for c, v in r.items()} for r in head.iter_rows(named=True)]
    return MetadataValue.md(render_markdown_table(head.columns, cells))
