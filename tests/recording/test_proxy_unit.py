"""The recording proxy's logic against a mock upstream (no servers): SSE accumulation of streamed tool
calls, session grouping, forwarding, and storing on shutdown. The real-server tests are in test_openai_proxy.py."""

from __future__ import annotations

import json

import duckdb
import httpx
import pytest
from fastapi.testclient import TestClient

from worldforge.recording.openai_proxy import StreamAccumulator, create_openai_proxy


def _sse(chunks: list[dict]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


STREAM = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": "call_x", "type": "function", "function": {"name": "bash", "arguments": ""}}]}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"cmd\": "}}]}}]},
    {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"ls\"}"}},
                                                       {"index": 1, "id": "call_y", "function": {"name": "pwd", "arguments": "{}"}}]}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]


def test_stream_accumulator_joins_tool_call_fragments_across_any_split():
    raw = _sse(STREAM)
    for size in (1, 7, len(raw)):
        acc = StreamAccumulator()
        for i in range(0, len(raw), size):
            acc.feed(raw[i:i + size])
        msg = acc.message()
        assert msg["tool_calls"] == [
            {"id": "call_x", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}},
            {"id": "call_y", "type": "function", "function": {"name": "pwd", "arguments": "{}"}},
        ]
        assert acc.finish_reason == "tool_calls" and msg["content"] == ""
    assert StreamAccumulator().message() is None


class Upstream:
    """A mock OpenAI upstream: replies "reply <n>" (or streams a tool call) and counts requests."""

    def __init__(self) -> None:
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        if request.url.path.endswith("/models"):
            return httpx.Response(200, json={"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
        body = json.loads(request.content)
        if body.get("stream"):
            return httpx.Response(200, content=_sse(STREAM), headers={"content-type": "text/event-stream"})
        n = len(self.seen)
        return httpx.Response(200, json={"id": f"c{n}", "object": "chat.completion", "model": body["model"],
                                         "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": f"reply {n}"}}]})


@pytest.fixture
def proxy(tmp_path):
    upstream = Upstream()
    app = create_openai_proxy("http://upstream.test/v1", tmp_path, idle_timeout=3600, transport=httpx.MockTransport(upstream))
    return app, upstream, tmp_path


def _chat(c: TestClient, messages: list, **headers) -> httpx.Response:
    return c.post("/v1/chat/completions", json={"model": "mock-model", "messages": messages}, headers=headers)


def test_grouping_by_prefix_and_by_header_then_stored_on_shutdown(proxy):
    app, upstream, wh = proxy
    user = {"role": "user", "content": "list the files"}
    with TestClient(app) as c:
        r1 = _chat(c, [user])
        sid = r1.headers["x-session-id"]
        reply = r1.json()["choices"][0]["message"]
        call = {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}]}
        result = {"role": "tool", "tool_call_id": "t1", "content": "a.txt b.txt"}
        r2 = _chat(c, [user, reply, call, result])
        assert r2.headers["x-session-id"] == sid  # the recorded conversation is a prefix
        assert _chat(c, [user]).headers["x-session-id"] != sid  # a retry of the first request: a new session
        h1 = _chat(c, [{"role": "user", "content": "one"}], **{"X-Session-Id": "run 1"}).headers["x-session-id"]
        h2 = _chat(c, [{"role": "user", "content": "two"}], **{"X-Session-Id": "run 1"}).headers["x-session-id"]
        assert h1 == h2 and h1.startswith("run_1-")
        assert "x-session-id" not in {k.lower() for k in upstream.seen[-1].headers}  # the proxy's header stays here
        assert c.get("/v1/models").json()["data"][0]["id"] == "mock-model"
        assert c.get("/health").json()["open_sessions"] == 3
        assert app.state.table.open[sid].conversation[-1]["content"] == "reply 2"
    # the lifespan's shutdown stored every open session
    con = duckdb.connect(str(wh / "trajectories.duckdb"), read_only=True)
    try:
        turns = con.execute("SELECT action, observation FROM turns").fetchall()
        quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
    finally:
        con.close()
    assert turns == [(json.dumps({"name": "bash", "arguments": {"cmd": "ls"}}), "a.txt b.txt")]
    assert quarantined == 2  # the retry and the header session: plain chats
    assert len(list((wh / "recordings" / "openai").glob("*.json"))) == 3


def test_streamed_tool_calls_are_recorded_and_bad_requests_answered(proxy):
    app, _, wh = proxy
    with TestClient(app) as c:
        r = c.post("/v1/chat/completions", json={"model": "mock-model", "stream": True, "messages": [{"role": "user", "content": "go"}]})
        assert r.status_code == 200 and r.text.endswith("data: [DONE]\n\n")
        sid = r.headers["x-session-id"]
        assert app.state.table.open[sid].conversation[-1]["tool_calls"][0]["function"]["arguments"] == "{\"cmd\": \"ls\"}"
        bad = c.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
        assert bad.status_code == 400 and "not JSON" in bad.json()["error"]["message"]
        assert c.post("/v1/chat/completions", json={"model": "m"}).status_code == 400
    seg = (wh / "recordings" / "segments" / "openai" / f"{sid}.jsonl.closed").read_text().splitlines()
    assert [json.loads(x)["event"] for x in seg] == ["start", "exchange"]


def test_unreachable_upstream_is_a_502_and_bad_options_are_refused(tmp_path):
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    app = create_openai_proxy("http://127.0.0.1:9/v1", tmp_path, transport=httpx.MockTransport(down))
    with TestClient(app) as c:
        r = _chat(c, [{"role": "user", "content": "hi"}])
        assert r.status_code == 502 and "unreachable" in r.json()["error"]["message"]
    with pytest.raises(ValueError, match="http"):
        create_openai_proxy("localhost:8000", tmp_path)
    with pytest.raises(ValueError, match="positive"):
        create_openai_proxy("http://x/v1", tmp_path, idle_timeout=0)


def test_cli_refuses_bad_options_with_one_message(tmp_path):
    from typer.testing import CliRunner

    from worldforge.cli import app

    runner = CliRunner()
    bad = runner.invoke(app, ["record", "openai", "--upstream", "localhost:8000", "--warehouse", str(tmp_path)])
    assert bad.exit_code == 2 and "must be an http(s):// URL" in bad.output and "Traceback" not in bad.output
    zero = runner.invoke(app, ["record", "openai", "--upstream", "http://x/v1", "--idle-timeout", "0", "--warehouse", str(tmp_path)])
    assert zero.exit_code == 2 and "positive" in zero.output
    assert "openai" in runner.invoke(app, ["record", "--help"]).output


def test_a_full_session_table_answers_503_and_takes_new_sessions_once_one_closes(tmp_path):
    upstream = Upstream()
    app = create_openai_proxy("http://upstream.test/v1", tmp_path, idle_timeout=3600, transport=httpx.MockTransport(upstream), max_sessions=1)
    with TestClient(app) as c:
        first = _chat(c, [{"role": "user", "content": "one"}])
        assert first.status_code == 200
        full = _chat(c, [{"role": "user", "content": "two"}])  # no recorded prefix: a second session
        assert full.status_code == 503 and "too many open sessions (1)" in full.json()["error"]["message"]
        assert len(upstream.seen) == 1  # refused before anything was forwarded or written
        reply = first.json()["choices"][0]["message"]
        again = _chat(c, [{"role": "user", "content": "one"}, reply, {"role": "user", "content": "more"}])
        assert again.status_code == 200 and again.headers["x-session-id"] == first.headers["x-session-id"]  # its own session still joins
        app.state.table.detach(first.headers["x-session-id"])
        assert _chat(c, [{"role": "user", "content": "two"}]).status_code == 200
    segments = sorted(p.name for p in (tmp_path / "recordings" / "segments" / "openai").iterdir())
    assert len(segments) == 2  # the refused request left no segment
