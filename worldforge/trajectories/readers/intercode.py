"""InterCode results (princeton-nlp/intercode): bash (NL2Bash) and CTF runs.

One JSON object keyed ``"0", "1", ...``; each value holds ``query`` and
``turn_history{actions[], observations[], rewards[], valid_action[]}`` with actions and
observations as *parallel arrays*. The action is the command itself. Empty observations
(commands with no stdout) are kept as turns; the loss mask decides what they are worth.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, as_text
from worldforge.trajectories.readers.common import RecordError, guarded

SOURCE = "intercode"
FORMAT = "intercode_json"


def detect(doc: Any, path: str) -> bool:
    """True for a non-empty object whose first value has a ``turn_history`` with ``actions``."""
    if not isinstance(doc, dict) or not doc:
        return False
    sample = next(iter(doc.values()))
    return isinstance(sample, dict) and isinstance(sample.get("turn_history"), dict) and "actions" in sample["turn_history"]


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """One ``terminal`` trajectory per key (locator ``key <k>``): ``query`` as the task, turns from the parallel
    ``actions`` and ``observations``; arrays of unequal length quarantine the record."""
    for key, rec in doc.items():
        locator = f"key {key}"

        def build(rec: Any = rec, locator: str = locator) -> Trajectory:
            hist = rec["turn_history"]
            actions, observations = hist["actions"], hist["observations"]
            if not isinstance(actions, list) or not isinstance(observations, list):
                raise RecordError("turn_history.actions/observations must be lists")
            if len(actions) != len(observations):
                raise RecordError(f"{len(actions)} actions but {len(observations)} observations")
            turns = [Turn(as_text(a).strip(), as_text(o)) for a, o in zip(actions, observations)]
            return Trajectory(SOURCE, path, FORMAT, "terminal", as_text(rec.get("query")), locator, turns)

        yield guarded(path, locator, build)
