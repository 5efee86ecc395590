"""Reading the episode store: the legacy stores moved in and the episode log drained first
(:func:`~worldforge.trajectories.episodes.log.settle_episode_log`), then typed rows, counts,
trajectories for the datasets, or a sandboxed SQL connection.

An episode id recorded again replaces the earlier one: readers keep each id's rows from its
newest part (the SQL views of :func:`open_episode_sql` apply the same rule).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl

from worldforge.errors import WarehouseError
from worldforge.trajectories.episodes.log import settle_episode_log
from worldforge.trajectories.episodes.store import EPISODE_TABLES, _episode_views
from worldforge.trajectories.mask import MaskConfig, mask_turns
from worldforge.trajectories.model import StoredTrajectory
from worldforge.trajectories.store import trajectories_from_batches
from worldforge.warehouse.duck import open_sandboxed_views
from worldforge.warehouse.layout import Warehouse
from worldforge.warehouse.parts import read_parts

T = TypeVar("T")


def _read_store(warehouse: Warehouse, read: Callable[[duckdb.DuckDBPyConnection], T], verify: bool = False) -> T:
    """``read`` on an in-memory connection with the store's views (:func:`_episode_views`), after
    the legacy stores and the episode log were settled; listed again when a merge removed a part.
    ``verify``: every part's files are compared with the SHA-256 of its manifest first (a dataset build:
    bytes overwritten inside a page would otherwise decode into other rows without an error).

    Raises:
        WarehouseError: a part is damaged or cannot be read (its path and what is wrong).
    """
    settle_episode_log(warehouse)

    def run(parts: list[Path]) -> T:
        con = duckdb.connect()
        try:
            _episode_views(con, parts, full=verify)
            return read(con)
        finally:
            con.close()

    root = warehouse.episode_store
    try:
        return read_parts(root, run)
    except (duckdb.Error, pl.exceptions.PolarsError) as exc:
        raise WarehouseError(f"{root}: a part of the episode store cannot be read ({str(exc).splitlines()[0]}); "
                             "`worldforge doctor` names the damaged part and --quarantine moves it aside") from None


def read_episode_tables(warehouse: Warehouse) -> dict[str, pl.DataFrame]:
    """The store's four tables (:data:`EPISODE_TABLES`), one row per episode id; the log is drained first."""
    return _read_store(warehouse, lambda con: {t: con.sql(f"SELECT * FROM {t}").pl() for t in EPISODE_TABLES})


def open_episode_sql(warehouse: Warehouse) -> duckdb.DuckDBPyConnection:
    """A sandboxed connection for ``worldforge sql episodes``: the store's four tables as views, no
    other file reachable (:func:`~worldforge.warehouse.duck.open_sandboxed_views`).

    Raises:
        WarehouseError: no episode store in ``warehouse``.
    """
    settle_episode_log(warehouse)
    root = warehouse.episode_store
    if not root.is_dir():
        raise WarehouseError(f"{root}: no episode store (episodes are recorded by the oracle step and by served sessions)")

    def views(con: duckdb.DuckDBPyConnection) -> None:
        def check(parts: list[Path]) -> None:  # every part readable now, else listed again (a merge) or refused
            probe = duckdb.connect()
            try:
                _episode_views(probe, parts)
                probe.sql("SELECT count(*) FROM steps JOIN turns ON steps.episode_id = turns.trajectory_id").fetchall()
            finally:
                probe.close()
            _episode_views(con, parts)

        try:
            read_parts(root, check)
        except (duckdb.Error, pl.exceptions.PolarsError) as exc:
            raise WarehouseError(f"{root}: a part of the episode store cannot be read ({str(exc).splitlines()[0]}); "
                                 "`worldforge doctor` names the damaged part and --quarantine moves it aside") from None

    return open_sandboxed_views(root, views)


def read_episodes(warehouse: Warehouse) -> pl.DataFrame:
    """The ``episodes`` table, one row per episode id (empty frame when nothing was recorded); the
    episode log is drained first.

    Raises:
        WarehouseError: a part of the store cannot be read.
    """
    return _read_store(warehouse, lambda con: con.sql("SELECT * FROM episodes").pl())


@dataclass(frozen=True)
class EpisodeCounts:
    """What the episode store holds: episodes, by agent (sorted), finished, and solved (item F1 = 1.0)."""

    episodes: int = 0
    by_agent: list[tuple[str, int]] = field(default_factory=list)
    finished: int = 0
    solved: int = 0


def episode_counts(warehouse: Warehouse) -> EpisodeCounts:
    """Count the recorded episodes in SQL (all zero without an episode store).

    Raises:
        WarehouseError: a part of the store cannot be read.
    """
    def count(con: duckdb.DuckDBPyConnection) -> EpisodeCounts:
        n, finished, solved = con.execute("SELECT count(*), count(*) FILTER (WHERE finished), count(*) FILTER (WHERE f1_by_item = 1.0) FROM episodes").fetchone()
        by_agent = [tuple(r) for r in con.execute("SELECT agent, count(*) FROM episodes GROUP BY 1 ORDER BY 1").fetchall()]
        return EpisodeCounts(n, by_agent, finished, solved)

    return _read_store(warehouse, count)


def iter_episode_trajectories(warehouse: Warehouse, config: MaskConfig = MaskConfig(), batch_rows: int = 8192) -> Iterator[StoredTrajectory]:
    """Every recorded episode as a trajectory (origin ``simulated``), with its loss-mask decisions.

    Episode turns carry no statistics when recorded; their decisions are computed here over
    the whole episode store with the same rule as real turns
    (:func:`worldforge.trajectories.mask.mask_turns`, thresholds from the episodes' own
    corpus). :attr:`StoredTrajectory.extra` holds the episode's ``world`` and ``scenario``.

    Args:
        warehouse: the warehouse; a missing episode store yields nothing.
        config: the mask thresholds.
        batch_rows: turns per batch.

    Raises:
        WarehouseError: a part of the store is damaged (its SHA-256 differs from the one recorded when it
            was written) or cannot be read: one line naming it; nothing is yielded.
    """
    def read(con: duckdb.DuckDBPyConnection) -> tuple[pl.DataFrame, dict, pl.DataFrame]:
        turns = con.sql("SELECT u.trajectory_id, u.turn_idx, u.action, u.observation, t.domain FROM turns u JOIN trajectories t USING (trajectory_id)").pl()
        extra = {r[0]: {"world": r[1], **({"scenario": r[2]} if r[2] else {})} for r in con.sql("SELECT episode_id, world, scenario FROM episodes").fetchall()}
        meta = con.sql("SELECT trajectory_id, source, domain, coalesce(task, '') AS task FROM trajectories").pl()
        return turns, extra, meta

    turns, extra, meta = _read_store(warehouse, read, verify=True)  # what a dataset is built from: every byte checked
    if turns.height == 0:
        return
    masked, _ = mask_turns(turns, config)
    frame = masked.join(meta, on="trajectory_id").sort("trajectory_id", "turn_idx")
    yield from trajectories_from_batches(frame.to_arrow().to_batches(batch_rows), "simulated", extra)
