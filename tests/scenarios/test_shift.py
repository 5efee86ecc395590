import math
from datetime import date

import duckdb
import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import BUNDLED, SPECS_DIR
from worldforge.cli import app
from worldforge.scenarios import ScenarioError, build_scenarios, scenario_spec, shift_world
from worldforge.spec.models import ScenarioSpec
from worldforge.synth import build_world, check_world
from worldforge.warehouse import Warehouse, write_world
from worldforge.world import check_world_file


@pytest.fixture(scope="module")
def mars(specs):
    spec = specs["mars_colony_2030"]
    tables = build_world(spec, 4)
    return spec, tables, build_scenarios(spec, tables)


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_scenarios_pass_the_same_invariants(specs, name):
    spec = specs[name]
    for seed in range(4):
        tables = build_world(spec, seed)
        for sc in spec.scenarios:
            out = shift_world(spec, tables, sc)
            assert check_world(scenario_spec(spec, sc), out) == []
            assert {t: f.height for t, f in out.items()} == {t: f.height for t, f in tables.items()}


def test_every_date_moves_and_derived_dates_follow(mars):
    spec, base, scen = mars
    shifted = scen["census_2032"]
    for tname, table in spec.tables.items():
        for cname, col in table.columns.items():
            if col.kind == "date":  # drawn dates move by exactly 2 years; derived ones follow their expressions
                years = (shifted[tname][cname].dt.year() - base[tname][cname].dt.year()).unique().to_list()
                assert years == [2], (tname, cname)
    m = shifted["missions"]
    assert m.select((pl.col("end_date") == pl.col("start_date") + pl.duration(days=pl.col("duration_days"))).all()).item()


def test_ages_and_durations_are_recomputed_at_the_as_of_date(mars):
    spec, base, scen = mars
    for name, as_of in [("census_2032", date(2032, 6, 30)), ("year_end_2030", date(2030, 12, 31))]:
        r = scen[name]["residents"]
        for birth, arrival, age, sols in r.select("birth_date", "arrival_date", "age_at_census", "sols_on_mars").iter_rows():
            assert age == math.floor((as_of - birth).days / 365.25)
            assert sols == math.floor((as_of - arrival).days / 1.0275)
    # same people, observed 184 days later: everyone has spent 184 / 1.0275 ≈ 179 more sols
    later = scen["year_end_2030"]["residents"]["sols_on_mars"] - base["residents"]["sols_on_mars"]
    assert later.min() >= 178 and later.max() <= 180


def test_shift_recomputes_aggregates_and_ranks(specs):
    spec = specs["smartphones_2029"]
    base = build_world(spec, 2)
    out = shift_world(spec, base, spec.scenarios[0])
    assert out["brands"].sort("market_rank")["shipments_k"].is_sorted(descending=True)
    assert out["models"]["days_on_market"].to_list() == base["models"]["days_on_market"].to_list()  # both ends moved 2 years
    assert out["models"]["launch_date"].dt.year().min() == 2031


def test_a_scenario_that_breaks_an_invariant_names_the_row(mars):
    spec, base, _ = mars
    with pytest.raises(ScenarioError) as info:
        shift_world(spec, base, ScenarioSpec(name="too_early", as_of="Y-3-01-01"))
    assert info.value.violations[0].check == "not_after_as_of"
    assert "resident_id=" in str(info.value) and "nothing written" in str(info.value)


def test_scenarios_are_stored_with_the_same_constraints(mars, tmp_path):
    spec, base, scen = mars
    path = write_world(spec, base, Warehouse(tmp_path), 4, scen)
    wf, violations = check_world_file(path)
    assert violations == [] and set(wf.scenarios) == {"census_2032", "year_end_2030"}
    schemas = {(r["schema_name"], r["table_name"]) for r in wf.declared.iter_rows(named=True) if r["constraint_type"] == "FOREIGN KEY"}
    assert ("scenario_census_2032", "residents") in schemas
    con = duckdb.connect(str(path))
    with pytest.raises(duckdb.ConstraintException):
        con.execute("INSERT INTO scenario_census_2032.missions (mission_id, lead_resident_id) VALUES (9999, 123456)")
    con.execute("UPDATE scenario_census_2032.residents SET arrival_date = DATE '2040-01-01' WHERE resident_id = 1")
    con.close()
    _, violations = check_world_file(path)
    assert [(v.table, v.check) for v in violations] == [("scenario_census_2032.residents", "not_after_as_of")]


def test_cli_refuses_a_breaking_scenario_and_writes_nothing(tmp_path):
    doc = yaml.safe_load((SPECS_DIR / "mars_colony_2030.yaml").read_text())
    doc["scenarios"].append({"name": "too_early", "as_of": "Y-3-01-01"})
    spec_file = tmp_path / "mars.yaml"
    spec_file.write_text(yaml.safe_dump(doc))
    r = CliRunner().invoke(app, ["world", "build", str(spec_file), "--warehouse", str(tmp_path / "wh")])
    assert r.exit_code == 2 and "scenario 'too_early'" in r.output and "not_after_as_of" in r.output
    assert not (tmp_path / "wh").exists()
