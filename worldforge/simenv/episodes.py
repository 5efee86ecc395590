"""Simulated episodes as data: ``warehouse/episodes.duckdb``.

Episodes are stored in the canonical trajectory shape of the foundation
(:mod:`worldforge.trajectories.store`): ``trajectories`` (source ``simenv``, domain
``search``) and ``turns`` (action = the ``{"name", "arguments"}`` JSON, observation = the
tool's reply), so simulated episodes flow into the same statistics and dataset pipeline as
real ones. Two more tables keep what only a simulator knows:

* ``episodes(episode_id PK, world, scenario, task_id, seed, perturbations_json, agent,
  finished, f1_by_row, f1_by_item, answer, recorded_at)``
* ``steps(episode_id, turn_idx, tool, error, fired_json, revealed_json, leaks_blocked)`` —
  the perturbation decisions that fired and the facts each turn's snippets revealed.

Writers append under an exclusive file lock, rewriting the file atomically, so parallel
runs never lose each other's episodes. Readers get typed rows: :func:`read_episodes` (the
``episodes`` table) and :func:`iter_episode_trajectories` (episodes as
:class:`~worldforge.trajectories.model.StoredTrajectory`, with their loss-mask decisions).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from worldforge.simenv.env import Observation
from worldforge.trajectories.mask import MaskConfig, mask_turns
from worldforge.trajectories.model import StoredTrajectory, tool_call_text
from worldforge.trajectories.store import LOG_SCHEMA, QUARANTINE_SCHEMA, STORE_DDL, THRESHOLD_SCHEMA, TRAJECTORY_SCHEMA, TURN_SCHEMA, trajectories_from_batches
from worldforge.warehouse.duck import atomic_duckdb, insert_frame, open_readonly, read_table, reading_store
from worldforge.warehouse.layout import episode_store

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


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def storable(text: str) -> str:
    """``text`` as valid UTF-8: each lone surrogate (``"\\ud800"``, which JSON can carry but UTF-8
    cannot) becomes its escape, the six characters ``\\ud800``; any other text is returned as is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _safe(row: tuple) -> tuple:
    return tuple(storable(v) if isinstance(v, str) else v for v in row)


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
        traj.append(_safe((e.episode_id, "simenv", source_path, "simenv_episode", "search", e.question, len(e.steps), e.episode_id, "", 0)))
        for i, (call, obs) in enumerate(e.steps):
            turns.append(_safe((e.episode_id, i, _action_text(call), obs.text, None, None, None, None, None, None)))
            steps.append(_safe((e.episode_id, i, obs.tool, obs.error, json.dumps(obs.fired), json.dumps(obs.revealed), obs.leaks_blocked)))
        eps.append(_safe((e.episode_id, e.world, e.scenario, e.task_id, e.seed, e.perturbations_json, e.agent, e.finished,
                          e.f1_by_row, e.f1_by_item, e.answer, now)))
    return {
        "trajectories": pl.DataFrame(traj, schema=TRAJECTORY_SCHEMA, orient="row"),
        "turns": pl.DataFrame(turns, schema=TURN_SCHEMA, orient="row"),
        "episodes": pl.DataFrame(eps, schema=EPISODE_SCHEMA, orient="row"),
        "steps": pl.DataFrame(steps, schema=STEP_SCHEMA, orient="row"),
    }


_DDL = STORE_DDL + """
CREATE TABLE episodes (episode_id VARCHAR PRIMARY KEY REFERENCES trajectories (trajectory_id), world VARCHAR, scenario VARCHAR,
  task_id VARCHAR, seed BIGINT, perturbations_json VARCHAR, agent VARCHAR, finished BOOLEAN, f1_by_row DOUBLE,
  f1_by_item DOUBLE, answer VARCHAR, recorded_at TIMESTAMP);
CREATE TABLE steps (episode_id VARCHAR NOT NULL, turn_idx BIGINT NOT NULL, tool VARCHAR, error BOOLEAN, fired_json VARCHAR,
  revealed_json VARCHAR, leaks_blocked BIGINT, PRIMARY KEY (episode_id, turn_idx));
COMMENT ON TABLE episodes IS 'Simulated search episodes (worldforge.simenv); their turns are in trajectories/turns.';
"""


def record_episodes(warehouse: str | Path, episodes: list[Episode]) -> Path:
    """Append episodes to ``<warehouse>/episodes.duckdb`` (an episode id seen before is replaced).

    Text is stored as valid UTF-8: lone surrogates become their ``\\uXXXX`` escape (:func:`storable`).
    """
    path = episode_store(warehouse)
    new = _frames(episodes)
    ids = new["episodes"]["episode_id"].implode()
    with _locked(path):
        old = {}
        if path.exists():
            con = open_readonly(path)
            try:
                old = {t: read_table(con, t) for t in ("trajectories", "turns", "episodes", "steps")}
            finally:
                con.close()
        merged = {}
        for t, frame in new.items():
            key = "trajectory_id" if t in ("trajectories", "turns") else "episode_id"
            merged[t] = pl.concat([old[t].filter(~pl.col(key).is_in(ids)), frame]) if t in old else frame
        with atomic_duckdb(path) as con:
            con.execute(_DDL)
            for t in ("trajectories", "turns", "episodes", "steps"):
                insert_frame(con, t, merged[t])
            for t, schema in (("quarantine", QUARANTINE_SCHEMA), ("mask_thresholds", THRESHOLD_SCHEMA), ("ingest_log", LOG_SCHEMA)):
                insert_frame(con, t, pl.DataFrame(schema=schema))  # empty: the store's shape, for its readers
    return path


def read_episodes(warehouse: str | Path) -> pl.DataFrame:
    """The ``episodes`` table (empty frame when nothing was recorded)."""
    path = episode_store(warehouse)
    if not path.exists():
        return pl.DataFrame(schema=EPISODE_SCHEMA)
    con = open_readonly(path)
    try:
        return read_table(con, "episodes")
    finally:
        con.close()


@dataclass(frozen=True)
class EpisodeCounts:
    """What the episode store holds: episodes, by agent (sorted), finished, and solved (item F1 = 1.0)."""

    episodes: int = 0
    by_agent: list[tuple[str, int]] = field(default_factory=list)
    finished: int = 0
    solved: int = 0


def episode_counts(warehouse: str | Path) -> EpisodeCounts:
    """Count the recorded episodes in SQL (all zero without an episode store).

    Raises:
        WarehouseError: the file exists but is not an episode store.
    """
    path = episode_store(warehouse)
    if not path.exists():
        return EpisodeCounts()
    with reading_store(path, "episode store") as con:
        n, finished, solved = con.execute("SELECT count(*), count(*) FILTER (WHERE finished), count(*) FILTER (WHERE f1_by_item = 1.0) FROM episodes").fetchone()
        by_agent = [tuple(r) for r in con.execute("SELECT agent, count(*) FROM episodes GROUP BY 1 ORDER BY 1").fetchall()]
    return EpisodeCounts(n, by_agent, finished, solved)


def iter_episode_trajectories(warehouse: str | Path, config: MaskConfig = MaskConfig(), batch_rows: int = 8192) -> Iterator[StoredTrajectory]:
    """Every recorded episode as a trajectory (origin ``simulated``), with its loss-mask decisions.

    Episode turns carry no statistics when recorded; their decisions are computed here over
    the whole episode store with the same rule as real turns
    (:func:`worldforge.trajectories.mask.mask_turns`, thresholds from the episodes' own
    corpus). :attr:`StoredTrajectory.extra` holds the episode's ``world`` and ``scenario``.

    Args:
        warehouse: the warehouse folder; a missing episode store yields nothing.
        config: the mask thresholds.
        batch_rows: turns per batch.

    Raises:
        WarehouseError: the file exists but is not an episode store.
    """
    path = episode_store(warehouse)
    if not path.exists():
        return
    with reading_store(path, "episode store") as con:
        turns = con.sql("SELECT u.trajectory_id, u.turn_idx, u.action, u.observation, t.domain FROM turns u JOIN trajectories t USING (trajectory_id)").pl()
        extra = {r[0]: {"world": r[1], **({"scenario": r[2]} if r[2] else {})} for r in con.sql("SELECT episode_id, world, scenario FROM episodes").fetchall()}
        meta = con.sql("SELECT trajectory_id, source, domain, coalesce(task, '') AS task FROM trajectories").pl()
    if turns.height == 0:
        return
    masked, _ = mask_turns(turns, config)
    frame = masked.join(meta, on="trajectory_id").sort("trajectory_id", "turn_idx")
    yield from trajectories_from_batches(frame.to_arrow().to_batches(batch_rows), "simulated", extra)
