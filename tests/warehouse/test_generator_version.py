"""A world knows what built it: ``_world.generator_version`` records :data:`worldforge.GENERATOR_VERSION`; a file
written by another version, or before the version was recorded, reads as stale (never an error), ``worldforge summary``
names it, and ``world run`` on it rebuilds it from its stored spec rather than building on it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.conftest_worlds import age_world
from worldforge import GENERATOR_VERSION
from worldforge.cli import app
from worldforge.pipeline import run_world, select_steps
from worldforge.summary import summarise
from worldforge.synth import build_world
from worldforge.warehouse import Warehouse, generator_version, is_stale, read_world, write_world


@pytest.fixture
def two_worlds(specs, tmp_path):
    """A warehouse of two worlds: smartphones_2029 current, mars_colony_2030 from before the version was recorded."""
    wh = Warehouse(tmp_path / "wh")
    paths = {}
    for name in ("smartphones_2029", "mars_colony_2030"):
        spec = specs[name]
        paths[name] = write_world(spec, build_world(spec, 5), wh, seed=5)
    age_world(paths["mars_colony_2030"])
    return wh, paths


def test_a_world_records_its_generator_version(specs, tmp_path):
    assert isinstance(GENERATOR_VERSION, str) and GENERATOR_VERSION
    path = write_world(specs["esports_2031"], build_world(specs["esports_2031"]), Warehouse(tmp_path))
    wf = read_world(path)
    assert generator_version(path) == wf.generator_version == wf.meta["generator_version"] == GENERATOR_VERSION
    assert not wf.stale and not is_stale(GENERATOR_VERSION)
    age_world(path, "0")
    assert generator_version(path) == read_world(path).generator_version == "0" and read_world(path).stale


def test_a_file_from_before_the_version_reads_as_unknown_and_stale(two_worlds):
    _, paths = two_worlds
    old = paths["mars_colony_2030"]
    wf = read_world(old)  # no crash: the spec and tables read as before
    assert "generator_version" not in wf.meta and wf.generator_version is None and wf.stale
    assert generator_version(old) is None and is_stale(None)
    assert wf.tables and wf.spec.world == "mars_colony_2030"


def test_summary_names_the_stale_worlds(two_worlds):
    wh, _ = two_worlds
    s = summarise(wh)
    by = {w.world: w for w in s.worlds}
    assert s.stale == ["mars_colony_2030"]
    assert by["mars_colony_2030"].stale and by["mars_colony_2030"].generator_version is None
    assert not by["smartphones_2029"].stale and by["smartphones_2029"].generator_version == GENERATOR_VERSION
    out = CliRunner().invoke(app, ["summary", "--warehouse", str(wh.root)], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "stale worlds: 1 (mars_colony_2030)" in out.output and "unknown (stale)" in out.output


def test_world_run_rebuilds_a_stale_world_from_its_stored_spec(two_worlds):
    wh, paths = two_worlds
    before = read_world(paths["mars_colony_2030"])
    results = run_world(None, wh, steps=select_steps("scenario_tables"), world="mars_colony_2030")
    assert [r.step for r in results] == ["world_tables", "scenario_tables"]  # rebuilt, not built upon
    assert "generator version unknown" in results[0].metadata["rebuilt_stale"] and not any(r.failed_checks for r in results)
    after = read_world(paths["mars_colony_2030"])
    assert after.generator_version == GENERATOR_VERSION and not after.stale and after.meta["seed"] == 5
    assert after.spec == before.spec and all(after.tables[t].equals(f) for t, f in before.tables.items())  # same spec, same seed
    # a current world is built upon as before: only the selected step runs
    again = run_world(None, wh, steps=select_steps("scenario_tables"), world="smartphones_2029")
    assert [r.step for r in again] == ["scenario_tables"]


def test_the_cli_says_it_rebuilt_a_stale_world(two_worlds):
    wh, paths = two_worlds
    age_world(paths["smartphones_2029"], "0")
    out = CliRunner().invoke(app, ["world", "run", "smartphones_2029", "--steps", "scenario_tables", "--warehouse", str(wh.root)],
                             env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    assert "stale world" in out.output and "generator version 0" in out.output and "world_tables" in out.output
    assert generator_version(paths["smartphones_2029"]) == GENERATOR_VERSION
