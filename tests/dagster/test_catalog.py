"""The catalog assets: the spec-folder sensor adds a partition per spec; each partition builds one world and its row."""

import pytest
import yaml
from dagster import DagsterInstance, SensorResult, SkipReason, build_sensor_context, materialize

from assets.catalog import catalog_partitions, catalog_report, catalog_spec_folder, catalog_world
from assets.resources import SourcesResource, WarehouseResource
from tests.conftest import SPECS_DIR
from worldforge.catalog.build import read_catalog
from worldforge.warehouse import Warehouse

pytestmark = pytest.mark.dagster


def test_sensor_partitions_then_two_worlds_and_a_broken_one(tmp_path):
    specs, wh = tmp_path / "specs", Warehouse(tmp_path / "wh")
    specs.mkdir()
    text = (SPECS_DIR / "esports_2031.yaml").read_text()
    for name, seed in (("cat_a", 1), ("cat_b", 2)):
        doc = yaml.safe_load(text)
        doc.update(world=name, seed=seed, archetype="esports")
        (specs / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    (specs / "cat_broken.yaml").write_text(text.replace("world: esports_2031", "world: cat_broken\nbogus: 1"))
    resources = {"warehouse": WarehouseResource(root=str(wh)), "sources": SourcesResource(world_specs=str(SPECS_DIR), catalog_specs=str(specs))}
    instance = DagsterInstance.ephemeral()

    result = catalog_spec_folder(build_sensor_context(instance=instance, resources=resources))
    assert isinstance(result, SensorResult)
    assert [r.partition_keys for r in result.dynamic_partitions_requests] == [["cat_a", "cat_b", "cat_broken"]]
    assert sorted(r.partition_key for r in result.run_requests) == ["cat_a", "cat_b", "cat_broken"]
    instance.add_dynamic_partitions(catalog_partitions.name, ["cat_a", "cat_b", "cat_broken"])

    for key in ("cat_a", "cat_b"):
        done = materialize([catalog_world], partition_key=key, resources=resources, instance=instance)
        assert done.success
        meta = done.asset_materializations_for_node("catalog_world")[0].metadata
        assert meta["outcome"].value == "built" and meta["figures"].value["oracle_f1_min"] == 1.0
    rows = read_catalog(wh)
    assert [(r.world, r.status) for r in rows] == [("cat_a", "built"), ("cat_b", "built")]

    broken = materialize([catalog_world], partition_key="cat_broken", resources=resources, instance=instance, raise_on_error=False)
    assert not broken.success
    assert "bogus: unknown field" in broken.get_step_failure_events()[0].step_failure_data.error.message
    after = read_catalog(wh)
    assert after[:2] == rows and (after[2].world, after[2].status) == ("cat_broken", "failed")

    # an unchanged spec is skipped; the sensor has nothing left to do
    again = materialize([catalog_world], partition_key="cat_a", resources=resources, instance=instance)
    assert again.asset_materializations_for_node("catalog_world")[0].metadata["outcome"].value == "skipped"
    assert isinstance(catalog_spec_folder(build_sensor_context(instance=instance, resources=resources)), SkipReason)

    report = materialize([catalog_report], resources=resources, instance=instance)
    meta = report.asset_materializations_for_node("catalog_report")[0].metadata
    assert (meta["worlds"].value, meta["built"].value, meta["failed"].value, meta["signatures"].value) == (3, 2, 1, 1)
    assert "| esports | 2 |" in meta["archetypes"].value

    (specs / "cat_broken.yaml").unlink()
    result = catalog_spec_folder(build_sensor_context(instance=instance, resources=resources))
    assert [r.partition_keys for r in result.dynamic_partitions_requests] == [["cat_broken"]] and not result.run_requests
