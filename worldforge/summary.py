"""What a warehouse holds, in counts (``worldforge summary`` and the end of ``make demo``).

Reads every store without changing it: world files (tables, rows, scenarios, pages, tasks, and the generator version
that built each: a world built by another one than :data:`worldforge.GENERATOR_VERSION` is stale), the trajectory store, the episode store, the dataset reports and the evaluation scores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from worldforge.corpus.store import page_count
from worldforge.tasks.store import task_count
from worldforge.trajectories.episodes import EpisodeCounts, episode_counts
from worldforge.trajectories.store import StoreCounts, store_counts
from worldforge.warehouse import read_world
from worldforge.warehouse.layout import Warehouse


@dataclass(frozen=True)
class WorldSummary:
    """One world file: its seed, tables, rows, scenarios, and corpus pages and tasks (``None`` before they are built); the
    generator version that built it (``None``: unknown, a file from before the version was recorded) and whether that
    makes it stale (another version than this code's :data:`~worldforge.GENERATOR_VERSION`)."""

    world: str
    seed: int
    tables: int
    rows: int
    scenarios: int
    pages: int | None
    tasks: int | None
    generator_version: str | None = None
    stale: bool = False


@dataclass(frozen=True)
class WarehouseSummary:
    """Everything :func:`summarise` found.

    Attributes:
        path: the warehouse's folder.
        worlds: one entry per world file, by name.
        trajectories: the trajectory store's counts.
        episodes: the episode store's counts.
        datasets: ``{name: report.json object}`` of the dataset folders built so far.
        eval_scores: ``datasets/eval/scores.json`` (:func:`~worldforge.agentworldbench.score.score_lines`), when evaluated.
    """

    path: Path
    worlds: list[WorldSummary]
    trajectories: StoreCounts
    episodes: EpisodeCounts
    datasets: dict[str, dict]
    eval_scores: dict | None

    @property
    def rows(self) -> int:
        """World rows over all worlds."""
        return sum(w.rows for w in self.worlds)

    @property
    def stale(self) -> list[str]:
        """The worlds built by another generator version (or an unknown one), by name: rebuild them."""
        return [w.world for w in self.worlds if w.stale]


def summarise(warehouse: Warehouse) -> WarehouseSummary:
    """Count what a warehouse holds.

    Raises:
        WarehouseError: a file of the warehouse is not what its name says.
    """
    worlds = []
    for p in warehouse.world_files():
        wf = read_world(p)
        worlds.append(WorldSummary(wf.spec.world, wf.meta["seed"], len(wf.tables), sum(f.height for f in wf.tables.values()),
                                   len(wf.scenarios), page_count(p), task_count(p), wf.generator_version, wf.stale))
    datasets = {}
    for name in ("cpt", "sft", "agentworldbench"):
        report = warehouse.dataset(name) / "report.json"
        if report.is_file():
            datasets[name] = json.loads(report.read_text(encoding="utf-8"))
    scores = warehouse.dataset("eval") / "scores.json"
    evaluation = json.loads(scores.read_text(encoding="utf-8")) if scores.is_file() else None
    return WarehouseSummary(warehouse.root, worlds, store_counts(warehouse.trajectory_store), episode_counts(warehouse), datasets, evaluation)
