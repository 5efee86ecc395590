"""Trajectory assets: ``trajectory_turns`` (ingestion), ``turn_mask_stats`` (loss masks) and
``trajectory_shards`` (one Parquet shard per source, a dynamic partition per source seen)."""


import base64

import polars as pl
from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, DynamicPartitionsDefinition, MaterializeResult, MetadataValue, asset

from assets.metadata import balance_check, md_table, tally_metadata
from assets.resources import SourcesResource, WarehouseResource
from worldforge.reports import informative_share_png, mask_statistics_png
from worldforge.trajectories.store import balance, export_shard, ingest, recompute_masks

trajectory_sources = DynamicPartitionsDefinition(name="trajectory_sources")
"""One partition per trajectory source in the store, added by ``trajectory_turns`` as sources appear."""


@asset(
    group_name="trajectories",
    pool="trajectories_db",
    check_specs=[AssetCheckSpec("records_balance", asset="trajectory_turns")],
)
def trajectory_turns(context: AssetExecutionContext, warehouse: WarehouseResource, sources: SourcesResource) -> MaterializeResult:
    """Real agent trajectories read from every source into WAREHOUSE/trajectories.duckdb (canonical turns)."""
    landing = warehouse.get().landing  # files dropped here (see the landing_trajectories sensor)
    paths = [*sources.trajectories, *([str(landing)] if landing.is_dir() and any(landing.iterdir()) else [])]
    report = ingest(paths, warehouse.get(), compute_masks=False, max_record_mb=warehouse.max_record_mb,
                    store_memory_mb=warehouse.store_memory_mb)  # turn_mask_stats computes them
    new = [s for s in report.sources if not context.instance.has_dynamic_partition("trajectory_sources", s)]
    if new:
        context.instance.add_dynamic_partitions("trajectory_sources", new)
        context.log.info("new trajectory_sources partitions: %s", ", ".join(new))
    context.log.info(report.tally.summary())
    by_source = [{"source": s, "trajectories": t, "turns": n} for s, (t, n) in sorted(report.by_source.items())]
    return MaterializeResult(
        metadata={"path": MetadataValue.path(str(report.path)), "turns": report.turns, "by_source": md_table(by_source),
                  **tally_metadata(report.tally)},
        check_results=[balance_check(balance(report.path))],  # re-counted from the store file
    )


@asset(
    group_name="trajectories",
    pool="trajectories_db",
    deps=[trajectory_turns],
    check_specs=[AssetCheckSpec("statistics_complete", asset="turn_mask_stats")],
)
def turn_mask_stats(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """The four loss-mask statistics and the informative/mask decision of every turn (DESIGN.md section 5)."""
    masks = recompute_masks(warehouse.get(), store_memory_mb=warehouse.store_memory_mb)
    share = masks.informative_share
    plots = {}
    if masks.turns.height:
        for name, png in (("mask_statistics", mask_statistics_png(masks.turns)), ("informative_share", informative_share_png(masks.turns))):
            (warehouse.get().reports() / f"{name}.png").write_bytes(png)
            plots[f"plot_{name}"] = MetadataValue.md(f"![{name}](data:image/png;base64,{base64.b64encode(png).decode()})")
    return MaterializeResult(
        metadata={"turns": masks.turns.height, "informative_share": share, "per_source": md_table(masks.per_source()),
                  "mask_reasons": md_table(masks.reasons()), "thresholds": md_table(masks.thresholds), **plots},
        check_results=[AssetCheckResult(
            check_name="statistics_complete",
            passed=masks.missing == 0 and (0.0 < share < 1.0 if masks.turns.height else True),
            metadata={"turns_without_statistics": masks.missing, "informative_share": share},
        )],
    )


@asset(
    group_name="trajectories",
    partitions_def=trajectory_sources,
    deps=[turn_mask_stats],
    check_specs=[AssetCheckSpec("shard_complete", asset="trajectory_shards")],
)
def trajectory_shards(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """One source's turns with their statistics and mask decision as WAREHOUSE/trajectories/<source>.parquet."""
    out, rows = export_shard(warehouse.get(), context.partition_key)
    stored, unmasked = pl.scan_parquet(out).select(pl.len(), pl.col("informative").null_count()).collect().row(0)
    return MaterializeResult(
        metadata={"path": MetadataValue.path(str(out)), "turns": rows},
        check_results=[AssetCheckResult(check_name="shard_complete", passed=stored == rows and unmasked == 0,
                                        metadata={"turns_in_store": rows, "turns_in_shard": stored, "without_mask_decision": unmasked})],
    )
