"""Acknowledged means durable, for the recording proxies: an exchange (OpenAI) or tool call (MCP) whose
answer reached the client is in its fsync-ed segment, and after a ``kill -9`` and a restart on the
same warehouse it is in the trajectory store exactly once.

The OpenAI proxy runs for real (``worldforge record openai``, setsid, stopped by PID) in front of a
small standard-library upstream (``fixtures/fake_openai_upstream.py``), so these tests need no model.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import sys
from pathlib import Path

import duckdb
import httpx
import pytest

from tests.conftest import ROOT
from tests.servers import ProcessServer
from worldforge.warehouse import Warehouse

UPSTREAM = ROOT / "tests" / "recording" / "fixtures" / "fake_openai_upstream.py"
pytestmark = pytest.mark.timeout(300)


def _store(wh: Path, sql: str) -> list[tuple]:
    path = wh / "trajectories.duckdb"
    if not path.exists():
        return []
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _trajectories(wh: Path) -> list[tuple]:
    """``(task, n_turns, [(action, observation), ...])`` of every stored record-openai trajectory, sorted."""
    rows = _store(wh, "SELECT t.trajectory_id, t.task, t.n_turns, u.action, u.observation FROM trajectories t "
                      "JOIN turns u USING (trajectory_id) WHERE t.source = 'record-openai' ORDER BY 1, u.turn_idx")
    out: dict[str, tuple] = {}
    for tid, task, n, action, obs in rows:
        out.setdefault(tid, (task, n, []))[2].append((json.loads(action), obs))
    return sorted(out.values(), key=lambda t: t[0])


def _proxy(upstream: str, wh: Path, log: Path) -> ProcessServer:
    return ProcessServer(lambda port: [sys.executable, "-m", "worldforge.cli", "record", "openai", "--upstream", upstream,
                                       "--port", str(port), "--idle-timeout", "600", "--warehouse", str(wh)], log=log)


def _kill_9(server: ProcessServer) -> None:
    os.killpg(server.proc.pid, signal.SIGKILL)  # no shutdown hook runs
    server.proc.wait(10)


def _streamed(client: httpx.Client, body: dict, headers: dict) -> tuple[dict, bytes]:
    """A streamed chat completion read to the end of its body: the assistant message rebuilt from the deltas, and the raw body."""
    with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}, headers=headers) as r:
        assert r.status_code == 200
        raw = r.read()
    content, calls = "", {}
    for line in raw.decode().splitlines():
        if line.startswith("data: {"):
            delta = json.loads(line[6:])["choices"][0]["delta"]
            content += delta.get("content") or ""
            for tc in delta.get("tool_calls") or []:
                c = calls.setdefault(tc["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                c["id"] = tc.get("id") or c["id"]
                c["function"]["name"] += (tc.get("function") or {}).get("name") or ""
                c["function"]["arguments"] += (tc.get("function") or {}).get("arguments") or ""
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [calls[i] for i in sorted(calls)]
    return msg, raw


def _agent(client: httpx.Client, task: str, steps: int, headers: dict, stream: set[int]) -> list[dict]:
    """An agent loop: ask; each tool call the model makes is answered (``out of step <n>``); the last request says ``finish``.
    Returns the conversation as the client knows it (its messages and the replies it received)."""
    messages = [{"role": "user", "content": task}]
    for i in range(steps + 1):
        if i == steps:
            messages.append({"role": "user", "content": "finish"})
        body = {"model": "fake", "messages": messages}
        if i in stream:
            reply, raw = _streamed(client, body, headers)
            assert raw.rstrip().endswith(b"data: [DONE]")
        else:
            r = client.post("/v1/chat/completions", json=body, headers=headers)
            assert r.status_code == 200, r.text
            reply = r.json()["choices"][0]["message"]
        messages = [*messages, reply]
        for call in reply.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"out of {json.loads(call['function']['arguments'])['cmd']}"})
    return messages


def test_answered_exchanges_survive_kill_9_and_a_restart_exactly_once(tmp_path):
    """Two conversations (one named by ``X-Session-Id`` with streamed answers, one grouped by prefix), the proxy
    killed with SIGKILL right after the last answer was read: the restart stores each one once, with every
    exchange the client saw; two more restarts (one killed again) store nothing twice.

    This test passes on the code before round 4 too: the window it guards (a stream's end sent before its
    exchange was appended) is short; the order itself is checked by the in-process test below."""
    wh = tmp_path / "wh"
    upstream = ProcessServer(lambda port: [sys.executable, str(UPSTREAM), str(port)], log=tmp_path / "upstream.log")
    started: list[ProcessServer] = [upstream]
    try:
        proxy = _proxy(upstream.url + "/v1", wh, tmp_path / "proxy.log")
        started.append(proxy)
        with httpx.Client(base_url=proxy.url, timeout=30) as c:
            named = _agent(c, "named task", 3, {"X-Session-Id": "agent-1"}, stream={1, 3})
            grouped = _agent(c, "grouped task", 2, {}, stream=set())
        _kill_9(proxy)  # at once after the last answer was read
        segments = wh / "recordings" / "segments" / "openai"
        assert len(list(segments.glob("*.jsonl"))) == 2 and _trajectories(wh) == []

        for restart in range(3):
            again = _proxy(upstream.url + "/v1", wh, tmp_path / "proxy.log")  # recovers before /health answers
            started.append(again)
            if restart == 1:
                _kill_9(again)
            else:
                assert again.stop() is None and again.proc.returncode in (0, -signal.SIGTERM)
            got = _trajectories(wh)
            assert [(task, n) for task, n, _ in got] == [("grouped task", 2), ("named task", 3)], restart
            docs = sorted((json.loads(p.read_text()) for p in (wh / "recordings" / "openai").glob("*.json")), key=lambda d: d["messages"][0]["content"])
            assert [d["messages"] for d in docs] == [grouped, named]  # what the client sent and received, nothing else
            assert [d["exchanges"] for d in docs] == [3, 4]
            assert list(segments.glob("*.jsonl")) == [] and len(list(segments.glob("*.jsonl.closed"))) == 2
        for (task, _, turns), conv in zip(got, (grouped, named)):
            tool_out = [m["content"] for m in conv if m["role"] == "tool"]
            assert [obs for _, obs in turns] == tool_out, task
            assert [a["name"] for a, _ in turns] == ["bash"] * len(tool_out)
    finally:
        for s in reversed(started):
            s.stop()


# -- in process: the order of the durable write and the answer ---------------------------------------------


def _sse(*texts: str) -> list[bytes]:
    chunks = [f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': t}}]})}\n\n".encode() for t in texts]
    return [*chunks, b"data: [DONE]\n\n"]


async def _asgi_post(app, body: dict, sent: list) -> None:
    """POST ``body`` to ``/v1/chat/completions`` of ``app``, appending each ASGI message it sends to ``sent``."""
    data = json.dumps(body).encode()
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2)}
    messages = [{"type": "http.request", "body": data, "more_body": False}]

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(("send", message))

    await app(scope, receive, send)


def _app(tmp_path, chunks: list[bytes]):
    from worldforge.recording.openai_proxy import create_openai_proxy

    async def stream():
        for c in chunks:
            yield c
            await asyncio.sleep(0)

    def handler(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content).get("stream"):
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())
        return httpx.Response(200, json={"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]})

    return create_openai_proxy("http://upstream.test/v1", tmp_path / "wh", transport=httpx.MockTransport(handler))


def test_a_streamed_answer_ends_only_after_its_exchange_is_in_the_segment(tmp_path):
    """On the code before round 4 the ``[DONE]`` chunk and the end of the body were sent before the exchange
    was appended (the append ran in the stream's ``finally``): a kill -9 in between lost an answer the client
    had read to its end. This test fails there (the append comes after the ``[DONE]`` chunk)."""
    app = _app(tmp_path, _sse("hel", "lo"))
    sent: list = []
    real = app.state.sink.segments.append
    app.state.sink.segments.append = lambda sid, event: (sent.append(("append", event["event"])), real(sid, event))[1]
    asyncio.run(_asgi_post(app, {"model": "m", "messages": [{"role": "user", "content": "q"}], "stream": True}, sent))
    bodies = [(i, m) for i, (kind, m) in enumerate(sent) if kind == "send" and m["type"] == "http.response.body"]
    appended = next(i for i, (kind, what) in enumerate(sent) if kind == "append" and what == "exchange")
    done_at = next(i for i, m in bodies if b"[DONE]" in m.get("body", b""))
    end_at = next(i for i, m in bodies if not m.get("more_body"))
    assert any(b"hel" in m.get("body", b"") and i < appended for i, m in bodies)  # the content itself is not held back
    assert appended < done_at <= end_at
    [event] = [e for e in app.state.sink.segments.events(app.state.sink.segments.open_sessions()[0]) if e["event"] == "exchange"]
    assert event["reply"] == {"role": "assistant", "content": "hello"}


def test_a_done_split_over_three_chunks_is_held_until_the_exchange_is_in_the_segment(tmp_path):
    """The ``[DONE]`` marker over three chunks (``data: [D``, ``O``, ``NE]``): it used to be looked for in the
    last chunk's tail and this chunk only, so it was missed and reached the client before the exchange was
    appended. The stream the client has read must hold ``[DONE]`` only after the append."""
    app = _app(tmp_path, [*_sse("hel", "lo")[:-1], b"data: [D", b"O", b"NE]\n\n"])
    sent: list = []
    real = app.state.sink.segments.append
    app.state.sink.segments.append = lambda sid, event: (sent.append(("append", event["event"])), real(sid, event))[1]
    asyncio.run(_asgi_post(app, {"model": "m", "messages": [{"role": "user", "content": "q"}], "stream": True}, sent))
    appended = next(i for i, (kind, what) in enumerate(sent) if kind == "append" and what == "exchange")
    streamed, done_at = b"", None
    for i, (kind, m) in enumerate(sent):
        if kind == "send" and m["type"] == "http.response.body":
            streamed += m.get("body", b"")
            if done_at is None and b"[DONE]" in streamed:
                done_at = i
    assert streamed.endswith(b"data: [DONE]\n\n") and done_at is not None
    assert appended < done_at
    end_at = next(i for i, (kind, m) in enumerate(sent) if kind == "send" and m["type"] == "http.response.body" and not m.get("more_body"))
    assert appended < end_at
    [event] = [e for e in app.state.sink.segments.events(app.state.sink.segments.open_sessions()[0]) if e["event"] == "exchange"]
    assert event["reply"] == {"role": "assistant", "content": "hello"}


def _failing_exchanges(app) -> None:
    real = app.state.sink.segments.append

    def append(sid, event):
        if event["event"] == "exchange":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(sid, event)

    app.state.sink.segments.append = append


def test_an_exchange_that_cannot_be_recorded_is_not_answered(tmp_path):
    """A non-streamed answer is withheld and answered 503 naming the segment and the error (it used to be a bare 500);
    a stream is cut before its ``[DONE]`` and the end of its body."""
    app = _app(tmp_path, _sse("a", "b"))
    _failing_exchanges(app)
    sent: list = []
    asyncio.run(_asgi_post(app, {"model": "m", "messages": [{"role": "user", "content": "q"}]}, sent))
    start = next(m for _, m in sent if m["type"] == "http.response.start")
    body = json.loads(b"".join(m.get("body", b"") for _, m in sent if m["type"] == "http.response.body"))
    assert start["status"] == 503
    message = body["error"]["message"]
    assert "could not be recorded in" in message and ".jsonl" in message and "No space left on device" in message and "\n" not in message

    sent = []
    with pytest.raises(OSError):
        asyncio.run(_asgi_post(app, {"model": "m", "messages": [{"role": "user", "content": "q2"}], "stream": True}, sent))
    streamed = b"".join(m.get("body", b"") for _, m in sent if m["type"] == "http.response.body")
    assert b"[DONE]" not in streamed and all(m.get("more_body", False) for _, m in sent if m["type"] == "http.response.body")


def test_a_crash_between_ingest_and_closing_the_segment_stores_nothing_twice(tmp_path):
    """The window after the recording was ingested and before its segment was renamed ``.closed``: the next
    start ingests the same document again, and the store keeps one trajectory (same path, same bytes)."""
    from worldforge.recording.sink import RecordingSink

    sink = RecordingSink(Warehouse(tmp_path / "wh"), "openai")
    sid = sink.new_session_id("crash")
    msgs = [{"role": "user", "content": "task x"}]
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\": \"ls\"}"}}
    sink.append(sid, {"event": "exchange", "request": {"messages": msgs}, "reply": {"role": "assistant", "content": "", "tool_calls": [call]}})
    sink.append(sid, {"event": "exchange", "request": {"messages": [*msgs, {"role": "assistant", "content": "", "tool_calls": [call]},
                                                                    {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}]},
                      "reply": {"role": "assistant", "content": "done"}})

    def crash(session_id):
        raise KeyboardInterrupt("killed")  # what kill -9 leaves: ingested, segment still open

    sink.segments.close = crash
    with pytest.raises(KeyboardInterrupt):
        sink.close(sid)
    assert len(_store(tmp_path / "wh", "SELECT * FROM trajectories")) == 1
    restarted = RecordingSink(Warehouse(tmp_path / "wh"), "openai")
    assert [c.session_id for c in restarted.recover()] == [sid]
    assert _store(tmp_path / "wh", "SELECT task, n_turns FROM trajectories") == [("task x", 1)]
    assert restarted.segments.open_sessions() == []


# -- the MCP proxy ------------------------------------------------------------------------------------------

STDIO_SERVER = f"{sys.executable} {ROOT / 'tests' / 'recording' / 'fixtures' / 'mcp_stdio_server.py'}"


def _mcp_proxy(wh: Path, log: Path) -> ProcessServer:
    return ProcessServer(lambda port: [sys.executable, "-m", "worldforge.cli", "record", "mcp", "--command", STDIO_SERVER,
                                       "--port", str(port), "--idle-timeout", "600", "--warehouse", str(wh)], log=log)


def test_answered_mcp_calls_survive_kill_9_and_a_restart_exactly_once(tmp_path):
    """Two MCP sessions through the real proxy, killed with SIGKILL right after the last ``tools/call`` was
    answered: after a restart each session is one trajectory whose turns are the answers the client got,
    and further restarts (one killed again) store nothing twice. Each call is appended to the fsync-ed
    segment before its result is returned (so this passes on the code before round 4 too: it guards it)."""
    from mcp import Client

    wh = tmp_path / "wh"
    proxy = _mcp_proxy(wh, tmp_path / "mcp.log")
    started = [proxy]

    async def run() -> list[list[str]]:
        seen = []
        for calls in ([("add", {"a": 2, "b": 40}), ("echo", {"text": "first session"})], [("echo", {"text": "second"}), ("add", {"a": 1, "b": 1})]):
            async with Client(proxy.url + "/mcp", mode="legacy") as c:  # a session each (Mcp-Session-Id)
                seen.append([(await c.call_tool(name, args)).content[0].text for name, args in calls])
        return seen

    def stored() -> list[list[str]]:
        rows = _store(wh, "SELECT trajectory_id, observation FROM turns u JOIN trajectories t USING (trajectory_id) "
                          "WHERE t.source = 'record-mcp' ORDER BY 1, u.turn_idx")
        by: dict[str, list[str]] = {}
        for tid, obs in rows:
            by.setdefault(tid, []).append(obs)
        return sorted(by.values())

    try:
        seen = asyncio.run(run())
        _kill_9(proxy)
        assert seen == [["42", "first session"], ["second", "2"]] and stored() == []
        for restart in range(3):
            again = _mcp_proxy(wh, tmp_path / "mcp.log")
            started.append(again)
            if restart == 1:
                _kill_9(again)
            else:
                again.stop()
            assert stored() == sorted(seen), restart
            assert len(list((wh / "recordings" / "mcp").glob("*.json"))) == 2
            assert list((wh / "recordings" / "segments" / "mcp").glob("*.jsonl")) == []
    finally:
        for s in reversed(started):
            s.stop()
