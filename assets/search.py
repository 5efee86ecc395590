"""Search assets, one partition per world: scenarios, corpus, index, tasks and oracle episodes."""

import polars as pl
from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, Config, Failure, MaterializeResult, MetadataValue, asset

from assets.metadata import md_table, tally_metadata
from assets.resources import WarehouseResource
from assets.worlds import world_partitions, world_tables
from worldforge.corpus import build_checked_corpus, index_corpora, writer_config
from worldforge.errors import WorldforgeError
from worldforge.llm import BackendError
from worldforge.scenarios import build_scenarios
from worldforge.simenv.oracle import run_oracle_suite
from worldforge.tasks.store import build_and_export_tasks
from worldforge.warehouse import check_world_file, read_world, world_path, write_scenarios
from worldforge.warehouse.layout import tasks_dir


@asset(
    partitions_def=world_partitions,
    group_name="scenarios",
    deps=[world_tables],
    check_specs=[AssetCheckSpec("scenario_invariants", asset="scenario_tables")],
)
def scenario_tables(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """Time-shifted copies of the world (schema scenario_<name> in its DuckDB file)."""
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


class CorpusConfig(Config):
    """Who writes the prose pages (``worldforge corpus build --writer``): ``template``, or ``openai`` (a model behind an
    OpenAI-compatible server at ``base_url``, empty: ``WORLDFORGE_VLLM_URL``; ``model`` empty: ``WORLDFORGE_VLLM_MODEL``,
    else the first one served). A page is kept only when every value checks out; replies are cached under the warehouse."""

    writer: str = "template"
    base_url: str = ""
    model: str = ""
    max_rounds: int = 2
    concurrency: int = 8
    limit: int | None = None


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[scenario_tables],
    check_specs=[AssetCheckSpec("no_contradicted_fact", asset="search_corpus")],
)
def search_corpus(context: AssetExecutionContext, warehouse: WarehouseResource, config: CorpusConfig) -> MaterializeResult:
    """Pages in eleven web genres (encyclopedia, news, press release, ranking, profile, comparison, forum, dataset, timeline,
    rumor, archive) with cell provenance: corpus_pages, corpus_facts."""
    try:
        writer = writer_config(config.writer, base_url=config.base_url or None, model=config.model or None, max_rounds=config.max_rounds,
                               concurrency=config.concurrency, limit=config.limit)
        built = build_checked_corpus(world_path(warehouse.path, context.partition_key), writer=writer)
    except (BackendError, ValueError) as exc:  # a bad writer config or an unreachable server: one line, nothing written
        raise Failure(description=str(exc)) from None
    bad = built.contradictions
    written = {} if built.writer is None else {"writer": MetadataValue.json(built.writer.to_dict()), "writer_balance": built.writer.summary()}
    return MaterializeResult(
        metadata={"pages": MetadataValue.json({s or "(world)": n for s, n in built.report.pages.items()}), "facts": built.report.facts,
                  **tally_metadata(built.tally), **written},
        check_results=[AssetCheckResult(check_name="no_contradicted_fact", passed=bad.height == 0,
                                        metadata={"contradicted": bad.height, "examples": md_table(bad, 10)})],
    )


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[search_corpus],
)
def search_index(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """tantivy BM25 indexes beside the world file (<world>.index, <world>.<scenario>.index)."""
    dirs = index_corpora(world_path(warehouse.path, context.partition_key))
    return MaterializeResult(metadata={"indexes": MetadataValue.json([str(d) for d in dirs])})


@asset(
    partitions_def=world_partitions,
    group_name="corpora",
    deps=[search_corpus],
    check_specs=[AssetCheckSpec("every_task_solvable", asset="search_tasks")],
)
def search_tasks(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """WideSearch-style tasks of nine kinds (search_tasks table: question, gold, evaluation, plan, provenance) exported to WAREHOUSE/tasks/<world>/."""
    world = context.partition_key
    out = tasks_dir(warehouse.path, world)
    built = build_and_export_tasks(world_path(warehouse.path, world), out)
    kinds = (pl.DataFrame({"kind": [t.extra["kind"] for t in built.tasks], "rows": [len(t.gold) for t in built.tasks],
                           "columns": [len(t.required) for t in built.tasks]})
             .group_by("kind").agg(pl.len().alias("tasks"), pl.col("rows").median().alias("median rows"), pl.col("columns").median().alias("median columns"))
             .sort("kind"))
    return MaterializeResult(
        metadata={"tasks": len(built.tasks), "export": MetadataValue.path(str(out / "tasks.jsonl")), "by_kind": md_table(kinds),
                  **tally_metadata(built.tally)},
        check_results=[AssetCheckResult(check_name="every_task_solvable", passed=not built.unsolvable,
                                        metadata={"unsolvable": MetadataValue.json(built.unsolvable)})],
    )


@asset(
    partitions_def=world_partitions,
    group_name="simenv",
    pool="episodes_db",
    deps=[search_index, search_tasks],
    check_specs=[AssetCheckSpec("oracle_solves_every_task", asset="oracle_episodes"), AssetCheckSpec("no_leakage", asset="oracle_episodes")],
)
def oracle_episodes(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    """Oracle-agent episodes in the simulated search environment, clean and under the default perturbation mix (episodes.duckdb)."""
    suite = run_oracle_suite(context.partition_key, warehouse.path)
    clean, noisy = suite.clean, suite.perturbed
    return MaterializeResult(
        metadata={
            "path": MetadataValue.path(str(suite.path)), "episodes": len(suite.episodes), "steps": sum(len(e.steps) for e in suite.episodes),
            "clean_mean_f1": sum(e.f1_by_item or 0 for e in clean) / max(len(clean), 1),
            "perturbed_mean_f1": sum(e.f1_by_item or 0 for e in noisy) / max(len(noisy), 1),
            "perturbations_fired": suite.fired,
        },
        check_results=[
            AssetCheckResult(check_name="oracle_solves_every_task", passed=suite.solved, metadata={
                "clean_below_1": [e.task_id for e in clean if e.f1_by_item != 1.0], "perturbed_unfinished": [e.task_id for e in noisy if not e.finished]}),
            AssetCheckResult(check_name="no_leakage", passed=suite.leak_free,
                             metadata={"unrelated_queries": suite.probed, "gold_cells_revealed": suite.leaked}),
        ],
    )
