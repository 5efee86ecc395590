"""The tool surface is declared once (worldforge.simenv.tools): every adapter shows the same
names, parameters and descriptions."""

import asyncio
import inspect
from pathlib import Path

import pytest
from transformers.utils import get_json_schema

from worldforge.rl.env import SUBMIT_SCHEMA, SearchWorldEnv
from worldforge.rl.openenv import TOOLS as OPENENV_TOOLS
from worldforge.rl.openenv import RemoteSearchWorld, SearchAction
from worldforge.rl.trl import SearchWorldToolEnv, TRLTools
from worldforge.serving.episodes import EpisodeService
from worldforge.serving.search import build_mcp
from worldforge.simenv.env import TOOL_SCHEMAS, TOOLS
from worldforge.simenv.tools import EPISODE_TOOLS, SEARCH_TOOLS, SUBMIT, Param, Tool
from worldforge.warehouse.layout import Warehouse

DECLARED = {t.name: t for t in EPISODE_TOOLS}


def _surface(tool: Tool) -> dict:
    """What every adapter must agree on: the description, and each parameter's description and requiredness."""
    return {"description": tool.description, "params": {p.name: (p.description, p.required) for p in tool.params}}


def _from_schema(schema: dict) -> dict:
    fn = schema["function"] if "function" in schema else schema
    props, required = fn["parameters"]["properties"], set(fn["parameters"].get("required", []))
    return {"description": fn["description"], "params": {k: (v["description"], k in required) for k, v in props.items()}}


def test_the_declaration_names_four_tools_in_order():
    assert [t.name for t in EPISODE_TOOLS] == ["web_search", "web_extractor", "dict_memory", "submit"]
    assert SEARCH_TOOLS == EPISODE_TOOLS[:3]


def test_the_openai_schemas_of_the_http_server_and_openenv_are_the_declared_ones():
    assert TOOLS == ("web_search", "web_extractor", "dict_memory")
    assert [_from_schema(s) for s in TOOL_SCHEMAS] == [_surface(t) for t in SEARCH_TOOLS]
    assert [_from_schema(s) for s in OPENENV_TOOLS] == [_surface(t) for t in EPISODE_TOOLS]
    assert _from_schema(SUBMIT_SCHEMA) == _surface(SUBMIT)
    memory = TOOL_SCHEMAS[2]["function"]["parameters"]["properties"]["operation"]
    assert memory["enum"] == ["add", "update", "retrieve", "retrieve_all", "remove", "remove_all"]
    assert TOOL_SCHEMAS[0]["function"]["parameters"]["properties"]["page"]["minimum"] == 1
    assert SearchAction.model_json_schema()["properties"]["tool"]["enum"] == list(DECLARED)


@pytest.mark.parametrize("cls", [TRLTools, SearchWorldToolEnv, RemoteSearchWorld])
def test_trl_reads_the_declared_tools_off_the_methods(cls):
    for name, tool in DECLARED.items():
        schema = get_json_schema(getattr(cls, name))
        assert schema["function"]["name"] == name
        assert _from_schema(schema) == _surface(tool)
    dict_memory = get_json_schema(cls.dict_memory)["function"]["parameters"]["properties"]
    assert dict_memory["operation"]["enum"] == list(next(p.enum for p in DECLARED["dict_memory"].params if p.name == "operation"))


def test_the_core_env_methods_take_the_declared_arguments():
    for tool in SEARCH_TOOLS:
        params = list(inspect.signature(getattr(SearchWorldEnv, tool.name)).parameters)
        assert params == ["self", *(p.name for p in tool.params)]
    assert list(inspect.signature(SearchWorldEnv.submit).parameters) == ["self", "answer"]


def test_the_mcp_tools_are_the_declared_ones_plus_the_stateless_session_id(tmp_path: Path):
    listed = asyncio.run(build_mcp("any", EpisodeService(Warehouse.of(tmp_path), agent="mcp")).list_tools())
    assert [t.name for t in listed] == list(TOOLS)
    for t in listed:
        props, required = t.input_schema["properties"], set(t.input_schema.get("required", []))
        assert props.pop("session_id")["default"] is None  # the stateless protocol's session (transport, not the tool's)
        got = {"description": t.description, "params": {k: (v["description"], k in required) for k, v in props.items()}}
        assert got == _surface(DECLARED[t.name])
    memory = next(t for t in listed if t.name == "dict_memory").input_schema["properties"]["operation"]
    assert memory["enum"] == ["add", "update", "retrieve", "retrieve_all", "remove", "remove_all"]


def test_a_generated_method_binds_like_a_written_one():
    seen = []
    echo = Tool("echo", "Echo.", (Param("text", str, "What to echo.", required=True), Param("times", int, "How often.")), "The text.")
    method = echo.method(lambda obj, name, arguments: seen.append((obj, name, arguments)) or "ok")
    assert method("me", "hi") == "ok" and seen[-1] == ("me", "echo", {"text": "hi"})  # None arguments are left out
    assert method("me", text="hi", times=2) == "ok" and seen[-1][2] == {"text": "hi", "times": 2}
    with pytest.raises(TypeError):
        method("me", txt="hi")
    with pytest.raises(TypeError):
        method("me")
    assert method.__name__ == "echo" and "Args:\n    text: What to echo." in method.__doc__


def test_generated_methods_pickle_by_reference_like_written_ones():
    import pickle

    for cls in (TRLTools, SearchWorldEnv):
        for tool in (SEARCH_TOOLS if cls is SearchWorldEnv else EPISODE_TOOLS):
            method = getattr(cls, tool.name)
            assert method.__qualname__ == f"{cls.__name__}.{tool.name}"
            assert pickle.loads(pickle.dumps(method)) is method


def test_every_trl_adapter_submits_the_answer_as_text():
    class Capture(TRLTools):
        def _call(self, tool, arguments):
            return repr((tool, arguments))

    assert Capture().submit(42) == repr(("submit", {"answer": "42"}))  # a policy's JSON number is still an answer
    assert Capture().submit("| a |") == repr(("submit", {"answer": "| a |"}))
    assert Capture().web_search(queries=["a", "b"]) == repr(("web_search", {"queries": ["a", "b"]}))
