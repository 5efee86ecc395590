"""Materialization metadata: Markdown tables, and a :class:`~worldforge.tally.Tally` as metadata and as a check; the
code version of the assets that build worlds."""

import polars as pl
from dagster import AssetCheckResult, MetadataValue

from worldforge import GENERATOR_VERSION
from worldforge.tally import Tally

WORLD_CODE_VERSION = f"generator-{GENERATOR_VERSION}"
"""The ``code_version`` of every asset that builds worlds (the world step assets, ``catalog_world``): a bump of
:data:`worldforge.GENERATOR_VERSION` changes it, so Dagster shows what they built as stale."""
from worldforge.tasks import frame_markdown


def md_table(frame: pl.DataFrame | list[dict], rows: int | None = None) -> MetadataValue:
    """A frame or a list of dict rows (its first ``rows`` rows) as a Markdown table (:func:`worldforge.tasks.frame_markdown`)."""
    return MetadataValue.md(frame_markdown(frame, rows))


def tally_metadata(tally: Tally) -> dict:
    """A tally as metadata: its counts, the one-line balance and the reasons as a table."""
    return {"inputs": tally.inputs, tally.kept_as: tally.kept, tally.dropped_as: tally.dropped_total, "balance": tally.summary(),
            f"{tally.dropped_as}_by_reason": md_table([{"reason": r, "count": n} for r, n in tally.reasons()] or [{"reason": "none", "count": 0}])}


def balance_check(tally: Tally, check_name: str = "records_balance") -> AssetCheckResult:
    """The asset check that records in = kept + dropped by reason."""
    return AssetCheckResult(check_name=check_name, passed=tally.balanced,
                            metadata={"inputs": tally.inputs, tally.kept_as: tally.kept, tally.dropped_as: tally.dropped_total, "balance": tally.summary()})
