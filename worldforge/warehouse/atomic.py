"""Atomic writes of files and folders: a temporary sibling renamed over the target on success.

A failed or interrupted write (an exception in the block, a failing writer, ``KeyboardInterrupt``)
leaves the previous file or folder untouched and removes its temporary sibling, named
``.NAME.tmp-<pid>-*`` (``os.replace`` is atomic on POSIX within one file system). A process killed
outright (SIGKILL, the out-of-memory killer) runs no cleanup: the next writer of the same target
removes the temporaries of writers that no longer run (:func:`sweep_dead_temporaries`). DuckDB
files have their own writer, :func:`worldforge.warehouse.duck.atomic_duckdb`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from worldforge.errors import StorageFullError, WarehouseError


def _remove(path: Path) -> None:
    """Remove a file, link or folder if it exists (errors ignored: best-effort cleanup)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


_SIBLINGS = (".wal", ".tmp", ".old")
"""What writers put beside a temporary path: DuckDB's write-ahead log and spill folder, DuckDB
``COPY``'s own temporary file, :func:`atomic_dir`'s old folder."""


def remove_temporary(tmp: str | Path) -> None:
    """Remove a temporary file or folder and what writers put beside it (``tmp.wal``, ``tmp.tmp``, ``tmp.old``)."""
    tmp = Path(tmp)
    for p in (tmp, *(tmp.with_name(tmp.name + s) for s in _SIBLINGS)):
        _remove(p)


def temporary_prefix(target: Path) -> str:
    """The name prefix of this process's temporaries of ``target``: ``.NAME.tmp-<pid>-``."""
    return f".{target.name}.tmp-{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def sweep_dead_temporaries(target: str | Path) -> int:
    """Remove the temporaries of ``target`` (``.NAME.tmp-<pid>-*``, and what writers put beside them)
    left by writers whose process no longer runs on this machine (killed with SIGKILL, out of memory).

    A temporary whose process still runs (another writer at work) is left alone, and so is one
    without a process id in its name. A writer of :func:`atomic_dir` killed between its two renames
    left no ``target`` but the old folder (``...tmp-*.old``) and the complete new one: the new one is
    put in place. Never raises (a file that cannot be removed stays).

    Returns:
        The temporaries removed.
    """
    target = Path(target)
    prefix = f".{target.name}.tmp-"
    removed = 0
    try:
        names = [p for p in target.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return 0
    dead = [p for p in names if (pid := p.name[len(prefix):].split("-", 1)[0].split(".", 1)[0]).isdigit()
            and int(pid) != os.getpid() and not _pid_alive(int(pid))]
    for old in dead:  # killed mid-swap (atomic_dir): the new folder is complete, the old one out of the way
        new = old.with_name(old.name.removesuffix(".old"))
        if old.name.endswith(".old") and new.is_dir() and not (target.exists() or target.is_symlink()):
            with contextlib.suppress(OSError):
                os.replace(new, target)
    for p in dead:
        _remove(p)
        removed += 1
    return removed


_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_FULL_TEXTS = tuple(os.strerror(e) for e in sorted(_FULL_ERRNOS)) + ("No space left on device", "Disk quota exceeded")
"""How a full file system reads in the messages of writers that do not raise ``OSError`` (DuckDB's
``IOException``/``TransactionException``, polars' and pyarrow's errors): the C library's text."""


def is_storage_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) says the file system is full: an ``OSError`` with
    ``ENOSPC``/``EDQUOT``, or an error of another writer (DuckDB, polars, pyarrow) whose message carries
    the C library's text for them."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, StorageFullError):
            return True
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return True
        if any(t in str(exc) for t in _FULL_TEXTS):
            return True
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)  # ``raise ... from None`` ends the chain
    return False


_QUOTED_PATH = re.compile(r'"(/[^"]+)"')
"""A path in a writer's message (DuckDB: ``Could not write file "PATH": No space left on device``)."""


def _full_path(exc: BaseException) -> Path | None:
    """The file the failing write named (``OSError.filename``, or a quoted absolute path in the message), if any."""
    while exc is not None:
        if isinstance(exc, OSError) and isinstance(exc.filename, str):
            return Path(exc.filename)
        if m := _QUOTED_PATH.search(str(exc)):
            return Path(m.group(1))
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


def _device(path: Path) -> int | None:
    """The device of ``path``'s nearest existing ancestor (itself included), or None."""
    with contextlib.suppress(OSError, StopIteration):
        return next(a for a in [path, *path.parents] if a.exists()).stat().st_dev
    return None


def _bytes_in(paths: Iterable[Path]) -> int:
    """Bytes held by files and folders at ``paths`` (missing ones count 0)."""
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            if p.is_dir() and not p.is_symlink():
                total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            elif p.exists():
                total += p.stat().st_size
    return total


@contextlib.contextmanager
def out_of_space(target: str | Path, tmp: str | Path | None = None) -> Iterator[None]:
    """Turn a write of ``target`` (through the temporary ``tmp``) that runs out of space into one
    :class:`~worldforge.errors.StorageFullError` naming ``target``, the bytes the write had used and
    the space free once ``tmp`` (and what writers put beside it) is removed.

    When the write ran out of space on another file system than ``target``'s (the file the error names:
    DuckDB spilling to the temporary folder), the error names that file and its file system's free space.
    Any other exception, and ``KeyboardInterrupt``, pass through unchanged.

    Raises:
        StorageFullError: the block raised an error :func:`is_storage_full` recognises.
    """
    try:
        yield
    except Exception as exc:  # KeyboardInterrupt and the like pass through as they are
        if isinstance(exc, StorageFullError) or not is_storage_full(exc):
            raise
        target = Path(target)
        written = 0
        if tmp is not None:
            tmp = Path(tmp)
            written = _bytes_in([tmp, *(tmp.with_name(tmp.name + s) for s in _SIBLINGS)])
            remove_temporary(tmp)
        full = _full_path(exc)
        elsewhere = full if full is not None and _device(full) not in (None, _device(target.parent)) else None
        where = elsewhere if elsewhere is not None else target.parent  # e.g. DuckDB spilling to the temporary folder
        free = None
        with contextlib.suppress(OSError, StopIteration):
            free = shutil.disk_usage(next(a for a in [where, *where.parents] if a.exists())).free
        raise StorageFullError(str(target), written, free, elsewhere=None if elsewhere is None else str(elsewhere)) from exc


def make_parent(target: Path) -> None:
    """Create ``target``'s folder (and its parents).

    Raises:
        WarehouseError: a file is in the way (one line naming it, not a traceback).
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((a for a in [target.parent, *target.parent.parents] if a.exists() and not a.is_dir()), target.parent)
        raise WarehouseError(f"cannot create the folder {target.parent}: {blocker} is a file") from None


@contextlib.contextmanager
def atomic_dir(target: str | Path) -> Iterator[Path]:
    """A temporary folder that replaces ``target`` when the block succeeds.

    The folder is built beside ``target`` and swapped in with two renames (the old folder out, the
    new one in): a failed build never leaves a half-written folder, but a reader that looks between
    the two renames finds no folder at all. When the second rename fails the old folder is put back.

    Yields:
        The temporary folder (mode 0755) beside ``target``; write the new content there.

    Raises:
        StorageFullError: the file system ran out of space (:func:`out_of_space`).
        Exception: whatever else the block (or the swap) raises, ``KeyboardInterrupt`` included; the temporary
            folder is removed and ``target`` is untouched.
    """
    target = Path(target)
    if target.is_file():
        raise WarehouseError(f"{target}: is a file, not a folder (move or remove it, then run again)")
    make_parent(target)
    sweep_dead_temporaries(target)  # what a killed build of this folder left
    with out_of_space(target):
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=temporary_prefix(target)))
    try:
        with out_of_space(target, tmp):
            tmp.chmod(0o755)
            yield tmp
            old = tmp.with_name(tmp.name + ".old")  # unique while tmp exists
            moved = False
            try:
                if target.exists() or target.is_symlink():
                    os.replace(target, old)
                    moved = True
                os.replace(tmp, target)
            except BaseException:
                if moved:
                    os.replace(old, target)
                raise
            _remove(old)
    finally:
        remove_temporary(tmp)


@contextlib.contextmanager
def atomic_file(target: str | Path) -> Iterator[Path]:
    """A temporary file path beside ``target`` that replaces it when the block succeeds.

    Yields:
        The temporary path (an empty file, reserving a unique name); the block writes it.

    Raises:
        StorageFullError: the file system ran out of space (:func:`out_of_space`).
        Exception: whatever else the block (or the rename) raises, ``KeyboardInterrupt`` included; the temporary
            file (and anything a writer put beside it under its name) is removed and ``target`` is
            untouched.
    """
    target = Path(target)
    if target.is_dir():  # checked before anything is written: one clear line, no temporary file
        raise WarehouseError(f"{target}: is a folder, not a file (move or remove it, then run again)")
    make_parent(target)
    sweep_dead_temporaries(target)  # what a killed writer of this file left
    with out_of_space(target):
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=temporary_prefix(target))
        os.close(fd)
    tmp = Path(name)
    try:
        with out_of_space(target, tmp):
            yield tmp
            os.replace(tmp, target)
    finally:
        remove_temporary(tmp)


def write_jsonl_atomic(path: str | Path, rows: Iterable[dict]) -> Path:
    """Write one JSON object per line (UTF-8, non-ASCII kept) to ``path`` atomically.

    Returns:
        ``path``.
    """
    path = Path(path)
    with atomic_file(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def append_lines(path: str | Path, data: bytes) -> None:
    """Append ``data`` (whole lines, ending in ``\n``) to ``path`` (created when missing) and ``fsync`` it; the
    caller serialises the appends (a lock). A last line torn by a crash is first ended with ``\n``, so a reader
    skips it alone and reads the new lines; a write or ``fsync`` that fails (a full disk) is taken back with
    ``ftruncate``, so a failed append leaves the file as it was.

    Raises:
        OSError: the append failed; nothing of ``data`` stays in the file.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``PATH.lock`` (beside ``path``, its folder created) for the block:
    writers of one store, in any process on this machine, take turns."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
