"""The code location: ``dagster dev -m assets.definitions`` (or ``dagster dev`` in the project root)."""

from dagster import Definitions, ExecutorDefinition

from assets.automation import datasets_job, landing_trajectories, nightly_dataset_build, world_build_job, world_spec_changes
from assets.catalog import catalog_job, catalog_report, catalog_spec_folder, catalog_world
from assets.datasets import agentworldbench_export, cpt_dataset, sft_dataset, world_model_eval
from assets.executors import executor_for
from assets.recordings import closed_recordings, recorded_sessions_job
from assets.resources import DatasetsResource, SourcesResource, WarehouseResource, WorldModelResource
from assets.trajectories import trajectory_shards, trajectory_turns, turn_mask_stats
from assets.worlds import WORLD_ASSETS


def build_definitions(executor: ExecutorDefinition | None = None) -> Definitions:
    """The code location; ``executor`` defaults to the one ``WORLDFORGE_EXECUTOR`` names (see assets/executors.py)."""
    return Definitions(
        assets=[*WORLD_ASSETS.values(), trajectory_turns, turn_mask_stats, trajectory_shards,
                cpt_dataset, sft_dataset, agentworldbench_export, world_model_eval, catalog_world, catalog_report],
        jobs=[world_build_job, datasets_job, catalog_job, recorded_sessions_job],
        schedules=[nightly_dataset_build],
        sensors=[landing_trajectories, world_spec_changes, catalog_spec_folder, closed_recordings],
        executor=executor or executor_for(),
        resources={"warehouse": WarehouseResource(), "sources": SourcesResource(), "datasets": DatasetsResource(),
                   "world_model": WorldModelResource.for_environment()},
    )


defs = build_definitions()
