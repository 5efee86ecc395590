"""Materialize the whole Dagster graph into a temporary warehouse."""

import duckdb
import pytest
from dagster import DagsterInstance, materialize

from assets.datasets import agentworldbench_export, cpt_dataset, sft_dataset, world_model_eval
from assets.definitions import defs
from assets.resources import DatasetsResource, SourcesResource, WarehouseResource, WorldModelResource
from assets.trajectories import trajectory_shards, trajectory_turns, turn_mask_stats
from assets.worlds import WORLD_ASSETS, world_partitions
from tests.conftest import BUNDLED, SPECS_DIR, TRAJECTORIES

pytestmark = pytest.mark.dagster


def test_definitions_load():
    repo = defs.get_repository_def()
    keys = {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()}
    assert keys == {"world_tables", "scenario_tables", "search_corpus", "search_index", "search_tasks", "oracle_episodes",
                    "trajectory_turns", "turn_mask_stats", "trajectory_shards", "cpt_dataset", "sft_dataset", "agentworldbench_export", "world_model_eval",
                    "catalog_world", "catalog_report"}
    assert world_partitions.get_partition_keys() == BUNDLED


def test_materialize_whole_graph(tmp_path):
    resources = {
        "warehouse": WarehouseResource(root=str(tmp_path)),
        "sources": SourcesResource(world_specs=str(SPECS_DIR), trajectories=[str(TRAJECTORIES)]),
    }
    instance = DagsterInstance.ephemeral()
    graph = list(WORLD_ASSETS.values())
    # one world partition runs every world asset and check; each bundled world's steps are tested in the library
    # (tests/simenv, tests/corpus, tests/tasks, test_pipeline), so three partitions here only tripled the time
    for key in ["esports_2031"]:
        assert key in world_partitions.get_partition_keys()
        result = materialize(graph, partition_key=key, resources=resources, instance=instance)
        assert result.success
        checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
        assert checks == {"fk_integrity": True, "row_budget": True, "declared_constraints": True,
                          "scenario_invariants": True, "no_contradicted_fact": True, "every_task_solvable": True,
                          "oracle_solves_every_task": True, "no_leakage": True, "deep_answers_unique": True,
                          "oracle_answers_every_deep_question": True}
        meta = result.asset_materializations_for_node("world_tables")[0].metadata
        assert 300 <= meta["total_rows"].value <= 500
        assert meta["preview"].value.count("| ---") == 0 and "|---|" in meta["preview"].value
        assert (tmp_path / f"{key}.duckdb").is_file() and (tmp_path / f"{key}.index").is_dir()
        assert (tmp_path / "tasks" / key / "tasks.jsonl").is_file()

    result = materialize([trajectory_turns, turn_mask_stats], resources=resources, instance=instance)
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"records_balance": True, "statistics_complete": True}
    meta = result.asset_materializations_for_node("trajectory_turns")[0].metadata
    assert meta["inputs"].value == meta["trajectories"].value + meta["quarantined"].value == 1417
    stats = result.asset_materializations_for_node("turn_mask_stats")[0].metadata
    assert stats["plot_mask_statistics"].value.startswith("![mask_statistics](data:image/png;base64,")
    assert (tmp_path / "reports" / "informative_share.png").is_file()
    con = duckdb.connect(str(tmp_path / "trajectories.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM turns WHERE informative IS NULL").fetchone()[0] == 0
    per_source = dict(con.execute("SELECT t.source, count(*) FROM turns JOIN trajectories t USING (trajectory_id) GROUP BY 1").fetchall())
    con.close()

    # ingestion registered one shard partition per source; each shard holds that source's turns
    assert sorted(instance.get_dynamic_partitions("trajectory_sources")) == sorted(per_source)
    result = materialize([trajectory_shards], partition_key="intercode", resources=resources, instance=instance)
    assert result.success and [e.passed for e in result.get_asset_check_evaluations()] == [True]
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{tmp_path / 'trajectories' / 'intercode.parquet'}')").fetchall()[0][0] == per_source["intercode"]

    # the datasets, the held-out export and its evaluation, on the real trajectories and the worlds' episodes
    resources |= {"datasets": DatasetsResource(tokenizer="", cpt_max_tokens=2048, eval_max_records_per_source=10),
                  "world_model": WorldModelResource.for_environment("local")}
    result = materialize([cpt_dataset, sft_dataset, agentworldbench_export, world_model_eval], resources=resources, instance=instance)
    assert result.success
    checks = {(e.asset_key.to_user_string(), e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {("cpt_dataset", "records_balance"): True, ("cpt_dataset", "mask_matches_informative"): True,
                      ("cpt_dataset", "loss_share"): True, ("sft_dataset", "records_balance"): True,
                      ("sft_dataset", "acceptance_rates"): True, ("agentworldbench_export", "records_balance"): True,
                      ("agentworldbench_export", "disjoint_from_training"): True, ("world_model_eval", "predictions_balance"): True}
    sft = result.asset_materializations_for_node("sft_dataset")[0].metadata
    assert sft["variant"].value == "non-thinking" and sft["plot_acceptance"].value.startswith("![acceptance](data:image/png;base64,")
    ev = result.asset_materializations_for_node("world_model_eval")[0].metadata
    assert ev["backend"].value.startswith("grounded") and ev["predicted"].value > 0  # simulated episodes re-render exactly
    import datasets as hf

    for name, parquet in (("cpt", "cpt.parquet"), ("sft", "sft.parquet"), ("agentworldbench", "test.parquet")):
        ds = hf.load_dataset("parquet", data_files=str(tmp_path / "datasets" / name / parquet), split="train")
        assert len(ds) > 0 and (tmp_path / "datasets" / name / "README.md").is_file()
    assert sorted(p.name for p in (tmp_path / "datasets" / "agentworldbench").glob("*_test.jsonl"))


def test_a_broken_spec_fails_its_partition(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "smartphones_2029.yaml").write_text((SPECS_DIR / "smartphones_2029.yaml").read_text().replace("target_year: 2029", "target_year: 2029\nbogus: 1"))
    resources = {"warehouse": WarehouseResource(root=str(tmp_path / "wh")), "sources": SourcesResource(world_specs=str(specs), trajectories=[])}
    result = materialize([WORLD_ASSETS["world_tables"]], partition_key="smartphones_2029", resources=resources, instance=DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert failure.cls_name == "Failure"
    assert "smartphones_2029.yaml: invalid world spec" in failure.message and "bogus: unknown field" in failure.message
    assert not (tmp_path / "wh" / "smartphones_2029.duckdb").exists()


def test_the_index_asset_takes_its_retriever_from_the_run_config(tmp_path, specs):
    """search_index with `retriever: hybrid` and a model folder in its run config builds the dense indexes and says so in
    its metadata; dense without a model fails the run with one line, the BM25 index untouched."""
    pytest.importorskip("faiss")
    from tests.conftest_worlds import built_world
    from worldforge.corpus import dense_dir, read_corpus
    from worldforge.retrieval.tiny import build_tiny_embedding_model

    wh = tmp_path / "wh"
    path = built_world(specs["smartphones_2029"], wh)
    model = build_tiny_embedding_model(tmp_path / "model", texts=read_corpus(path, None, dressed=False)[0]["body_md"].to_list())
    resources = {"warehouse": WarehouseResource(root=str(wh)), "sources": SourcesResource(world_specs=str(SPECS_DIR), trajectories=[])}
    asset = [WORLD_ASSETS["search_index"]]
    config = {"ops": {"search_index": {"config": {"retriever": "hybrid", "embedding_model": str(model)}}}}
    result = materialize(asset, partition_key="smartphones_2029", resources=resources, instance=DagsterInstance.ephemeral(), run_config=config)
    assert result.success
    meta = result.asset_materializations_for_node("search_index")[0].metadata
    assert meta["retriever"].value == "hybrid" and meta["vectors"].value == sum(
        read_corpus(path, s, dressed=False)[0].height for s in (None, "market_2031"))
    assert (dense_dir(path) / "vectors.faiss").is_file()
    bad = {"ops": {"search_index": {"config": {"retriever": "dense", "embedding_model": ""}}}}
    result = materialize(asset, partition_key="smartphones_2029", resources=resources, instance=DagsterInstance.ephemeral(),
                         run_config=bad, raise_on_error=False)
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert failure.cls_name == "Failure" and "needs an embedding model" in failure.message
