"""``worldforge record openai`` for real: a real `vllm serve` of the tiny model as the upstream, the proxy
as a real process (setsid, stopped by PID), driven by the ``openai`` client; stored trajectories checked
turn by turn in WAREHOUSE/trajectories.duckdb."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest

from tests.conftest import ROOT
from worldforge.net import free_port

pytestmark = pytest.mark.vllm
openai = pytest.importorskip("openai")


class Proxy:
    """``worldforge record openai`` on a free loopback port, in its own session; waits for ``/health``."""

    def __init__(self, upstream: str, warehouse: Path, idle_timeout: float, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(log, "a") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "worldforge.cli", "record", "openai", "--upstream", upstream, "--port", str(self.port),
                 "--idle-timeout", str(idle_timeout), "--warehouse", str(warehouse)],
                cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
            if self.proc.poll() is not None:
                raise RuntimeError(f"proxy exited at start-up: {log.read_text()}")
        self.stop()
        raise RuntimeError("proxy did not start")

    def client(self, **headers: str):
        return openai.OpenAI(base_url=self.url + "/v1", api_key="unused", default_headers=headers or None, max_retries=0, timeout=120)

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.returncode


@pytest.fixture
def proxies(tmp_path):
    started: list[Proxy] = []

    def start(upstream: str, idle_timeout: float = 300) -> Proxy:
        p = Proxy(upstream, tmp_path / "wh", idle_timeout, tmp_path / "proxy.log")
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop(signal.SIGKILL)


def _model(vllm_server) -> str:
    return httpx.get(vllm_server.base_url + "/models", timeout=10).json()["data"][0]["id"]


def _rows(wh: Path, sql: str, *params) -> list[tuple]:
    store = wh / "trajectories.duckdb"
    if not store.exists():
        return []
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def _wait(pred, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.3)
    return pred()


SYSTEM = {"role": "system", "content": "You are a shell agent. Call the bash tool."}
TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Run a shell command",
                                           "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}]


def _tool_call(cid: str, cmd: str) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [{"id": cid, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"cmd": cmd})}}]}


def _as_sent(msg) -> dict:
    """A reply as the agent sends it back in its history."""
    return {"role": "assistant", "content": msg.content or ""}


def _conversation(client, model: str, task: str, steps: list[tuple[str, str, str]], stream_last: bool = False) -> list[str]:
    """Replay an agent: ask, then for each step append the model's reply, a tool call and its result, ask again."""
    messages = [SYSTEM, {"role": "user", "content": task}]
    replies = []
    for i in range(len(steps) + 1):
        kw = {"model": model, "messages": messages, "tools": TOOLS, "tool_choice": "none", "max_tokens": 8, "temperature": 0}
        if stream_last and i == len(steps):
            text = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(stream=True, **kw) if c.choices)
            replies.append(text)
            break
        msg = client.chat.completions.create(**kw).choices[0].message
        replies.append(msg.content or "")
        if i < len(steps):
            cid, cmd, out = steps[i]
            messages = [*messages, _as_sent(msg), _tool_call(cid, cmd), {"role": "tool", "tool_call_id": cid, "content": out}]
    return replies


STEPS = [("call_a", "ls", "notes.txt\nsrc"), ("call_b", "wc -l notes.txt", "42 notes.txt")]


def _turns(wh: Path, task: str) -> list[tuple]:
    return _rows(wh, "SELECT t.source, t.domain, u.turn_idx, u.action, u.observation, u.obs_tokens, u.compression_ratio, u.novelty, "
                     "u.line_surprisal, u.informative, u.mask_reason FROM turns u JOIN trajectories t USING (trajectory_id) "
                     "WHERE t.task = ? ORDER BY u.turn_idx", task)


def _check_turns(rows: list[tuple], steps=STEPS) -> None:
    assert len(rows) == len(steps)
    for row, (_, cmd, out) in zip(rows, steps):
        source, domain, _, action, observation, *stats = row
        assert (source, domain) == ("record-openai", "terminal")
        assert json.loads(action) == {"name": "bash", "arguments": {"cmd": cmd}}
        assert observation == out
        assert all(s is not None for s in stats)


def test_models_plain_and_streamed_chats_are_forwarded_and_recorded(vllm_server, proxies, tmp_path):
    proxy = proxies(vllm_server.base_url, idle_timeout=1.5)
    client = proxy.client()
    model = _model(vllm_server)
    assert model in [m.id for m in client.models.list()]
    plain = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "plain question"}], max_tokens=8, temperature=0)
    streamed = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "streamed question"}], max_tokens=8, temperature=0, stream=True) if c.choices)
    rec_dir = tmp_path / "wh" / "recordings" / "openai"
    files = _wait(lambda: sorted(rec_dir.glob("*.json")) if rec_dir.is_dir() and len(list(rec_dir.glob("*.json"))) == 2 else None)
    assert files, "the idle timeout did not store the two sessions"
    docs = {json.loads(f.read_text())["messages"][0]["content"]: json.loads(f.read_text()) for f in files}
    assert docs["plain question"]["messages"][-1]["content"] == plain.choices[0].message.content
    assert docs["streamed question"]["messages"][-1]["content"] == streamed
    assert docs["streamed question"]["upstream"] == vllm_server.base_url.rstrip("/")
    # a plain chat has no tool call answered by a result: quarantined with that reason, the file kept
    # the document is written before it is ingested: wait for the store
    def quarantined():
        rows = _rows(tmp_path / "wh", "SELECT reason FROM quarantine")
        return rows if len(rows) == 2 else None

    reasons = _wait(quarantined)
    assert reasons and len(reasons) == 2 and all("nothing to learn from" in r[0] for r in reasons)


def test_a_tool_conversation_is_one_trajectory_after_the_idle_timeout(vllm_server, proxies, tmp_path):
    proxy = proxies(vllm_server.base_url, idle_timeout=1.5)
    model = _model(vllm_server)
    task = "count the lines of notes.txt"
    replies = _conversation(proxy.client(), model, task, STEPS, stream_last=True)
    assert len(replies) == 3
    rows = _wait(lambda: _turns(tmp_path / "wh", task))
    _check_turns(rows)
    (doc_file,) = (tmp_path / "wh" / "recordings" / "openai").glob("*.json")
    doc = json.loads(doc_file.read_text())
    assert doc["exchanges"] == 3 and doc["tools"][0]["function"]["name"] == "bash"
    assert doc["messages"][-1]["content"] == replies[-1]  # the streamed final reply, accumulated
    assert proxy.stop() in (0, -signal.SIGTERM)  # uvicorn re-raises the signal after its graceful shutdown


def test_sigterm_stores_open_sessions_grouped_by_header_and_by_prefix(vllm_server, proxies, tmp_path):
    wh = tmp_path / "wh"
    proxy = proxies(vllm_server.base_url, idle_timeout=300)
    model = _model(vllm_server)
    # two agents with the same task: one names its session in a header, the other is grouped by prefix
    tagged = proxy.client(**{"X-Session-Id": "agent/7"})
    _conversation(tagged, model, "header task", STEPS[:1])
    # a header groups requests whose messages are not a prefix of each other
    tagged.chat.completions.create(model=model, messages=[{"role": "user", "content": "an unrelated question"}], max_tokens=4)
    _conversation(proxy.client(), model, "prefix task", STEPS)
    health = httpx.get(proxy.url + "/health", timeout=5).json()
    assert health["open_sessions"] == 2
    assert _turns(wh, "header task") == [] and _turns(wh, "prefix task") == []
    assert proxy.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    _check_turns(_turns(wh, "header task"), STEPS[:1])
    _check_turns(_turns(wh, "prefix task"))
    names = sorted(p.name for p in (wh / "recordings" / "openai").glob("*.json"))
    assert len(names) == 2 and any(n.startswith("agent_7-") for n in names)
    header_doc = json.loads(next((wh / "recordings" / "openai").glob("agent_7-*.json")).read_text())
    assert header_doc["exchanges"] == 3
    assert list((wh / "recordings" / "segments" / "openai").glob("*.jsonl")) == []


def test_kill_9_mid_session_then_a_restart_stores_it(vllm_server, proxies, tmp_path):
    wh = tmp_path / "wh"
    proxy = proxies(vllm_server.base_url, idle_timeout=300)
    model = _model(vllm_server)
    _conversation(proxy.client(), model, "killed task", STEPS)
    proxy.stop(signal.SIGKILL)
    assert proxy.proc.returncode == -signal.SIGKILL
    assert len(list((wh / "recordings" / "segments" / "openai").glob("*.jsonl"))) == 1
    assert _turns(wh, "killed task") == []
    restarted = proxies(vllm_server.base_url, idle_timeout=300)  # recovers before it answers /health
    _check_turns(_turns(wh, "killed task"))
    assert list((wh / "recordings" / "segments" / "openai").glob("*.jsonl")) == []
    assert restarted.stop() in (0, -signal.SIGTERM)
