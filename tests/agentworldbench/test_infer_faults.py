"""`eval infer` against a faulty OpenAI-compatible server: every fault is a recorded failure with its
reason class, never a crash; counts balance; a re-run against a healthy server generates only the failures.

The server is a real HTTP server on 127.0.0.1 (stdlib ``ThreadingHTTPServer``, HTTP/1.1 with keep-alive,
as ``vllm serve``). Each request names its fault in the action text (``fault=<name>``), so the scripted
answer does not depend on the order requests arrive in; ``<name>x<k>`` fails the first ``k`` requests
for that record and then answers well (a transient fault the client's retries get past).
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from worldforge.agentworldbench.infer import infer_file
from worldforge.agentworldbench.records import records_from_turns, write_records
from worldforge.cli import app
from worldforge.llm import GenerationParams, OpenAIBackend
from worldforge.net import free_port
from worldforge.worldmodel.parsing import format_prediction

MODEL = "fake-world-model"
PARAMS = GenerationParams(max_tokens=64, temperature=0.0, seed=1)
HUGE = 8 * 2**20  # bytes of the huge body


def completion(content: str | None = "", **choice: object) -> dict:
    """A well-formed chat completion with one choice (``choice`` overrides its fields)."""
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"} | choice],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


def good(fault: str) -> dict:
    return completion(format_prediction(f"observed for {fault}", think="t"))


def _js(obj: object) -> bytes:
    return json.dumps(obj).encode()


# fault -> (status, content type, body); "reset", "close" and "hang" are handled in the handler
REPLIES = {
    "ok": lambda f: (200, "application/json", _js(good(f))),
    "html": lambda f: (200, "text/html; charset=utf-8", b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1> nginx</body></html>"),
    "message-null": lambda f: (200, "application/json", _js(completion(message=None))),
    "content-null": lambda f: (200, "application/json", _js(completion(None))),
    "truncated-json": lambda f: (200, "application/json", _js(good(f))[:60]),
    "no-choices": lambda f: (200, "application/json", _js(completion() | {"choices": []})),
    "missing-choices": lambda f: (200, "application/json", _js({k: v for k, v in completion().items() if k != "choices"})),
    "plain-json": lambda f: (200, "text/plain", _js(good(f))),
    "plain-text": lambda f: (200, "text/plain", b"upstream connect error or disconnect/reset before headers"),
    "list": lambda f: (200, "application/json", _js([good(f)])),
    "string": lambda f: (200, "application/json", _js("the model is loading")),
    "huge": lambda f: (200, "text/plain", b"x" * HUGE),
    "500": lambda f: (500, "application/json", _js({"error": {"message": "engine died", "code": 500}})),
    "503": lambda f: (503, "text/html", b"<html>Service Unavailable</html>"),
    "429": lambda f: (429, "application/json", _js({"error": {"message": "too many requests", "code": 429}})),
}

# fault -> the reason class in the tally (None: the reply is good and the line is predicted)
EXPECTED = {
    "html": "malformed reply (HTML, status 200)",
    "message-null": "malformed reply (null message)",
    "content-null": "malformed reply (null content)",
    "truncated-json": "malformed reply (invalid JSON, status 200)",
    "no-choices": "malformed reply (0 choices, expected 1)",
    "missing-choices": "malformed reply (no choices)",
    "plain-json": None,  # JSON under the wrong content type: the client parses it, nothing is lost
    "plain-text": "malformed reply (not JSON, status 200)",
    "list": "malformed reply (JSON list, status 200)",
    "string": "malformed reply (JSON string, status 200)",
    "huge": "malformed reply (not JSON, status 200)",
    "500": "HTTP 500",
    "503": "HTTP 503",
    "429": "HTTP 429",
    "reset": "connection error",
    "close": "connection error",
    "hang": "timeout",
}


class FaultyServer:
    """An OpenAI-compatible server that answers each chat completion by the fault its request names.

    Attributes:
        healthy: answer every request well (the server after the fault was fixed).
        models_fault: a key of ``REPLIES`` to answer ``GET /models`` with (default: the model list).
        seen: the fault name of every completion request received, in arrival order.
    """

    def __init__(self):
        self.port = free_port()
        self.healthy = False
        self.models_fault: str | None = None
        self.seen: list[str] = []
        self.hanging = 0  # requests held by the "hang" fault right now
        self.served_while_hanging = 0  # other requests answered while one hung: the hang did not stall the run
        self._failed: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10  # seconds an idle keep-alive connection is held: server_close() never waits longer

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models") and outer.models_fault:
                    self._send(*REPLIES[outer.models_fault](outer.models_fault))
                elif self.path.rstrip("/").endswith("/models"):
                    self._send(200, "application/json", _js({"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "me"}]}))
                else:
                    self._send(404, "application/json", _js({"error": {"message": "not found"}}))

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                name = re.search(r"fault=([a-z0-9-]+)", body)
                fault = outer._pick(name.group(1) if name else "ok")
                if fault == "close":  # the server goes away before answering
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if fault == "reset":  # headers and half the body, then a TCP reset
                    payload = _js(good(fault))
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                if fault == "hang":  # held until the server stops (an event, not a time): only the client's timeout ends it
                    with outer._lock:
                        outer.hanging += 1
                    outer._stop.wait()
                    with outer._lock:
                        outer.hanging -= 1
                    fault = "ok"
                elif outer.hanging:
                    with outer._lock:
                        outer.served_while_hanging += 1
                self._send(*REPLIES[fault](fault))

            def _send(self, status: int, ctype: str, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout)
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = False  # server_close() joins every handler thread
            block_on_close = True

            def handle_error(self, request, client_address):
                pass  # the faults close sockets under the handler on purpose

        self._server = Server(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _pick(self, name: str) -> str:
        """The fault to answer with now: ``ok`` when healthy or a ``<fault>x<k>`` has failed ``k`` times."""
        with self._lock:
            self.seen.append(name)
            if self.healthy:
                return "ok"
            transient = re.fullmatch(r"(.+)x(\d+)", name)
            if transient:
                self._failed[name] = self._failed.get(name, 0) + 1
                return transient.group(1) if self._failed[name] <= int(transient.group(2)) else "ok"
            return name

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FaultyServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()  # release hanging handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
        assert not self._thread.is_alive()


def awb_file(path, faults: list[str]):
    """One single-turn AgentWorldBench record per fault, in order (line ``i + 1`` names ``faults[i]``)."""
    records = []
    for i, fault in enumerate(faults):
        action = json.dumps({"name": "web_search", "arguments": {"query": f"fault={fault} record {i}"}})
        records += records_from_turns(f"t{i}", "search", f"task {i}", [(action, f"observation {i}")])
    return write_records(path, records)


def rows_of(path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


TIMEOUT_S = 5.0
"""The client's timeout: only a hung request reaches it (the hang is held until the server stops); a healthy request
on a busy machine is answered well within it."""


def backend(server: FaultyServer, **kw) -> OpenAIBackend:
    return OpenAIBackend(base_url=server.base_url, **{"max_retries": 0, "timeout_s": TIMEOUT_S, "concurrency": 8} | kw)


@pytest.mark.parametrize("fault", list(EXPECTED))
def test_each_fault_is_a_failure_with_its_reason_class(fault, tmp_path):
    src = awb_file(tmp_path / "in.jsonl", ["ok", fault, "ok"])
    with FaultyServer() as server:
        report = infer_file(src, tmp_path / "out.jsonl", backend(server), PARAMS)
    rows = rows_of(tmp_path / "out.jsonl")
    assert [r["line"] for r in rows] == [1, 2, 3] and report.tally.balanced and report.tally.inputs == 3
    assert rows[0]["status"] == rows[2]["status"] == "ok"  # the run went on past the fault
    want = EXPECTED[fault]
    if want is None:
        assert rows[1]["status"] == "ok" and report.tally.kept == 3
    else:
        assert rows[1]["status"] == "failed" and report.tally.kept == 2 and report.tally.dropped == {want: 1}
        assert rows[1]["reason"].startswith(want) and len(rows[1]["reason"]) <= 400  # a short reason, even for a huge body


def test_transient_faults_are_retried_until_they_pass(tmp_path):
    faults = ["500x2", "429x1", "resetx1", "closex1", "htmlx1"]
    src = awb_file(tmp_path / "in.jsonl", faults)
    with FaultyServer() as server:
        report = infer_file(src, tmp_path / "out.jsonl", backend(server, max_retries=2), PARAMS)
    rows = {r["line"]: r for r in rows_of(tmp_path / "out.jsonl")}
    # status and connection faults are retried by the client; a malformed 200 reply is not
    assert all(rows[i + 1]["status"] == "ok" for i in range(4)), rows
    assert rows[5]["reason"].startswith("malformed reply (HTML, status 200)")
    assert report.tally.balanced and report.tally.kept == 4


def test_a_faulty_run_resumes_only_its_failures_on_a_healthy_server(tmp_path):
    faults = ["ok", "hang", *[f for f in EXPECTED if f != "hang"], "ok"]  # the hang early: the rest is sent while it hangs
    src = awb_file(tmp_path / "in.jsonl", faults)
    out, cache = tmp_path / "out.jsonl", tmp_path / "cache.sqlite"
    with FaultyServer() as server:
        first = infer_file(src, out, backend(server), PARAMS, cache)
        served_while_hanging = server.served_while_hanging
    failed = sorted(f for f, want in EXPECTED.items() if want)
    assert first.tally.balanced and first.tally.inputs == len(faults) and first.tally.dropped_total == len(failed)
    assert first.generated == len(faults) - len(failed) and first.unanswered == len(failed)
    assert served_while_hanging > 0  # the hang cost one request its timeout, not the run: the others were answered meanwhile
    rows = rows_of(out)
    assert sorted(faults[r["line"] - 1] for r in rows if r["status"] == "failed") == failed
    with FaultyServer() as server:
        server.healthy = True  # no hang now: a generous timeout, so a busy machine cannot drop a request before it is sent
        second = infer_file(src, out, backend(server, timeout_s=30.0), PARAMS, cache)
    assert sorted(server.seen) == failed  # only the failed records were requested again; no failure was cached
    assert second.tally.balanced and second.tally.kept == len(faults) and second.cached == len(faults) - len(failed)
    assert second.generated == len(failed) and all(r["status"] == "ok" for r in rows_of(out))


def test_eval_infer_cli_summarises_a_faulty_run_without_a_traceback(tmp_path):
    faults = ["ok", "html", "message-null", "content-null", "truncated-json", "missing-choices", "list", "string", "plain-text", "reset"]
    src = awb_file(tmp_path / "in.jsonl", faults)
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    with FaultyServer() as server:
        res = runner.invoke(app, ["eval", "infer", str(src), "-o", str(out), "--base-url", server.base_url])
    text = " ".join(res.output.split())
    assert res.exit_code == 0 and res.exception is None and "Traceback" not in res.output, res.output
    assert f"lines in {len(faults)} = predicted 1 + failed {len(faults) - 1}" in text and "balanced" in text
    assert "malformed reply (HTML, status 200): 1" in text and "connection error: 1" in text
    assert f"1 generated, 0 from cache; {len(faults) - 1} got no reply (re-run to retry only those)" in text
    assert len(rows_of(out)) == len(faults)
    with FaultyServer() as server:
        server.healthy = True
        res = runner.invoke(app, ["eval", "infer", str(src), "-o", str(out), "--base-url", server.base_url])
    assert res.exit_code == 0 and f"{len(faults) - 1} generated, 1 from cache" in " ".join(res.output.split()), res.output


@pytest.mark.parametrize("fault", ["html", "list", "truncated-json", "string"])
def test_a_malformed_model_list_is_a_clear_error(fault, tmp_path):
    src = awb_file(tmp_path / "in.jsonl", ["ok"])
    with FaultyServer() as server:
        server.models_fault = fault
        res = CliRunner().invoke(app, ["eval", "infer", str(src), "-o", str(tmp_path / "o.jsonl"), "--base-url", server.base_url])
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert f"the server at {server.base_url} answered GET /models with a malformed reply" in text and not (tmp_path / "o.jsonl").exists()
