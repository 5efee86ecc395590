"""A declarative mapping for trajectory formats no reader knows: a YAML file of JMESPath expressions.

``worldforge trajectories ingest PATH --mapping map.yaml`` reads every file under ``PATH`` with the
mapping instead of format detection. The mapping says where the records (episodes) of a document
live and, in one of two modes, where their turns are:

* *messages mode* (``messages`` given): a record holds a chat; ``role`` and ``content`` locate each
  message's role name and text, ``roles`` maps the file's role names to ``system``, ``user``,
  ``assistant`` and ``tool``. Each assistant tool call (``tool_calls``, with ``tool_name`` and
  ``tool_arguments``) is one action, written as :func:`~worldforge.trajectories.model.tool_call_text`;
  without ``tool_calls`` the assistant message's text is the action. Its observation is the
  content of the next ``tool`` message (``observation_role: user``: the next ``user`` message),
  paired by id when ``tool_call_id`` and ``tool_result_id`` are given, else in order (the calls of
  one message take the observation messages before the next assistant message), with an optional
  ``observation_prefix`` stripped. Defaults follow OpenAI chat (https://platform.openai.com/docs/api-reference/chat):
  ``role``, ``content``, ``roles`` the four canonical names, ``tool_name: function.name``,
  ``tool_arguments: function.arguments``. Messages whose role name ``roles`` does not map are skipped.
* *steps mode* (``steps`` given): a record holds a list of steps, each with an ``action`` (or a
  ``tool_name`` and ``tool_arguments``) and the ``observation`` its action led to; with
  ``observation_before_action: true`` a step's observation is the state *before* its action
  (screenshot-then-action logs), so each action is paired with the next step's observation.
  A step without an observation (often the last) is no turn.

Common keys: ``source`` (required), ``format``, ``domain`` (one of
:data:`~worldforge.trajectories.model.DOMAINS`; omitted: inferred from the tool names with
:func:`~worldforge.trajectories.readers.common.infer_domain`), ``records``, ``task`` and ``id``.
Expressions are JMESPath (https://jmespath.org/specification.html), evaluated with the
``jmespath`` library: ``records`` on the document, ``messages``/``steps``/``task``/``id`` on a
record, ``role``/``content``/``tool_calls`` on a message, ``tool_name``/``tool_arguments``/
``tool_call_id`` on a tool call (on a step in steps mode), ``tool_result_id`` on a tool message,
``action``/``observation`` on a step.

Every expression is compiled when the mapping is loaded; a bad one, an unknown key or a key of
the other mode is a :class:`MappingError` naming the key. A record the mapping cannot read (an
expression yields nothing or the wrong type) is quarantined with a reason naming the key, as is a
record with no actions or with actions but no observations.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import jmespath
from jmespath.exceptions import IncompleteExpressionError, JMESPathError
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from worldforge.errors import WorldforgeError
from worldforge.spec.documents import DocumentError, read_yaml, tree_problem
from worldforge.trajectories.model import DOMAINS, Quarantined, Trajectory, Turn, as_text, tool_call_text
from worldforge.trajectories.readers.common import RecordError, infer_domain, strip_prefix

ROLES = ("system", "user", "assistant", "tool")
"""The canonical roles the ``roles`` map sends a file's role names to."""

MESSAGES_KEYS = ("messages", "role", "content", "roles", "tool_calls", "tool_call_id", "tool_result_id",
                 "observation_role", "observation_prefix")
"""Keys that belong to messages mode only."""

STEPS_KEYS = ("steps", "action", "observation", "observation_before_action")
"""Keys that belong to steps mode only."""

EXPRESSION_KEYS = ("records", "task", "id", "messages", "role", "content", "tool_calls", "tool_name", "tool_arguments",
                   "tool_call_id", "tool_result_id", "steps", "action", "observation")
"""Keys whose values are JMESPath expressions."""


class MappingError(WorldforgeError):
    """A mapping file is missing, is not YAML, or does not validate.

    Args:
        source: the mapping file (``"<mapping>"`` for an in-memory document).
        problems: ``(key path, message)`` pairs, e.g. ``("roles.assistant", "...")``.
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        text = "; ".join(f"{key}: {msg}" if key else msg for key, msg in problems)
        super().__init__(f"{source}: invalid trajectory mapping: {text}")


def _compile(value: Any) -> Any:
    """A JMESPath expression compiled (``jmespath.compile``); a parse error names the column."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a JMESPath expression (non-empty text)")
    try:
        return jmespath.compile(value)
    except JMESPathError as exc:
        pos = getattr(exc, "lex_position", None)
        if isinstance(exc, IncompleteExpressionError):
            detail = "the expression ends too early"
        else:
            detail = str(getattr(exc, "msg", "") or exc).splitlines()[0].strip().rstrip(":")
            detail += f" at column {pos + 1}" if isinstance(pos, int) else ""
        raise ValueError(f"not a valid JMESPath expression {value!r} ({detail})") from None


def _getter(expr: str) -> Callable[[Any], Any]:
    """A function evaluating ``expr`` on a document: a plain dotted field path (``a.b.c``, the common
    case) walks the dicts directly, with JMESPath's result (null for a missing key or a non-object);
    any other expression goes through ``jmespath``."""
    compiled = _compile(expr)
    keys = _field_chain(compiled.parsed)
    if keys is None:
        return compiled.search

    def get(data: Any) -> Any:
        for k in keys:
            if not isinstance(data, dict):
                return None
            data = data.get(k)
        return data

    return get


def _field_chain(node: dict) -> list[str] | None:
    """The keys of a JMESPath AST made of fields and subexpressions only, else None."""
    if node.get("type") == "field":
        return [node["value"]]
    if node.get("type") == "subexpression":
        keys: list[str] = []
        for child in node.get("children", []):
            sub = _field_chain(child)
            if sub is None:
                return None
            keys += sub
        return keys
    return None


class Mapping(BaseModel):
    """A validated mapping file: where the records, turns and fields of a trajectory format live.

    Attributes are the mapping file's keys (see the module docstring); expression keys hold the
    expression text, compiled once at validation.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    _reader: _Reader = PrivateAttr()

    source: str = Field(min_length=1, description="the trajectory source name stored with every trajectory")
    format: str | None = Field(None, min_length=1, description="the format name (default mapping:<source>)")
    domain: str | None = None
    records: str | None = None
    task: str | None = None
    id: str | None = None
    # messages mode
    messages: str | None = None
    role: str | None = None
    content: str | None = None
    roles: dict[Literal["system", "user", "assistant", "tool"], str | list[str]] | None = None
    tool_calls: str | None = None
    tool_call_id: str | None = None
    tool_result_id: str | None = None
    observation_role: Literal["tool", "user"] | None = None
    observation_prefix: str | None = None
    # both modes
    tool_name: str | None = None
    tool_arguments: str | None = None
    # steps mode
    steps: str | None = None
    action: str | None = None
    observation: str | None = None
    observation_before_action: bool = False

    @field_validator(*EXPRESSION_KEYS)
    @classmethod
    def _expression(cls, value: str | None) -> str | None:
        if value is not None:
            _compile(value)
        return value

    @field_validator("domain")
    @classmethod
    def _domain(cls, value: str | None) -> str | None:
        if value is not None and value not in DOMAINS:
            raise ValueError(f"unknown domain {value!r} (one of {', '.join(DOMAINS)}, or omit it to infer it from the tool names)")
        return value

    @field_validator("roles")
    @classmethod
    def _roles(cls, value: dict[str, str | list[str]] | None) -> dict[str, str | list[str]] | None:
        if value is None:
            return value
        seen: dict[str, str] = {}
        for role, names in value.items():
            for name in [names] if isinstance(names, str) else names:
                if name in seen and seen[name] != role:
                    raise ValueError(f"the role name {name!r} is mapped to both {seen[name]} and {role}")
                seen[name] = role
        return value

    @model_validator(mode="after")
    def _mode(self) -> Mapping:
        if (self.messages is None) == (self.steps is None):
            raise ValueError("give exactly one of `messages` (messages mode) or `steps` (steps mode)")
        other = STEPS_KEYS if self.messages is not None else MESSAGES_KEYS
        wrong = [k for k in other if getattr(self, k) not in (None, False)]
        if wrong:
            mode = "messages" if self.messages is not None else "steps"
            raise ValueError(f"{', '.join(wrong)}: not a key of {mode} mode")
        if self.steps is not None and self.action is None and self.tool_name is None:
            raise ValueError("steps mode needs `action` or `tool_name`")
        if self.steps is not None and self.observation is None:
            raise ValueError("steps mode needs `observation`")
        if (self.tool_call_id is None) != (self.tool_result_id is None):
            raise ValueError("`tool_call_id` and `tool_result_id` go together (pairing by id)")
        if self.messages is not None and self.tool_calls is None and (self.tool_name or self.tool_arguments or self.tool_call_id):
            raise ValueError("tool_name, tool_arguments and tool_call_id need `tool_calls`")
        if self.steps is not None and self.tool_arguments is not None and self.tool_name is None:
            raise ValueError("`tool_arguments` needs `tool_name`")
        return self

    def model_post_init(self, context: Any, /) -> None:
        """Compile every expression once (into a plain reader object: pydantic attribute access is slow
        in the per-message loops); messages mode defaults to OpenAI chat field names."""
        exprs = {k: _getter(getattr(self, k)) for k in EXPRESSION_KEYS if getattr(self, k) is not None}
        if self.messages is not None:
            exprs.setdefault("role", _getter("role"))
            exprs.setdefault("content", _getter("content"))
            if self.tool_calls is not None:
                exprs.setdefault("tool_name", _getter("function.name"))
                exprs.setdefault("tool_arguments", _getter("function.arguments"))
        roles = self.roles or {r: r for r in ROLES}
        role_of = {n: r for r, names in roles.items() for n in ([names] if isinstance(names, str) else names)}
        self._reader = _Reader(self, exprs, role_of)

    @property
    def mode(self) -> str:
        """``messages`` or ``steps``."""
        return "messages" if self.messages is not None else "steps"

    @property
    def format_name(self) -> str:
        """The ``format`` stored with each trajectory: the ``format`` key, else ``mapping:<source>``."""
        return self.format or f"mapping:{self.source}"

    def read(self, doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
        """The records of one parsed JSON document.

        ``records`` (default: the document) yielding a list makes each item a record
        (locator ``item <i>``, or ``id <value>`` with an ``id`` expression); yielding an object
        makes it the one record (locator ``file``).

        Yields:
            A :class:`Trajectory` per readable record, a :class:`Quarantined` (reason naming the
            mapping key) per other record; one ``file`` quarantine when ``records`` yields nothing.
        """
        return self._reader.read(doc, path)

    def read_line(self, obj: Any, path: str, locator: str) -> Trajectory | Quarantined:
        """One JSONL line as one record (``records``, when given, selects the record within the line).

        Returns:
            The :class:`Trajectory`, or a :class:`Quarantined` naming the mapping key that failed.
        """
        return self._reader.read_line(obj, path, locator)


class _Reader:
    """A mapping's reading logic over plain attributes: the mapping's keys, compiled expressions and role map."""

    def __init__(self, mapping: Mapping, exprs: dict[str, Callable[[Any], Any]], role_of: dict[str, str]):
        for key in Mapping.model_fields:
            setattr(self, key, getattr(mapping, key))
        self.mode = mapping.mode
        self.format_name = mapping.format_name
        self._exprs = exprs
        self._role_of = role_of

    def read(self, doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
        """See :meth:`Mapping.read`."""
        try:
            found = self._search("records", doc) if self.records is not None else doc
        except RecordError as exc:
            yield Quarantined(path, "file", str(exc))
            return
        if isinstance(found, list):
            for i, rec in enumerate(found):
                yield self._record(rec, path, f"item {i}")
        elif isinstance(found, dict):
            yield self._record(found, path, "file")
        else:
            yield Quarantined(path, "file", f"mapping key records: {_got('a list of records or one record', found)}")

    def read_line(self, obj: Any, path: str, locator: str) -> Trajectory | Quarantined:
        """See :meth:`Mapping.read_line`."""
        rec = obj
        if self.records is not None:
            try:
                rec = self._search("records", obj)
            except RecordError as exc:
                return Quarantined(path, locator, str(exc))
            if isinstance(rec, list) and len(rec) == 1:
                rec = rec[0]
        if not isinstance(rec, dict):
            return Quarantined(path, locator, f"mapping key records: {_got('one record (an object) per JSON line', rec)}")
        return self._record(rec, path, locator)

    def _search(self, key: str, data: Any) -> Any:
        try:
            return self._exprs[key](data)
        except JMESPathError as exc:
            raise RecordError(f"mapping key {key}: {str(exc).splitlines()[0]}") from None

    def _record(self, rec: Any, path: str, locator: str) -> Trajectory | Quarantined:
        try:
            if self.id is not None:
                value = self._search("id", rec)
                if value is None or isinstance(value, (dict, list)):
                    raise RecordError(f"mapping key id: {_got('a scalar id', value)}")
                locator = f"id {value}"
            if self.mode == "messages":
                task, actions, turns, names = self._messages(rec)
            else:
                task, actions, turns, names = self._steps(rec)
            if self.task is not None:
                value = self._search("task", rec)
                if value is None:
                    raise RecordError(f"mapping key task: {_got('the task text', value)}")
                task = as_text(value)
            if actions == 0:
                keys = "messages, roles, tool_calls" if self.mode == "messages" else "steps, action"
                raise RecordError(f"no actions found (check the mapping keys {keys})")
            if not turns:
                raise RecordError("actions without observations: nothing to learn from")
            domain = self.domain or infer_domain(names)
            return Trajectory(self.source, path, self.format_name, domain, task, locator, turns)
        except RecordError as exc:
            return Quarantined(path, locator, str(exc))
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            return Quarantined(path, locator, f"malformed record ({type(exc).__name__}: {str(exc)[:200]})")

    def _messages(self, rec: Any) -> tuple[str, int, list[Turn], list[str]]:
        """``(task, actions found, turns, tool names)`` of a messages-mode record."""
        messages = self._search("messages", rec)
        if not isinstance(messages, list):
            raise RecordError(f"mapping key messages: {_got('a list of messages', messages)}")
        msgs: list[tuple[str, Any]] = []  # (canonical role, message) for mapped roles only
        for i, m in enumerate(messages):
            name = self._search("role", m)
            if name is None or isinstance(name, (dict, list)):
                raise RecordError(f"mapping key role: message {i}: {_got('a role name', name)}")
            role = self._role_of.get(str(name))
            if role is not None:
                msgs.append((role, m))
        obs_role = self.observation_role or "tool"
        task = next((as_text(self._search("content", m)) for r, m in msgs if r == "user"), "")
        turns: list[Turn] = []
        names: list[str] = []
        actions = 0
        used: set[int] = set()
        by_id: dict[str, list[int]] = {}  # result id -> positions of the observation messages carrying it
        if self.tool_call_id is not None:
            for q, (role, m) in enumerate(msgs):
                rid = self._search("tool_result_id", m) if role == obs_role else None
                if rid is not None and not isinstance(rid, (dict, list)):
                    by_id.setdefault(json.dumps(rid), []).append(q)
        for pos, (role, m) in enumerate(msgs):
            if role != "assistant":
                continue
            # the observation messages answering this one: up to the next assistant message
            replies = []
            for q in range(pos + 1, len(msgs)):
                if msgs[q][0] == "assistant":
                    break
                if msgs[q][0] == obs_role:
                    replies.append(q)
            if self.tool_calls is None:
                actions += 1
                text = as_text(self._search("content", m)).strip()
                names.append(_verb(text))
                if replies:
                    used.add(replies[0])
                    turns.append(Turn(text, self._observation(msgs[replies[0]][1])))
                continue
            calls = self._search("tool_calls", m)
            if calls is None:
                continue  # an assistant message without tool calls (a final answer)
            if isinstance(calls, dict):
                calls = [calls]
            if not isinstance(calls, list):
                raise RecordError(f"mapping key tool_calls: {_got('a list of tool calls', calls)}")
            free = iter([q for q in replies if q not in used])
            for call in calls:
                actions += 1
                name = self._search("tool_name", call)
                if name is None or isinstance(name, (dict, list)):
                    raise RecordError(f"mapping key tool_name: {_got('a tool name', name)}")
                names.append(str(name))
                action = tool_call_text(str(name), self._search("tool_arguments", call))
                if self.tool_call_id is not None:
                    cid = self._search("tool_call_id", call)
                    reply = next((q for q in by_id.get(json.dumps(cid), ()) if q > pos and q not in used), None) if cid is not None else None
                else:
                    reply = next(free, None)
                if reply is not None:
                    used.add(reply)
                    turns.append(Turn(action, self._observation(msgs[reply][1])))
        return task, actions, turns, names

    def _observation(self, message: Any) -> str:
        text = as_text(self._search("content", message))
        return strip_prefix(text, self.observation_prefix) if self.observation_prefix else text

    def _steps(self, rec: Any) -> tuple[str, int, list[Turn], list[str]]:
        """``(task, actions found, turns, tool names or action verbs)`` of a steps-mode record."""
        steps = self._search("steps", rec)
        if not isinstance(steps, list):
            raise RecordError(f"mapping key steps: {_got('a list of steps', steps)}")
        actions: list[str] = []
        observations: list[Any] = []
        names: list[str] = []
        for i, step in enumerate(steps):
            if self.tool_name is not None:
                name = self._search("tool_name", step)
                if name is None or isinstance(name, (dict, list)):
                    raise RecordError(f"mapping key tool_name: step {i}: {_got('a tool name', name)}")
                args = self._search("tool_arguments", step) if self.tool_arguments is not None else {}
                action = tool_call_text(str(name), {} if args is None else args)
                names.append(str(name))
            else:
                value = self._search("action", step)
                if value is None:
                    raise RecordError(f"mapping key action: step {i}: {_got('an action', value)}")
                action = as_text(value).strip()
                names.append(_verb(action))
            actions.append(action)
            observations.append(self._search("observation", step))
        if self.observation_before_action:  # each step's observation is the state its action starts from
            observations = observations[1:] + [None]
        # a step without an observation (the last one, often) is no turn
        turns = [Turn(a, as_text(o)) for a, o in zip(actions, observations) if o is not None]
        return "", len(steps), turns, names


def _verb(action: str) -> str:
    """The first word of a text action (``search[...]``, ``click(3)``, ``ls -la`` -> ``search``, ``click``, ``ls``)."""
    words = action.split("[", 1)[0].split("(", 1)[0].split(None, 1)
    return words[0] if words else ""


def _got(expected: str, value: Any) -> str:
    """``expected ..., got ...`` with the JSON type of ``value`` (``nothing`` for null)."""
    kind = {type(None): "nothing", dict: "an object", list: "a list", str: "text", bool: "a boolean"}.get(type(value), "a number")
    return f"expected {expected}, got {kind}"


def mapping_from_dict(data: Any, source: str = "<mapping>") -> Mapping:
    """Validate a parsed mapping document.

    Raises:
        MappingError: naming ``source``, each offending key (``roles.assistant``, ``tool_calls``...)
            and what is expected.
    """
    if not isinstance(data, dict):
        raise MappingError(source, [("", f"expected a mapping of keys at the top level, got {type(data).__name__}")])
    problem = tree_problem(data)
    if problem:
        raise MappingError(source, [("", problem)])
    try:
        return Mapping.model_validate(data)
    except ValidationError as exc:
        problems = []
        for e in exc.errors(include_url=False, include_input=False):
            loc = ".".join(str(p) for p in e["loc"] if not (isinstance(p, str) and p in ("str", "list[str]", "[key]")))
            msg = e["msg"].removeprefix("Value error, ")
            if e["type"] == "extra_forbidden":
                close = difflib.get_close_matches(str(e["loc"][-1]), list(Mapping.model_fields), n=1)
                msg = "unknown key (not part of the mapping language" + (f"; did you mean {close[0]}?)" if close else ")")
            elif e["type"] == "missing":
                msg = "required key missing"
            elif loc.startswith("roles.") and e["type"] in ("string_type", "list_type"):
                msg = "expected a role name or a list of role names"
            if (loc, msg) not in problems:
                problems.append((loc, msg))
        raise MappingError(source, problems) from None


def load_mapping(path: str | Path) -> Mapping:
    """Read and validate one mapping YAML file (same size, depth and alias limits as world specs).

    Raises:
        MappingError: the file is missing, is not YAML, or does not validate; the message names
            the file and the bad key.
    """
    p = Path(path)
    try:
        data = read_yaml(p, "mapping")
    except DocumentError as exc:
        raise MappingError(str(p), [("", str(exc))]) from None
    return mapping_from_dict(data, str(p))
