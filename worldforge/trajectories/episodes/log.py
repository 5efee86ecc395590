"""The append-only episode log ``<warehouse>/episodes.log.jsonl`` and its drain into the episode store.

The search server does not write the store when a session closes: it appends the episode to
the log (:func:`log_episodes`: one JSON line, ASCII, ``fsync``-ed before the close is
acknowledged; threads of a process share one write by group commit), and
:func:`drain_episode_log` fills the store (:func:`~worldforge.trajectories.episodes.store.record_episodes`)
from that log in batches: every second while serving, at start-up (a restart replays what a
crash left) and before each reader (:func:`settle_episode_log`). An episode the store refuses
on its own is moved to ``episodes.log.rejected.jsonl`` with the reason (logged), so it cannot
hold back the others; a line torn by a crash mid-append is moved there too.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from worldforge.trajectories.episodes.model import Episode, Observation
from worldforge.trajectories.episodes.store import migrate_legacy_stores, record_episodes
from worldforge.warehouse.atomic import append_lines, file_lock
from worldforge.warehouse.layout import Warehouse

log = logging.getLogger(__name__)


_FIELDS = ("episode_id", "world", "scenario", "task_id", "question", "seed", "perturbations_json", "agent",
           "answer", "finished", "f1_by_row", "f1_by_item")
_OBS_ORDER = tuple(f.name for f in dataclasses.fields(Observation))
_OBS_FIELDS = frozenset(_OBS_ORDER)


def _step_json(call: dict, obs: Observation) -> list:
    try:
        json.dumps(call, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # a caller's own object, or nested too deep
        call = {"name": str(call.get("name") if isinstance(call, dict) else "?"), "arguments": {"raw": repr(call)[:2000]}}
    return [call, {name: getattr(obs, name) for name in _OBS_ORDER}]  # a shallow dict: json.dumps walks the nesting


def episode_line(episode: Episode) -> str:
    """One log line for ``episode``: JSON (ASCII: lone surrogates escaped) ending in ``\n``.

    Shape: ``{"episode_id", "world", ..., "steps": [[call, observation], ...]}`` with the
    :class:`Episode` fields and each observation as the fields of
    :class:`Observation`.
    """
    row = {f: getattr(episode, f) for f in _FIELDS}
    row["steps"] = [_step_json(call, obs) for call, obs in episode.steps]
    return json.dumps(row, ensure_ascii=True, default=repr) + "\n"


def episode_from_line(line: str) -> Episode:
    """The :class:`Episode` of one log line (:func:`episode_line`).

    Raises:
        ValueError: not JSON, or not the shape of an episode line.
    """
    row = json.loads(line)
    if not isinstance(row, dict) or not isinstance(row.get("episode_id"), str) or not isinstance(row.get("steps"), list):
        raise ValueError("not an episode line (episode_id or steps missing)")
    try:
        steps = [(call, Observation(**{k: v for k, v in obs.items() if k in _OBS_FIELDS})) for call, obs in row["steps"]]
        return Episode(**{f: row[f] for f in _FIELDS if f in row}, steps=steps)
    except (TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not an episode line ({exc})") from None


def _rejected(log_path: Path) -> Path:
    return log_path.with_name(log_path.name.removesuffix(".jsonl") + ".rejected.jsonl")


class _Commit:
    """One group commit of the episode log: the lines of every thread that joined it, written with
    one ``write`` and one ``fsync``; ``done`` once they are durable (or ``error`` says why not)."""

    __slots__ = ("data", "done", "error")

    def __init__(self) -> None:
        self.data: list[bytes] = []
        self.done = False
        self.error: BaseException | None = None


class _GroupCommitLog:
    """The episode log of one path, appended by any number of threads of this process with group
    commit (as a database's write-ahead log): a thread that finds no write under way writes every
    line queued so far, itself included, under the log's file lock with one ``fsync``; threads that
    arrive meanwhile queue their lines for the next write and wait. Each caller returns once its own
    lines are durable, as with a write of its own, but 64 sessions closing together cost one lock
    and one ``fsync`` instead of 64. Other processes still take turns through the file lock."""

    def __init__(self, path: Path):
        self.path = path
        self._cond = threading.Condition()
        self._open = _Commit()
        self._writing = False

    def append(self, data: bytes) -> None:
        """Append ``data`` (whole log lines) durably: written and ``fsync``-ed, by this thread or by the one writing
        the group it joined, before returning.

        Raises:
            OSError: the group's write failed (every caller in that group gets it; the next group writes again).
        """
        with self._cond:
            commit = self._open
            commit.data.append(data)
            while self._writing and not commit.done:
                self._cond.wait()
            if commit.done:  # another thread wrote it
                if commit.error is not None:
                    raise OSError(getattr(commit.error, "errno", None), f"episode log {self.path}: {commit.error}") from commit.error
                return
            self._writing, self._open = True, _Commit()  # this thread writes `commit`; later lines queue for the next write
        try:
            with file_lock(self.path):
                _append_durably(self.path, b"".join(commit.data))
        except BaseException as e:
            commit.error = e
            raise
        finally:
            with self._cond:
                commit.done, self._writing = True, False
                self._cond.notify_all()


_group_logs: dict[Path, _GroupCommitLog] = {}
_group_logs_lock = threading.Lock()


def _forget_group_logs() -> None:  # a forked child has none of its parent's threads: a write under way there never ends here
    global _group_logs_lock
    _group_logs.clear()
    _group_logs_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_group_logs)


def log_episodes(warehouse: Warehouse, episodes: list[Episode]) -> Path:
    """Append ``episodes`` to ``<warehouse>/episodes.log.jsonl`` durably (written and ``fsync``-ed
    under the log's file lock before returning), for :func:`drain_episode_log` to record.

    Threads of one process that log at the same time share one write and one ``fsync`` (group
    commit: :class:`_GroupCommitLog`); each returns once its own episodes are durable. A line left
    unfinished by a crash is closed first, so it cannot swallow the next one.

    Returns:
        The log's path.

    Raises:
        OSError: the log cannot be written (nothing half-written is left as a valid line).
    """
    path = warehouse.episode_log
    if episodes:
        with _group_logs_lock:
            log = _group_logs.get(path)
            if log is None:
                log = _group_logs[path] = _GroupCommitLog(path)
        log.append(_lines(episodes))
    return path


def log_episodes_unlocked(path: Path, episodes: list[Episode]) -> None:
    """Append ``episodes`` to the log file ``path`` and ``fsync`` it; the caller holds the log's lock.

    Raises:
        OSError: the log cannot be written.
    """
    if episodes:
        _append_durably(path, _lines(episodes))


def _lines(episodes: list[Episode]) -> bytes:
    return "".join(episode_line(e) for e in episodes).encode("ascii")


def _append_durably(path: Path, data: bytes) -> None:
    """Append ``data`` (whole log lines) to ``path`` and ``fsync`` it; the caller holds the log's lock
    (:func:`~worldforge.warehouse.atomic.append_lines`: a torn last line ended, a failed write taken back)."""
    append_lines(path, data)


@dataclass(frozen=True)
class LogDrain:
    """What one :func:`drain_episode_log` did: episodes recorded in the store, and log lines
    rejected (moved to ``episodes.log.rejected.jsonl``)."""

    recorded: int = 0
    rejected: int = 0


DRAIN_ATTEMPTS = 5
"""Drains an episode may fail (alone, with every other episode failing too) before it is rejected."""
_failed_drains: dict[str, int] = {}


DRAIN_BATCH_BYTES = 4 << 20
"""Log bytes recorded per store update (at least one whole line): bounds a drain's memory."""


def _take(path: Path, offset: int = 0, limit: int | None = None) -> tuple[bytes, int]:
    """The first complete lines of the log from byte ``offset``, about ``limit`` bytes of them
    (default :data:`DRAIN_BATCH_BYTES`; at least one line), and their byte count; an unfinished
    last line stays for later."""
    limit = limit or DRAIN_BATCH_BYTES
    with file_lock(path):
        if not path.exists():
            return b"", 0
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(limit)
            while data and b"\n" not in data:  # one line longer than the limit: read to its end
                more = fh.read(limit)
                if not more:
                    break
                data += more
    end = data.rfind(b"\n") + 1
    return data[:end], end


def _cut(path: Path, taken: int) -> None:
    """Remove the first ``taken`` bytes of the log (what was just recorded), keeping what was
    appended since; the rest is copied in 1 MiB chunks (memory does not grow with the log)."""
    with file_lock(path):
        for left in path.parent.glob(f".{path.name}.tmp-*"):  # a cut killed mid-copy (one cutter at a time: the lock)
            left.unlink(missing_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            with open(path, "rb") as src:
                src.seek(taken)
                first = src.read(1 << 20)
                if not first:
                    path.unlink()
                    return
                with open(tmp, "wb") as dst:
                    dst.write(first)
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def _reject(path: Path, lines: list[tuple[str, str]]) -> None:
    if not lines:
        return
    with open(_rejected(path), "a", encoding="ascii", errors="backslashreplace") as fh:
        for line, reason in lines:
            log.error("episode log line rejected (%s): %.200s", reason, line)
            fh.write(json.dumps({"reason": reason, "line": line}, ensure_ascii=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def drain_episode_log(warehouse: Warehouse) -> LogDrain:
    """Record the episodes of ``<warehouse>/episodes.log.jsonl`` in the episode store and take
    them out of the log (one drainer at a time; appends go on meanwhile).

    The batch is recorded with one :func:`record_episodes` (a part per world). When it fails, each episode is tried alone:
    those the store refuses while others succeed are poison and are moved to
    ``episodes.log.rejected.jsonl`` with the reason; when every one fails (a full disk, a
    locked store) nothing is taken out and the error is raised, unless an episode has failed
    so :data:`DRAIN_ATTEMPTS` times in this process: it is rejected then, so a lone poison
    episode cannot block the log forever. Recording is idempotent (an episode id seen before
    is replaced), so a crash between the store write and the log cut records nothing twice.

    Returns:
        The counts (:class:`LogDrain`).

    Raises:
        OSError, WarehouseError, polars errors: the store cannot be written at all; the log is untouched.
    """
    path = warehouse.episode_log
    if not path.exists():
        return LogDrain()
    recorded = rejected = offset = 0
    with file_lock(path.with_name(path.name + ".drain")):
        try:
            while True:  # a batch of lines at a time; what was recorded is cut from the log once, at the end
                done = _drain_batch(warehouse, path, offset)
                if done is None:
                    return LogDrain(recorded, rejected)
                recorded, rejected, offset = recorded + done[0], rejected + done[1], offset + done[2]
                if not done[0]:  # nothing recorded: the rest waits for the next drain
                    return LogDrain(recorded, rejected)
        finally:
            if offset:
                _cut(path, offset)


def _drain_batch(warehouse: Warehouse, path: Path, offset: int) -> tuple[int, int, int] | None:
    """Record the log's batch at byte ``offset`` (:data:`DRAIN_BATCH_BYTES`): ``(recorded, rejected,
    bytes taken)``, or ``None`` when it has no complete line there. The caller cuts the taken bytes."""
    data, taken = _take(path, offset)
    if not taken:
        return None
    good: list[Episode] = []
    bad: list[tuple[str, str]] = []
    for raw in data.decode("ascii", "backslashreplace").splitlines():
        if not raw.strip():
            continue
        try:
            good.append(episode_from_line(raw))
        except (ValueError, TypeError, KeyError) as exc:
            bad.append((raw, f"unreadable line: {exc}"))
    recorded = 0
    if good:
        try:
            record_episodes(warehouse, good)
            recorded = len(good)
        except Exception:
            failed: list[tuple[Episode, Exception]] = []
            for e in good:
                try:
                    record_episodes(warehouse, [e])
                    recorded += 1
                    _failed_drains.pop(e.episode_id, None)
                except Exception as exc:
                    failed.append((e, exc))
            if not recorded:  # the store, not the episodes: keep them, unless one failed too often
                for e, _ in failed:
                    _failed_drains[e.episode_id] = _failed_drains.get(e.episode_id, 0) + 1
                if all(_failed_drains[e.episode_id] < DRAIN_ATTEMPTS for e, _ in failed):
                    raise failed[0][1] from None
                keep = [e for e, _ in failed if _failed_drains[e.episode_id] < DRAIN_ATTEMPTS]
                failed = [(e, x) for e, x in failed if _failed_drains[e.episode_id] >= DRAIN_ATTEMPTS]
                with file_lock(path):  # the kept ones go back to the log's end
                    log_episodes_unlocked(path, keep)
            for e, exc in failed:
                _failed_drains.pop(e.episode_id, None)
                bad.append((episode_line(e).rstrip("\n"), f"{type(exc).__name__}: {exc}"))
    _reject(path, bad)
    return recorded, len(bad), taken


def settle_episode_log(warehouse: Warehouse) -> None:
    """Move legacy stores in (:func:`migrate_legacy_stores`) and drain the episode log before
    reading the store; never raises (a read-only warehouse, a store that cannot be written: the
    readers then see what the store holds, and it is logged)."""
    migrate_legacy_stores(warehouse)  # never raises: a file it cannot move is logged
    try:
        if warehouse.episode_log.exists():
            drain_episode_log(warehouse)
    except Exception as exc:  # a warning, not a traceback: the reader goes on
        log.warning("the episode log of %s could not be drained (%s: %s); reading the store as it is", warehouse, type(exc).__name__, exc)
