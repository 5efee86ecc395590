"""Where everything lives in a warehouse folder: the one spelling of every path under it.

::

    <warehouse>/
      <world>.duckdb             a world (tables, scenarios, corpus, tasks)    world_path
      <world>[.<scenario>].index tantivy indexes (worldforge.corpus.index)
      trajectories.duckdb        the trajectory store                          trajectory_store
      episodes/<w>/<part>/       the episode store: Parquet parts per world    episode_store
      episodes.log.jsonl         closed sessions not yet in the episode store  episode_log
      catalog.duckdb             the catalog: one row per built spec           catalog.build.catalog_path
      trajectories/<src>.parquet one source's turns                            shard_path
      tasks/<world>/             WideSearch-format task export                 tasks_dir
      datasets/<name>/           cpt, sft, agentworldbench, eval               dataset_dir
      reports/                   PNG plots                                     reports_dir
      landing/                   trajectory files dropped for ingestion        landing_dir
      cache/                     world-model render caches                     cache_dir
      models/tokenizer/          the local stand-in tokenizer                  default_tokenizer_dir

Every function takes the warehouse folder; :func:`resolve` turns ``None`` into the configured
one (``WORLDFORGE_WAREHOUSE``, :class:`worldforge.settings.Settings`), raising
:class:`~worldforge.settings.SettingsError` when that variable holds a bad value.
"""

from __future__ import annotations

from pathlib import Path

from worldforge.errors import WarehouseError
from worldforge.settings import get_settings

TRAJECTORY_STORE = "trajectories.duckdb"
EPISODE_STORE = "episodes"
LEGACY_EPISODE_STORE = "episodes.duckdb"
EPISODE_LOG = "episodes.log.jsonl"
CATALOG_STORE = "catalog.duckdb"
_STORE_NAMES = {  # file → what it is (the error of world_path)
    TRAJECTORY_STORE: "trajectory store",
    LEGACY_EPISODE_STORE: "episode store of an earlier version",
    CATALOG_STORE: "world catalog",
}
STORES = tuple(_STORE_NAMES)
"""The warehouse's DuckDB files that are not worlds: every command that lists worlds passes them over."""

DATASETS = ("cpt", "sft", "agentworldbench", "eval")
"""The dataset folders under ``<warehouse>/datasets/``."""


def resolve(warehouse: str | Path | None) -> Path:
    """``warehouse`` as a path, or the configured warehouse when ``None``."""
    return Path(warehouse) if warehouse is not None else get_settings().warehouse


def world_path(warehouse: str | Path | None, world: str) -> Path:
    """``<warehouse>/<world>.duckdb``.

    Raises:
        WarehouseError: ``<world>.duckdb`` is one of the warehouse's :data:`STORES`, not a world
            (specs may not take these names: :data:`worldforge.spec.models.RESERVED_WORLD_NAMES`).
    """
    if f"{world}.duckdb" in STORES:
        raise WarehouseError(f"{world!r} is not a world: {world}.duckdb is the warehouse's {_STORE_NAMES[world + '.duckdb']}")
    return resolve(warehouse) / f"{world}.duckdb"


def world_files(warehouse: str | Path | None) -> list[Path]:
    """The world files of a warehouse (every ``*.duckdb`` but the stores), sorted by name."""
    return sorted(p for p in resolve(warehouse).glob("*.duckdb") if p.name not in STORES)


def trajectory_store(warehouse: str | Path | None) -> Path:
    """``<warehouse>/trajectories.duckdb``."""
    return resolve(warehouse) / TRAJECTORY_STORE


def episode_store(warehouse: str | Path | None) -> Path:
    """``<warehouse>/episodes``: the episode store of every world (:mod:`worldforge.trajectories.episodes`)."""
    return resolve(warehouse) / EPISODE_STORE


def legacy_episode_stores(warehouse: str | Path | None) -> list[Path]:
    """Episode stores of earlier versions still in the warehouse: ``episodes.duckdb`` and
    ``catalog_episodes/<world>.duckdb`` (moved into :func:`episode_store` on first use)."""
    wh = resolve(warehouse)
    return [p for p in [wh / LEGACY_EPISODE_STORE, *sorted((wh / "catalog_episodes").glob("*.duckdb"))] if p.is_file()]


def episode_log(warehouse: str | Path | None) -> Path:
    """``<warehouse>/episodes.log.jsonl``: the append-only log of closed sessions
    (:func:`worldforge.trajectories.episodes.log_episodes`)."""
    return resolve(warehouse) / EPISODE_LOG


def shard_path(warehouse: str | Path | None, source: str) -> Path:
    """``<warehouse>/trajectories/<source>.parquet``."""
    return resolve(warehouse) / "trajectories" / f"{source}.parquet"


def tasks_dir(warehouse: str | Path | None, world: str) -> Path:
    """``<warehouse>/tasks/<world>/`` (``tasks.jsonl`` + ``tables/``)."""
    return resolve(warehouse) / "tasks" / world


def dataset_dir(warehouse: str | Path | None, name: str) -> Path:
    """``<warehouse>/datasets/<name>/`` for a name of :data:`DATASETS`.

    Raises:
        ValueError: an unknown dataset name.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; one of: {', '.join(DATASETS)}")
    return resolve(warehouse) / "datasets" / name


def reports_dir(warehouse: str | Path | None) -> Path:
    """``<warehouse>/reports/``, created when missing."""
    path = resolve(warehouse) / "reports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def landing_dir(warehouse: str | Path | None) -> Path:
    """``<warehouse>/landing/``: trajectory files dropped here are ingested with the sources."""
    return resolve(warehouse) / "landing"


def cache_dir(warehouse: str | Path | None) -> Path:
    """``<warehouse>/cache/``: world-model render caches."""
    return resolve(warehouse) / "cache"


def default_tokenizer_dir(warehouse: str | Path | None) -> Path:
    """``<warehouse>/models/tokenizer/``: the local stand-in tokenizer."""
    return resolve(warehouse) / "models" / "tokenizer"


