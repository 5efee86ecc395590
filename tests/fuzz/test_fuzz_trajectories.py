"""Fuzzing the trajectory readers with real records from ../shared/data, mutated.

Each property starts from a small excerpt of a real file of each format (copied into a
temporary folder; the shared files are only read), damages it (values replaced, fields deleted,
bytes cut or flipped) and reads it back. Promises: :func:`~worldforge.trajectories.read_file`
never raises and yields only well-formed :class:`~worldforge.trajectories.Trajectory` and
:class:`~worldforge.trajectories.Quarantined` records; a JSONL file whose format is recognised
yields exactly one record per non-empty line; a batch balances (records in = trajectories kept +
records quarantined), also once stored by :func:`~worldforge.trajectories.store.ingest`.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from tests.conftest import TRAJECTORIES
from tests.fuzz.budget import bounded, fuzz
from tests.fuzz.strategies import json_values, mutated
from tests.trajectories import test_shapes_chat as shapes_chat
from tests.trajectories import test_shapes_records as shapes_records
from worldforge.trajectories import Quarantined, Trajectory, read_file
from worldforge.trajectories.model import DOMAINS, Turn
from worldforge.trajectories.readers import FORMATS
from worldforge.trajectories.store import balance, ingest, read_batch
from worldforge.warehouse import Warehouse

pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")


def _json(rel: str):
    return json.loads((TRAJECTORIES / rel).read_text(encoding="utf-8"))


def _jsonl(rel: str, n: int) -> list:
    with (TRAJECTORIES / rel).open(encoding="utf-8") as f:
        return [json.loads(next(f)) for _ in range(n)]


def _few(doc: dict, n: int) -> dict:
    return dict(list(doc.items())[:n])


def _samples() -> dict[str, tuple[str, object]]:
    """One small real excerpt per format: ``{name: (suffix, document or list of JSONL records)}``."""
    hands = _jsonl("openhands/evaluation/benchmarks/multi_swe_bench/examples/output.jsonl", 1)
    hands[0]["history"] = hands[0]["history"][:8]
    return {
        "swe_agent": (".traj", _json("swe-agent/tests/test_data/trajectories/gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj")),
        "openhands_events": (".json", _json("openhands/tests/runtime/trajs/basic_interactions.json")),
        "openhands_output": (".jsonl", hands),
        "intercode": (".json", _few(_json("intercode/data/results/ctf/ic_ctf_gpt-4_25_turns.json"), 2)),
        "tau_bench": (".json", _json("tau-bench/historical_trajectories/gpt-4o-airline.json")[:2]),
        "toolbench": (".json", _json("toolbench/data_example/answer/G1_answer/10_ChatGPT_DFS_woFilter_w2.json")),
        "fireact_messages": (".jsonl", _jsonl("fireact/data/finetune/gpt_format/hotpotqa.jsonl", 3)),
        "fireact_trajs": (".json", _few(_json("fireact/trajs/hotpotqa_dev_0_500_ft_gpt-3.5-turbo-0613_princeton-nlp__7woQRsdi_0.0_2023-09-21-16-19-51.json"), 2)),
        "webvoyager": (".json", _json("webvoyager/results/examples/taskApple--17/interact_messages.json")),
        # the shapes of any agent (fixtures of tests/trajectories/test_shapes_*.py)
        "openai_chat": (".json", {"messages": shapes_chat.OPENAI}),
        "mcp_jsonrpc": (".jsonl", shapes_chat.MCP_LOG),
        "atif": (".json", shapes_records.ATIF),
        "otel": (".json", shapes_records.otlp([shapes_records.tool_span("t", "s1", 1, "web_search", {"q": "x"}, "result"),
                                               shapes_records.tool_span("t", "s2", 2, "bash", {"c": "ls"}, "a b")])),
        "sharegpt": (".jsonl", [{"conversations": [{"from": "human", "value": "q"}, {"from": "function_call", "value": '{"name": "f", "arguments": {}}'},
                                                   {"from": "observation", "value": "r"}, {"from": "gpt", "value": "a"}]}]),
    }


SAMPLES = _samples()
FIELDS = ["role", "content", "action", "observation", "args", "cause", "id", "source", "history", "trajectory", "tool_calls",
          "messages", "turn_history", "actions", "observations", "traj", "answer_details", "is_demo", "message", "extras",
          "tool_call_id", "function", "from", "value", "conversations", "steps", "results", "source_call_id", "resourceSpans",
          "attributes", "params", "result", "jsonrpc", "method"]


def _encode(suffix: str, value: object) -> bytes:
    if suffix == ".jsonl" and isinstance(value, list):
        return "\n".join(json.dumps(v) for v in value).encode()
    return json.dumps(value).encode()


@st.composite
def mutated_files(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """``(format name, suffix, file bytes)``: a real excerpt with its records edited."""
    name = draw(st.sampled_from(sorted(SAMPLES)))
    suffix, doc = SAMPLES[name]
    if suffix == ".jsonl":  # edit one line, or add lines that are not JSON
        lines = list(doc)
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = draw(mutated(lines[i], FIELDS, json_values))
        raw = _encode(suffix, lines)
        if draw(st.booleans()):
            raw += b"\n" + draw(st.sampled_from([b"{", b"not json", b"[]", b"null", b"\"\\ud800\"", b"   ", b"{\"a\": 1e999}"]))
        return name, suffix, raw
    return name, suffix, _encode(suffix, draw(mutated(doc, FIELDS, json_values)))


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """``(format name, suffix, file bytes)``: a real excerpt's bytes cut, flipped or padded."""
    name = draw(st.sampled_from(sorted(SAMPLES)))
    suffix, doc = SAMPLES[name]
    raw = bytearray(_encode(suffix, doc))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(raw)))
        op = draw(st.sampled_from(["truncate", "flip", "insert", "bom"]))
        if op == "truncate":
            del raw[i:]
        elif op == "flip" and i < len(raw):
            raw[i] ^= draw(st.integers(1, 255))
        elif op == "insert":
            raw[i:i] = draw(st.binary(max_size=8) | st.sampled_from([b"\xff\xfe", b"\xc3", b"\x00", b"\n", b"]", b"}", b"\\u"]))
        else:
            raw[0:0] = b"\xef\xbb\xbf"
    return name, suffix, bytes(raw)


def _check_records(records: list, raw: bytes) -> None:
    sha = hashlib.sha1(raw).hexdigest()
    assert records, "every file yields at least one record"
    for rec in records:
        assert isinstance(rec, (Trajectory, Quarantined)), type(rec)
        assert rec.file_sha1 == sha and isinstance(rec.locator, str) and rec.locator
        if isinstance(rec, Quarantined):
            assert isinstance(rec.reason, str) and rec.reason
            continue
        assert rec.format in FORMATS and rec.domain in DOMAINS
        assert isinstance(rec.task, str) and isinstance(rec.source, str)
        assert all(isinstance(t, Turn) and isinstance(t.action, str) and isinstance(t.observation, str) for t in rec.turns)
    event(f"{sum(isinstance(r, Trajectory) for r in records)} kept / {len(records)}")


def _read(suffix: str, raw: bytes) -> list:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"fuzzed{suffix}"
        path.write_bytes(raw)
        return list(read_file(path))


@fuzz(weight=1.5)
@given(mutated_files())
def test_mutated_records_are_read_or_quarantined(case):
    name, suffix, raw = case
    with bounded("trajectories", 10):
        records = _read(suffix, raw)
    _check_records(records, raw)
    if suffix == ".jsonl" and not (len(records) == 1 and records[0].locator == "file"):
        lines = sum(1 for line in raw.decode("utf-8-sig").split("\n") if line.strip())
        if all(r.locator.startswith("line ") for r in records):
            assert len(records) == lines  # one record per line
        else:  # a format that groups lines (MCP logs, OTel exports, per-step records): bad lines + groups
            assert len(records) <= lines


@fuzz(weight=1)
@given(damaged_files())
def test_damaged_files_are_read_or_quarantined(case):
    name, suffix, raw = case
    with bounded("trajectories", 10):
        records = _read(suffix, raw)
    _check_records(records, raw)


@fuzz(weight=0.5)
@given(st.lists(mutated_files() | damaged_files(), min_size=1, max_size=4), st.booleans())
def test_a_batch_balances(cases, twice):
    with tempfile.TemporaryDirectory() as folder, bounded("trajectories", 20):
        root = Path(folder) / "in"
        for i, (name, suffix, raw) in enumerate(cases):
            (root / name).mkdir(parents=True, exist_ok=True)
            (root / name / f"f{i}{suffix}").write_bytes(raw)
        paths = [root, root / cases[0][0]] if twice else [root]  # twice: the same files reached through two paths
        expected = sum(len(list(read_file(f))) for p in paths for f in sorted(p.rglob("*")) if f.is_file())
        batch = read_batch(paths)
        assert batch.records_in == expected == batch.trajectories.height + batch.quarantine.height
        assert batch.turns.height == batch.trajectories["n_turns"].sum()


@fuzz(weight=0.15)
@given(st.lists(mutated_files(), min_size=1, max_size=3))
def test_an_ingest_balances_in_the_store(cases):
    with tempfile.TemporaryDirectory() as folder, bounded("trajectories", 60):
        root = Path(folder) / "in"
        root.mkdir()
        for i, (name, suffix, raw) in enumerate(cases):
            (root / f"{name}-{i}{suffix}").write_bytes(raw)
        report = ingest([root], Warehouse(Path(folder) / "wh"))
        assert report.tally.balanced
        stored = balance(report.path)
        assert stored.balanced and stored.inputs == report.tally.inputs and stored.kept == report.tally.kept
