"""Chat-shaped trajectories of agents worldforge was never shown (readers/chat.py).

The fixtures are written here from the formats' public documentation: the OpenAI Chat
Completions message schema (``tool_calls``/``role: tool``, legacy ``function_call``), MCP's
``CallToolResult`` as Python SDK clients print it, Hermes/Qwen function calling
(``<tool_call>``/``<tool_response>``), Cline's XML tool use (``<use_mcp_tool>``,
``<execute_command>``) and mini-SWE-agent's fenced bash with ``<returncode>``/``<output>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldforge.trajectories import Quarantined, Trajectory, read_file
from worldforge.trajectories.readers.chat import NO_ACTIONS, NO_OBSERVATIONS, unwrap_result


def call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def read(tmp_path: Path, name: str, content: object) -> list[Trajectory | Quarantined]:
    f = tmp_path / name
    if name.endswith(".jsonl"):
        f.write_text("".join(json.dumps(x) + "\n" for x in content))
    else:
        f.write_text(json.dumps(content))
    return list(read_file(f))


def actions(tr: Trajectory) -> list[tuple[str, object]]:
    return [(json.loads(t.action)["name"], json.loads(t.action)["arguments"]) for t in tr.turns]


OPENAI = [
    {"role": "developer", "content": "You are a support agent. Use tools."},
    {"role": "system", "content": "Today is 2029-03-05."},
    {"role": "user", "content": "What is the weather in Oslo and in Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_weather", {"city": "Oslo"}), call("c2", "get_weather", {"city": "Rome"})]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"temp_c": 18, "sky": "clear"}'},
    {"role": "tool", "tool_call_id": "c1", "content": "meta=None content=[TextContent(type='text', text='-3 C, it\\'s snowing', annotations=None, meta=None)] structuredContent=None isError=False"},
    {"role": "assistant", "content": None, "tool_calls": [call("c3", "get_weather", {"city": "Atlantis"})]},
    {"role": "tool", "tool_call_id": "c3", "content": "CallToolResult(content=[TextContent(type='text', text=\"unknown city 'Atlantis'\")], isError=True)"},
    {"role": "assistant", "content": "Oslo: -3 C and snowing; Rome: 18 C and clear."},
]


def test_openai_tool_calls_pair_by_id_and_unwrap_call_tool_results(tmp_path):
    [tr] = read(tmp_path, "weather.json", OPENAI)
    assert (tr.source, tr.format, tr.domain, tr.locator) == ("openai-chat", "chat_messages_json", "tool", "file")
    assert tr.task == "What is the weather in Oslo and in Rome?"  # developer/system messages are never the task or turns
    assert actions(tr) == [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Atlantis"})]
    assert [t.observation for t in tr.turns] == ["-3 C, it's snowing", '{"temp_c": 18, "sky": "clear"}', "Error: unknown city 'Atlantis'"]


def test_wrappers_lists_and_json_lines(tmp_path):
    wrapped = {"id": "ep-1", "instruction": "Check Oslo", "conversation": OPENAI[2:6]}
    [tr] = read(tmp_path, "one.json", wrapped)
    assert tr.task == "Check Oslo" and len(tr.turns) == 2
    many = read(tmp_path, "many.json", [wrapped, {"messages": OPENAI}, {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}])
    assert [(r.locator, type(r).__name__) for r in many] == [("item 0", "Trajectory"), ("item 1", "Trajectory"), ("item 2", "Quarantined")]
    assert many[2].reason == NO_ACTIONS
    lines = read(tmp_path, "runs.jsonl", [{"messages": OPENAI}, OPENAI[2:5]])
    assert [(r.locator, r.format, len(r.turns)) for r in lines] == [("line 1", "chat_messages_jsonl", 3), ("line 2", "chat_messages_jsonl", 1)]


def test_legacy_function_call_answered_by_function_message(tmp_path):
    msgs = [{"role": "user", "content": "Search for the 2029 Aurora phone"},
            {"role": "assistant", "content": None, "function_call": {"name": "web_search", "arguments": '{"query": "Aurora X 2029"}'}},
            {"role": "function", "name": "web_search", "content": "Aurora X: 6.1-inch, released 2029-02"},
            {"role": "assistant", "content": "It came out in February 2029."}]
    [tr] = read(tmp_path, "legacy.json", {"messages": msgs})
    assert (tr.source, tr.domain) == ("openai-chat", "search")
    assert actions(tr) == [("web_search", {"query": "Aurora X 2029"})]
    assert tr.turns[0].observation == "Aurora X: 6.1-inch, released 2029-02"


def test_hermes_tool_calls_with_tool_responses(tmp_path):
    msgs = [{"role": "system", "content": "<tools>[...]</tools>"},
            {"role": "user", "content": "Add 2 and 3, then echo done"},
            {"role": "assistant", "content": 'Let me compute.\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>\n'
                                              '<tool_call>\n{"name": "echo", "arguments": {"text": "done"}}\n</tool_call>'},
            {"role": "tool", "content": "<tool_response>\n5\n</tool_response>\n<tool_response>\ndone\n</tool_response>"},
            {"role": "assistant", "content": "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 5, \"b\": 1}}\n</tool_call>"},
            {"role": "user", "content": "<tool_response>\n6\n</tool_response>"},
            {"role": "assistant", "content": "The answer is 6."}]
    [tr] = read(tmp_path, "hermes.json", msgs)
    assert tr.source == "hermes-chat"
    assert actions(tr) == [("add", {"a": 2, "b": 3}), ("echo", {"text": "done"}), ("add", {"a": 5, "b": 1})]
    assert [t.observation for t in tr.turns] == ["5", "done", "6"]


def test_xml_tool_use_blocks(tmp_path):
    msgs = [{"role": "system", "content": "You are Cline."},
            {"role": "user", "content": "<task>List the repo and read the weather</task>"},
            {"role": "assistant", "content": "<thinking>Look first.</thinking>\n<execute_command>\n<command>ls -1</command>\n"
                                              "<requires_approval>false</requires_approval>\n</execute_command>"},
            {"role": "user", "content": "[execute_command for 'ls -1'] Result:\nREADME.md\nsrc"},
            {"role": "assistant", "content": "<use_mcp_tool>\n<server_name>weather</server_name>\n<tool_name>get_forecast</tool_name>\n"
                                              '<arguments>\n{"city": "Oslo", "days": 2}\n</arguments>\n</use_mcp_tool>'},
            {"role": "user", "content": "[use_mcp_tool for 'weather'] Result:\nsnow, then sun"},
            {"role": "assistant", "content": "<attempt_completion>\n<result>Done.</result>\n</attempt_completion>"},
            {"role": "user", "content": "thanks"}]
    [tr] = read(tmp_path, "cline.json", msgs)
    assert tr.source == "xml-tool-chat"
    assert actions(tr) == [("execute_command", {"command": "ls -1", "requires_approval": "false"}),
                           ("weather.get_forecast", {"city": "Oslo", "days": 2})]
    assert tr.turns[1].observation.endswith("snow, then sun")
    assert len(tr.turns) == 2  # attempt_completion talks to the user: not an action


@pytest.mark.parametrize("tag", ["bash", "mswea_bash_command", ""])  # read by shape: the tag may name the agent, or be absent
def test_fenced_bash_answered_by_returncode_and_output(tmp_path, tag):
    msgs = [{"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
            {"role": "user", "content": "<pr_description>Fix the failing test</pr_description>"},
            {"role": "assistant", "content": f"THOUGHT: find the tests.\n\n```{tag}\nfind . -name 'test_*.py'\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n./tests/test_io.py\n</output>"},
            {"role": "assistant", "content": f"THOUGHT: run it.\n\n```{tag}\npytest -q tests/test_io.py\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\nFAILED tests/test_io.py::test_read\n</output>"},
            {"role": "assistant", "content": f"Here is a plan:\n```{tag}\necho not run\n```"},  # unanswered: no action
            {"role": "user", "content": "Please continue."}]
    [tr] = read(tmp_path, "mini.json", {"messages": msgs})
    assert (tr.source, tr.domain) == ("bash-chat", "terminal")
    assert [t.action for t in tr.turns] == ["find . -name 'test_*.py'", "pytest -q tests/test_io.py"]
    assert "FAILED tests/test_io.py::test_read" in tr.turns[1].observation and "<returncode>1</returncode>" in tr.turns[1].observation


def test_react_text_in_a_generic_chat(tmp_path):
    msgs = [{"role": "user", "content": "Who wrote Dune?"},
            {"role": "assistant", "content": "Thought: search it\nAction: search[Dune novel]"},
            {"role": "user", "content": "Observation: Dune is a 1965 novel by Frank Herbert."},
            {"role": "assistant", "content": "Action: finish[Frank Herbert]"}]
    [tr] = read(tmp_path, "react.json", {"history": msgs})
    assert (tr.source, tr.domain) == ("react-chat", "search")
    assert [(t.action, t.observation) for t in tr.turns] == [("search[Dune novel]", "Dune is a 1965 novel by Frank Herbert.")]


def test_actions_without_observations_are_quarantined_not_half_read(tmp_path):
    msgs = [{"role": "user", "content": "click around"},
            {"role": "assistant", "content": None, "tool_calls": [call("a", "click", {"x": 1, "y": 2})]},
            {"role": "assistant", "content": None, "tool_calls": [call("b", "click", {"x": 3, "y": 4})]}]
    [q] = read(tmp_path, "clicks.json", msgs)
    assert isinstance(q, Quarantined) and q.reason == NO_OBSERVATIONS


@pytest.mark.parametrize(("content", "text"), [
    ({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "..."}, {"type": "text", "text": "b"}], "isError": False}, "a\nb"),
    ('{"content": [{"type": "text", "text": "boom"}], "isError": true}', "Error: boom"),
    ('{"content": "not a result"}', '{"content": "not a result"}'),
    ("[TextContent(type='text', text='x')]", "[TextContent(type='text', text='x')]"),
    ("meta=None content=[TextContent(type='text', text='line1\\nline2', annotations=None, meta=None)] structuredContent={'a': 1} isError=False", "line1\nline2"),
    ('{"rows": 3}', '{"rows": 3}'),
])
def test_unwrap_result(content, text):
    assert unwrap_result(content) == text


def rpc_call(i: int, name: str, args: dict) -> dict:
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": args}}


def rpc_result(i: int, text: str, error: bool = False) -> dict:
    return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}], "isError": error}}


MCP_LOG = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}}},
    {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "search", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "web_search", "inputSchema": {"type": "object"}}]}},
    rpc_call(2, "web_search", {"query": "Aurora X price"}),
    rpc_call(3, "web_extractor", {"url": "https://example.test/aurora"}),
    rpc_result(3, "Aurora X costs $799"),
    rpc_result(2, "1. Aurora X review ..."),
    rpc_call(4, "web_search", {"query": ""}),
    {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "query must not be empty"}},
    rpc_call(5, "web_search", {"query": "never answered"}),
]


def test_mcp_jsonrpc_log_lines_bare_and_wrapped(tmp_path):
    [tr] = read(tmp_path, "mcp.jsonl", MCP_LOG)
    assert (tr.source, tr.format, tr.domain, tr.locator) == ("mcp-jsonrpc", "mcp_jsonrpc_jsonl", "search", "file")
    assert actions(tr) == [("web_search", {"query": "Aurora X price"}), ("web_extractor", {"url": "https://example.test/aurora"}),
                           ("web_search", {"query": ""})]
    assert [t.observation for t in tr.turns] == ["1. Aurora X review ...", "Aurora X costs $799", "Error: query must not be empty"]
    wrapped = [{"timestamp": f"2029-03-05T10:00:0{i % 10}Z", "direction": "send" if "method" in m else "recv",
                "session_id": "s1" if i < 9 else "s2", "message": m} for i, m in enumerate(MCP_LOG)]
    out = read(tmp_path, "wrapped.json", [*wrapped, {"note": "not a message"}])
    q = [r for r in out if isinstance(r, Quarantined)]
    kept = [r for r in out if isinstance(r, Trajectory)]
    assert [(r.locator, len(r.turns)) for r in kept] == [("session s1", 2), ("session s2", 1)]
    assert [(r.locator, r.reason) for r in q] == [("item 12", "not a JSON-RPC message")]


def test_mcp_log_of_unanswered_calls_is_quarantined(tmp_path):
    [q] = read(tmp_path, "unanswered.jsonl", [rpc_call(1, "click", {"x": 1}), rpc_call(2, "click", {"x": 2})])
    assert isinstance(q, Quarantined) and q.reason == NO_OBSERVATIONS


def test_an_object_of_chats_keyed_by_episode_id(tmp_path):
    out = read(tmp_path, "by_id.json", {"ep-7": {"messages": OPENAI}, "ep-8": {"messages": OPENAI[2:5]}, "ep-9": {"note": "no chat"}})
    assert [(r.locator, type(r).__name__) for r in out] == [("key ep-7", "Trajectory"), ("key ep-8", "Trajectory"), ("key ep-9", "Quarantined")]
    assert [len(r.turns) for r in out[:2]] == [3, 1]


def test_html_in_an_assistant_reply_is_not_a_tool_call(tmp_path):
    msgs = [{"role": "user", "content": "Write a list in HTML"},
            {"role": "assistant", "content": "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"},
            {"role": "user", "content": "thanks"}]
    [q] = read(tmp_path, "html.json", msgs)
    assert isinstance(q, Quarantined) and q.reason == NO_ACTIONS
