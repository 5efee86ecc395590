"""Catalog generation from the archetype library: determinism, validity, variety, the CLI."""

from __future__ import annotations

import random

import pytest
import yaml
from typer.testing import CliRunner

from worldforge.catalog.archetype import load_archetypes, parse_archetype
from worldforge.catalog.generate import archetype_variety, draw_spec, generate_catalog, invent_names
from worldforge.catalog.signature import schema_signature
from worldforge.cli import app
from worldforge.errors import SpecError, WorldforgeError
from worldforge.spec import ROW_BUDGET, build_plan, load_spec

runner = CliRunner()


def _bytes(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.yaml"))}


def test_same_seed_same_bytes_other_seed_other_specs(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    generate_catalog(30, 7, a)
    generate_catalog(30, 7, b)
    generate_catalog(30, 8, c)
    assert _bytes(a) == _bytes(b) and len(_bytes(a)) == 30
    assert _bytes(a) != _bytes(c)
    # a small catalog is the start of a larger one (make demo's dozen worlds are the full catalog's first dozen)
    d = tmp_path / "d"
    generate_catalog(12, 7, d)
    assert all(_bytes(a)[name] == data for name, data in _bytes(d).items())


def test_every_generated_spec_validates_within_the_row_budget_with_distinct_signatures(tmp_path):
    library = load_archetypes()
    made = generate_catalog(2 * len(library), 0, tmp_path)
    specs = [load_spec(p) for p in made.paths]
    assert {s.archetype for s in specs} == set(library)  # every archetype is used once n >= their number
    for spec in specs:
        plan, problems = build_plan(spec)
        assert not problems
        assert ROW_BUDGET[0] <= plan.total_rows[0] == plan.total_rows[1] <= ROW_BUDGET[1]
        assert 2027 <= spec.target_year <= 2040 and spec.scenarios
        assert spec.world.startswith(f"{spec.archetype}_{spec.target_year}_")
    assert len({schema_signature(s) for s in specs}) == len(specs) == made.signatures


@pytest.mark.parametrize("name", sorted(load_archetypes()))
def test_every_archetype_draws_valid_and_varied_specs(name):
    """The library's data: 40 draws of each archetype all validate and give many layouts (tables, not only columns)."""
    valid, signatures, table_sets = archetype_variety(load_archetypes()[name], 40)
    assert valid == 40
    assert signatures >= 25, f"{name}: only {signatures} distinct schemas in 40 draws"
    assert table_sets >= 4, f"{name}: only {table_sets} distinct sets of table names in 40 draws"


def test_left_out_tables_take_their_dependents_along():
    arch = load_archetypes()["smartphone_market"]
    seen_without_retailers = False
    for i in range(40):
        doc = draw_spec(arch, random.Random(i), "w")
        names = set(doc["tables"])
        if not names & {"retailers", "shops", "stores", "sellers"}:
            seen_without_retailers = True
            assert not names & {"listings", "offers"}  # the link table requires both sides
    assert seen_without_retailers


def test_table_renames_reach_expressions_templates_and_references():
    arch = load_archetypes()["smartphone_market"]
    for i in range(30):
        doc = draw_spec(arch, random.Random(i), "w")
        text = yaml.safe_dump(doc)
        makers = next(t for t in doc["tables"] if t in {"brands", "makers", "manufacturers", "phone_makers"})
        phones = next(t for t in doc["tables"] if t in {"models", "phones", "handsets", "devices"})
        cols = doc["tables"][phones]["columns"]
        assert cols["brand_id"]["parent"] == makers
        assert cols["model_number"]["template"].startswith("{" + makers + ".")
        if makers != "brands":
            assert "brands." not in text
        if phones != "models" and "shipments_k" in doc["tables"][makers]["columns"]:
            assert doc["tables"][makers]["columns"]["shipments_k"]["child"] == phones


def test_invented_names_are_distinct_and_bounded():
    names = invent_names(random.Random(1), "{Word} {suffix}-{9}{9}", {"suffix": ["X", "Pro"]}, 50)
    assert len(set(names)) == 50 and all(n.split()[0][0].isupper() for n in names)
    with pytest.raises(WorldforgeError, match="fewer than"):
        invent_names(random.Random(1), "{A}", {}, 40)  # 21 letters cannot make 40 names
    with pytest.raises(WorldforgeError, match="no list named"):
        invent_names(random.Random(1), "{Word} {nope}", {}, 3)


def test_a_broken_archetype_is_a_spec_error_naming_the_field():
    with pytest.raises(SpecError, match="tables.a: .*primary key cannot be optional"):
        parse_archetype({"archetype": "x", "domain": "d", "titles": ["t"], "tables": {
            "a": {"primary_key": "id", "columns": {"id": {"kind": "sequence", "p": 0.5}}},
            "b": {"primary_key": "id", "columns": {"id": {"kind": "sequence"}}}}}, "x.yaml")


def test_cli_generate_and_archetypes(tmp_path):
    res = runner.invoke(app, ["catalog", "generate", "--n", "4", "--seed", "3", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "wrote 4 specs" in res.output and len(list((tmp_path / "out").glob("*.yaml"))) == 4
    (tmp_path / "out" / "mine.yaml").write_text("world: mine\n")
    res = runner.invoke(app, ["catalog", "generate", "--n", "4", "--seed", "3", str(tmp_path / "out")])
    assert "1 other spec file(s)" in res.output
    res = runner.invoke(app, ["catalog", "generate", "--n", "0", str(tmp_path / "x")])
    assert res.exit_code == 2 and "between 1 and" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["catalog", "generate", "--n", "2", "-a", "no_such_domain", str(tmp_path / "x")])
    assert res.exit_code == 2 and "unknown archetype" in res.output
    res = runner.invoke(app, ["catalog", "archetypes", "--draws", "5"])
    assert res.exit_code == 0 and "archetypes" in res.output and "smartphone" in res.output
