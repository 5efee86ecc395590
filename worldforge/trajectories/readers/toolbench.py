"""ToolBench DFS answers (OpenBMB/ToolBench): legacy OpenAI ``function_call`` messages.

``answer_generation.train_messages`` is a list of growing message lists; the last one is
the final chain. An assistant ``function_call`` is answered by the next ``function``
message of the same name (the ``Finish`` call has no answer and is not a turn). Files with
``valid_data: false`` have no ``train_messages`` and are quarantined.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text, tool_call_text
from worldforge.trajectories.readers.common import RecordError, guarded, is_message_list

SOURCE = "toolbench"
FORMAT = "toolbench_answer"


def detect(doc: Any, path: str) -> bool:
    """True for an object with an ``answer_generation`` object."""
    return isinstance(doc, dict) and isinstance(doc.get("answer_generation"), dict)


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """The file as one ``tool`` trajectory from the last chain of ``train_messages``, ``query`` as the task; a file without chains is quarantined."""
    def build() -> Trajectory:
        gen = doc["answer_generation"]
        chains = gen.get("train_messages")
        if not chains:
            raise RecordError(f"no train_messages (valid_data: {gen.get('valid_data')}): the search found no valid chain")
        messages = chains[-1]
        if not is_message_list(messages):
            raise RecordError("train_messages[-1] is not a list of chat messages")
        turns = []
        for i, m in enumerate(messages):
            call = m.get("function_call") if m.get("role") == "assistant" else None
            if not call:
                continue
            reply = next((r for r in messages[i + 1:] if r.get("role") == "function"), None)
            if reply is None or reply.get("name") != call.get("name"):
                continue
            turns.append(Turn(tool_call_text(call["name"], call.get("arguments", {})), as_text(reply.get("content"))))
        return Trajectory(SOURCE, path, FORMAT, "tool", as_text(gen.get("query")).strip(), "file", turns)

    yield guarded(path, "file", build)
