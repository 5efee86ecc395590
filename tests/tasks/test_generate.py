import json
import re
import statistics

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.conftest import BUNDLED, ROOT
from tests.conftest_worlds import built_world
from worldforge.cli import app
from worldforge.corpus import read_corpus
from worldforge.corpus.vocab import row_labels, table_info
from worldforge.tasks import check_solvable, load_tasks, norm_column, render_markdown_table, score_table
from worldforge.tasks.generate import KINDS
from worldforge.tasks.store import build_tasks, read_tasks
from worldforge.warehouse import read_world


@pytest.mark.parametrize("name", BUNDLED)
def test_generated_tasks_are_solvable_wide_and_true_to_the_tables(specs, tmp_path, name):
    path = built_world(specs[name], tmp_path)
    built = build_tasks(path)
    assert built.unsolvable == {}
    assert len(built.tasks) >= 30
    kinds = {t.extra["kind"] for t in built.tasks}
    assert len(kinds) >= 8 and kinds <= set(KINDS)
    assert statistics.median(len(t.required) for t in built.tasks) >= 5
    assert statistics.median(len(t.gold) for t in built.tasks) >= 10
    wf = read_world(path)
    for task in built.tasks:
        tables = wf.tables if task.extra["scenario"] is None else wf.scenarios[task.extra["scenario"]]
        prov, plan = task.extra["provenance"], task.extra["plan"]
        assert plan["columns"] and [c["name"] for c in plan["columns"]] == task.required
        assert len(prov["rows"]) == len(task.gold)
        if task.extra["kind"] != "aggregate":  # gold rows are table rows: the unique column is the row's label
            # its name, or the designation of a table without a name column (a listing, a logged observation)
            labels = {str(k): lab.text for k, lab in row_labels(wf.spec, tables)[prov["table"]].items()}
            key_col = task.unique_columns[0]
            assert [g[key_col] for g in task.gold] == [labels[k] for k in prov["row_keys"]]
        for u in task.unique_columns:  # unique columns are really unique
            assert len({g[u] for g in task.gold}) == len(task.gold)
        assert not any(re.search(r"[a-z]_[a-z]", c) for c in task.required)  # no column identifiers
        assert score_table(render_markdown_table(task.required, task.gold), task).f1_by_item == 1.0
        ev = task.evaluation
        assert set(ev["required"]) == set(ev["eval_pipeline"]) and set(ev["unique_columns"]) <= set(ev["required"])
        metrics = {m for p in ev["eval_pipeline"].values() for m in p["metric"]}
        assert metrics <= {"exact_match", "number_near", "date_near", "url_match"}
        assert "Markdown table" in task.question and all(norm_column(c) in norm_column(task.question) for c in task.required)


def test_aggregates_are_computed_from_the_tables(specs, tmp_path):
    path = built_world(specs["smartphones_2029"], tmp_path)
    task = next(t for t in build_tasks(path).tasks if t.extra["kind"] == "aggregate" and t.extra["plan"]["group"]["of"] == "parent")
    wf = read_world(path)
    models, brands = wf.tables["models"], wf.tables["brands"]
    counts = models.join(brands, on="brand_id").group_by("name_right").len()
    count_col = next(c for c in task.required if c.startswith("numberof"))
    assert {g[task.unique_columns[0]]: int(g[count_col]) for g in task.gold} == dict(counts.rows())


def test_tasks_are_deterministic(specs, tmp_path):
    a = build_tasks(built_world(specs["esports_2031"], tmp_path / "a")).tasks
    b = build_tasks(built_world(specs["esports_2031"], tmp_path / "b")).tasks
    assert [(t.instance_id, t.gold, t.evaluation) for t in a] == [(t.instance_id, t.gold, t.evaluation) for t in b]


def test_check_solvable_catches_missing_and_leaked_cells(specs, tmp_path):
    path = built_world(specs["mars_colony_2030"], tmp_path)
    task = next(t for t in build_tasks(path).tasks if t.extra["scenario"] is None)
    pages, facts = read_corpus(path)
    assert check_solvable(task, pages, facts) == []
    t, _, col, _ = next(c for c in task.extra["provenance"]["cells"] if c[2] != table_info(read_world(path).spec, c[0]).label_column)
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


def test_unsolvable_tasks_are_rejected_not_stored_and_counted(specs, tmp_path):
    """Rejection sampling: a world whose corpus states every cell of one table in some lead (a catalog world of
    the 1,000-world bench did) keeps its other tasks; the rejected ones are counted, never stored or exported."""
    import duckdb

    from worldforge.pipeline import WORLD_STEPS, WorldRun
    from worldforge.warehouse.layout import Warehouse

    path = built_world(specs["mars_colony_2030"], tmp_path)
    table = next(t for t in build_tasks(path).tasks if t.extra["scenario"] is None).extra["provenance"]["table"]
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE corpus_facts SET section = 'lead' WHERE table_name = ?", [table])
    built = build_tasks(path)
    assert built.unsolvable and all("a snippet could reveal it" in p[0] for p in built.unsolvable.values())
    assert {t.extra["provenance"]["table"] for t in built.tasks if t.instance_id in built.unsolvable} == {table}
    kept = [t.instance_id for t in built.kept]
    assert kept and len(kept) + len(built.unsolvable) == len(built.tasks)
    assert built.tally.balanced and built.tally.kept == len(kept)
    stored = read_tasks(path, all_scenarios=True)
    assert sorted(t.instance_id for t in stored) == sorted(kept)  # only the solvable ones are stored
    pages, facts = read_corpus(path)
    assert all(check_solvable(t, pages, facts) == [] for t in stored if t.extra["scenario"] is None)

    step = next(s for s in WORLD_STEPS if s.name == "search_tasks")
    run = WorldRun("mars_colony_2030", Warehouse.of(tmp_path), export_tasks=False)
    result = step.execute(run)
    assert not result.failed_checks and result.metadata["rejected_unsolvable"] == len(built.unsolvable)
    assert result.metadata["tasks"] == len(kept)

    res = CliRunner().invoke(app, ["tasks", "export", str(tmp_path / "out"), "--world", "mars_colony_2030", "--warehouse", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "not stored" in res.output and len((tmp_path / "out" / "tasks.jsonl").read_text().splitlines()) == len(kept)

    with duckdb.connect(str(path)) as con:  # every cell in some lead: no task is solvable, the check fails
        con.execute("UPDATE corpus_facts SET section = 'lead'")
    result = step.execute(run)
    assert [c.name for c in result.failed_checks] == ["every_task_solvable"]
    assert result.failed_checks[0].summary.startswith("every task was unsolvable")
    res = CliRunner().invoke(app, ["tasks", "export", str(tmp_path / "out2"), "--world", "mars_colony_2030", "--warehouse", str(tmp_path)])
    assert res.exit_code == 1


WORLD_SPECS = sorted((ROOT / "world_specs").glob("*.yaml")) + sorted((ROOT / "bench" / "specs").glob("*.yaml"))


@pytest.mark.parametrize("spec_path", WORLD_SPECS, ids=lambda p: p.stem)
def test_every_world_gets_30_wide_tasks_of_median_15_rows(spec_path, tmp_path):
    """Counts follow the world, not a fixed number per kind: every bundled and bench world gets at least 30 base-world
    tasks (scenarios not counted) with a median gold table of at least 15 rows; ``per_kind`` still caps each kind."""
    from collections import Counter

    from worldforge.spec import load_spec

    path = built_world(load_spec(spec_path), tmp_path)
    built = build_tasks(path)
    base = [t for t in built.kept if t.extra["scenario"] is None]
    assert len(base) >= 30, Counter(t.extra["kind"] for t in base)
    assert statistics.median(len(t.gold) for t in base) >= 15
    assert {"parent_filter", "top_parents"} <= {t.extra["kind"] for t in base}
    for t in base:
        if t.extra["kind"] in ("parent_filter", "top_parents", "nested"):
            assert 15 <= len(t.gold) <= 60, t.instance_id
    selections = [(t.extra["kind"], tuple(t.extra["provenance"]["row_keys"])) for t in base if t.extra["kind"] in ("join", "window")]
    assert len(selections) == len(set(selections))  # never the same span of rows twice
    capped = build_tasks(path, per_kind=2, include_scenarios=False, deep=0)
    assert max(Counter(t.extra["kind"] for t in capped.tasks).values()) <= 2


def _column(spec, tables, t: str, read: str) -> str:
    """The column of ``t`` a plan's field reads (its label, capitalised)."""
    info = table_info(spec, t, tables[t])
    return next(c for c, ci in info.columns.items() if ci.label[:1].upper() + ci.label[1:] == read)


def _holds(x, cond: dict) -> bool:
    op, v = cond["op"], cond["value"]
    return {">=": lambda: x >= v, "<=": lambda: x <= v, "in": lambda: str(x) in [str(w) for w in v]}[op]()


@pytest.fixture(scope="module")
def cross_tasks(specs, tmp_path_factory):
    """``(world file, its base-world tasks)`` of two worlds with three-table chains (leagues > teams > players, habitats >
    residents > missions)."""
    out = {}
    for name in ("esports_2031", "mars_colony_2030"):
        path = built_world(specs[name], tmp_path_factory.mktemp(name))
        out[name] = (read_world(path), build_tasks(path, include_scenarios=False, deep=0).kept)
    return out


def _expected(wf, t: str, ref: str, pt: str, parent_keys) -> dict[str, str]:
    """``{child label: parent label}`` of the children of ``parent_keys``, computed from the tables."""
    labels = row_labels(wf.spec, wf.tables)
    pk = wf.spec.tables[t].primary_key
    kids = wf.tables[t].filter(pl.col(ref).is_in(list(parent_keys)))
    return {labels[t][k].text: labels[pt][p].text for k, p in kids.select(pk, ref).iter_rows()}


def _ref(spec, t: str, pt: str) -> str:
    return next(r for r, c in spec.tables[t].references.items() if c.parent == pt)


def _gold_pairs(task) -> dict[str, str]:
    name, parent = task.unique_columns[0], norm_column(task.extra["plan"]["columns"][1]["name"])
    return {g[name]: g[parent] for g in task.gold}


def test_parent_filter_gold_is_the_children_of_the_parents_that_meet_the_condition(cross_tasks):
    checked = 0
    for wf, tasks in cross_tasks.values():
        for task in (t for t in tasks if t.extra["kind"] == "parent_filter"):
            plan = task.extra["plan"]
            t, sub = plan["table"], plan["rows"]["of"]
            pt, (cond,) = sub["table"], sub["where"]
            col = _column(wf.spec, wf.tables, pt, cond["field"]["read"])
            ppk = wf.spec.tables[pt].primary_key
            keys = [k for k, x in wf.tables[pt].select(ppk, col).iter_rows() if _holds(x, cond)]
            assert 2 <= len(keys) < wf.tables[pt].height
            assert _gold_pairs(task) == _expected(wf, t, _ref(wf.spec, t, pt), pt, keys)
            value_col = norm_column(plan["columns"][2]["name"])  # the parent's value, as the condition reads it
            by_label = {row_labels(wf.spec, wf.tables)[pt][k].text: x for k, x in wf.tables[pt].select(ppk, col).iter_rows()}
            assert all(float(g[value_col]) == pytest.approx(float(by_label[g[norm_column(plan["columns"][1]["name"])]]))
                       for g in task.gold if cond["op"] != "in")
            checked += 1
    assert checked >= 4


def test_top_parents_gold_is_the_children_of_the_top_k_parents(cross_tasks):
    checked = 0
    for wf, tasks in cross_tasks.values():
        for task in (t for t in tasks if t.extra["kind"] == "top_parents"):
            plan = task.extra["plan"]
            t, sub = plan["table"], plan["rows"]["of"]
            pt = sub["table"]
            col = _column(wf.spec, wf.tables, pt, sub["order"]["field"]["read"])
            ppk = wf.spec.tables[pt].primary_key
            ranked = wf.tables[pt].sort(col, descending=sub["order"]["desc"])
            k = sub["limit"]
            assert ranked[col][k - 1] != ranked[col][k]  # no tie at the cut
            assert _gold_pairs(task) == _expected(wf, t, _ref(wf.spec, t, pt), pt, ranked[ppk].head(k).to_list())
            checked += 1
    assert checked >= 4


def test_nested_gold_is_the_grandchildren_of_the_named_grandparents(cross_tasks):
    checked = 0
    for wf, tasks in cross_tasks.values():
        labels = row_labels(wf.spec, wf.tables)
        for task in (t for t in tasks if t.extra["kind"] == "nested"):
            plan = task.extra["plan"]
            t, sub = plan["table"], plan["rows"]["of"]
            mt = sub["table"]
            gt = next(c.parent for c in wf.spec.tables[mt].references.values())
            named = {p["label"] for p in sub["rows"]["parents"]}
            gkeys = [k for k, lab in labels[gt].items() if lab.text in named]
            middle = wf.tables[mt].filter(pl.col(_ref(wf.spec, mt, gt)).is_in(gkeys))
            for cond in sub.get("where", []):
                col = _column(wf.spec, wf.tables, mt, cond["field"]["read"])
                middle = middle.filter(pl.Series([_holds(x, cond) for x in middle[col]]))
            mkeys = middle[wf.spec.tables[mt].primary_key].to_list()
            assert _gold_pairs(task) == _expected(wf, t, _ref(wf.spec, t, mt), mt, mkeys)
            checked += 1
    assert checked >= 4
