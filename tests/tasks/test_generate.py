import json

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.conftest import BUNDLED
from tests.conftest_worlds import built_world
from worldforge.cli import app
from worldforge.corpus import read_corpus, render_value
from worldforge.tasks import check_solvable, load_tasks, render_markdown_table, score_table
from worldforge.tasks.store import build_tasks, read_tasks
from worldforge.warehouse import read_world


@pytest.mark.parametrize("name", BUNDLED)
def test_generated_tasks_are_solvable_and_true_to_the_tables(specs, tmp_path, name):
    path = built_world(specs[name], tmp_path)
    built = build_tasks(path)
    assert built.tasks and built.unsolvable == {}
    assert {t.extra["kind"] for t in built.tasks} >= {"children", "window"}
    wf = read_world(path)
    for task in [t for t in built.tasks if t.extra["scenario"] is None]:
        prov = task.extra["provenance"]
        table = wf.tables[prov["table"]]
        pk = wf.spec.tables[prov["table"]].primary_key
        rows = {str(r[pk]): r for r in table.iter_rows(named=True)}
        for key, gold in zip(prov["row_keys"], task.gold):
            for col, src in prov["columns"].items():
                if src != "@url":
                    assert gold[col] == render_value(rows[key][src])
        assert score_table(render_markdown_table(task.required, task.gold), task).f1_by_item == 1.0
        ev = task.evaluation
        assert set(ev["required"]) == set(ev["eval_pipeline"]) and set(ev["unique_columns"]) <= set(ev["required"])
        metrics = {m for p in ev["eval_pipeline"].values() for m in p["metric"]}
        assert metrics <= {"exact_match", "number_near", "date_near", "url_match"}


def test_tasks_are_deterministic(specs, tmp_path):
    a = build_tasks(built_world(specs["esports_2031"], tmp_path / "a")).tasks
    b = build_tasks(built_world(specs["esports_2031"], tmp_path / "b")).tasks
    assert [(t.instance_id, t.gold, t.evaluation) for t in a] == [(t.instance_id, t.gold, t.evaluation) for t in b]


def test_check_solvable_catches_missing_and_leaked_cells(specs, tmp_path):
    path = built_world(specs["mars_colony_2030"], tmp_path)
    task = build_tasks(path).tasks[0]
    pages, facts = read_corpus(path)
    assert check_solvable(task, pages, facts) == []
    t = task.extra["provenance"]["table"]
    col = next(c for c in task.extra["provenance"]["columns"].values() if c != "@url" and c not in task.unique_columns)
    dropped = facts.filter(~((pl.col("table_name") == t) & (pl.col("column_name") == col)))
    assert any(f"no page states {t}.{col}" in p for p in check_solvable(task, pages, dropped))
    leaked = facts.with_columns(pl.lit("lead").alias("section"))
    assert any("a snippet could reveal it" in p for p in check_solvable(task, pages, leaked))


def test_cli_export_layout_and_score(specs, tmp_path):
    runner = CliRunner()
    wh = tmp_path / "wh"
    assert runner.invoke(app, ["world", "build", "world_specs/smartphones_2029.yaml", "-w", str(wh)]).exit_code == 0
    r = runner.invoke(app, ["corpus", "build", "smartphones_2029", "-w", str(wh)])
    assert r.exit_code == 0 and "contradicted: 0" in r.output
    r = runner.invoke(app, ["corpus", "search", "smartphones_2029", "Samsung", "-k", "2", "-w", str(wh)])
    assert r.exit_code == 0 and r.output.startswith("[1] https://") and "Snippet:" in r.output and "Date:" in r.output
    out = tmp_path / "export"
    r = runner.invoke(app, ["tasks", "export", str(out), "--world", "smartphones_2029", "-w", str(wh)])
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert all(isinstance(x["evaluation"], str) for x in lines)  # a JSON string, as in DeepWideSearch
    assert sorted(p.stem for p in (out / "tables").glob("*.csv")) == sorted(x["instance_id"] for x in lines)
    loaded = load_tasks(out / "tasks.jsonl")
    stored = read_tasks(wh / "smartphones_2029.duckdb", all_scenarios=True)
    assert [t.instance_id for t in stored] == sorted(loaded)
    task = next(iter(loaded.values()))
    answer = tmp_path / "answer.md"
    answer.write_text(render_markdown_table(task.required, task.gold[:-1]))
    r = runner.invoke(app, ["tasks", "score", str(answer), "--tasks", str(out / "tasks.jsonl"), "--id", task.instance_id])
    assert r.exit_code == 0
    scores = json.loads(r.output)
    n = len(task.gold)
    assert scores["precision_by_row"] == 1.0 and scores["recall_by_row"] == pytest.approx((n - 1) / n)
    r = runner.invoke(app, ["tasks", "score", str(answer), "--tasks", str(out / "tasks.jsonl"), "--id", "nope"])
    assert r.exit_code == 2 and "no task 'nope'" in r.output
