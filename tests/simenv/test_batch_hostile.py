"""Hostile input to ``POST /batch`` of the search server, against a real server on 127.0.0.1.

Every result of a batch has an ``int`` status, a 4xx has an ``"error"`` string and nothing else,
nothing is ever a 5xx, a call is answered as its single endpoint answers the same input, a closed
session cannot be stepped, and the episode store holds exactly the sessions that were closed
after taking a step (``episode_id == session_id``), each with the steps that were answered.

Tests marked ``Regression`` were written against bugs this file found (each failed before its fix).
"""

import asyncio
import json
import os
import random
import shutil
import socket
import threading
import time

import httpx
import polars as pl
import pytest

from tests.servers import SearchServer
from worldforge.serving.http import MAX_BODY_BYTES, MAX_JSON_DEPTH
from worldforge.serving.search import MAX_BATCH_CALLS
from worldforge.tasks.store import build_tasks
from worldforge.trajectories.episodes import read_episode_tables, read_episodes
from worldforge.warehouse import Warehouse

WORLD = "esports_2031"
SEARCH = {"name": "web_search", "arguments": {"query": "Titans league"}}


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def task_id(warehouse):
    return build_tasks(warehouse.world(WORLD)).tasks[0].instance_id


# -- helpers ---------------------------------------------------------------------------------


def _op(call):
    return call.get("op") if isinstance(call, dict) else None


def _check(calls: list, results: list, allow: tuple[int, ...] = ()) -> list[dict]:
    """Each result is the documented shape for its call: an int status, never a 5xx (but ``allow``),
    an error as exactly ``{"status", "error": str}``, a success with its endpoint's fields."""
    assert isinstance(results, list) and len(results) == len(calls)
    for call, r in zip(calls, results):
        assert isinstance(r, dict) and type(r.get("status")) is int, r
        status = r["status"]
        assert status < 500 or status in allow, (call if len(str(call)) < 300 else str(call)[:300], r)
        if status >= 400:
            assert set(r) == {"status", "error"}, r
            assert isinstance(r["error"], str) and r["error"] and "Traceback" not in r["error"], r
            continue
        op = _op(call)
        if status == 201:
            assert op == "open" and isinstance(r["session_id"], str) and r["observation"].startswith("Session ") and "tools" not in r, r
        elif status == 204:
            assert op == "close" and r == {"status": 204}, r
        elif op == "submit":
            assert status == 200 and r["done"] is True and isinstance(r["reward"], (float, int, type(None))) and isinstance(r["info"], dict), r
        else:  # a step: an observation; its "error" is the tool's flag (a bool), not a protocol error
            assert op == "step" and status == 200, r
            assert isinstance(r["observation"], str) and type(r["error"]) is bool and type(r["turn"]) is int, r
            assert isinstance(r["perturbations"], list) and isinstance(r["revealed"], list), r
    return results


def _batch(c: httpx.Client, calls: list, allow: tuple[int, ...] = ()) -> list[dict]:
    """POST the calls as ASCII JSON (lone surrogates go as their ``\\uXXXX`` escapes), check the results."""
    r = c.post("/batch", content=json.dumps({"calls": calls}).encode("ascii"), headers={"content-type": "application/json"})
    assert r.status_code == 200, (r.status_code, r.text[:300])
    return _check(calls, r.json()["results"], allow)


def _json_error(r: httpx.Response, *codes: int) -> str:
    assert r.status_code in codes, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json")
    err = r.json()["error"]
    assert isinstance(err, str) and err and "Traceback" not in err
    return err


def _open(c: httpx.Client, n: int = 1, **fields) -> list[str]:
    return [r["session_id"] for r in _batch(c, [{"op": "open", **fields}] * n)]


def _open_count(c: httpx.Client) -> int:
    return c.get("/health").json()["sessions"]


def _turns(warehouse, sids) -> dict[str, int]:
    """Stored episodes among ``sids`` -> their number of turns (reading drains the episode log first)."""
    stored = set(read_episodes(warehouse).filter(pl.col("episode_id").is_in(list(sids)))["episode_id"].to_list())
    turns = read_episode_tables(warehouse)["turns"].filter(pl.col("trajectory_id").is_in(list(stored)))
    counts = dict(turns.group_by("trajectory_id").len().iter_rows())
    return {sid: counts.get(sid, 0) for sid in stored}


def _fresh_post(server, path: str, body) -> httpx.Response:
    """A POST on its own connection: after a 500, uvicorn closes the connection (the app raised after its reply),
    so a pooled connection would fail the next request of the shared client."""
    return httpx.post(server.url + path, content=json.dumps(body).encode("ascii"), headers={"content-type": "application/json"}, timeout=60)


def _nest(n: int):
    value: list = []
    for _ in range(n - 1):
        value = [value]
    return value


# -- 1. the body of a batch ------------------------------------------------------------------


@pytest.mark.parametrize("raw, codes", [
    (b"", (422,)), (b"{}", (422,)), (b"[]", (422,)), (b'"calls"', (422,)), (b"5", (422,)), (b"null", (422,)),
    (b'{"calls": null}', (422,)), (b'{"calls": {"op": "open"}}', (422,)), (b'{"calls": "open"}', (422,)), (b'{"calls": 3}', (422,)),
    (b'{"calls": [}', (400,)), (b'{"calls": [{"op": "open", "seed": NaN}]}', (400,)), (b'{"calls": [\xff]}', (400,)),
    (b"[" * 100_000 + b"]" * 100_000, (400,)), (b'{"calls": [{"op": "open", "seed": 1' + b"0" * 5000 + b"}]}", (400,)),
])
def test_malformed_bodies_are_4xx_and_run_nothing(client, raw, codes):
    before = _open_count(client)
    _json_error(client.post("/batch", content=raw), *codes)
    assert _open_count(client) == before


def test_empty_calls_is_an_empty_answer(client):
    r = client.post("/batch", json={"calls": [], "extra": {"ignored": True}})
    assert r.status_code == 200 and r.json() == {"results": []}


def test_oversized_body_is_413_before_anything_runs(client):
    sid = _open(client)[0]
    pad = "x" * (MAX_BODY_BYTES + 10)
    big = json.dumps({"calls": [{"op": "close", "session_id": sid}, {"op": "open", "instruction": pad}]}).encode()
    assert "bytes" in _json_error(client.post("/batch", content=big), 413)

    def chunks():  # no Content-Length: counted while it is read, refused past the cap
        yield json.dumps({"calls": [{"op": "close", "session_id": sid}, {"op": "open", "x": ""}]})[:-4].encode()
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536
        yield b'"}]}'

    _json_error(client.post("/batch", content=chunks()), 413)
    # the close in the refused bodies never ran: the session is still there
    assert [r["status"] for r in _batch(client, [{"op": "step", "session_id": sid, **SEARCH}, {"op": "close", "session_id": sid}])] == [200, 204]


def test_max_batch_calls_and_one_more(client):
    before = _open_count(client)
    too_many = [{"op": "open"}] * (MAX_BATCH_CALLS + 1)
    assert str(MAX_BATCH_CALLS) in _json_error(client.post("/batch", json={"calls": too_many}), 422)
    assert _open_count(client) == before  # refused whole: not one session was opened

    opened = _batch(client, [{"op": "open"}] * MAX_BATCH_CALLS)
    sids = [r["session_id"] for r in opened]
    assert {r["status"] for r in opened} == {201} and len(set(sids)) == MAX_BATCH_CALLS
    assert _open_count(client) == before + MAX_BATCH_CALLS
    closed = _batch(client, [{"op": "close", "session_id": s} for s in sids])
    assert {r["status"] for r in closed} == {204}
    assert _open_count(client) == before
    # the same session closed MAX_BATCH_CALLS times in one batch: once 204, then 404
    sid = _open(client)[0]
    again = _batch(client, [{"op": "close", "session_id": sid}] * MAX_BATCH_CALLS)
    assert [r["status"] for r in again] == [204] + [404] * (MAX_BATCH_CALLS - 1)


# -- 2. malformed calls: a 422 each, the batch goes on ---------------------------------------


BAD_CALLS = [
    1, 0, -1.5, True, None, "step", "", [], [{"op": "open"}], "\ud800",  # not objects
    {}, {"session_id": "x"}, {"op": None}, {"op": 5}, {"op": True}, {"op": ["open"]}, {"op": {"open": 1}},  # op missing / not a string
    {"op": "OPEN"}, {"op": " open"}, {"op": "reset"}, {"op": "delete"}, {"op": "\ud800"}, {"op": "open\x00"},  # unknown op
    {"op": "step", "name": "web_search"}, {"op": "step", "session_id": None}, {"op": "step", "session_id": 5},
    {"op": "submit", "session_id": ["a"], "answer": "x"}, {"op": "close", "session_id": {"id": "a"}}, {"op": "close", "session_id": True},
    {"op": "close", "session_id": 1.5}, {"op": "step", "session_id": _nest(5)},
]


def test_malformed_calls_are_422_and_the_batch_goes_on(client):
    sid = _open(client)[0]
    calls = [{"op": "step", "session_id": sid, **SEARCH}, *BAD_CALLS, {"op": "step", "session_id": sid, **SEARCH}, {"op": "close", "session_id": sid}]
    got = _batch(client, calls)
    assert [r["status"] for r in got] == [200] + [422] * len(BAD_CALLS) + [200, 204]
    assert (got[0]["turn"], got[-2]["turn"]) == (1, 2)  # a refused call is no turn of any session
    assert all("op" in r["error"] or "object" in r["error"] or "session_id" in r["error"] for r in got[1:-2])


@pytest.mark.parametrize("sid", ["nobody", "", " ", "\ud800", "\x00", "../sessions", "a" * 10_000])
def test_unknown_session_ids_are_404_for_every_op(client, sid):
    calls = [{"op": "step", "session_id": sid, **SEARCH}, {"op": "submit", "session_id": sid, "answer": "| a |\n|---|\n| b |"},
             {"op": "close", "session_id": sid}]
    assert [r["status"] for r in _batch(client, calls)] == [404, 404, 404]


# -- 3. steps: the single endpoint's observation for the same call ---------------------------


STEP_BODIES = [
    {}, {"name": None}, {"name": 5}, {"name": ["web_search"]}, {"name": "shell", "arguments": {}}, {"name": "web_search"},
    {"name": "web_search", "arguments": None}, {"name": "web_search", "arguments": 5}, {"name": "web_search", "arguments": []},
    {"name": "web_search", "arguments": "{oops"}, {"name": "web_search", "arguments": ""}, {"name": "web_search", "arguments": "[1]"},
    {"name": "web_search", "arguments": {"query": 5}}, {"name": "web_search", "arguments": {"query": ""}},
    {"name": "web_search", "arguments": {"queries": "Titans"}}, {"name": "web_search", "arguments": {"queries": [1, 2]}},
    {"name": "web_search", "arguments": {"query": "a", "queries": ["b"]}}, {"name": "web_search", "arguments": {"queries": ["q"] * 21}},
    {"name": "web_search", "arguments": {"query": "x" * 1001}}, {"name": "web_search", "arguments": {"query": "Titans", "page": "2"}},
    {"name": "web_search", "arguments": {"query": "Titans", "page": True}}, {"name": "web_search", "arguments": {"query": "Titans", "page": 0}},
    {"name": "web_search", "arguments": {"query": "Titans", "page": 2**70}},
    {"name": "web_extractor", "arguments": {"url": None}}, {"name": "web_extractor", "arguments": {"url": ["u"]}},
    {"name": "web_extractor", "arguments": {"url": "file:///etc/passwd"}}, {"name": "web_extractor", "arguments": {"url": "\ud800"}},
    {"name": "dict_memory", "arguments": {"operation": ["add"]}}, {"name": "dict_memory", "arguments": {"operation": "add", "dict": []}},
    {"name": "dict_memory", "arguments": {"operation": "retrieve", "key_list": "k"}}, {"name": "dict_memory", "arguments": {"operation": "update", "dict": {"k": 1}}},
    {"name": "dict_memory", "arguments": {"operation": "remove", "key_list": [1]}},
    {"tool_call": None}, {"tool_call": 5}, {"tool_call": []}, {"tool_call": "{oops"}, {"tool_call": '"web_search"'},
    {"tool_call": {"type": "function", "function": "web_search"}}, {"tool_call": {"function": {"name": "web_search", "arguments": 7}}},
    {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": '{"query": 5}'}},
    {"name": "web_search", "arguments": {"query": "Titans"}, "tool_call": {"name": "nope"}},  # tool_call wins, as in the single endpoint
]


def test_step_errors_match_the_single_endpoint(client):
    single, batched = _open(client, 2)
    got = _batch(client, [{"op": "step", "session_id": batched, **body} for body in STEP_BODIES])
    for i, (body, r) in enumerate(zip(STEP_BODIES, got)):
        one = client.post(f"/sessions/{single}/step", content=json.dumps(body).encode("ascii"))
        assert one.status_code == 200, (body, one.text[:300])
        want = one.json()
        assert (r["observation"], r["error"], r["turn"]) == (want["observation"], want["error"], want["turn"]), body
        assert r["turn"] == i + 1 and (r["error"] or "No more results" in r["observation"]), (body, r)
    _batch(client, [{"op": "close", "session_id": single}, {"op": "close", "session_id": batched}])


def test_a_well_formed_step_matches_the_single_endpoint(client):
    single, batched = _open(client, 2, seed=11)
    calls = [SEARCH, {"name": "web_search", "arguments": {"queries": ["Titans", "Phantoms"], "page": 1}},
             {"type": "function", "function": {"name": "web_search", "arguments": '{"query": "Phantoms"}'}},
             {"name": "dict_memory", "arguments": {"operation": "add", "dict": {"k": [1, {"v": None}]}}},
             {"name": "dict_memory", "arguments": {"operation": "retrieve_all"}}]
    got = _batch(client, [{"op": "step", "session_id": batched, **c} for c in calls])
    for i, (call, r) in enumerate(zip(calls, got)):
        want = client.post(f"/sessions/{single}/step", json=call).json()
        assert {**r, "status": None} == {**want, "status": None} and r["turn"] == i + 1 and r["error"] is False, call
    assert got[0]["observation"].startswith("[1] https://") and '"v": null' in got[-1]["observation"]
    _batch(client, [{"op": "close", "session_id": single}, {"op": "close", "session_id": batched}])


def test_lone_surrogates_are_answered_and_stored(client, warehouse):
    a, b = _open(client, 2)
    calls = [
        {"op": "step", "session_id": a, "name": "dict_memory", "arguments": {"operation": "add", "dict": {"\ud800": "x\udfff"}}},
        {"op": "step", "session_id": a, "name": "dict_memory", "arguments": {"operation": "retrieve_all"}},
        {"op": "step", "session_id": b, "name": "web_search", "arguments": {"query": "Titans \udc80"}},
        {"op": "step", "session_id": b, "name": "\ud800", "arguments": {}},
        {"op": "open", "world": "\ud800"}, {"op": "open", "scenario": "\udfff"}, {"op": "open", "task_id": "\ud800"},
        {"op": "open", "instruction": "api errors \ud800"}, {"op": "open", "perturbations": "\ud800"},
        {"op": "submit", "session_id": a, "answer": "| \ud800 |\n|---|\n| x |"},
        {"op": "close", "session_id": a}, {"op": "close", "session_id": b},
    ]
    got = _batch(client, calls)
    assert [r["status"] for r in got] == [200, 200, 200, 200, 404, 404, 404, 201, 422, 409, 204, 204]
    assert "ud800" in got[1]["observation"] and "unknown tool" in got[3]["observation"]
    assert got[2]["error"] is False
    _batch(client, [{"op": "close", "session_id": got[7]["session_id"]}])
    assert _turns(warehouse, [a, b]) == {a: 2, b: 2}


# Regression: a tool call (or its arguments) given as JSON text is decoded past parse_body's checks; text nested
# past the recursion limit, an integer of 4,300+ digits or an escaped lone surrogate in a query answered 500 (the
# whole batch with it). Each is now an error observation (or a search) for that call alone.
DEEP = "[" * 5000 + "]" * 5000
BAD_TEXT_CALLS = {
    "deep-arguments-text": {"name": "web_search", "arguments": '{"query": "Titans", "pad": ' + DEEP + "}"},
    "deep-call-text": {"tool_call": DEEP},
    "huge-int-arguments-text": {"name": "web_search", "arguments": '{"query": ' + "1" * 5000 + "}"},
    "surrogate-in-openai-arguments": {"type": "function", "function": {"name": "web_search", "arguments": '{"query": "Titans \\ud800"}'}},
}


@pytest.mark.parametrize("which", list(BAD_TEXT_CALLS))
def test_tool_call_text_never_fails_the_batch(server, client, which):
    body = BAD_TEXT_CALLS[which]
    sid, single = _open(client, 2)
    before = _open_count(client)
    calls = [{"op": "open"}, {"op": "step", "session_id": sid, **body}, {"op": "step", "session_id": sid, **SEARCH}]
    r = _fresh_post(server, "/batch", {"calls": calls})
    one = _fresh_post(server, f"/sessions/{single}/step", body)
    leaked = _open_count(client) - before
    _batch(client, [{"op": "close", "session_id": sid}, {"op": "close", "session_id": single}])
    assert r.status_code == 200, ("whole batch", r.status_code, r.text[:200], f"{leaked} session(s) opened by it and never reported")
    got = _check(calls, r.json()["results"])
    # an error observation, or (the surrogate) a search for its escape text, as for a surrogate in an object's query
    assert [x["status"] for x in got] == [201, 200, 200] and (got[1]["turn"], got[2]["turn"]) == (1, 2)
    assert one.status_code == 200 and one.json()["turn"] == 1, ("single /step", one.status_code, one.text[:200])
    _batch(client, [{"op": "close", "session_id": got[0]["session_id"]}])


def test_a_close_before_a_failing_call_is_still_logged(server, client, warehouse):
    """Whatever a later call of the batch does (today: a 500, above), the sessions the batch took out are logged."""
    a, b = _open(client, 2)
    calls = [{"op": "step", "session_id": a, **SEARCH}, {"op": "close", "session_id": a},
             {"op": "step", "session_id": b, **BAD_TEXT_CALLS["deep-call-text"]}, {"op": "close", "session_id": b}]
    _fresh_post(server, "/batch", {"calls": calls})
    assert _turns(warehouse, [a]) == {a: 1}
    assert [r["status"] for r in _batch(client, [{"op": "step", "session_id": a, **SEARCH}])] == [404]
    client.delete(f"/sessions/{b}")


# -- 4. nesting: a call may nest as deep as a single endpoint's body -------------------------


def test_a_call_nests_as_deep_as_a_single_body_and_no_deeper(client):
    """The batch's envelope (``{"calls": [...]}``: 2 levels) is not counted against its calls: a step that
    ``/sessions/{id}/step`` accepts is accepted in a batch; one level deeper refuses the whole batch (400),
    and nothing of a refused batch runs."""
    sid = _open(client)[0]

    def arguments(n):  # step body(1) > arguments(2) > dict(3) > n lists
        return {"operation": "add", "dict": {"k": _nest(n)}}

    deepest = MAX_JSON_DEPTH - 3
    assert client.post(f"/sessions/{sid}/step", json={"name": "dict_memory", "arguments": arguments(deepest)}).status_code == 200
    assert client.post(f"/sessions/{sid}/step", json={"name": "dict_memory", "arguments": arguments(deepest + 1)}).status_code == 400
    got = _batch(client, [{"op": "close", "session_id": "nobody"},
                          {"op": "step", "session_id": sid, "name": "dict_memory", "arguments": arguments(deepest)}])
    assert [r["status"] for r in got] == [404, 200] and got[1]["turn"] == 2
    too_deep = [{"op": "close", "session_id": sid}, {"op": "step", "session_id": sid, "name": "dict_memory", "arguments": arguments(deepest + 1)}]
    assert "nested" in _json_error(client.post("/batch", json={"calls": too_deep}), 400)
    # nothing of the refused batch ran: the session is open, at its third turn
    got = _batch(client, [{"op": "step", "session_id": sid, **SEARCH}, {"op": "close", "session_id": sid}])
    assert [r["status"] for r in got] == [200, 204] and got[0]["turn"] == 3


# -- 5. opens and submits: the single endpoint's status for the same body --------------------


OPEN_BODIES = [
    {}, {"seed": 7}, {"seed": "7"}, {"seed": " -7 "}, {"seed": [1]}, {"seed": {"a": 1}}, {"seed": "abc"}, {"seed": 1.5}, {"seed": 1e3},
    {"seed": 2**63}, {"seed": -(2**63) - 1}, {"seed": "9" * 19}, {"seed": True}, {"seed": None}, {"seed": "٣"},
    {"world": 5}, {"world": ""}, {"world": "atlantis"}, {"world": "../esports_2031"}, {"world": "episodes"}, {"world": "esports_2031\x00"},
    {"scenario": ["x"]}, {"scenario": "nope"}, {"scenario": "../../etc"}, {"task_id": 3}, {"task_id": "missing"}, {"task_id": ""},
    {"perturbations": "all"}, {"perturbations": "default"}, {"perturbations": "none"}, {"perturbations": ""}, {"perturbations": 5},
    {"perturbations": True}, {"perturbations": False}, {"perturbations": [5]}, {"perturbations": [{"kind": "nope", "rate": 0.1}]},
    {"perturbations": [{"kind": "stale_ranking"}]}, {"perturbations": [{"kind": "stale_ranking", "rate": 2}]},
    {"perturbations": {"kind": "stale_ranking", "rate": 0.5}}, {"perturbations": {"perturbations": [{"kind": "stale_ranking", "rate": 0.5}]}},
    {"perturbations": "[{oops"}, {"perturbations": '[{"kind": "stale_ranking", "rate": NaN}]'},
    {"perturbations": [{"kind": "stale_ranking", "schedule": [{"rate": 0.5, "until_episode": 2**70}, {"rate": 0.1}]}]},
    {"perturbations": [{"kind": "transient_error", "rate": 0.5, "error_kinds": ["boom"]}]},
    {"perturbations": "[" + "1" * 5000 + "]"},
    {"instruction": "inject intermittent API errors"}, {"instruction": "nothing recognisable"}, {"instruction": ["api errors"]},
    {"instruction": 5}, {"instruction": "api errors " * 200}, {"instruction": "", "perturbations": "default"},
    {"instruction": "api errors", "perturbations": [5]}, {"session_id": "mine", "tools": 5, "op2": "close"},
]


def test_open_statuses_match_post_sessions(client):
    got = _batch(client, [{"op": "open", **b} for b in OPEN_BODIES])
    opened = []
    for body, r in zip(OPEN_BODIES, got):
        one = client.post("/sessions", content=json.dumps(body).encode("ascii"))
        assert one.status_code < 500, (body, one.text[:200])
        assert r["status"] == one.status_code, (body, r, one.text[:200])
        if one.status_code == 201:
            opened += [r["session_id"], one.json()["session_id"]]
            assert r["session_id"] != "mine"
        else:
            assert r["error"] == one.json()["error"], body
    assert {r["status"] for r in got} >= {201, 404, 422}
    assert {r["status"] for r in _batch(client, [{"op": "close", "session_id": s} for s in opened])} == {204}


# Regression: perturbations as JSON text nested past the recursion limit answered 500 (the whole batch with it);
# now 422 for that open alone, as POST /sessions answers.
def test_deeply_nested_perturbations_text_is_422(server, client):
    body = {"perturbations": "[" * 5000 + "]" * 5000}
    before = _open_count(client)
    r = _fresh_post(server, "/batch", {"calls": [{"op": "open"}, {"op": "open", **body}]})
    one = _fresh_post(server, "/sessions", body)
    leaked = _open_count(client) - before
    assert r.status_code == 200, ("whole batch", r.status_code, r.text[:200], f"{leaked} session(s) opened and never reported")
    assert one.status_code == 422, ("POST /sessions", one.status_code, one.text[:200])
    got = r.json()["results"]
    assert [x["status"] for x in got] == [201, 422]
    _batch(client, [{"op": "close", "session_id": got[0]["session_id"]}])


def test_submit_statuses_match_the_single_endpoint(client, task_id):
    bodies = [{}, {"answer": None}, {"answer": 5}, {"answer": ["| a |"]}, {"answer": "x", "reward": "f1"}, {"answer": "x", "reward": [1]},
              {"answer": "x", "reward": {"metric": "nope"}}, {"answer": "x", "reward": {"format_reward": -1}},
              {"answer": "x", "reward": {"tool_call_penalty": "lots"}}, {"answer": "x", "reward": {"extra": 1}},
              {"answer": "| team |\n|---|\n| Austin Titans |", "reward": {"metric": "f1_by_row", "format_reward": 1e308, "tool_call_penalty": 1e308}},
              {"answer": "again"}]
    single, batched = _open(client, 2, task_id=task_id)
    notask = _open(client)[0]
    _batch(client, [{"op": "step", "session_id": s, **SEARCH} for s in (single, batched)])
    got = _batch(client, [{"op": "submit", "session_id": batched, **b} for b in bodies] + [{"op": "submit", "session_id": notask, "answer": "x"}])
    want = [client.post(f"/sessions/{single}/submit", content=json.dumps(b).encode()) for b in bodies]
    want.append(client.post(f"/sessions/{notask}/submit", json={"answer": "x"}))
    assert [r["status"] for r in got] == [w.status_code for w in want] == [422] * 10 + [200, 409, 409]
    assert got[10]["info"] == want[10].json()["info"] and got[10]["done"] is True
    _batch(client, [{"op": "close", "session_id": s} for s in (single, batched, notask)])


# -- 6. closes: in order, each session once, every stepped one stored -------------------------


def test_steps_interleaved_with_closes(client, warehouse):
    a, b, c, quiet = _open(client, 4)
    calls = [
        {"op": "step", "session_id": a, **SEARCH}, {"op": "step", "session_id": b, **SEARCH},
        {"op": "close", "session_id": a}, {"op": "step", "session_id": a, **SEARCH}, {"op": "submit", "session_id": a, "answer": "x"},
        {"op": "close", "session_id": a}, {"op": "step", "session_id": b, **SEARCH}, {"op": "close", "session_id": b},
        {"op": "close", "session_id": b}, {"op": "step", "session_id": c, **SEARCH}, {"op": "close", "session_id": quiet},
        {"op": "step", "session_id": c, "name": "nope"}, {"op": "close", "session_id": c}, {"op": "step", "session_id": c, **SEARCH},
    ]
    got = _batch(client, calls)
    assert [r["status"] for r in got] == [200, 200, 204, 404, 404, 404, 200, 204, 404, 200, 204, 200, 204, 404]
    assert [got[i]["turn"] for i in (0, 1, 6, 9, 11)] == [1, 1, 2, 1, 2]
    # a session closed without a step leaves no episode; each other one exactly its answered steps
    assert _turns(warehouse, [a, b, c, quiet]) == {a: 1, b: 2, c: 2}
    assert [r["status"] for r in _batch(client, [{"op": "close", "session_id": s} for s in (a, b, c, quiet)])] == [404] * 4


# Regression: a step of one batch that got its session, then waited for its lock while a close in another batch
# took the session out and logged it, ran on the closed session: answered 200, missing from the stored episode.
# A session taken out is now marked closed, and a call that finds it so once it holds the lock is 404.
ROUNDS = 8


def test_concurrent_batches_on_the_same_sessions(server, warehouse):
    """Batches racing on the same sessions: every session closed exactly once, its steps one at a time, and the
    store holds each session that answered a step with exactly its answered steps."""
    n_sessions, n_steppers, n_closers = 12, 6, 2

    async def round_(c: httpx.AsyncClient, rng: random.Random) -> tuple[list[str], list[list[dict]], list[list[dict]]]:
        r = await c.post("/batch", json={"calls": [{"op": "open"}] * n_sessions})
        sids = [x["session_id"] for x in r.json()["results"]]
        all_calls = []
        for k in range(n_steppers):
            calls = [{"op": "step", "session_id": s, "name": "web_search", "arguments": {"query": f"Titans {k} {j}"}} for s in sids for j in range(3)]
            calls += [{"op": "step", "session_id": s, "name": "dict_memory", "arguments": {"operation": "add", "dict": {str(k): k}}} for s in sids]
            rng.shuffle(calls)
            all_calls.append(calls)
        for k in range(n_closers):
            calls = [{"op": "close", "session_id": s} for s in sids]
            rng.shuffle(calls)
            all_calls.append([{"op": "step", "session_id": sids[k], **SEARCH}] * 5 + calls)

        async def post(calls):
            resp = await c.post("/batch", json={"calls": calls})
            assert resp.status_code == 200, resp.text[:300]
            return _check(calls, resp.json()["results"])

        return sids, all_calls, list(await asyncio.gather(*(post(x) for x in all_calls)))

    async def run():
        rng = random.Random(7)
        async with httpx.AsyncClient(base_url=server.url, timeout=120, limits=httpx.Limits(max_connections=32)) as c:
            return [await round_(c, rng) for _ in range(ROUNDS)]

    before = httpx.get(server.url + "/health").json()["sessions"]
    rounds = asyncio.run(run())
    assert httpx.get(server.url + "/health").json()["sessions"] == before  # every session opened was closed
    answered: dict[str, list[int]] = {}
    for sids, all_calls, results in rounds:
        closes = {s: [] for s in sids}
        for s in sids:
            answered[s] = []
        for calls, got in zip(all_calls, results):
            for call, r in zip(calls, got):
                assert r["status"] in ((200, 404) if call["op"] == "step" else (204, 404)), (call, r)
                if call["op"] == "step" and r["status"] == 200:
                    answered[call["session_id"]].append(r["turn"])
                elif call["op"] == "close":
                    closes[call["session_id"]].append(r["status"])
        for s in sids:
            assert sorted(closes[s]) == [204, 404], (s, closes[s])  # closed once, by one closer
            assert sorted(answered[s]) == list(range(1, len(answered[s]) + 1)), (s, answered[s])  # one step at a time, none twice
    want = {s: len(t) for s, t in answered.items() if t}
    stored = _turns(warehouse, list(answered))
    lost = {s: (stored.get(s, 0), n) for s, n in want.items() if stored.get(s) != n}
    assert stored.keys() <= want.keys()  # no episode for a session that answered no step
    assert not lost, f"sessions whose answered steps are not all stored, (stored, answered): {lost}"


# -- 7. a close racing a step in flight ------------------------------------------------------


@pytest.fixture(scope="module")
def idle_server(warehouse, tmp_path_factory):
    wh = Warehouse(tmp_path_factory.mktemp("wh_batch_idle"))
    shutil.copy(warehouse.world(WORLD), wh.root)
    s = SearchServer(wh, idle_timeout=1.0)
    s.warehouse = wh
    yield s
    s.stop()


# Regression: a step request holds its session before its body arrives; a close meanwhile logged the episode
# without it, and the step was then answered 200 and never recorded. It is now refused 404.
@pytest.mark.parametrize("close_with", ["batch", "delete"])
def test_a_step_in_flight_is_not_lost_by_a_close(idle_server, close_with):
    s = idle_server
    with httpx.Client(base_url=s.url, timeout=30) as c:
        held = c.post("/sessions", json={}).json()["session_id"]
        body = json.dumps(SEARCH).encode()
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
        try:
            sock.sendall(f"POST /sessions/{held}/step HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:10])
            # a control session opened after `held`: once the reaper has expired it but not `held` (idle longer),
            # `held` is in use, i.e. the step request has taken it (a condition, polled; the guard stops a hung server)
            c.post("/sessions", json={})
            guard = time.monotonic() + 30
            while c.get("/health").json()["sessions"] > 1 and time.monotonic() < guard:
                time.sleep(0.1)
            assert c.get("/health").json()["sessions"] == 1

            closed: list[int] = []

            def close() -> None:  # in a thread: a fixed close may wait for the step in flight
                with httpx.Client(base_url=s.url, timeout=30) as c2:
                    if close_with == "batch":
                        closed.append(c2.post("/batch", json={"calls": [{"op": "close", "session_id": held}]}).json()["results"][0]["status"])
                    else:
                        closed.append(c2.delete(f"/sessions/{held}").status_code)

            t = threading.Thread(target=close)
            t.start()
            guard = time.monotonic() + 5  # a close that waits for the step in flight never answers first: the guard ends the wait
            while c.get("/health").json()["sessions"] and t.is_alive() and time.monotonic() < guard:
                time.sleep(0.05)  # polled: the close has taken the session out
            sock.sendall(body[10:])
            reply = b""
            while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < int(reply.split(b"content-length: ")[1].split(b"\r\n")[0]):
                chunk = sock.recv(65536)
                assert chunk, reply
                reply += chunk
            t.join(30)
        finally:
            sock.close()
    assert closed == [204]
    status = int(reply.split(b" ", 2)[1])
    assert status in (200, 404), reply[:300]
    stored = _turns(s.warehouse, [held])
    if status == 200:  # answered: then it is in the closed session's stored episode
        assert stored == {held: 1}, ("a step answered 200 after its session's close was never recorded", reply.split(b"\r\n\r\n", 1)[1][:120])
    else:
        assert stored == {}


# -- 8. an episode log that cannot be written ------------------------------------------------


def _break_log(warehouse) -> None:
    """Make ``episodes.log.jsonl`` a directory (a write fails as on a full disk), once the server has drained it."""
    log = warehouse.episode_log
    guard = time.monotonic() + 30
    while time.monotonic() < guard:
        try:
            os.mkdir(log)
            return
        except FileExistsError:
            time.sleep(0.1)  # polled: the server's flush removes the drained log
    raise AssertionError("the episode log was never drained")


def test_closes_are_503_and_kept_when_the_log_fails(client, warehouse):
    a, b = _open(client, 2)
    _batch(client, [{"op": "step", "session_id": a, **SEARCH}, {"op": "step", "session_id": b, **SEARCH}])
    _break_log(warehouse)
    try:
        got = _batch(client, [{"op": "close", "session_id": a}, {"op": "step", "session_id": a, **SEARCH}, {"op": "close", "session_id": b}], allow=(503,))
        assert [r["status"] for r in got] == [503, 404, 503] and "kept" in got[0]["error"]
    finally:
        os.rmdir(warehouse.episode_log)
    guard = time.monotonic() + 30
    while _turns(warehouse, [a, b]) != {a: 1, b: 1} and time.monotonic() < guard:
        time.sleep(0.2)  # polled: the server's flush retries the kept episodes every second
    assert _turns(warehouse, [a, b]) == {a: 1, b: 1}


# Regression: when the log write of a batch's closes failed, a close of a session with nothing to log was answered
# 503 too; DELETE answers such a close 204, and the batch now does as well.
def test_a_close_with_nothing_to_log_is_204_as_delete(client, warehouse):
    a, quiet, quiet2 = _open(client, 3)
    _batch(client, [{"op": "step", "session_id": a, **SEARCH}])
    _break_log(warehouse)
    try:
        single = client.delete(f"/sessions/{quiet2}").status_code
        got = _batch(client, [{"op": "close", "session_id": a}, {"op": "close", "session_id": quiet}], allow=(503,))
    finally:
        os.rmdir(warehouse.episode_log)
    assert single == 204
    assert [r["status"] for r in got] == [503, 204], got
