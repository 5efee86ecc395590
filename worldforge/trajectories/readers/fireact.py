"""FireAct ReAct trajectories (anchen1011/FireAct): HotpotQA search with text actions.

Two shapes: fine-tuning JSONL (``{"messages": [...]}`` per line) and run logs (a JSON
object ``{qid: {reward, em, f1, prompt, traj[]}}``). The assistant writes
``Thought: ...\\nAction: search[query]``; the observation returns as a user message
``Observation: ...``; the last one is ``Episode finished, reward = ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, as_text
from worldforge.trajectories.readers.common import RecordError, first_user_text, guarded, is_message_list
from worldforge.trajectories.readers.react import react_turns

SOURCE = "fireact"


def _trajectory(messages: Any, path: str, fmt: str, locator: str) -> Trajectory:
    if not is_message_list(messages):
        raise RecordError("not a list of chat messages")
    return Trajectory(SOURCE, path, fmt, "search", first_user_text(messages), locator, react_turns(messages))


def _is_react(messages: Any) -> bool:
    return is_message_list(messages) and any(
        m.get("role") == "assistant" and "Action:" in as_text(m.get("content")) for m in messages
    )


class MessagesJsonl:
    """``data/finetune/gpt_format/*.jsonl``."""

    SOURCE = SOURCE
    FORMAT = "fireact_messages_jsonl"

    @staticmethod
    def detect(first: Any, path: str) -> bool:
        """True when the first JSONL line is ``{"messages": [...]}`` with an assistant message that writes ``Action:``."""
        return isinstance(first, dict) and _is_react(first.get("messages"))

    @staticmethod
    def read_line(obj: Any, path: str, locator: str) -> Trajectory | Quarantined:
        """One ``search`` trajectory from a line's ``messages`` (ReAct turns); a malformed line is quarantined."""
        return guarded(path, locator, lambda: _trajectory(obj["messages"], path, MessagesJsonl.FORMAT, locator))


class RunsJson:
    """``trajs/*.json``: ``{qid: {traj, reward, em, ...}}``."""

    SOURCE = SOURCE
    FORMAT = "fireact_trajs_json"

    @staticmethod
    def detect(doc: Any, path: str) -> bool:
        """True for a non-empty object whose first value holds a ReAct ``traj`` and one of ``em``, ``reward``, ``prompt``."""
        if not isinstance(doc, dict) or not doc:
            return False
        sample = next(iter(doc.values()))
        return isinstance(sample, dict) and _is_react(sample.get("traj")) and bool({"em", "reward", "prompt"} & sample.keys())

    @staticmethod
    def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
        """One ``search`` trajectory per question id (locator ``key <qid>``); a malformed run is quarantined."""
        for qid, rec in doc.items():
            locator = f"key {qid}"
            yield guarded(path, locator, lambda rec=rec, locator=locator: _trajectory(rec["traj"], path, RunsJson.FORMAT, locator))
