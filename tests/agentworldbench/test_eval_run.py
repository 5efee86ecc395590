"""`worldforge eval run --model URL --judge URL` on our export, against oracle servers (a world model
that answers the gold next state, a judge that compares): a perfect prediction scores 100 in every
domain under the reference's domain names; a re-run redoes only what failed; the reference's
figures are reproduced."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.agentworldbench.oracle import OracleServer, load_records
from worldforge.agentworldbench.judge import JUDGE_DIMENSIONS
from worldforge.agentworldbench.verifiers import VERIFIERS
from worldforge.cli import app
from worldforge.datasets.agentworldbench import ExportConfig, build_agentworldbench
from worldforge.net import free_port

runner = CliRunner()
DOMAINS = {"terminal", "swe", "search", "mcp", "android", "web", "os"}


@pytest.fixture(scope="module")
def export(traj_wh, tmp_path_factory):
    out = tmp_path_factory.mktemp("awb-run") / "agentworldbench"
    report = build_agentworldbench(traj_wh, out, ExportConfig(test_fraction=0.3, max_records_per_domain=60))
    assert report.tally.balanced and report.tally.kept > 100
    return out


def run(export, out, world_url: str, judge_url: str, *extra: str):
    res = runner.invoke(app, ["eval", "run", str(export), "--model", world_url, "--judge", judge_url, "-o", str(out), *extra])
    assert res.exit_code == 0, res.output
    return res, json.loads((out / "scores.json").read_text())


def test_a_perfect_world_model_scores_100_in_every_domain(export, tmp_path):
    records = load_records(export)
    empty = [r for r in records if not r["response"][r["turn_idx"] - 1].removeprefix("**Environment Observation:**").strip()]
    assert empty, "the export has records whose true next state is empty"
    with OracleServer("world", records=export) as world, OracleServer("judge", verdict="match") as judge:
        res, scores = run(export, tmp_path / "eval", world.base_url, judge.base_url)
    assert world.unmatched == 0 and judge.unreadable == 0 and len(judge.requests) == len(records)
    assert set(scores["domains"]) <= DOMAINS and "mcp" in scores["domains"]
    for d, g in [*scores["domains"].items(), ("overall", scores["overall"])]:
        assert g["failed"] == 0 and g["judged"] == g["lines"], d
        assert g["total"] == 100.0 and g["total_failed_as_zero"] == 100.0 and g["ci95"] == [100.0, 100.0], d
        assert all(g["judge"][x] == 100.0 for x in JUDGE_DIMENSIONS), d
        assert all(g["rules"][m] in (None, 100.0) for m in VERIFIERS), d
    ref = scores["reference"]
    assert ref["overall"] == 100.0 and all(e["scores"]["total_score"] == 100.0 and e["failed"] == 0 for e in ref["domains"].values())
    assert "MCP" in res.output and "Overall: 100.00" in res.output
    # the empty next states were judged like any other, as empty blocks
    judged = [json.loads(x) for x in (tmp_path / "eval" / "judged.jsonl").read_text().splitlines()]
    blank = [j for j in judged if j["reference"] == ""]
    assert len(blank) == len(empty) and all(j["status"] == "ok" and j["predicted_observation"] == "" and j["total_score"] == 5 for j in blank)
    meta = judged[0]["judge_meta"]
    assert meta["model"].endswith("oracle-judge") and meta["temperature"] == 0.0 and meta["seed"] == 0 and len(meta["prompt_sha256"]) == 64
    assert len(scores["judges"]) == len(scores["domains"])  # one rubric, so one prompt hash, per domain


def test_a_wrong_prediction_costs_its_domain(export, tmp_path):
    records = load_records(export)
    victim = next(r for r in records if r["task"] == "mcp")
    with OracleServer("world", records=export, corrupt=[victim["id"]]) as world, OracleServer("judge", verdict="match") as judge:
        _, scores = run(export, tmp_path / "eval", world.base_url, judge.base_url)
    mcp = scores["domains"]["mcp"]
    n = mcp["lines"]
    assert mcp["total"] == pytest.approx(100 * (n - 1) / n) and mcp["rules"]["exact_match"] < 100
    assert all(g["total"] == 100.0 for d, g in scores["domains"].items() if d != "mcp")
    lo, hi = mcp["ci95"]
    assert lo < mcp["total"] <= hi <= 100.0


def test_a_rerun_redoes_only_what_failed(export, tmp_path):
    records = load_records(export)
    half = [r for i, r in enumerate(records) if i % 2 == 0]
    out = tmp_path / "eval"
    # 1: the world model knows only half the records (the rest: HTTP 404); the judge answers nothing (HTTP 404)
    with OracleServer("world", records=half) as world, OracleServer("world", records=[]) as broken_judge:
        res = runner.invoke(app, ["eval", "run", str(export), "--model", world.base_url, "--judge", broken_judge.base_url, "-o", str(out)])
    assert res.exit_code == 0, res.output
    scores = json.loads((out / "scores.json").read_text())
    missing = world.unmatched  # about half (a record whose messages equal a known one's is answered too)
    assert len(records) // 3 < missing <= len(records) - len(half)
    assert scores["overall"]["failed"] == missing and scores["overall"]["judged"] == 0
    assert scores["overall"]["total"] is None and scores["overall"]["total_failed_as_zero"] == 0.0
    judged = [json.loads(x) for x in (out / "judged.jsonl").read_text().splitlines()]
    assert {j["judge_status"] for j in judged} == {"failed", "skipped"} and all(j["judge_reason"] for j in judged)
    assert all(j["reason"].startswith("HTTP 404") for j in judged if j["status"] == "failed")
    # 2: both healthy: only the missing predictions are generated, and every verdict is asked for
    with OracleServer("world", records=export) as world, OracleServer("judge", verdict="match") as judge:
        _, scores = run(export, out, world.base_url, judge.base_url)
    assert len(world.requests) == missing and len(judge.requests) == len(records)
    over = scores["overall"]
    assert over["failed"] == 0 and over["judged"] == len(records)
    # records with the same messages share one cached prediction, so all but one of each such group may be wrong
    assert over["total"] >= 100 * (len(records) - world.ambiguous) / len(records)
    # 3: nothing left to do: no request at all
    with OracleServer("world", records=export) as world, OracleServer("judge", verdict="match") as judge:
        _, again = run(export, out, world.base_url, judge.base_url)
    assert len(world.requests) == 0 and len(judge.requests) == 0 and again["overall"] == scores["overall"]


def test_eval_run_errors_are_clear(export, tmp_path):
    with OracleServer("world", records=export) as world:
        res = runner.invoke(app, ["eval", "run", str(tmp_path / "nowhere"), "--model", world.base_url])
    assert res.exit_code == 2 and "no such AgentWorldBench file or folder" in " ".join(res.output.split())
    res = runner.invoke(app, ["eval", "run", str(export), "--model", f"http://127.0.0.1:{free_port()}/v1"])
    assert res.exit_code == 2 and "cannot reach the world-model server" in " ".join(res.output.split())
    res = runner.invoke(app, ["eval", "run", str(export), "--model", "http://127.0.0.1:9/v1", "--messages", "chatml"])
    assert res.exit_code == 2 and "--messages must be one of" in " ".join(res.output.split())
    res = runner.invoke(app, ["eval", "run", str(export), "--model", "http://127.0.0.1:9/v1", "--prompts", str(tmp_path / "none")])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_the_summary_shows_the_evaluation_per_benchmark_domain(export, tmp_path):
    wh = tmp_path / "wh"
    with OracleServer("world", records=export) as world, OracleServer("judge", verdict="match") as judge:
        res = runner.invoke(app, ["eval", "run", str(export), "--model", world.base_url, "--judge", judge.base_url, "-w", str(wh)])
    assert res.exit_code == 0, res.output
    assert (wh / "datasets" / "eval" / "scores.json").is_file()  # the default folder: WAREHOUSE/datasets/eval
    res = runner.invoke(app, ["summary", "-w", str(wh)])
    assert res.exit_code == 0, res.output
    lines = [x.strip() for x in res.output.splitlines()]
    assert any(x.startswith("MCP ") and "judge total 100.0" in x for x in lines), res.output
    assert any(x.startswith("Overall ") for x in lines) and not any(x.startswith("Tool ") for x in lines)
