"""The code location: ``dagster dev -m assets.definitions`` (or ``dagster dev`` in the project root)."""

from dagster import Definitions

from assets.automation import datasets_job, landing_trajectories, nightly_dataset_build, world_build_job, world_spec_changes
from assets.datasets import agentworldbench_export, cpt_dataset, sft_dataset, world_model_eval
from assets.resources import DatasetsResource, SourcesResource, WarehouseResource, WorldModelResource
from assets.search import oracle_episodes, scenario_tables, search_corpus, search_index, search_tasks
from assets.trajectories import trajectory_turns, turn_mask_stats
from assets.worlds import world_tables

defs = Definitions(
    assets=[world_tables, scenario_tables, search_corpus, search_index, search_tasks, oracle_episodes, trajectory_turns, turn_mask_stats,
            cpt_dataset, sft_dataset, agentworldbench_export, world_model_eval],
    jobs=[world_build_job, datasets_job],
    schedules=[nightly_dataset_build],
    sensors=[landing_trajectories, world_spec_changes],
    resources={"warehouse": WarehouseResource(), "sources": SourcesResource(), "datasets": DatasetsResource(),
               "world_model": WorldModelResource.for_environment()},
)
