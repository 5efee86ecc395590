import copy

import pytest
import yaml

from tests.conftest import ROOT
from worldforge.errors import SpecError
from worldforge.spec import ROW_BUDGET, build_plan, load_spec, spec_from_dict


def test_bundled_specs_validate(specs):
    assert len(specs) >= 3
    for spec in specs.values():
        plan, problems = build_plan(spec)
        assert not problems
        lo, hi = plan.total_rows
        assert ROW_BUDGET[0] <= lo <= hi <= ROW_BUDGET[1]


def test_bundled_specs_exercise_every_kind(specs):
    kinds = {col.kind for spec in specs.values() for t in spec.tables.values() for col in t.columns.values()}
    assert kinds == {"sequence", "faker", "choice", "number", "date", "format", "reference", "derive", "rank", "share", "aggregate"}
    cons = {c.kind for spec in specs.values() for t in spec.tables.values() for c in t.constraints}
    assert cons == {"unique", "range", "monotone", "check", "not_after_as_of"}
    assert all(spec.scenarios for spec in specs.values())
    assert all(len(s.tables) >= 4 for s in specs.values())


def problems_of(doc) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as info:
        spec_from_dict(doc, "test.yaml")
    assert str(info.value).startswith("test.yaml: invalid world spec")
    return info.value.problems


def test_unknown_field_names_its_path_and_the_fields_there(phone_doc):
    phone_doc["tables"]["models"]["columns"]["screen_in"]["colour"] = "red"
    phone_doc["tables"]["brands"]["columns"]["market_rank"]["ascending"] = True  # a rank's direction is `descending`
    phone_doc["scenarios"][0]["years"] = 2
    problems = dict(problems_of(phone_doc))
    assert problems["tables.models.columns.screen_in.colour"].startswith("unknown field (not part of the spec language); fields here: ")
    rank = problems["tables.brands.columns.market_rank.ascending"]
    assert "descending" in rank.split("fields here: ")[1].split(", ") and "within" in rank and "values" not in rank
    assert "shift_years" in problems["scenarios.0.years"]


def test_unknown_kind_lists_the_kinds(phone_doc):
    phone_doc["tables"]["brands"]["columns"]["strategy"]["kind"] = "pick"
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.brands.columns.strategy" and "'pick'" in msg and "'choice'" in msg


def test_every_problem_is_reported_at_once(phone_doc):
    cols = phone_doc["tables"]["models"]["columns"]
    cols["screen_in"]["min"] = 9
    cols["lead_days"]["distribution"] = "normal"
    paths = {p for p, _ in problems_of(phone_doc)}
    assert {"tables.models.columns.screen_in", "tables.models.columns.lead_days"} <= paths


def test_row_budget_is_checked_for_every_seed(phone_doc):
    phone_doc["tables"]["listings"]["rows"] = 400
    (path, msg), = problems_of(phone_doc)
    assert path == "tables" and "300–500 rows" in msg and "listings: 400" in msg


def test_cross_references(phone_doc):
    cols = phone_doc["tables"]["models"]["columns"]
    cols["launch_date"]["expr"] = "add_days(announced, lag)"
    cols["model_number"]["template"] = "{retailers.name}-{n}"
    phone_doc["tables"]["brands"]["constraints"].append({"kind": "unique", "columns": ["nope"]})
    last = len(phone_doc["tables"]["brands"]["constraints"]) - 1
    found = dict(problems_of(phone_doc))
    assert "'lag'" in found["tables.models.columns.launch_date"]
    assert "no reference column to 'retailers'" in found["tables.models.columns.model_number"]
    assert "'nope' is not a column of 'brands'" in found[f"tables.brands.constraints.{last}"]


def test_column_cycle_is_named(phone_doc):
    cols = phone_doc["tables"]["brands"]["columns"]
    cols["code"] = {"kind": "derive", "expr": "concat(name, strategy)"}
    cols["strategy"] = {"kind": "derive", "expr": "lower(code)"}
    (path, msg), = problems_of(phone_doc)
    assert "cycle" in msg and "brands.code" in msg and "brands.strategy" in msg


def test_reference_cycle(phone_doc):
    phone_doc["tables"]["brands"]["columns"]["flagship"] = {"kind": "reference", "parent": "models"}
    (path, msg), = problems_of(phone_doc)
    assert "reference cycle" in msg


def test_faker_provider_must_exist(phone_doc):
    phone_doc["tables"]["retailers"]["columns"]["name"]["provider"] = "seed_instance"
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.retailers.columns.name" and "not a Faker value provider" in msg


def test_expression_errors_carry_the_field_path(phone_doc):
    phone_doc["tables"]["models"]["columns"]["launch_date"]["expr"] = "exec('x')"
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.models.columns.launch_date.expr" and "unknown function 'exec'" in msg


def test_load_spec_file_errors(tmp_path):
    with pytest.raises(SpecError, match="file not found"):
        load_spec(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("world: x\n  tables: [oops\n")
    with pytest.raises(SpecError, match=r"bad.yaml: invalid world spec\n  line 2, column 9: not valid YAML"):
        load_spec(bad)
    bad.write_text(yaml.safe_dump(["a", "list"]))
    with pytest.raises(SpecError, match="expected a mapping"):
        load_spec(bad)


def test_faker_template_tokens_must_be_providers(phone_doc):
    cols = phone_doc["tables"]["retailers"]["columns"]
    cols["name"] = {"kind": "faker", "template": "{{company}} {{open_file}}"}
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.retailers.columns.name" and "'open_file' is not a Faker value provider" in msg
    cols["name"] = {"kind": "faker", "template": "{{company}}", "provider": "company"}
    (path, msg), = problems_of(phone_doc)
    assert "exactly one of 'provider' or 'template'" in msg
    # Faker leaves a token it cannot read in the text ("Meza's {{random_element: [...]}}" on pages and in URLs): refused
    cols["name"] = {"kind": "faker", "template": "{{last_name}}'s {{random_element: ['Orchard', 'Meadow']}}"}
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.retailers.columns.name" and "is not a provider name" in msg and "'choice' column" in msg


@pytest.mark.parametrize("world, table", [("smartphones_2029", "brands"), ("esports_2031", "leagues")])
def test_a_missing_parent_table_is_a_spec_error(spec_docs, world, table):
    """Found by tests/fuzz: with a parent table deleted, ``parent.col`` in a template or a check raised KeyError."""
    doc = copy.deepcopy(spec_docs[world])
    del doc["tables"][table]
    problems = problems_of(doc)
    assert any(msg == f"parent '{table}': no such table" for _, msg in problems), problems
    assert any(f"no table '{table}'" in msg or "is not reachable" in msg for _, msg in problems[1:]), problems


def test_unquoted_yaml_dates_are_accepted(tmp_path):
    """``start: 2029-01-05`` written unquoted is a date; an impossible one is named on its field."""
    text = open("world_specs/smartphones_2029.yaml", encoding="utf-8").read()
    text = text.replace("start: Y-01-05, end: Y-10-31", "start: 2029-01-05, end: 2029-10-31").replace("as_of: Y-12-31", "as_of: 2029-12-30")
    text = text.replace("{kind: range, column: launch_date, min: Y-01-01, max: Y-12-31}", "{kind: range, column: launch_date, min: 2029-01-01, max: 2029-12-31}")
    assert "start: 2029-01-05" in text and "as_of: 2029-12-30" in text and "min: 2029-01-01" in text
    path = tmp_path / "phones.yaml"
    path.write_text(text, encoding="utf-8")
    spec = load_spec(path)
    announced = spec.tables["models"].columns["announced"]
    assert (announced.start, announced.end) == ("2029-01-05", "2029-10-31")
    assert spec.as_of == "2029-12-30" and str(spec.as_of_date) == "2029-12-30"
    assert spec.tables["models"].constraints[3].min == "2029-01-01"
    bad = text.replace("start: 2029-01-05", "start: 2029-02-30")  # not a date: PyYAML leaves it a string, the spec names it
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(SpecError, match="not a date"):
        load_spec(path)


def test_a_parsed_date_object_is_read_as_its_iso_text(phone_doc):
    """Documents parsed elsewhere (``yaml.safe_load``) carry ``datetime.date`` values: they validate too."""
    import datetime

    phone_doc["tables"]["models"]["columns"]["announced"]["start"] = datetime.date(2029, 1, 5)
    phone_doc["as_of"] = datetime.date(2029, 12, 30)
    spec = spec_from_dict(phone_doc)
    assert spec.tables["models"].columns["announced"].start == "2029-01-05" and spec.as_of == "2029-12-30"


def test_a_spec_is_compiled_once_and_recompiled_when_changed(monkeypatch):
    from worldforge.spec import plan as plan_module
    from worldforge.spec import validate_spec

    calls = []
    real = plan_module.build_plan
    monkeypatch.setattr(plan_module, "build_plan", lambda spec: calls.append(spec.world) or real(spec))
    spec = load_spec(ROOT / "world_specs" / "esports_2031.yaml")
    assert len(calls) == 1  # the loader compiled it
    first = validate_spec(spec)
    assert validate_spec(spec) is first and len(calls) == 1  # every later step reuses the plan the spec carries
    shifted = spec.model_copy(update={"target_year": spec.target_year + 2})
    assert validate_spec(shifted) is not first and len(calls) == 2  # a changed copy is compiled (and checked) again
    assert spec.model_copy() == spec and spec.model_copy()._plan is first
    assert spec_from_dict(spec.model_dump(mode="json"), "again") == spec  # the cached plan never counts in equality


def test_a_cross_field_problem_is_found_by_the_loader_not_the_model():
    doc = yaml.safe_load((ROOT / "world_specs" / "esports_2031.yaml").read_text(encoding="utf-8"))
    name = next(iter(doc["tables"]))
    doc["tables"][name]["primary_key"] = "no_such_column"
    from worldforge.spec.models import WorldSpec

    assert WorldSpec.model_validate(doc).world == doc["world"]  # the model checks fields only
    assert problems_of(doc) == [(f"tables.{name}.primary_key", f"'no_such_column' is not a column of '{name}'")]


@pytest.mark.parametrize("name", ["trajectories", "episodes", "catalog"])
def test_a_world_may_not_take_the_name_of_a_warehouse_store(phone_doc, name):
    phone_doc["world"] = name
    (problem,) = problems_of(phone_doc)
    assert problem[0] == "world" and f"{name}.duckdb" in problem[1] and "stores" in problem[1]


def test_every_store_of_the_warehouse_is_a_reserved_world_name():
    from worldforge.spec.models import RESERVED_WORLD_NAMES
    from worldforge.warehouse.layout import STORES

    assert {s.removesuffix(".duckdb") for s in STORES} <= RESERVED_WORLD_NAMES


def test_a_mixed_value_list_names_the_odd_value_and_the_quoting(phone_doc):
    """A climbing grade written 4 among "5a" and "6b+" is a number in YAML: the message names it and says to quote it."""
    phone_doc["tables"]["brands"]["columns"]["strategy"]["values"] = ["5a", 4, "6b+"]
    (path, msg), = problems_of(phone_doc)
    assert path == "tables.brands.columns.strategy" and "4 is a number among text values" in msg and 'quote it, "4"' in msg
