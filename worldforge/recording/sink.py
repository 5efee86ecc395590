"""From recorded events to a stored trajectory: segment files in, recording documents and store rows out.

A :class:`RecordingSink` of a recorder *kind* (``openai``, ``mcp``) appends each session's events
to its segment (:class:`~worldforge.recording.segments.SegmentLog`, durable at once) and, when the
session closes (idle, proxy stopped, or recovered after a crash), builds the session's
*recording document* from the events, writes it atomically to
``WAREHOUSE/recordings/<kind>/<session_id>.json`` and ingests that one file into the trajectory
store (``WAREHOUSE/trajectories.duckdb``) with :func:`worldforge.trajectories.store.ingest` —
the same reader, cleaning and loss-mask statistics as any ingest, under the store's file lock so
that concurrent closes (and other ingests that lock) take turns. The reader is
:mod:`worldforge.trajectories.readers.recorded`.

Events (one JSON object each; ``at`` is an ISO 8601 UTC time):

* every kind: ``{"event": "start", "at", "upstream", ...}`` — optional; its other keys join the document.
* ``openai``: ``{"event": "exchange", "at", "request": {"model", "messages", "tools"},
  "reply": <assistant message or null>}`` — one ``/v1/chat/completions`` call.
* ``mcp``: ``{"event": "tools", "at", "tools": [<tools/list result items>]}`` and
  ``{"event": "call", "name", "arguments", "result_text", "is_error", "started_at", "ended_at"}``.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from worldforge.recording.segments import SegmentLog, safe_session_id
from worldforge.warehouse.atomic import atomic_file
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)

RECORDERS = {"openai": "worldforge record openai", "mcp": "worldforge record mcp"}
"""The ``recorder`` value of each kind's recording documents (the reader detects it)."""


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds (``2026-11-23T22:30:41.123+00:00``)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def recordings_dir(warehouse: Warehouse, kind: str) -> Path:
    """``<warehouse>/recordings/<kind>/``: the stored recording documents of one kind."""
    return warehouse.recordings / kind


def segments_dir(warehouse: Warehouse, kind: str) -> Path:
    """``<warehouse>/recordings/segments/<kind>/``: the segment files of one kind."""
    return warehouse.recordings / "segments" / kind


def _norm(m: Any) -> Any:
    """A chat message reduced to what identifies it across requests (role, text, tool calls, tool_call_id):
    clients resend the assistant reply with fields added or dropped (``refusal: null``, ``annotations``)."""
    if not isinstance(m, dict):
        return m
    calls = m.get("tool_calls") or []
    norm_calls = tuple(
        (c.get("id"), (c.get("function") or {}).get("name"), _args((c.get("function") or {}).get("arguments")))
        for c in calls if isinstance(c, dict)
    )
    content = m.get("content")
    if isinstance(content, list):
        content = json.dumps(content, sort_keys=True, default=str)
    return (m.get("role"), content or "", norm_calls, m.get("tool_call_id"), m.get("name") if m.get("role") == "tool" else None)


def _args(a: Any) -> Any:
    if isinstance(a, str):
        try:
            return json.dumps(json.loads(a), sort_keys=True)
        except json.JSONDecodeError:
            return a
    return json.dumps(a, sort_keys=True, default=str)


def is_prefix(prefix: list, messages: list) -> bool:
    """True when ``prefix`` (chat messages) opens ``messages``, comparing messages by role, text,
    tool calls and ``tool_call_id`` only (see :func:`_norm`)."""
    return len(prefix) <= len(messages) and all(_norm(a) == _norm(b) for a, b in zip(prefix, messages))


def merge_conversation(conversation: list[dict], messages: list[dict]) -> list[dict]:
    """The conversation extended by a later request's ``messages`` (plus its reply).

    When ``conversation`` opens ``messages`` (the usual case: the agent resends the history),
    the result is ``messages``; otherwise (a client that trimmed or rewrote its history) the
    messages past the common prefix are appended, so that nothing recorded is dropped.
    """
    if is_prefix(conversation, messages):
        return list(messages)
    common = 0
    for a, b in zip(conversation, messages):
        if _norm(a) != _norm(b):
            break
        common += 1
    return [*conversation, *messages[common:]]


def openai_document(session_id: str, events: list[dict]) -> dict:
    """The recording document of an ``openai`` session.

    Returns:
        ``{"recorder": "worldforge record openai", "session_id", "upstream", "model", "started_at",
        "ended_at", "exchanges", "tools", "messages"}``: ``messages`` is the whole conversation
        (each request's messages merged with :func:`merge_conversation`, then its assistant
        reply), ``tools`` the latest request's tool definitions, ``exchanges`` the number of
        chat-completion calls.
    """
    start = next((e for e in events if e.get("event") == "start"), {})
    conversation: list[dict] = []
    tools: list = []
    model = start.get("model")
    exchanges = 0
    for e in events:
        if e.get("event") != "exchange":
            continue
        exchanges += 1
        req = e.get("request") or {}
        msgs = [m for m in req.get("messages") or [] if isinstance(m, dict)]
        conversation = merge_conversation(conversation, msgs)
        if isinstance(e.get("reply"), dict):
            conversation.append(e["reply"])
        tools = req.get("tools") or tools
        model = req.get("model") or model
    return {
        "recorder": RECORDERS["openai"], "session_id": session_id, "upstream": start.get("upstream"), "model": model,
        "started_at": events[0].get("at") if events else None, "ended_at": events[-1].get("at") if events else None,
        "exchanges": exchanges, "tools": tools, "messages": conversation,
    }


def mcp_document(session_id: str, events: list[dict]) -> dict:
    """The recording document of an ``mcp`` session.

    Returns:
        ``{"recorder": "worldforge record mcp", "session_id", "upstream", "started_at", "ended_at",
        "tools": [latest tools/list result items], "calls": [{"name", "arguments", "result_text",
        "is_error", "started_at", "ended_at"}, ...]}``.
    """
    start = next((e for e in events if e.get("event") == "start"), {})
    tools: list = []
    calls = []
    for e in events:
        if e.get("event") == "tools":
            tools = e.get("tools") or tools
        elif e.get("event") == "call":
            calls.append({k: e.get(k) for k in ("name", "arguments", "result_text", "is_error", "started_at", "ended_at")})
    return {
        "recorder": RECORDERS["mcp"], "session_id": session_id, "upstream": start.get("upstream"),
        "started_at": events[0].get("at") if events else None, "ended_at": events[-1].get("at") if events else None,
        "tools": tools, "calls": calls,
    }


BUILDERS: dict[str, Callable[[str, list[dict]], dict]] = {"openai": openai_document, "mcp": mcp_document}
"""The document builder of each kind: ``(session_id, events) -> recording document``."""


@dataclass(frozen=True)
class ClosedSession:
    """What closing one session stored.

    Attributes:
        session_id: the session.
        path: the recording document, ``WAREHOUSE/recordings/<kind>/<session_id>.json``.
        trajectories: trajectories the store kept from it (0 or 1).
        turns: their turns.
        quarantined: the store's quarantine reason when the recording held no turn, else ``None``.
    """

    session_id: str
    path: Path
    trajectories: int
    turns: int
    quarantined: str | None


class RecordingSink:
    """Events of one recorder kind in, stored trajectories out (see the module docs).

    Args:
        warehouse: the warehouse.
        kind: ``openai`` or ``mcp`` (or any kind given a ``build`` function).
        build: ``(session_id, events) -> document``; default :data:`BUILDERS` ``[kind]``.
        max_record_mb: the largest record stored (MiB; a larger one is quarantined), as in
            :func:`~worldforge.trajectories.store.ingest` (``None``: its default).
        store_memory_mb: DuckDB's memory limit (MiB) while a recording is stored, as in
            :func:`~worldforge.trajectories.store.ingest` (``None``: its default).

    Raises:
        ValueError: an unknown kind without a ``build`` function.
    """

    def __init__(self, warehouse: Warehouse, kind: str, build: Callable[[str, list[dict]], dict] | None = None,
                 max_record_mb: float | None = None, store_memory_mb: int | None = None) -> None:
        if build is None and kind not in BUILDERS:
            raise ValueError(f"unknown recorder kind {kind!r} (known: {', '.join(BUILDERS)})")
        self.warehouse = warehouse
        self.kind = kind
        self.build = build or BUILDERS[kind]
        self.segments = SegmentLog(segments_dir(self.warehouse, kind))
        self.out_dir = recordings_dir(self.warehouse, kind)
        self._close_lock = threading.Lock()
        self._limits = {k: v for k, v in (("max_record_mb", max_record_mb), ("store_memory_mb", store_memory_mb)) if v is not None}

    def new_session_id(self, hint: str | None = None) -> str:
        """A fresh session id, unique in this warehouse: ``<hint>-<8 hex>`` (the hint made
        file-name safe, e.g. an ``X-Session-Id`` header) or ``<UTC time>-<8 hex>``."""
        base = safe_session_id(hint, 60) if hint else datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        while True:
            sid = f"{base}-{uuid.uuid4().hex[:8]}"
            if not self.segments.is_known(sid) and not (self.out_dir / f"{sid}.json").exists():
                return sid

    def append(self, session_id: str, event: dict) -> None:
        """Append one event to the session's segment (durable when this returns); ``at`` is added when missing."""
        if "at" not in event:
            event = {**event, "at": now_iso()}
        self.segments.append(session_id, event)

    def close(self, session_id: str) -> ClosedSession | None:
        """Store the session: build its document, write it atomically, ingest it, close its segment.

        Returns:
            What was stored; ``None`` when the session has no open segment (already closed).

        Raises:
            WarehouseError: the trajectory store is unreadable (the segment stays open, so a
                later :meth:`recover` retries).
        """
        with self._close_lock:
            if session_id not in self.segments.open_sessions():
                return None
            events = self.segments.events(session_id)
            doc = self.build(session_id, events)
            target = self.out_dir / f"{session_id}.json"
            with atomic_file(target) as tmp:
                tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1, default=str), encoding="utf-8", errors="surrogatepass")
            report = self._ingest(target)
            self.segments.close(session_id)
        reasons = list(report.tally.dropped)
        kept = sum(t for t, _ in report.by_source.values())
        turns = sum(n for _, n in report.by_source.values())
        closed = ClosedSession(session_id, target, kept, turns, None if kept else (reasons[0] if reasons else "not stored"))
        log.info("recording %s/%s stored: %d trajectories, %d turns", self.kind, session_id, kept, turns)
        return closed

    def _ingest(self, document: Path) -> Any:
        """Ingest one recording document (``ingest`` holds the store's file lock, so writers in
        other processes, another proxy or a CLI ingest, take turns)."""
        from worldforge.trajectories.store import ingest

        return ingest([document], self.warehouse, **self._limits)

    def recover(self) -> list[ClosedSession]:
        """Store every session whose segment is still open (left by a process that was killed).

        Returns:
            One :class:`ClosedSession` per recovered session, in session-id order.
        """
        out = []
        for sid in self.segments.open_sessions():
            closed = self.close(sid)
            if closed is not None:
                out.append(closed)
        return out



@dataclass(frozen=True)
class ClosedRecording:
    """A stored recording document (its session's segment closed).

    Attributes:
        kind: the recorder kind (``openai``, ``mcp``).
        session_id: the session.
        path: ``WAREHOUSE/recordings/<kind>/<session_id>.json``.
        mtime_ns: the file's modification time, nanoseconds since the epoch.
    """

    kind: str
    session_id: str
    path: Path
    mtime_ns: int


def stored_recordings(warehouse: Warehouse) -> list[ClosedRecording]:
    """Every stored recording of every kind, oldest first (a document whose segment is still open —
    a crash between writing and storing it — is left out until it is recovered)."""
    root = warehouse.recordings
    out = []
    if not root.is_dir():
        return out
    for kind_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "segments"):
        open_ids = set(SegmentLog(segments_dir(warehouse, kind_dir.name)).open_sessions())
        for f in kind_dir.glob("*.json"):
            sid = f.name[: -len(".json")]
            if sid in open_ids or f.name.startswith("."):
                continue
            try:
                out.append(ClosedRecording(kind_dir.name, sid, f, f.stat().st_mtime_ns))
            except FileNotFoundError:
                continue
    return sorted(out, key=lambda r: (r.mtime_ns, r.kind, r.session_id))
