"""Search assets, one partition per world: scenarios, corpus, index and tasks."""

import polars as pl
from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from assets.resources import WarehouseResource
from assets.trajectories import _md
from assets.worlds import world_partitions, world_tables
from worldforge.corpus import build_corpus, build_index, check_corpus
from worldforge.errors import WorldforgeError
from worldforge.scenarios import build_scenarios
from worldforge.tasks import write_tasks
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import check_world_file, read_world, world_path, write_scenarios


@asset(
    partitions_def=world_partitions,
    group_name="scenarios",
    deps=[world_tables],
    check_specs=[AssetCheckSpec("scenario_invariants", asset="scenario_tables")],
    description="Time-shifted copies of the world (schema scenario_<name> in its DuckDB file).",
)
def scenario_tables(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    path = world_path(warehouse.path, context.partition_key)
    wf = read_world(path)
    try:
        scenarios = build_scenarios(wf.spec, wf.tables)
    except WorldforgeError as exc:
        raise Failure(description=str(exc)) from None
    write_scenarios(path, wf.spec, scenarios)
    _, violations = check_world_file(path)
    found = [v for v in violations if v.table.startswith("scenario_")]
    return MaterializeResult(
        metadata={"scenarios": MetadataValue.json({n: sum(f.height for f in t.values()) for n, t in scenarios.items()})},
        check_results=[AssetCheckResult(check_name="scenario_invariants", passed=not found,
                                        metadata={"violations": MetadataValue.md("\n".join(f"- {v}" for v in found) or "none")})],
    )


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[scenario_tables],
    check_specs=[AssetCheckSpec("no_contradicted_fact", asset="search_corpus")],
    description="Pages (entity, ranking, news, comparison, forum) with cell provenance: corpus_pages, corpus_facts.",
)
def search_corpus(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    path = world_path(warehouse.path, context.partition_key)
    report = build_corpus(path)
    bad = check_corpus(path)
    return MaterializeResult(
        metadata={"pages": MetadataValue.json({s or "(world)": n for s, n in report.pages.items()}), "facts": report.facts},
        check_results=[AssetCheckResult(check_name="no_contradicted_fact", passed=bad.height == 0,
                                        metadata={"contradicted": bad.height, "examples": _md(bad.head(10))})],
    )


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[search_corpus],
    description="tantivy BM25 indexes beside the world file (<world>.index, <world>.<scenario>.index).",
)
def search_index(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    path = world_path(warehouse.path, context.partition_key)
    wf = read_world(path)
    dirs = [build_index(path)] + [build_index(path, s) for s in wf.scenarios]
    return MaterializeResult(metadata={"indexes": MetadataValue.json([str(d) for d in dirs])})


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[search_corpus],
    check_specs=[AssetCheckSpec("every_task_solvable", asset="search_tasks")],
    description="WideSearch-style tasks (search_tasks table) exported to WAREHOUSE/tasks/<world>/.",
)
def search_tasks(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    path = world_path(warehouse.path, context.partition_key)
    built = build_tasks(path)
    out = write_tasks(built.tasks, warehouse.path / "tasks" / context.partition_key)
    kinds = pl.DataFrame({"kind": [t.extra["kind"] for t in built.tasks]}).group_by("kind").len().sort("kind")
    return MaterializeResult(
        metadata={"tasks": len(built.tasks), "export": MetadataValue.path(str(out)), "by_kind": _md(kinds)},
        check_results=[AssetCheckResult(check_name="every_task_solvable", passed=not built.unsolvable,
                                        metadata={"unsolvable": MetadataValue.json(built.unsolvable)})],
    )
