"""Generated tables honour every reference shape: roles with rules between them, junctions, hierarchies, optional references."""

import copy
from collections import Counter

import polars as pl
import pytest
import yaml

from tests.conftest import ROOT
from tests.synth.test_generate import digest
from worldforge.errors import GenerationError
from worldforge.scenarios import build_scenarios
from worldforge.spec import load_spec, spec_from_dict
from worldforge.synth import build_world, check_world
from worldforge.synth.assign import match, spread, tree

BENCH = ROOT / "bench" / "specs"
SHAPES = ["football_fixtures", "course_enrolments", "org_chart", "film_sequels", "sensor_means"]
SEEDS = range(6)


@pytest.fixture(scope="module")
def shape_specs():
    return {name: load_spec(BENCH / f"{name}.yaml") for name in SHAPES}


def doc(name: str) -> dict:
    return copy.deepcopy(yaml.safe_load((BENCH / f"{name}.yaml").read_text()))


@pytest.mark.parametrize("name", SHAPES)
def test_shapes_are_consistent_and_deterministic(shape_specs, name):
    spec = shape_specs[name]
    for seed in SEEDS:
        tables = build_world(spec, seed)
        assert check_world(spec, tables) == [], f"seed {seed}"
    assert digest(build_world(spec, 3)) == digest(build_world(spec, 3))
    assert digest(build_world(spec, 3)) != digest(build_world(spec, 4))


def test_roles_never_match_a_team_with_itself(shape_specs):
    spec = shape_specs["football_fixtures"]
    for seed in SEEDS:
        m = build_world(spec, seed)["matches"]
        assert m.filter(pl.col("home_team_id") == pl.col("away_team_id")).height == 0
        assert m.select("home_team_id", "away_team_id").is_duplicated().sum() == 0
        for ref in ("home_team_id", "away_team_id"):
            counts = m[ref].value_counts()["count"]
            assert counts.min() >= 9 and counts.max() <= 11 and m[ref].n_unique() == 20


def test_role_rules_hold_without_cardinalities():
    """Plain (uniform) references: the != check and the unique pair are still met by swapping."""
    d = doc("football_fixtures")
    for ref in ("home_team_id", "away_team_id"):
        del d["tables"]["matches"]["columns"][ref]["cardinality"]
    d["tables"]["matches"]["rows"] = 200
    spec = spec_from_dict(d)
    for seed in SEEDS:
        tables = build_world(spec, seed)
        m = tables["matches"]
        assert m.filter(pl.col("home_team_id") == pl.col("away_team_id")).height == 0
        assert check_world(spec, tables) == []


def test_role_aggregates_follow_their_own_reference(shape_specs):
    t = build_world(shape_specs["football_fixtures"], 2)
    m, teams = t["matches"], t["teams"]
    home = m.group_by("home_team_id").agg(pl.len().alias("n"), pl.col("home_goals").sum().alias("g"))
    got = teams.join(home, left_on="team_id", right_on="home_team_id")
    assert (got["home_games"] == got["n"]).all() and (got["home_goals_scored"] == got["g"]).all()


def test_junction_honours_both_cardinalities(shape_specs):
    spec = shape_specs["course_enrolments"]
    for seed in SEEDS:
        t = build_world(spec, seed)
        e = t["enrolments"]
        per_course = Counter(e["course_id"].to_list())
        per_student = Counter(e["student_id"].to_list())
        assert len(per_course) == 20 and all(10 <= c <= 14 for c in per_course.values())
        assert all(0 <= per_student.get(s, 0) <= 3 for s in t["students"]["student_id"])
        assert e.select("course_id", "student_id").is_duplicated().sum() == 0


def test_junction_without_a_unique_constraint_still_avoids_repeated_pairs():
    d = doc("course_enrolments")
    d["tables"]["enrolments"]["constraints"] = []
    spec = spec_from_dict(d)
    for seed in SEEDS:
        e = build_world(spec, seed)["enrolments"]
        assert e.select("course_id", "student_id").is_duplicated().sum() == 0
        assert check_world(spec, {**build_world(spec, seed)}) == []


def test_hierarchy_is_a_bounded_forest_with_deep_chains(shape_specs):
    spec = shape_specs["org_chart"]
    for seed in SEEDS:
        s = build_world(spec, seed)["staff"]
        up = dict(zip(s["staff_id"], s["manager_id"]))
        depths = []
        for k in up:
            d, cur = 0, k
            while up[cur] is not None:
                cur, d = up[cur], d + 1
                assert d <= 6  # also: no cycle
            depths.append(d)
        assert depths.count(0) == 1 and max(depths) >= 5
        assert s["manager_id"].drop_nulls().value_counts()["count"].max() <= 6
        assert all(up[k] is None or up[k] < k for k in up)  # managers are earlier rows
        kids = Counter(x for x in s["manager_id"] if x is not None)
        assert s["direct_reports"].to_list() == [kids.get(k, 0) for k in s["staff_id"]]


def test_world_check_reports_a_cycle(shape_specs):
    spec = shape_specs["org_chart"]
    tables = build_world(spec, 1)
    s = tables["staff"]
    root = s.filter(pl.col("manager_id").is_null())["staff_id"][0]
    child = s.filter(pl.col("manager_id") == root)["staff_id"][0]
    broken = s.with_columns(pl.when(pl.col("staff_id") == root).then(child).otherwise(pl.col("manager_id")).alias("manager_id"))
    found = {v.check for v in check_world(spec, {**tables, "staff": broken})}
    assert "hierarchy_cycle" in found


def test_null_share_is_close_and_nulls_never_count(shape_specs):
    spec = shape_specs["film_sequels"]
    for seed in SEEDS:
        t = build_world(spec, seed)
        f, dist = t["films"], t["distributors"]
        assert f["distributor_id"].null_count() == round(0.3 * 160)
        assert f["sequel_of"].null_count() == round(0.7 * 160)
        # parent.column through a null reference is null
        assert (f["distributor_id"].is_null() == f["distributor_country"].is_null()).all()
        # aggregates through the reference skip null-parent rows
        assert dist["films_distributed"].sum() == f.height - f["distributor_id"].null_count()
        assert f["sequels"].sum() == f.height - f["sequel_of"].null_count()


def test_scenarios_keep_every_shape(shape_specs):
    d = doc("org_chart")
    d["scenarios"] = [{"name": "later", "shift_years": 2}]
    for d in (d, {**doc("film_sequels"), "scenarios": [{"name": "later", "shift_years": 1}]},
              {**doc("course_enrolments"), "scenarios": [{"name": "later", "shift_years": 1}]},
              {**doc("football_fixtures"), "scenarios": [{"name": "later", "shift_years": 1}]}):
        spec = spec_from_dict(d)
        tables = build_world(spec, 5)
        out = build_scenarios(spec, tables)["later"]
        for t, frame in tables.items():
            for c, col in spec.tables[t].columns.items():
                if col.kind == "reference":
                    assert out[t][c].to_list() == frame[c].to_list()


def test_tree_and_matching_helpers():
    import random

    parents = tree(40, 3, 2, 4, random.Random(1))
    assert sum(p is None for p in parents) == 3 and all(p is None or p < i for i, p in enumerate(parents))
    with pytest.raises(ValueError):
        tree(30, 1, 2, 4, random.Random(1))  # 1 + 4 + 16 = 21 rows at most
    counts = spread(50, 10, 2, 8, random.Random(2))
    assert sum(counts) == 50 and min(counts) >= 2 and max(counts) <= 8
    picks = match([5] * 10, counts, random.Random(3))
    assert Counter(picks) == Counter({b: c for b, c in enumerate(counts) if c})
    assert all(len(set(picks[a * 5:(a + 1) * 5])) == 5 for a in range(10))


def test_unmendable_reference_rule_fails_generation_clearly():
    d = doc("football_fixtures")
    d["tables"]["teams"]["rows"] = 1
    d["tables"]["teams"]["columns"]["name"] = {"kind": "choice", "values": ["Solo"]}
    for ref in ("home_team_id", "away_team_id"):
        del d["tables"]["matches"]["columns"][ref]["cardinality"]
    d["tables"]["matches"]["rows"] = 200
    d["tables"]["matches"]["constraints"] = d["tables"]["matches"]["constraints"][:1]
    d["tables"]["players"]["columns"]["team_id"]["cardinality"] = {"min": 150, "max": 150}
    spec = spec_from_dict(d)
    with pytest.raises(GenerationError, match="still break check 'home_team_id != away_team_id'"):
        build_world(spec, 0)


@pytest.mark.parametrize("name", ["org_chart", "film_sequels"])
def test_self_referencing_world_file_round_trips(shape_specs, tmp_path, name):
    """DuckDB checks a self FOREIGN KEY against stored rows: the table goes in slices, in row order, and checks clean."""
    from worldforge.warehouse.layout import Warehouse
    from worldforge.world import build_world_file, check_world_file

    build = build_world_file(shape_specs[name], Warehouse(tmp_path))
    assert build.path is not None
    wf, violations = check_world_file(build.path)
    assert violations == []
    for t, frame in build.tables.items():
        assert wf.tables[t].equals(frame)
