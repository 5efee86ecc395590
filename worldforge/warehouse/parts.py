"""A store of immutable Parquet parts: ``<root>/<key>/<part>/<table>.parquet``, appended without rewrites.

A write adds one *part*: a folder holding one zstd Parquet file per table, built as a hidden
``.tmp-*`` sibling and renamed into place, so a reader sees a part whole or not at all and a
failed write leaves nothing behind. Parts are never changed afterwards; the cost of a write grows
with what it adds, never with the store (an updated DuckDB file is copied whole). Writers of one
key take turns under a file lock beside it (:func:`~worldforge.warehouse.atomic.file_lock`);
writers of different keys never wait for each other.

Part names sort in the order they were written (``p-<nanoseconds since the epoch:20>-<pid>-<random>``),
so a reader that must keep one row per id keeps the row of the last part (the store's own
replace rule, applied on read). :func:`merge_parts` folds a key's newest parts into one (the
caller supplies the merged rows), bounding the number of files a key holds; the folded parts are
renamed out of sight (``.gone-*``) before they are removed, and a reader that listed one a moment
before gets :class:`PartGone` and lists again (:func:`read_parts`).

The layout is that of hive-style partitioned Parquet datasets (Apache Hudi/Delta Lake keep a log
of such immutable files for the same reason); here the folder listing is the log.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl

from worldforge.errors import WarehouseError
from worldforge.warehouse.atomic import file_lock, make_parent, remove_temporary

PART_PREFIX = "p-"
PARQUET_COMPRESSION = "zstd"
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
_PART = re.compile(r"^p-\d{20}-[A-Za-z0-9_-]+$")
T = TypeVar("T")


class PartGone(WarehouseError):
    """A part listed by a reader was merged away before the reader opened it (list again)."""


def check_key(key: str) -> str:
    """``key`` when it can name a folder of the store (letters, digits, ``_ . -``; not ``.`` or ``..``).

    Raises:
        WarehouseError: any other name (a path, an empty name, a hidden name).
    """
    if not _KEY.match(key) or key in (".", ".."):
        raise WarehouseError(f"{key!r}: not a store key (letters, digits, '_', '.', '-'; it names a folder)")
    return key


def part_name(order_ns: int | None = None, tag: str | None = None) -> str:
    """A new part's name: ``p-<order_ns:020d>-<pid>-<8 hex>`` (``order_ns``: now, in ns since the epoch).

    ``order_ns=0`` names a part older than every part written by this module (a migrated store);
    ``tag`` (letters, digits, ``_ -``) replaces the pid in the name.
    """
    order = time.time_ns() if order_ns is None else order_ns
    return f"{PART_PREFIX}{order:020d}-{tag or os.getpid()}-{uuid.uuid4().hex[:8]}"


def key_dir(root: str | Path, key: str) -> Path:
    """``<root>/<key>``: the folder of one key's parts."""
    return Path(root) / check_key(key)


@contextlib.contextmanager
def key_lock(root: str | Path, key: str) -> Iterator[None]:
    """The writers' lock of one key (``<root>/<key>.lock``)."""
    with file_lock(key_dir(root, key)):
        yield


def list_parts(root: str | Path, key: str | None = None) -> list[Path]:
    """The complete parts of one key, or of every key, oldest first (by name, across keys).

    Hidden folders (a part being written or being removed) and anything that is not a part are
    passed over; a missing root is an empty store.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    keys = [key_dir(root, key)] if key is not None else [d for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    found = [p for k in keys if k.is_dir() for p in k.iterdir() if _PART.match(p.name) and p.is_dir()]
    return sorted(found, key=lambda p: (p.name, p.parent.name))


def write_part(root: str | Path, key: str, frames: dict[str, pl.DataFrame], name: str | None = None) -> Path:
    """Add one part to ``key``: each frame as ``<table>.parquet`` (zstd), the folder renamed into place.

    Args:
        root: the store folder (created when missing).
        key: the part's key (a world name, for episodes); :func:`check_key`.
        frames: table name -> rows (an empty frame writes an empty file with its schema).
        name: the part's name (default :func:`part_name`); it must not exist yet.

    Returns:
        The part's folder.

    Raises:
        WarehouseError: a bad key or table name, or the part already exists.
        OSError, polars errors: the write failed; nothing of the part is left.
    """
    folder = key_dir(root, key)
    name = name or part_name()
    target = folder / name
    make_parent(target)
    tmp = folder / f".tmp-{name}"
    try:
        tmp.mkdir()
        for table, frame in frames.items():
            check_key(table)
            frame.write_parquet(tmp / f"{table}.parquet", compression=PARQUET_COMPRESSION, statistics=True)
        if target.exists():
            raise WarehouseError(f"{target}: the part exists already")
        os.rename(tmp, target)
    finally:
        remove_temporary(tmp)
    return target


def remove_parts(parts: list[Path]) -> None:
    """Take parts out of the store: each renamed to a hidden ``.gone-*`` name first (readers stop
    seeing it at once), then removed."""
    for p in parts:
        gone = p.with_name(f".gone-{p.name}")
        with contextlib.suppress(FileNotFoundError):
            os.rename(p, gone)
        remove_temporary(gone)


def merge_parts(root: str | Path, key: str, parts: list[Path], frames: dict[str, pl.DataFrame]) -> Path:
    """Replace ``parts`` of ``key`` by one new part holding ``frames`` (the caller's merge of them).

    Call under :func:`key_lock`: the new part's name sorts after every part of the key, so it must
    be the newest (no writer of the key may add one meanwhile), and ``parts`` must be the newest
    parts of the key (a suffix of :func:`list_parts`), or rows an older part replaced would win again.

    Returns:
        The new part.
    """
    merged = write_part(root, key, frames)
    remove_parts(parts)
    return merged


def table_files(parts: list[Path], table: str) -> list[str]:
    """``<part>/<table>.parquet`` of each part, as strings (for ``read_parquet``)."""
    return [str(p / f"{table}.parquet") for p in parts]


def read_parts(root: str | Path, read: Callable[[list[Path]], T], attempts: int = 5) -> T:
    """``read(list_parts(root))``, listed again when a part was merged away under the reader.

    Raises:
        PartGone: parts kept vanishing over ``attempts`` listings (a store merged without pause).
    """
    for attempt in range(attempts):
        parts = list_parts(root)
        try:
            return read(parts)
        except (duckdb.IOException, FileNotFoundError, pl.exceptions.ComputeError) as exc:
            if all(p.is_dir() for p in parts):  # not a merge: a real error
                raise
            if attempt == attempts - 1:
                raise PartGone(f"{root}: parts were merged away while being read, {attempts} times ({exc})") from None
    raise AssertionError("unreachable")
