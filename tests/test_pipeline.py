"""A world's steps are declared once (worldforge.pipeline): the runner, the CLI, the catalog build and the
generated Dagster assets follow the same list."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.conftest import SPECS_DIR
from worldforge.cli import app
from worldforge.pipeline import WORLD_STEPS, CheckResult, Step, StepResult, run_world, step_names
from worldforge.spec import load_spec
from worldforge.trajectories.episodes import read_episodes
from worldforge.warehouse import Warehouse

NAMES = ["world_tables", "scenario_tables", "search_corpus", "search_index", "search_tasks", "oracle_episodes"]


def test_the_step_list_is_ordered_by_its_inputs():
    assert step_names() == NAMES
    seen: set[str] = set()
    for step in WORLD_STEPS:
        assert set(step.after) <= seen, f"{step.name} comes before what it reads"
        seen.add(step.name)
    # no step writes a shared file: the oracle adds a part to its own world's episodes, so world runs need no pool
    assert sum(s.rewriter_option for s in WORLD_STEPS) == 1 and [s.name for s in WORLD_STEPS if s.pool] == []


@pytest.mark.dagster
def test_the_dagster_world_assets_are_generated_from_the_steps():
    from assets.automation import world_build_job
    from assets.definitions import defs
    from assets.worlds import WORLD_ASSETS

    assert list(WORLD_ASSETS) == NAMES
    graph = defs.get_repository_def().asset_graph
    for step in WORLD_STEPS:
        asset = WORLD_ASSETS[step.name]
        key = asset.key
        assert {k.to_user_string() for k in graph.get(key).parent_keys} == set(step.after)
        assert [c.name for c in asset.check_specs] == [c.name for c in step.checks]
        assert asset.descriptions_by_key[key] == step.description
    selected = world_build_job.selection.resolve(graph)
    assert {k.to_user_string() for k in selected} == set(NAMES)


def test_run_world_builds_a_world_end_to_end_and_the_cli_says_so(tmp_path, monkeypatch):
    from worldforge.spec import plan as plan_module
    from worldforge.warehouse.worlds import _stored_spec

    compiled = []
    real = plan_module.build_plan
    monkeypatch.setattr(plan_module, "build_plan", lambda spec: compiled.append(spec) or real(spec))
    _stored_spec.cache_clear()
    results = run_world(SPECS_DIR / "esports_2031.yaml", Warehouse(tmp_path))
    monkeypatch.undo()
    spec = load_spec(SPECS_DIR / "esports_2031.yaml")
    # the spec is compiled once from the YAML for the whole run and once from the world file's stored copy;
    # each time-shifted scenario is a changed spec, compiled once
    assert sum(s == spec for s in compiled) == 2 and len(compiled) == 2 + len(spec.scenarios)
    assert [r.step for r in results] == NAMES
    assert all(c.passed for r in results for c in r.checks), [(r.step, r.failed_checks) for r in results]
    figures = {k: v for r in results for k, v in r.figures.items()}
    assert figures["rows"] >= 300 and figures["pages"] > 1000 and figures["tasks"] >= 20 and figures["oracle_f1_min"] == 1.0
    oracle = read_episodes(Warehouse(tmp_path))
    assert oracle.height == results[-1].metadata["episodes"] > 0 and set(oracle["world"]) == {"esports_2031"} and set(oracle["agent"]) == {"oracle"}
    # every task record carries its kind, hops and the oracle's tool calls (a curriculum's axes, issue 48)
    from worldforge.tasks.plans import plan_hops
    from worldforge.tasks.store import read_tasks
    from worldforge.warehouse.duck import open_readonly

    tasks = read_tasks(tmp_path / "esports_2031.duckdb", all_scenarios=True)
    assert tasks and all(t.extra["hops"] == plan_hops(t.extra["plan"]) and t.extra["oracle_calls"] >= 1 for t in tasks)
    with open_readonly(tmp_path / "esports_2031.duckdb") as con:
        assert con.execute("SELECT count(*) FROM deep_questions WHERE oracle_calls IS NULL OR oracle_calls < 1").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM v_tasks WHERE oracle_calls IS NULL").fetchone()[0] == 0

    out = CliRunner().invoke(app, ["world", "run", str(SPECS_DIR / "esports_2031.yaml"), "--warehouse", str(tmp_path / "cli")])
    assert out.exit_code == 0, out.output
    lines = [line.split()[0] for line in out.output.splitlines() if line.strip()]
    assert lines == NAMES and "FAILED" not in out.output
    assert CliRunner().invoke(app, ["world", "steps", "--select"]).output.strip() == ",".join(NAMES)


def test_a_failed_check_stops_the_run_and_the_later_steps_do_not_run(tmp_path):
    ran = []

    def failing(run):
        ran.append("audit")
        return StepResult("audit", checks=[CheckResult("audit_passes", False, summary="the audit found 2 problems")])

    def later(run):
        ran.append("later")
        return StepResult("later")

    steps = (WORLD_STEPS[0], Step("audit", "An audit.", ("world_tables",), (), failing, group="worlds"),
             Step("later", "Never runs.", ("audit",), (), later, group="worlds"))
    results = run_world(SPECS_DIR / "smartphones_2029.yaml", Warehouse(tmp_path), steps=steps)
    assert [r.step for r in results] == ["world_tables", "audit"] and ran == ["audit"]
    assert results[-1].failed_checks[0].summary == "the audit found 2 problems"
    assert (tmp_path / "smartphones_2029.duckdb").is_file()  # what the steps before it wrote stays


def test_each_result_reaches_the_caller_before_a_later_step_raises(tmp_path):
    from worldforge.errors import WorldforgeError

    def broken(run):
        raise WorldforgeError("the corpus server is unreachable")

    kept = []
    steps = (WORLD_STEPS[0], Step("corpus", "Pages.", ("world_tables",), (), broken, group="corpora"))
    with pytest.raises(WorldforgeError, match="unreachable"):
        run_world(SPECS_DIR / "smartphones_2029.yaml", Warehouse(tmp_path), steps=steps, on_result=kept.append)
    assert [r.step for r in kept] == ["world_tables"] and kept[0].figures["rows"] >= 300  # a catalog row keeps what was counted


def test_a_step_runs_with_the_collector_relaxed_and_the_thresholds_come_back_even_when_it_raises(tmp_path):
    import gc

    from worldforge.errors import WorldforgeError
    from worldforge.pipeline import WorldRun
    from worldforge.runtime import GC_GEN0
    from worldforge.warehouse.layout import Warehouse

    before = gc.get_threshold()
    seen = []

    def probe(run):
        seen.append(gc.get_threshold())
        return StepResult("probe")

    def broken(run):
        seen.append(gc.get_threshold())
        raise WorldforgeError("no corpus")

    run = WorldRun("w", Warehouse.of(tmp_path), SPECS_DIR / "smartphones_2029.yaml")
    result = Step("probe", "A probe.", (), (), probe, group="worlds").execute(run)
    assert result.seconds > 0 and gc.get_threshold() == before
    with pytest.raises(WorldforgeError):
        Step("broken", "Raises.", (), (), broken, group="worlds").execute(run)
    assert gc.get_threshold() == before
    assert seen == [(max(GC_GEN0, before[0]), *before[1:])] * 2
    assert gc.isenabled()


def test_select_steps_keeps_the_steps_order_and_refuses_unknown_names():
    from worldforge.errors import WorldforgeError
    from worldforge.pipeline import select_steps

    assert select_steps(None) == WORLD_STEPS
    assert [s.name for s in select_steps("search_index, search_corpus,search_corpus")] == ["search_corpus", "search_index"]
    assert [s.name for s in select_steps(["search_tasks"])] == ["search_tasks"]
    with pytest.raises(WorldforgeError, match="unknown step 'corpus' \\(the steps: world_tables, "):
        select_steps("corpus")
    with pytest.raises(WorldforgeError, match="no step selected"):
        select_steps(" , ")


@pytest.mark.parametrize(("args", "message"), [
    (["--steps", "bogus"], "unknown step 'bogus'"),
    (["--steps", "world_tables"], "world_tables needs the spec file"),
    (["--steps", "search_corpus"], "nowhere_2030.duckdb: no such DuckDB file"),
])
def test_world_run_refuses_a_bad_selection_in_one_line(tmp_path, args, message):
    out = CliRunner().invoke(app, ["world", "run", "nowhere_2030", *args, "--warehouse", str(tmp_path)])
    assert out.exit_code == 2 and out.output.startswith("error:") and message in out.output, out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
