"""Trajectory assets: ``trajectory_turns`` (ingestion), ``turn_mask_stats`` (loss masks) and
``trajectory_shards`` (one Parquet shard per source, a dynamic partition per source seen)."""


import base64

import polars as pl
from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, DynamicPartitionsDefinition, MaterializeResult, MetadataValue, asset

from assets.metadata import md_table
from assets.resources import SourcesResource, WarehouseResource
from worldforge.reports import informative_share_png, mask_statistics_png
from worldforge.trajectories.store import apply_masks, balance, export_shard, load_store, merge_batch, read_batch, store_path, write_store

trajectory_sources = DynamicPartitionsDefinition(name="trajectory_sources")
"""One partition per trajectory source in the store, added by ``trajectory_turns`` as sources appear."""


@asset(
    group_name="trajectories",
    pool="trajectories_db",
    check_specs=[AssetCheckSpec("records_balance", asset="trajectory_turns")],
    description="Real agent trajectories read from every source into WAREHOUSE/trajectories.duckdb (canonical turns).",
)
def trajectory_turns(context: AssetExecutionContext, warehouse: WarehouseResource, sources: SourcesResource) -> MaterializeResult:
    path = store_path(warehouse.path)
    landing = warehouse.path / "landing"  # files dropped here (see the landing_trajectories sensor)
    batch = read_batch([*sources.trajectories, *([str(landing)] if landing.is_dir() and any(landing.iterdir()) else [])])
    store = merge_batch(load_store(path), batch)
    write_store(path, store)
    bal = balance(path)
    sources = sorted(set(store.trajectories["source"].to_list()))
    new = [s for s in sources if not context.instance.has_dynamic_partition("trajectory_sources", s)]
    if new:
        context.instance.add_dynamic_partitions("trajectory_sources", new)
        context.log.info("new trajectory_sources partitions: %s", ", ".join(new))
    by_source = batch.trajectories.group_by("source").agg(pl.len().alias("trajectories"), pl.col("n_turns").sum().alias("turns")).sort("source")
    context.log.info("records in %d = %d kept + %d quarantined", batch.records_in, batch.trajectories.height, batch.quarantine.height)
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(path)),
            "records_in": batch.records_in,
            "trajectories": batch.trajectories.height,
            "quarantined": batch.quarantine.height,
            "turns": batch.turns.height,
            "by_source": md_table(by_source),
            "quarantine": md_table(batch.quarantine.select("source_path", "locator", "reason")),
        },
        check_results=[AssetCheckResult(check_name="records_balance", passed=bool(bal["balanced"]), metadata={k: v for k, v in bal.items() if k != "balanced"})],
    )


@asset(
    group_name="trajectories",
    pool="trajectories_db",
    deps=[trajectory_turns],
    check_specs=[AssetCheckSpec("statistics_complete", asset="turn_mask_stats")],
    description="The four loss-mask statistics and the informative/mask decision of every turn (DESIGN.md section 5).",
)
def turn_mask_stats(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    path = store_path(warehouse.path)
    store = apply_masks(load_store(path))
    write_store(path, store)
    turns = store.turns.join(store.trajectories.select("trajectory_id", "source", "domain"), on="trajectory_id")
    missing = turns.filter(pl.any_horizontal(pl.col("obs_tokens", "compression_ratio", "novelty", "line_surprisal", "informative").is_null())).height
    share = float(turns["informative"].mean() or 0.0) if turns.height else 0.0
    per_source = turns.group_by("source").agg(pl.len().alias("turns"), pl.col("informative").mean().alias("informative_share")).sort("source")
    reasons = turns.group_by("mask_reason").len().sort("len", descending=True)
    plots = {}
    if turns.height:
        reports = warehouse.path / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        for name, png in (("mask_statistics", mask_statistics_png(turns)), ("informative_share", informative_share_png(turns))):
            (reports / f"{name}.png").write_bytes(png)
            plots[f"plot_{name}"] = MetadataValue.md(f"![{name}](data:image/png;base64,{base64.b64encode(png).decode()})")
    return MaterializeResult(
        metadata={
            "turns": turns.height,
            "informative_share": share,
            "per_source": md_table(per_source),
            "mask_reasons": md_table(reasons),
            "thresholds": md_table(store.thresholds),
            **plots,
        },
        check_results=[AssetCheckResult(
            check_name="statistics_complete",
            passed=missing == 0 and (0.0 < share < 1.0 if turns.height else True),
            metadata={"turns_without_statistics": missing, "informative_share": share},
        )],
    )


@asset(
    group_name="trajectories",
    partitions_def=trajectory_sources,
    deps=[turn_mask_stats],
    check_specs=[AssetCheckSpec("shard_complete", asset="trajectory_shards")],
    description="One source's turns with their statistics and mask decision as WAREHOUSE/trajectories/<source>.parquet.",
)
def trajectory_shards(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    import duckdb

    out, rows = export_shard(warehouse.path, context.partition_key)
    stored, unmasked = duckdb.sql(f"SELECT count(*), count(*) - count(informative) FROM read_parquet('{out}')").fetchall()[0]
    return MaterializeResult(
        metadata={"path": MetadataValue.path(str(out)), "turns": rows},
        check_results=[AssetCheckResult(check_name="shard_complete", passed=stored == rows and unmasked == 0,
                                        metadata={"turns_in_store": rows, "turns_in_shard": stored, "without_mask_decision": unmasked})],
    )
