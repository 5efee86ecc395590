"""Dataset inputs, streamed: trajectories with their loss-mask decisions, and world corpus pages.

Trajectories come from the trajectory store (``trajectories.duckdb``, real agent data) and the
episode store (``episodes.duckdb``, simulated search episodes). Turns are read in DuckDB order
(``trajectory_id, turn_idx``) through an Arrow batch reader, so a builder holds one trajectory
at a time however large the store is. Episode turns carry no statistics when recorded; their
loss-mask decision is computed here over the episode store (:func:`mask_turns`).

Every trajectory is assigned to a split by a seeded hash of its id: ``test`` (held out for the
AgentWorldBench export and evaluation) or ``train`` (CPT and SFT), so no trajectory feeds
both training data and the held-out benchmark.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from worldforge.corpus.pages import page_markdown
from worldforge.errors import WarehouseError
from worldforge.simenv.episodes import EPISODES_NAME
from worldforge.trajectories.mask import mask_turns
from worldforge.trajectories.store import STORE_NAME
from worldforge.warehouse.duck import open_readonly

_TURNS_SQL = """
SELECT t.trajectory_id, t.source, t.domain, coalesce(t.task, '') AS task, u.turn_idx, u.action, u.observation,
       u.informative, u.mask_reason
FROM turns u JOIN trajectories t USING (trajectory_id)
ORDER BY t.trajectory_id, u.turn_idx
"""


@dataclass(frozen=True)
class DatasetTurn:
    """One turn as the builders see it: the text and the loss-mask decision."""

    turn_idx: int
    action: str
    observation: str
    informative: bool
    mask_reason: str


@dataclass
class DatasetTrajectory:
    """One trajectory: its metadata, its split and its turns in order.

    Attributes:
        origin: ``real`` (trajectories.duckdb) or ``simulated`` (episodes.duckdb).
        extra: fields AgentWorldBench records carry for grounded re-rendering (``world``,
            ``scenario`` of a simulated episode).
    """

    trajectory_id: str
    source: str
    domain: str
    task: str
    origin: str
    split: str = "train"
    turns: list[DatasetTurn] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def split_of(trajectory_id: str, seed: int, test_fraction: float) -> str:
    """``test`` for a seeded-hash share ``test_fraction`` (0–1) of trajectories, else ``train``."""
    h = int.from_bytes(hashlib.sha256(f"{seed}:{trajectory_id}".encode()).digest()[:8], "big") / 2**64
    return "test" if h < test_fraction else "train"


def _stream(batches: Iterable, origin: str, seed: int, test_fraction: float, extra: dict[str, dict]) -> Iterator[DatasetTrajectory]:
    """Trajectories from Arrow batches of turns sorted by ``trajectory_id, turn_idx``."""
    current: DatasetTrajectory | None = None
    for batch in batches:
        cols = batch.to_pydict()
        for i in range(batch.num_rows):
            tid = cols["trajectory_id"][i]
            if current is None or current.trajectory_id != tid:
                if current is not None:
                    yield current
                current = DatasetTrajectory(tid, cols["source"][i], cols["domain"][i], cols["task"][i], origin,
                                            split_of(tid, seed, test_fraction), [], extra.get(tid, {}))
            informative = cols["informative"][i]
            current.turns.append(DatasetTurn(cols["turn_idx"][i], cols["action"][i], cols["observation"][i],
                                             bool(informative) if informative is not None else True,
                                             cols["mask_reason"][i] or "not computed"))
    if current is not None:
        yield current


def iter_trajectories(warehouse: str | Path, seed: int = 0, test_fraction: float = 0.1, batch_rows: int = 8192) -> Iterator[DatasetTrajectory]:
    """Every stored trajectory of the warehouse, real ones first, then simulated episodes.

    Args:
        warehouse: the warehouse folder (``trajectories.duckdb``, ``episodes.duckdb``; either may be missing).
        seed, test_fraction: the split (see :func:`split_of`).
        batch_rows: turns per Arrow batch (bounds the memory of the read).

    Raises:
        WarehouseError: a store file exists but is not a trajectory store.
    """
    store = Path(warehouse) / STORE_NAME
    if store.exists():
        con = open_readonly(store)
        try:
            yield from _stream(con.sql(_TURNS_SQL).to_arrow_reader(batch_rows), "real", seed, test_fraction, {})
        except duckdb.CatalogException as exc:
            raise WarehouseError(f"{store}: not a worldforge trajectory store ({str(exc).splitlines()[0]})") from None
        finally:
            con.close()
    episodes = Path(warehouse) / EPISODES_NAME
    if episodes.exists():
        yield from _episodes(episodes, seed, test_fraction)


def _episodes(path: Path, seed: int, test_fraction: float) -> Iterator[DatasetTrajectory]:
    """Simulated episodes with their loss-mask decision computed over the episode store."""
    con = open_readonly(path)
    try:
        turns = con.sql("SELECT u.trajectory_id, u.turn_idx, u.action, u.observation, t.domain FROM turns u JOIN trajectories t USING (trajectory_id)").pl()
        extra = {r[0]: {"world": r[1], **({"scenario": r[2]} if r[2] else {})} for r in con.sql("SELECT episode_id, world, scenario FROM episodes").fetchall()}
        meta = con.sql("SELECT trajectory_id, source, domain, coalesce(task, '') AS task FROM trajectories").pl()
    except duckdb.CatalogException as exc:
        raise WarehouseError(f"{path}: not a worldforge episode store ({str(exc).splitlines()[0]})") from None
    finally:
        con.close()
    if turns.height == 0:
        return
    masked, _ = mask_turns(turns)
    frame = masked.join(meta, on="trajectory_id").sort("trajectory_id", "turn_idx")
    yield from _stream(frame.to_arrow().to_batches(8192), "simulated", seed, test_fraction, extra)


@dataclass(frozen=True)
class CorpusPage:
    """One world page as CPT text."""

    world: str
    scenario: str | None
    url: str
    text: str


def world_files(warehouse: str | Path) -> list[Path]:
    """The world DuckDB files of a warehouse (every ``*.duckdb`` but the two stores), sorted."""
    skip = {STORE_NAME, EPISODES_NAME}
    return sorted(p for p in Path(warehouse).glob("*.duckdb") if p.name not in skip)


def iter_pages(warehouse: str | Path) -> Iterator[CorpusPage]:
    """Every corpus page of every world (base world and scenarios), as ``web_extractor`` shows it.

    Worlds without a corpus yet are passed over (their corpus asset has not run).
    """
    for path in world_files(warehouse):
        con = open_readonly(path)
        try:
            try:
                frame = con.sql("SELECT world, scenario, url, title, published, body_md FROM corpus_pages ORDER BY coalesce(scenario, ''), url").pl()
            except duckdb.CatalogException:
                continue
        finally:
            con.close()
        for row in frame.iter_rows(named=True):
            yield CorpusPage(row["world"], row["scenario"], row["url"], page_markdown(row))


__all__ = ["CorpusPage", "DatasetTrajectory", "DatasetTurn", "iter_pages", "iter_trajectories", "split_of", "world_files"]
