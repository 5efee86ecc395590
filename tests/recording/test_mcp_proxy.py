"""``worldforge record mcp`` for real: the proxy between the official ``mcp`` client and real MCP servers.

Upstreams: the project's own search server (``worldforge serve search``, streamable HTTP) and a
small ``mcp`` SDK stdio server (``fixtures/mcp_stdio_server.py``). The proxy serves streamable
HTTP (a process of its own, setsid, stopped by signal) or stdio (launched by the client). Each
test checks the stored trajectory turn by turn in ``WAREHOUSE/trajectories.duckdb``.
"""

from __future__ import annotations

import asyncio
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
from tests.conftest_worlds import built_world
from tests.servers import CliServer
from worldforge.net import free_port
from worldforge.warehouse import Warehouse

STDIO_SERVER = f"{sys.executable} {ROOT / 'tests' / 'recording' / 'fixtures' / 'mcp_stdio_server.py'}"
pytestmark = pytest.mark.timeout(300)


class McpProxy:
    """``worldforge record mcp --serve http`` on a free loopback port, in its own session; waits for ``/health``."""

    def __init__(self, warehouse: Path, *upstream: str, idle_timeout: float = 60.0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = warehouse.parent / f"mcp-proxy-{self.port}.log"
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "worldforge.cli", "record", "mcp", *upstream, "--port", str(self.port),
                 "--idle-timeout", str(idle_timeout), "--warehouse", str(warehouse)],
                cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"proxy exited at start-up: {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop(signal.SIGKILL)
        raise RuntimeError("proxy did not start")

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        return self.proc.returncode


def stored_turns(wh: Path) -> list[tuple]:
    store = wh / "trajectories.duckdb"
    if not store.exists():
        return []
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute("""SELECT t.source, t.domain, t.trajectory_id, u.turn_idx, u.action, u.observation, u.obs_tokens, u.novelty, u.informative
                              FROM turns u JOIN trajectories t USING (trajectory_id) ORDER BY t.trajectory_id, u.turn_idx""").fetchall()
    finally:
        con.close()


def wait_for(pred, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("timed out")


async def drive(url: str, calls: list[tuple[str, dict]]) -> list[tuple[str, bool]]:
    from mcp import Client

    async with Client(url + "/mcp") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        out = []
        for name, args in calls:
            assert name in names
            r = await c.call_tool(name, args)
            out.append((r.content[0].text if r.content else "", bool(r.is_error)))
        return out


def test_stdio_upstream_behind_http_proxy_stored_on_sigterm(tmp_path):
    wh = tmp_path / "wh"
    proxy = McpProxy(wh, "--command", STDIO_SERVER)
    try:
        answers = asyncio.run(drive(proxy.url, [("add", {"a": 2, "b": 40}), ("echo", {"text": "hello world"}), ("fail", {"reason": "x"})]))
        assert answers[:2] == [("42", False), ("hello world", False)] and answers[2][1] is True
        assert stored_turns(wh) == []  # still open: nothing stored before the session ends
    finally:
        assert proxy.stop(signal.SIGTERM) is not None
    rows = stored_turns(wh)
    assert [(r[0], r[1], r[3]) for r in rows] == [("record-mcp", "mcp", 0), ("record-mcp", "mcp", 1), ("record-mcp", "mcp", 2)]
    assert [json.loads(r[4]) for r in rows] == [{"name": "add", "arguments": {"a": 2, "b": 40}}, {"name": "echo", "arguments": {"text": "hello world"}},
                                                {"name": "fail", "arguments": {"reason": "x"}}]
    assert [r[5] for r in rows[:2]] == ["42", "hello world"] and rows[2][5].startswith("Error: ")
    assert all(r[6] is not None and r[7] is not None and r[8] is not None for r in rows)  # mask statistics computed
    [doc] = [json.loads(p.read_text()) for p in (wh / "recordings" / "mcp").glob("*.json")]
    assert doc["recorder"] == "worldforge record mcp" and [t["name"] for t in doc["tools"]] == ["add", "echo", "fail"]


@pytest.fixture(scope="module")
def search_server(specs, tmp_path_factory):
    from worldforge.tasks.store import build_tasks

    wh = tmp_path_factory.mktemp("search")
    build_tasks(built_world(specs["esports_2031"], wh))
    server = CliServer("search", "--world", "esports_2031", "--warehouse", str(wh), "--no-record")
    yield server
    server.stop()


def test_project_search_server_behind_proxy_stored_when_idle(search_server, tmp_path):
    wh = tmp_path / "wh"
    proxy = McpProxy(wh, "--upstream", search_server.url + "/mcp", idle_timeout=3.0)
    try:
        answers = asyncio.run(drive(proxy.url, [("web_search", {"query": "Titans"}), ("dict_memory", {"operation": "add", "dict": {"k": 1}})]))
        assert answers[0][0].startswith("[1] https://") and answers[1][0] == "Successfully added items of ['k'] to memory."
        rows = wait_for(lambda: stored_turns(wh), 60)  # idle for 3 s: stored with no further command
        assert proxy.proc.poll() is None
    finally:
        proxy.stop()
    assert [(r[0], r[1], r[3], json.loads(r[4])["name"]) for r in rows] == [("record-mcp", "mcp", 0, "web_search"), ("record-mcp", "mcp", 1, "dict_memory")]
    assert [r[5] for r in rows] == [a for a, _ in answers]  # the observations are what the agent saw


def test_stdio_proxy_launched_by_the_agent(tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    wh = tmp_path / "wh"
    params = StdioServerParameters(command=sys.executable, args=["-m", "worldforge.cli", "record", "mcp", "--command", STDIO_SERVER,
                                                                 "--serve", "stdio", "--warehouse", str(wh)], cwd=str(ROOT))

    async def run() -> str:
        async with Client(params) as c:
            return (await c.call_tool("add", {"a": 1, "b": 1})).content[0].text

    assert asyncio.run(run()) == "2"
    rows = wait_for(lambda: stored_turns(wh), 30)  # the connection ended: stored
    assert [(json.loads(r[4]), r[5]) for r in rows] == [({"name": "add", "arguments": {"a": 1, "b": 1}}, "2")]


def test_kill_9_then_restart_recovers_the_session(tmp_path):
    wh = tmp_path / "wh"
    proxy = McpProxy(wh, "--command", STDIO_SERVER)
    try:
        asyncio.run(drive(proxy.url, [("echo", {"text": "survives a crash"})]))
    finally:  # the crash itself, and no proxy left behind when the drive fails
        proxy.stop(signal.SIGKILL)
    assert stored_turns(wh) == [] and list((wh / "recordings" / "segments" / "mcp").glob("*.jsonl"))
    again = McpProxy(wh, "--command", STDIO_SERVER)  # recovers the open segment at start
    try:
        rows = wait_for(lambda: stored_turns(wh), 30)
    finally:
        again.stop()
    assert [r[5] for r in rows] == ["survives a crash"]


def test_bad_flags_are_one_clear_error(tmp_path):
    from typer.testing import CliRunner

    from worldforge.cli import app

    r = CliRunner().invoke(app, ["record", "mcp", "-w", str(tmp_path)])
    assert r.exit_code == 2 and "exactly one of --upstream" in r.output
    r = CliRunner().invoke(app, ["record", "mcp", "--upstream", "ftp://x", "-w", str(tmp_path)])
    assert r.exit_code == 2 and "http(s)://" in r.output


def test_a_session_is_never_idle_while_a_call_is_in_flight(tmp_path, monkeypatch):
    """A slow upstream call (longer than the idle timeout) must not have its session stored, and split, under it:
    idleness counts from the end of the last answered request (issue 33: it counted from the start)."""
    from worldforge.recording import mcp_proxy
    from worldforge.recording.sink import RecordingSink

    async def slow_call(self, fn):
        await asyncio.sleep(0.6)
        return type("Result", (), {"content": [], "is_error": False})()

    async def main() -> list:
        monkeypatch.setattr(mcp_proxy.UpstreamSession, "__init__", lambda self, target: None)
        monkeypatch.setattr(mcp_proxy.UpstreamSession, "call", slow_call)
        rec = mcp_proxy.McpRecorder(None, RecordingSink(Warehouse(tmp_path / "wh"), "mcp"), "test")
        seen = []
        call = asyncio.create_task(rec.call_tool("k", "echo", {"text": "x"}))
        for _ in range(5):  # 0.5 s of a 0.6 s call, with an idle timeout of 0.1 s
            await asyncio.sleep(0.1)
            seen.append(rec.idle(0.1))
        await call
        seen.append(rec.idle(0.1))  # just answered
        await asyncio.sleep(0.15)
        seen.append(rec.idle(0.1))
        return seen

    seen = asyncio.run(main())
    assert seen[:6] == [[]] * 6 and seen[6] == ["k"]


def test_a_refused_session_opens_no_upstream_and_writes_no_recording(tmp_path, monkeypatch):
    """A full proxy refuses a new session before it connects upstream or starts a recording; the reaper
    closes a session only if it is still idle when its turn comes (a request that came meanwhile keeps it)."""
    from worldforge.recording import mcp_proxy
    from worldforge.recording.sink import RecordingSink
    from worldforge.serving.sessions import SessionLimit

    made = []

    async def quick_call(self, fn):
        return type("Result", (), {"content": [], "is_error": False})()

    async def closed(self):
        made.remove(self)

    async def main() -> tuple:
        monkeypatch.setattr(mcp_proxy.UpstreamSession, "__init__", lambda self, target: made.append(self))
        monkeypatch.setattr(mcp_proxy.UpstreamSession, "call", quick_call)
        monkeypatch.setattr(mcp_proxy.UpstreamSession, "close", closed)
        rec = mcp_proxy.McpRecorder(None, RecordingSink(Warehouse(tmp_path / "wh"), "mcp"), "test", max_sessions=1)
        now = [0.0]
        rec.sessions.clock = lambda: now[0]  # the test's own clock: no wall-clock timing
        await rec.call_tool("a", "echo", {"text": "x"})
        with pytest.raises(SessionLimit):
            await rec.call_tool("b", "echo", {"text": "y"})
        upstreams = len(made)
        segments = sorted(p.name for p in (tmp_path / "wh" / "recordings" / "segments" / "mcp").iterdir())
        now[0] = 10.0
        listed = rec.idle(5)
        await rec.call_tool("a", "echo", {"text": "again"})  # came between the listing and the close
        for key in listed:
            await rec.close(key, 5)
        kept = len(rec.sessions)
        await rec.close_all()
        return upstreams, segments, listed, kept, len(made)

    upstreams, segments, listed, kept, left = asyncio.run(main())
    assert upstreams == 1 and len(segments) == 1  # nothing made for the refused session
    assert listed == ["a"] and kept == 1 and left == 0
