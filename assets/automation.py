"""Automation: the nightly build, a landing-folder sensor and a spec-change sensor."""

import hashlib
from pathlib import Path

from dagster import (
    AssetSelection,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SkipReason,
    define_asset_job,
    schedule,
    sensor,
)

from assets.resources import SourcesResource, WarehouseResource
from worldforge.pipeline import step_names

WORLD_ASSET_NAMES = step_names()
"""The world assets' names (the steps'; the definitions themselves are :data:`assets.worlds.WORLD_ASSETS`)."""
TRAJECTORY_ASSETS = ["trajectory_turns", "turn_mask_stats"]
DATASET_ASSETS = ["cpt_dataset", "sft_dataset", "agentworldbench_export", "world_model_eval"]

world_build_job = define_asset_job("world_build", selection=AssetSelection.assets(*WORLD_ASSET_NAMES), description="One world: tables to oracle episodes.")
datasets_job = define_asset_job(
    "nightly_datasets", selection=AssetSelection.assets(*TRAJECTORY_ASSETS, *DATASET_ASSETS),
    description="Trajectories and their loss-mask statistics, then the CPT and SFT datasets, the AgentWorldBench export and its evaluation.",
)


@schedule(job=datasets_job, cron_schedule="0 2 * * *", execution_timezone="UTC", default_status=DefaultScheduleStatus.STOPPED)
def nightly_dataset_build(context):
    """Every night at 02:00 UTC: re-ingest the trajectory sources, recompute the masks, rebuild the datasets and evaluate."""
    return RunRequest(run_key=f"nightly-{context.scheduled_execution_time:%Y-%m-%d}", tags={"trigger": "schedule"})


def _landing_state(landing: Path) -> str:
    files = sorted((p.relative_to(landing).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in landing.rglob("*") if p.is_file())
    return hashlib.sha256(repr(files).encode()).hexdigest() if files else ""


@sensor(job=datasets_job, minimum_interval_seconds=30, default_status=DefaultSensorStatus.STOPPED)
def landing_trajectories(context: SensorEvaluationContext, warehouse: WarehouseResource):
    """Files dropped into WAREHOUSE/landing/ are ingested with the other trajectory sources."""
    landing = warehouse.get().landing
    state = _landing_state(landing) if landing.is_dir() else ""
    if not state:
        return SkipReason(f"nothing in {landing}")
    if state == context.cursor:
        return SkipReason("no new or changed files in the landing folder")
    context.update_cursor(state)
    return RunRequest(run_key=f"landing-{state[:16]}", tags={"trigger": "landing"})


@sensor(job=world_build_job, minimum_interval_seconds=30, default_status=DefaultSensorStatus.STOPPED)
def world_spec_changes(context: SensorEvaluationContext, warehouse: WarehouseResource, sources: SourcesResource):
    """Rebuild a world (and everything downstream) when its spec file changes, was never built, or its world file is stale
    (built by another :data:`worldforge.GENERATOR_VERSION`).

    A spec that fails validation still gets its run: it fails with the spec error, and the
    other worlds are unaffected.
    """
    from assets.worlds import world_partitions
    from worldforge import GENERATOR_VERSION
    from worldforge.errors import SpecError, WarehouseError
    from worldforge.spec import discover_specs, load_spec, spec_hash
    from worldforge.warehouse import read_world

    known = set(world_partitions.get_partition_keys())
    requests = []
    for name, spec_file in discover_specs(sources.world_specs).items():
        if name not in known:
            context.log.info("%s is new: reload the code location to add its partition", spec_file)
            continue
        try:
            wanted = spec_hash(load_spec(spec_file))
        except SpecError:  # still requested: the run fails with the spec error
            wanted = "invalid-" + hashlib.sha256(spec_file.read_bytes()).hexdigest()
        built = warehouse.get().world(name)
        try:
            wf = read_world(built) if built.exists() else None
        except WarehouseError:
            wf = None
        if wf is not None and wf.meta["spec_hash"] == wanted and not wf.stale:
            continue
        stale = wf is not None and wf.meta["spec_hash"] == wanted
        requests.append(RunRequest(partition_key=name, run_key=f"{name}-{wanted[:24]}-g{GENERATOR_VERSION}",
                                   tags={"trigger": "generator_version" if stale else "spec_change"}))
    return requests or SkipReason("every world is built from its current spec by this generator version")
