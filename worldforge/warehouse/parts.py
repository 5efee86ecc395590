"""A store of immutable Parquet parts: ``<root>/<key>/<part>/<table>.parquet``, appended without rewrites.

A write adds one *part*: a folder holding one zstd Parquet file per table and a manifest of their sizes and
SHA-256 (:data:`MANIFEST`, checked on read and by ``worldforge doctor``), built as a hidden
``.tmp-*`` sibling and renamed into place, so a reader sees a part whole or not at all and a
failed write leaves nothing behind. Parts are never changed afterwards; a write costs what it
adds, never a rewrite of the store (an updated DuckDB file is copied whole). Writers of one key
take turns under a file lock (``<root>/.locks/<key>.lock``,
:func:`~worldforge.warehouse.atomic.file_lock`); writers of different keys never wait for each
other. Under the lock a writer also sweeps what a killed writer left (``.tmp-*``, ``.gone-*``).

Within a key, part names sort in the order they were written: ``p-<order:20>-<pid>-<random>``,
the order being the time in ns since the epoch, or one more than the key's newest part when the
clock is behind it (:func:`next_part_name`, under the lock). A reader that must keep one row per
id keeps the row of the last part (the store's own replace rule, applied on read).
:func:`merge_parts` folds a key's newest parts into one named right after the newest it folds
(the caller supplies the merged rows), bounding the number of files a key holds; the folded parts
are renamed out of sight (``.gone-*``) before they are removed, and a reader that listed one a
moment before lists again (:func:`read_parts`).

The layout is that of hive-style partitioned Parquet datasets (Apache Hudi/Delta Lake keep a log
of such immutable files for the same reason); here the folder listing is the log.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
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
from worldforge.warehouse.atomic import file_lock, make_parent, out_of_space, remove_temporary

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


def part_name(order_ns: int | None = None, tag: str | None = None, suffix: str | None = None) -> str:
    """A part's name: ``p-<order_ns:020d>-<tag>-<suffix>`` (``order_ns``: now, in ns since the epoch;
    ``tag``: this process's id; ``suffix``: 8 random hex digits).

    ``order_ns=0`` names a part older than every part written by :func:`write_part` (a store of an
    earlier version moved in); a fixed ``tag`` and ``suffix`` give a name a re-run finds again.
    """
    order = time.time_ns() if order_ns is None else order_ns
    return f"{PART_PREFIX}{order:020d}-{tag or os.getpid()}-{suffix or uuid.uuid4().hex[:8]}"


def part_order(part: Path | str) -> int:
    """The order number in a part's name (ns since the epoch for a part written now)."""
    return int(Path(part).name[len(PART_PREFIX):len(PART_PREFIX) + 20])


def next_part_name(root: str | Path, key: str) -> str:
    """The name of ``key``'s next part: ordered now, or right after the key's newest part when the
    clock is behind it (a clock set back, another host); call under :func:`key_lock`."""
    newest = list_parts(root, key)
    order = time.time_ns()
    if newest:
        order = max(order, part_order(newest[-1]) + 1)
    return part_name(order)


def key_dir(root: str | Path, key: str) -> Path:
    """``<root>/<key>``: the folder of one key's parts."""
    return Path(root) / check_key(key)


def check_root(root: str | Path) -> Path:
    """``root`` when it is a folder or can be one.

    Raises:
        WarehouseError: ``root`` or a folder above it is a file.
    """
    root = Path(root)
    blocker = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise WarehouseError(f"{root}: cannot hold a store of parts: {blocker} is a file")
    return root


@contextlib.contextmanager
def key_lock(root: str | Path, key: str) -> Iterator[None]:
    """The writers' lock of one key (``<root>/.locks/<key>.lock``); the block may sweep the key's
    leftovers (:func:`sweep`), since no writer of the key is running meanwhile.

    Raises:
        WarehouseError: a bad key, or ``root`` is a file.
    """
    check_root(root)
    with file_lock(Path(root) / ".locks" / check_key(key)):
        yield


def sweep(root: str | Path, key: str) -> int:
    """Remove what killed writers of ``key`` left (``.tmp-*`` parts being written, ``.gone-*``
    parts being removed); call under :func:`key_lock`. Returns the folders removed."""
    folder = key_dir(root, key)
    if not folder.is_dir():
        return 0
    left = [p for p in folder.iterdir() if p.name.startswith((".tmp-", ".gone-"))]
    for p in left:
        remove_temporary(p)
    return len(left)


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


MANIFEST = "_manifest.json"
"""The file of a part that records each table file's size and SHA-256 as written: ``{"<table>.parquet":
{"bytes": int, "sha256": hex}}``. Written inside the hidden folder before the rename, so a part has it
whole or is not there. Parquet has no mandatory checksums: bytes overwritten inside a zstd page may decode
into other values without an error, so the size is compared on every read (:func:`table_files`, cheap) and
the SHA-256 by ``worldforge doctor`` (:func:`verify_part` with ``full=True``). Parts of earlier versions have
no manifest and are checked by decoding only."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_manifest(folder: str | Path) -> Path:
    """Record the size and SHA-256 of every ``*.parquet`` file of ``folder`` in its :data:`MANIFEST`."""
    folder = Path(folder)
    files = {p.name: {"bytes": p.stat().st_size, "sha256": _sha256(p)} for p in sorted(folder.glob("*.parquet"))}
    path = folder / MANIFEST
    path.write_text(json.dumps(files, indent=1, sort_keys=True), encoding="utf-8")
    return path


def verify_part(part: str | Path, full: bool = False) -> list[tuple[Path, str]]:
    """What is wrong with a part's files against its :data:`MANIFEST`: ``[(file, problem)]``, empty when sound.

    Args:
        part: the part's folder.
        full: also compare each file's SHA-256 (reads every byte); else sizes only (one ``stat`` per file).

    A part without a manifest (written by an earlier version) has nothing to compare: ``[]``. A manifest
    that cannot be read is itself a problem.

    Raises:
        FileNotFoundError: the part is gone (merged away while it was checked; list the parts again).
    """
    part = Path(part)
    manifest = part / MANIFEST
    if not manifest.is_file():
        _still_there(part)
        return []
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
        items = [(str(name), int(v["bytes"]), str(v["sha256"])) for name, v in recorded.items()]
    except (ValueError, TypeError, KeyError, AttributeError, OSError) as exc:
        _still_there(part)
        return [(manifest, f"unreadable manifest ({exc})")]
    problems = []
    for name, size, sha in items:
        f = part / name
        if not f.is_file():
            problems.append((f, "missing (the manifest lists it)"))
            continue
        got = f.stat().st_size
        if got != size:
            problems.append((f, f"{got:,} bytes, written as {size:,} (truncated or overwritten)"))
        elif full and _sha256(f) != sha:
            problems.append((f, "its SHA-256 differs from the one recorded when it was written (bytes overwritten)"))
    if problems:
        _still_there(part)
    return problems


def _still_there(part: Path) -> None:
    """Raise ``FileNotFoundError`` when ``part`` is gone (a merge took it away while it was checked): the
    reader lists the parts again (:func:`read_parts`) instead of calling a sound part damaged."""
    if not part.is_dir():
        raise FileNotFoundError(errno.ENOENT, "the part was merged away while it was checked", str(part))


def damaged_part_error(file: Path, problem: str) -> WarehouseError:
    """The one line a damaged part file gives: the file, what is wrong, what to do."""
    return WarehouseError(f"{file} is damaged ({problem}): `worldforge doctor --quarantine` moves its part aside "
                          "(nothing is deleted); then run the world's episodes again (`worldforge world run SPEC`)")


def write_part(root: str | Path, key: str, frames: dict[str, pl.DataFrame] | Callable[[Path], None],
               name: str | None = None) -> Path:
    """Add one part to ``key``: each frame as ``<table>.parquet`` (zstd), the folder renamed into place.

    Args:
        root: the store folder (created when missing).
        key: the part's key (a world name, for episodes); :func:`check_key`.
        frames: table name -> rows (an empty frame writes an empty file with its schema), or a function
            that writes the ``<table>.parquet`` files (zstd) into the folder it is given (a writer that streams,
            e.g. DuckDB's ``COPY ... TO``).
        name: the part's name (default :func:`part_name`, ordered now; under :func:`key_lock`,
            :func:`next_part_name`); it must not exist yet.

    Returns:
        The part's folder.

    Raises:
        WarehouseError: a bad key or table name, or the part already exists.
        StorageFullError: the file system ran out of space; nothing of the part is left.
        OSError, polars errors: the write failed otherwise; nothing of the part is left.
    """
    folder = key_dir(check_root(root), key)
    name = name or part_name()
    target = folder / name
    make_parent(target)
    tmp = folder / f".tmp-{name}"
    try:
        with out_of_space(target, tmp):
            tmp.mkdir()
            if callable(frames):
                frames(tmp)
                for f in tmp.iterdir():
                    check_key(f.name.removesuffix(".parquet"))
            else:
                for table, frame in frames.items():
                    check_key(table)
                    frame.write_parquet(tmp / f"{table}.parquet", compression=PARQUET_COMPRESSION, statistics=True)
            write_manifest(tmp)  # sizes and SHA-256 as written, before the part becomes visible
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


def parts_data_bytes(parts: list[Path]) -> list[int]:
    """Bytes the rows of each part take uncompressed (the column chunks' ``total_uncompressed_size`` in the
    Parquet footers, read by DuckDB's ``parquet_metadata``; only the footers are read): what reading a part
    costs in memory, which its size on disk (zstd) can understate a hundredfold for repetitive text.

    Raises:
        WarehouseError: a file's footer cannot be read (:func:`damaged_part_error`).
    """
    todo = [str(p) for p in parts if str(p) not in _DATA_BYTES]
    if len(_DATA_BYTES) + len(todo) > 4096:  # bounded: start afresh, before this call counts on any entry
        _DATA_BYTES.clear()
        todo = [str(p) for p in parts]
    if todo:
        con = duckdb.connect(config={"threads": 1})
        try:
            for part in todo:
                total = 0
                for f in sorted(Path(part).glob("*.parquet")):  # one file at a time: a damaged footer is named
                    try:
                        (n,) = con.execute("SELECT coalesce(sum(total_uncompressed_size), 0) FROM parquet_metadata(?)",
                                           [str(f)]).fetchone()
                    except duckdb.Error as exc:
                        raise damaged_part_error(f, f"its footer cannot be read: {str(exc).splitlines()[0]}") from None
                    total += int(n)
                _DATA_BYTES[part] = total
        finally:
            con.close()
    return [_DATA_BYTES[str(p)] for p in parts]


_DATA_BYTES: dict[str, int] = {}
""":func:`parts_data_bytes` of the parts seen so far (a part never changes once written; at most 4,096 kept)."""


def merge_parts(root: str | Path, key: str, parts: list[Path], frames: dict[str, pl.DataFrame] | Callable[[Path], None]) -> Path:
    """Replace ``parts`` of ``key`` by one new part holding ``frames`` (the caller's merge of them, as
    rows or as a function that writes the files: :func:`write_part`).

    Call under :func:`key_lock`, with ``parts`` the newest parts of the key (a suffix of
    :func:`list_parts`): the new part is named right after the newest of them, so it keeps their
    place in the order (before any part written later, after every part they came after).

    Returns:
        The new part.
    """
    merged = write_part(root, key, frames, name=part_name(part_order(parts[-1]) + 1))
    remove_parts(parts)
    return merged


def check_parts_whole(parts: list[Path]) -> None:
    """Every file of ``parts`` against its manifest, SHA-256 included (:func:`verify_part` with ``full``): call
    before reading parts whose rows are written again (a merge), so a damaged part is never folded into a new
    one with a fresh manifest.

    Raises:
        WarehouseError: the first damaged file (:func:`damaged_part_error`).
    """
    for p in parts:
        for bad, problem in verify_part(p, full=True):
            raise damaged_part_error(bad, problem)


def table_files(parts: list[Path], table: str, full: bool = False) -> list[str]:
    """``<part>/<table>.parquet`` of each part, as strings (for ``read_parquet``), each checked against its
    part's :data:`MANIFEST` first (sizes: one ``stat`` per file; ``full``: SHA-256 too, every byte read).

    Raises:
        WarehouseError: a file's size (or, with ``full``, SHA-256) differs from the one recorded when it was
            written (truncated or overwritten): one line naming it and what to do; nothing is read.
    """
    files = []
    for p in parts:
        f = p / f"{table}.parquet"
        for bad, problem in verify_part(p, full=full):
            if bad.name in (f.name, MANIFEST):
                raise damaged_part_error(bad, problem)
        files.append(str(f))
    return files


def read_parts(root: str | Path, read: Callable[[list[Path]], T], attempts: int = 5) -> T:
    """``read(list_parts(root))``, listed again when a part was merged away under the reader.

    Raises:
        PartGone: parts kept vanishing over ``attempts`` listings (a store merged without pause).
    """
    for attempt in range(attempts):
        if attempt:
            time.sleep(0.05 * attempt)  # a merge is removing parts: give it a moment
        parts = list_parts(root)
        try:
            return read(parts)
        except (duckdb.IOException, FileNotFoundError, pl.exceptions.ComputeError) as exc:
            if all(p.is_dir() for p in parts):  # not a merge: a real error
                raise
            if attempt == attempts - 1:
                raise PartGone(f"{root}: parts were merged away while being read, {attempts} times ({exc})") from None
    raise AssertionError("unreachable")
