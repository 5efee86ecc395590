"""`eval judge | score` on our own AgentWorldBench export of real trajectories: a perfect
prediction run tops every rule metric, a shuffled one falls near the bottom."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from worldforge.agentworldbench.judge import parse_judgement
from worldforge.agentworldbench.records import read_records
from worldforge.agentworldbench.score import score_file
from worldforge.agentworldbench.verifiers import VERIFIERS
from worldforge.cli import app
from worldforge.datasets.agentworldbench import ExportConfig, build_agentworldbench

runner = CliRunner()


@pytest.fixture(scope="module")
def export(traj_wh, tmp_path_factory):
    out = tmp_path_factory.mktemp("awb") / "agentworldbench"
    report = build_agentworldbench(traj_wh, out, ExportConfig(test_fraction=0.3))
    assert report.tally.balanced and report.tally.kept > 100
    return out


def _predictions(export, path, shuffle: bool) -> None:
    lines = []
    for f in sorted(export.glob("*_test.jsonl")):
        recs = [r for _, r in read_records(f)]
        refs = [r.reference() for r in recs]
        preds = random.Random(0).sample(refs, len(refs)) if shuffle else refs
        lines += [{"id": r.id, "domain": r.model_extra["domain"], "status": "ok", "action": r.current_prompt,
                   "predicted_observation": p, "reference": r.reference()} for r, p in zip(recs, preds)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_the_export_files(export, tmp_path):
    files = sorted(p.name for p in export.glob("*_test.jsonl"))
    assert files and set(files) <= {f"{d}_test.jsonl" for d in ("mcp", "search", "swe", "terminal", "web")}
    assert "mcp_test.jsonl" in files  # tau-bench and ToolBench: the reference files tool data under mcp
    for f in files:  # task is the domain (the reference's eval.py picks rubric and group by it), never the instruction
        recs = [r for _, r in read_records(export / f)]
        assert {r.task for r in recs} == {f.removesuffix("_test.jsonl")} and all(r.model_extra["instruction"] for r in recs)
    rec = next(r for _, r in read_records(export / files[0]))
    assert rec.current_prompt == rec.prompt[rec.turn_idx - 1] and rec.response[0].startswith("**Environment Observation:**")
    import datasets

    ds = datasets.load_dataset(str(export), split="test", cache_dir=str(tmp_path))  # never an earlier export's cache
    assert len(ds) == sum(len((export / f).read_text().splitlines()) for f in files)


def test_perfect_run_tops_every_rule_metric_and_a_shuffled_run_falls_near_the_bottom(export, tmp_path):
    scores = {}
    for mode in ("perfect", "shuffled"):
        _predictions(export, tmp_path / f"{mode}.jsonl", shuffle=mode == "shuffled")
        res = runner.invoke(app, ["eval", "judge", str(tmp_path / f"{mode}.jsonl"), "-o", str(tmp_path / f"{mode}.judged.jsonl")])
        assert res.exit_code == 0, res.output
        res = runner.invoke(app, ["eval", "score", str(tmp_path / f"{mode}.judged.jsonl"), "--json", str(tmp_path / f"{mode}.scores.json")])
        assert res.exit_code == 0, res.output
        scores[mode] = json.loads((tmp_path / f"{mode}.scores.json").read_text())
    perfect, shuffled = scores["perfect"], scores["shuffled"]
    assert set(perfect["domains"]) == set(shuffled["domains"]) and set(perfect["domains"]) <= {"mcp", "search", "swe", "terminal", "web"}
    for domain, s in {**perfect["domains"], "overall": perfect["overall"]}.items():
        for m in VERIFIERS:
            if s["rules"][m] is not None:
                assert s["rules"][m] == 100.0, (domain, m)
    over = shuffled["overall"]["rules"]
    for m in ("exact_match", "token_f1", "numeric_entity"):  # content metrics: near the bottom
        assert over[m] < 25.0, (m, over[m])
    # structural metrics: a shuffled observation of the same domain often has the right shape
    # (ToolBench replies all share {"error", "response"}), so a shuffled run is only below the top
    assert over["json_structure"] < 100.0 and over["format"] < 100.0


def test_failed_predictions_score_zero_and_count(export, tmp_path):
    _predictions(export, tmp_path / "p.jsonl", shuffle=False)
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    broken = [json.dumps(json.loads(lines[0]) | {"status": "failed", "reason": "HTTP 500"})] + lines[1:] + ["{not json"]
    (tmp_path / "p.jsonl").write_text("\n".join(broken) + "\n")
    res = runner.invoke(app, ["eval", "judge", str(tmp_path / "p.jsonl"), "-o", str(tmp_path / "j.jsonl")])
    assert res.exit_code == 0
    s = score_file(tmp_path / "j.jsonl")["overall"]
    assert s["lines"] == len(lines) + 1 and s["failed"] == 2
    assert s["rules"]["token_f1"] == pytest.approx(100 * (len(lines) - 1) / (len(lines) + 1))


def test_judge_replies_in_worldforge_s_earlier_bare_form_are_read():
    j = parse_judgement('{"format": 5, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}')
    assert j.scores == {"format": 5, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1} and j.total == 3.0
    j = parse_judgement('{"format": 5, "factuality": 4, "consistency": 3, "realism": 2}')  # a missing one is not scored
    assert j.scores["quality"] is None and j.total == 3.5
    assert parse_judgement('{"format": 6, "factuality": 4, "consistency": 3, "realism": 2, "quality": 1}').scores["format"] == 5  # clamped
    assert parse_judgement("no json") == "no JSON object in the judge reply"
    assert parse_judgement('{"verdict": "fine"}') == "no scores in the judge reply"
    assert parse_judgement("") == "empty judge reply"


def test_cli_errors_are_clear(tmp_path):
    res = runner.invoke(app, ["eval", "score", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 2 and "no such judged file" in " ".join(res.output.split())
    (tmp_path / "p.jsonl").write_text('{"status": "ok"}\n')
    res = runner.invoke(app, ["eval", "score", str(tmp_path / "p.jsonl")])
    assert res.exit_code == 2 and "not a judged line" in " ".join(res.output.split())
    res = runner.invoke(app, ["datasets", "build", "cpt", "-w", str(tmp_path), "--tokenizer", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "cannot load a tokenizer" in " ".join(res.output.split())


def test_domains_the_backend_does_not_cover_are_said_so_not_reported_as_failures(tmp_path):
    """The default grounded backend predicts only search observations: MCP, SWE and Terminal records are not covered."""
    from worldforge.agentworldbench.score import score_lines

    rules_ok = {m: 1.0 for m in VERIFIERS}
    rules_zero = {m: 0.0 for m in VERIFIERS}
    miss = "not grounded: the grounded backend renders only requests with grounding.world and grounding.tool_call"
    lines = ([{"domain": "search", "task": "search", "status": "ok", "gen": "x", "rules": rules_ok}] * 3
             + [{"domain": "search", "task": "search", "status": "failed", "reason": miss, "rules": rules_zero}] * 2
             + [{"domain": "search", "task": "search", "status": "failed", "reason": "HTTP 500", "rules": rules_zero}]
             + [{"domain": "mcp", "status": "failed", "reason": miss, "rules": rules_zero}] * 4)
    scores = score_lines(lines, resamples=10)
    search, mcp = scores["domains"]["search"], scores["domains"]["mcp"]
    assert (search["failed"], search["not_covered"], mcp["not_covered"]) == (3, 2, 4)
    assert search["rules"]["token_f1"] == 50.0 and search["rules_covered"]["token_f1"] == 75.0  # 3 right of the 4 covered

    wh = tmp_path / "wh"
    (wh / "datasets" / "eval").mkdir(parents=True)
    (wh / "datasets" / "eval" / "scores.json").write_text(json.dumps(scores))
    out = CliRunner().invoke(app, ["summary", "-w", str(wh)]).output
    assert "MCP" in out and "4 records, not covered by the backend" in out
    assert "6 records (2 not covered), 1 failed; token F1 75.0 on the covered" in out
    assert "WORLDFORGE_VLLM_URL" in out
