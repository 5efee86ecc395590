"""The verifiers environment (worldforge.rl.verifiers): the taskset plugin found by id, and verifiers' own ``vf-eval``
running it end to end — its interception server, its ``null`` harness (the chat program, run by uv), the shared MCP
tool server, its scoring — against a scripted OpenAI-compatible policy (the oracle's tool calls: reward 1.0) and against
a real ``vllm serve`` of the tiny model (plumbing).

verifiers 0.4 pins mcp==2.0.0, so it lives in its own venv (``make verifiers``: .venv-verifiers); these tests run it
there as subprocesses, as a user would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import polars as pl
import pytest

from tests.conftest import ROOT
from tests.conftest_models import needs_vllm
from tests.rl.conftest import WORLD
from tests.servers import ProcessServer
from worldforge.rl import SearchWorldEnv, world_tasks
from worldforge.rl.env import scripted_answer
from worldforge.simenv.tools import SEARCH_TOOLS

VF_BIN = ROOT / ".venv-verifiers" / "bin"
pytestmark = pytest.mark.skipif(not (VF_BIN / "vf-eval").exists(), reason="verifiers lives in .venv-verifiers: run `make verifiers`")


def _vf_env() -> dict[str, str]:
    """The environment of a verifiers process: its venv's bin first (uv for the harness), an API key variable."""
    return {**os.environ, "PATH": f"{VF_BIN}{os.pathsep}{os.environ.get('PATH', '')}", "OPENAI_API_KEY": "unused",
            "PYTHONPATH": str(ROOT)}


def _vf_python(code: str) -> dict:
    """Run ``code`` under the verifiers venv's Python; it prints one JSON object."""
    done = subprocess.run([str(VF_BIN / "python"), "-c", code], cwd=ROOT, env=_vf_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_taskset_is_found_by_id_with_the_declared_tools(rl_wh, rl_tasks):
    deep = world_tasks(WORLD, rl_wh, "deep")
    got = _vf_python(f"""
import asyncio, json
import verifiers.v1 as vf
from verifiers.v1.utils.loaders import environment_class, taskset_class
from mcp.server.mcpserver import MCPServer
import worldforge.rl.verifiers as wv
from worldforge.errors import WorldforgeError
out = {{"taskset": taskset_class("worldforge-search") is wv.WorldforgeTaskset,
        "env": environment_class("worldforge-search") is wv.WorldforgeEnv}}
for kind in ("wide", "deep", "both"):
    env = wv.load_environment(worlds="{WORLD}", kind=kind, warehouse={str(rl_wh)!r}, max_turns=7, seeds=2 if kind == "deep" else 1)
    tasks = list(env.taskset)
    out[kind] = {{"n": len(tasks), "families": sorted({{t.data.family for t in tasks}}), "ids": sorted({{t.data.task for t in tasks}}),
                 "deep_prompt": all(t.data.prompt.startswith(wv.DEEP_PROMPT) and "Exact Answer:" in t.data.prompt for t in tasks if t.data.family == "deep"),
                 "wide_prompt": all(t.data.prompt.startswith(wv.WIDE_PROMPT) for t in tasks if t.data.family == "wide")}}
    out["max_turns"], out["harness"], out["runtime"] = env.config.agent.max_turns, env.config.agent.harness.id, env.config.agent.runtime.type
server = MCPServer("t")
wv.WorldToolset(wv.WorldToolsetConfig()).register(server)
out["tools"] = {{t.name: t.input_schema for t in asyncio.run(server.list_tools())}}
try:
    wv.load_environment(kind="tall")
except WorldforgeError as exc:
    out["bad_kind"] = str(exc)
print(json.dumps(out))
""")
    assert got["taskset"] and got["env"]
    assert got["wide"] == {"n": len(rl_tasks), "families": ["wide"], "ids": sorted(rl_tasks), "deep_prompt": True, "wide_prompt": True}
    assert got["deep"]["n"] == 2 * len(deep) and got["deep"]["families"] == ["deep"] and got["deep"]["ids"] == sorted(deep)
    assert got["both"]["n"] == len(rl_tasks) + len(deep) and got["both"]["deep_prompt"] and got["both"]["wide_prompt"]
    assert (got["max_turns"], got["harness"], got["runtime"]) == (7, "null", "subprocess")
    # the tools are the declared ones, unprefixed, with the declared arguments
    assert set(got["tools"]) == {t.name for t in SEARCH_TOOLS}
    for tool in SEARCH_TOOLS:
        declared = tool.openai_schema()["function"]["parameters"]
        schema = got["tools"][tool.name]
        assert set(schema["properties"]) == set(declared["properties"]) and set(schema.get("required", [])) == set(declared.get("required", []))
    assert "unknown task family 'tall'" in got["bad_kind"]


def test_the_rubric_scores_by_the_task_configs_rules(rl_wh, rl_tasks):
    """``--env.taskset.task.rules widesearch``: an extra column scores 0 under WideSearch's rules, 1 under the default ones."""
    got = _vf_python(f"""
import json, types
import worldforge.rl.verifiers as wv
from worldforge.tasks import render_markdown_table
env = wv.load_environment(worlds="{WORLD}", kind="wide", warehouse={str(rl_wh)!r})
first = list(env.taskset)[0]
task = wv.world_tasks(first.data.world, wv.Warehouse.configured({str(rl_wh)!r}), "wide")[first.data.task]
answer = render_markdown_table(task.required + ["source"], [{{**r, "source": "web"}} for r in task.gold])
trace = types.SimpleNamespace(last_reply=answer, assistant_messages=[])
out = {{rules: wv.WorldTask(first.data, first.config.model_copy(update={{"rules": rules}}))._graded(trace).value for rules in ("worldforge", "widesearch")}}
out["default"] = first.config.rules
try:
    wv.WorldforgeTasksetConfig.model_validate({{"task": {{"rules": "official"}}}})
except ValueError as exc:
    out["bad"] = str(exc)
print(json.dumps(out))
""")
    assert got["worldforge"] == 1.0 and got["widesearch"] == 0.0 and got["default"] == "worldforge"
    assert "rules" in got["bad"]


@pytest.mark.parametrize("flag, value, words", [("kind", "tall", "unknown task family 'tall'"),
                                                 ("perturbations", "{not json", "not valid JSON")])
def test_vf_eval_refuses_a_bad_taskset_option_in_one_message(rl_wh, tmp_path, flag, value, words):
    argv = [str(VF_BIN / "vf-eval"), "worldforge-search", "--env.taskset.warehouse", str(rl_wh), f"--env.taskset.{flag}", value,
            "--model", "m", "--client.base-url", "http://127.0.0.1:9/v1", "--no-push", "--no-rich", "-o", str(tmp_path)]
    done = _run_vf_eval(argv, tmp_path, 120)
    text = " ".join((done.stdout + done.stderr).split())  # the message is wrapped in a box
    assert done.returncode != 0 and words in text and "Traceback" not in text, text[-2000:]


def _scripts(rl_wh, tasks, n: int, budget: int = 48) -> list[dict]:
    """The scripted oracle's tool calls, observations and answer for the first ``n`` of ``tasks`` (in the order given) it
    answers in at most ``budget`` tool calls, so each episode fits vf-eval's turn limit; fewer than ``n`` fails."""
    env = SearchWorldEnv(rl_wh, record=False)
    out = []
    for task in tasks:
        env.reset(world=WORLD, task=task.instance_id)
        calls: list[dict] = []
        seen: list[str] = []

        def call(name: str, args: dict) -> str:
            calls.append({"name": name, "arguments": args})
            seen.append(env.step(name, args).text)
            return seen[-1]

        answer = scripted_answer(task, call)
        if len(calls) <= budget:
            out.append({"id": task.instance_id, "question": task.question, "calls": calls, "observations": seen, "answer": answer})
        if len(out) == n:
            return out
    raise AssertionError(f"the oracle answers only {len(out)} of {len(tasks)} tasks in {budget} calls or fewer")


def _run_vf_eval(argv: list[str], cwd, timeout: int) -> subprocess.CompletedProcess:
    """Run ``vf-eval`` in its own process group; the whole group (its harness and tool server) is killed afterwards."""
    proc = subprocess.Popen(argv, cwd=cwd, env=_vf_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _vf_eval(out_dir, base_url: str, model: str, ids: list[str], kind: str, warehouse, *extra: str, timeout: int = 420) -> list[dict]:
    """``vf-eval worldforge-search`` on the tasks ``ids`` (run in ``out_dir``); the traces it wrote (traces.jsonl), one per task."""
    argv = [str(VF_BIN / "vf-eval"), "worldforge-search", "--env.taskset.warehouse", str(warehouse), "--env.taskset.kind", kind,
            "--env.taskset.worlds", json.dumps([WORLD]), "--select.include.ids", json.dumps(ids), "--model", model,
            "--client.base-url", base_url, "--client.api-key-var", "OPENAI_API_KEY", "--no-push", "--no-rich", "-o", str(out_dir), *extra]
    done = _run_vf_eval(argv, out_dir, timeout)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    episodes = [json.loads(line) for path in out_dir.rglob("traces.jsonl") for line in path.read_text().splitlines() if line.strip()]
    assert episodes and all(e["ok"] and not e["errors"] for e in episodes), (episodes and episodes[0]["errors"], done.stderr[-3000:])
    return [trace for e in episodes for trace in e["traces"]]


def test_vf_eval_runs_the_scripted_oracle_to_reward_one(rl_wh, rl_tasks, tmp_path):
    deep = sorted(world_tasks(WORLD, rl_wh, "deep").values(), key=lambda t: t.instance_id)
    script = (_scripts(rl_wh, [t for t in deep if not t.extra.get("scenario")], 2) + _scripts(rl_wh, [t for t in deep if t.extra.get("scenario")], 1)
              + _scripts(rl_wh, [rl_tasks[t] for t in sorted(rl_tasks)], 1))
    wrong = {script[0]["id"]}  # the policy answers this one wrongly: reward 0.0
    script[0]["answer"] = "Explanation: a guess\nExact Answer: Nobody At All\nConfidence: 30%"
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    policy = ProcessServer(lambda port: [sys.executable, "-m", "tests.rl.scripted_policy", "--script", str(path), "--port", str(port)],
                           log=tmp_path / "policy.log")
    try:
        out = tmp_path / "runs"
        out.mkdir()
        relative = os.path.relpath(rl_wh, out)  # a warehouse given relative to where vf-eval runs (its tool server runs elsewhere)
        traces = _vf_eval(out, f"{policy.url}/v1", "scripted-oracle", [e["id"] for e in script], "both", relative, "--env.agent.max-turns", "64")
        import httpx

        seen = httpx.get(f"{policy.url}/log", timeout=10).json()
    finally:
        policy.stop()
    by_task = {t["task"]["data"]["task"]: t for t in traces}
    assert set(by_task) == {e["id"] for e in script}
    for entry in script:
        trace = by_task[entry["id"]]
        assert not trace.get("errors"), trace.get("errors")
        expected = 0.0 if entry["id"] in wrong else 1.0
        assert trace["rewards"]["reward"]["score"] == expected, (entry["id"], trace["rewards"], trace["metrics"])
        assert trace["metrics"]["tool_calls"] == len(entry["calls"]) and trace["metrics"]["format_ok"] == 1.0
        assert trace["stop_condition"] == "agent_completed"
    # the tool server's episode service logged every rollout, as every other entry point does (agent verifiers), when vf-eval stopped it
    from worldforge.trajectories.episodes import read_episode_tables, settle_episode_log

    settle_episode_log(rl_wh)
    tables = read_episode_tables(rl_wh)
    logged = tables["episodes"].filter(pl.col("agent") == "verifiers")
    assert sorted(logged["task_id"].to_list()) == sorted(e["id"] for e in script)
    assert all(eid.startswith("verifiers:") for eid in logged["episode_id"].to_list())
    per_episode = dict(tables["steps"].group_by("episode_id").len().iter_rows())
    steps = {task: per_episode.get(eid, 0) for task, eid in zip(logged["task_id"].to_list(), logged["episode_id"].to_list(), strict=True)}
    assert steps == {e["id"]: len(e["calls"]) for e in script}
    # every model request saw exactly the declared tools, and every tool call's result came back before the next turn
    assert seen and all(sorted(r["tools"]) == sorted(t.name for t in SEARCH_TOOLS) for r in seen)
    assert sum(len(e["calls"]) + 1 for e in script) == len(seen)
    # what verifiers' tool server answered is what the environment answers in process, call by call (no perturbations)
    for entry in script:
        served = [r["last_result"] for r in sorted((r for r in seen if r["id"] == entry["id"]), key=lambda r: r["turn"]) if r["turn"]]
        assert served and served == entry["observations"], entry["id"]


@needs_vllm
@pytest.mark.vllm
def test_vf_eval_against_vllm_serve_of_the_tiny_model(rl_wh, tiny_model, tmp_path):
    from worldforge.llm.server import VLLMServer

    deep = world_tasks(WORLD, rl_wh, "deep")
    ids = sorted(deep)[:2]
    # verifiers' chat program offers the tools with tool_choice "auto": vLLM needs a tool-call parser for that
    server = VLLMServer(tiny_model, max_model_len=8192, cache_dir=ROOT / ".cache", extra_args=["--enable-auto-tool-choice", "--tool-call-parser", "hermes"])
    server.start()
    try:
        out = tmp_path / "runs"
        out.mkdir()
        traces = _vf_eval(out, server.base_url, str(tiny_model), ids, "deep", rl_wh, "--env.agent.max-turns", "3", "--sampling.max-tokens", "48")
    finally:
        server.stop()
    assert sorted(t["task"]["data"]["task"] for t in traces) == ids
    for trace in traces:
        assert not trace.get("errors"), trace.get("errors")
        assert trace["calls"] and trace["stop_condition"] in ("agent_completed", "max_turns")  # the model answered at least once
        assert trace["rewards"]["reward"]["score"] in (0.0, 1.0) and "tool_calls" in trace["metrics"]
