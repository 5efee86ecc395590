"""Hostile input to the search server: every bad request is a 4xx with a JSON error, and the
server stays responsive and keeps recording episodes.

Most tests drive the app in-process (FastAPI's TestClient, lifespan included); the event-loop
test starts a real server on 127.0.0.1 (the fixture of test_server.py, stopped by PID).
"""

import json
import threading
import time

import httpx
import polars as pl
import pytest
from fastapi.testclient import TestClient

from tests.servers import SearchServer as Server
from worldforge.serving.episodes import EpisodeService
from worldforge.serving.search import MAX_BODY_BYTES, MAX_JSON_DEPTH, create_app
from worldforge.simenv.env import SearchEnv
from worldforge.simenv.perturbations import MAX_INSTRUCTION_CHARS, from_instruction
from worldforge.trajectories.episodes import Episode, read_episode_tables, read_episodes, record_episodes
from worldforge.trajectories.model import storable
from worldforge.warehouse import Warehouse

WORLD = "esports_2031"


@pytest.fixture(scope="module")
def client(warehouse):
    with TestClient(create_app(WORLD, warehouse, mcp=False, record=False), raise_server_exceptions=False) as c:
        yield c


def _json_error(r: httpx.Response, *codes: int) -> str:
    assert r.status_code in codes, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert isinstance(body.get("error"), str) and body["error"] and "Traceback" not in body["error"]
    return body["error"]


def _session(client) -> str:
    r = client.post("/sessions", json={})
    assert r.status_code == 201
    return r.json()["session_id"]


# -- 1. instructions: bounded, linear, off the event loop ------------------------------------


def test_instruction_matching_is_linear():
    # before: ``\b(api|...)\b.*\berrors?\b`` backtracked quadratically over "api api api ..."
    def took(n: int) -> float:  # the best of 5, so a busy moment of the machine does not count
        text = "api " * n + "and shuffle"
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            assert [p.kind for p in from_instruction(text).perturbations] == ["stale_ranking"]
            best = min(best, time.perf_counter() - start)
        return best

    # 4x the input: about 4x the time when linear, 16x when quadratic (a ratio in one run, not a wall-clock budget)
    small, large = took(MAX_INSTRUCTION_CHARS // 16 - 10), took(MAX_INSTRUCTION_CHARS // 4 - 10)
    assert large < 10 * max(small, 1e-5), (small, large)
    with pytest.raises(Exception, match="at most 2000"):
        from_instruction("api " * 250_000)


def test_instruction_vocabulary_keeps_its_meaning():
    kinds = lambda text: [p.kind for p in from_instruction(text).perturbations]  # noqa: E731
    assert kinds("inject intermittent API errors") == ["transient_error"]
    assert kinds("errors that are transient") == ["transient_error"]
    assert kinds("cut the snippets") == ["snippet_withhold"]
    assert kinds("snippets truncated, and timeouts") == ["transient_error", "snippet_withhold"]
    assert [p.rate for p in from_instruction("server errors 30 % of the time").perturbations] == [0.3]
    with pytest.raises(Exception, match="no perturbation"):
        from_instruction("api\nerrors")  # ``.`` never crossed a line: still not a phrase


def test_a_megabyte_instruction_is_refused_at_once(client):
    start = time.perf_counter()
    r = client.post("/sessions", json={"instruction": "api " * 250_000})
    assert time.perf_counter() - start < 5
    assert str(MAX_INSTRUCTION_CHARS) in _json_error(r, 422)
    assert "string" in _json_error(client.post("/sessions", json={"instruction": ["api errors"]}), 422)


def test_event_loop_answers_while_sessions_are_created(warehouse):
    server = Server(warehouse, record=False)
    try:
        worst = "api " * (MAX_INSTRUCTION_CHARS // 4 - 10) + " shuffle"
        codes: list[int] = []

        def hammer() -> None:
            with httpx.Client(base_url=server.url, timeout=60) as c:
                for _ in range(5):
                    codes.append(c.post("/sessions", json={"instruction": "api " * 250_000}).status_code)
                    codes.append(c.post("/sessions", json={"instruction": worst}).status_code)

        t = threading.Thread(target=hammer)
        t.start()
        slowest = 0.0
        while t.is_alive():
            start = time.perf_counter()
            assert httpx.get(server.url + "/health", timeout=5).status_code == 200
            slowest = max(slowest, time.perf_counter() - start)
        t.join()
        assert codes == [422, 201] * 5
        assert slowest < 2.0
    finally:
        server.stop()
    assert server.proc.poll() is not None


# -- 2. request bodies are capped ------------------------------------------------------------


def test_oversized_body_is_413(client):
    sid = _session(client)
    big = b'{"instruction": "' + b"x" * (MAX_BODY_BYTES + 10) + b'"}'
    assert "bytes" in _json_error(client.post("/sessions", content=big), 413)
    assert "bytes" in _json_error(client.post(f"/sessions/{sid}/step", content=big), 413)

    def chunks():  # no Content-Length: counted while read, refused past the cap
        for _ in range(MAX_BODY_BYTES // 65536 + 4):
            yield b" " * 65536

    _json_error(client.post(f"/sessions/{sid}/step", content=chunks()), 413)
    assert client.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}}).status_code == 200


# -- 3. malformed requests are 4xx with a JSON error, never 500 ------------------------------


@pytest.mark.parametrize("body", [
    {"seed": [1]}, {"seed": {"a": 1}}, {"seed": "abc"}, {"seed": 1.5}, {"seed": 2**70}, {"seed": True}, {"seed": "--5"}, {"seed": "²"},
    {"world": 5}, {"scenario": ["x"]}, {"task_id": 3}, {"perturbations": "all"}, {"perturbations": [{"kind": "nope"}]},
])
def test_wrong_types_are_422(client, body):
    _json_error(client.post("/sessions", json=body), 422)


def test_well_formed_bodies_still_work(client):
    for body in ({"seed": 7}, {"seed": "7"}, {"seed": -3, "perturbations": [{"kind": "stale_ranking", "rate": 0.5}]}, {"instruction": ""}):
        assert client.post("/sessions", json=body).status_code == 201, body
    assert client.post("/sessions", content=b"").status_code == 201
    assert client.put("/sessions").headers.get("allow") == "POST"


@pytest.mark.parametrize("raw", [b'{"seed": Infinity}', b'{"seed": NaN}', b'{"seed": 1' + b"0" * 5000 + b"}"])
def test_odd_numbers_are_4xx(client, raw):
    _json_error(client.post("/sessions", content=raw), 400, 422)


def test_deep_nesting_and_bad_utf8_are_400(client):
    sid = _session(client)
    deep = b"[" * 100_000 + b"]" * 100_000
    nested_args = json.dumps({"name": "dict_memory", "arguments": {"operation": "add", "dict": {"k": json.loads("[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5))}}})
    for path in ("/sessions", f"/sessions/{sid}/step"):
        assert "nested" in _json_error(client.post(path, content=deep), 400)
        assert "UTF-8" in _json_error(client.post(path, content=b'{"name": "\xff\xfe web_search"}'), 400)
    assert "nested" in _json_error(client.post(f"/sessions/{sid}/step", content=nested_args), 400)
    shallow = {"name": "dict_memory", "arguments": {"operation": "add", "dict": {"k": [[[1]]]}}}
    assert client.post(f"/sessions/{sid}/step", json=shallow).json()["error"] is False
    # a tool call that is not JSON stays an error observation, as before
    bad = client.post(f"/sessions/{sid}/step", content=b'{"name": "web_search", "arguments": {oops')
    assert bad.status_code == 200 and "not valid JSON" in bad.json()["observation"]


def test_unknown_routes_and_methods_are_json(client):
    _json_error(client.get("/nowhere"), 404)
    _json_error(client.put("/sessions"), 405)


def test_lone_surrogates_in_a_step_are_answered(client):
    sid = _session(client)
    raw = b'{"name": "dict_memory", "arguments": {"operation": "add", "dict": {"\\ud800": "x\\udfff"}}}'
    r = client.post(f"/sessions/{sid}/step", content=raw)
    assert r.status_code == 200 and not r.json()["error"]
    back = client.post(f"/sessions/{sid}/step", json={"name": "dict_memory", "arguments": {"operation": "retrieve_all"}})
    assert back.status_code == 200 and "ud800" in back.json()["observation"]


# -- 4. world and scenario names are checked before a session exists ------------------------


@pytest.mark.parametrize("body", [
    {"scenario": "../../etc"}, {"scenario": "nope"}, {"world": "../esports_2031"}, {"world": "/etc/passwd"},
    {"world": "nowhere"}, {"world": "episodes"}, {"task_id": "missing"},
])
def test_unknown_world_or_scenario_is_404(client, body):
    before = client.get("/health").json()["sessions"]
    _json_error(client.post("/sessions", json=body), 404)
    assert client.get("/health").json()["sessions"] == before


def test_a_real_scenario_is_accepted(client, warehouse):
    import duckdb

    con = duckdb.connect(str(warehouse.world(WORLD)), read_only=True)
    try:
        scenario = con.execute("SELECT min(scenario) FROM _corpus WHERE scenario IS NOT NULL").fetchone()[0]
    finally:
        con.close()
    assert scenario
    sid = client.post("/sessions", json={"world": WORLD, "scenario": scenario}).json()["session_id"]
    r = client.post(f"/sessions/{sid}/step", json={"name": "web_search", "arguments": {"query": "Titans"}})
    assert r.status_code == 200


# -- 5. episodes with lone surrogates are stored; the flusher never stops -------------------


def test_episode_text_is_storable(tmp_path, warehouse):
    env = SearchEnv(WORLD, warehouse=warehouse, session_id="surrogate-1")
    env.step({"name": "dict_memory", "arguments": {"operation": "add", "dict": {"\ud800": "x\udfff"}}})
    env.step({"name": "dict_memory", "arguments": {"operation": "retrieve_all"}})
    ep = Episode(episode_id=env.session_id, world=WORLD, scenario=None, task_id=None, question="q\udc80", seed=0,
                 perturbations_json="{}", agent="test", steps=list(env.history), finished=True)
    record_episodes(Warehouse(tmp_path), [ep])
    turns = read_episode_tables(Warehouse(tmp_path))["turns"].sort("turn_idx")
    assert "\\ud800" in turns["action"][0] and "\\udfff" in turns["observation"][1]
    assert storable("plain ü") == "plain ü" and storable("a\ud800b") == "a\\ud800b"


def test_flush_keeps_the_log_when_the_store_fails(tmp_path, warehouse, monkeypatch, caplog):
    import worldforge.trajectories.episodes.log as episode_log

    sessions = EpisodeService(Warehouse(tmp_path), agent="http", idle_timeout=600, max_sessions=10)
    env = SearchEnv(WORLD, warehouse=warehouse, session_id="kept-1")
    env.step({"name": "web_search", "arguments": {"query": "Titans"}})
    sessions.add(env)
    assert sessions.close(env.session_id)
    assert '"kept-1"' in (tmp_path / "episodes.log.jsonl").read_text()  # durable before the close returns
    real = episode_log.record_episodes

    def broken(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(episode_log, "record_episodes", broken)
    assert sessions.flush() == 0 and sessions.flush() == 0  # never raises: logged, the log kept
    assert '"kept-1"' in (tmp_path / "episodes.log.jsonl").read_text() and "disk full" in caplog.text
    monkeypatch.setattr(episode_log, "record_episodes", real)
    assert sessions.flush() == 1
    assert read_episodes(Warehouse(tmp_path))["episode_id"].to_list() == ["kept-1"]
    assert not (tmp_path / "episodes.log.jsonl").exists()


def test_a_poison_episode_does_not_block_the_others(tmp_path, warehouse, monkeypatch):
    import worldforge.trajectories.episodes.log as episode_log

    sessions = EpisodeService(Warehouse(tmp_path), agent="http", idle_timeout=600, max_sessions=10)
    for sid in ("good-1", "poison", "good-2"):
        env = SearchEnv(WORLD, warehouse=warehouse, session_id=sid)
        env.step({"name": "web_search", "arguments": {"query": "Titans"}})
        sessions.add(env)
        sessions.close(sid)
    real = episode_log.record_episodes

    def picky(wh, eps):
        if any(e.episode_id == "poison" for e in eps):
            raise ValueError("cannot store this one")
        return real(wh, eps)

    monkeypatch.setattr(episode_log, "record_episodes", picky)
    assert sessions.flush() == 2
    assert sorted(read_episodes(Warehouse(tmp_path))["episode_id"].to_list()) == ["good-1", "good-2"]
    rejected = [json.loads(line) for line in (tmp_path / "episodes.log.rejected.jsonl").read_text().splitlines()]
    assert [json.loads(r["line"])["episode_id"] for r in rejected] == ["poison"]  # set aside with its reason, not lost
    assert "cannot store this one" in rejected[0]["reason"]


def test_http_episode_with_lone_surrogate_is_recorded(warehouse, tmp_path):
    import shutil

    wh = tmp_path / "wh"
    wh.mkdir()
    shutil.copy(warehouse.world(WORLD), wh)
    app = create_app(WORLD, wh, mcp=False, record=True)
    with TestClient(app) as c:
        sids = []
        for payload in (b'{"name": "dict_memory", "arguments": {"operation": "add", "dict": {"k": "\\ud800"}}}',
                        b'{"name": "web_search", "arguments": {"query": "Titans"}}'):
            sid = _session(c)
            assert c.post(f"/sessions/{sid}/step", content=payload).status_code == 200
            assert c.delete(f"/sessions/{sid}").status_code == 204
            sids.append(sid)
            app.state.sessions.flush()
    got = read_episodes(Warehouse(wh))
    assert sorted(got["episode_id"].to_list()) == sorted(sids)
    obs = read_episode_tables(Warehouse(wh))["turns"].filter(pl.col("trajectory_id") == sids[0])["action"][0]
    assert "\\ud800" in obs
