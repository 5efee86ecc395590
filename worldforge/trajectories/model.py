"""The canonical trajectory shape every reader produces.

A *trajectory* is one agent episode; a *turn* is one (action, observation) pair: what the
agent did and what the environment returned (the next state a world model predicts).
System prompts, user instructions and in-context demonstrations are never turns.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

DOMAINS = ("terminal", "search", "mcp", "swe", "web", "android", "os", "tool")
"""The domains of the Qwen-AgentWorld environments that trajectories are filed under."""


@dataclass(frozen=True)
class Turn:
    """One step: the agent's action and the environment's observation (both text)."""

    action: str
    observation: str


@dataclass
class Trajectory:
    """One episode read from a source file.

    Attributes:
        source: the dataset family (``swe-agent``, ``openhands``, ``tau-bench`` ...).
        source_path: the file, relative to the ingested folder.
        format: the concrete file format (``swe_agent_traj``, ``tau_bench_json`` ...).
        domain: one of :data:`DOMAINS`.
        task: the instruction the agent was given.
        locator: where in the file the record sits (``file``, ``line 3``, ``key 17``, ``item 4``).
        turns: the (action, observation) pairs in order.
        file_sha1: SHA-1 of the source file's bytes (set by the file reader).
    """

    source: str
    source_path: str
    format: str
    domain: str
    task: str
    locator: str
    turns: list[Turn] = field(default_factory=list)
    file_sha1: str = ""

    @property
    def trajectory_id(self) -> str:
        """Stable id: 16 hex digits of SHA-1 over ``file_sha1#locator``.

        Content-addressed, so the same file ingested through another folder (or from a
        landing folder) keeps its ids and replaces its earlier rows.
        """
        return record_id(self.file_sha1 or self.source_path, self.locator)


@dataclass(frozen=True)
class StoredTurn:
    """One turn as a store hands it out: the text and its loss-mask decision.

    Attributes:
        turn_idx: 0-based position in the trajectory.
        informative: the turn carries loss in CPT samples (DESIGN.md section 5).
        mask_reason: the statistic that decided (``pass``, ``novelty`` ...).
    """

    turn_idx: int
    action: str
    observation: str
    informative: bool
    mask_reason: str


@dataclass
class StoredTrajectory:
    """One stored trajectory with its turns in order, as the trajectory and episode stores hand it out.

    Attributes:
        origin: ``real`` (the trajectory store) or ``simulated`` (the episode store).
        extra: what only the episode store knows, for AgentWorldBench records (``world`` and,
            when set, ``scenario`` of a simulated episode).
    """

    trajectory_id: str
    source: str
    domain: str
    task: str
    origin: str
    turns: list[StoredTurn] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Quarantined:
    """A record that could not be read, with the reason."""

    source_path: str
    locator: str
    reason: str
    file_sha1: str = ""


def storable(text: str) -> str:
    """``text`` as valid UTF-8: each lone surrogate (``"\\ud800"``, which JSON can carry and a
    file name decoded with ``surrogateescape`` holds, but UTF-8 cannot) becomes its escape, the
    six characters ``\\ud800``; any other text is returned as is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def storable_row(row: tuple) -> tuple:
    """``row`` with every string made :func:`storable` (other values as they are)."""
    return tuple(storable(v) if isinstance(v, str) else v for v in row)


def record_id(file_key: str, locator: str) -> str:
    """A stable record id: the first 16 hex digits of SHA-1 over ``<file_key>#<locator>``."""
    return hashlib.sha1(f"{file_key}#{locator}".encode()).hexdigest()[:16]


def tool_call_text(name: str, arguments: Any) -> str:
    """An action as the AgentWorldBench action block's JSON: ``{"name": ..., "arguments": ...}``.

    ``arguments`` given as a JSON string is decoded when it parses, else kept as text.
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            pass
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, sort_keys=False)


def as_text(value: Any) -> str:
    """Message content as plain text: strings as they are, content parts joined, None as ''."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, dict):
                if p.get("type") == "text":
                    parts.append(str(p.get("text", "")))
                # image parts carry no text (WebVoyager's are literal placeholders)
            else:
                parts.append(as_text(p))
        return "\n".join(x for x in parts if x)
    return json.dumps(value, ensure_ascii=False)
