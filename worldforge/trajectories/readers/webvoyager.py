"""WebVoyager interaction logs (MinorJerry/WebVoyager): multimodal OpenAI messages.

A bare list of messages; user ``content`` is a string or a list of parts (a text part with
``Observation: ...`` and the Set-of-Marks element list, and an ``image_url`` part whose
URL is a literal placeholder, so images carry nothing and are dropped). The assistant
writes ``Thought: ...\\nAction: Click [n] | Type [n]; text | Scroll ... | ANSWER; ...``.
The first user message holds the task (``Now given a task: ...``) and the first screen.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, as_text
from worldforge.trajectories.readers.common import guarded, is_message_list
from worldforge.trajectories.readers.react import react_turns

SOURCE = "webvoyager"
FORMAT = "webvoyager_messages"

_TASK = re.compile(r"Now given a task:\s*(.*?)(?:\s*Observation:|$)", re.S)


def detect(doc: Any, path: str) -> bool:
    """True for a message list that opens with a system message and has an assistant message that writes ``Action:``."""
    return is_message_list(doc) and doc[0].get("role") == "system" and any(
        m.get("role") == "assistant" and "Action:" in as_text(m.get("content")) for m in doc
    )


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """The file as one ``web`` trajectory (locator ``file``): ReAct turns, the task cut from the first user message (``Now given a task: ...``)."""
    def build() -> Trajectory:
        first = next((as_text(m.get("content")) for m in doc if m.get("role") == "user"), "")
        m = _TASK.search(first)
        task = m.group(1).strip() if m else first.strip()
        return Trajectory(SOURCE, path, FORMAT, "web", task, "file", react_turns(doc))

    yield guarded(path, "file", build)
