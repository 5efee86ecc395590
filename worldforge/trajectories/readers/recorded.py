"""Recordings made by ``worldforge record openai`` and ``worldforge record mcp`` (:mod:`worldforge.recording`).

One JSON object per file, detected by its top-level ``recorder`` key:

* ``{"recorder": "worldforge record openai", "session_id", "upstream", "model", "started_at",
  "ended_at", "tools", "messages"}`` — ``messages`` is the whole OpenAI chat conversation as the
  agent sent it (plus the final assistant reply). Source ``record-openai``; turns are the
  assistant ``tool_calls`` (or legacy ``function_call``, or calls written in the text) paired with
  the ``tool`` messages the agent sent back in its next request, MCP results unwrapped
  (:func:`~worldforge.trajectories.readers.chat.chat_turns`);
  domain from the called tools' names (:func:`~worldforge.trajectories.readers.common.infer_domain`);
  task = the first user message.
* ``{"recorder": "worldforge record mcp", "session_id", "upstream", "tools", "calls": [{"name",
  "arguments", "result_text", "is_error", "started_at", "ended_at"}]}`` — source ``record-mcp``,
  domain ``mcp``; each call is a turn (action = the call as ``{"name", "arguments"}`` JSON,
  observation = the result text, after ``Error: `` when ``is_error`` unless it starts so already).

A recording without a single tool call answered by its result (a plain chat, or calls whose
results never came back) is quarantined — it has nothing to learn from; the recording file stays
in ``WAREHOUSE/recordings/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text, tool_call_text
from worldforge.trajectories.readers.chat import chat_turns
from worldforge.trajectories.readers.common import RecordError, first_user_text, guarded, infer_domain

FORMAT = "worldforge_recording"
SOURCES = {"worldforge record openai": "record-openai", "worldforge record mcp": "record-mcp"}
NO_TURNS = "recording without a tool call answered by its result: nothing to learn from"


def detect(doc: Any, path: str) -> bool:
    """True for a JSON object with a top-level ``recorder`` key."""
    return isinstance(doc, dict) and "recorder" in doc


def _openai(doc: dict, path: str) -> Trajectory:
    messages = doc.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise RecordError("messages is not a list of chat messages")
    turns, names, _ = chat_turns(messages)
    if not turns:
        raise RecordError(NO_TURNS)
    return Trajectory(SOURCES[doc["recorder"]], path, FORMAT, infer_domain(names), first_user_text(messages), "file", turns)


def _result(call: dict) -> str:
    text = as_text(call.get("result_text"))
    return f"Error: {text}" if call.get("is_error") and not text.startswith("Error: ") else text


def _mcp(doc: dict, path: str) -> Trajectory:
    calls = doc.get("calls")
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise RecordError("calls is not a list of tool calls")
    turns = [Turn(tool_call_text(c["name"], c.get("arguments") or {}), _result(c)) for c in calls if c.get("result_text") is not None]
    if not turns:
        raise RecordError(NO_TURNS)
    return Trajectory(SOURCES[doc["recorder"]], path, FORMAT, "mcp", "", "file", turns)


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """One trajectory per recording file (locator ``file``), or one quarantined record with the reason."""
    recorder = doc.get("recorder")
    if recorder not in SOURCES:
        yield Quarantined(path, "file", f"unknown recorder {recorder!r} (known: {', '.join(SOURCES)})")
        return
    yield guarded(path, "file", lambda: (_openai if recorder.endswith("openai") else _mcp)(doc, path))
