"""Durable episodes: a closed session is in the append-only episode log before the close is
answered, the store is filled from the log, a restart replays it, and neither a torn line, a
poison episode nor several writing processes lose anything. MCP sessions are closed and
recorded when the client deletes them, and expire when idle.
"""

import asyncio
import json
import multiprocessing
import os
import signal
import time

import httpx
import polars as pl
import pytest
from fastapi.testclient import TestClient

from tests.servers import SearchServer as Server
from worldforge.serving.episodes import EpisodeService
from worldforge.serving.search import create_app
from worldforge.simenv.env import Observation, SearchEnv
from worldforge.trajectories.episodes import DRAIN_ATTEMPTS, Episode, drain_episode_log, episode_from_line, episode_line, log_episodes, read_episodes
from worldforge.warehouse import Warehouse

WORLD = "esports_2031"


@pytest.fixture
def wh(warehouse, tmp_path):
    """A fresh warehouse holding a link to the built world (each test its own episode log and store)."""
    for p in warehouse.root.iterdir():
        if p.name.startswith(WORLD):
            (tmp_path / p.name).symlink_to(p)
    return Warehouse(tmp_path)


def _episode(eid: str, n: int = 2, text: str = "obs") -> Episode:
    steps = [({"name": "web_search", "arguments": {"query": f"q{i}"}}, Observation(f"{text} {i}", "web_search", revealed=[{"url": "u"}]))
             for i in range(n)]
    return Episode(episode_id=eid, world=WORLD, scenario=None, task_id=None, question="q", seed=3,
                   perturbations_json="{}", agent="test", steps=steps, finished=True)


def _log_lines(wh) -> list[str]:
    path = wh.episode_log
    return path.read_text().splitlines() if path.exists() else []


def test_episode_line_round_trips_every_field():
    ep = _episode("e-1", text="lone \ud800 and ü")
    line = episode_line(ep)
    assert line.endswith("\n") and line.isascii() and "\n" not in line[:-1]
    back = episode_from_line(line)
    assert back == ep
    for bad in ('{"episode_id": 1}', "[1, 2]", '{"episode_id": "x", "steps": [[{}, 3]]}', '{"episode_id": "x", "steps": [], "seed": 1, "bogus": 2}'):
        with pytest.raises(ValueError):
            episode_from_line(bad)


def test_a_torn_line_is_rejected_alone(wh):
    log_episodes(wh, [_episode("before")])
    with open(wh.episode_log, "a") as fh:
        fh.write(episode_line(_episode("torn"))[:57])  # a crash in the middle of an append
    log_episodes(wh, [_episode("after")])
    report = drain_episode_log(wh)
    assert (report.recorded, report.rejected) == (2, 1)
    assert sorted(read_episodes(wh)["episode_id"].to_list()) == ["after", "before"]
    rejected = (wh.root / "episodes.log.rejected.jsonl").read_text().splitlines()
    assert len(rejected) == 1 and "unreadable line" in json.loads(rejected[0])["reason"]
    assert not (wh.episode_log).exists()


def test_an_unfinished_last_line_waits_for_its_end(wh):
    line = episode_line(_episode("slow"))
    (wh.episode_log).write_text(episode_line(_episode("done")) + line[:40])
    assert drain_episode_log(wh).recorded == 1
    assert _log_lines(wh) == [line[:40]]  # not rejected yet: the writer may still be writing


def test_a_lone_poison_episode_is_set_aside_after_a_few_drains(wh, monkeypatch):
    import worldforge.trajectories.episodes.log as episode_log

    log_episodes(wh, [_episode("poison-only")])
    monkeypatch.setattr(episode_log, "record_episodes", lambda *a, **k: (_ for _ in ()).throw(ValueError("bad row")))
    for _ in range(DRAIN_ATTEMPTS - 1):
        with pytest.raises(ValueError):
            drain_episode_log(wh)
        assert len(_log_lines(wh)) == 1  # a store failure keeps the episode in the log
    assert drain_episode_log(wh).rejected == 1
    assert not _log_lines(wh) and "poison-only" in (wh.root / "episodes.log.rejected.jsonl").read_text()


def _writer(folder: str, worker: int, n: int) -> None:
    wh = Warehouse(folder)
    for i in range(n):
        log_episodes(wh, [_episode(f"w{worker}-{i}", n=1)])
        if i % 5 == 0:
            drain_episode_log(wh)


def test_processes_appending_and_draining_together_lose_nothing(wh):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(wh), w, 15)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    drain_episode_log(wh)
    got = read_episodes(wh)["episode_id"].to_list()
    assert len(got) == len(set(got)) == 45 and not _log_lines(wh)


def _wait(done, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.005)


def _group_write_held(path, thread):
    """Start ``thread``, whose log write the test holds, and wait until it is under way; returns the path's group log."""
    import worldforge.trajectories.episodes.log as episode_log

    thread.start()
    _wait(lambda: path in episode_log._group_logs and episode_log._group_logs[path]._writing, "the first write")
    return episode_log._group_logs[path]


def _queued(log, threads: list) -> None:
    """Start ``threads`` and wait until each has queued its lines for ``log``'s next group commit."""
    for t in threads:
        t.start()
    _wait(lambda: len(log._open.data) == len(threads), f"{len(threads)} queued lines")


def test_threads_logging_together_share_one_write_and_each_returns_once_its_episode_is_durable(wh, monkeypatch):
    import threading

    import worldforge.trajectories.episodes.log as episode_log

    real, writes, first_held = episode_log._append_durably, [], threading.Event()

    def append(path, data):
        if not writes:
            first_held.wait(60)  # the first write is under way while the other threads arrive
        real(path, data)
        writes.append(data)

    monkeypatch.setattr(episode_log, "_append_durably", append)
    returned_before_durable = []

    def close(i: int) -> None:
        log_episodes(wh, [_episode(f"t{i}")])
        if not any(f'"t{i}"'.encode() in w for w in writes):
            returned_before_durable.append(i)

    first = threading.Thread(target=close, args=(0,))
    rest = [threading.Thread(target=close, args=(i,)) for i in range(1, 24)]
    _queued(_group_write_held(wh.episode_log, first), rest)
    first_held.set()
    for t in [first, *rest]:
        t.join(60)
    assert len(writes) == 2 and not returned_before_durable  # 24 closes: the first write, then one for the 23 that waited
    assert sorted(json.loads(line)["episode_id"] for line in _log_lines(wh)) == sorted(f"t{i}" for i in range(24))


def test_a_failed_group_write_fails_every_caller_in_it_and_the_next_write_goes_through(wh, monkeypatch):
    import threading

    import worldforge.trajectories.episodes.log as episode_log

    real, held, calls = episode_log._append_durably, threading.Event(), []

    def append(path, data):
        calls.append(data)
        if len(calls) == 1:
            held.wait(60)
            real(path, data)
        elif len(calls) == 2:
            raise OSError(28, "No space left on device")
        else:
            real(path, data)

    monkeypatch.setattr(episode_log, "_append_durably", append)
    errors: dict[str, str] = {}

    def close(eid: str) -> None:
        try:
            log_episodes(wh, [_episode(eid)])
        except OSError as e:
            errors[eid] = str(e)

    first = threading.Thread(target=close, args=("ok-first",))
    failing = [threading.Thread(target=close, args=(f"lost-{i}",)) for i in range(3)]
    _queued(_group_write_held(wh.episode_log, first), failing)
    held.set()
    for t in [first, *failing]:
        t.join(60)
    assert sorted(errors) == ["lost-0", "lost-1", "lost-2"] and all("No space left on device" in m for m in errors.values())
    log_episodes(wh, [_episode("ok-after")])  # the log is not stuck behind the failed write
    assert [json.loads(line)["episode_id"] for line in _log_lines(wh)] == ["ok-first", "ok-after"]


def test_expired_sessions_are_logged_when_they_expire(wh):
    sessions = EpisodeService(wh, agent="http", idle_timeout=0.05, max_sessions=10)
    env = SearchEnv(WORLD, warehouse=wh, session_id="idle-1")
    env.step({"name": "web_search", "arguments": {"query": "Titans"}})
    sessions.add(env)
    sessions.add(SearchEnv(WORLD, warehouse=wh, session_id="no-steps"))
    time.sleep(0.2)
    assert sessions.reap() == 2 and len(sessions) == 0
    assert [json.loads(line)["episode_id"] for line in _log_lines(wh)] == ["idle-1"]  # a session without steps is no episode


def test_a_session_with_a_step_in_flight_never_expires(wh):
    sessions = EpisodeService(wh, agent="http", idle_timeout=0.05, max_sessions=10)
    sessions.add(SearchEnv(WORLD, warehouse=wh, session_id="busy"))
    step_lock = sessions.registry.get("busy").lock
    with step_lock:  # a step slower than the idle timeout
        time.sleep(0.2)
        assert sessions.reap() == 0 and len(sessions) == 1
    time.sleep(0.1)
    assert sessions.reap() == 1 and len(sessions) == 0


def test_a_restart_replays_the_log_and_shutdown_records_open_sessions(wh):
    log_episodes(wh, [_episode("left-by-a-crash")])
    app = create_app(WORLD, wh, mcp=False)
    with TestClient(app) as c:
        assert read_episodes(wh)["episode_id"].to_list() == ["left-by-a-crash"]  # replayed at start-up
        sid = c.post("/sessions", json={}).json()["session_id"]
        assert c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}}).status_code == 200
    # the server stopped with the session still open: it was closed and recorded
    got = read_episodes(wh)
    assert sorted(got["episode_id"].to_list()) == sorted(["left-by-a-crash", sid])
    assert got.filter(pl.col("episode_id") == sid)["agent"].to_list() == ["http"]


def test_a_close_the_log_cannot_take_is_503_and_retried(wh, monkeypatch):
    import worldforge.trajectories.episodes.log as episode_log

    app = create_app(WORLD, wh, mcp=False)
    real = episode_log._append_durably
    with TestClient(app) as c:
        sid = c.post("/sessions", json={}).json()["session_id"]
        c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}})
        monkeypatch.setattr(episode_log, "_append_durably", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
        r = c.delete(f"/sessions/{sid}")
        assert r.status_code == 503 and "kept and retried" in r.json()["error"]
        assert [e.session_id for e in app.state.sessions.finished] == [sid]
        monkeypatch.setattr(episode_log, "_append_durably", real)
        assert app.state.sessions.flush() == 1
    assert read_episodes(wh)["episode_id"].to_list() == [sid]


def _failing_log(monkeypatch):
    """Make the episode log refuse every write (ENOSPC); returns a function that makes it take them again."""
    import errno

    import worldforge.serving.search as server
    import worldforge.trajectories.episodes.log as episode_log

    real = episode_log._append_durably
    monkeypatch.setattr(server, "FLUSH_INTERVAL_S", 3600.0)  # no background flush: the retried close is what logs the episode
    monkeypatch.setattr(episode_log, "_append_durably", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    return lambda: monkeypatch.setattr(episode_log, "_append_durably", real)


def test_a_retried_close_is_503_until_its_episode_is_logged(wh, monkeypatch):
    """A close answered 503 took the session out of the registry: a retried ``DELETE`` must not
    find "no session" and pass (404 here, a success for MCP) while the episode is only in memory;
    it logs the kept episode again and is a success only once the episode is in the log."""
    app = create_app(WORLD, wh, mcp=False)
    with TestClient(app) as c:
        sid = c.post("/sessions", json={}).json()["session_id"]
        c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}})
        recover = _failing_log(monkeypatch)
        assert c.delete(f"/sessions/{sid}").status_code == 503
        r = c.delete(f"/sessions/{sid}")  # the retry the 503 invites, while the log still fails
        assert r.status_code == 503 and "kept and retried" in r.json()["error"]
        batch = c.post("/batch", json={"calls": [{"op": "close", "session_id": sid}]}).json()["results"]
        assert [x["status"] for x in batch] == [503]
        assert [e.session_id for e in app.state.sessions.finished] == [sid]  # kept once, not once per try
        recover()
        assert c.delete(f"/sessions/{sid}").status_code == 204
        assert not app.state.sessions.finished and not app.state.sessions.unlogged
        assert c.delete(f"/sessions/{sid}").status_code == 404  # logged: now there is no such session
        assert [json.loads(line)["episode_id"] for line in _log_lines(wh)] == [sid]
        assert app.state.sessions.flush() == 1
    assert read_episodes(wh)["episode_id"].to_list() == [sid]


def test_a_retried_mcp_session_end_is_503_until_its_episode_is_logged(wh, monkeypatch):
    """The MCP session end: the first ``DELETE`` is 503, so is the retry while the log fails (it
    used to find no session and reach the transport: 200 for an episode only in memory); once the
    log takes the episode the ``DELETE`` ends the session, and the store holds the episode once."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    app = create_app(WORLD, wh)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:  # the transport checks the Host header (a port)
        init = c.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
        assert init.status_code == 200
        headers["mcp-session-id"] = key = init.headers["mcp-session-id"]
        c.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = c.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                     "params": {"name": "web_search", "arguments": {"query": "Titans"}}})
        assert call.status_code == 200 and "[1] " in call.text
        mcp_sessions = app.state.mcp_sessions
        assert len(mcp_sessions) == 1
        recover = _failing_log(monkeypatch)
        assert c.delete("/mcp", headers=headers).status_code == 503
        r = c.delete("/mcp", headers=headers)
        assert r.status_code == 503 and "kept and retried" in r.json()["error"]
        assert len(mcp_sessions.finished) == 1 and list(mcp_sessions.unlogged) == [key]
        recover()
        assert c.delete("/mcp", headers=headers).status_code == 200  # logged, then the transport ends the session
        assert not mcp_sessions.finished and not mcp_sessions.unlogged
        assert len(_log_lines(wh)) == 1
        assert mcp_sessions.flush() == 1
    got = read_episodes(wh)
    assert got.height == 1 and got["agent"].to_list() == ["mcp"]


def test_an_acknowledged_close_survives_kill_9(wh):
    s = Server(wh)
    try:
        c = httpx.Client(base_url=s.url)
        sids = []
        for _ in range(3):
            sid = c.post("/sessions", json={}).json()["session_id"]
            c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Ravens"}})
            assert c.delete(f"/sessions/{sid}").status_code == 204
            sids.append(sid)
        os.killpg(s.proc.pid, signal.SIGKILL)  # no shutdown hook runs
        s.proc.wait(10)
    finally:
        s.stop()
    assert sorted(read_episodes(wh)["episode_id"].to_list()) == sorted(sids)


def test_mcp_sessions_are_recorded_on_delete_and_expire_when_idle(wh):
    from mcp import Client

    s = Server(wh, idle_timeout=2.0)

    async def run() -> None:
        for i in range(4):
            async with Client(s.url + "/mcp", mode="legacy") as a:
                await a.call_tool("web_search", {"query": f"Titans {i}"})
                await a.call_tool("dict_memory", {"operation": "add", "dict": {"k": i}})
        async with Client(s.url + "/mcp") as c:  # the stateless protocol: no DELETE, the session idles out
            await c.call_tool("web_search", {"query": "Ravens", "session_id": "stateless-1"})

    try:
        asyncio.run(run())
        health = httpx.get(s.url + "/health").json()
        assert health["mcp_sessions"] == 1  # the four deleted sessions are closed; the stateless one is open
        deadline = time.monotonic() + 15
        while httpx.get(s.url + "/health").json()["mcp_sessions"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert httpx.get(s.url + "/health").json()["mcp_sessions"] == 0
    finally:
        s.stop()
    got = read_episodes(wh)
    assert got.height == 5 and set(got["agent"]) == {"mcp"}
    assert sorted(got["episode_id"].str.len_chars().to_list()) == [32] * 5


def test_a_long_log_is_drained_in_bounded_batches(wh, monkeypatch):
    import worldforge.trajectories.episodes.log as episode_log

    batches: list[int] = []
    real = episode_log.record_episodes
    monkeypatch.setattr(episode_log, "DRAIN_BATCH_BYTES", 2_000)
    monkeypatch.setattr(episode_log, "record_episodes", lambda w, eps: (batches.append(len(eps)), real(w, eps))[1])
    log_episodes(wh, [_episode(f"b{i}", n=2) for i in range(12)] + [_episode("long", n=40, text="x" * 100)])
    assert drain_episode_log(wh).recorded == 13
    assert len(batches) > 3 and max(batches) <= 4  # a line is about 600 bytes; the long one (> 2,000) alone
    assert read_episodes(wh).height == 13 and not _log_lines(wh)


def test_a_drain_cuts_the_log_once_and_keeps_what_is_appended_meanwhile(wh, monkeypatch):
    """Issue 33: each batch used to rewrite the rest of the log (quadratic in its length: 80 s and
    twice the log in memory for 200 MiB of 2 MiB episodes); now the recorded bytes are cut once,
    streamed, and an episode appended while the drain runs stays for the next one."""
    import worldforge.trajectories.episodes.log as episode_log

    cuts: list[int] = []
    real_cut, real_record = episode_log._cut, episode_log.record_episodes
    monkeypatch.setattr(episode_log, "DRAIN_BATCH_BYTES", 2_000)
    monkeypatch.setattr(episode_log, "_cut", lambda p, n: (cuts.append(n), real_cut(p, n))[1])

    def record_and_append(w, eps):
        if eps[0].episode_id == "c0":  # a session closes while the first batch is recorded
            log_episodes(w, [_episode("late")])
        return real_record(w, eps)
    monkeypatch.setattr(episode_log, "record_episodes", record_and_append)
    log_episodes(wh, [_episode(f"c{i}") for i in range(12)])
    assert drain_episode_log(wh).recorded == 13  # "late" was appended behind the batches and read in the same drain
    assert len(cuts) == 1 and not _log_lines(wh)
    assert sorted(read_episodes(wh)["episode_id"]) == sorted([f"c{i}" for i in range(12)] + ["late"])


def test_the_store_writer_hands_freed_memory_back():
    """Issue 33: DuckDB's allocator keeps what a write freed unless its background threads purge it."""
    from worldforge.warehouse.duck import _writer_cursor

    assert _writer_cursor().execute("SELECT current_setting('allocator_background_threads')").fetchone()[0] is True


def test_a_full_episode_log_keeps_reads_refuses_closes_with_the_path_and_recovers(wh, monkeypatch):
    """Round 4: while the episode log cannot grow (ENOSPC) searches and extracts are answered, a close
    is 503 with one line naming the log's path and the lack of space, ``/health`` says ``full``;
    once space comes back the kept episode is logged and recorded without a restart."""
    import errno

    import worldforge.trajectories.episodes.log as episode_log

    real = episode_log._append_durably
    app = create_app(WORLD, wh, mcp=False)
    with TestClient(app) as c:
        sid = c.post("/sessions", json={}).json()["session_id"]
        c.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}})
        monkeypatch.setattr(episode_log, "_append_durably", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
        r = c.delete(f"/sessions/{sid}")
        message = r.json()["error"]
        assert r.status_code == 503 and str(wh.episode_log) in message and "No space left on device" in message
        assert "\n" not in message
        health = c.get("/health").json()
        assert health["episode_log"] == "full" and health["status"] == "degraded" and health["episodes_waiting"] == 1
        assert str(wh.episode_log) in health["episode_log_error"]
        other = c.post("/sessions", json={}).json()["session_id"]  # reads go on
        step = c.post(f"/sessions/{other}/step", json={"name": "web_search", "arguments": {"query": "Ravens"}})
        assert step.status_code == 200 and step.json()["observation"].startswith("[1] ")
        url = step.json()["revealed"][0]["url"] if step.json()["revealed"] else None
        if url:
            assert c.post(f"/sessions/{other}/step", json={"name": "web_extractor", "arguments": {"url": url}}).status_code == 200
        monkeypatch.setattr(episode_log, "_append_durably", real)  # space comes back
        deadline = time.monotonic() + 30
        while c.get("/health").json()["episode_log"] != "ok" and time.monotonic() < deadline:
            time.sleep(0.2)
        health = c.get("/health").json()
        assert (health["episode_log"], health["status"], health["episodes_waiting"]) == ("ok", "ok", 0)
        assert "episode_log_error" not in health
    assert sid in read_episodes(wh)["episode_id"].to_list()


def test_a_full_disk_leaves_no_half_written_line(wh, monkeypatch):
    """A write that ENOSPC cut short is taken back: the log holds whole lines only."""
    import errno

    import worldforge.trajectories.episodes.log as episode_log

    log_episodes(wh, [_episode("before")])
    size = (wh.episode_log).stat().st_size
    real_write = os.write

    def short_write(fd, data):
        if len(data) > 100:
            real_write(fd, bytes(data[:100]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(episode_log.os, "write", short_write)
    with pytest.raises(OSError, match="No space left"):
        log_episodes(wh, [_episode("cut", n=5)])
    monkeypatch.setattr(episode_log.os, "write", real_write)
    assert (wh.episode_log).stat().st_size == size
    assert [json.loads(line)["episode_id"] for line in _log_lines(wh)] == ["before"]


def test_an_answered_mcp_session_end_survives_kill_9(wh):
    """Round 4: the MCP session's ``DELETE`` is answered only once its episode is in the fsync-ed log
    (it used to be closed after the answer: a kill -9 in that window lost it). The window is short:
    on 4bc33ca this test passed twice of two, so it guards the order, it does not prove the race."""
    from mcp import Client

    s = Server(wh)

    async def run() -> None:
        for i in range(3):
            async with Client(s.url + "/mcp", mode="legacy") as a:
                await a.call_tool("dict_memory", {"operation": "add", "dict": {"k": "v" * 200_000}})
                await a.call_tool("web_search", {"query": f"Titans {i}"})
        os.killpg(s.proc.pid, signal.SIGKILL)  # at once after the last DELETE was answered: no shutdown hook runs

    try:
        asyncio.run(run())
        s.proc.wait(10)
    finally:
        s.stop()
    got = read_episodes(wh)  # the restart's replay of the log
    assert got.height == 3 and set(got["agent"]) == {"mcp"} and got["episode_id"].n_unique() == 3
