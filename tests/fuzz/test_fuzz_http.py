"""Fuzzing the simulated search server's HTTP API with random bodies, tool calls, paths and headers.

The app runs in-process (FastAPI's TestClient, lifespan included, server exceptions turned into
responses) over a real world with tasks, as in tests/simenv/test_server_hostile.py. Promises:
no request gets a 5xx; every 4xx has a JSON body ``{"error": "<message>"}``; a step answers 200
with an observation (a malformed tool call is an error observation); each request is answered
within a bounded time.
"""

from __future__ import annotations

import json
import string

import pytest
from fastapi.testclient import TestClient
from hypothesis import event, given
from hypothesis import strategies as st

from tests.conftest_worlds import built_world
from tests.fuzz.budget import bounded, fuzz
from tests.fuzz.strategies import json_values
from worldforge.serving.episodes import scenario_names
from worldforge.serving.search import MAX_JSON_DEPTH, create_app
from worldforge.tasks.store import build_tasks, read_tasks
from worldforge.warehouse import Warehouse

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")

WORLD = "esports_2031"
SECONDS = 5.0
"""The longest any one request may take."""


@pytest.fixture(scope="module")
def server(specs, tmp_path_factory):
    """``(client, known names)``: the app over a built world with tasks; names are worlds, scenarios and task ids that exist."""
    wh = Warehouse(tmp_path_factory.mktemp("wh_fuzz"))
    build_tasks(built_world(specs[WORLD], wh))
    names = {"world": [WORLD], "scenario": sorted(scenario_names(wh, WORLD)),
             "task_id": [t.instance_id for t in read_tasks(wh.world(WORLD), all_scenarios=True)][:5]}
    with TestClient(create_app(WORLD, wh, mcp=False, record=False), raise_server_exceptions=False) as client:
        yield client, names


class Live:
    """One open session, reopened when a fuzzed request closed it."""

    sid: str | None = None

    @classmethod
    def get(cls, client: TestClient) -> str:
        """The session id (a new session when there is none)."""
        if cls.sid is None or client.post(f"/sessions/{cls.sid}/reset").status_code != 200:
            r = client.post("/sessions", content=b"")
            assert r.status_code == 201, r.text
            cls.sid = r.json()["session_id"]
        return cls.sid


def _answered(r, *ok: int) -> dict | None:
    """Check a response: a status in ``ok`` or a 4xx with a JSON error, never a 5xx; the JSON body of an ``ok`` answer, else None."""
    assert r.status_code < 500, (r.status_code, r.text[:500])
    event(f"status {r.status_code}")
    if r.status_code in ok:
        return r.json() if r.status_code != 204 and r.request.method != "HEAD" else None
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:500])
    if r.request.method == "HEAD":
        return None
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"], body
    assert "Traceback" not in body["error"]
    return None


def _session_field(field: str) -> st.SearchStrategy:
    known = {"world": [WORLD, "../esports_2031", "/etc/passwd", "episodes", "nowhere", ""], "scenario": ["../../etc", "nope", ""],
             "task_id": ["missing", ""], "seed": [0, 7, "7", " -3 ", 2**63 - 1, 2**63, "1" * 20, 1.5, True],
             "instruction": ["", "inject intermittent API errors", "shuffle the ranking and cut the snippets", "api " * 600, "x" * 2001]}
    perturbation = st.fixed_dictionaries(
        {"kind": st.sampled_from(["transient_error", "pagination", "partial_batch", "snippet_withhold", "stale_ranking", "empty_results", "nope"])},
        optional={"rate": st.floats(-1, 2) | st.sampled_from([0, 1, None, "x"]), "page_size": st.integers(-2, 12),
                  "schedule": st.lists(st.fixed_dictionaries({"until_episode": st.none() | st.integers(-5, 50), "rate": st.floats(0, 1)}), max_size=3),
                  "error_kinds": st.lists(st.sampled_from(["rate_limit", "timeout", "http_5xx", "other"]), max_size=3)},
    )
    if field == "perturbations":
        return st.lists(perturbation | json_values, max_size=3) | json_values
    return st.sampled_from(known[field]) | json_values


session_bodies = st.dictionaries(st.sampled_from(["world", "scenario", "task_id", "seed", "instruction", "perturbations"]), st.just(None), max_size=6).flatmap(
    lambda keys: st.fixed_dictionaries({k: _session_field(k) for k in keys}, optional={"extra": json_values}))


@fuzz(weight=1)
@given(session_bodies | json_values, st.data())
def test_session_bodies_open_a_session_or_are_refused(server, body, data):
    client, names = server
    for field in ("scenario", "task_id"):  # sometimes a name that exists
        if isinstance(body, dict) and field in body and names[field] and data.draw(st.booleans()):
            body[field] = data.draw(st.sampled_from(names[field]))
    with bounded("http", SECONDS):
        r = client.post("/sessions", content=json.dumps(body).encode())
    opened = _answered(r, 201)
    if opened is not None:
        assert isinstance(opened["session_id"], str) and isinstance(opened["observation"], str)
        assert client.delete(f"/sessions/{opened['session_id']}").status_code == 204


tool_names = st.sampled_from(["web_search", "web_extractor", "dict_memory", "Web_Search", "", "eval"]) | st.text(max_size=10)
arguments = st.fixed_dictionaries({}, optional={
    "query": st.text(max_size=50) | json_values, "queries": st.lists(st.text(max_size=20), max_size=25) | json_values,
    "page": st.integers(-3, 10**6) | json_values, "url": st.sampled_from(["", "https://", "esports_2031/", "../../etc/passwd"]) | st.text(max_size=40),
    "operation": st.sampled_from(["add", "update", "retrieve", "retrieve_all", "remove", "remove_all", "nope"]) | json_values,
    "dict": st.dictionaries(st.text(max_size=8), json_values, max_size=4) | json_values, "key_list": st.lists(st.text(max_size=8), max_size=4) | json_values,
}) | json_values
plausible_calls = st.one_of(
    st.fixed_dictionaries({"name": st.just("web_search"), "arguments": st.fixed_dictionaries(
        {}, optional={"query": st.text(max_size=60), "queries": st.lists(st.text(max_size=30), max_size=22), "page": st.integers(-2, 30)})}),
    st.fixed_dictionaries({"name": st.just("web_extractor"), "arguments": st.fixed_dictionaries(
        {"url": st.sampled_from(["https://esports_2031.example/", "https://", "../../etc/passwd"]) | st.text(max_size=60)})}),
    st.fixed_dictionaries({"name": st.just("dict_memory"), "arguments": st.fixed_dictionaries(
        {"operation": st.sampled_from(["add", "update", "retrieve", "retrieve_all", "remove", "remove_all"])},
        optional={"dict": st.dictionaries(st.text(max_size=8), json_values, max_size=4), "key_list": st.lists(st.text(max_size=8), max_size=4)})}),
)
tool_calls = st.one_of(
    plausible_calls,
    st.fixed_dictionaries({"name": tool_names, "arguments": arguments}),
    st.fixed_dictionaries({"name": tool_names, "arguments": arguments.map(json.dumps) | st.text(max_size=30)}),
    st.fixed_dictionaries({"id": st.text(max_size=5), "type": st.just("function"),
                           "function": st.fixed_dictionaries({"name": tool_names, "arguments": arguments.map(json.dumps) | json_values})}),
    json_values,
).flatmap(lambda call: st.sampled_from([call, {"tool_call": call}]))


@fuzz(weight=1.5)
@given(tool_calls)
def test_tool_calls_are_observations(server, call):
    client, _ = server
    sid = Live.get(client)
    with bounded("http", SECONDS):
        r = client.post(f"/sessions/{sid}/step", content=json.dumps(call).encode())
    answer = _answered(r, 200)
    if answer is not None:
        assert isinstance(answer["observation"], str) and isinstance(answer["error"], bool) and isinstance(answer["turn"], int)
        event("error observation" if answer["error"] else "observation")


raw_bodies = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.integers(1, 3 * MAX_JSON_DEPTH).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 3 * MAX_JSON_DEPTH).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.sampled_from([b"NaN", b"Infinity", b'{"seed": -Infinity}', b"1" * 5000, b'"\\ud800"', b"\xef\xbb\xbf{}", b"{" * 10, b'{"name": "web_search", "arguments": {']),
)


@fuzz(weight=1)
@given(st.sampled_from(["/sessions", "step", "reset"]), raw_bodies)
def test_raw_bodies_are_answered(server, where, raw):
    client, _ = server
    path = where if where.startswith("/") else f"/sessions/{Live.get(client)}/{where}"
    with bounded("http", SECONDS):
        r = client.post(path, content=raw)
    answer = _answered(r, 200, 201)
    if answer is not None and r.status_code == 201:
        client.delete(f"/sessions/{answer['session_id']}")


segments = st.sampled_from(["", "health", "tools", "sessions", "step", "reset", "..", "%2e%2e", "mcp", "%00", "%ff", "docs", "openapi.json", "LIVE"]) | st.text(
    alphabet=string.ascii_letters + string.digits + "-._~%!$&'()*+,;=:@", max_size=12)
routes = st.sampled_from([["health"], ["tools"], ["sessions"], ["sessions", "LIVE", "step"], ["sessions", "LIVE", "reset"], ["sessions", "LIVE"],
                          ["sessions", "nope", "step"], ["sessions", "LIVE", "step", "x"]])
header_values = st.text(alphabet=string.printable.strip() + " ", max_size=40)
headers = st.dictionaries(
    st.sampled_from(["content-type", "accept", "accept-encoding", "mcp-session-id", "x-forwarded-for", "origin", "transfer-encoding", "host"])
    | st.text(alphabet=string.ascii_lowercase + "-", min_size=1, max_size=12),
    header_values | st.sampled_from(["application/json", "text/plain", "gzip", "*/*", "chunked"]), max_size=4)


@fuzz(weight=1)
@given(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]), routes | st.lists(segments, max_size=4),
       st.text(alphabet=string.ascii_letters + "=&%+", max_size=20), headers, st.none() | raw_bodies)
def test_any_request_is_answered(server, method, parts, query, extra_headers, raw):
    client, _ = server
    live = Live.get(client)
    path = "/" + "/".join(live if p == "LIVE" else p for p in parts).lstrip("/") + (f"?{query}" if query else "")  # "//x" would be a host
    with bounded("http", SECONDS):
        r = client.request(method, path, content=raw, headers=extra_headers)
    _answered(r, 200, 201, 204)
    if r.status_code == 201:
        client.delete(f"/sessions/{r.json()['session_id']}")

