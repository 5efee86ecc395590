"""The catalog: ``catalog_world``, one dynamic partition per spec in the catalog's spec folder
(``WORLDFORGE_CATALOG_SPECS``), and ``catalog_report``, the catalog's diversity.

The sensor ``catalog_spec_folder`` adds a partition for every new spec file (and removes those of deleted
files), and requests a run for every spec that is new or changed since its catalog row, or whose world is stale
(built by another :data:`worldforge.GENERATOR_VERSION`, which ``catalog_world`` carries in its ``code_version``). A backfill over the
partitions runs through the configured executor (``assets/executors.py``): multiprocess here, Celery or
Kubernetes for a cluster. Each run builds one world end to end with the library
(:func:`worldforge.catalog.build.build_entry`) and writes its row to ``WAREHOUSE/catalog.duckdb`` under a
file lock, so concurrent runs take turns; a failing world fails its own run and touches no other row.
"""


from dagster import (
    AssetExecutionContext,
    DefaultSensorStatus,
    DynamicPartitionsDefinition,
    Failure,
    MaterializeResult,
    MetadataValue,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    asset,
    define_asset_job,
    sensor,
)

from assets.metadata import WORLD_CODE_VERSION, md_table
from assets.resources import SourcesResource, WarehouseResource

catalog_partitions = DynamicPartitionsDefinition(name="catalog_worlds")


@asset(partitions_def=catalog_partitions, group_name="catalog", code_version=WORLD_CODE_VERSION)
def catalog_world(context: AssetExecutionContext, warehouse: WarehouseResource, sources: SourcesResource) -> MaterializeResult:
    """One catalog world end to end (world, scenarios, corpus, index, tasks, oracle) and its row in WAREHOUSE/catalog.duckdb;
    an unchanged spec already built by this generator version is skipped (a stale world is rebuilt)."""
    from worldforge.catalog.build import build_entry

    try:
        spec = sources.catalog_spec_file(context.partition_key)
    except FileNotFoundError as exc:
        raise Failure(description=str(exc)) from None
    row, outcome = build_entry(spec, warehouse.get())
    meta = {
        "outcome": outcome, "world": row.world, "spec": MetadataValue.path(row.spec_path), "spec_hash": row.spec_hash,
        "archetype": row.archetype or "", "schema_signature": row.schema_signature or "", "build_s": row.build_s,
        "figures": MetadataValue.json({k: getattr(row, k) for k in ("tables", "rows", "scenarios", "pages", "facts", "contradictions", "tasks", "oracle_f1_min")}),
    }
    if row.status != "built":
        raise Failure(description=f"catalog world {row.world} failed: {row.error}", metadata=meta)
    context.log.info("%s %s in %.1f s", outcome, row.world, row.build_s)
    return MaterializeResult(metadata=meta)


@asset(group_name="catalog", deps=[catalog_world])
def catalog_report(warehouse: WarehouseResource) -> MaterializeResult:
    """The catalog's diversity: archetypes, schema signatures, table/column names, entity-name overlap, rows, tasks, years."""
    from worldforge.catalog.report import catalog_report as report

    rep = report(warehouse.get())
    return MaterializeResult(metadata={
        "worlds": rep.worlds, "built": rep.built, "failed": rep.failed, "signatures": rep.signatures,
        "entity_overlap": rep.entity_overlap, "stale": len(rep.stale), "stale_worlds": MetadataValue.json(rep.stale),
        "figures": md_table([{"figure": k, "value": v} for k, v in rep.figures().items()]),
        "archetypes": md_table([{"archetype": k, "worlds": v} for k, v in rep.archetypes.items()] or [{"archetype": "none", "worlds": 0}]),
        "failures": MetadataValue.json([{"world": w, "error": e[:500]} for w, e in rep.failures]),
        "world_tasks": md_table([{"world": w, "tasks": t.tasks, "base-world tasks": t.base, "median gold rows": t.median_gold,
                                  "largest gold": t.max_gold} for w, t in rep.world_tasks.items()]
                                or [{"world": "none", "tasks": 0, "base-world tasks": 0, "median gold rows": 0, "largest gold": 0}]),
    })


catalog_job = define_asset_job("catalog_build", selection=[catalog_world],
                               description="One catalog world, end to end, and its catalog row.")


@sensor(job=catalog_job, minimum_interval_seconds=30, default_status=DefaultSensorStatus.STOPPED)
def catalog_spec_folder(context: SensorEvaluationContext, warehouse: WarehouseResource, sources: SourcesResource):
    """A partition per spec file in the catalog's spec folder (added and removed as files come and go), and a run
    for every spec that is new or changed since its catalog row, or whose world is stale (another generator version)."""
    from pathlib import Path

    from worldforge import GENERATOR_VERSION
    from worldforge.catalog.build import catalog_specs, content_hash, read_catalog, stale_world

    folder = Path(sources.catalog_specs)
    specs = {p.stem: p for p in catalog_specs(folder)} if folder.is_dir() else {}
    known = set(context.instance.get_dynamic_partitions(catalog_partitions.name))
    rows = {r.spec_path: r for r in read_catalog(warehouse.get())}
    requests = []
    for key, path in specs.items():
        digest = content_hash(path)
        row = rows.get(str(path))
        stale = row is not None and row.status == "built" and stale_world(warehouse.get(), row.world)
        if row is None or row.spec_hash != digest or stale:
            requests.append(RunRequest(partition_key=key, run_key=f"{key}-{digest[:24]}-g{GENERATOR_VERSION}",
                                       tags={"trigger": "generator_version" if stale and row.spec_hash == digest else "catalog_spec"}))
    add, gone = sorted(set(specs) - known), sorted(known - set(specs))
    changes = ([catalog_partitions.build_add_request(add)] if add else []) + ([catalog_partitions.build_delete_request(gone)] if gone else [])
    if not requests and not changes:
        return SkipReason(f"every spec in {folder} has its partition and is built from its current content by this generator version")
    return SensorResult(run_requests=requests, dynamic_partitions_requests=changes)
