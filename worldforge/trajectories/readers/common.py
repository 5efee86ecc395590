"""Helpers shared by the readers: guarded record parsing and message utilities."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, as_text


class RecordError(ValueError):
    """A record is readable JSON but not a valid trajectory of its format."""


def guarded(source_path: str, locator: str, build: Callable[[], Trajectory]) -> Trajectory | Quarantined:
    """Run ``build``; a malformed record becomes a :class:`Quarantined` with the reason."""
    try:
        return build()
    except RecordError as exc:
        return Quarantined(source_path, locator, str(exc))
    except KeyError as exc:
        return Quarantined(source_path, locator, f"missing field {exc}")
    except (TypeError, ValueError, AttributeError, IndexError) as exc:
        return Quarantined(source_path, locator, f"malformed record ({type(exc).__name__}: {exc})")


def is_message_list(value: Any) -> bool:
    """A non-empty list of OpenAI-style chat messages (dicts with a ``role``)."""
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def first_user_text(messages: list[dict]) -> str:
    """The first user message that is not an in-context demonstration (``is_demo``)."""
    for m in messages:
        if m.get("role") == "user" and not _truthy(m.get("is_demo")):
            return as_text(m.get("content"))
    return ""


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() == "true")


def strip_prefix(text: str, prefix: str) -> str:
    """``text`` without a leading ``prefix`` (whitespace around it dropped), or ``text`` unchanged when it does not start with it."""
    t = text.lstrip()
    return t[len(prefix):].lstrip() if t.startswith(prefix) else text
