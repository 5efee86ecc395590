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
log        ``episodes.log.jsonl``: every line a JSON object; a torn last line (a writer cut off) is ``torn``,
           passed over by the drain and not damage; a bad line before it is ``damaged``
catalog    each ``built`` row of ``catalog.duckdb`` whose world file is missing: ``missing`` (the next
           ``worldforge catalog build`` rebuilds it: a spec is skipped only while its world file exists)
========== ======================================================================================

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

import pyarrow.parquet as pq

from worldforge.errors import WarehouseError
from worldforge.warehouse.duck import damage_guard, open_readonly, read_every_block
from worldforge.warehouse.layout import STORES, Warehouse, WarehouseLike, repair_hint
from worldforge.warehouse.parts import MANIFEST, list_parts, verify_part

__all__ = ["Finding", "diagnose", "quarantine", "QUARANTINE"]

QUARANTINE = "quarantine"
"""The folder of a warehouse that damaged files are moved into (``<warehouse>/quarantine/<timestamp>/``)."""

STATES = ("ok", "damaged", "missing", "torn")
"""What a finding says of its file: sound; damaged (exit 1); a file something points at is gone (exit 1);
a log whose last line was cut off while written (passed over by its reader: not a failure)."""


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
        """``damaged`` or ``missing``: the doctor exits 1."""
        return self.state in ("damaged", "missing")

    @property
    def movable(self) -> bool:
        """A damaged file that :func:`quarantine` moves aside (a catalog row is not a file of its own)."""
        return self.state == "damaged" and self.kind != "catalog" and self.path.exists()


def _duckdb(path: Path, kind: str) -> Finding:
    try:
        read_every_block(path)
    except WarehouseError as exc:
        text = str(exc)
        detail = text.split(" is damaged (", 1)[1].split("): ", 1)[0] if " is damaged (" in text else text.removeprefix(f"{path}: ")
        return Finding(path, kind, "damaged", detail, repair_hint(path))
    return Finding(path, kind, "ok")


def _decode(path: Path) -> str | None:
    """Why a Parquet file cannot be decoded whole, ``None`` when it can."""
    try:
        pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file; each is the finding
        return f"cannot be decoded ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
    return None


def _part(part: Path) -> Finding:
    problems = verify_part(part, full=True)
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
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete, last = lines[:-1], lines[-1]  # last: what follows the final newline (empty when the file ends with one)
    for n, line in enumerate(complete, 1):
        if not line.strip():
            continue
        try:
            if not isinstance(json.loads(line), dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            return Finding(path, "log", "damaged", f"line {n} is not a JSON object ({str(exc).splitlines()[0]})",
                           "restore the file from a copy, or quarantine it (the sessions it holds are lost)")
    if last.strip():
        try:
            json.loads(last)
        except ValueError:
            return Finding(path, "log", "torn", f"its last line ({len(last):,} bytes, line {len(complete) + 1}) was cut off while written",
                           "nothing: the drain passes over a torn last line (that one session is lost)")
    return Finding(path, "log", "ok")


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


def diagnose(warehouse: WarehouseLike) -> list[Finding]:
    """Check every store of a warehouse (see the module's table), reading each file whole.

    Nothing is changed. Cost: every byte of every checked file is read once (a catalog of worlds: seconds
    per hundred MB).

    Returns:
        One :class:`Finding` per file checked (and per catalog row whose world is missing), worlds first, in
        path order; empty for an empty warehouse.

    Raises:
        WarehouseError: ``warehouse`` is not a folder.
    """
    wh = Warehouse.of(warehouse)
    if not wh.root.is_dir():
        raise WarehouseError(f"{wh.root}: no such warehouse folder")
    found = [_duckdb(p, "world") for p in wh.world_files()]
    stores = [wh.root / name for name in STORES] + wh.legacy_episode_stores()
    found += [_duckdb(p, "store") for p in sorted(set(stores)) if p.is_file()]
    found += [_part(p) for p in list_parts(wh.episode_store)]
    shards = sorted((wh.root / "trajectories").glob("*.parquet")) + sorted((wh.root / "datasets").rglob("*.parquet"))
    found += [_parquet(p) for p in shards if not any(part.startswith(".") for part in p.relative_to(wh.root).parts)]
    if wh.episode_log.is_file():
        found.append(_log(wh.episode_log))
    if wh.catalog.is_file():
        found += _catalog_rows(wh)
    return found


def quarantine(warehouse: WarehouseLike, findings: list[Finding], when: datetime | None = None) -> list[tuple[Path, Path]]:
    """Move every damaged file of ``findings`` (:attr:`Finding.movable`) to ``<warehouse>/quarantine/<timestamp>/``,
    under the same path relative to the warehouse (a world's ``.wal`` goes with it). Nothing is deleted.

    Args:
        warehouse: the warehouse the findings are of.
        findings: :func:`diagnose`'s findings.
        when: the timestamp of the folder (default: now, UTC, ``YYYYmmddTHHMMSSZ``).

    Returns:
        ``(from, to)`` of each move, in the findings' order.
    """
    wh = Warehouse.of(warehouse)
    stamp = (when or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    base = wh.root / QUARANTINE / stamp
    moved = []
    for f in findings:
        if not f.movable:
            continue
        sources = [f.path] + ([f.path.with_name(f.path.name + ".wal")] if f.path.suffix == ".duckdb" else [])
        for src in sources:
            if not src.exists():
                continue
            dst = base / src.resolve().relative_to(wh.root.resolve())
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)  # the same file system: a rename, never a copy and delete
            moved.append((src, dst))
    return moved
