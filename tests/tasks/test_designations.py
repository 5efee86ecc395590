"""Tables without a name column: their rows are called by designations, on pages and in tasks, and the oracle solves them."""

from __future__ import annotations

import re

import pytest

from tests.conftest_worlds import built_world
from worldforge.agents.oracle import solve
from worldforge.corpus import read_corpus
from worldforge.corpus.vocab import row_labels, table_info
from worldforge.errors import SpecError
from worldforge.simenv import SearchEnv
from worldforge.spec import spec_from_dict
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse

ROCKETS = ["Brecho Explorer", "Falcon Crest", "Orla Heavy", "Vanta Lift", "Kestrel One", "Maru Vector", "Tern Ascent", "Solva Prime",
           "Ibis Carrier", "Corvid Block", "Lumen Reach", "Pella Orbit"]


def _doc(**launches) -> dict:
    return {
        "world": "launch_log_2031", "title": "Orbital launch log, 2031", "seed": 31, "target_year": 2031,
        "tables": {
            "rockets": {"primary_key": "rocket_id", "rows": 12, "columns": {
                "rocket_id": {"kind": "sequence"},
                "name": {"kind": "choice", "unique": True, "values": ROCKETS},
                "operator": {"kind": "choice", "values": ["Astra Lines", "Nordlift", "Sunward", "Kappa Orbital"]},
                "payload_capacity_kg": {"kind": "number", "dtype": "int", "min": 2000, "max": 60000, "unit": "kg", "label": "payload capacity"},
                "first_flight": {"kind": "date", "start": "Y-9-01-01", "end": "Y-2-12-31"},
            }},
            "launches": {"primary_key": "launch_id", **launches, "columns": {
                "launch_id": {"kind": "sequence", "start": 51},
                "rocket_id": {"kind": "reference", "parent": "rockets", "cardinality": {"min": 10, "max": 12}},
                "launch_date": {"kind": "date", "start": "Y-01-01", "end": "Y-11-30"},
                "orbit": {"kind": "choice", "values": ["LEO", "SSO", "GTO", "MEO"]},
                "payload_mass_kg": {"kind": "number", "dtype": "int", "min": 300, "max": 20000, "unit": "kg", "label": "payload mass"},
                "cost_musd": {"kind": "number", "min": 20, "max": 300, "decimals": 1, "unit": "million USD", "label": "launch cost"},
                "mass_rank": {"kind": "rank", "of": "payload_mass_kg", "within": "rocket_id", "label": "rank by payload mass within its rocket"},
            }},
            "payloads": {"primary_key": "payload_id", "columns": {
                "payload_id": {"kind": "sequence"},
                "launch_id": {"kind": "reference", "parent": "launches", "cardinality": {"min": 2, "max": 2}},
                "name": {"kind": "format", "template": "Sat-{n:04d}", "start": 1001},
                "mass_kg": {"kind": "number", "dtype": "int", "min": 50, "max": 8000, "unit": "kg", "label": "mass"},
                "mass_rank": {"kind": "rank", "of": "mass_kg", "within": "launch_id", "label": "rank by mass on its launch"},
            }},
        },
    }


def test_an_unknown_designation_column_is_a_spec_error():
    with pytest.raises(SpecError, match="designation"):
        spec_from_dict(_doc(designation="{rocket_id.nickname} launch of {launch_day}"))
    spec = spec_from_dict(_doc(designation="Launch {n} of {rocket_id}"))
    assert spec.tables["launches"].designation == "Launch {n} of {rocket_id}"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("wh"))
    spec = spec_from_dict(_doc())
    path = built_world(spec, wh)
    return spec, wh, path


def test_designations_are_unique_and_natural(world):
    from worldforge.warehouse import read_world

    spec, _, path = world
    tables = read_world(path).tables
    assert table_info(spec, "launches", tables["launches"]).designation is not None
    labels = row_labels(spec, tables)["launches"]
    texts = [lab.text for lab in labels.values()]
    assert len(set(texts)) == len(texts) == tables["launches"].height
    assert not any(re.search(r"#\d", x) for x in texts)
    assert any(x.split(" launch of ")[0] in ROCKETS or " of " in x for x in texts)


def test_the_oracle_solves_every_task_of_a_nameless_table(world):
    spec, wh, path = world
    built = build_tasks(path)
    assert built.unsolvable == {}
    tasks = built.tasks
    on_launches = [t for t in tasks if t.extra["plan"]["table"] == "launches" or any(
        c["field"].get("table") == "launches" for c in t.extra["plan"]["columns"])]
    assert on_launches, "no task reads the nameless table"
    for task in tasks:
        assert not re.search(r"#\d", task.question), task.question
        run = solve(SearchEnv(spec.world, None, task, warehouse=wh, seed=1), task)
        assert run.score.f1_by_item == 1.0, (task.instance_id, run.failed, task.question[:200])
    pages, _ = read_corpus(path)
    assert not pages.filter(pages["body_md"].str.contains(r"#\d") | pages["title"].str.contains(r"#\d")).height
