"""Chat-message trajectories of any agent, read by shape: OpenAI chat and the action encodings inside it.

A *chat* is a list of messages with a ``role`` (``system``, ``developer``, ``user``,
``assistant``, ``tool``, ``function``) and a ``content`` (text or content parts), as in the
OpenAI Chat Completions API. It may stand alone, sit in a wrapper object under ``messages``
(or ``conversation``, ``chat``, ``trajectory``, ``history``, ``dialog``, ``traj``), be one of a
list of such or a value of an object keyed by episode id, or be one JSONL line. The actions of the agent are found, per assistant message,
in the first encoding it uses:

1. **OpenAI tool calls** — ``tool_calls: [{id, function: {name, arguments}}]``, each answered
   by the first later ``role: tool`` message with its ``tool_call_id`` (a reply without an id
   answers the oldest open call), and the legacy ``function_call: {name, arguments}`` answered by
   the next ``role: function`` (or ``tool``) message.
2. **Hermes / Qwen tool calls** — ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` in
   the assistant's text (several per message), answered by the next ``tool`` or ``user`` message;
   when it holds ``<tool_response>...</tool_response>`` blocks they answer the calls in order.
3. **XML tool-use blocks** (Cline, Roo, MCP clients) — ``<use_mcp_tool><server_name>``,
   ``<tool_name>``, ``<arguments>{json}</arguments></use_mcp_tool>`` and tool-named blocks of
   parameter tags (``<execute_command><command>ls</command></execute_command>``), answered by
   the next ``user`` or ``tool`` message. Blocks that talk to the user (``attempt_completion``,
   ``ask_followup_question``, ``thinking`` ...) are not actions.
4. **Fenced shell commands** (mini-SWE-agent style) — a ```` ```bash ```` block answered by a
   ``user`` message that carries ``<returncode>``/``<output>`` (or ``<stdout>``, ``exit code``,
   ``Observation:``). Read by shape, not by tag: a message with one fenced block of any tag (some
   agents tag it with their own name) answered by such an execution result is an action too.
5. **ReAct text** — ``Action: ...`` answered by the next ``user`` message (``Observation:`` stripped).

Tool results are unwrapped to their text: content parts are joined; a string or object that is
an MCP ``CallToolResult`` — its JSON form ``{"content": [{"type": "text", "text": ...}],
"isError": ...}`` or its Python repr (``meta=None content=[TextContent(type='text', text='...',
annotations=None)] structuredContent=None isError=False``, ``CallToolResult(content=[...],
isError=True)``) — becomes the joined text of its text parts, prefixed ``Error: `` when
``isError`` is true. Any other string (JSON included) is kept verbatim: it is what the
environment returned.

``system``/``developer`` messages and user instructions are never turns; a call that nothing
answers is not a turn. A chat with actions but no observation at all is quarantined
(``actions without observations: nothing to learn from``); a chat without any action too.
Sources: ``openai-chat``, ``hermes-chat``, ``xml-tool-chat``, ``bash-chat``, ``react-chat``
(the encoding of most actions); domain from the tool names
(:func:`~worldforge.trajectories.readers.common.infer_domain`).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text, tool_call_text
from worldforge.trajectories.readers.common import (
    RecordError,
    first_user_text,
    guarded,
    holds_records,
    infer_domain,
    is_message_list,
    read_records,
    strip_prefix,
)
from worldforge.trajectories.readers.react import action_of

FORMAT = "chat_messages_json"
WRAPPER_KEYS = ("messages", "conversation", "chat", "trajectory", "history", "dialog", "dialogue", "traj")
TASK_KEYS = ("task", "instruction", "query", "question", "prompt", "goal", "problem_statement")
NO_OBSERVATIONS = "actions without observations: nothing to learn from"
NO_ACTIONS = "chat without tool calls or actions: no environment turns"
ROLES = {"system", "developer", "user", "assistant", "tool", "function", "ipython", "environment", "observation"}
_TOOL_ROLES = {"tool", "function", "ipython", "environment", "observation"}
SOURCES = {"tool_calls": "openai-chat", "hermes": "hermes-chat", "xml": "xml-tool-chat", "bash": "bash-chat", "react": "react-chat"}

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_RESPONSE = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.S)
_XML_BLOCK = re.compile(r"<([a-z][a-z0-9_]*)>\s*((?:<([a-z][a-z0-9_]*)>.*?</\3>\s*)+)</\1>", re.S)
_XML_PARAM = re.compile(r"<([a-z][a-z0-9_]*)>(.*?)</\1>", re.S)
_NOT_ACTIONS = {"attempt_completion", "ask_followup_question", "plan_mode_respond", "thinking", "think", "new_task",
                "answer", "final_answer", "response", "reflection", "plan", "summary",
                # HTML an assistant writes is not a tool call
                "html", "head", "body", "div", "span", "p", "a", "ul", "ol", "li", "table", "thead", "tbody", "tr", "td", "th",
                "pre", "code", "b", "i", "em", "strong", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "nav",
                "header", "footer", "main", "aside", "form", "label", "select", "option", "button", "blockquote", "details",
                "summary", "figure", "figcaption", "dl", "dt", "dd", "svg", "g", "script", "style", "small", "sub", "sup"}
_FENCE = re.compile(r"```(?:bash|sh|shell|console|zsh)\s*\n(.*?)```", re.S)
_FENCE_ANY = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_SHELL_REPLY = re.compile(r"<returncode>|<output>|<stdout>|<stderr>|\bexit code\b|\breturn code\b|^\s*Observation\s*:", re.I | re.M)
_ACTION = re.compile(r"(?:^|\n)\s*Action\s*:", re.S)
_PY_STR = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
_REPR_TEXT = re.compile(r"TextContent\((?:[^()]*?\b)?text=" + _PY_STR, re.S)
_REPR_ERROR = re.compile(r"\bisError=(True|False)")


def unwrap_result(content: Any) -> str:
    """A tool result as text: MCP ``CallToolResult`` forms unwrapped, everything else verbatim.

    Args:
        content: a message's ``content``: a string, content parts, or a result object.

    Returns:
        The text parts of a ``CallToolResult`` (JSON object, JSON string, or Python repr) joined
        by newlines, prefixed ``Error: `` when ``isError`` is true; other content as
        :func:`~worldforge.trajectories.model.as_text` gives it.
    """
    if isinstance(content, dict) and isinstance(content.get("content"), list):
        text = as_text(content["content"])
        return f"Error: {text}" if content.get("isError") is True or content.get("is_error") is True else text
    if not isinstance(content, str):
        return as_text(content)
    s = content.strip()
    if s.startswith("{") and '"content"' in s:
        try:
            obj = json.loads(s)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("content"), list) and all(isinstance(p, dict) and "type" in p for p in obj["content"]):
            return unwrap_result(obj)
    if "TextContent(" in s and ("content=[" in s or s.startswith("CallToolResult")):
        texts = []
        for m in _REPR_TEXT.finditer(s):
            try:
                texts.append(ast.literal_eval(m.group(1)))
            except (ValueError, SyntaxError):
                return content
        err = _REPR_ERROR.findall(s)
        text = "\n".join(texts)
        return f"Error: {text}" if err and err[-1] == "True" else text
    return content


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else {}
        except ValueError:
            return value
    return value


def _hermes_calls(text: str) -> list[str]:
    out = []
    for body in _HERMES.findall(text):
        try:
            call = json.loads(body)
        except ValueError:
            out.append(body.strip())
            continue
        if isinstance(call, dict) and "name" in call:
            out.append(tool_call_text(str(call["name"]), call.get("arguments", call.get("parameters", {}))))
        else:
            out.append(body.strip())
    return out


def _xml_calls(text: str) -> list[tuple[str, str]]:
    """``[(tool name, action text)]`` of the XML tool-use blocks of an assistant message."""
    out = []
    for m in _XML_BLOCK.finditer(text):
        tag, body = m.group(1), m.group(2)
        if tag in _NOT_ACTIONS:
            continue
        params = {k: v.strip() for k, v in _XML_PARAM.findall(body)}
        if tag in ("use_mcp_tool", "use_tool", "tool_use", "invoke") and "tool_name" in params:
            name = params["tool_name"]
            args = _arguments(params.get("arguments", "{}"))
            if "server_name" in params:
                name = f"{params['server_name']}.{name}"
            out.append((name, tool_call_text(name, args)))
        else:
            out.append((tag, tool_call_text(tag, params)))
    return out


def _role(m: dict) -> str:
    return str(m.get("role", "")).lower()


def _encoding(m: dict) -> str | None:
    """The action encoding an assistant message uses (None: it takes no action)."""
    if m.get("tool_calls") or m.get("function_call"):
        return "tool_calls"
    text = as_text(m.get("content"))
    if "<tool_call>" in text:
        return "hermes"
    if "</" in text and _xml_calls(text):
        return "xml"
    if "```" in text and _FENCE.search(text):
        return "bash"
    if _ACTION.search(text):
        return "react"
    if "```" in text and len(_FENCE_ANY.findall(text)) == 1:
        return "fenced"  # an action only if an execution result answers it (chat_turns checks the next message)
    return None


def chat_turns(messages: list[dict]) -> tuple[list[Turn], list[str], Counter]:
    """Turns of a chat in message order, whatever the action encoding (see the module docstring).

    Args:
        messages: chat messages (dicts with ``role``).

    Returns:
        ``(turns, tool names called, Counter of the encodings of the actions)``; actions that no
        later message answers are counted in the Counter under ``unanswered``.
    """
    turns: list[Turn | None] = []
    names: list[str] = []
    enc: Counter = Counter()
    by_id: dict[Any, list[int]] = {}  # tool_call_id -> open slots, oldest first
    open_slots: list[int] = []  # open structured calls, oldest first
    pending_text: list[int] = []  # slots of inline calls awaiting the next user/tool message
    actions: dict[int, str] = {}

    def new_slot(action: str, name: str, kind: str) -> int:
        actions[len(turns)] = action
        turns.append(None)
        names.append(name)
        enc[kind] += 1
        return len(turns) - 1

    def answer(slot: int, observation: str) -> None:
        turns[slot] = Turn(actions[slot], observation)

    n = len(messages)
    for idx, m in enumerate(messages):
        role = _role(m)
        if role == "assistant":
            kind = _encoding(m)
            if kind == "tool_calls":
                for call in m.get("tool_calls") or []:
                    fn = call.get("function") or call
                    name = str(fn.get("name", ""))
                    slot = new_slot(tool_call_text(name, fn.get("arguments", fn.get("input", {}))), name, kind)
                    by_id.setdefault(call.get("id"), []).append(slot)
                    open_slots.append(slot)
                fc = m.get("function_call")
                if isinstance(fc, dict) and fc.get("name"):
                    slot = new_slot(tool_call_text(str(fc["name"]), fc.get("arguments", {})), str(fc["name"]), kind)
                    by_id.setdefault(None, []).append(slot)
                    open_slots.append(slot)
                continue
            text = as_text(m.get("content"))
            pending_text = []
            if kind == "hermes":
                for action in _hermes_calls(text):
                    name = json.loads(action).get("name", "") if action.startswith("{") else ""
                    pending_text.append(new_slot(action, name, kind))
            elif kind == "xml":
                for name, action in _xml_calls(text):
                    pending_text.append(new_slot(action, name, kind))
            elif kind in ("bash", "fenced"):
                nxt = messages[idx + 1] if idx + 1 < n else None
                if nxt is not None and _role(nxt) in ("user", "tool") and _SHELL_REPLY.search(as_text(nxt.get("content"))):
                    cmd = "\n".join(c.strip() for c in (_FENCE if kind == "bash" else _FENCE_ANY).findall(text))
                    pending_text.append(new_slot(cmd, "bash", "bash"))
            elif kind == "react":
                pending_text.append(new_slot(action_of(text), action_of(text).split("[")[0].split("(")[0].strip(), kind))
        elif role in _TOOL_ROLES:
            if pending_text:
                _answer_inline(pending_text, m, answer)
                pending_text = []
                continue
            call_id = m.get("tool_call_id", m.get("id") if role == "tool" else None)
            queue = by_id.get(call_id) if call_id is not None else None
            if not queue:  # no id (legacy function replies): the oldest open call
                queue = [s for s in open_slots if turns[s] is None][:1]
            if queue:
                slot = queue.pop(0)
                if slot in open_slots:
                    open_slots.remove(slot)
                for q in by_id.values():
                    if slot in q:
                        q.remove(slot)
                answer(slot, unwrap_result(m.get("content")))
        elif role == "user" and pending_text:
            _answer_inline(pending_text, m, answer)
            pending_text = []
    enc["unanswered"] = sum(1 for t in turns if t is None)
    return [t for t in turns if t is not None], [n for n, t in zip(names, turns) if t is not None], enc


def _answer_inline(slots: list[int], m: dict, answer: Any) -> None:
    text = as_text(m.get("content"))
    responses = _RESPONSE.findall(text)
    if responses and len(responses) >= len(slots):
        for slot, resp in zip(slots, responses):
            answer(slot, unwrap_result(resp))
        return
    observation = unwrap_result(strip_prefix(text, "Observation:")) if _role(m) != "user" else strip_prefix(text, "Observation:")
    answer(slots[0], observation)  # one reply answers the first call; the others stay unanswered


def looks_like_chat(value: Any) -> bool:
    """True for a non-empty list of dicts whose roles are chat roles, with at least one assistant message."""
    return (is_message_list(value) and all(_role(m) in ROLES for m in value)
            and any(_role(m) == "assistant" for m in value))


def messages_of(record: Any) -> tuple[list[dict], str] | None:
    """``(messages, task)`` of a chat record: a message list, or a wrapper object holding one (``None`` otherwise)."""
    if looks_like_chat(record):
        return record, ""
    if isinstance(record, dict):
        for key in WRAPPER_KEYS:
            if looks_like_chat(record.get(key)):
                task = next((record[k] for k in TASK_KEYS if isinstance(record.get(k), str) and record[k].strip()), "")
                return record[key], task
    return None


def trajectory(record: Any, path: str, fmt: str, locator: str) -> Trajectory:
    """One trajectory of a chat record.

    Raises:
        RecordError: not a chat, no action at all, or actions without any observation.
    """
    found = messages_of(record)
    if found is None:
        raise RecordError("not a list of chat messages")
    messages, task = found
    turns, names, enc = chat_turns(messages)
    if not turns:
        raise RecordError(NO_OBSERVATIONS if enc["unanswered"] else NO_ACTIONS)
    kind = max((k for k in enc if k != "unanswered"), key=lambda k: enc[k])
    default = "terminal" if kind == "bash" else ("mcp" if any("." in x for x in names) and kind == "xml" else "tool")
    return Trajectory(SOURCES[kind], path, fmt, infer_domain(names, default), task or first_user_text(messages), locator, turns)


def detect(doc: Any, path: str) -> bool:
    """True for a chat record, a list of them, or an object of them keyed by episode id."""
    return holds_records(doc, lambda d: messages_of(d) is not None)


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """One trajectory per chat: the file's (locator ``file``), each list item's (``item <i>``) or each key's (``key <k>``)."""
    yield from read_records(doc, path, lambda d: messages_of(d) is not None, lambda rec, loc: trajectory(rec, path, FORMAT, loc))


class Jsonl:
    """One chat per JSONL line (a message list or a wrapper object)."""

    FORMAT = "chat_messages_jsonl"

    @staticmethod
    def detect(first: Any, path: str) -> bool:
        """True when the first line is a chat record."""
        return messages_of(first) is not None

    @staticmethod
    def read_line(obj: Any, path: str, locator: str) -> Trajectory | Quarantined:
        """One trajectory of a line's chat; a line that is not one is quarantined."""
        return guarded(path, locator, lambda: trajectory(obj, path, Jsonl.FORMAT, locator))
