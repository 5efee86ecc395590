"""``worldforge doctor``: every store of a warehouse read whole, damaged files named, and moved aside on request.

What is checked, by kind (``Finding.kind``):

========== ======================================================================================
world      ``<world>.duckdb``: every block in use read (:func:`~worldforge.warehouse.duck.read_every_block`:
           DuckDB verifies each block's checksum as it reads it)
store      ``trajectories.duckdb``, ``catalog.duckdb`` and earlier episode stores: the same full read
part       each part of the episode store: sizes and SHA-256 against its manifest
           (:data:`~worldforge.warehouse.parts.MANIFEST`), then every Parquet file decoded (pyarrow)
parquet    ``trajectories/<source>.parquet`` and the datasets' Parquet files: decoded whole (pyarrow); Parquet
           has no mandatory checksum, so bytes overwritten inside a page of these files may decode silently
log        ``episodes.log.jsonl`` (read line by line): every line a JSON object; a line that is not (a writer cut
           off mid-line, the next append starting a new line after it) is ``torn``, as the drain treats it: the
           drain sets such lines aside into ``episodes.log.rejected.jsonl`` and goes on; never moved to quarantine
           (the log holds the sessions not yet drained)
catalog    each ``built`` row of ``catalog.duckdb`` whose world file is missing: ``missing`` (the next
           ``worldforge catalog build`` rebuilds it: a spec is skipped only while its world file exists)
========== ======================================================================================

A file that cannot be read at all (an I/O error, a permission, a DuckDB error that does not say the file is
damaged) is ``unreadable``: named with the error, the doctor goes on with the other files.

:func:`quarantine` moves damaged files (a damaged part: its whole folder) to
``<warehouse>/quarantine/<UTC timestamp>/<same relative path>``: readers stop tripping on them, nothing is
deleted, and the next build writes them again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from worldforge.errors import WarehouseError
from worldforge.warehouse.duck import damage_guard, open_readonly, read_every_block
from worldforge.warehouse.layout import STORES, Warehouse, repair_hint
from worldforge.warehouse.parts import MANIFEST, list_parts, verify_part

__all__ = ["Finding", "diagnose", "quarantine", "QUARANTINE"]

QUARANTINE = "quarantine"
"""The folder of a warehouse that damaged files are moved into (``<warehouse>/quarantine/<timestamp>/``)."""

STATES = ("ok", "damaged", "missing", "unreadable", "torn")
"""What a finding says of its file: sound; damaged (exit 1); a file something points at is gone (exit 1);
a file that could not be read (an I/O error, a permission: exit 1, not moved); a log with lines cut off while
written (set aside by its reader: not a failure)."""

_UNREADABLE_ACTION = ("check the disk (`dmesg`) and the file's owner and permissions, then run `worldforge doctor` again; "
                      "not moved to quarantine")


@dataclass(frozen=True)
class Finding:
    """One file of a warehouse and what :func:`diagnose` found.

    Attributes:
        path: the file (a part: its folder).
        kind: ``world``, ``store``, ``part``, ``parquet``, ``log`` or ``catalog``.
        state: one of :data:`STATES`.
        detail: what is wrong (empty when ``ok``).
        action: what to do (empty when ``ok``).
    """

    path: Path
    kind: str
    state: str
    detail: str = ""
    action: str = ""

    @property
    def failed(self) -> bool:
        """``damaged``, ``missing`` or ``unreadable``: the doctor exits 1."""
        return self.state in ("damaged", "missing", "unreadable")

    @property
    def movable(self) -> bool:
        """A damaged file that :func:`quarantine` moves aside (a catalog row is not a file of its own; the
        episode log is never moved: it holds the sessions not yet drained)."""
        return self.state == "damaged" and self.kind not in ("catalog", "log") and self.path.exists()


def _unreadable(path: Path, kind: str, exc: BaseException) -> Finding:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return Finding(path, kind, "unreadable", f"cannot be read ({type(exc).__name__}: {first})", _UNREADABLE_ACTION)


def _duckdb(path: Path, kind: str) -> Finding:
    try:
        read_every_block(path)
    except WarehouseError as exc:
        text = str(exc)
        detail = text.split(" is damaged (", 1)[1].split("): ", 1)[0] if " is damaged (" in text else text.removeprefix(f"{path}: ")
        return Finding(path, kind, "damaged", detail, repair_hint(path))
    except (duckdb.Error, OSError) as exc:  # not damage DuckDB recognises (an I/O error, a permission): named, not a traceback
        return _unreadable(path, kind, exc)
    return Finding(path, kind, "ok")


def _decode(path: Path) -> str | None:
    """Why a Parquet file cannot be decoded whole, ``None`` when it can."""
    try:
        pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file; each is the finding
        return f"cannot be decoded ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return None


def _part(part: Path) -> Finding:
    try:
        problems = verify_part(part, full=True)
    except OSError as exc:  # a stat or a read refused (a permission, an I/O error)
        return _unreadable(part, "part", exc)
    if not problems:
        problems = [(f, why) for f in sorted(part.glob("*.parquet")) if (why := _decode(f)) is not None]
    if problems:
        detail = "; ".join(f"{f.name}: {why}" for f, why in problems)
        return Finding(part, "part", "damaged", detail, repair_hint(part / MANIFEST))
    return Finding(part, "part", "ok")


def _parquet(path: Path) -> Finding:
    why = _decode(path)
    return Finding(path, "parquet", "ok") if why is None else Finding(path, "parquet", "damaged", why, repair_hint(path))


def _log(path: Path) -> Finding:
    """The episode log, read line by line (its memory does not grow with the log). A line that is not a JSON object
    is what the drain sets aside (``episodes.log.rejected.jsonl``): ``torn``, as the drain treats it, never damage
    of the whole log; an unfinished last line waits for the next append, which starts a new line after it."""
    torn: list[int] = []
    n = 0
    try:
        with open(path, "rb") as fh:
            for n, line in enumerate(fh, 1):  # noqa: B007 - n is the line count after the loop
                if not line.strip():
                    continue
                try:
                    if not isinstance(json.loads(line), dict):
                        raise ValueError("not a JSON object")
                except ValueError:
                    torn.append(n)
    except OSError as exc:
        return _unreadable(path, "log", exc)
    if not torn:
        return Finding(path, "log", "ok")
    where = ", ".join(map(str, torn[:5])) + (f" and {len(torn) - 5:,} more" if len(torn) > 5 else "")
    detail = (f"{len(torn):,} line{'s' if len(torn) > 1 else ''} cut off while written or not a JSON object (line "
              f"{where} of {n:,})")
    return Finding(path, "log", "torn", detail,
                   "nothing: the drain sets such lines aside into episodes.log.rejected.jsonl (those sessions are lost) "
                   "and records the others; the log is never quarantined (it holds the sessions not yet drained)")


def _catalog_rows(wh: Warehouse) -> list[Finding]:
    """A finding per ``built`` catalog row whose world file is missing (none when the catalog is damaged or empty)."""
    try:
        with open_readonly(wh.catalog) as con, damage_guard(wh.catalog):
            has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                              "AND table_name = 'catalog'").fetchall()[0][0]
            rows = con.execute("SELECT world, spec_path FROM catalog WHERE status = 'built' ORDER BY world").fetchall() if has else []
    except WarehouseError:
        return []  # the catalog file's own finding says it is damaged
    return [Finding(wh.world(world), "catalog", "missing", f"catalog row of {spec} (built) points at a world file that is not there",
                    "run `worldforge catalog build` again: it rebuilds a spec whose world file is missing")
            for world, spec in rows if not wh.world(world).is_file()]


def diagnose(warehouse: Warehouse) -> list[Finding]:
    """Check every store of a warehouse (see the module's table), reading each file whole.

    Nothing is changed. Cost: every byte of every checked file is read once (a catalog of worlds: seconds
    per hundred MB).

    Returns:
        One :class:`Finding` per file checked (and per catalog row whose world is missing), worlds first, in
        path order; empty for an empty warehouse.

    Raises:
        WarehouseError: ``warehouse`` is not a folder.
    """
    if not warehouse.root.is_dir():
        raise WarehouseError(f"{warehouse.root}: no such warehouse folder")
    found = [_duckdb(p, "world") for p in warehouse.world_files()]
    stores = [warehouse.root / name for name in STORES] + warehouse.legacy_episode_stores()
    found += [_duckdb(p, "store") for p in sorted(set(stores)) if p.is_file()]
    found += [_part(p) for p in list_parts(warehouse.episode_store)]
    shards = sorted((warehouse.root / "trajectories").glob("*.parquet")) + sorted((warehouse.root / "datasets").rglob("*.parquet"))
    found += [_parquet(p) for p in shards if not any(part.startswith(".") for part in p.relative_to(warehouse.root).parts)]
    if warehouse.episode_log.is_file():
        found.append(_log(warehouse.episode_log))
    if warehouse.catalog.is_file():
        found += _catalog_rows(warehouse)
    return found


def quarantine(warehouse: Warehouse, findings: list[Finding], when: datetime | None = None) -> list[tuple[Path, Path]]:
    """Move every damaged file of ``findings`` (:attr:`Finding.movable`) to ``<warehouse>/quarantine/<timestamp>/``,
    under the same path relative to the warehouse (a world's ``.wal`` goes with it). Nothing is deleted.

    Args:
        warehouse: the warehouse the findings are of.
        findings: :func:`diagnose`'s findings.
        when: the timestamp of the folder (default: now, UTC, ``YYYYmmddTHHMMSSZ``).

    Returns:
        ``(from, to)`` of each move, in the findings' order.
    """
    stamp = (when or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    base = warehouse.root / QUARANTINE / stamp
    moved = []
    for f in findings:
        if not f.movable:
            continue
        sources = [f.path] + ([f.path.with_name(f.path.name + ".wal")] if f.path.suffix == ".duckdb" else [])
        for src in sources:
            if not src.exists():
                continue
            dst = base / src.resolve().relative_to(warehouse.root.resolve())
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)  # the same file system: a rename, never a copy and delete
            moved.append((src, dst))
    return moved
