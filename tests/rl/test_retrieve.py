"""``worldforge serve retrieve``: the Search-R1 / verl ``/retrieve`` protocol, served for real on loopback
(started through the CLI with setsid, stopped by PID), and the scripted oracle answering tasks through it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from tests.conftest import ROOT
from tests.rl.conftest import WORLD
from tests.servers import CliServer
from worldforge.net import free_port
from worldforge.rl.env import scripted_answer
from worldforge.tasks.scorer import score_table


class RetrieveServer(CliServer):
    """``worldforge serve retrieve`` in its own session on 127.0.0.1 and a free port."""

    def __init__(self, warehouse, tmp_path, *args: str):
        log = tmp_path / "retrieve.log"
        super().__init__("retrieve", "--world", WORLD, "--host", "127.0.0.1", "--warehouse", str(warehouse), *args, log=log)
        self.client = httpx.Client(base_url=self.url, timeout=30)

    def post(self, body, **kwargs) -> httpx.Response:
        """POST /retrieve with a JSON body."""
        return self.client.post("/retrieve", json=body, **kwargs)

    def stop(self) -> None:
        """Stop the server (:meth:`CliServer.stop`); nothing of its process group is left."""
        self.client.close()
        super().stop()
        with pytest.raises(ProcessLookupError):
            os.killpg(self.proc.pid, 0)


@pytest.fixture(scope="module")
def server(rl_wh, tmp_path_factory):
    s = RetrieveServer(rl_wh, tmp_path_factory.mktemp("retrieve"))
    yield s
    s.stop()


def _served(rl_wh, tmp_path_factory, *args):
    return RetrieveServer(rl_wh, tmp_path_factory.mktemp("retrieve"), *args)


def test_ready_message_and_health(server):
    assert f"{server.url}/retrieve" in server.log.read_text()
    health = httpx.get(server.url + "/health").json()
    assert health["status"] == "ok" and health["world"] == WORLD and health["contents"] == "page" and health["topk_max"] == 50


def test_response_shape_with_scores(server):
    r = server.post({"queries": ["Apple smartphone"], "topk": 4, "return_scores": True})
    assert r.status_code == 200 and set(r.json()) == {"result"}
    (hits,) = r.json()["result"]
    assert len(hits) == 4
    for item in hits:
        assert set(item) == {"document", "score"} and set(item["document"]) == {"id", "contents"}
        assert isinstance(item["score"], float) and item["score"] > 0
        assert item["document"]["id"].startswith("https://")
        title, text = item["document"]["contents"].split("\n", 1)
        assert title.startswith('"') and title.endswith('"')  # the reference corpus: '"' + title + '"\n' + text
        assert text.startswith(f"# {title[1:-1]}\n")  # contents="page": the page's Markdown
    scores = [item["score"] for item in hits]
    assert scores == sorted(scores, reverse=True)


def test_return_scores_false_and_default_topk(server):
    with_scores = server.post({"queries": ["Apple smartphone"], "return_scores": True}).json()["result"][0]
    bare = server.post({"queries": ["Apple smartphone"]}).json()  # return_scores defaults to false, topk to 3
    assert len(with_scores) == 3
    assert bare == {"result": [[item["document"] for item in with_scores]]}


def test_batch_answers_each_query_in_order(server):
    queries = ["Apple smartphone", "Samsung", "market share brands", "zzzqqq xxyyzz"]
    batch = server.post({"queries": queries, "topk": 2, "return_scores": True}).json()["result"]
    assert len(batch) == 4 and batch[3] == []
    for q, hits in zip(queries[:3], batch[:3]):
        alone = server.post({"queries": [q], "topk": 2, "return_scores": True}).json()["result"][0]
        assert [h["document"]["id"] for h in hits] == [h["document"]["id"] for h in alone] and len(hits) == 2


@pytest.mark.parametrize(("body", "status", "words"), [
    ({"queries": []}, 422, "queries"),
    ({"queries": "Apple"}, 422, "queries"),
    ({"queries": ["Apple", 3]}, 422, "queries"),
    ({"queries": ["  "]}, 422, "non-blank"),
    ({}, 422, "queries"),
    ({"queries": ["Apple"], "topk": 51}, 422, "between 1 and 50"),
    ({"queries": ["Apple"], "topk": 0}, 422, "between 1 and 50"),
    ({"queries": ["Apple"], "topk": "3"}, 422, "topk"),
    ({"queries": ["Apple"], "return_scores": "yes"}, 422, "return_scores"),
    ({"queries": ["Apple"], "task_id": "no-such-task"}, 422, "no task"),
    (["Apple"], 400, "JSON object"),
])
def test_validation_errors(server, body, status, words):
    r = server.post(body)
    assert r.status_code == status and words in r.json()["error"]


def test_not_json_and_too_large(server):
    r = httpx.post(server.url + "/retrieve", content=b"{queries: nope", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    r = server.post({"queries": ["x" * 200] * 6000})
    assert r.status_code == 413 and "error" in r.json()


def test_unknown_world_is_one_message_and_exit_2(rl_wh):
    proc = subprocess.run([sys.executable, "-m", "worldforge.cli", "serve", "retrieve", "--world", "atlantis_1999",
                           "--port", str(free_port()), "--warehouse", str(rl_wh)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "atlantis_1999" in proc.stderr and "no such world" in proc.stderr and "Traceback" not in proc.stderr


def test_empty_results_at_rate_1(rl_wh, tmp_path_factory):
    s = _served(rl_wh, tmp_path_factory, "--perturbations", '[{"kind": "empty_results", "rate": 1}]')
    try:
        r = s.post({"queries": ["Apple smartphone", "Samsung"], "topk": 5, "return_scores": True})
        assert r.status_code == 200 and r.json() == {"result": [[], []]}
    finally:
        s.stop()


MIX = json.dumps([{"kind": "transient_error", "rate": 0.4}, {"kind": "stale_ranking", "rate": 0.5}, {"kind": "empty_results", "rate": 0.3}])


def _replay(s: RetrieveServer) -> list:
    out = []
    for i in range(12):
        r = s.post({"queries": ["Apple smartphone", f"model {i}", "brands market share"], "topk": 5, "return_scores": True})
        out.append((r.status_code, r.json(), r.headers.get("retry-after")))
    return out


def test_same_seed_same_responses(rl_wh, tmp_path_factory):
    runs = []
    for seed in ("5", "5", "6"):
        s = _served(rl_wh, tmp_path_factory, "--perturbations", MIX, "--seed", seed)
        try:
            runs.append(_replay(s))
        finally:
            s.stop()
    assert runs[0] == runs[1] and runs[0] != runs[2]
    statuses = {status for status, _, _ in runs[0]}
    assert 200 in statuses and statuses & {503, 504}  # transient errors: statuses verl's client retries
    for status, body, retry_after in runs[0]:
        if status != 200:
            assert set(body) == {"error"}
        if retry_after is not None:
            assert status == 503 and "Too Many Requests" in body["error"]
    answered = [body["result"] for status, body, _ in runs[0] if status == 200]
    assert any(hits == [] for result in answered for hits in result)  # empty_results fired
    assert any([h["score"] for h in hits] != sorted((h["score"] for h in hits), reverse=True) for result in answered for hits in result)


def test_sessions_are_numbered_apart(rl_wh, tmp_path_factory):
    s = _served(rl_wh, tmp_path_factory, "--perturbations", MIX, "--seed", "5")
    try:
        body = {"queries": ["Apple smartphone", "brands market share"], "topk": 5, "return_scores": True}
        a = [s.post({**body, "session_id": "a"}).json() for _ in range(8)]
        b = [s.post({**body, "session_id": "b"}).json() for _ in range(8)]
        a_again = [s.post({**body, "session_id": "a2"}).json() for _ in range(8)]
        assert a != b and a != a_again  # decisions are seeded per session
    finally:
        s.stop()


def retrieval_tools(s: RetrieveServer):
    """A tool interface made of /retrieve alone, for :func:`scripted_answer`.

    ``web_search`` POSTs the query and shows the documents as ``web_search`` blocks; ``web_extractor``
    returns a document retrieved earlier in the episode. A link the agent follows to a page it has
    not retrieved yet is searched for by the words of its URL's last path part (the page's name),
    as an agent that can only retrieve would; the page is read only if retrieval returns it.
    """
    retrieved: dict[str, str] = {}
    calls = {"retrieve": 0, "followed": 0}

    def call(name: str, args: dict) -> str:
        if name == "web_search":
            calls["retrieve"] += 1
            r = s.post({"queries": [args["query"]], "topk": 10, "return_scores": True})
            if r.status_code != 200:
                return f"Error: {r.json()['error']}"
            hits = r.json()["result"][0]
            if not hits:
                return f'No results found for "{args["query"]}".'
            blocks = []
            for n, item in enumerate(hits, 1):
                title, text = item["document"]["contents"].split("\n", 1)
                retrieved[item["document"]["id"]] = text
                blocks.append(f"[{n}] {item['document']['id']}\nTitle: {title[1:-1]}\nSnippet: {text[:200]}\nDate: N/A")
            return "\n\n".join(blocks)
        if name == "web_extractor":
            url = args["url"]
            if url not in retrieved:
                calls["followed"] += 1
                call("web_search", {"query": url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ")})
            return retrieved.get(url, f"Error: {url} was not among the retrieved documents")
        return f"Error: unknown tool {name}"

    return call, calls


def _kinds(tasks) -> list:
    picked: dict[str, object] = {}
    for t in tasks:
        picked.setdefault(t.instance_id.rsplit("_", 1)[0], t)
    return list(picked.values())


def test_oracle_answers_through_retrieval_alone(server, rl_tasks):
    tasks = _kinds(t for t in rl_tasks.values() if not t.extra.get("scenario"))
    assert len(tasks) >= 5
    for task in tasks:
        call, calls = retrieval_tools(server)
        answer = scripted_answer(task, call)
        assert score_table(answer, task).f1_by_item == 1.0, (task.instance_id, answer[:300])
        assert calls["retrieve"] > 0


def test_deep_questions_through_retrieval_alone(server, rl_wh):
    from worldforge.rl import world_tasks
    from worldforge.tasks.deep import grade_response, question_of

    deep = [t for t in world_tasks(WORLD, rl_wh, "deep").values() if not t.extra.get("scenario")]
    assert len(deep) >= 10
    for task in deep[::5]:
        call, calls = retrieval_tools(server)
        response = scripted_answer(task, call)
        assert grade_response(response, question_of(task)).correct, (task.instance_id, response)
        assert calls["retrieve"] > 0
    # a deep question's id attaches to a session like a wide task's; an unknown id is refused
    ok = server.post({"queries": ["founded"], "session_id": "deep-1", "task_id": deep[0].instance_id})
    assert ok.status_code == 200, ok.text
    bad = server.post({"queries": ["founded"], "session_id": "deep-2", "task_id": "no_such_question"})
    assert bad.status_code == 422 and "no task" in bad.json()["error"]


def _squad_normal(text: str) -> str:
    """Exact-match normalisation as Search-R1's reward applies it (SQuAD's): lower case, no punctuation, no articles, single spaces."""
    import re
    import string

    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def test_search_r1_rows_are_answered_through_retrieval_and_match_their_gold(server, rl_wh, tmp_path):
    """`worldforge export search-r1` rows drive a retrieval-only episode: the oracle answers through /retrieve, and its exact
    answer matches the row's golden_answers under Search-R1's exact-match normalisation (its reward)."""
    import re

    import pyarrow.parquet as pq

    from worldforge.rl import world_tasks

    out = tmp_path / "search-r1"
    res = subprocess.run([sys.executable, "-m", "worldforge.cli", "export", "search-r1", "--worlds", WORLD, "-o", str(out), "--warehouse", str(rl_wh),
                          "--data-source", "nq"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    rows = pq.read_table(out / "train.parquet").to_pylist() + pq.read_table(out / "test.parquet").to_pylist()
    deep = world_tasks(WORLD, rl_wh, "deep")
    assert {r["extra_info"]["question_id"] for r in rows} == {q for q in deep if not deep[q].extra.get("scenario")}
    for row in rows[::6]:
        assert row["data_source"] == "nq" and row["reward_model"] == {"style": "rule", "ground_truth": {"target": row["golden_answers"]}}
        assert "<search>" in row["prompt"][0]["content"] and row["prompt"][0]["content"].endswith(row["question"])
        task = deep[row["extra_info"]["question_id"]]
        call, calls = retrieval_tools(server)
        response = scripted_answer(task, call)
        exact = re.search(r"^Exact Answer:\s*(.+)$", response, re.M).group(1)
        assert _squad_normal(exact) in {_squad_normal(g) for g in row["golden_answers"]}, (row["question"], exact, row["golden_answers"])
        assert calls["retrieve"] > 0
        ok = server.post({"queries": ["anything"], "session_id": f"sr1-{row['id']}", "task_id": row["extra_info"]["question_id"]})
        assert ok.status_code == 200  # the row's question id attaches to a /retrieve session


def test_oracle_in_a_scenario_server(rl_wh, rl_tasks, tmp_path_factory):
    tasks = [t for t in rl_tasks.values() if t.extra.get("scenario")]
    assert tasks
    scenario = tasks[0].extra["scenario"]
    s = _served(rl_wh, tmp_path_factory, "--scenario", scenario)
    try:
        for task in _kinds(t for t in tasks if t.extra["scenario"] == scenario)[:4]:
            call, _ = retrieval_tools(s)
            answer = scripted_answer(task, call)
            assert score_table(answer, task).f1_by_item == 1.0, (task.instance_id, answer[:300])
    finally:
        s.stop()


def test_sessions_are_bounded_and_a_session_answering_a_request_is_never_dropped(rl_wh):
    from worldforge.rl.retrieve import Retriever
    from worldforge.serving.http import RequestError

    retriever = Retriever(WORLD, rl_wh, max_sessions=2)
    first, _ = retriever.session("a")  # the default session and "a" fill it
    assert len(retriever) == 2
    with retriever.session("a")[1]:  # "a" is answering a request
        b, _ = retriever.session("b")  # the default session, idle, makes room
        assert len(retriever) == 2 and retriever.session("b")[0] is b
        with retriever.session("b")[1], pytest.raises(RequestError) as refused:
            retriever.session("c")  # both are answering
    assert refused.value.status == 503 and "retry" in refused.value.message
    assert retriever.session("a")[0] is first  # kept through all of it
    assert retriever.session()[0].session_id == "retrieve:default"  # the default session comes back, new
    assert len(retriever) == 2
