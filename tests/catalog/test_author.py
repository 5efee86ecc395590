"""`worldforge catalog author`: a spec from a world model, validated, repaired within a bounded number of rounds.

A scripted OpenAI-compatible server (http.server on a free 127.0.0.1 port, in a thread) plays the
model; the last test asks a real `vllm serve` of the tiny local model (its text is noise).
"""

from __future__ import annotations

import copy
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from typer.testing import CliRunner

from tests.conftest import SPECS_DIR
from worldforge.catalog.author import AuthorError, author_spec, check_reply, repair_message, spec_json_schema, spec_yaml
from worldforge.cli import app
from worldforge.errors import SpecError
from worldforge.llm.base import BackendError
from worldforge.net import free_port
from worldforge.spec import load_spec, spec_from_dict, spec_hash

TOPIC = "a 2032 market of solid-state EV battery cells"

EV = {
    "world": "ev_cells_2032", "title": "Solid-state EV battery cells, 2032", "seed": 7, "target_year": 2032,
    "tables": {
        "makers": {"primary_key": "maker_id", "rows": 12, "columns": {
            "maker_id": {"kind": "sequence"},
            "name": {"kind": "choice", "unique": True, "values": ["CATL", "LG Energy Solution", "Panasonic", "Samsung SDI", "BYD", "SK On",
                                                                  "QuantumScape", "Solid Power", "ProLogium", "Factorial", "Gotion", "CALB", "SVOLT"]},
            "country": {"kind": "choice", "values": ["China", "South Korea", "Japan", "United States", "Taiwan"]}}},
        "cells": {"primary_key": "cell_id", "columns": {
            "cell_id": {"kind": "sequence"},
            "maker_id": {"kind": "reference", "parent": "makers", "cardinality": {"min": 10, "max": 14}},
            "energy_wh_kg": {"kind": "number", "dtype": "int", "min": 300, "max": 550, "unit": "Wh/kg"},
            "price_usd_kwh": {"kind": "number", "min": 60, "max": 140, "decimals": 1, "unit": "USD/kWh"},
            "launched": {"kind": "date", "start": "Y-01-01", "end": "Y-09-30"}}},
        "orders": {"primary_key": "order_id", "rows": 200, "columns": {
            "order_id": {"kind": "sequence", "start": 1000},
            "cell_id": {"kind": "reference", "parent": "cells"},
            "gwh": {"kind": "number", "min": 0.5, "max": 40, "decimals": 1, "unit": "GWh"},
            "value_musd": {"kind": "derive", "expr": "round(gwh * cells.price_usd_kwh, 1)", "unit": "million USD"}}},
    },
}
"""A valid spec on the topic (332–380 rows)."""


def broken() -> dict:
    """EV with a reference to a table that does not exist and too many rows."""
    doc = copy.deepcopy(EV)
    doc["tables"]["orders"]["rows"] = 400
    doc["tables"]["orders"]["columns"]["cell_id"]["parent"] = "batteries"
    return doc


class FakeModelServer:
    """A scripted OpenAI-compatible server: ``GET /v1/models`` lists one model; each ``POST /v1/chat/completions``
    answers the next scripted reply (the last one repeats) and records the request body."""

    def __init__(self, replies: list[str], status: int = 200):
        self.replies, self.status, self.requests = list(replies), status, []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "fake-world-model", "object": "model", "created": 0, "owned_by": "test"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                owner.requests.append(body)
                if owner.status != 200:
                    self._send(owner.status, {"error": {"message": "the schema is too complex", "code": owner.status}})
                    return
                text = owner.replies[min(len(owner.requests), len(owner.replies)) - 1]
                self._send(200, {"id": f"c{len(owner.requests)}", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

            def log_message(self, *args):  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


runner = CliRunner()


def cli(*args):
    return runner.invoke(app, ["catalog", "author", *map(str, args)])


def siblings(path):
    return sorted(p.name for p in path.parent.iterdir())


# --- the loop against a scripted server -----------------------------------------------------------


def test_a_broken_spec_is_repaired_in_the_second_round(tmp_path):
    first = json.dumps(broken())
    expected = pytest.raises(SpecError, spec_from_dict, broken())
    out = tmp_path / "ev.yaml"
    with FakeModelServer([first, json.dumps(EV)]) as server:
        authored = author_spec(TOPIC, base_url=server.base_url, max_rounds=3, out=out)
    assert authored.rounds == 2 and len(server.requests) == 2
    assert authored.model == "fake-world-model" and authored.path == out
    # round 1: rules, example and topic; structured output with the spec's schema
    req1, req2 = server.requests
    assert [m["role"] for m in req1["messages"]] == ["system", "user"]
    assert "300–500" in req1["messages"][0]["content"] and "Y-01-01" in req1["messages"][0]["content"]
    assert "smartphones_2029" in req1["messages"][0]["content"] and TOPIC in req1["messages"][1]["content"]
    assert req1["response_format"]["type"] == "json_schema" and req1["response_format"]["json_schema"]["schema"] == spec_json_schema()
    # round 2: the same start, the broken reply as the assistant's, its validation problems as the user's
    assert req2["messages"][:2] == req1["messages"]
    assert req2["messages"][2] == {"role": "assistant", "content": first}
    repair = req2["messages"][3]
    assert repair["role"] == "user" and repair["content"] == repair_message(expected.value.problems)
    assert len(expected.value.problems) >= 2
    for path, msg in expected.value.problems:
        assert f"- {path}: {msg}" in repair["content"]
    assert "parent 'batteries': no such table" in repair["content"]
    assert authored.problems == [expected.value.problems]
    # the file validates, loads, and is the model's spec
    spec = load_spec(out)
    assert spec_hash(spec) == spec_hash(spec_from_dict(copy.deepcopy(EV))) and spec.archetype is None
    assert authored.yaml == out.read_text() and siblings(out) == ["ev.yaml"]


def test_a_model_that_never_validates_is_a_clean_error_after_max_rounds(tmp_path):
    out = tmp_path / "ev.yaml"
    out.write_text("previous: content\n")
    with FakeModelServer(["{\"world\": \"ev_cells", json.dumps(broken()), "not json at all"]) as server:
        with pytest.raises(AuthorError) as err:
            author_spec(TOPIC, base_url=server.base_url, max_rounds=3, out=out)
    assert len(server.requests) == 3
    assert err.value.rounds == 3 and err.value.problems and err.value.problems[0][0] == ""
    msg = str(err.value)
    assert "no valid world spec after 3 round(s)" in msg and server.base_url in msg
    assert "the reply is not JSON (Expecting value at line 1, column 1)" in msg
    # the unparseable first reply was sent back with its parse error
    assert "the reply is not JSON (Unterminated string" in server.requests[1]["messages"][-1]["content"]
    assert out.read_text() == "previous: content\n" and siblings(out) == ["ev.yaml"]


def test_an_unreachable_server_names_its_url(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendError, match=f"cannot reach the world-model server at {url}"):
        author_spec(TOPIC, base_url=url, out=tmp_path / "x.yaml")
    assert not (tmp_path / "x.yaml").exists()


def test_a_server_error_names_the_url_and_round(tmp_path):
    with FakeModelServer([], status=400) as server:
        with pytest.raises(AuthorError, match=r"the world-model server at .* failed round 1 of 3: HTTP 400.*guidance or xgrammar"):
            author_spec(TOPIC, base_url=server.base_url, out=tmp_path / "x.yaml")
    assert len(server.requests) == 1 and not (tmp_path / "x.yaml").exists()


def test_reply_parsing():
    spec, problems = check_reply("```json\n" + json.dumps(EV) + "\n```")
    assert spec is not None and problems == [] and spec.world == "ev_cells_2032"
    spec, problems = check_reply(json.dumps(EV | {"archetype": "made_up"}))
    assert spec is not None and spec.archetype is None  # the system sets it, never the model
    spec, problems = check_reply('{"world": "x"', finish_reason="length", max_tokens=64)
    assert spec is None and problems[0][0] == "" and "cut off at the 64 token limit" in problems[0][1]
    spec, problems = check_reply("[1, 2]")
    assert spec is None and problems == [("", "expected a mapping at the top level, got list")]


@pytest.mark.parametrize("name", sorted(p.stem for p in SPECS_DIR.glob("*.yaml")))
def test_the_yaml_reads_back_to_the_same_spec(tmp_path, name):
    spec = load_spec(SPECS_DIR / f"{name}.yaml")
    path = tmp_path / "s.yaml"
    path.write_text(spec_yaml(spec))
    assert spec_hash(load_spec(path)) == spec_hash(spec)
    assert isinstance(yaml.safe_load(path.read_text()), dict)


def test_the_schema_has_no_bounds_guided_decoding_rejects():
    schema = spec_json_schema()
    text = json.dumps(schema)
    assert "9223372036854775807" not in text and "archetype" not in text
    assert "oneOf" not in text and "discriminator" not in text and '"additionalProperties": false' in text
    assert '"title": "' not in text and '"description": "' not in text  # annotations; the fields named so stay
    assert {"world", "title", "target_year", "tables"} <= set(schema["properties"])


# --- the command --------------------------------------------------------------------------------


def test_cli_writes_a_valid_spec(tmp_path):
    out = tmp_path / "specs" / "ev.yaml"
    with FakeModelServer([json.dumps(broken()), json.dumps(EV)]) as server:
        r = cli(TOPIC, "-o", out, "--backend", "openai", "--base-url", server.base_url, "--model", "fake-world-model", "--max-rounds", 2)
    assert r.exit_code == 0, r.output
    assert "round 1: 2 problem(s)" in r.output and "valid after 2 round(s)" in r.output and "ev_cells_2032" in r.output
    assert load_spec(out).world == "ev_cells_2032"


def test_cli_failure_exits_2_without_a_traceback(tmp_path):
    out = tmp_path / "ev.yaml"
    with FakeModelServer(["nonsense"]) as server:
        r = cli(TOPIC, "-o", out, "--base-url", server.base_url, "--max-rounds", 2)
    assert len(server.requests) == 2
    assert r.exit_code == 2 and "error:" in r.output and "after 2 round(s)" in r.output and "not JSON" in r.output
    assert "Traceback" not in r.output and not out.exists()


def test_cli_rejects_other_backends_and_unknown_models(tmp_path):
    r = cli(TOPIC, "-o", tmp_path / "x.yaml", "--backend", "grounded")
    assert r.exit_code == 2 and "--backend 'grounded' cannot author specs" in r.output
    with FakeModelServer([json.dumps(EV)]) as server:
        r = cli(TOPIC, "-o", tmp_path / "x.yaml", "--base-url", server.base_url, "--model", "other")
    assert r.exit_code == 2 and "does not serve 'other'" in r.output and not server.requests
    url = f"http://127.0.0.1:{free_port()}/v1"
    r = cli(TOPIC, "-o", tmp_path / "x.yaml", "--base-url", url)
    assert r.exit_code == 2 and url in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x.yaml").exists()


# --- a real vllm serve of the tiny model --------------------------------------------------------


@pytest.mark.vllm
def test_the_tiny_model_ends_within_max_rounds(vllm_server, tmp_path):
    out = tmp_path / "tiny.yaml"
    t0 = time.monotonic()
    r = cli(TOPIC, "-o", out, "--base-url", vllm_server.base_url, "--max-rounds", 2, "--max-tokens", 384, "--seed", 0, "--timeout", 120)
    took = time.monotonic() - t0
    assert took < 60, f"{took:.0f} s"
    assert "Traceback" not in r.output
    if r.exit_code == 0:  # noise that happens to validate
        assert "valid after" in r.output and load_spec(out).world
    else:
        assert r.exit_code == 2, r.output
        assert "no valid world spec after 2 round(s)" in r.output and not out.exists()
