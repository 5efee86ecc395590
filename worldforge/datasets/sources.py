"""Dataset inputs: stored trajectories with their split, and world corpus pages.

Trajectories come from the two stores, each of which owns its reads:
:func:`worldforge.trajectories.store.iter_trajectories` (real agent data) and
:func:`worldforge.trajectories.episodes.iter_episode_trajectories` (simulated search episodes, with
their loss-mask decisions). Both stream, so a builder holds one trajectory at a time.

Every trajectory is assigned to a split by a seeded hash of its id: ``test`` (held out for the
AgentWorldBench export and evaluation) or ``train`` (CPT and SFT), so no trajectory feeds
both training data and the held-out benchmark.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

from worldforge.corpus.generate import page_markdown
from worldforge.corpus.store import all_pages
from worldforge.datasets.config import SplitConfig
from worldforge.trajectories.episodes import iter_episode_trajectories
from worldforge.trajectories.model import StoredTrajectory
from worldforge.trajectories.store import iter_trajectories as iter_stored
from worldforge.warehouse.layout import Warehouse


@dataclass
class DatasetTrajectory(StoredTrajectory):
    """A stored trajectory with its split (``train`` or ``test``, see :func:`split_of`)."""

    split: str = "train"


def split_of(trajectory_id: str, seed: int, test_fraction: float) -> str:
    """``test`` for a seeded-hash share ``test_fraction`` (0–1) of trajectories, else ``train``."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()[:8], "big") / 2**64
    return "test" if h < test_fraction else "train"


def iter_split_trajectories(warehouse: Warehouse, split: SplitConfig = SplitConfig(), batch_rows: int = 8192) -> Iterator[DatasetTrajectory]:
    """Every stored trajectory of the warehouse with its split: real ones first, then simulated episodes.

    Args:
        warehouse: the warehouse (``trajectories.duckdb``, the episode store ``episodes/``; either may be missing).
        split: the seed and test fraction of the split (see :func:`split_of`); any dataset config is one.
        batch_rows: turns per Arrow batch (bounds the memory of the read).

    Raises:
        WarehouseError: a store file exists but is not a trajectory or episode store.
    """
    seed, test_fraction = split.seed, split.test_fraction
    streams = (iter_stored(warehouse.trajectory_store, batch_rows), iter_episode_trajectories(warehouse, batch_rows=batch_rows))
    for stream in streams:  # generators: the episode store is opened only after the trajectory store is read
        for traj in stream:
            yield DatasetTrajectory(**vars(traj), split=split_of(traj.trajectory_id, seed, test_fraction))


@dataclass(frozen=True)
class CorpusPage:
    """One world page as CPT text (the Markdown ``web_extractor`` shows)."""

    world: str
    scenario: str | None
    url: str
    text: str


def iter_pages(warehouse: Warehouse) -> Iterator[CorpusPage]:
    """Every corpus page of every world of the warehouse (base world and scenarios), in file and URL order.

    Worlds without a corpus yet are passed over (their corpus asset has not run).
    """
    for path in warehouse.world_files():
        frame = all_pages(path)
        if frame is None:
            continue
        for row in frame.iter_rows(named=True):
            yield CorpusPage(row["world"], row["scenario"], row["url"], page_markdown(row))


__all__ = ["CorpusPage", "DatasetTrajectory", "iter_pages", "iter_split_trajectories", "split_of"]
