"""Record-shaped trajectories: ShareGPT, ATIF, OpenTelemetry GenAI spans, per-step records.

Fixtures written here from the public documentation of each format: ShareGPT / LLaMA-Factory's
``function_call``/``observation`` speakers, Harbor's ATIF RFC (v1.4), the OTLP JSON encoding with
the GenAI semantic conventions (``execute_tool`` spans), and AITW/AndroidControl-style step logs.
"""

from __future__ import annotations

import json
from pathlib import Path

from worldforge.trajectories import Quarantined, Trajectory, read_file
from worldforge.trajectories.readers.chat import NO_ACTIONS, NO_OBSERVATIONS


def read(tmp_path: Path, name: str, content: object) -> list[Trajectory | Quarantined]:
    f = tmp_path / name
    f.write_text("".join(json.dumps(x) + "\n" for x in content) if name.endswith(".jsonl") else json.dumps(content))
    return list(read_file(f))


def names_args(tr: Trajectory) -> list[tuple[str, object]]:
    return [(json.loads(t.action)["name"], json.loads(t.action)["arguments"]) for t in tr.turns]


def test_sharegpt_with_function_call_and_observation(tmp_path):
    rec = {"conversations": [
        {"from": "human", "value": "How many rows does the phones table have?"},
        {"from": "function_call", "value": json.dumps({"name": "sql", "arguments": {"q": "SELECT count(*) FROM phones"}})},
        {"from": "observation", "value": "412"},
        {"from": "gpt", "value": "It has 412 rows."}], "system": "You can run SQL.", "tools": "[]"}
    plain = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
    out = read(tmp_path, "sg.json", [rec, plain])
    assert isinstance(out[0], Trajectory) and (out[0].source, out[0].format, out[0].locator) == ("sharegpt", "sharegpt_json", "item 0")
    assert out[0].task == "How many rows does the phones table have?"
    assert names_args(out[0]) == [("sql", {"q": "SELECT count(*) FROM phones"})] and out[0].turns[0].observation == "412"
    assert isinstance(out[1], Quarantined) and out[1].reason == NO_ACTIONS
    [line] = read(tmp_path, "sg.jsonl", [rec])
    assert line.format == "sharegpt_jsonl" and len(line.turns) == 1


ATIF = {
    "schema_version": "ATIF-v1.4", "session_id": "0b7e", "agent": {"name": "terminus", "version": "2.0", "model_name": "qwen3"},
    "steps": [
        {"step_id": 1, "source": "system", "message": "You are in a Linux shell."},
        {"step_id": 2, "source": "user", "message": "Count the log files"},
        {"step_id": 3, "source": "agent", "message": "Listing.", "tool_calls": [
            {"tool_call_id": "call_1", "function_name": "bash", "arguments": {"cmd": "ls /var/log | wc -l"}},
            {"tool_call_id": "call_2", "function_name": "bash", "arguments": {"cmd": "ls /nope"}}],
         "observation": {"results": [{"source_call_id": "call_2", "content": "ls: cannot access '/nope'"},
                                     {"source_call_id": "call_1", "content": "17"}]}},
        {"step_id": 4, "source": "agent", "message": "There are 17.", "tool_calls": [
            {"tool_call_id": "call_3", "function_name": "bash", "arguments": {"cmd": "true"}}]},
    ],
    "final_metrics": {"total_steps": 4},
}


def test_atif_tool_calls_answered_by_source_call_id(tmp_path):
    [tr] = read(tmp_path, "trajectory.json", ATIF)
    assert (tr.source, tr.format, tr.domain, tr.task) == ("atif", "atif_json", "terminal", "Count the log files")
    assert names_args(tr) == [("bash", {"cmd": "ls /var/log | wc -l"}), ("bash", {"cmd": "ls /nope"})]
    assert [t.observation for t in tr.turns] == ["17", "ls: cannot access '/nope'"]  # call_3 is never answered: no turn
    only_calls = {**ATIF, "steps": [ATIF["steps"][3]]}
    [q] = read(tmp_path, "calls.json", only_calls)
    assert isinstance(q, Quarantined) and q.reason == NO_OBSERVATIONS


def attr(key: str, value: object) -> dict:
    kind = {str: "stringValue", int: "intValue", bool: "boolValue", float: "doubleValue"}[type(value)]
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def span(trace: str, sid: str, start: int, attrs: list[dict], status: dict | None = None) -> dict:
    return {"traceId": trace, "spanId": sid, "name": "span", "kind": 1, "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5),
            "attributes": attrs, "status": status or {}}


def tool_span(trace: str, sid: str, start: int, name: str, args: dict, result: str | None, conv: str | None = None, error: bool = False) -> dict:
    attrs = [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", name), attr("gen_ai.tool.call.id", sid),
             attr("gen_ai.tool.call.arguments", json.dumps(args))]
    if result is not None:
        attrs.append(attr("gen_ai.tool.call.result", result))
    if conv:
        attrs.append(attr("gen_ai.conversation.id", conv))
    return span(trace, sid, start, attrs, {"code": 2, "message": "tool failed"} if error else None)


def otlp(spans: list[dict]) -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "agent")]},
                               "scopeSpans": [{"scope": {"name": "agent.tracer"}, "spans": spans}]}]}


def test_otel_genai_execute_tool_spans(tmp_path):
    chat = span("t1", "s0", 100, [attr("gen_ai.operation.name", "chat"),
                                  attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Find Aurora X's price"}]}]))])
    doc = otlp([tool_span("t1", "s2", 300, "web_extractor", {"url": "u"}, "price: $799"),
                chat,
                tool_span("t1", "s1", 200, "web_search", {"query": "Aurora X"}, "1. Aurora X ..."),
                tool_span("t1", "s3", 400, "web_search", {"query": ""}, None, error=True),
                tool_span("t2", "s9", 100, "click", {"x": 1}, None)])
    out = read(tmp_path, "trace.json", doc)
    kept = [r for r in out if isinstance(r, Trajectory)]
    assert [(r.locator, r.source, r.domain, r.task) for r in kept] == [("trace t1", "otel-genai", "search", "Find Aurora X's price")]
    assert names_args(kept[0]) == [("web_search", {"query": "Aurora X"}), ("web_extractor", {"url": "u"}), ("web_search", {"query": ""})]
    assert [t.observation for t in kept[0].turns] == ["1. Aurora X ...", "price: $799", "Error: tool failed"]
    assert [(r.locator, r.reason) for r in out if isinstance(r, Quarantined)] == [("trace t2", NO_OBSERVATIONS)]
    # the collector's file exporter: one export request per line, a conversation spread over lines
    lines = read(tmp_path, "traces.jsonl", [otlp([tool_span("a", "1", 1, "bash", {"c": "ls"}, "x", conv="c1")]),
                                            otlp([tool_span("b", "2", 2, "bash", {"c": "pwd"}, "/", conv="c1")])])
    assert [(r.locator, r.format, len(r.turns)) for r in lines] == [("conversation c1", "otlp_jsonl", 2)]


def test_step_records_android_codes_and_screens(tmp_path):
    ui0 = json.dumps([{"text": "Settings", "bounds": [0, 0, 10, 10]}])
    ui1 = json.dumps([{"text": "Wi-Fi", "bounds": [0, 20, 10, 30]}])
    steps = [
        {"episode_id": "e1", "step_id": 1, "goal": "Turn on Wi-Fi", "ui_elements": ui1, "action_type": 4, "touch_point": [0.1, 0.25]},
        {"episode_id": "e1", "step_id": 0, "goal": "Turn on Wi-Fi", "ui_elements": ui0, "action_type": 4, "touch_point": [0.05, 0.05]},
        {"episode_id": "e1", "step_id": 2, "goal": "Turn on Wi-Fi", "screenshot_path": "e1/2.png", "action_type": 10},
        {"episode_id": "e2", "step_id": 0, "goal": "Open maps", "ui_elements": ui0, "action_type": 6},
    ]
    out = read(tmp_path, "android.jsonl", steps)
    e1 = next(r for r in out if r.locator == "episode e1")
    assert (e1.source, e1.format, e1.domain, e1.task) == ("step-records", "step_records_jsonl", "android", "Turn on Wi-Fi")
    assert names_args(e1) == [("dual_point", {"touch_point": [0.05, 0.05]}), ("dual_point", {"touch_point": [0.1, 0.25]})]
    assert json.loads(e1.turns[0].observation) == json.loads(ui1)  # the screen the tap led to
    assert e1.turns[1].observation == "[screenshot: e1/2.png]"
    e2 = next(r for r in out if r.locator == "episode e2")
    assert isinstance(e2, Quarantined)  # one step: nothing came after its action


def test_step_records_with_results_and_a_clicks_only_file(tmp_path):
    ep = {"task": "find the README", "steps": [
        {"step": 1, "action": {"action_type": "click", "element": "Files"}, "observation": "Files: README.md, src/"},
        {"step": 2, "action": "open(README.md)", "result": "# worldforge"}]}
    [tr] = read(tmp_path, "web.json", ep)
    assert tr.task == "find the README"
    assert [t.observation for t in tr.turns] == ["Files: README.md, src/", "# worldforge"]
    assert json.loads(tr.turns[0].action) == {"name": "click", "arguments": {"element": "Files"}} and tr.turns[1].action == "open(README.md)"
    [q] = read(tmp_path, "clicks.json", [{"action": "click", "x": 10, "y": 20}, {"action": "click", "x": 30, "y": 5}])
    assert isinstance(q, Quarantined) and q.reason == NO_OBSERVATIONS


def test_a_json_array_of_step_records_reads_like_its_lines(tmp_path):
    """A phone-control episode stored as one JSON array whose first step has not acted yet (``"action": null``)."""
    steps = [{"episode_id": "ep7", "step": 0, "goal": "Turn on Wi-Fi", "action": None, "ui_elements": [{"text": "Settings"}]}]
    for i, (act, seen) in enumerate([({"action_type": "click", "x": 50, "y": 20}, "Network"), ({"action_type": "click", "x": 60, "y": 80}, "Wi-Fi"),
                                     ({"action_type": "status", "goal_status": "complete"}, "Wi-Fi on")], 1):
        steps.append({"episode_id": "ep7", "step": i, "goal": "Turn on Wi-Fi", "action": act, "ui_elements": [{"text": seen}]})
    [as_array] = read(tmp_path, "phone.json", steps)
    [as_lines] = read(tmp_path, "phone.jsonl", steps)
    assert isinstance(as_array, Trajectory) and isinstance(as_lines, Trajectory), (as_array, as_lines)
    assert as_array.task == "Turn on Wi-Fi" and as_array.domain == "android"
    assert [t.action for t in as_array.turns] == [t.action for t in as_lines.turns] and len(as_array.turns) == 2
    assert [t.observation for t in as_array.turns] == ['[{"text":"Wi-Fi"}]', '[{"text":"Wi-Fi on"}]']
