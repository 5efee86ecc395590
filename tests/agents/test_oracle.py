"""The oracle: every task solved through the tools alone, its episodes recorded in the trajectory shape."""

import json

import pytest

from tests.conftest import BUNDLED
from tests.conftest_worlds import built_world
from worldforge.agents.oracle import oracle_episode, solve
from worldforge.simenv import DEFAULT_MIX, SearchEnv
from worldforge.tasks.store import build_tasks
from worldforge.trajectories.episodes import read_episode_tables, read_episodes, record_episodes
from worldforge.trajectories.store import Store, apply_masks
from worldforge.warehouse import Warehouse


@pytest.mark.parametrize("name", BUNDLED)
def test_oracle_solves_every_task(specs, tmp_path, name):
    path = built_world(specs[name], tmp_path)
    tasks = build_tasks(path).tasks
    for i, task in enumerate(tasks):
        clean = solve(SearchEnv(name, task.extra["scenario"], task, warehouse=Warehouse(tmp_path), seed=1), task)
        assert clean.score.f1_by_item == 1.0 and clean.score.f1_by_row == 1.0, (task.instance_id, clean.failed)
        # a named session: its perturbation decisions replay, so a failure here replays too
        noisy = solve(SearchEnv(name, task.extra["scenario"], task, DEFAULT_MIX, seed=i, warehouse=Warehouse(tmp_path),
                                session_id=f"oracle-{i}"), task)
        assert noisy.failed is None, (task.instance_id, noisy.failed)


def test_episodes_are_recorded_in_the_trajectory_shape(world):
    wh, tasks = world
    eps = [oracle_episode("esports_2031", t, wh, DEFAULT_MIX, seed=2) for t in tasks[:2]]
    record_episodes(wh, eps)
    record_episodes(wh, eps[:1])  # re-recording replaces, never duplicates
    got = read_episodes(wh)
    assert sorted(got["episode_id"]) == sorted(e.episode_id for e in eps) and got["finished"].all()
    tables = read_episode_tables(wh)
    store = apply_masks(Store(tables["trajectories"], tables["turns"]))
    assert store.trajectories["source"].unique().to_list() == ["simenv"]
    assert store.turns.height == sum(len(e.steps) for e in eps)
    first = json.loads(store.turns.sort("trajectory_id", "turn_idx")["action"][0])
    assert set(first) == {"name", "arguments"}
