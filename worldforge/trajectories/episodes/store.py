"""The episode store ``warehouse/episodes/``: immutable zstd Parquet parts, ``episodes/<world>/<part>/<table>.parquet``
(:mod:`worldforge.warehouse.parts`), in the canonical trajectory shape plus the ``episodes`` and ``steps`` tables
(the package docstring, :mod:`worldforge.trajectories.episodes`, describes the tables and the policy).

This module writes parts (:func:`record_episodes`), merges a world's small parts, builds the SQL views that keep
each episode id's newest part, and moves stores of earlier versions in (:func:`migrate_legacy_stores`). Episodes
reach it through the episode log (:mod:`worldforge.trajectories.episodes.log`); readers read it through
:mod:`worldforge.trajectories.episodes.read`, which drains that log first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import polars as pl

from worldforge.errors import WarehouseError
from worldforge.trajectories.episodes.model import Episode
from worldforge.trajectories.model import storable_row, tool_call_text
from worldforge.trajectories.store import TRAJECTORY_SCHEMA, TURN_SCHEMA
from worldforge.warehouse.atomic import file_lock
from worldforge.warehouse.duck import quote_ident, quote_str, read_table, reading_store, table_ddl
from worldforge.warehouse.layout import Warehouse
from worldforge.warehouse.parts import (
    PARQUET_COMPRESSION,
    check_key,
    check_parts_whole,
    check_root,
    key_lock,
    list_parts,
    merge_parts,
    next_part_name,
    part_name,
    parts_data_bytes,
    sweep,
    table_files,
    write_part,
)

log = logging.getLogger(__name__)

EPISODE_SCHEMA = {
    "episode_id": pl.String, "world": pl.String, "scenario": pl.String, "task_id": pl.String, "seed": pl.Int64,
    "perturbations_json": pl.String, "agent": pl.String, "finished": pl.Boolean, "f1_by_row": pl.Float64,
    "f1_by_item": pl.Float64, "answer": pl.String, "recorded_at": pl.Datetime("us"),
}
STEP_SCHEMA = {
    "episode_id": pl.String, "turn_idx": pl.Int64, "tool": pl.String, "error": pl.Boolean,
    "fired_json": pl.String, "revealed_json": pl.String, "leaks_blocked": pl.Int64,
}



def _action_text(call: dict) -> str:
    try:
        return tool_call_text(str(call.get("name")), call.get("arguments", {}))
    except (TypeError, ValueError, RecursionError):  # not JSON (a caller's own object) or nested too deep
        return json.dumps({"name": str(call.get("name")), "arguments": {"raw": repr(call.get("arguments"))[:2000]}}, ensure_ascii=False)


def _frames(episodes: list[Episode]) -> dict[str, pl.DataFrame]:
    """The four tables' new rows; every string made :func:`storable`."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    traj, turns, eps, steps = [], [], [], []
    for e in episodes:
        source_path = f"simenv/{e.world}" + (f"/{e.scenario}" if e.scenario else "")
        traj.append(storable_row((e.episode_id, "simenv", source_path, "simenv_episode", "search", e.question, len(e.steps), e.episode_id, "", 0)))
        for i, (call, obs) in enumerate(e.steps):
            turns.append(storable_row((e.episode_id, i, _action_text(call), obs.text, None, None, None, None, None, None)))
            steps.append(storable_row((e.episode_id, i, obs.tool, obs.error, json.dumps(obs.fired), json.dumps(obs.revealed), obs.leaks_blocked)))
        eps.append(storable_row((e.episode_id, e.world, e.scenario, e.task_id, e.seed, e.perturbations_json, e.agent, e.finished,
                          e.f1_by_row, e.f1_by_item, e.answer, now)))
    return {
        "trajectories": pl.DataFrame(traj, schema=TRAJECTORY_SCHEMA, orient="row"),
        "turns": pl.DataFrame(turns, schema=TURN_SCHEMA, orient="row"),
        "episodes": pl.DataFrame(eps, schema=EPISODE_SCHEMA, orient="row"),
        "steps": pl.DataFrame(steps, schema=STEP_SCHEMA, orient="row"),
    }


EPISODE_TABLES = ("trajectories", "turns", "episodes", "steps")
"""The episode store's tables, in the order their rows are written."""
_ID_COLUMN = {"trajectories": "trajectory_id", "turns": "trajectory_id", "episodes": "episode_id", "steps": "episode_id"}
_SCHEMAS = {"trajectories": TRAJECTORY_SCHEMA, "turns": TURN_SCHEMA, "episodes": EPISODE_SCHEMA, "steps": STEP_SCHEMA}
MERGE_PARTS = 16
"""Parts a world may hold before its newest small ones are merged into one (:func:`record_episodes`)."""
MERGE_PART_BYTES = 16 << 20
"""A part whose rows take at least this much uncompressed is never merged again: a merge rewrites only
the newest small parts."""
MERGE_MEMORY = "128MB"
"""DuckDB's ``memory_limit`` for a merge of parts (it spills beyond it): what a merge may add to a server."""


def record_episodes(warehouse: Warehouse, episodes: list[Episode]) -> Path:
    """Add episodes to the episode store ``<warehouse>/episodes/``: one new Parquet part per world.

    Every world's episodes, bundled or catalog, served or the oracle's, go to the same store under
    the same rule (:mod:`worldforge.warehouse.parts`): ``episodes/<world>/<part>/{trajectories,
    turns,episodes,steps}.parquet``, zstd. A write adds one part per world of the batch, each
    renamed into place whole, and rewrites nothing. Writers of one world take turns under a lock;
    writers of different worlds never wait. An episode id seen before is replaced: readers keep
    each id's rows from its newest part. When a world holds more than :data:`MERGE_PARTS` parts,
    its newest parts under :data:`MERGE_PART_BYTES` are merged into one (a merge that fails is
    logged: the part is written, the merge is tried again at the next write). Text is stored as valid UTF-8: lone surrogates
    become their ``\\uXXXX`` escape (:func:`storable`). Within a batch the last episode with an id wins.

    Returns:
        The store folder (``<warehouse>/episodes``).

    Raises:
        WarehouseError: a world name that cannot name a folder, or a warehouse that is a file
            (checked before anything is written).
        OSError, polars errors: a world's part cannot be written; it is left out whole, and the
            worlds of the batch written before it keep theirs (recording again replaces by id,
            so a retry records nothing twice).
    """
    root = check_root(warehouse.episode_store)
    latest = {e.episode_id: e for e in episodes}  # the last one of an id wins
    by_world: dict[str, list[Episode]] = {}
    for e in latest.values():
        by_world.setdefault(check_key(e.world), []).append(e)
    for world, batch in by_world.items():
        frames = _frames(batch)
        with key_lock(root, world):
            sweep(root, world)  # what a killed writer of this world left
            write_part(root, world, frames, name=next_part_name(root, world))
            parts = list_parts(root, world)
            if len(parts) > MERGE_PARTS:
                try:
                    _merge_newest(root, world, parts)
                except (OSError, duckdb.Error, pl.exceptions.PolarsError, WarehouseError) as exc:  # a damaged part too
                    log.warning("episodes of %s: merging its newest parts failed (%s: %s); they stay as they are",
                                world, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
    return root


def _merge_newest(root: Path, world: str, parts: list[Path]) -> None:
    """Merge the world's newest parts into one, under its lock: the newest parts each holding under
    :data:`MERGE_PART_BYTES` of rows (uncompressed, :func:`~worldforge.warehouse.parts.parts_data_bytes`), as many
    as hold twice that together, so a merge reads at most twice that much; a merged part of at least
    :data:`MERGE_PART_BYTES` is not merged again, and two parts just under it still merge (the parts stay few).

    The rows are streamed from the parts into the new part's files by DuckDB (``COPY ... TO``, at
    most :data:`MERGE_MEMORY` of memory), never held whole in this process: a merge of parts that
    hold 2 MiB episodes used to load them all as data frames, and measuring parts by their bytes on
    disk let repetitive text (a hundredfold smaller in zstd) be merged again and again, each merge
    reading every episode the world had recorded.
    """
    newest = parts[-MERGE_PARTS - 1:]
    small: list[Path] = []
    total = 0
    for p, size in zip(reversed(newest), reversed(parts_data_bytes(newest))):
        if size >= MERGE_PART_BYTES or total + size > 2 * MERGE_PART_BYTES:
            break
        small.append(p)
        total += size
    if len(small) < 2:
        return
    small.reverse()
    check_parts_whole(small)  # a damaged part is never folded into a merged one with a fresh manifest

    def copy(folder: Path) -> None:
        con = duckdb.connect(config={"memory_limit": MERGE_MEMORY, "threads": 1, "preserve_insertion_order": False,
                                     "allocator_background_threads": True,
                                     "temp_directory": str(folder / ".spill")})
        try:
            _episode_views(con, small)
            for t in EPISODE_TABLES:
                con.execute(f"COPY (SELECT * FROM {t}) TO {quote_str(str(folder / f'{t}.parquet'))} "
                            f"(FORMAT parquet, COMPRESSION {PARQUET_COMPRESSION})")
        finally:
            con.close()
        shutil.rmtree(folder / ".spill", ignore_errors=True)

    merge_parts(root, world, small, copy)


def _episode_views(con: duckdb.DuckDBPyConnection, parts: list[Path], full: bool = False) -> None:
    """Views ``trajectories``, ``turns``, ``episodes``, ``steps`` over ``parts`` (oldest first):
    each episode's rows from the newest part that holds it (empty tables when there is no part).
    Each file is checked against its part's manifest first (:func:`~worldforge.warehouse.parts.table_files`;
    ``full``: SHA-256 too)."""
    if not parts:
        for t in EPISODE_TABLES:
            con.execute(table_ddl(t, _SCHEMAS[t]))
        return
    if full:
        check_parts_whole(parts)  # every byte of every part hashed once, not once per table
    for t in EPISODE_TABLES:
        files = ", ".join(quote_str(f) for f in table_files(parts, t))
        con.execute(f"CREATE TEMP VIEW _all_{t} AS SELECT * EXCLUDE (filename), "
                    f"regexp_extract(filename, '(p-[0-9]{{20}}-[A-Za-z0-9_-]+)[/\\\\][a-z_]+[.]parquet$', 1) AS _part "
                    f"FROM read_parquet([{files}], filename = true, union_by_name = true)")
    con.execute("CREATE TEMP VIEW _newest AS SELECT episode_id, max(_part) AS _part FROM _all_episodes GROUP BY episode_id")
    for t in EPISODE_TABLES:
        cols = ", ".join(quote_ident(c) for c in _SCHEMAS[t])
        con.execute(f"CREATE VIEW {t} AS SELECT {cols} FROM _all_{t} a SEMI JOIN _newest n "
                    f"ON a.{_ID_COLUMN[t]} = n.episode_id AND a._part = n._part")


# -- stores of earlier versions -------------------------------------------------------------


def migrate_legacy_stores(warehouse: Warehouse) -> int:
    """Move the episodes of earlier versions' DuckDB stores (``episodes.duckdb``,
    ``catalog_episodes/<world>.duckdb``) into the store, one part per world, ordered before every
    part written since (order 0: episodes recorded since win over them). Each file is then renamed
    ``<name>.migrated`` (kept: nothing is lost). The parts get fixed names, so a migration
    interrupted half-way goes on where it stopped. A file that is not an episode store is set aside
    as ``<name>.not-an-episode-store``; one that cannot be read now (locked, a disk error) is logged
    and tried at the next read. Returns the episodes moved.
    """
    root = warehouse.episode_store
    moved = 0
    for path in warehouse.legacy_episode_stores():
        try:
            moved += _migrate(root, path)
        except WarehouseError as exc:  # not an episode store: out of the way, kept
            aside = _free_name(path, ".not-an-episode-store")
            log.warning("%s is not an episode store of an earlier version (%s); set aside as %s", path, exc, aside.name)
            with contextlib.suppress(OSError):
                os.replace(path, aside)
        except (OSError, duckdb.Error, pl.exceptions.PolarsError) as exc:
            log.warning("the episodes of %s could not be moved into %s yet (%s: %s); tried again at the next read",
                        path, root, type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
    return moved


def _free_name(path: Path, suffix: str) -> Path:
    """``path`` + ``suffix``, or + ``suffix-2``, ``-3`` ... when that exists."""
    candidate, n = path.with_name(path.name + suffix), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{suffix}-{n}")
    return candidate


def _migrate(root: Path, path: Path) -> int:
    """Move one legacy store in (see :func:`migrate_legacy_stores`); returns its episodes."""
    with file_lock(path):
        if not path.is_file():
            return 0
        with reading_store(path, "episode store") as con:
            frames = {t: read_table(con, t) for t in EPISODE_TABLES}
        suffix = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
        for (world,), eps in frames["episodes"].partition_by("world", as_dict=True).items():
            key = check_key(str(world))
            part = {t: f.filter(pl.col(_ID_COLUMN[t]).is_in(eps["episode_id"].implode())) for t, f in frames.items()}
            with key_lock(root, key):
                name = part_name(0, tag="migrated", suffix=suffix)
                if not (root / key / name).exists():  # written by an interrupted migration: kept
                    write_part(root, key, part, name=name)
        os.replace(path, _free_name(path, ".migrated"))
        log.info("moved %d episodes of %s into %s", frames["episodes"].height, path, root)
        return frames["episodes"].height
