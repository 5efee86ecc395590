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
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl

from worldforge.errors import WarehouseError
from worldforge.trajectories.mask import MaskConfig, mask_turns
from worldforge.trajectories.model import StoredTrajectory, storable_row, tool_call_text
from worldforge.trajectories.store import TRAJECTORY_SCHEMA, TURN_SCHEMA, trajectories_from_batches
from worldforge.warehouse.atomic import append_lines, file_lock
from worldforge.warehouse.duck import open_sandboxed_views, quote_ident, quote_str, read_table, reading_store, table_ddl
from worldforge.warehouse.layout import Warehouse, WarehouseLike
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
    read_parts,
    sweep,
    table_files,
    write_part,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

EPISODE_SCHEMA = {
    "episode_id": pl.String, "world": pl.String, "scenario": pl.String, "task_id": pl.String, "seed": pl.Int64,
    "perturbations_json": pl.String, "agent": pl.String, "finished": pl.Boolean, "f1_by_row": pl.Float64,
    "f1_by_item": pl.Float64, "answer": pl.String, "recorded_at": pl.Datetime("us"),
}
STEP_SCHEMA = {
    "episode_id": pl.String, "turn_idx": pl.Int64, "tool": pl.String, "error": pl.Boolean,
    "fired_json": pl.String, "revealed_json": pl.String, "leaks_blocked": pl.Int64,
}


@dataclass
class Observation:
    """What the environment returns for one tool call.

    Attributes:
        text: the observation as the agent sees it.
        tool: the tool called (or the name given, for an unknown tool).
        error: the call failed (malformed, or a perturbation).
        fired: perturbation decisions that fired this turn (``{"kind", "detail"}``).
        revealed: facts stated by the snippets shown (``{"url", "table", "row_key", "column", "value"}``).
        leaks_blocked: snippets replaced by leakage control.
        rendering: with a world-model renderer, how the text was rendered
            (:meth:`worldforge.worldmodel.render.Rendering.as_dict`).
    """

    text: str
    tool: str
    error: bool = False
    fired: list[dict] = field(default_factory=list)
    revealed: list[dict] = field(default_factory=list)
    leaks_blocked: int = 0
    rendering: dict | None = None


@dataclass
class Episode:
    """One agent episode in the simulated environment."""

    episode_id: str
    world: str
    scenario: str | None
    task_id: str | None
    question: str
    seed: int
    perturbations_json: str
    agent: str
    steps: list[tuple[dict, Observation]] = field(default_factory=list)
    answer: str = ""
    finished: bool = False
    f1_by_row: float | None = None
    f1_by_item: float | None = None


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


def record_episodes(warehouse: WarehouseLike, episodes: list[Episode]) -> Path:
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
    root = check_root(Warehouse.of(warehouse).episode_store)
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


def _read_store(warehouse: WarehouseLike, read: Callable[[duckdb.DuckDBPyConnection], T], verify: bool = False) -> T:
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

    root = Warehouse.of(warehouse).episode_store
    try:
        return read_parts(root, run)
    except (duckdb.Error, pl.exceptions.PolarsError) as exc:
        raise WarehouseError(f"{root}: a part of the episode store cannot be read ({str(exc).splitlines()[0]}); "
                             "`worldforge doctor` names the damaged part and --quarantine moves it aside") from None


def read_episode_tables(warehouse: WarehouseLike) -> dict[str, pl.DataFrame]:
    """The store's four tables (:data:`EPISODE_TABLES`), one row per episode id; the log is drained first."""
    return _read_store(warehouse, lambda con: {t: con.sql(f"SELECT * FROM {t}").pl() for t in EPISODE_TABLES})


def open_episode_sql(warehouse: WarehouseLike) -> duckdb.DuckDBPyConnection:
    """A sandboxed connection for ``worldforge sql episodes``: the store's four tables as views, no
    other file reachable (:func:`~worldforge.warehouse.duck.open_sandboxed_views`).

    Raises:
        WarehouseError: no episode store in ``warehouse``.
    """
    settle_episode_log(warehouse)
    root = Warehouse.of(warehouse).episode_store
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


# -- stores of earlier versions -------------------------------------------------------------


def migrate_legacy_stores(warehouse: WarehouseLike) -> int:
    """Move the episodes of earlier versions' DuckDB stores (``episodes.duckdb``,
    ``catalog_episodes/<world>.duckdb``) into the store, one part per world, ordered before every
    part written since (order 0: episodes recorded since win over them). Each file is then renamed
    ``<name>.migrated`` (kept: nothing is lost). The parts get fixed names, so a migration
    interrupted half-way goes on where it stopped. A file that is not an episode store is set aside
    as ``<name>.not-an-episode-store``; one that cannot be read now (locked, a disk error) is logged
    and tried at the next read. Returns the episodes moved.
    """
    wh = Warehouse.of(warehouse)
    root = wh.episode_store
    moved = 0
    for path in wh.legacy_episode_stores():
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



# -- the append-only episode log ---------------------------------------------------------

_FIELDS = ("episode_id", "world", "scenario", "task_id", "question", "seed", "perturbations_json", "agent",
           "answer", "finished", "f1_by_row", "f1_by_item")
_OBS_ORDER = tuple(f.name for f in dataclasses.fields(Observation))
_OBS_FIELDS = frozenset(_OBS_ORDER)


def _step_json(call: dict, obs: Observation) -> list:
    try:
        json.dumps(call, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # a caller's own object, or nested too deep
        call = {"name": str(call.get("name") if isinstance(call, dict) else "?"), "arguments": {"raw": repr(call)[:2000]}}
    return [call, {name: getattr(obs, name) for name in _OBS_ORDER}]  # a shallow dict: json.dumps walks the nesting


def episode_line(episode: Episode) -> str:
    """One log line for ``episode``: JSON (ASCII: lone surrogates escaped) ending in ``\n``.

    Shape: ``{"episode_id", "world", ..., "steps": [[call, observation], ...]}`` with the
    :class:`Episode` fields and each observation as the fields of
    :class:`Observation`.
    """
    row = {f: getattr(episode, f) for f in _FIELDS}
    row["steps"] = [_step_json(call, obs) for call, obs in episode.steps]
    return json.dumps(row, ensure_ascii=True, default=repr) + "\n"


def episode_from_line(line: str) -> Episode:
    """The :class:`Episode` of one log line (:func:`episode_line`).

    Raises:
        ValueError: not JSON, or not the shape of an episode line.
    """
    row = json.loads(line)
    if not isinstance(row, dict) or not isinstance(row.get("episode_id"), str) or not isinstance(row.get("steps"), list):
        raise ValueError("not an episode line (episode_id or steps missing)")
    try:
        steps = [(call, Observation(**{k: v for k, v in obs.items() if k in _OBS_FIELDS})) for call, obs in row["steps"]]
        return Episode(**{f: row[f] for f in _FIELDS if f in row}, steps=steps)
    except (TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"not an episode line ({exc})") from None


def _rejected(log_path: Path) -> Path:
    return log_path.with_name(log_path.name.removesuffix(".jsonl") + ".rejected.jsonl")


class _Commit:
    """One group commit of the episode log: the lines of every thread that joined it, written with
    one ``write`` and one ``fsync``; ``done`` once they are durable (or ``error`` says why not)."""

    __slots__ = ("data", "done", "error")

    def __init__(self) -> None:
        self.data: list[bytes] = []
        self.done = False
        self.error: BaseException | None = None


class _GroupCommitLog:
    """The episode log of one path, appended by any number of threads of this process with group
    commit (as a database's write-ahead log): a thread that finds no write under way writes every
    line queued so far, itself included, under the log's file lock with one ``fsync``; threads that
    arrive meanwhile queue their lines for the next write and wait. Each caller returns once its own
    lines are durable, as with a write of its own, but 64 sessions closing together cost one lock
    and one ``fsync`` instead of 64. Other processes still take turns through the file lock."""

    def __init__(self, path: Path):
        self.path = path
        self._cond = threading.Condition()
        self._open = _Commit()
        self._writing = False

    def append(self, data: bytes) -> None:
        """Append ``data`` (whole log lines) durably: written and ``fsync``-ed, by this thread or by the one writing
        the group it joined, before returning.

        Raises:
            OSError: the group's write failed (every caller in that group gets it; the next group writes again).
        """
        with self._cond:
            commit = self._open
            commit.data.append(data)
            while self._writing and not commit.done:
                self._cond.wait()
            if commit.done:  # another thread wrote it
                if commit.error is not None:
                    raise OSError(getattr(commit.error, "errno", None), f"episode log {self.path}: {commit.error}") from commit.error
                return
            self._writing, self._open = True, _Commit()  # this thread writes `commit`; later lines queue for the next write
        try:
            with file_lock(self.path):
                _append_durably(self.path, b"".join(commit.data))
        except BaseException as e:
            commit.error = e
            raise
        finally:
            with self._cond:
                commit.done, self._writing = True, False
                self._cond.notify_all()


_group_logs: dict[Path, _GroupCommitLog] = {}
_group_logs_lock = threading.Lock()


def _forget_group_logs() -> None:  # a forked child has none of its parent's threads: a write under way there never ends here
    global _group_logs_lock
    _group_logs.clear()
    _group_logs_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_group_logs)


def log_episodes(warehouse: WarehouseLike, episodes: list[Episode]) -> Path:
    """Append ``episodes`` to ``<warehouse>/episodes.log.jsonl`` durably (written and ``fsync``-ed
    under the log's file lock before returning), for :func:`drain_episode_log` to record.

    Threads of one process that log at the same time share one write and one ``fsync`` (group
    commit: :class:`_GroupCommitLog`); each returns once its own episodes are durable. A line left
    unfinished by a crash is closed first, so it cannot swallow the next one.

    Returns:
        The log's path.

    Raises:
        OSError: the log cannot be written (nothing half-written is left as a valid line).
    """
    path = Warehouse.of(warehouse).episode_log
    if episodes:
        with _group_logs_lock:
            log = _group_logs.get(path)
            if log is None:
                log = _group_logs[path] = _GroupCommitLog(path)
        log.append(_lines(episodes))
    return path


def log_episodes_unlocked(path: Path, episodes: list[Episode]) -> None:
    """Append ``episodes`` to the log file ``path`` and ``fsync`` it; the caller holds the log's lock.

    Raises:
        OSError: the log cannot be written.
    """
    if episodes:
        _append_durably(path, _lines(episodes))


def _lines(episodes: list[Episode]) -> bytes:
    return "".join(episode_line(e) for e in episodes).encode("ascii")


def _append_durably(path: Path, data: bytes) -> None:
    """Append ``data`` (whole log lines) to ``path`` and ``fsync`` it; the caller holds the log's lock
    (:func:`~worldforge.warehouse.atomic.append_lines`: a torn last line ended, a failed write taken back)."""
    append_lines(path, data)


@dataclass(frozen=True)
class LogDrain:
    """What one :func:`drain_episode_log` did: episodes recorded in the store, and log lines
    rejected (moved to ``episodes.log.rejected.jsonl``)."""

    recorded: int = 0
    rejected: int = 0


DRAIN_ATTEMPTS = 5
"""Drains an episode may fail (alone, with every other episode failing too) before it is rejected."""
_failed_drains: dict[str, int] = {}


DRAIN_BATCH_BYTES = 4 << 20
"""Log bytes recorded per store update (at least one whole line): bounds a drain's memory."""


def _take(path: Path, offset: int = 0, limit: int | None = None) -> tuple[bytes, int]:
    """The first complete lines of the log from byte ``offset``, about ``limit`` bytes of them
    (default :data:`DRAIN_BATCH_BYTES`; at least one line), and their byte count; an unfinished
    last line stays for later."""
    limit = limit or DRAIN_BATCH_BYTES
    with file_lock(path):
        if not path.exists():
            return b"", 0
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read(limit)
            while data and b"\n" not in data:  # one line longer than the limit: read to its end
                more = fh.read(limit)
                if not more:
                    break
                data += more
    end = data.rfind(b"\n") + 1
    return data[:end], end


def _cut(path: Path, taken: int) -> None:
    """Remove the first ``taken`` bytes of the log (what was just recorded), keeping what was
    appended since; the rest is copied in 1 MiB chunks (memory does not grow with the log)."""
    with file_lock(path):
        for left in path.parent.glob(f".{path.name}.tmp-*"):  # a cut killed mid-copy (one cutter at a time: the lock)
            left.unlink(missing_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        try:
            with open(path, "rb") as src:
                src.seek(taken)
                first = src.read(1 << 20)
                if not first:
                    path.unlink()
                    return
                with open(tmp, "wb") as dst:
                    dst.write(first)
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def _reject(path: Path, lines: list[tuple[str, str]]) -> None:
    if not lines:
        return
    with open(_rejected(path), "a", encoding="ascii", errors="backslashreplace") as fh:
        for line, reason in lines:
            log.error("episode log line rejected (%s): %.200s", reason, line)
            fh.write(json.dumps({"reason": reason, "line": line}, ensure_ascii=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def drain_episode_log(warehouse: WarehouseLike) -> LogDrain:
    """Record the episodes of ``<warehouse>/episodes.log.jsonl`` in the episode store and take
    them out of the log (one drainer at a time; appends go on meanwhile).

    The batch is recorded with one :func:`record_episodes` (a part per world). When it fails, each episode is tried alone:
    those the store refuses while others succeed are poison and are moved to
    ``episodes.log.rejected.jsonl`` with the reason; when every one fails (a full disk, a
    locked store) nothing is taken out and the error is raised, unless an episode has failed
    so :data:`DRAIN_ATTEMPTS` times in this process: it is rejected then, so a lone poison
    episode cannot block the log forever. Recording is idempotent (an episode id seen before
    is replaced), so a crash between the store write and the log cut records nothing twice.

    Returns:
        The counts (:class:`LogDrain`).

    Raises:
        OSError, WarehouseError, polars errors: the store cannot be written at all; the log is untouched.
    """
    path = Warehouse.of(warehouse).episode_log
    if not path.exists():
        return LogDrain()
    recorded = rejected = offset = 0
    with file_lock(path.with_name(path.name + ".drain")):
        try:
            while True:  # a batch of lines at a time; what was recorded is cut from the log once, at the end
                done = _drain_batch(warehouse, path, offset)
                if done is None:
                    return LogDrain(recorded, rejected)
                recorded, rejected, offset = recorded + done[0], rejected + done[1], offset + done[2]
                if not done[0]:  # nothing recorded: the rest waits for the next drain
                    return LogDrain(recorded, rejected)
        finally:
            if offset:
                _cut(path, offset)


def _drain_batch(warehouse: WarehouseLike, path: Path, offset: int) -> tuple[int, int, int] | None:
    """Record the log's batch at byte ``offset`` (:data:`DRAIN_BATCH_BYTES`): ``(recorded, rejected,
    bytes taken)``, or ``None`` when it has no complete line there. The caller cuts the taken bytes."""
    data, taken = _take(path, offset)
    if not taken:
        return None
    good: list[Episode] = []
    bad: list[tuple[str, str]] = []
    for raw in data.decode("ascii", "backslashreplace").splitlines():
        if not raw.strip():
            continue
        try:
            good.append(episode_from_line(raw))
        except (ValueError, TypeError, KeyError) as exc:
            bad.append((raw, f"unreadable line: {exc}"))
    recorded = 0
    if good:
        try:
            record_episodes(warehouse, good)
            recorded = len(good)
        except Exception:
            failed: list[tuple[Episode, Exception]] = []
            for e in good:
                try:
                    record_episodes(warehouse, [e])
                    recorded += 1
                    _failed_drains.pop(e.episode_id, None)
                except Exception as exc:
                    failed.append((e, exc))
            if not recorded:  # the store, not the episodes: keep them, unless one failed too often
                for e, _ in failed:
                    _failed_drains[e.episode_id] = _failed_drains.get(e.episode_id, 0) + 1
                if all(_failed_drains[e.episode_id] < DRAIN_ATTEMPTS for e, _ in failed):
                    raise failed[0][1] from None
                keep = [e for e, _ in failed if _failed_drains[e.episode_id] < DRAIN_ATTEMPTS]
                failed = [(e, x) for e, x in failed if _failed_drains[e.episode_id] >= DRAIN_ATTEMPTS]
                with file_lock(path):  # the kept ones go back to the log's end
                    log_episodes_unlocked(path, keep)
            for e, exc in failed:
                _failed_drains.pop(e.episode_id, None)
                bad.append((episode_line(e).rstrip("\n"), f"{type(exc).__name__}: {exc}"))
    _reject(path, bad)
    return recorded, len(bad), taken


def settle_episode_log(warehouse: WarehouseLike) -> None:
    """Move legacy stores in (:func:`migrate_legacy_stores`) and drain the episode log before
    reading the store; never raises (a read-only warehouse, a store that cannot be written: the
    readers then see what the store holds, and it is logged)."""
    migrate_legacy_stores(warehouse)  # never raises: a file it cannot move is logged
    try:
        if Warehouse.of(warehouse).episode_log.exists():
            drain_episode_log(warehouse)
    except Exception as exc:  # a warning, not a traceback: the reader goes on
        log.warning("the episode log of %s could not be drained (%s: %s); reading the store as it is", warehouse, type(exc).__name__, exc)


def read_episodes(warehouse: WarehouseLike) -> pl.DataFrame:
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


def episode_counts(warehouse: WarehouseLike) -> EpisodeCounts:
    """Count the recorded episodes in SQL (all zero without an episode store).

    Raises:
        WarehouseError: a part of the store cannot be read.
    """
    def count(con: duckdb.DuckDBPyConnection) -> EpisodeCounts:
        n, finished, solved = con.execute("SELECT count(*), count(*) FILTER (WHERE finished), count(*) FILTER (WHERE f1_by_item = 1.0) FROM episodes").fetchone()
        by_agent = [tuple(r) for r in con.execute("SELECT agent, count(*) FROM episodes GROUP BY 1 ORDER BY 1").fetchall()]
        return EpisodeCounts(n, by_agent, finished, solved)

    return _read_store(warehouse, count)


def iter_episode_trajectories(warehouse: WarehouseLike, config: MaskConfig = MaskConfig(), batch_rows: int = 8192) -> Iterator[StoredTrajectory]:
    """Every recorded episode as a trajectory (origin ``simulated``), with its loss-mask decisions.

    Episode turns carry no statistics when recorded; their decisions are computed here over
    the whole episode store with the same rule as real turns
    (:func:`worldforge.trajectories.mask.mask_turns`, thresholds from the episodes' own
    corpus). :attr:`StoredTrajectory.extra` holds the episode's ``world`` and ``scenario``.

    Args:
        warehouse: the warehouse, or its folder; a missing episode store yields nothing.
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
