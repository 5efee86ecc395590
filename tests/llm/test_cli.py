import json

import pytest
from typer.testing import CliRunner

from tests.conftest_models import needs_torch
from worldforge.agents.oracle import solve
from worldforge.agentworldbench.records import records_from_turns, write_records
from worldforge.cli import app
from worldforge.net import free_port
from worldforge.simenv import SearchEnv
from worldforge.tasks.store import build_tasks
from worldforge.warehouse import Warehouse

runner = CliRunner()


def text(res) -> str:
    return " ".join(res.output.split())  # rich wraps long lines


@needs_torch
def test_dev_tiny_model_builds_a_loadable_chat_model(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    res = runner.invoke(app, ["dev", "tiny-model", str(tmp_path / "m"), "--hidden-size", "64"])
    assert res.exit_code == 0, res.output
    tok = AutoTokenizer.from_pretrained(tmp_path / "m")
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "m")
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert text.endswith("<|im_start|>assistant\n") and model.config.hidden_size == 64 and model.config.num_hidden_layers == 2
    assert tok.decode(tok("web_search {\"query\": 1}")["input_ids"]) == "web_search {\"query\": 1}"  # byte-level: lossless


@pytest.fixture(scope="module")
def search_records(search_wh, tmp_path_factory):
    """AgentWorldBench records of an oracle episode in the world, naming the world."""
    tasks = build_tasks(Warehouse.of(search_wh).world("smartphones_2029")).tasks
    task = min((t for t in tasks if t.extra["kind"] == "ranking"), key=lambda t: len(t.gold))  # a short episode: a tiny model's context fits most turns
    env = SearchEnv("smartphones_2029", warehouse=search_wh, session_id="s1")  # no leakage control: the replay has no task either
    solve(env, task)
    turns = [(json.dumps(call), obs.text) for call, obs in env.history]
    recs = records_from_turns("ep1", "search", task.question, turns, world="smartphones_2029", warehouse=str(search_wh), session_id="s1")
    return write_records(tmp_path_factory.mktemp("awb") / "search_test.jsonl", recs), len(recs)


def test_eval_infer_with_the_grounded_backend_reproduces_the_episode(search_records, search_wh, tmp_path):
    src, n = search_records
    path = tmp_path / "search_test.jsonl"
    path.write_text(src.read_text() + "not json\n")
    out = tmp_path / "pred.jsonl"
    res = runner.invoke(app, ["eval", "infer", str(path), "-o", str(out), "--backend", "grounded", "-w", str(search_wh)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == n + 1 and f"lines in {n + 1} = predicted {n} + failed 1 (malformed input: 1)" in text(res)
    ok = rows[:-1]
    assert all(r["status"] == "ok" for r in ok) and rows[-1]["status"] == "failed"
    # replaying the history in a fresh session renders exactly what the agent saw
    assert all(r["predicted_observation"] == r["reference"] for r in ok)


@pytest.mark.vllm
def test_eval_infer_against_vllm_serve(search_records, vllm_server, tmp_path):
    path, n = search_records
    out = tmp_path / "pred.jsonl"
    args = ["eval", "infer", str(path), "-o", str(out), "--backend", "openai", "--base-url", vllm_server.base_url, "--max-tokens", "8"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == n and all(r["backend"].startswith("openai:") for r in rows)
    # late turns of a search episode outgrow the tiny server's context (its toy tokenizer spends several times a real one's
    # tokens on English prose such as the system prompt, and pages run to several hundred words like real ones): recorded as
    # HTTP 400. The context only grows, so the turns that fit come first.
    too_long = [r["turn_idx"] for r in rows if r["status"] == "failed" and r["reason"].startswith("HTTP 400")]
    fit = [r["turn_idx"] for r in rows if r["turn_idx"] not in too_long]
    generated = n - len(too_long)
    assert generated >= 2 and (not too_long or max(fit) < min(too_long))
    assert all(r["reason"] in ("missing <predicted_observation> tag", "unclosed <predicted_observation> tag (truncated reply?)") or r["reason"].startswith("HTTP 400") for r in rows if r["status"] == "failed")
    assert f"{generated} generated, 0 from cache" in text(res)
    res = runner.invoke(app, args)  # a re-run is answered from the cache; only the failures are retried
    assert f"0 generated, {generated} from cache" in text(res)


def test_eval_infer_errors_are_clear(search_records, tmp_path):
    path, _ = search_records
    url = f"http://127.0.0.1:{free_port()}/v1"
    res = runner.invoke(app, ["eval", "infer", str(path), "-o", str(tmp_path / "o.jsonl"), "--base-url", url])
    assert res.exit_code == 2 and f"cannot reach the world-model server at {url}" in text(res) and "Traceback" not in res.output
    res = runner.invoke(app, ["eval", "infer", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--backend", "grounded"])
    assert res.exit_code == 2 and "no such AgentWorldBench file" in text(res)
    res = runner.invoke(app, ["eval", "infer", str(path), "-o", str(tmp_path / "o.jsonl"), "--backend", "gpt"])
    assert res.exit_code == 2 and "unknown world-model backend 'gpt'" in text(res)
    assert not (tmp_path / "o.jsonl").exists()
