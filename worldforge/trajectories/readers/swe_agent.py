"""SWE-agent ``.traj`` files (princeton-nlp/SWE-agent).

One JSON object per file: ``trajectory[i] = {action, observation, response, thought,
state}`` holds the agent's own steps; ``history`` is the chat as the model saw it, where
the first user message may be an in-context demonstration (``is_demo: true``). Turns come
from ``trajectory`` only, so demonstrations never become turns; the task is the first
non-demo user message. EnIGMA CTF runs (system prompt about a CTF, or a ``/ctf/`` path)
are filed under the ``terminal`` domain, the rest under ``swe``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text
from worldforge.trajectories.readers.common import RecordError, first_user_text, guarded

SOURCE = "swe-agent"
FORMAT = "swe_agent_traj"


def detect(doc: Any, path: str) -> bool:
    """True for an object with a ``trajectory`` list and a ``history``."""
    return isinstance(doc, dict) and isinstance(doc.get("trajectory"), list) and "history" in doc


def _domain(doc: dict, path: str) -> str:
    system = next((as_text(m.get("content")) for m in doc.get("history", []) if m.get("role") == "system"), "")
    return "terminal" if "/ctf/" in path or "CTF" in system else "swe"


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """The file as one trajectory (locator ``file``): turns from the ``trajectory`` steps, the task from the
    first non-demo user message of ``history``; ``terminal`` for CTF runs, else ``swe``."""
    def build() -> Trajectory:
        turns = []
        for i, step in enumerate(doc["trajectory"]):
            if not isinstance(step, dict) or "action" not in step or "observation" not in step:
                raise RecordError(f"trajectory step {i} has no action/observation")
            turns.append(Turn(as_text(step["action"]).strip(), as_text(step["observation"])))
        history = doc.get("history") or []
        return Trajectory(SOURCE, path, FORMAT, _domain(doc, path), first_user_text(history), "file", turns)

    yield guarded(path, "file", build)
