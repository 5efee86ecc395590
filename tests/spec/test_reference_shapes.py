"""The spec language's reference shapes: roles, junctions, hierarchies, optional references (load-time checks)."""

import copy

import pytest
import yaml

from tests.conftest import ROOT
from worldforge.errors import SpecError
from worldforge.spec import load_spec, spec_from_dict, spec_hash

BENCH = ROOT / "bench" / "specs"
SHAPES = ["football_fixtures", "course_enrolments", "org_chart", "film_sequels", "sensor_means"]


def doc(name: str) -> dict:
    return copy.deepcopy(yaml.safe_load((BENCH / f"{name}.yaml").read_text()))


def problems_of(d) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as info:
        spec_from_dict(d)
    return info.value.problems


@pytest.mark.parametrize("name", SHAPES)
def test_shape_specs_load(name):
    spec = load_spec(BENCH / f"{name}.yaml")
    assert 3 <= len(spec.tables) <= 5


def test_new_fields_leave_old_dumps_alone(specs):
    """null_share and hierarchy default to None: the bundled specs dump (and hash) without them."""
    for spec in specs.values():
        dumped = spec.model_dump(mode="json", exclude_none=True)
        for table in dumped["tables"].values():
            for col in table["columns"].values():
                assert "null_share" not in col and "hierarchy" not in col
        assert spec_hash(spec) == spec_hash(spec.model_copy())


def test_resample_check_over_references_is_accepted():
    d = doc("football_fixtures")
    spec = spec_from_dict(d)
    assert spec.tables["matches"].constraints[0].enforce == "resample"


def test_resample_check_of_one_reference_alone_is_still_refused():
    d = doc("football_fixtures")
    d["tables"]["matches"]["constraints"].append({"kind": "check", "expr": "home_team_id > 0", "enforce": "resample"})
    [(path, msg)] = problems_of(d)
    assert path == "tables.matches.constraints.2.enforce" and "reassigned" in msg


def test_infeasible_junction_is_one_line_naming_the_bounds():
    d = doc("course_enrolments")
    d["tables"]["students"]["rows"] = 60  # 20 courses x 10 = 200 enrolments needed, 60 students x 3 = 180 taken
    [(path, msg)] = problems_of(d)
    assert path == "tables.enrolments.columns.student_id.cardinality"
    assert "\n" not in msg
    assert "20×10 = 200" in msg and "60×3 = 180" in msg and "20 short" in msg


def test_infeasible_junction_the_other_way():
    d = doc("course_enrolments")
    d["tables"]["enrolments"]["columns"]["student_id"]["cardinality"] = {"min": 3, "max": 4}  # 100 x 3 = 300 > 20 x 14
    [(path, msg)] = problems_of(d)
    assert path == "tables.enrolments.columns.student_id.cardinality"
    assert "100×3 = 300" in msg and "20×14 = 280" in msg and "20 short" in msg


def test_junction_with_fixed_rows_is_checked():
    d = doc("course_enrolments")
    d["tables"]["enrolments"]["rows"] = 200
    d["tables"]["enrolments"]["columns"]["student_id"]["cardinality"] = {"min": 1, "max": 1}  # 100 rows exactly
    [(path, msg)] = problems_of(d)
    assert path == "tables.enrolments.columns.student_id.cardinality" and "100 too many" in msg


def test_self_reference_takes_no_cardinality():
    d = doc("org_chart")
    d["tables"]["staff"]["columns"]["manager_id"]["cardinality"] = {"min": 0, "max": 5}
    [(path, msg)] = problems_of(d)
    assert path == "tables.staff.columns.manager_id" and "hierarchy" in msg


def test_hierarchy_only_on_a_self_reference():
    d = doc("org_chart")
    d["tables"]["projects"]["columns"]["lead_id"]["hierarchy"] = {"max_depth": 2}
    [(path, msg)] = problems_of(d)
    assert path == "tables.projects.columns.lead_id" and "own table" in msg


def test_hierarchy_must_fit_the_rows():
    d = doc("org_chart")
    d["tables"]["staff"]["columns"]["manager_id"]["hierarchy"] = {"max_depth": 2, "max_children": 5}  # 1 + 5 + 25 = 31 < 150
    [(path, msg)] = problems_of(d)
    assert path == "tables.staff.columns.manager_id.hierarchy" and "at most 31 rows" in msg and "119 too many" in msg


def test_expressions_cannot_read_through_a_self_reference():
    d = doc("org_chart")
    d["tables"]["staff"]["columns"]["boss_salary"] = {"kind": "derive", "expr": "staff.salary_eur"}
    [(path, msg)] = problems_of(d)
    assert path == "tables.staff.columns.boss_salary" and "self-reference" in msg


def test_aggregate_cannot_aggregate_itself():
    d = doc("org_chart")
    d["tables"]["staff"]["columns"]["team_size"] = {"kind": "aggregate", "child": "staff", "via": "manager_id", "fn": "sum", "of": "team_size"}
    assert any("cannot aggregate itself" in msg for _, msg in problems_of(d))


def test_null_share_is_bounded_and_not_with_a_cardinality():
    d = doc("film_sequels")
    d["tables"]["films"]["columns"]["distributor_id"]["null_share"] = 1.5
    assert any(p.endswith("distributor_id.null_share") for p, _ in problems_of(d))
    d = doc("course_enrolments")
    d["tables"]["enrolments"]["columns"]["student_id"]["null_share"] = 0.2
    assert any("null_share and cardinality" in m for _, m in problems_of(d))


@pytest.mark.parametrize("world, table, ref", [("film_sequels", "films", "distributor_id"), ("org_chart", "staff", "manager_id")])
def test_a_name_cannot_be_made_of_a_parent_some_rows_lack(world, table, ref):
    """A format template reading an optional reference or a hierarchy's parent would name rows 'None-01'."""
    d = doc(world)
    d["tables"][table]["columns"]["ref_code"] = {"kind": "format", "template": "{" + ref + "}-{n:02d}", "counter_within": ref}
    [(path, msg)] = problems_of(d)
    assert path == f"tables.{table}.columns.ref_code" and "'None'" in msg and ref in msg


def test_a_world_of_keys_alone_is_refused():
    d = {"world": "keys", "seed": 1, "target_year": 2030, "tables": {"t": {"primary_key": "t_id", "rows": 320, "columns": {"t_id": {"kind": "sequence"}}}}}
    [(path, msg)] = problems_of(d)
    assert path == "tables" and "key, a reference or the row's name" in msg


def test_a_world_of_names_alone_is_refused():
    """Rows with a name and nothing else give pages that say nothing and no task to ask."""
    d = {"world": "names", "seed": 1, "target_year": 2030, "tables": {
        "loans": {"primary_key": "loan_id", "rows": 4, "columns": {"loan_id": {"kind": "sequence"}, "code": {"kind": "format", "template": "L-{n:03d}"}}},
        "books": {"primary_key": "book_id", "rows": 320, "columns": {"book_id": {"kind": "sequence"}, "loan_id": {"kind": "reference", "parent": "loans"}}}}}
    [(path, msg)] = problems_of(d)
    assert path == "tables" and "the row's name" in msg
    d["tables"]["books"]["columns"]["pages"] = {"kind": "number", "dtype": "int", "min": 20, "max": 900}
    assert spec_from_dict(d).tables["books"].columns["pages"].kind == "number"  # one attribute: it loads


def test_a_label_that_reads_as_another_columns_name_is_refused():
    """'crew size' on one column and a column named crew_size: two infobox rows 'Crew size' (the fuzzer found it)."""
    d = {"world": "crews", "seed": 1, "target_year": 2030, "tables": {"crews": {"primary_key": "crew_id", "rows": 320, "columns": {
        "crew_id": {"kind": "sequence"}, "ulazu": {"kind": "number", "dtype": "int", "min": 1, "max": 9, "label": "crew size"},
        "crew_size": {"kind": "number", "dtype": "int", "min": 5, "max": 400}}}}}
    [(path, msg)] = problems_of(d)
    assert path == "tables.crews.columns.ulazu.label" and "'crew_size'" in msg
    d["tables"]["crews"]["columns"]["crew_size"]["label"] = "crew headcount"
    assert spec_from_dict(d).tables["crews"].columns["ulazu"].label == "crew size"
