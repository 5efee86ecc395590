"""The HTTP and MCP servers, started for real on loopback (setsid, stopped by PID)."""

import asyncio
import time

import httpx
import polars as pl
import pytest

from tests.servers import SearchServer as Server
from worldforge.tasks.store import build_tasks


def test_http_session_lifecycle(server, warehouse):
    c = httpx.Client(base_url=server.url)
    tools = c.get("/tools").json()
    assert [t["function"]["name"] for t in tools] == ["web_search", "web_extractor", "dict_memory"]
    created = c.post("/sessions", json={"seed": 3})
    assert created.status_code == 201
    sid = created.json()["session_id"]
    r = c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}}).json()
    assert r["observation"].startswith("[1] https://") and r["turn"] == 1 and not r["error"]
    openai_style = {"id": "call_9", "type": "function", "function": {"name": "dict_memory", "arguments": '{"operation": "add", "dict": {"k": 1}}'}}
    assert c.post(f"/sessions/{sid}/step", json=openai_style).json()["observation"] == "Successfully added items of ['k'] to memory."
    bad = c.post(f"/sessions/{sid}/step", content=b'{"name": "web_search", "arguments": {oops')
    assert bad.status_code == 200 and bad.json()["error"] and "not valid JSON" in bad.json()["observation"]
    unknown = c.post(f"/sessions/{sid}/step", json={"name": "shell", "arguments": {}})
    assert unknown.status_code == 200 and "unknown tool 'shell'" in unknown.json()["observation"]
    assert c.post(f"/sessions/{sid}/reset").json()["observation"].startswith("Session")
    assert c.delete(f"/sessions/{sid}").status_code == 204
    assert c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "x"}}).status_code == 404
    assert c.post("/sessions", content=b"{nope").status_code == 400
    assert "no task" in c.post("/sessions", json={"task_id": "missing"}).json()["error"]


def test_http_task_and_instruction(server, warehouse):
    c = httpx.Client(base_url=server.url)
    task_id = build_tasks(warehouse.world("esports_2031")).tasks[0].instance_id
    sid = c.post("/sessions", json={"task_id": task_id, "instruction": "inject intermittent API errors 100% of the time"}).json()["session_id"]
    r = c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "league"}}).json()
    assert r["error"] and r["perturbations"][0]["kind"] == "transient_error"


def test_http_batch_answers_as_the_single_endpoints(server, warehouse):
    """``POST /batch`` carries many sessions' calls: each is answered as its single endpoint answers it
    (same observation for the same seed and call), in order (a step after its session's close is 404),
    with its own status; the batch's closes are in the episode store."""
    from worldforge.serving.search import MAX_BATCH_CALLS
    from worldforge.trajectories.episodes import read_episodes

    c = httpx.Client(base_url=server.url)
    task = build_tasks(warehouse.world("esports_2031")).tasks[0]
    single = c.post("/sessions", json={"seed": 3}).json()["session_id"]
    opened = c.post("/batch", json={"calls": [
        {"op": "open", "seed": 3}, {"op": "open", "seed": 3, "task_id": task.instance_id}, {"op": "open", "world": "atlantis"},
        {"op": "fly", "session_id": single}, {"op": "step", "name": "web_search"}, "step",
    ]}).json()["results"]
    assert [r["status"] for r in opened] == [201, 201, 404, 422, 422, 422]
    assert "no world 'atlantis'" in opened[2]["error"] and "'op' must be one of" in opened[3]["error"]
    a, b = opened[0]["session_id"], opened[1]["session_id"]
    other = c.post("/sessions", json={"seed": 3}).json()
    assert opened[0]["observation"] == other["observation"].replace(other["session_id"], a) and "tools" not in opened[0]
    assert c.delete(f"/sessions/{other['session_id']}").status_code == 204

    search = {"name": "web_search", "arguments": {"query": "Titans league"}}
    want = c.post(f"/sessions/{single}/step", json=search).json()
    got = c.post("/batch", json={"calls": [
        {"op": "step", "session_id": a, **search},
        {"op": "step", "session_id": a, "tool_call": {"type": "function", "function": {"name": "web_search", "arguments": '{"query": "Titans league"}'}}},
        {"op": "step", "session_id": a, "name": "nope", "arguments": {}},
        {"op": "submit", "session_id": b, "answer": "| x |\n|---|\n| y |"},
        {"op": "submit", "session_id": b, "answer": "again"},
        {"op": "close", "session_id": a},
        {"op": "step", "session_id": a, **search},
        {"op": "close", "session_id": b},
        {"op": "close", "session_id": "nobody"},
    ]}).json()["results"]
    assert [r["status"] for r in got] == [200, 200, 200, 200, 409, 204, 404, 204, 404]
    assert got[0]["observation"] == want["observation"] == got[1]["observation"] and (got[0]["turn"], got[1]["turn"]) == (1, 2)
    assert got[2]["error"] and "unknown tool 'nope'" in got[2]["observation"]
    assert 0.0 <= got[3]["reward"] <= 1.0 and got[3]["done"] and got[3]["info"]
    stored = read_episodes(warehouse).filter(pl.col("episode_id").is_in([a, b]))
    assert stored.height == 2 and set(stored["agent"]) == {"http"}
    assert stored.filter(pl.col("episode_id") == b)["task_id"].to_list() == [task.instance_id]

    assert c.post("/batch", json={"calls": {"op": "open"}}).status_code == 422
    assert c.post("/batch", json={"calls": [{"op": "close", "session_id": "x"}] * (MAX_BATCH_CALLS + 1)}).status_code == 422
    assert c.post("/batch", content=b"{nope").status_code == 400
    assert c.delete(f"/sessions/{single}").status_code == 204


def test_mcp_tools_through_the_sdk_client(server):
    from mcp import Client

    async def run():
        # stateful MCP sessions (initialize handshake): one environment per session
        async with Client(server.url + "/mcp", mode="legacy") as a, Client(server.url + "/mcp", mode="legacy") as b:
            names = sorted(t.name for t in (await a.list_tools()).tools)
            found = (await a.call_tool("web_search", {"query": "Titans"})).content[0].text
            page_url = found.splitlines()[0].split(" ", 1)[1]
            page = (await a.call_tool("web_extractor", {"url": page_url})).content[0].text
            await a.call_tool("dict_memory", {"operation": "add", "dict": {"seen": page_url}})
            mine = (await a.call_tool("dict_memory", {"operation": "retrieve_all"})).content[0].text
            theirs = (await b.call_tool("dict_memory", {"operation": "retrieve_all"})).content[0].text
        # the stateless protocol: state follows the session_id argument
        async with Client(server.url + "/mcp") as c:
            await c.call_tool("dict_memory", {"operation": "add", "dict": {"x": 1}, "session_id": "s-1"})
            kept = (await c.call_tool("dict_memory", {"operation": "retrieve", "key_list": ["x"], "session_id": "s-1"})).content[0].text
            other = (await c.call_tool("dict_memory", {"operation": "retrieve", "key_list": ["x"], "session_id": "s-2"})).content[0].text
        return names, found, page, mine, theirs, kept, other

    names, found, page, mine, theirs, kept, other = asyncio.run(run())
    assert names == ["dict_memory", "web_extractor", "web_search"]
    assert found.startswith("[1] https://") and page.startswith("# ")
    assert "seen" in mine and theirs == "Memory is empty."
    assert kept == '{"x": 1}' and other == "Key not found"


def test_idle_sessions_expire(warehouse):
    s = Server(warehouse, idle_timeout=1.0)
    try:
        c = httpx.Client(base_url=s.url)
        sid = c.post("/sessions", json={}).json()["session_id"]
        guard = time.monotonic() + 60  # waits for the reaper (an event), the guard only stops a hung server
        while c.get("/health").json()["sessions"] and time.monotonic() < guard:
            time.sleep(0.2)
        assert c.get("/health").json()["sessions"] == 0
        assert c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "x"}}).status_code == 404
        sid2 = c.post("/sessions", json={}).json()["session_id"]
        for q in ("Titans", "Ravens"):
            c.post(f"/sessions/{sid2}/step", json={"name": "web_search", "arguments": {"query": q}})
        c.delete(f"/sessions/{sid2}")
    finally:
        s.stop()
    from worldforge.trajectories.episodes import read_episode_tables, read_episodes

    got = read_episodes(warehouse).filter(pl.col("episode_id") == sid2)
    assert got.height == 1 and got["agent"][0] == "http"
    turns = read_episode_tables(warehouse)["turns"].filter(pl.col("trajectory_id") == sid2)
    assert turns.height == 2 and turns.sort("turn_idx")["observation"].str.starts_with("[1] https://").to_list() == [True, False]


@pytest.fixture(scope="module")
def unrecorded(warehouse):
    s = Server(warehouse, record=False)
    yield s
    s.stop()


@pytest.mark.load
def test_load_500_sessions_by_20_steps(unrecorded):
    import aiohttp

    server = unrecorded

    async def round_() -> list[int]:
        codes: list[int] = []
        async with aiohttp.ClientSession(server.url, connector=aiohttp.TCPConnector(limit=64), timeout=aiohttp.ClientTimeout(total=120)) as c:
            async def session(n: int) -> None:
                async with c.post("/sessions", json={"seed": n}) as r:
                    codes.append(r.status)
                    sid = (await r.json())["session_id"]
                for i in range(20):
                    async with c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": f"Titans {i}"}}) as r:
                        codes.append(r.status)
                        await r.read()
                async with c.delete(f"/sessions/{sid}") as r:
                    codes.append(r.status)

            await asyncio.gather(*(session(n) for n in range(500)))
        return codes

    open_before = httpx.get(server.url + "/health").json()["sessions"]
    first = asyncio.run(round_())
    after_first = server.rss_mb()
    second = asyncio.run(round_())
    after_second = server.rss_mb()
    assert len(first) == len(second) == 500 * 22
    assert not [c for c in first + second if c >= 500]
    assert httpx.get(server.url + "/health").json()["sessions"] == open_before
    assert after_second <= after_first + 25, (after_first, after_second)  # closed sessions are freed
