"""OpenHands (ex-OpenDevin) event streams.

Two shapes: a bare list of events (``tests/runtime/trajs/*.json``) and evaluation output
JSONL whose lines carry ``instance_id``, ``instruction`` and ``history`` (a list of
events). Events are actions (``action`` + ``args``) or observations (``observation`` +
``content``); an observation answers the action whose ``id`` is its ``cause`` — pairs are
made through ``cause``, never by list position. Only agent actions make turns; system
prompts, user messages, recall of workspace context, agent-state changes and ``null``
observations do not. Actions are rendered as ``{"name", "arguments"}`` from the tool call
the model made when ``tool_call_metadata`` has it, else from the event's ``args``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text, tool_call_text
from worldforge.trajectories.readers.common import RecordError, guarded

SOURCE = "openhands"
FORMAT = "openhands_events"

_SKIP_ACTIONS = {"system", "change_agent_state", "recall"}
_SKIP_OBSERVATIONS = {"null", "agent_state_changed"}
_NOISE_ARGS = {"thought", "is_input", "timeout", "security_risk", "confirmation_state", "impl_source", "hidden"}


def is_event_list(value: Any) -> bool:
    """A non-empty list of OpenHands events: dicts with ``id``, ``source`` and an ``action`` or ``observation``."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and "id" in e and "source" in e and ("action" in e or "observation" in e) for e in value)
    )


def detect(doc: Any, path: str) -> bool:
    """True for a bare OpenHands event list (``tests/runtime/trajs/*.json``)."""
    return is_event_list(doc)


def _action_text(event: dict) -> str:
    meta = event.get("tool_call_metadata") or {}
    fn, call_id = meta.get("function_name"), meta.get("tool_call_id")
    if fn:
        try:
            for choice in meta["model_response"]["choices"]:
                for call in choice["message"].get("tool_calls") or []:
                    if call.get("id") == call_id:
                        return tool_call_text(fn, call["function"]["arguments"])
        except (KeyError, TypeError):
            pass
    args = event.get("args") or {}
    return tool_call_text(fn or event["action"], {k: v for k, v in args.items() if k not in _NOISE_ARGS})


def events_to_turns(events: list[dict]) -> tuple[str, list[Turn]]:
    """The task (first user message) and the agent's turns, paired through ``cause``."""
    if not is_event_list(events):
        raise RecordError("history is not a list of OpenHands events")
    answers: dict[str, dict] = {}
    for e in events:
        if "observation" in e and e.get("cause") is not None:
            answers.setdefault(str(e["cause"]), e)
    task = ""
    turns = []
    for e in events:
        if "action" not in e:
            continue
        if e["source"] == "user" and e["action"] == "message" and not task:
            task = as_text(e.get("message") or (e.get("args") or {}).get("content"))
        if e["source"] != "agent" or e["action"] in _SKIP_ACTIONS:
            continue
        obs = answers.get(str(e["id"]))
        if obs is None or obs.get("observation") in _SKIP_OBSERVATIONS:
            continue
        turns.append(Turn(_action_text(e), as_text(obs.get("content"))))
    return task, turns


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """The file as one ``swe`` trajectory (locator ``file``): turns paired through ``cause``, the task from the first user message."""
    def build() -> Trajectory:
        task, turns = events_to_turns(doc)
        return Trajectory(SOURCE, path, FORMAT, "swe", task, "file", turns)

    yield guarded(path, "file", build)


class OutputJsonl:
    """OpenHands evaluation output: one instance per JSONL line."""

    SOURCE = SOURCE
    FORMAT = "openhands_output_jsonl"

    @staticmethod
    def detect(first: Any, path: str) -> bool:
        """True when the first JSONL line has an ``instance_id`` and a ``history`` list."""
        return isinstance(first, dict) and "instance_id" in first and isinstance(first.get("history"), list)

    @staticmethod
    def read_line(obj: Any, path: str, locator: str) -> Trajectory | Quarantined:
        """One ``swe`` trajectory from a line's ``history``; the task is ``instruction``, else the first user message."""
        def build() -> Trajectory:
            task, turns = events_to_turns(obj["history"])
            instruction = obj.get("instruction")
            return Trajectory(SOURCE, path, OutputJsonl.FORMAT, "swe", as_text(instruction) if instruction else task, locator, turns)

        return guarded(path, locator, build)


