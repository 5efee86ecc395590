"""Atomic writes of files and folders: a temporary sibling renamed over the target on success.

A failed or interrupted write leaves the previous file or folder untouched and removes its
temporary sibling (``os.replace`` is atomic on POSIX within one file system). DuckDB files have
their own writer, :func:`worldforge.warehouse.duck.atomic_duckdb`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_dir(target: str | Path) -> Iterator[Path]:
    """A temporary folder that replaces ``target`` when the block succeeds.

    The folder is built beside ``target`` and swapped in with two renames (the old folder out, the
    new one in): a failed build never leaves a half-written folder, but a reader that looks between
    the two renames finds no folder at all.

    Yields:
        The temporary folder (mode 0755) beside ``target``; write the new content there.

    Raises:
        Whatever the block raises; the temporary folder is removed and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    tmp.chmod(0o755)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_file(target: str | Path) -> Iterator[Path]:
    """A temporary file path beside ``target`` that replaces it when the block succeeds.

    Yields:
        The temporary path (not created yet); the block writes it.

    Raises:
        Whatever the block raises; the temporary file is removed and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


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
