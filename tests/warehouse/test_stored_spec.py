"""The stored spec is the spec: ``_world.spec_json`` keeps the author's order and reads back to the same model, and
``spec_hash`` changes when the order does (the first reference with a cardinality drives a table's rows, so order
changes what a spec builds)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import ROOT, SPECS_DIR
from worldforge.catalog.archetype import load_archetypes
from worldforge.catalog.generate import generate_catalog
from worldforge.spec import load_spec, spec_from_dict, spec_hash, spec_json
from worldforge.synth import build_world
from worldforge.warehouse import Warehouse, read_world, write_world

BENCH_SPECS = ROOT / "bench" / "specs"


def _ordered(spec) -> str:
    """The spec's full dump as JSON text: equal only when every mapping (tables, columns ...) is in the same order."""
    return json.dumps(spec.model_dump(mode="json"))


def _same(back, spec) -> None:
    assert back == spec  # pydantic compares mappings without their order: the text below does not
    assert back.model_dump() == spec.model_dump() and _ordered(back) == _ordered(spec)
    assert list(back.tables) == list(spec.tables)
    assert [list(t.columns) for t in back.tables.values()] == [list(t.columns) for t in spec.tables.values()]
    assert spec_hash(back) == spec_hash(spec)


@pytest.fixture(scope="module")
def catalog_specs(tmp_path_factory):
    """A catalog drawing every archetype at least once (the first A specs use each of the A archetypes)."""
    n = len(load_archetypes())
    made = generate_catalog(max(n, 45), 3, tmp_path_factory.mktemp("catalog"))
    specs = [load_spec(p) for p in made.paths]
    assert {s.archetype for s in specs} == set(load_archetypes())
    return specs


def _files() -> list:
    return sorted([*SPECS_DIR.glob("*.yaml"), *BENCH_SPECS.glob("*.yaml")])


@pytest.mark.parametrize("path", _files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_bundled_and_bench_spec_reads_back_from_its_stored_form(path):
    spec = load_spec(path)
    _same(spec_from_dict(json.loads(spec_json(spec))), spec)


def test_every_catalog_archetype_draw_reads_back_from_its_stored_form(catalog_specs):
    for spec in catalog_specs:
        _same(spec_from_dict(json.loads(spec_json(spec)), spec.world), spec)


def test_a_world_file_stores_its_spec_in_the_authors_order(specs, tmp_path):
    spec = specs["esports_2031"]
    path = write_world(spec, build_world(spec), Warehouse(tmp_path))
    wf = read_world(path)
    _same(wf.spec, spec)
    assert wf.meta["spec_json"] == spec_json(spec) and wf.meta["spec_hash"] == spec_hash(spec)


def _swap(columns: dict, a: str, b: str) -> dict:
    keys = list(columns)
    i, j = keys.index(a), keys.index(b)
    keys[i], keys[j] = keys[j], keys[i]
    return {k: columns[k] for k in keys}


def test_swapping_two_columns_changes_the_spec_hash(spec_docs):
    doc = copy.deepcopy(spec_docs["esports_2031"])
    before = spec_from_dict(copy.deepcopy(doc))
    cols = doc["tables"]["players"]["columns"]
    doc["tables"]["players"]["columns"] = _swap(cols, "handle", "real_name")
    after = spec_from_dict(doc)
    assert after == before  # the same fields, as pydantic compares them ...
    assert spec_hash(after) != spec_hash(before)  # ... in another order, which draws another world
    assert spec_hash(spec_from_dict(copy.deepcopy(spec_docs["esports_2031"]))) == spec_hash(before)  # and the hash is stable


def test_swapping_two_tables_changes_the_spec_hash(spec_docs):
    doc = copy.deepcopy(spec_docs["esports_2031"])
    before = spec_from_dict(copy.deepcopy(doc))
    doc["tables"] = _swap(doc["tables"], "players", "sponsorships")
    assert spec_hash(spec_from_dict(doc)) != spec_hash(before)


JUNCTION = {
    "world": "junction_order",
    "title": "A junction table whose column order decides its rows",
    "seed": 11,
    "target_year": 2031,
    "tables": {
        "zones": {"primary_key": "zone_id", "rows": 10,
                  "columns": {"zone_id": {"kind": "sequence"}, "name": {"kind": "format", "template": "Zone {zone_id}"}}},
        "areas": {"primary_key": "area_id", "rows": 40,
                  "columns": {"area_id": {"kind": "sequence"}, "name": {"kind": "format", "template": "Area {area_id}"}}},
        "links": {"primary_key": "link_id", "columns": {
            "link_id": {"kind": "sequence"},
            # the first reference with a cardinality drives the rows: 10 zones x 30 = 300 links (350 rows in all), and
            # the areas' 0-10 each are fitted to them; sorted by name, area_id would come first and drive the assignment
            # (the same 300 links, other pairs: another world)
            "zone_id": {"kind": "reference", "parent": "zones", "cardinality": {"min": 30, "max": 30}},
            "area_id": {"kind": "reference", "parent": "areas", "cardinality": {"min": 0, "max": 10}},
            "length_km": {"kind": "number", "dtype": "float", "min": 0.5, "max": 40, "decimals": 1},  # something to say of a link
        }},
    },
}


def test_a_junction_table_keeps_its_driving_reference_through_the_world_file(tmp_path):
    spec = spec_from_dict(copy.deepcopy(JUNCTION))
    assert spec.tables["links"].driving_reference[0] == "zone_id"
    tables = build_world(spec)
    assert tables["links"].height == 300
    wf = read_world(write_world(spec, tables, Warehouse(tmp_path)))
    _same(wf.spec, spec)
    assert wf.tables["links"].height == 300 and build_world(wf.spec)["links"].equals(tables["links"])
    # the order is part of the world: the same fields sorted (as the stored spec once was) drive from the areas, and
    # build other links under another hash
    resorted = spec_from_dict(json.loads(json.dumps(spec.model_dump(mode="json", exclude_defaults=True), sort_keys=True)))
    assert resorted.tables["links"].driving_reference[0] == "area_id" and spec_hash(resorted) != spec_hash(spec)
    assert not build_world(resorted)["links"].equals(tables["links"])
