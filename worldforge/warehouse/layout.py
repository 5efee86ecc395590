"""Where everything lives in a warehouse folder: the one spelling of every path under it.

::

    <warehouse>/
      <world>.duckdb             a world (tables, scenarios, corpus, tasks)    Warehouse.world
      <world>[.<scenario>].index tantivy indexes (worldforge.corpus.index)
      trajectories.duckdb        the trajectory store                          Warehouse.trajectory_store
      episodes/<w>/<part>/       the episode store: Parquet parts per world    Warehouse.episode_store
      episodes.log.jsonl         closed sessions not yet in the episode store  Warehouse.episode_log
      catalog.duckdb             the catalog: one row per built spec           Warehouse.catalog
      trajectories/<src>.parquet one source's turns                            Warehouse.shard
      tasks/<world>/             WideSearch-format task export                 Warehouse.tasks
      datasets/<name>/           cpt, sft, agentworldbench, eval               Warehouse.dataset
      reports/                   PNG plots                                     Warehouse.reports
      landing/                   trajectory files dropped for ingestion        Warehouse.landing
      recordings/                recording proxies' segments                   Warehouse.recordings
      cache/                     world-model render caches                     Warehouse.cache
      models/tokenizer/          the local stand-in tokenizer                  Warehouse.tokenizer

A :class:`Warehouse` is resolved once, at worldforge's edges — the CLI's ``--warehouse`` option (or
``WORLDFORGE_WAREHOUSE`` through :meth:`Warehouse.configured`), the Dagster ``warehouse`` resource —
and passed down. The library never reads the warehouse from settings: every function that touches one
takes a :class:`Warehouse` and uses it as is. Only the edges that are handed a folder (:data:`WarehouseLike`:
the CLI, the environments and servers users construct) turn it into one, once, with :meth:`Warehouse.of`,
which raises :class:`TypeError` on ``None``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from worldforge.errors import WarehouseError

TRAJECTORY_STORE = "trajectories.duckdb"
EPISODE_STORE = "episodes"
LEGACY_EPISODE_STORE = "episodes.duckdb"
EPISODE_LOG = "episodes.log.jsonl"
CATALOG_STORE = "catalog.duckdb"
_STORE_NAMES = {  # file → what it is (the error of Warehouse.world)
    TRAJECTORY_STORE: "trajectory store",
    LEGACY_EPISODE_STORE: "episode store of an earlier version",
    CATALOG_STORE: "world catalog",
}
STORES = tuple(_STORE_NAMES)
"""The warehouse's DuckDB files that are not worlds: every command that lists worlds passes them over."""

DATASETS = ("cpt", "sft", "agentworldbench", "eval")
"""The dataset folders under ``<warehouse>/datasets/``."""


@dataclass(frozen=True)
class Warehouse:
    """A warehouse folder, and the path of everything under it.

    Immutable and hashable; ``os.fspath(wh)`` and ``str(wh)`` give its folder, so it can be passed
    wherever a path is expected. Paths are computed, not checked: nothing is created but
    :meth:`reports`.

    Attributes:
        root: the folder, as given (relative paths stay relative to the current directory).
    """

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser())

    @classmethod
    def of(cls, where: WarehouseLike) -> Warehouse:
        """``where`` as a :class:`Warehouse`: itself when it is one, else the warehouse at that folder.

        Raises:
            TypeError: ``where`` is ``None`` or not a path (the library does not read settings; resolve
                the configured warehouse at the edge with :meth:`configured`).
        """
        if isinstance(where, Warehouse):
            return where
        if isinstance(where, (str, os.PathLike)) and str(where).strip():
            return cls(Path(where))
        raise TypeError(f"a warehouse is required (a Warehouse or its folder), got {where!r}; "
                        "the configured one is Warehouse.configured() (WORLDFORGE_WAREHOUSE)")

    @classmethod
    def configured(cls, where: WarehouseLike | None = None) -> Warehouse:
        """``where`` when given, else the configured warehouse (``WORLDFORGE_WAREHOUSE``, absolute).

        For worldforge's edges only (the CLI, the Dagster resource, a script's ``main``).

        Raises:
            SettingsError: ``WORLDFORGE_WAREHOUSE`` (or another ``WORLDFORGE_*`` variable) holds a bad value.
        """
        if where is not None:
            return cls.of(where)
        from worldforge.settings import get_settings

        return cls(get_settings().warehouse)

    def __fspath__(self) -> str:
        return str(self.root)

    def __str__(self) -> str:
        return str(self.root)

    def world(self, name: str) -> Path:
        """``<warehouse>/<name>.duckdb``.

        Raises:
            WarehouseError: ``<name>.duckdb`` is one of the warehouse's :data:`STORES`, not a world
                (specs may not take these names: :data:`worldforge.spec.models.RESERVED_WORLD_NAMES`).
        """
        if f"{name}.duckdb" in STORES:
            raise WarehouseError(f"{name!r} is not a world: {name}.duckdb is the warehouse's {_STORE_NAMES[name + '.duckdb']}")
        return self.root / f"{name}.duckdb"

    def world_files(self) -> list[Path]:
        """The world files (every ``*.duckdb`` but the :data:`STORES`), sorted by name."""
        return sorted(p for p in self.root.glob("*.duckdb") if p.name not in STORES)

    @property
    def trajectory_store(self) -> Path:
        """``<warehouse>/trajectories.duckdb``."""
        return self.root / TRAJECTORY_STORE

    @property
    def episode_store(self) -> Path:
        """``<warehouse>/episodes``: the episode store of every world (:mod:`worldforge.trajectories.episodes`)."""
        return self.root / EPISODE_STORE

    def legacy_episode_stores(self) -> list[Path]:
        """Episode stores of earlier versions still in the warehouse: ``episodes.duckdb`` and
        ``catalog_episodes/<world>.duckdb`` (moved into :attr:`episode_store` on first use)."""
        return [p for p in [self.root / LEGACY_EPISODE_STORE, *sorted((self.root / "catalog_episodes").glob("*.duckdb"))] if p.is_file()]

    @property
    def episode_log(self) -> Path:
        """``<warehouse>/episodes.log.jsonl``: the append-only log of closed sessions
        (:func:`worldforge.trajectories.episodes.log_episodes`)."""
        return self.root / EPISODE_LOG

    @property
    def catalog(self) -> Path:
        """``<warehouse>/catalog.duckdb``: one row per built catalog spec (:mod:`worldforge.catalog.build`)."""
        return self.root / CATALOG_STORE

    def shard(self, source: str) -> Path:
        """``<warehouse>/trajectories/<source>.parquet``."""
        return self.root / "trajectories" / f"{source}.parquet"

    def tasks(self, world: str) -> Path:
        """``<warehouse>/tasks/<world>/`` (``tasks.jsonl`` + ``tables/``)."""
        return self.root / "tasks" / world

    def dataset(self, name: str) -> Path:
        """``<warehouse>/datasets/<name>/`` for a name of :data:`DATASETS`.

        Raises:
            ValueError: an unknown dataset name.
        """
        if name not in DATASETS:
            raise ValueError(f"unknown dataset {name!r}; one of: {', '.join(DATASETS)}")
        return self.root / "datasets" / name

    def reports(self) -> Path:
        """``<warehouse>/reports/``, created when missing."""
        path = self.root / "reports"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def landing(self) -> Path:
        """``<warehouse>/landing/``: trajectory files dropped here are ingested with the sources."""
        return self.root / "landing"

    @property
    def recordings(self) -> Path:
        """``<warehouse>/recordings/``: the recording proxies' segments (:mod:`worldforge.recording.sink`)."""
        return self.root / "recordings"

    @property
    def cache(self) -> Path:
        """``<warehouse>/cache/``: world-model render caches."""
        return self.root / "cache"

    @property
    def tokenizer(self) -> Path:
        """``<warehouse>/models/tokenizer/``: the local stand-in tokenizer."""
        return self.root / "models" / "tokenizer"


def repair_hint(path: Path) -> str:
    """What to do about a damaged or missing file of a warehouse, by what the file is (its name and folder):
    the command that writes it again, or restoring a copy. One clause, for the end of an error line."""
    name, parent = path.name, path.parent.name
    if name == TRAJECTORY_STORE or parent == "trajectories":
        return "ingest the trajectories again with `worldforge trajectories ingest` (or restore the file from a copy)"
    if name == CATALOG_STORE:
        return "move it aside and run `worldforge catalog build` again (it rebuilds every row)"
    if name == EPISODE_LOG:
        return "a torn last line is a session cut off while written and is passed over; other lines: restore the file from a copy"
    # the episode store: <store>/<world>/<part>/<file>, a part's folder <store>/<world>/<part>, earlier flat parts
    if EPISODE_STORE in (parent, path.parent.parent.name, path.parent.parent.parent.name) or LEGACY_EPISODE_STORE == name:
        return "quarantine the part with `worldforge doctor --quarantine` and run the world's episodes again (`worldforge world run SPEC`)"
    if "datasets" in path.parts:
        return "build the dataset again (`worldforge datasets ...`)"
    if path.suffix == ".duckdb":
        return f"rebuild it with `worldforge world run SPEC` (the spec of world {path.stem}) or restore it from a copy"
    return "restore it from a copy or build it again"


WarehouseLike = Union[Warehouse, str, "os.PathLike[str]"]
"""What the edges accept as a warehouse (:meth:`Warehouse.of`): a :class:`Warehouse` or its folder (never ``None``);
below them the library takes a :class:`Warehouse`."""
