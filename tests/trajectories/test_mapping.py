"""The declarative mapping (``worldforge trajectories ingest PATH --mapping map.yaml``) on invented formats.

Fixtures in ``fixtures/mapping/``: ``chatlog`` (messages mode: custom role names, tool calls nested
under ``actions.invocations``, results paired by id and answered out of order) and ``gui`` (steps
mode, JSONL, actions built from ``tool_name``/``tool_arguments``).
"""

import json
from pathlib import Path

import duckdb
import jmespath
import pytest
from typer.testing import CliRunner

from tests.conftest import TRAJECTORIES
from worldforge.cli import app
from worldforge.trajectories import Quarantined, Trajectory, balance, ingest
from worldforge.trajectories.readers import read_file, read_path
from worldforge.trajectories.readers.mapping import MappingError, _getter, load_mapping, mapping_from_dict
from worldforge.warehouse import Warehouse

FIX = Path(__file__).parent / "fixtures" / "mapping"
runner = CliRunner()


def _read(yaml_name: str, data_name: str) -> tuple[list[Trajectory], list[Quarantined]]:
    recs = list(read_file(FIX / data_name, mapping=load_mapping(FIX / yaml_name)))
    return [r for r in recs if isinstance(r, Trajectory)], [r for r in recs if isinstance(r, Quarantined)]


def _call(tool: str, **arguments) -> str:
    return json.dumps({"name": tool, "arguments": arguments})


def test_messages_mode_custom_roles_nested_tool_calls_paired_by_id():
    kept, quarantined = _read("chatlog.yaml", "chatlog.json")
    assert [t.locator for t in kept] == ["id s-001", "id s-002"]
    first, second = kept
    assert (first.source, first.format, first.domain) == ("chatlog-agent", "chatlog_sessions_json", "terminal")
    assert first.task == "How many CSV files are in /data?"
    assert [(t.action, t.observation) for t in first.turns] == [
        (_call("bash", cmd="ls /data"), "a.csv\nb.csv\nnotes.txt"),
        (_call("bash", cmd="wc -l /data/a.csv"), "12 /data/a.csv"),  # answered second: paired by id, not order
        (_call("bash", cmd="wc -l /data/b.csv"), "7 /data/b.csv"),  # arguments as a JSON string are decoded
    ]
    assert second.domain == "search" and second.task == "Find the weather in Oslo"
    assert [(t.action, t.observation) for t in second.turns] == [(_call("web_search", query="Oslo weather"), "Oslo: 3 C, light snow")]
    assert {(q.locator, q.reason) for q in quarantined} == {
        ("id s-003", "mapping key messages: expected a list of messages, got text"),
        ("id s-004", "actions without observations: nothing to learn from"),
    }
    assert all(q.file_sha1 and q.source_path == "chatlog.json" for q in quarantined)


def test_steps_mode_jsonl():
    kept, quarantined = _read("gui.yaml", "gui.jsonl")
    assert [(t.locator, t.task, len(t.turns)) for t in kept] == [("id 7", "Turn on Wi-Fi", 3), ("id 8", "Set an alarm", 2)]
    assert all(t.domain == "android" and t.source == "gui-agent" and t.format == "gui_steps_jsonl" for t in kept)
    wifi = kept[0].turns
    assert wifi[0].action == _call("open_app", name="Settings") and wifi[0].observation == '[{"id": 1, "text": "Network"}]'
    assert wifi[2].action == _call("tap", element=4) and '"checked": true' in wifi[2].observation  # the last step has no screen: no turn
    assert kept[1].turns[1].action == _call("tap")  # no args: empty arguments
    assert [(q.locator, q.reason) for q in quarantined] == [
        ("id 9", "actions without observations: nothing to learn from"),
        ("id 10", "mapping key steps: expected a list of steps, got nothing"),
        ("line 5", "invalid JSON (Unterminated string starting at at column 61)"),
    ]


def test_text_actions_answered_by_user_messages_with_a_prefix(tmp_path):
    # messages mode without tool calls: the assistant text is the action, the next user message its observation
    doc = [
        {"conv": [{"from": "human", "value": "Find the capital of Peru"},
                  {"from": "gpt", "value": "search[Peru capital]"},
                  {"from": "human", "value": "Observation: Lima is the capital of Peru."},
                  {"from": "gpt", "value": "finish[Lima]"}]},
        {"conv": [{"from": "gpt", "value": "lookup[x]"}, {"from": "narrator", "value": "ignored role"}]},
        {"conv": [{"value": "no role here"}]},
    ]
    (tmp_path / "react.json").write_text(json.dumps(doc))
    m = mapping_from_dict({"source": "react-like", "messages": "conv", "role": '"from"', "content": "value",
                           "roles": {"user": "human", "assistant": "gpt"}, "observation_role": "user",
                           "observation_prefix": "Observation:"})
    recs = list(read_path([tmp_path], mapping=m))
    assert isinstance(recs[0], Trajectory) and recs[0].locator == "item 0" and recs[0].format == "mapping:react-like"
    assert recs[0].task == "Find the capital of Peru" and recs[0].domain == "search"
    assert [(t.action, t.observation) for t in recs[0].turns] == [("search[Peru capital]", "Lima is the capital of Peru.")]
    assert recs[1] == Quarantined("react.json", "item 1", "actions without observations: nothing to learn from", recs[1].file_sha1)
    assert recs[2].reason == "mapping key role: message 0: expected a role name, got nothing"


def test_tool_calls_paired_in_order_with_openai_defaults(tmp_path):
    # without tool_call_id, calls are answered by the next tool messages in order; tool_name and
    # tool_arguments default to OpenAI's function.name / function.arguments
    rec = {"id": "x", "msgs": [
        {"role": "user", "content": "list then read"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "list_files", "arguments": "{\"path\": \"/\"}"}},
            {"function": {"name": "read_file", "arguments": "{\"path\": \"/a\"}"}}]},
        {"role": "tool", "content": [{"type": "text", "text": "a"}]},
        {"role": "tool", "content": "hello"},
    ]}
    (tmp_path / "chat.jsonl").write_text(json.dumps(rec) + "\n")
    m = mapping_from_dict({"source": "chat", "domain": "mcp", "messages": "msgs", "tool_calls": "tool_calls"})
    (t,) = read_path([tmp_path], mapping=m)
    assert t.locator == "line 1" and t.domain == "mcp"
    assert [(x.action, x.observation) for x in t.turns] == [(_call("list_files", path="/"), "a"), (_call("read_file", path="/a"), "hello")]


@pytest.mark.parametrize(("doc", "message"), [
    ({"source": "x", "messages": "log[?"}, "messages: not a valid JMESPath expression 'log[?'"),
    ({"messages": "log"}, "source: required key missing"),
    ({"source": "x", "messages": "log", "tool_call": "calls"}, "tool_call: unknown key (not part of the mapping language; did you mean tool_calls?)"),
    ({"source": "x", "messages": "log", "steps": "steps"}, "give exactly one of `messages` (messages mode) or `steps` (steps mode)"),
    ({"source": "x", "steps": "s", "observation": "o", "action": "a", "roles": {"user": "u"}}, "roles: not a key of steps mode"),
    ({"source": "x", "messages": "m", "roles": {"user": "a", "assistant": ["b", "a"]}}, "roles: Value error, the role name 'a' is mapped to both user and assistant"),
    ({"source": "x", "messages": "m", "roles": {"robot": "r"}}, "roles.robot: Input should be 'system', 'user', 'assistant' or 'tool'"),
    ({"source": "x", "messages": "m", "domain": "games"}, "domain: unknown domain 'games'"),
    ({"source": "x", "messages": "m", "roles": {"user": 3}}, "roles.user: expected a role name or a list of role names"),
    ({"source": "x", "messages": "m", "tool_call_id": "id", "tool_result_id": "rid"}, "need `tool_calls`"),
    ({"source": "x", "steps": "s", "action": "a"}, "steps mode needs `observation`"),
])
def test_bad_mapping_names_the_key(doc, message):
    with pytest.raises(MappingError) as exc:
        mapping_from_dict(doc, "map.yaml")
    assert str(exc.value).startswith("map.yaml: invalid trajectory mapping: ")
    assert message.removeprefix("roles: Value error, ") in str(exc.value)
    assert "\n" not in str(exc.value)


def test_load_mapping_file_errors(tmp_path):
    with pytest.raises(MappingError, match="file not found"):
        load_mapping(tmp_path / "nope.yaml")
    (tmp_path / "bad.yaml").write_text("source: x\nmessages: [unclosed\n")
    with pytest.raises(MappingError, match=r"line \d+, column \d+: not valid YAML"):
        load_mapping(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- source\n")
    with pytest.raises(MappingError, match="expected a mapping of keys at the top level, got list"):
        load_mapping(tmp_path / "list.yaml")


def test_runtime_expression_error_is_quarantined_with_the_key(tmp_path):
    # length() of a number is a JMESPath type error at evaluation time
    (tmp_path / "a.json").write_text(json.dumps({"steps": [{"a": "ls", "o": "x"}], "n": 3}))
    m = mapping_from_dict({"source": "x", "steps": "steps", "action": "a", "observation": "o", "task": "length(n)"})
    (q,) = read_path([tmp_path], mapping=m)
    assert isinstance(q, Quarantined) and q.locator == "file" and q.reason.startswith("mapping key task: ")


def test_cli_ingest_with_mapping_balances(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("chatlog.json", "gui.jsonl"):
        (data / name).write_bytes((FIX / name).read_bytes())
    wh = tmp_path / "wh"
    res = runner.invoke(app, ["trajectories", "ingest", str(data / "gui.jsonl"), "--mapping", str(FIX / "gui.yaml"), "--warehouse", str(wh)])
    assert res.exit_code == 0, res.output
    assert "balanced" in res.output and "gui-agent" in res.output
    t = balance(wh / "trajectories.duckdb")
    assert (t.inputs, t.kept, t.dropped_total) == (5, 2, 3) and t.balanced
    con = duckdb.connect(str(wh / "trajectories.duckdb"), read_only=True)
    try:
        rows = con.execute("SELECT t.source, t.format, t.domain, count(*) FROM turns u JOIN trajectories t USING (trajectory_id) GROUP BY ALL").fetchall()
        assert rows == [("gui-agent", "gui_steps_jsonl", "android", 5)]
        assert con.execute("SELECT count(*) FROM turns WHERE informative IS NULL").fetchone()[0] == 0
        reasons = sorted(r[0] for r in con.execute("SELECT reason FROM quarantine").fetchall())
        assert reasons[0] == "actions without observations: nothing to learn from"
    finally:
        con.close()


def test_cli_bad_mapping_is_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "map.yaml").write_text("source: x\nmessages: 'log[?'\n")
    wh = tmp_path / "wh"
    res = runner.invoke(app, ["trajectories", "ingest", str(FIX / "chatlog.json"), "--mapping", str(tmp_path / "map.yaml"), "--warehouse", str(wh)])
    assert res.exit_code == 2
    assert "invalid trajectory mapping: messages: not a valid JMESPath expression" in res.output
    assert "Traceback" not in res.output
    assert not (wh / "trajectories.duckdb").exists()


def test_ingest_api_with_mapping_keeps_readable_records(tmp_path):
    report = ingest([FIX / "chatlog.json"], Warehouse(tmp_path), mapping=load_mapping(FIX / "chatlog.yaml"))
    assert (report.tally.inputs, report.tally.kept, report.tally.dropped_total) == (4, 2, 2)
    assert report.by_source == {"chatlog-agent": (2, 4)}


def test_steps_with_the_observation_before_the_action(tmp_path):
    # per-step GUI logs often store the screen the action was taken on: the action's result is the next step's screen
    steps = [{"screen": "home", "act": 2}, {"screen": "settings", "act": 5}, {"screen": "wifi on", "act": 0}]
    (tmp_path / "a.json").write_text(json.dumps({"goal": "wifi", "steps": steps}))
    m = mapping_from_dict({"source": "gui", "domain": "android", "task": "goal", "steps": "steps", "action": "act",
                           "observation": "screen", "observation_before_action": True})
    (t,) = read_path([tmp_path], mapping=m)
    assert [(x.action, x.observation) for x in t.turns] == [("2", "settings"), ("5", "wifi on")]  # numeric action codes as text
    with pytest.raises(MappingError, match="observation_before_action: not a key of messages mode"):
        mapping_from_dict({"source": "x", "messages": "m", "observation_before_action": True})


@pytest.mark.parametrize("expr", ["a", "a.b", '"from"', 'a."b-c".d'])
@pytest.mark.parametrize("data", [{"a": {"b": 1, "b-c": {"d": [1]}}, "from": "x"}, {"a": [1, 2]}, {"a": None}, [{"a": 1}], None, "text", {}])
def test_dotted_paths_evaluate_as_jmespath_does(expr, data):
    assert _getter(expr)(data) == jmespath.search(expr, data)


def test_known_sources_through_a_mapping_match_their_readers():
    # two of the seven shared sources read by a few lines of mapping instead of their reader
    swe = mapping_from_dict({"source": "swe-agent", "steps": "trajectory", "action": "action", "observation": "observation"})
    native = [r for r in read_path([TRAJECTORIES / "swe-agent"]) if isinstance(r, Trajectory)]
    mapped = [r for r in read_path([TRAJECTORIES / "swe-agent"], mapping=swe) if isinstance(r, Trajectory)]
    assert [t.turns for t in mapped] == [t.turns for t in native] and len(native) == 6
    tau = mapping_from_dict({"source": "tau-bench", "domain": "tool", "messages": "traj", "tool_calls": "tool_calls",
                             "tool_call_id": "id", "tool_result_id": "tool_call_id"})
    native = {r.locator: r for r in read_path([TRAJECTORIES / "tau-bench"]) if isinstance(r, Trajectory)}
    recs = list(read_path([TRAJECTORIES / "tau-bench"], mapping=tau))
    mapped = {r.locator: r for r in recs if isinstance(r, Trajectory)}
    assert len(recs) == len(native) == 200
    # the records without a tool call are quarantined by the mapping (no actions), kept with 0 turns by the reader
    assert {k for k, t in native.items() if not t.turns} == {r.locator for r in recs if isinstance(r, Quarantined)}
    assert all([u.action for u in t.turns] == [u.action for u in native[k].turns] and t.task == native[k].task for k, t in mapped.items())
    assert sum(len(t.turns) for t in mapped.values()) == sum(len(t.turns) for t in native.values()) == 1164
