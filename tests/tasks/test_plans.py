"""Hops of a wide task's plan, and the oracle's tool calls stored on task records (issue 48, item 3)."""

from __future__ import annotations

import pytest

from worldforge.tasks.plans import plan_hops
from worldforge.tasks.store import build_tasks, read_tasks, record_oracle_calls
from worldforge.warehouse.duck import open_readonly

_NAME = {"name": "model", "field": {"of": "row", "read": "@name"}, "agg": None}
_PRICE = {"name": "price", "field": {"of": "row", "read": "Launch price"}, "agg": None}
_BRAND = {"name": "brand", "field": {"of": "parent", "read": "@name"}, "agg": None}
_BASE = {"name": "price2029", "field": {"of": "base", "read": "Launch price"}, "agg": None}


@pytest.mark.parametrize(("plan", "hops"), [
    ({"rows": {"from": "dataset"}, "columns": [_NAME, _PRICE]}, 1),
    ({"rows": {"from": "dataset"}, "columns": [_NAME, _BRAND]}, 2),
    ({"rows": {"from": "children", "parent": {"slug": "brands", "label": "Lava"}}, "columns": [_NAME]}, 1),
    ({"rows": {"from": "children", "parent": {"slug": "brands", "resolve": {"where": []}}}, "columns": [_NAME, _PRICE]}, 2),
    ({"rows": {"from": "dataset"}, "group": {"of": "row"}, "columns": [_NAME, {**_PRICE, "agg": "mean"}]}, 2),
    ({"rows": {"from": "children", "parent": {"slug": "brands", "resolve": {}}}, "columns": [_NAME, _BRAND, _BASE]}, 4),
    ({"rows": {"from": "children", "of": {"slug": "brands", "rows": {"from": "dataset"}, "limit": 5}}, "columns": [_NAME, _BRAND]}, 3),
    ({"rows": {"from": "children", "of": {"slug": "teams", "rows": {"from": "children", "parent": {"label": "LCK"}}}}, "columns": [_NAME]}, 2),
])
def test_plan_hops_counts_the_dependent_lookups(plan, hops):
    assert plan_hops(plan) == hops


def test_oracle_calls_are_stored_on_the_records_atomically(specs, tmp_path):
    from tests.conftest_worlds import built_world

    path = built_world(specs["smartphones_2029"], tmp_path)
    built = build_tasks(path)
    tasks = read_tasks(path, all_scenarios=True)
    assert tasks and all(t.extra["oracle_calls"] is None and t.extra["hops"] == plan_hops(t.extra["plan"]) for t in tasks)
    calls = {t.instance_id: i + 1 for i, t in enumerate(tasks)}
    deep = {q.question_id: 7 for q in built.deep}
    record_oracle_calls(path, {**calls, "not_a_task": 3}, deep)  # an id the file does not hold is ignored
    assert {t.instance_id: t.extra["oracle_calls"] for t in read_tasks(path, all_scenarios=True)} == calls
    with open_readonly(path) as con:
        assert con.execute("SELECT count(*) FROM deep_questions WHERE oracle_calls = 7").fetchone()[0] == len(deep) > 0
    # a write that fails half-way (a count that is not a number, found inside the write) leaves the file as it was
    before = path.read_bytes()
    with pytest.raises(Exception):
        record_oracle_calls(path, {tasks[0].instance_id: "many"})
    assert path.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir() if x.name.startswith(".")) == []  # no temporary file left behind
