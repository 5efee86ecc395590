"""World assets: ``world_tables``, one partition per spec in the spec folder (``WORLDFORGE_SPECS``)."""


from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    Failure,
    MaterializeResult,
    MetadataValue,
    StaticPartitionsDefinition,
    asset,
)

from assets.metadata import md_table
from assets.resources import SourcesResource, WarehouseResource
from worldforge.errors import WorldforgeError
from worldforge.settings import get_settings
from worldforge.spec import discover_specs, spec_hash
from worldforge.warehouse import build_world_file, check_world_file

world_partitions = StaticPartitionsDefinition(sorted(discover_specs(get_settings().specs)) or ["none"])

# which invariant (worldforge.synth.invariants) feeds which asset check
CHECKS = {
    "fk_integrity": {"fk_unresolved", "cardinality", "ddl_foreign_key", "pk_null", "pk_unique", "ddl_primary_key", "missing_table"},
    "row_budget": {"row_budget"},
    "declared_constraints": {"unique", "range", "monotone", "check"},
}


@asset(
    partitions_def=world_partitions,
    group_name="worlds",
    check_specs=[AssetCheckSpec(name, asset="world_tables") for name in CHECKS],
)
def world_tables(context: AssetExecutionContext, warehouse: WarehouseResource, sources: SourcesResource) -> MaterializeResult:
    """A seeded fictional world in WAREHOUSE/<world>.duckdb, with PRIMARY/FOREIGN KEY constraints."""
    try:
        built = build_world_file(sources.spec_file(context.partition_key), warehouse.path, with_scenarios=False)
    except (WorldforgeError, FileNotFoundError) as exc:  # a user's spec mistake: show it, not a traceback
        raise Failure(description=str(exc)) from None
    if built.violations:
        raise Failure(
            description=f"world {built.spec.world} breaks {len(built.violations)} invariant(s); the previous file is untouched",
            metadata={"violations": MetadataValue.md("\n".join(f"- {v}" for v in built.violations))},
        )
    _, found = check_world_file(built.path)  # re-read from DuckDB: the file itself is what is checked
    results = []
    for name, kinds in CHECKS.items():
        hits = [v for v in found if v.check in kinds]
        results.append(AssetCheckResult(
            check_name=name, passed=not hits, severity=AssetCheckSeverity.ERROR,
            metadata={"violations": len(hits), "details": MetadataValue.md("\n".join(f"- {v}" for v in hits) or "none")},
        ))
    tables = built.tables
    context.log.info("wrote %s (%d rows)", built.path, sum(f.height for f in tables.values()))
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(built.path)),
            "seed": built.seed,
            "spec_hash": spec_hash(built.spec),
            "total_rows": sum(f.height for f in tables.values()),
            "rows_by_table": MetadataValue.json({t: f.height for t, f in tables.items()}),
            "preview": MetadataValue.md("\n\n".join(f"**{t}** ({f.height} rows)\n\n" + md_table(f, 5).value for t, f in tables.items())),
        },
        check_results=results,
    )
