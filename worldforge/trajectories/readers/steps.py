"""Per-step records: one record per step with an observation and an action (GUI, Android, web agents).

Android and web agent datasets (AITW, AndroidControl, AndroidWorld, Mind2Web-style logs) store
one record per step: an episode key, a step index, what the agent saw and what it did. Accepted
layouts: a JSON list of steps, ``{"steps": [...]}`` (also ``trajectory``, ``actions``,
``records``, ``history``), a list of such episodes, or one step per JSON line (grouped by
episode across lines). Fields, by the first name present:

* episode: ``episode_id``, ``ep_id``, ``episode``, ``trajectory_id``, ``session_id``, ``task_id``
  (absent: the whole file or object is one episode);
* step index: ``step``, ``step_id``, ``step_idx``, ``step_index``, ``t`` (absent: file order);
* action: ``action``, ``action_type``, ``action_code``, ``act``, ``operation`` — text, an object
  (``{"action_type": "click", "x": .., "y": ..}`` becomes ``{"name": "click", "arguments":
  {...}}``) or a numeric AITW action code (``ActionType`` of google-research/android_in_the_wild:
  3 type, 4 dual_point, 5 press_back, 6 press_home, 7 press_enter, 10 status_task_complete,
  11 status_task_impossible), kept with its parameters (``touch_point``, ``typed_text`` ...);
* result of the action: ``observation``, ``obs``, ``result``, ``output``, ``response``,
  ``next_observation`` — the environment's answer to *this* step's action;
* screen state: ``ui_elements``, ``accessibility_tree``, ``a11y_tree``, ``html``, ``screen``,
  ``screenshot``, ``screenshot_path``, ``image_path``, ``image`` — what the agent saw *before*
  acting. A UI element list (JSON, or JSON in a string) is kept as compact JSON text; a
  screenshot is kept as a reference ``[screenshot: <path>]``; text as it is.

A turn pairs each action with what came after it: the step's result when it has one, else
the next step's screen state (the screen the action led to). The last action of a
screen-state episode has nothing after it and is not a turn. An episode of actions with no
observation or screen at all (e.g. a list of clicks) is quarantined (``actions without
observations: nothing to learn from``). Source ``step-records``; domain ``android`` for
screens with UI elements or AITW codes, else from the action names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from worldforge.trajectories.model import Quarantined, Trajectory, Turn, tool_call_text
from worldforge.trajectories.readers.chat import NO_OBSERVATIONS
from worldforge.trajectories.readers.common import infer_domain

SOURCE = "step-records"
FORMAT = "step_records_json"
EPISODE_KEYS = ("episode_id", "ep_id", "episode", "trajectory_id", "session_id", "task_id")
STEP_KEYS = ("step", "step_id", "step_idx", "step_index", "t")
ACTION_KEYS = ("action", "action_type", "action_code", "act", "operation")
RESULT_KEYS = ("observation", "obs", "result", "output", "response", "next_observation")
SCREEN_KEYS = ("ui_elements", "accessibility_tree", "a11y_tree", "html", "screen", "screenshot", "screenshot_path", "image_path", "image")
TASK_KEYS = ("goal", "instruction", "task", "intent", "query", "episode_goal")
LIST_KEYS = ("steps", "trajectory", "actions", "records", "history")
AITW_ACTIONS = {3: "type", 4: "dual_point", 5: "press_back", 6: "press_home", 7: "press_enter",
                10: "status_task_complete", 11: "status_task_impossible"}
_PARAMS = ("touch_point", "lift_point", "typed_text", "x", "y", "text", "element", "element_id", "index", "direction", "app_name", "value")


def _first(rec: dict, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    return next(((k, rec[k]) for k in keys if k in rec and rec[k] is not None), None)


def is_step(rec: Any) -> bool:
    """A dict with an action field and no chat ``role`` (a candidate step record)."""
    return isinstance(rec, dict) and "role" not in rec and _first(rec, ACTION_KEYS) is not None


def _step_shaped(rec: Any) -> bool:
    """A step record, or a step that has not acted yet: an action field that is null beside a screen or a result (the
    first screen of an episode, ``{"step": 0, "action": null, "ui_elements": [...]}``)."""
    return is_step(rec) or (isinstance(rec, dict) and "role" not in rec and any(k in rec for k in ACTION_KEYS)
                            and _first(rec, SCREEN_KEYS + RESULT_KEYS) is not None)


def _action(rec: dict) -> tuple[str, str, bool]:
    """``(action text, action name, is an AITW code)``."""
    key, value = _first(rec, ACTION_KEYS)
    if isinstance(value, bool):
        value = str(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        name = AITW_ACTIONS.get(int(value), f"action_{int(value)}")
        params = {k: rec[k] for k in _PARAMS if k in rec}
        return tool_call_text(name, params), name, True
    if isinstance(value, dict):
        name = str(value.get("action_type") or value.get("type") or value.get("name") or key)
        if isinstance(value.get("action_type"), int):
            name = AITW_ACTIONS.get(value["action_type"], name)
        args = value.get("arguments", {k: v for k, v in value.items() if k not in ("action_type", "type", "name")})
        return tool_call_text(name, args), name, False
    text = str(value)
    if key == "action_type":  # the parameters live beside it
        params = {k: rec[k] for k in _PARAMS if k in rec}
        return tool_call_text(text, params), text, False
    return text, text.split("(")[0].split("[")[0].split(" ")[0], False


def _text(value: Any) -> str:
    if isinstance(value, str):
        s = value.strip()
        if s[:1] in "[{":
            try:
                return json.dumps(json.loads(s), ensure_ascii=False, separators=(",", ":"))
            except ValueError:
                return value
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _screen(rec: dict) -> str | None:
    found = _first(rec, SCREEN_KEYS)
    if found is None:
        return None
    key, value = found
    if key in ("screenshot", "screenshot_path", "image_path", "image"):
        ref = value if isinstance(value, str) and len(value) < 1024 else "inline image"
        extra = _first(rec, ("ui_elements", "accessibility_tree", "a11y_tree", "html"))
        return f"[screenshot: {ref}]" + (f"\n{_text(extra[1])}" if extra else "")
    return _text(value)


def episode(steps: list[dict], path: str, fmt: str, locator: str, task: str = "") -> Trajectory | Quarantined:
    """One trajectory of an episode's steps (in step order; see the module docstring for the pairing)."""
    if any(_first(s, STEP_KEYS) is not None for s in steps):
        steps = sorted(steps, key=lambda s: (_step_no(s), ))
    turns: list[Turn] = []
    names: list[str] = []
    android = False
    has_obs = False
    for i, s in enumerate(steps):
        if _first(s, ACTION_KEYS) is None:
            continue
        action, name, code = _action(s)
        android |= code or _first(s, ("ui_elements",)) is not None
        result = _first(s, RESULT_KEYS)
        if result is not None:
            obs = _text(result[1])
        else:
            nxt = next((_screen(x) for x in steps[i + 1:i + 2]), None)
            obs = nxt
        has_obs |= result is not None or _screen(s) is not None
        if obs is not None:
            turns.append(Turn(action, obs))
            names.append(name)
        task = task or next((str(v) for k in TASK_KEYS if isinstance(v := s.get(k), str) and v.strip()), "")
    if not turns:
        return Quarantined(path, locator, NO_OBSERVATIONS if not has_obs else "a single step: no observation after its action")
    return Trajectory(SOURCE, path, fmt, "android" if android else infer_domain(names, "web"), task, locator, turns)


def _step_no(s: dict) -> float:
    found = _first(s, STEP_KEYS)
    try:
        return float(found[1]) if found else 0.0
    except (TypeError, ValueError):
        return 0.0


def _episode_key(s: dict) -> str:
    found = _first(s, EPISODE_KEYS)
    return str(found[1]) if found else ""


def _grouped(items: Iterable[tuple[str, Any]], path: str, fmt: str) -> Iterator[Trajectory | Quarantined]:
    groups: dict[str, list[dict]] = {}
    for locator, rec in items:
        if isinstance(rec, Exception):
            yield Quarantined(path, locator, str(rec))
        elif not _step_shaped(rec):
            yield Quarantined(path, locator, "not a step record (no action field)")
        else:
            groups.setdefault(_episode_key(rec), []).append(rec)
    for key, steps in groups.items():
        yield episode(steps, path, fmt, f"episode {key}" if key else "file")


def _steps_in(items: list) -> bool:
    """A list reads as step records: among its first items (read by shape, as its lines would be) one acts and every
    one is a step, a step that has not acted yet, or at least no chat message."""
    head = items[:8]
    return any(is_step(x) for x in head) and all(isinstance(x, dict) and "role" not in x for x in head)


def _step_list(doc: Any) -> tuple[list, str] | None:
    if isinstance(doc, list) and doc and _steps_in(doc):
        return doc, ""
    if isinstance(doc, dict):
        for key in LIST_KEYS:
            v = doc.get(key)
            if isinstance(v, list) and v and _steps_in(v):
                return v, next((str(doc[k]) for k in TASK_KEYS if isinstance(doc.get(k), str)), "")
    return None


def detect(doc: Any, path: str) -> bool:
    """True for a list of step records, an object holding one, or a list of such objects."""
    return _step_list(doc) is not None or (isinstance(doc, list) and bool(doc) and _step_list(doc[0]) is not None)


def read(doc: Any, path: str) -> Iterator[Trajectory | Quarantined]:
    """Episodes of a document: a step list (grouped by episode key), an episode object, or a list of episode objects (``item <i>``)."""
    found = _step_list(doc)
    if found is not None and found[0] is doc:
        yield from _grouped(((f"item {i}", s) for i, s in enumerate(doc)), path, FORMAT)
        return
    if found is not None:
        yield episode([s for s in found[0] if is_step(s)], path, FORMAT, "file", found[1])
        return
    for i, ep in enumerate(doc):
        inner = _step_list(ep)
        if inner is None:
            yield Quarantined(path, f"item {i}", "not an episode of step records")
        else:
            yield episode([s for s in inner[0] if is_step(s)], path, FORMAT, f"item {i}", inner[1])


class Jsonl:
    """One step per JSON line, grouped into episodes across lines."""

    FORMAT = "step_records_jsonl"

    @staticmethod
    def detect(first: Any, path: str) -> bool:
        """True when the first line is a step record, a step that has not acted yet, or an episode object of steps."""
        return _step_shaped(first) or _step_list(first) is not None

    @staticmethod
    def read_lines(lines: Iterable[tuple[int, Any]], path: str) -> Iterator[Trajectory | Quarantined]:
        """Episodes of the file: step lines grouped by episode key; an episode object per line stands alone (``line <n>``)."""
        steps: list[tuple[str, Any]] = []
        for i, obj in lines:
            inner = None if isinstance(obj, Exception) or _step_shaped(obj) else _step_list(obj)
            if inner is not None:
                yield episode([s for s in inner[0] if is_step(s)], path, Jsonl.FORMAT, f"line {i}", inner[1])
            else:
                steps.append((f"line {i}", obj))
        if steps:
            yield from _grouped(steps, path, Jsonl.FORMAT)
