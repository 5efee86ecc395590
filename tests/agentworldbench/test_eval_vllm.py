"""The evaluation pipeline end to end against a real `vllm serve` of the tiny model:
datasets build agentworldbench -> eval infer -> eval judge (the same server as judge) -> eval score;
and SFT rejection sampling with the served model."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.conftest import TRAJECTORIES
from worldforge.cli import app

runner = CliRunner()
pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def small_wh(tmp_path_factory):
    from worldforge.trajectories.store import ingest
    from worldforge.warehouse import Warehouse

    wh = Warehouse(tmp_path_factory.mktemp("eval-wh"))
    ingest([TRAJECTORIES / "intercode" / "data" / "results" / "ctf", TRAJECTORIES / "toolbench"], wh)
    return wh


def test_infer_judge_score_against_vllm_serve(small_wh, vllm_server, tmp_path):
    export = tmp_path / "awb"
    res = runner.invoke(app, ["datasets", "build", "agentworldbench", "-w", str(small_wh), "-o", str(export),
                              "--test-fraction", "0.5", "--max-per-domain", "6"])
    assert res.exit_code == 0, res.output
    files = sorted(export.glob("*_test.jsonl"))
    assert files
    inputs = tmp_path / "all_test.jsonl"
    inputs.write_text("".join(f.read_text() for f in files))
    n = len(inputs.read_text().splitlines())
    url = vllm_server.base_url
    res = runner.invoke(app, ["eval", "infer", str(inputs), "-o", str(tmp_path / "pred.jsonl"), "-b", "openai", "--base-url", url,
                              "--max-tokens", "48", "--structured"])
    assert res.exit_code == 0, res.output
    preds = [json.loads(x) for x in (tmp_path / "pred.jsonl").read_text().splitlines()]
    ok = [p for p in preds if p["status"] == "ok"]
    assert len(preds) == n and ok  # structured output: the random model's replies parse
    res = runner.invoke(app, ["eval", "judge", str(tmp_path / "pred.jsonl"), "-o", str(tmp_path / "judged.jsonl"),
                              "--judge", "openai", "--base-url", url, "--judge-structured", "--judge-max-tokens", "200"])
    assert res.exit_code == 0, res.output
    judged = [json.loads(x) for x in (tmp_path / "judged.jsonl").read_text().splitlines()]
    assert len(judged) == n
    sent = [j for j in judged if j["status"] == "ok"]
    assert all(j["judge_status"] in ("ok", "failed") for j in sent) and sum(j["judge_status"] == "ok" for j in sent) >= 1
    for j in sent:
        if j["judge_status"] == "ok":  # schema-constrained: five integers 1-5, normalised to 0-100
            assert set(j["judge"]) == {"format", "factuality", "consistency", "realism", "quality"}
            assert all(j["judge_normalised"][d] == (s - 1) / 4 * 100 for d, s in j["judge"].items())
            assert j["failed"] == 0.0 and j["total_score"] == sum(j["judge"].values()) / 5  # the reference's fields
        assert j["judge_meta"]["structured"] and len(j["judge_meta"]["prompt_sha256"]) == 64
    res = runner.invoke(app, ["eval", "score", str(tmp_path / "judged.jsonl"), "--json", str(tmp_path / "scores.json")])
    assert res.exit_code == 0, res.output
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["overall"]["lines"] == n and scores["overall"]["judged"] == sum(j.get("judge_status") == "ok" for j in judged)
    groups = [*scores["domains"].values(), scores["overall"]]
    assert all(v is None or 0 <= v <= 100 for s in groups for v in (*s["rules"].values(), *s["judge"].values()))
    assert scores["reference"]["valid"] == scores["overall"]["judged"] and set(scores["domains"]) <= {"mcp", "terminal"}


def test_sft_rejection_sampling_with_the_served_model(small_wh, vllm_server, tiny_model, tmp_path):
    from worldforge.datasets.sft import SFTConfig, build_sft
    from worldforge.datasets.sources import iter_split_trajectories
    from worldforge.worldmodel.backends import make_backend

    trajs = [t for t in iter_split_trajectories(small_wh) if t.split == "train"][:3]
    backend = make_backend("openai", base_url=vllm_server.base_url)
    report = build_sft(small_wh, tmp_path / "sft", SFTConfig(tokenizer=str(tiny_model), k=2, max_new_tokens=16, max_context_tokens=4096),
                       backend, trajectories=trajs)
    assert report.tally.balanced and report.tally.inputs > 0 and report.stats["variant"] == "thinking"
    # a random model states nothing right: every sample is rejected, each for a named reason
    assert report.tally.kept == 0 and all(k.startswith(("rejected:", "longer than", "generation failed")) for k in report.tally.dropped)
    failures = report.stats["candidate_failures"]
    assert sum(failures.values()) + sum(v["scored"] for v in report.stats["acceptance_by_verifier"].values()) > 0
    assert "thinking variant" in (tmp_path / "sft" / "README.md").read_text()
