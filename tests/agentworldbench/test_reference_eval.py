"""The reference evaluation script (QwenLM/Qwen-AgentWorld ``eval/eval.py``), run unmodified as a
subprocess against the oracle servers: a perfect world model and a judge that gives 5 on every
dimension must score 100.00 in every domain it prints, so the numbers the reference prints for a data
folder say whether that folder is a valid AgentWorldBench folder.

Case A runs handwritten records in the reference's own format; case B runs worldforge's own export
(``build_agentworldbench``) and pins what the reference must see there: benchmark domains, their judge
rubrics, every record answered.

Needs a checkout of Qwen-AgentWorld: set ``WORLDFORGE_REFERENCE_EVAL`` to its root (the folder holding
``eval/eval.py``); without it these tests are skipped. The ``openai`` package must be importable.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import mean

import pytest

from tests.agentworldbench.oracle import OracleServer
from tests.agentworldbench.reference_samples import RECORDS, domain_of, write_data_dir

ENV = "WORLDFORGE_REFERENCE_EVAL"
DISPLAY = {"mcp": "MCP", "search": "Search", "terminal": "Terminal", "swe": "SWE", "android": "Android", "web": "Web", "os": "OS"}
ROWS = ("format", "factuality", "consistency", "realism", "quality", "total_score")


@pytest.fixture(scope="module")
def checkout() -> Path:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"set {ENV} to a Qwen-AgentWorld checkout (the folder holding eval/eval.py) to run the reference evaluation")
    path = Path(root).expanduser().resolve()
    if not (path / "eval" / "eval.py").is_file():
        pytest.fail(f"{ENV}={root}: no eval/eval.py there (it must name the root of a Qwen-AgentWorld checkout)")
    return path


def run_reference(checkout: Path, *args: str) -> str:
    """``python eval/eval.py <args>`` in the checkout's eval/ folder; its stdout (fails the test on a non-zero exit)."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", "OPENAI_API_KEY": "EMPTY"}
    res = subprocess.run([sys.executable, str(checkout / "eval" / "eval.py"), *args], cwd=checkout / "eval", env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, f"eval.py {args[0]} exited {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res.stdout


def evaluate(checkout: Path, data: Path, work: Path, world: OracleServer, judge: OracleServer) -> str:
    """The reference's three steps, infer (world oracle) -> judge (judge oracle) -> score; the score step's stdout."""
    run_reference(checkout, "infer", "--data-dir", str(data), "--model-base-url", world.base_url, "--model-name", world.model,
                  "--output-dir", str(work), "--max-tokens", "256")
    run_reference(checkout, "judge", "--predictions", str(work / "predictions.jsonl"), "--judge-base-url", judge.base_url,
                  "--judge-model", judge.model, "--output-dir", str(work), "--max-tokens", "256", "--max-retries", "1")
    return run_reference(checkout, "score", "--predictions", str(work / "judged.jsonl"))


def parse_scores(stdout: str) -> tuple[dict[str, dict], str | None]:
    """``({display name: {"valid", "total", "failed", row: "ddd.dd"}}, overall)`` from the score step's printout."""
    domains: dict[str, dict] = {}
    current = None
    for line in stdout.splitlines():
        head = re.fullmatch(r"--- (.+) \((\d+)/(\d+) valid, (\d+) failed\) ---", line.strip())
        if head:
            current = domains.setdefault(head.group(1), {"valid": int(head.group(2)), "total": int(head.group(3)), "failed": int(head.group(4))})
            continue
        row = re.fullmatch(r"(\w+): (-?\d+\.\d\d)", line.strip())
        if row and current is not None:
            current[row.group(1)] = row.group(2)
    overall = re.search(r"^Overall: (-?\d+\.\d\d)$", stdout, re.M)
    return domains, overall.group(1) if overall else None


def assert_perfect(domains: dict[str, dict], overall: str | None, stdout: str) -> None:
    assert domains, stdout
    for name, d in domains.items():
        assert d["valid"] == d["total"] and d["failed"] == 0, (name, d)
        assert all(d.get(row) == "100.00" for row in ROWS), (name, d)
    assert overall == "100.00", stdout


def rubrics(checkout: Path) -> dict[str, str]:
    """``{judge system prompt: domain}`` from the checkout's ``prompts/<domain>/judge_system_prompt.txt``."""
    return {(checkout / "prompts" / d / "judge_system_prompt.txt").read_text(encoding="utf-8"): d for d in DISPLAY}


def judged_domains(judge: OracleServer, checkout: Path) -> list[str | None]:
    """The domain whose rubric each judge request carried as its system prompt (None: no or another system prompt)."""
    known = rubrics(checkout)
    return [known.get(m[0]["content"]) if m and m[0].get("role") == "system" and m[0].get("content") else None for m in judge.requests]


# ─── Case A: handwritten records in the reference's format ──────────────────────────────────────


def test_reference_eval_scores_a_perfect_world_model_100_everywhere(checkout, tmp_path):
    data = write_data_dir(tmp_path / "data")
    with OracleServer("world", records=data) as world, OracleServer("judge", verdict="best") as judge:
        stdout = evaluate(checkout, data, tmp_path / "run", world, judge)
    domains, overall = parse_scores(stdout)
    want = {DISPLAY[domain_of(r)] for r in RECORDS}
    assert set(domains) == want == {"MCP", "Search", "Terminal"}, stdout
    assert {n: d["total"] for n, d in domains.items()} == {DISPLAY[k]: sum(domain_of(r) == k for r in RECORDS) for k in ("mcp", "search", "terminal")}
    assert_perfect(domains, overall, stdout)
    assert world.unmatched == 0 and sorted(world.answered) == sorted(str(r["id"]) for r in RECORDS)
    assert judge.unreadable == 0 and len(judge.requests) == len(RECORDS)
    assert sorted(judged_domains(judge, checkout)) == sorted(domain_of(r) for r in RECORDS)  # each request carried its domain's rubric
    preds = [json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == len(RECORDS) and all(p["gen"] for p in preds)


def test_reference_eval_numbers_follow_the_judge_match_verdict(checkout, tmp_path):
    data = write_data_dir(tmp_path / "data")
    # every record gold: the match judge sees equal blocks everywhere (the empty gold and the fenced one included)
    with OracleServer("world", records=data) as world, OracleServer("judge", verdict="match") as judge:
        stdout = evaluate(checkout, data, tmp_path / "gold", world, judge)
    domains, overall = parse_scores(stdout)
    assert_perfect(domains, overall, stdout)
    assert all(s.strip() == g.strip() for s, g in judge.blocks) and len(judge.blocks) == len(RECORDS)
    # one terminal record wrong: Terminal falls to what a 5 and a 1 average to; the other domains stay at 100
    terminal = [r for r in RECORDS if domain_of(r) == "terminal"]
    with OracleServer("world", records=data, corrupt={str(terminal[1]["id"])}) as world, OracleServer("judge", verdict="match") as judge:
        stdout = evaluate(checkout, data, tmp_path / "corrupt", world, judge)
    domains, overall = parse_scores(stdout)
    want = f"{(mean([5] * (len(terminal) - 1) + [1]) - 1) / 4 * 100:.2f}"
    assert all(domains["Terminal"][row] == want for row in ROWS) and float(want) < 100, (want, stdout)
    assert domains["Terminal"]["valid"] == len(terminal) and domains["Terminal"]["failed"] == 0
    assert all(d["total_score"] == "100.00" for n, d in domains.items() if n != "Terminal"), stdout
    assert overall == f"{(mean([5] * (len(RECORDS) - 1) + [1]) - 1) / 4 * 100:.2f}", stdout
    assert world.unmatched == 0


# ─── Case B: worldforge's own export ─────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def export(checkout, traj_wh, tmp_path_factory):
    from worldforge.datasets.agentworldbench import ExportConfig, build_agentworldbench

    out = tmp_path_factory.mktemp("awb-ref") / "agentworldbench"
    report = build_agentworldbench(traj_wh, out, ExportConfig(test_fraction=0.3))
    assert report.tally.balanced and report.tally.kept > 100
    return out


def test_reference_eval_reads_the_worldforge_export_as_benchmark_domains(checkout, export, tmp_path):
    n = sum(len([x for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]) for f in export.glob("*_test.jsonl"))
    with OracleServer("world", records=export) as world, OracleServer("judge", verdict="best") as judge:
        stdout = evaluate(checkout, export, tmp_path / "run", world, judge)
    domains, overall = parse_scores(stdout)
    printed = sorted(domains)
    assert set(printed) <= set(DISPLAY.values()), (f"the reference printed {len(printed)} domains, not benchmark domains "
                                                   f"(task must hold the domain, not the instruction): {printed[:5]}")
    seen = judged_domains(judge, checkout)
    assert len(seen) == n and None not in seen, f"{seen.count(None)} of {len(seen)} judge requests had no domain rubric as system prompt"
    assert {DISPLAY[d] for d in seen} == set(printed)
    assert sum(d["total"] for d in domains.values()) == n
    assert_perfect(domains, overall, stdout)
    assert world.unmatched == 0 and len(world.answered) == n


# ─── Case C: the two tools on each other's files, the same numbers ─────────────────────────────


def _score_block(stdout: str) -> str:
    """The report eval.py score prints (from its first rule of ``=``), without the log lines."""
    start = stdout.index("=" * 70)
    return stdout[start - 1:] if stdout[start - 1] == "\n" else "\n" + stdout[start:]


def test_both_tools_print_the_same_figures_on_each_others_files(checkout, export, tmp_path):
    from typer.testing import CliRunner

    from worldforge.agentworldbench.score import reference_report, score_file
    from worldforge.cli import app

    runner = CliRunner()
    records = [json.loads(x) for f in sorted(export.glob("*_test.jsonl")) for x in f.read_text(encoding="utf-8").splitlines()]
    corrupt = [r["id"] for r in records[::7]]  # a wrong prediction in every domain, so the figures are not all 100
    # 1: worldforge infers and judges (with the checkout's rubrics), the reference scores our judged file
    ours = tmp_path / "ours"
    with OracleServer("world", records=export, corrupt=corrupt) as world, OracleServer("judge", verdict="match") as judge:
        res = runner.invoke(app, ["eval", "run", str(export), "--model", world.base_url, "-o", str(ours)])
        assert res.exit_code == 0, res.output
        res = runner.invoke(app, ["eval", "judge", str(ours / "predictions.jsonl"), "-o", str(ours / "judged.jsonl"), "--judge", judge.base_url,
                                  "--prompts", str(checkout)])
        assert res.exit_code == 0, res.output
    judged = ours / "judged.jsonl"
    theirs = run_reference(checkout, "score", "--predictions", str(judged))
    domains, overall = parse_scores(theirs)
    assert overall is not None and float(overall) < 100 and all(float(d["total_score"]) < 100 for d in domains.values())
    assert _score_block(theirs) == reference_report(score_file(judged)["reference"])
    # every judge request carried the checkout's rubric of its domain
    assert None not in judged_domains(judge, checkout)
    # 2: the reference judges our predictions, worldforge scores its judged file
    with OracleServer("judge", verdict="match") as judge:
        run_reference(checkout, "judge", "--predictions", str(ours / "predictions.jsonl"), "--judge-base-url", judge.base_url,
                      "--judge-model", judge.model, "--output-dir", str(tmp_path / "ref"), "--max-tokens", "256", "--max-retries", "1")
    theirs = run_reference(checkout, "score", "--predictions", str(tmp_path / "ref" / "judged.jsonl"))
    res = runner.invoke(app, ["eval", "score", str(tmp_path / "ref" / "judged.jsonl"), "--json", str(tmp_path / "s.json")])
    assert res.exit_code == 0, res.output
    scores = json.loads((tmp_path / "s.json").read_text())
    assert _score_block(theirs) == reference_report(scores["reference"])
    assert f"{scores['reference']['overall']:.2f}" == overall  # same predictions, same verdicts: the same Overall either way
