"""Simulated episodes as data: the episode store ``warehouse/episodes/``, one policy for every world,
beside the trajectory store (:mod:`worldforge.trajectories.store`) whose tables it shares.

The store holds what an environment returns (:class:`Observation`) and the episodes made of it
(:class:`Episode`); it imports no environment, so the datasets, ``worldforge summary`` and
``worldforge sql episodes`` read it without loading the simulator. The search environment turns
a session into an :class:`Episode` (:func:`worldforge.simenv.env.episode_of`).

Every world's episodes, bundled or catalog, recorded by the oracle step or by served sessions,
go to one store of immutable zstd Parquet parts, ``episodes/<world>/<part>/<table>.parquet``
(:mod:`worldforge.warehouse.parts`): a write adds a part and rewrites nothing, writers of one
world take turns under a lock and writers of different worlds never wait, and the datasets
(SFT, CPT), ``worldforge summary`` and ``worldforge sql episodes`` read every world's episodes
from it. Stores of earlier versions (``episodes.duckdb``, ``catalog_episodes/<world>.duckdb``)
are moved in on first use (:func:`migrate_legacy_stores`).

Episodes are stored in the canonical trajectory shape of the foundation
(:mod:`worldforge.trajectories.store`): ``trajectories`` (source ``simenv``, domain
``search``) and ``turns`` (action = the ``{"name", "arguments"}`` JSON, observation = the
tool's reply), so simulated episodes flow into the same statistics and dataset pipeline as
real ones. Two more tables keep what only a simulator knows:

* ``episodes(episode_id PK, world, scenario, task_id, seed, perturbations_json, agent,
  finished, f1_by_row, f1_by_item, answer, recorded_at)``
* ``steps(episode_id, turn_idx, tool, error, fired_json, revealed_json, leaks_blocked)`` —
  the perturbation decisions that fired and the facts each turn's snippets revealed.

An episode id recorded again replaces the earlier one: readers keep each id's rows from its
newest part (the SQL views of :func:`open_episode_sql` apply the same rule).

The search server does not write the store when a session closes: it appends the episode to
``<warehouse>/episodes.log.jsonl`` (:func:`log_episodes`: one JSON line, ASCII, ``fsync``-ed
before the close is acknowledged), and :func:`drain_episode_log` fills the store from that log
in batches: every second while serving, at start-up (a restart replays what a crash left) and
before each reader below. An episode the store refuses on its own is moved to
``episodes.log.rejected.jsonl`` with the reason (logged), so it cannot hold back the others;
a line torn by a crash mid-append is moved there too. Readers get typed rows: :func:`read_episodes` (the
``episodes`` table) and :func:`iter_episode_trajectories` (episodes as
:class:`~worldforge.trajectories.model.StoredTrajectory`, with their loss-mask decisions).

The package's modules: :mod:`.model` (the :class:`Observation` and :class:`Episode` records),
:mod:`.log` (the append-only episode log and its drain), :mod:`.store` (the Parquet episode
store: record, merge, the legacy stores), :mod:`.read` (the readers, which settle the log first).
Patch a module attribute (``_append_durably``, ``record_episodes``, ``DRAIN_BATCH_BYTES`` ...)
on the module that uses it, not on this package.
"""

from worldforge.trajectories.episodes.log import (
    DRAIN_ATTEMPTS,
    DRAIN_BATCH_BYTES,
    LogDrain,
    drain_episode_log,
    episode_from_line,
    episode_line,
    log_episodes,
    log_episodes_unlocked,
    settle_episode_log,
)
from worldforge.trajectories.episodes.model import Episode, Observation
from worldforge.trajectories.episodes.read import EpisodeCounts, episode_counts, iter_episode_trajectories, open_episode_sql, read_episode_tables, read_episodes
from worldforge.trajectories.episodes.store import (
    EPISODE_SCHEMA,
    EPISODE_TABLES,
    MERGE_MEMORY,
    MERGE_PART_BYTES,
    MERGE_PARTS,
    STEP_SCHEMA,
    migrate_legacy_stores,
    record_episodes,
)

__all__ = [
    "DRAIN_ATTEMPTS", "DRAIN_BATCH_BYTES", "EPISODE_SCHEMA", "EPISODE_TABLES", "MERGE_MEMORY", "MERGE_PARTS", "MERGE_PART_BYTES",
    "STEP_SCHEMA", "Episode", "EpisodeCounts", "LogDrain", "Observation", "drain_episode_log", "episode_counts", "episode_from_line",
    "episode_line", "iter_episode_trajectories", "log_episodes", "log_episodes_unlocked", "migrate_legacy_stores", "open_episode_sql",
    "read_episode_tables", "read_episodes", "record_episodes", "settle_episode_log",
]
