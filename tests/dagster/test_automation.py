"""The schedule and sensors, evaluated, and the materializations that follow them."""

import shutil
from datetime import datetime, timezone

import pytest
from dagster import DagsterInstance, RunRequest, SkipReason, build_schedule_context, build_sensor_context, materialize

from assets.automation import landing_trajectories, nightly_dataset_build, world_spec_changes
from assets.catalog import catalog_world
from assets.definitions import defs
from assets.resources import SourcesResource, WarehouseResource
from assets.trajectories import trajectory_turns, turn_mask_stats
from assets.worlds import WORLD_ASSETS
from tests.conftest import SPECS_DIR, TRAJECTORIES
from tests.conftest_worlds import age_world
from worldforge import GENERATOR_VERSION
from worldforge.trajectories import load_store

pytestmark = pytest.mark.dagster


def test_definitions_have_the_automation():
    repo = defs.get_repository_def()
    assert {s.name for s in repo.schedule_defs} == {"nightly_dataset_build"}
    assert {s.name for s in repo.sensor_defs} == {"landing_trajectories", "world_spec_changes", "catalog_spec_folder", "closed_recordings"}


def test_nightly_schedule():
    ctx = build_schedule_context(scheduled_execution_time=datetime(2026, 11, 23, 2, 0, tzinfo=timezone.utc))
    req = nightly_dataset_build(ctx)
    assert isinstance(req, RunRequest) and req.run_key == "nightly-2026-11-23"


def test_landing_sensor_then_ingest(tmp_path):
    warehouse = WarehouseResource(root=str(tmp_path))
    ctx = build_sensor_context(resources={"warehouse": warehouse})
    assert isinstance(landing_trajectories(ctx), SkipReason)
    landing = tmp_path / "landing"
    landing.mkdir()
    shutil.copy(next(TRAJECTORIES.glob("swe-agent/**/*.traj")), landing)
    ctx = build_sensor_context(resources={"warehouse": warehouse})
    req = landing_trajectories(ctx)
    assert isinstance(req, RunRequest) and ctx.cursor
    assert isinstance(landing_trajectories(build_sensor_context(cursor=ctx.cursor, resources={"warehouse": warehouse})), SkipReason)
    result = materialize([trajectory_turns, turn_mask_stats], resources={"warehouse": warehouse, "sources": SourcesResource(trajectories=[])},
                         instance=DagsterInstance.ephemeral(), tags=req.tags)
    assert result.success
    store = load_store(tmp_path / "trajectories.duckdb")
    assert store.trajectories["source"].to_list() == ["swe-agent"]


def test_the_world_assets_carry_the_generator_version_in_their_code_version():
    """A bump of worldforge.GENERATOR_VERSION changes the code version of every asset that builds worlds: Dagster shows
    what they built as stale."""
    for asset in [*WORLD_ASSETS.values(), catalog_world]:
        (version,) = asset.code_versions_by_key.values()
        assert version == f"generator-{GENERATOR_VERSION}", (asset.key, version)


def test_spec_change_sensor_then_rebuild(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    spec_file = specs / "mars_colony_2030.yaml"
    spec_file.write_text((SPECS_DIR / "mars_colony_2030.yaml").read_text())
    resources = {"warehouse": WarehouseResource(root=str(tmp_path / "wh")), "sources": SourcesResource(world_specs=str(specs))}

    def evaluate():
        return world_spec_changes(build_sensor_context(resources=resources))

    first = evaluate()
    assert [r.partition_key for r in first] == ["mars_colony_2030"]
    result = materialize([WORLD_ASSETS["world_tables"]], partition_key="mars_colony_2030", resources=resources, instance=DagsterInstance.ephemeral())
    assert result.success
    assert isinstance(evaluate(), SkipReason)  # built from the current spec
    age_world(tmp_path / "wh" / "mars_colony_2030.duckdb", "0")  # the same spec, built by an older generator: stale
    (stale,) = evaluate()
    assert stale.partition_key == "mars_colony_2030" and stale.tags["trigger"] == "generator_version"
    assert stale.run_key.endswith(f"-g{GENERATOR_VERSION}")
    spec_file.write_text(spec_file.read_text().replace("seed: 2030", "seed: 7"))
    changed = evaluate()
    assert [r.partition_key for r in changed] == ["mars_colony_2030"] and changed[0].run_key != first[0].run_key
    spec_file.write_text("world: mars_colony_2030\nnot: valid\n")
    broken = evaluate()
    assert broken[0].run_key.startswith("mars_colony_2030-invalid-")
    failed = materialize([WORLD_ASSETS["world_tables"]], partition_key="mars_colony_2030", resources=resources, instance=DagsterInstance.ephemeral(), raise_on_error=False)
    assert not failed.success and "invalid world spec" in failed.get_step_failure_events()[0].step_failure_data.error.message
