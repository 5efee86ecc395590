"""Append-only segment files: what a recording proxy has seen, durable before it is answered.

One file per session, ``<root>/<session_id>.jsonl`` (the sink uses
``WAREHOUSE/recordings/segments/<kind>/``), one JSON object (an *event*) per line. Each
:meth:`SegmentLog.append` writes one whole line, flushes and ``os.fsync``'s it; the folder is
fsync'd when a file is created, so a new segment survives a power loss too. A process killed
mid-write (``kill -9``) leaves at most a torn last line, which :meth:`SegmentLog.events` skips
(and counts); the next append ends it first. A write that fails (a full disk) is cut back off. Once the session's recording is stored, :meth:`SegmentLog.close` renames the
segment to ``<session_id>.jsonl.closed`` (kept for audit); segments still named ``*.jsonl`` are
*open*: a restarted proxy stores them (:meth:`worldforge.recording.sink.RecordingSink.recover`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from worldforge.warehouse.atomic import append_lines

SEGMENT_SUFFIX = ".jsonl"
CLOSED_SUFFIX = ".jsonl.closed"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_session_id(text: str, limit: int = 80) -> str:
    """``text`` as a file-name-safe session id: runs of characters other than ``[A-Za-z0-9._-]``
    become ``_``, leading dots are dropped, at most ``limit`` characters; ``session`` when nothing is left."""
    s = _SAFE.sub("_", str(text)).lstrip(".")[:limit]
    return s or "session"


def fsync_dir(path: Path) -> None:
    """``fsync`` a folder, so that files created or renamed in it survive a crash (POSIX)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SegmentLog:
    """The segment files of one recorder kind, under ``root``.

    Thread-safe within one process (one lock around every write). Session ids must be
    file-name safe (:func:`safe_session_id`); an unsafe one raises ``ValueError``.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self.torn: dict[str, int] = {}
        """Lines skipped by :meth:`events` per session (a torn last line, or garbage)."""

    def path(self, session_id: str) -> Path:
        """The open segment file of ``session_id``, ``<root>/<session_id>.jsonl``.

        Raises:
            ValueError: ``session_id`` is not file-name safe.
        """
        if safe_session_id(session_id) != session_id:
            raise ValueError(f"session id {session_id!r} is not file-name safe (use safe_session_id)")
        return self.root / f"{session_id}{SEGMENT_SUFFIX}"

    def append(self, session_id: str, event: dict) -> None:
        """Append ``event`` as one JSON line to the session's segment, flushed and fsync'd before returning.

        Creates the segment (and fsyncs the folder) on the first event of a session. A write that
        fails (a full disk) is taken back: the segment is left as it was, with no torn line.

        Raises:
            ValueError: unsafe session id; TypeError: the event is not JSON-serializable.
            OSError: the file cannot be written.
        """
        data = (json.dumps(event, ensure_ascii=False, default=str) + "\n").encode("utf-8", errors="surrogatepass")
        path = self.path(session_id)
        with self._lock:
            new = not path.exists()
            if new:
                self.root.mkdir(parents=True, exist_ok=True)
            append_lines(path, data)  # a torn last line ended first; a failed write taken back
            if new:
                fsync_dir(self.root)

    def open_sessions(self) -> list[str]:
        """The sessions whose segment is still open (not yet stored), sorted by id."""
        if not self.root.is_dir():
            return []
        return sorted(p.name[: -len(SEGMENT_SUFFIX)] for p in self.root.glob(f"*{SEGMENT_SUFFIX}") if p.is_file())

    def events(self, session_id: str) -> list[dict]:
        """The session's events in order; lines that are not a JSON object (a torn last line
        after a ``kill -9``) are skipped and counted in :attr:`torn`. ``[]`` for an unknown session."""
        path = self.path(session_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return []
        out, bad = [], 0
        for line in raw.decode("utf-8", errors="replace").split("\n"):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(obj, dict):
                out.append(obj)
            else:
                bad += 1
        self.torn[session_id] = bad
        return out

    def close(self, session_id: str) -> Path | None:
        """Mark the session stored: rename its segment to ``<session_id>.jsonl.closed`` (fsync'd).

        Returns:
            The closed segment's path, ``None`` when the session had no open segment.
        """
        path = self.path(session_id)
        with self._lock:
            if not path.exists():
                return None
            closed = self.root / f"{session_id}{CLOSED_SUFFIX}"
            os.replace(path, closed)
            fsync_dir(self.root)
            return closed

    def is_known(self, session_id: str) -> bool:
        """True when the session has a segment, open or closed."""
        return (self.root / f"{session_id}{SEGMENT_SUFFIX}").exists() or (self.root / f"{session_id}{CLOSED_SUFFIX}").exists()
