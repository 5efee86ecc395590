"""Text-encoded ReAct turns: ``Thought: ...`` / ``Action: ...`` then ``Observation: ...``.

Shared by FireAct (search) and WebVoyager (web): the assistant writes a thought and an
action in text; the next user message carries the observation. The action of a turn is
the text from ``Action:`` on (the thought is the agent's, not the environment's input).
"""

from __future__ import annotations

import re
from typing import Any

from worldforge.trajectories.model import Turn, as_text
from worldforge.trajectories.readers.common import strip_prefix

_ACTION = re.compile(r"(?:^|\n)\s*Action\s*:\s*(.*)", re.S)


def action_of(text: str) -> str:
    """The action of an assistant message: the text after ``Action:`` to the end, or the whole text when it has none."""
    m = _ACTION.search(text)
    return m.group(1).strip() if m else text.strip()


def react_turns(messages: list[dict]) -> list[Turn]:
    """Pairs (assistant action, next user observation); user messages that answer no assistant
    message (the task, the first one) are never observations."""
    turns = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        nxt: Any = messages[i + 1] if i + 1 < len(messages) else None
        if not nxt or nxt.get("role") != "user":
            continue
        turns.append(Turn(action_of(as_text(m.get("content"))), strip_prefix(as_text(nxt.get("content")), "Observation:")))
    return turns
